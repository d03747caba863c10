"""A census of hand-planted bugs (``ci.mutation.planted``): the part the replication / fetch census
(``ci.benchmarks.hand_planted``) and the exactly-once one (``ci.benchmarks.hand_planted_txn``) share.

Guarantees: ``gate_child`` runs the gate with one plant in place in this process and returns the
gate's exit code (``CHILD_CRASHED`` when planting or the gate raised, never the gate's own codes);
``run_one`` runs such a child as a separate process, bounded by a timeout that kills it, in a
temporary output folder removed afterwards; ``print_score`` prints a score and every counted plant
not killed with its bug; ``machine`` says when and on what the census ran.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime

from rich.console import Console

from kconform.ci.mutation.planted import Plant, plant

CHILD_CRASHED = 3
"""The child's exit code when planting or the gate raised (the gate's own are 0, 1 and 2)."""

VERDICTS = {0: "survived", 1: "killed"}
"""A child's exit code as a verdict (any other: ``error (exit N)``)."""


def gate_child(prog: str, p: Plant, gate_argv: Sequence[str], out: str) -> int:
    """Plant ``p`` in this process and run ``kconform`` with ``gate_argv`` (``gate --slice ...``) in
    one process, its files under ``out``; the gate's exit code, or ``CHILD_CRASHED`` with the error on
    standard error (prefixed ``prog: NAME:``) when planting or the gate raised."""
    from kconform.ci.cli import main as cli

    try:
        plant(p)
        return cli([*gate_argv, "--jobs", "1", "--no-progress", "--out", out])
    except Exception as exc:
        print(f"{prog}: {p.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return CHILD_CRASHED


def run_one(module: str, p: Plant, gate: str, examples: int, seed: int, timeout: float) -> tuple[str, float]:
    """(verdict, seconds) of ``python -m module --child NAME --gate GATE`` for plant ``p``: ``killed``,
    ``survived``, ``timeout`` (the child is killed after ``timeout`` seconds) or ``error (exit N)``."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kconform-plant-") as out:
        cmd = [sys.executable, "-m", module, "--child", p.name, "--gate", gate]
        cmd += ["--examples", str(examples), "--seed", str(seed), "--out", out]
        try:
            rc = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False).returncode
        except subprocess.TimeoutExpired:  # subprocess.run kills the child
            return "timeout", time.monotonic() - start
    return VERDICTS.get(rc, f"error (exit {rc})"), time.monotonic() - start


def print_score(
    console: Console, counted: Sequence[Plant], killed: Sequence[Plant], *, before: str = "", after: str = ""
) -> None:
    """``{before}killed K / N non-equivalent plants{after}``, then a line per plant of ``counted`` not in
    ``killed``, with its bug."""
    console.print(f"{before}killed {len(killed)} / {len(counted)} non-equivalent plants{after}")
    for p in counted:
        if p not in killed:
            console.print(f"  not killed: {p.name}: {p.what}")


def machine() -> str:
    """The date (UTC, to the minute), the machine's architecture, its cores and its load."""
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()}"
    )


__all__ = ["CHILD_CRASHED", "VERDICTS", "gate_child", "machine", "print_score", "run_one"]
