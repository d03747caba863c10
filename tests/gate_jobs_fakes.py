"""Stand-in gates for the tests of ``kconform gate --slice all --jobs N`` (tests/test_gate_jobs.py).

A spawned worker imports its gate function by name, so these live in a module of their own. What a
fake does is read from the last word of its part's ``--out`` directory name (``pass``, ``fail``,
``raise``, ``die``, ``hang``, optionally ``slow-`` first); each prints a few lines, one styled, and
writes its pid to ``pid`` in its directory (so a test can check that a worker is gone).
"""

from __future__ import annotations

import os
import time

from rich.console import Console
from rich.table import Table

from kconform.ci.exitcodes import EXIT_PASS, EXIT_VIOLATION
from kconform.ci.options import GateOptions

HANG_S = 120.0
"""How long a hanging fake sleeps: far longer than any test waits."""


def fake_gate(options: GateOptions, console: Console) -> int:
    """Behave as the part's directory name says (module docstring)."""
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "pid").write_text(str(os.getpid()), encoding="utf-8")
    what = options.out.name.rsplit("-", 1)[-1]
    if options.out.name.startswith("slow-"):
        time.sleep(1.5)
    console.print(f"gate of [bold]{options.out.name}[/bold]: seed {options.seed}")
    table = Table(title=f"{options.out.name} table")
    table.add_column("invariant")
    table.add_column("violations", justify="right")
    table.add_row("Something", "1" if what == "fail" else "0")
    console.print(table)
    print(f"plain print of {options.out.name}")  # a worker's standard output is captured too
    if what == "raise":
        raise RuntimeError(f"{options.out.name} broke")
    if what == "die":
        os._exit(9)
    if what == "hang":
        time.sleep(HANG_S)
    return EXIT_VIOLATION if what == "fail" else EXIT_PASS
