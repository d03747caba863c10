"""Time to detect each mutant of a slice: median and max over several seeds, with the gate's
known-bug zoo and with random search alone, plus the shrunk counterexample length.

Run: ``python -m kconform.ci.benchmarks.detect [--slice replication|txn|fetch] [--seeds 5] [--cap 120]
[--mutant NAME ...] [--no-random]``. Each mutant runs with the slice's default gate configuration
(the first of ``Slice.gate_configs``: replication's default, exactly-once TV0) updated by its
MUTANT_CONFIG overrides (impl/mutants.py), as ``kconform gate --self-check`` runs it. Detection
time is measured to the first failing run (shrinking excluded; "incl. shrink" is the whole
campaign). A mutant not caught within the cap counts as ``inf``. The zoo is deterministic (seed 0
for every scenario), so its figures vary only with the machine's load. The header names the machine,
the date and the load average; the last line is the median and max over every (mutant, seed) pair and
the CPU-seconds of the whole run, the figures the acceptance "median time to detect under 10 s" asks.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from kconform.conformance import registry
from kconform.conformance.hunt import run_campaign
from kconform.impl.mutants import MUTANT_CONFIG, config_for

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


def measure(slice_name: str, name: str, seeds: int, cap: float, zoo: bool) -> Sample:
    """One campaign per seed against mutant ``name``; detection and total seconds per seed."""
    part = registry.get(slice_name)
    cfg: Any = config_for(name, part.gate_configs()[0][1])
    sample = Sample()
    for seed in range(seeds):
        result = run_campaign(part.make_reference, cfg, frozenset({name}), seed=seed, seconds=cap, zoo=zoo)
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
    return f"{statistics.median(values):.1f} / {max(values):.1f}" if values else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--slice", default="replication", choices=registry.names())
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cap", type=float, default=120.0, help="seconds per (mutant, seed)")
    parser.add_argument("--mutant", action="append", default=None)
    parser.add_argument("--no-random", action="store_true", help="measure the gate (zoo first) only")
    args = parser.parse_args(argv)
    console = Console(width=200)
    names = args.mutant or sorted(registry.get(args.slice).mutants())
    console.print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, one process; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.1f}"
    )
    cpu0 = time.process_time()
    every: list[float] = []
    table = Table(
        title=f"{args.slice} slice: seconds to detect each mutant, median / max over {args.seeds} seeds "
        f"(cap {args.cap:.0f} s)"
    )
    for col in (
        "mutant",
        "config",
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
        overrides = ", ".join(f"{key}={value}" for key, value in MUTANT_CONFIG.get(name, {}).items())
        gate = measure(args.slice, name, args.seeds, args.cap, zoo=True)
        every.extend(gate.detect)
        rand = Sample() if args.no_random else measure(args.slice, name, args.seeds, args.cap, zoo=False)
        table.add_row(
            name,
            overrides or "default",
            f"{gate.caught}/{args.seeds}",
            _fmt(gate.detect),
            _fmt(gate.total),
            f"{statistics.median(gate.lengths):.0f}" if gate.lengths else "-",
            "-" if args.no_random else f"{rand.caught}/{args.seeds}",
            "-" if args.no_random else _fmt(rand.detect),
            ", ".join(sorted(gate.verdicts | rand.verdicts)),
        )
        random_only = "-" if args.no_random else f"{rand.caught}/{args.seeds}"
        console.print(f"{name}: gate {gate.caught}/{args.seeds} {_fmt(gate.detect)}, random only {random_only}")
    console.print(table)
    caught = sum(1 for t in every if t != INF)
    console.print(
        f"{args.slice} gate over {len(names)} mutants x {args.seeds} seeds: caught {caught}/{len(every)}, "
        f"seconds to detect median / max {_fmt(every)}; {time.process_time() - cpu0:.1f} CPU-s; "
        f"load average now {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
