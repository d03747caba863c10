"""Probe checker throughput on simulated histories of several sizes, side by side in one run.

Run: ``python -m kconform.ci.benchmarks.probe_check [--ops 1000000 10000000] [--dir DIR] [--seed 1]``.
Each size is a history of that many operations (an operation = an invoke line and its completion)
written by the correct simulation (conformance/probe/simulate.py, validation off, reused from
``--dir`` when a file of that size and seed is already there). Each check runs in its own child
process, so the peak RSS printed is that check's alone. Prints per size: lines, file size,
records read, wall and CPU seconds, operations per second (wall, and per CPU second: the machine
is shared, CPU seconds are the steadier figure), peak RSS and the verdict (a correct simulation
must be valid).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kconform.ci.benchmarks.child import json_child
from kconform.conformance.probe.simulate import simulate


def _child(path: str) -> None:
    """Check one history; print its figures as one JSON line."""
    from kconform.conformance.probe.checker import check_history

    wall = time.monotonic()
    cpu = time.process_time()
    result = check_history(path)
    figures = {
        "wall_s": time.monotonic() - wall,
        "cpu_s": time.process_time() - cpu,
        "lines": result.stats.lines + 1,
        "records_read": result.stats.records_read,
        "acked_judged": result.stats.acked_judged,
        "gap_claims": result.stats.gap_claims,
        "verdict": result.verdict,
        "violations": result.findings.violations(),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(figures))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--dir", type=Path, default=Path("kconform-bench-probe"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child)
        return 0
    console = Console(width=200)
    args.dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for ops in args.ops:
        path = args.dir / f"sim-{ops}-seed{args.seed}.jsonl"
        if not path.exists():
            started = time.monotonic()
            cpu = time.process_time()
            tmp = path.with_suffix(".partial")
            simulate(tmp, ops, seed=args.seed, validate=False)
            os.replace(tmp, path)
            console.print(
                f"generated {ops:,} operations in {time.monotonic() - started:.0f} s wall, "
                f"{time.process_time() - cpu:.0f} s CPU ({path}, {path.stat().st_size / 1e9:.2f} GB)"
            )
        figures = json_child([sys.executable, "-m", "kconform.ci.benchmarks.probe_check", "--child", str(path)])
        figures["ops"] = ops
        figures["gb"] = path.stat().st_size / 1e9
        rows.append(figures)
        console.print(f"checked {ops:,}: {json.dumps(figures)}")
    table = Table(title=f"Probe checker throughput (seed {args.seed}, one process per check)")
    for column in ("operations", "lines", "file GB", "records read", "wall s", "CPU s", "ops/s (wall)",
                   "ops per CPU-s", "peak RSS MB", "verdict"):  # fmt: skip
        table.add_column(column, justify="right")
    for f in rows:
        table.add_row(
            f"{f['ops']:,}",
            f"{f['lines']:,}",
            f"{f['gb']:.2f}",
            f"{f['records_read']:,}",
            f"{f['wall_s']:.0f}",
            f"{f['cpu_s']:.0f}",
            f"{f['ops'] / f['wall_s']:,.0f}",
            f"{f['ops'] / f['cpu_s']:,.0f}",
            f"{f['peak_rss_mb']:,.0f}",
            f"{f['verdict']} ({f['violations']} violations)",
        )
    console.print(table)
    return 0 if all(f["verdict"] == "valid" for f in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
