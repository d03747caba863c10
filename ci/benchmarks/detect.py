"""Time to detect each mutant: median and max over several seeds, with the gate's known-bug zoo and
with random search alone, plus the shrunk counterexample length.

Run: ``python -m kconform.ci.benchmarks.detect [--seeds 5] [--cap 120] [--mutant NAME ...]``.
Detection time is measured to the first failing run (shrinking excluded, reported separately).
A mutant not caught within the cap counts as ``inf``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table

from kconform.conformance.hunt import run_campaign
from kconform.impl import ReferenceCluster
from kconform.impl.mutants import REPLICATION, mutants_of
from kconform.model.config import ReplicationConfig

INF = float("inf")


@dataclass
class Sample:
    detect: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    verdicts: set[str] = field(default_factory=set)

    @property
    def caught(self) -> int:
        return sum(1 for t in self.detect if t != INF)


def measure(name: str, seeds: int, cap: float, zoo: bool) -> Sample:
    sample = Sample()
    for seed in range(seeds):
        result = run_campaign(ReferenceCluster, ReplicationConfig(), frozenset({name}), seed=seed, seconds=cap, zoo=zoo)
        run = result.failure
        if run is None or run.failure is None or run.failing_step is None:
            sample.detect.append(INF)
            sample.total.append(INF)
            continue
        detect = result.log.seconds_to_first_failure
        sample.detect.append(detect if detect is not None else result.seconds)
        sample.total.append(result.seconds)
        sample.lengths.append(run.failing_step + 1)
        sample.verdicts.add(f"{run.failure.verdict}: {run.failure.name}")
    return sample


def _fmt(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} / {max(values):.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cap", type=float, default=120.0, help="seconds per (mutant, seed)")
    parser.add_argument("--mutant", action="append", default=None)
    args = parser.parse_args(argv)
    console = Console(width=160)
    names = args.mutant or sorted(mutants_of(REPLICATION))
    console.print(f"machine: {platform.machine()} python {platform.python_version()}, one process")
    table = Table(
        title=f"time to detect each mutant, seconds, median / max over {args.seeds} seeds (cap {args.cap:.0f} s)"
    )
    for col in (
        "mutant",
        "gate: caught",
        "gate: detect",
        "gate: incl. shrink",
        "gate: cx length (median)",
        "random only: caught",
        "random only: detect",
        "verdict",
    ):
        table.add_column(col)
    for name in names:
        gate = measure(name, args.seeds, args.cap, zoo=True)
        rand = measure(name, args.seeds, args.cap, zoo=False)
        table.add_row(
            name,
            f"{gate.caught}/{args.seeds}",
            _fmt(gate.detect),
            _fmt(gate.total),
            f"{statistics.median(gate.lengths):.0f}" if gate.lengths else "-",
            f"{rand.caught}/{args.seeds}",
            _fmt(rand.detect),
            ", ".join(sorted(gate.verdicts | rand.verdicts)),
        )
        console.print(f"{name}: gate {gate.caught}/{args.seeds}, random only {rand.caught}/{args.seeds}")
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
