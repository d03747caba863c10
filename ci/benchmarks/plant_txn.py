"""Which exactly-once mutants a random trace shows: per mutant, the traces of default size (5,000
events) the oracle flags when every trace of a corpus carries that mutant, at several seeds and
transaction versions.

Run: ``python -m kconform.ci.benchmarks.plant_txn [--traces 16] [--seed 3 --seed 4] [--version 0
--version 2] [--mutant NAME ...] [--clean] [--trace-events 5000]``. Each (mutant, seed, version)
generates a corpus of ``--traces`` traces, all planted with the mutant (one process, the same
traces as ``kconform generate --slice txn --plant NAME:N`` gives when N is every trace), and judges
each trace with the single-process oracle's judge up to its first failing event (a planted trace is
shown once one event fails). A mutant whose MUTANT_CONFIG sets the transaction version
(impl.mutants.config_for) runs at that version only. ``--clean`` adds a row of unplanted corpora,
judged to the end: the flags there must be 0. Prints a table of flagged / traces per column.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kconform.conformance.registry import for_config
from kconform.impl.mutants import TXN, config_for, mutants_of
from kconform.model.txn_config import TxnConfig
from kconform.traces.corpus import ReadReport, read_traces
from kconform.traces.counterexample import Counterexample
from kconform.traces.generate import DEFAULT_TRACE_EVENTS, Plan, generate

CLEAN = "(clean)"


def first_failure(cx: Counterexample, stop: bool) -> int | None:
    """Position of the first event the judge fails in ``cx`` (None: none); with ``stop`` the
    judging ends there."""
    judge = for_config(cx.config).make_judge(cx.config, None)
    pos = 0
    found: int | None = None
    for step in cx.steps:
        for event in step.events:
            if any(f.failing for f in judge.observe(event)) and found is None:
                found = pos
                if stop:
                    return found
            pos += 1
    return found


def measure(root: Path, name: str, seed: int, version: int, traces: int, trace_events: int) -> tuple[int, int, int]:
    """(flagged traces, traces, median position of the first failure or -1) for one corpus."""
    config = TxnConfig(transaction_version=version)
    plant = () if name == CLEAN else ((name, traces),)
    plan = Plan(events=traces * trace_events, seed=seed, trace_events=trace_events, config=config, plant=plant)
    manifest = generate(root, plan).manifest
    report = ReadReport()
    positions = []
    for _meta, cx in read_traces(root, manifest, report):
        found = first_failure(cx, stop=name != CLEAN)
        if found is not None:
            positions.append(found)
    if report.errors:
        raise RuntimeError(f"unreadable corpus: {report.errors}")
    positions.sort()
    median = positions[len(positions) // 2] if positions else -1
    return len(positions), len(manifest.traces), median


def versions_of(name: str, versions: list[int]) -> list[int]:
    """The transaction versions a mutant runs at: its MUTANT_CONFIG's when it sets one."""
    if name == CLEAN:
        return versions
    forced = {config_for(name, TxnConfig(transaction_version=v)).transaction_version for v in versions}
    return sorted(forced)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=16)
    parser.add_argument("--seed", type=int, action="append", default=None)
    parser.add_argument("--version", type=int, action="append", default=None, choices=(0, 2))
    parser.add_argument("--mutant", action="append", default=None)
    parser.add_argument("--clean", action="store_true", help="also judge unplanted corpora (to the end)")
    parser.add_argument("--trace-events", type=int, default=DEFAULT_TRACE_EVENTS)
    args = parser.parse_args(argv)
    seeds = args.seed or [3, 4]
    versions = args.version or [0, 2]
    names = args.mutant or sorted(set(mutants_of(TXN)) - {"epoch-overflow"})
    if args.clean:
        names.append(CLEAN)
    console = Console(width=200)
    columns = [(s, v) for s in seeds for v in versions]
    table = Table(
        title=f"traces of {args.trace_events:,} events the oracle flags, out of {args.traces}, per seed and "
        "transaction version (median event position of the first failure)"
    )
    table.add_column("mutant")
    for s, v in columns:
        table.add_column(f"seed {s} TV{v}", justify="right")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kconform-plant-") as tmp:
        for name in names:
            row = [name]
            runs = versions_of(name, versions)
            for s, v in columns:
                if v not in runs:
                    row.append("-")
                    continue
                flagged, total, median = measure(Path(tmp) / "c", name, s, v, args.traces, args.trace_events)
                row.append(f"{flagged} / {total}" + (f" ({median:,})" if median >= 0 else ""))
                console.print(f"{name} seed {s} TV{v}: {flagged} / {total}  [{time.perf_counter() - started:.0f} s]")
            table.add_row(*row)
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
