"""Corpus generation rate per slice, side by side in one run: replication, txn TV0, txn TV2.

Run: ``python -m kconform.ci.benchmarks.generate [--events 200000] [--workers 2] [--oracle-traces 2]``.

``--before PYTHON`` compares two checkouts instead: ``PYTHON`` is the interpreter of another
installed checkout (e.g. ``/work/wt/old/.venv/bin/python``); every round runs each slice once
under it and once under this interpreter, alternating, each in a fresh process, and prints the
events/s and CPU-seconds (the generating process and its workers) of both and the ratio. Only
``kconform.traces.generate.generate`` and the configuration classes are used there, so any checkout
since the exactly-once slice can be the other side.

Each slice writes a corpus of ``--events`` events (default trace size) with the same seed and
workers; the slices take turns ``--rounds`` times, so load from other work on the machine spreads over
all of them. Prints events/s per slice (the best round and the median), the ratio to replication, and
with ``--oracle-traces N`` the single-process oracle's events/s on the first N traces of each corpus.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kconform.ci.benchmarks.child import ChildFailed, json_child
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
    parser.add_argument("--before", metavar="PYTHON", help="compare with the checkout PYTHON runs (see above)")
    args = parser.parse_args(argv)
    console = Console()
    if args.before:
        return compare(console, args.before, args.events, args.workers, args.rounds, args.seed)
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


_ONE_RUN = """
import json, resource, sys, tempfile, time
from kconform.model.config import ReplicationConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.generate import Plan, generate
slice_name, events, workers, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
configs = {"replication": ReplicationConfig(), "txn TV0": TxnConfig(transaction_version=0),
           "txn TV2": TxnConfig(transaction_version=2)}
def cpu():
    return sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime
               for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
with tempfile.TemporaryDirectory(prefix="kconform-genbench-") as tmp:
    started = cpu()
    result = generate(tmp, Plan(events=events, seed=seed, config=configs[slice_name]), workers)
    print(json.dumps({"events": result.manifest.events, "seconds": result.seconds, "cpu": cpu() - started}))
"""


def _one_run(python: str, slice_name: str, events: int, workers: int, seed: int) -> dict[str, float]:
    """One corpus of ``slice_name`` written by ``python`` in a fresh process: events, wall seconds
    of ``generate`` and the CPU-seconds it used (its process and its workers)."""
    try:
        out: dict[str, float] = json_child([python, "-c", _ONE_RUN, slice_name, str(events), str(workers), str(seed)])
    except ChildFailed as err:
        raise SystemExit(f"{python} failed on {slice_name}: {err}") from err
    return out


def compare(console: Console, before: str, events: int, workers: int, rounds: int, seed: int) -> int:
    """Before (``before``) and after (this interpreter) per slice, alternating in every round."""
    sides = (("before", before), ("after", sys.executable))
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(rounds):
        for name, _config in SLICES:
            for side, python in sides:
                run = _one_run(python, name, events, workers, seed)
                runs.setdefault((name, side), []).append(run)
                console.print(
                    f"{name} {side}: {run['events']:,.0f} events in {run['seconds']:.1f} s, {run['cpu']:.1f} CPU-s"
                )
    table = Table(
        title=f"generation before / after (medians), {events:,} events, {workers} worker(s), {rounds} round(s)"
    )
    for column in (
        "slice",
        "before ev/s",
        "after ev/s",
        "ratio",
        "before ev/CPU-s",
        "after ev/CPU-s",
        "ratio (CPU)",
    ):
        table.add_column(column, justify="right")
    for name, _config in SLICES:
        wall = {side: statistics.median(r["events"] / r["seconds"] for r in runs[name, side]) for side, _ in sides}
        cpu = {side: statistics.median(r["events"] / r["cpu"] for r in runs[name, side]) for side, _ in sides}
        table.add_row(
            name,
            f"{wall['before']:,.0f}",
            f"{wall['after']:,.0f}",
            f"{wall['after'] / wall['before']:.2f}",
            f"{cpu['before']:,.0f}",
            f"{cpu['after']:,.0f}",
            f"{cpu['after'] / cpu['before']:.2f}",
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
