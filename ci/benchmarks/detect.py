"""Time to detect each mutant: median and max over several seeds, and the shrunk counterexample length.

Run: ``python -m kconform.ci.benchmarks.detect [--seeds 5] [--cap 120] [--mutant NAME ...]``.
Prints one row per mutant; a mutant not caught within the cap is reported as survived.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from kconform.conformance.hunt import run_campaign
from kconform.impl import MUTANTS, ReferenceCluster
from kconform.model.config import ReplicationConfig
from rich.console import Console
from rich.table import Table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cap", type=float, default=120.0, help="seconds per (mutant, seed)")
    parser.add_argument("--mutant", action="append", default=None)
    args = parser.parse_args(argv)
    console = Console()
    cfg = ReplicationConfig()
    names = args.mutant or sorted(MUTANTS)
    console.print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
    table = Table(title=f"time to detect each mutant ({args.seeds} seeds, cap {args.cap:.0f} s)")
    for col in (
        "mutant",
        "caught",
        "median s to detect",
        "max s",
        "median s incl. shrink",
        "median cx length",
        "verdicts",
    ):
        table.add_column(col)
    for name in names:
        seconds: list[float] = []
        totals: list[float] = []
        lengths: list[int] = []
        verdicts: set[str] = set()
        caught = 0
        for seed in range(args.seeds):
            started = time.perf_counter()
            result = run_campaign(ReferenceCluster, cfg, frozenset({name}), seed=seed, seconds=args.cap)
            elapsed = time.perf_counter() - started
            run = result.failure
            if run is not None and run.failure is not None and run.failing_step is not None:
                caught += 1
                detect = result.log.seconds_to_first_failure
                seconds.append(detect if detect is not None else elapsed)
                totals.append(elapsed)
                lengths.append(run.failing_step + 1)
                verdicts.add(f"{run.failure.verdict}:{run.failure.name}")
            else:
                seconds.append(float("inf"))
                totals.append(float("inf"))
        finite = [s for s in seconds if s != float("inf")]
        table.add_row(
            name,
            f"{caught}/{args.seeds}",
            f"{statistics.median(seconds):.1f}",
            f"{max(seconds):.1f}",
            f"{statistics.median(totals):.1f}",
            f"{statistics.median(lengths):.0f}" if lengths else "-",
            ", ".join(sorted(verdicts)) or ("survived" if not finite else ""),
        )
        console.print(f"{name}: {caught}/{args.seeds} caught")
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
