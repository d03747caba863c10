"""Commands that read no corpus start without the columnar stack: importing the command line, replay and
the input boundary of JSON Lines files loads neither pyarrow nor numpy (about 2.5 s of imports on the
project's machine; traces/inputs/corpus.py needs pyarrow at module load, and pyarrow loads numpy itself,
so the corpus commands pay it once and nothing else pays it at all)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("numpy", "pyarrow")


@pytest.mark.parametrize(
    "module",
    [
        "kconform.ci.cli",
        "kconform.traces.replay",
        "kconform.traces.inputs.trace_file",
        "kconform.traces.counterexample",
    ],
)
def test_module_loads_no_columnar_stack(module: str) -> None:
    code = f"import sys, {module}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"{module} imports {result.stdout.strip()} at load"


def test_the_corpus_boundary_does_load_it() -> None:
    """The near miss: the corpus reader needs pyarrow (and with it numpy) at load, so the check above can fail."""
    code = f"import sys, kconform.traces.inputs.corpus; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "numpy,pyarrow", result.stderr
