"""Corpus generation rate per slice, side by side in one run: replication, txn TV0, txn TV2.

Run: ``python -m kconform.ci.benchmarks.generate [--events 200000] [--workers 2] [--oracle-traces 2]``.
Each slice writes a corpus of ``--events`` events (default trace size) with the same seed and
workers; the slices take turns ``--rounds`` times, so load from other work on the machine spreads over
all of them. Prints events/s per slice (the best round and the median), the ratio to replication, and
with ``--oracle-traces N`` the single-process oracle's events/s on the first N traces of each corpus.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kconform.model.config import ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.generate import Plan, generate
from kconform.traces.oracle import run_oracle

SLICES: tuple[tuple[str, AnyConfig], ...] = (
    ("replication", ReplicationConfig()),
    ("txn TV0", TxnConfig(transaction_version=0)),
    ("txn TV2", TxnConfig(transaction_version=2)),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--oracle-traces", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    console = Console()
    rates: dict[str, list[float]] = {name: [] for name, _ in SLICES}
    oracle: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="kconform-genbench-") as tmp:
        for _ in range(args.rounds):
            for name, config in SLICES:
                root = Path(tmp) / name.replace(" ", "-")
                result = generate(root, Plan(events=args.events, seed=args.seed, config=config), args.workers)
                rates[name].append(result.events_per_second)
                console.print(f"{name}: {result.manifest.events:,} events in {result.seconds:.1f} s")
                if args.oracle_traces and name not in oracle:
                    ids = [t.trace for t in result.manifest.traces[: args.oracle_traces]]
                    judged = run_oracle(root, result.manifest, ids)
                    oracle[name] = judged.events / judged.seconds
    table = Table(title=f"generation, {args.events:,} events, {args.workers} worker(s), {args.rounds} round(s)")
    for column in ("slice", "best events/s", "median events/s", "best / replication"):
        table.add_column(column, justify="right")
    if oracle:
        table.add_column(f"oracle events/s ({args.oracle_traces} traces)", justify="right")
    base = max(rates["replication"])
    for name, _ in SLICES:
        row = [name, f"{max(rates[name]):,.0f}", f"{statistics.median(rates[name]):,.0f}"]
        row.append(f"{max(rates[name]) / base:.2f}")
        if oracle:
            row.append(f"{oracle[name]:,.0f}")
        table.add_row(*row)
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
