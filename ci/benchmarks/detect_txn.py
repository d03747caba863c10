"""Time to detect each exactly-once mutant: median and max over several seeds, with the gate's
known-bug zoo (conformance/txn/scenarios.py) and with random search alone (conformance/txn/machine.py).

Run: ``python -m kconform.ci.benchmarks.detect_txn [--seeds 5] [--cap 60] [--mutant NAME ...]
[--no-random]``. Each mutant runs with the gate's default exactly-once config updated by its
MUTANT_CONFIG overrides (impl/mutants.py), as ``kconform gate --slice txn --self-check`` runs it.
Detection time is measured to the first failing run (shrinking excluded; "incl. shrink" is the
whole campaign). A mutant not caught within the cap counts as ``inf``. The zoo is deterministic
(seed 0 for every scenario), so its figures vary only with the machine's load.
"""

from __future__ import annotations

import argparse
import platform

from rich.console import Console
from rich.table import Table

from kconform.ci.benchmarks.detect import INF, Sample, _fmt
from kconform.conformance.hunt import run_campaign
from kconform.impl.mutants import MUTANT_CONFIG, TXN, config_for, mutants_of
from kconform.impl.txn_cluster import TxnCluster
from kconform.model.txn_config import TxnConfig


def measure(name: str, seeds: int, cap: float, zoo: bool) -> Sample:
    """One campaign per seed against mutant ``name``; detection and total seconds per seed."""
    sample = Sample()
    cfg = config_for(name, TxnConfig())
    for seed in range(seeds):
        result = run_campaign(TxnCluster, cfg, frozenset({name}), seed=seed, seconds=cap, zoo=zoo)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per (mutant, seed)")
    parser.add_argument("--mutant", action="append", default=None)
    parser.add_argument("--no-random", action="store_true", help="measure the gate (zoo first) only")
    args = parser.parse_args(argv)
    console = Console(width=200)
    names = args.mutant or sorted(mutants_of(TXN))
    console.print(f"machine: {platform.machine()} python {platform.python_version()}, one process")
    table = Table(
        title=f"exactly-once slice: seconds to detect each mutant, median / max over {args.seeds} seeds "
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
        gate = measure(name, args.seeds, args.cap, zoo=True)
        rand = Sample() if args.no_random else measure(name, args.seeds, args.cap, zoo=False)
        lengths = sorted(gate.lengths)
        table.add_row(
            name,
            overrides or "default",
            f"{gate.caught}/{args.seeds}",
            _fmt(gate.detect),
            _fmt(gate.total),
            str(lengths[len(lengths) // 2]) if lengths else "-",
            "-" if args.no_random else f"{rand.caught}/{args.seeds}",
            "-" if args.no_random else _fmt(rand.detect),
            ", ".join(sorted(gate.verdicts | rand.verdicts)),
        )
        console.print(
            f"{name}: gate {gate.caught}/{args.seeds} {_fmt(gate.detect)}, random only "
            f"{rand.caught}/{args.seeds} {_fmt(rand.detect) if rand.detect else '-'}"
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
