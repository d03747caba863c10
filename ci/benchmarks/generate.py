"""Corpus generation rate per slice, side by side in one run: replication, txn TV0, txn TV2 (and,
with ``--slices``, fetch sessions).

Run: ``python -m kconform.ci.benchmarks.generate [--events 200000] [--workers 2] [--oracle-traces 2]
[--slices replication "txn TV0" "txn TV2" fetch]``. The fetch-session slice is not among the default
slices: its reference changed behaviour after issue 18's baseline f1fbd7c (6d4a883: the LSO answered
is never below the log start), so against f1fbd7c its rows differ and ``--before`` refuses them;
against a checkout since then they compare. Likewise the replication slice's 1M-event corpus of seed
0 since ca96d90 (the reference's re-election fix changes some of its traces; the 100k one is the
same): compare it against f1fbd7c on a checkout before ca96d90 (docs/traces.md, sixth pass).

``--before PYTHON`` compares two checkouts instead: ``PYTHON`` is the interpreter of another
installed checkout (e.g. ``/work/wt/old/.venv/bin/python``); every round runs each slice once
under it and once under this interpreter, alternating, each in a fresh process, and prints the
events/s and CPU-seconds (the generating process and its workers) of both and the ratio. Only
``kconform.traces.generate.generate`` and the configuration classes are used there, so any checkout
since the fetch-session slice can be the other side. Beside ``generate``'s own CPU-seconds it shows the
whole fresh process's (interpreter start-up, imports, spawned workers), and it checks the corpora:
every run of a slice must hold the same rows (``content_hash``, blind to columns no row uses, so a
checkout whose event schema lacks a later kind's columns compares) and each side the same bytes in
every round (exit 1 otherwise); whether both sides' bytes are identical is printed too.

Each slice writes a corpus of ``--events`` events (default trace size) with the same seed and
workers; the slices take turns ``--rounds`` times, so load from other work on the machine spreads over
all of them. Prints events/s per slice (the best round and the median), the ratio to replication, and
with ``--oracle-traces N`` the single-process oracle's events/s on the first N traces of each corpus.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from kconform.ci.benchmarks.child import ChildFailed, json_child
from kconform.model.config import ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.model.fetch_config import FetchConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.corpus import MANIFEST
from kconform.traces.generate import Plan, generate
from kconform.traces.oracle import run_oracle

ALL_SLICES: tuple[tuple[str, AnyConfig], ...] = (
    ("replication", ReplicationConfig()),
    ("txn TV0", TxnConfig(transaction_version=0)),
    ("txn TV2", TxnConfig(transaction_version=2)),
    ("fetch", FetchConfig()),
)
DEFAULT_SLICES: tuple[str, ...] = ("replication", "txn TV0", "txn TV2")
"""The slices measured unless ``--slices`` names others (see the module docstring for fetch)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--oracle-traces", type=int, default=0, metavar="N")
    parser.add_argument("--before", metavar="PYTHON", help="compare with the checkout PYTHON runs (see above)")
    parser.add_argument(
        "--slices", nargs="+", choices=[name for name, _ in ALL_SLICES], default=list(DEFAULT_SLICES), metavar="SLICE"
    )
    args = parser.parse_args(argv)
    slices = tuple((name, config) for name, config in ALL_SLICES if name in args.slices)
    console = Console(width=max(Console().width, 200))
    if args.before:
        return compare(console, args.before, args.events, args.workers, args.rounds, args.seed, slices)
    rates: dict[str, list[float]] = {name: [] for name, _ in slices}
    oracle: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="kconform-genbench-") as tmp:
        for _ in range(args.rounds):
            for name, config in slices:
                root = Path(tmp) / name.replace(" ", "-")
                result = generate(root, Plan(events=args.events, seed=args.seed, config=config), args.workers)
                rates[name].append(result.events_per_second)
                console.print(f"{name}: {result.manifest.events:,} events in {result.seconds:.1f} s")
                if args.oracle_traces and name not in oracle:
                    ids = [t.trace for t in result.manifest.traces[: args.oracle_traces]]
                    judged = run_oracle(root, result.manifest, ids)
                    oracle[name] = judged.events / judged.seconds
    table = Table(title=f"generation, {args.events:,} events, {args.workers} worker(s), {args.rounds} round(s)")
    first = slices[0][0]
    for column in ("slice", "best events/s", "median events/s", f"best / {first}"):
        table.add_column(column, justify="right")
    if oracle:
        table.add_column(f"oracle events/s ({args.oracle_traces} traces)", justify="right")
    base = max(rates[first])
    for name, _ in slices:
        row = [name, f"{max(rates[name]):,.0f}", f"{statistics.median(rates[name]):,.0f}"]
        row.append(f"{max(rates[name]) / base:.2f}")
        if oracle:
            row.append(f"{oracle[name]:,.0f}")
        table.add_row(*row)
    console.print(table)
    return 0


_ONE_RUN = """
import hashlib, json, resource, sys
def cpu():
    return sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime
               for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
imported = cpu()
from kconform.model.config import ReplicationConfig
from kconform.model.fetch_config import FetchConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.generate import Plan, generate
slice_name, events, workers, seed, root = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
configs = {"replication": ReplicationConfig(), "txn TV0": TxnConfig(transaction_version=0),
           "txn TV2": TxnConfig(transaction_version=2), "fetch": FetchConfig()}
def corpus_hash(root):
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\\0" + path.read_bytes())
    return digest.hexdigest()
started = cpu()
result = generate(root, Plan(events=events, seed=seed, config=configs[slice_name]), workers)
ended = cpu()
from pathlib import Path
print(json.dumps({"events": result.manifest.events, "seconds": result.seconds, "cpu": ended - started,
                  "process_cpu": ended, "imports_cpu": started - imported, "sha256": corpus_hash(Path(root))}))
"""
"""One corpus generated in a fresh process: its events, ``generate``'s wall seconds and CPU-seconds
(the process and its workers), the CPU-seconds of the whole process up to the end of ``generate``
(interpreter start-up, imports and spawned workers' start-up included), of the imports alone, and a
SHA-256 over every file of the corpus (relative path and bytes, in path order)."""


def content_hash(root: Path) -> str:
    """SHA-256 of what a corpus holds, blind to columns no row uses: the manifest without its file
    hashes and checksum, and every Parquet file's rows with its all-null columns dropped, written
    again as one uncompressed, unencoded row group (so chunking and the writer's choices do not
    count). Two checkouts whose event schemas differ only by columns for event kinds the corpus
    never emits (issue 18's baseline f1fbd7c lacks the 4 columns of KIP-392 follower fetching,
    c5c5b47) have the same content hash when their rows are the same."""
    digest = hashlib.sha256()
    manifest = json.loads((root / MANIFEST).read_text())
    for key in ("files", "checksum"):
        manifest.pop(key, None)
    digest.update(json.dumps(manifest, sort_keys=True).encode())
    for path in sorted(root.rglob("*.parquet")):
        table = pq.read_table(path, partitioning=None)
        table = table.select([n for n in table.column_names if table[n].null_count < table.num_rows])
        out = io.BytesIO()
        pq.write_table(
            table.combine_chunks(),
            out,
            row_group_size=max(1, table.num_rows),
            compression="none",
            use_dictionary=False,
            write_statistics=False,
        )
        digest.update(str(path.relative_to(root)).encode() + b"\0" + out.getvalue())
    return digest.hexdigest()


def _one_run(python: str, slice_name: str, events: int, workers: int, seed: int) -> dict[str, Any]:
    """One corpus of ``slice_name`` written by ``python`` in a fresh process (``_ONE_RUN``'s figures)
    and its ``content_hash`` (computed here, by this checkout's pyarrow, on both sides)."""
    with tempfile.TemporaryDirectory(prefix="kconform-genbench-") as tmp:
        root = Path(tmp) / "corpus"
        argv = [python, "-c", _ONE_RUN, slice_name, str(events), str(workers), str(seed), str(root)]
        try:
            out: dict[str, Any] = json_child(argv)
        except ChildFailed as err:
            raise SystemExit(f"{python} failed on {slice_name}: {err}") from err
        out["content"] = content_hash(root)
    return out


def compare(
    console: Console,
    before: str,
    events: int,
    workers: int,
    rounds: int,
    seed: int,
    slices: tuple[tuple[str, AnyConfig], ...] | None = None,
) -> int:
    """Before (``before``) and after (this interpreter) per slice, alternating in every round. Every
    run of a slice must give the same rows (``content_hash``), and each side the same bytes in every
    round: exit 1 and say which if not. Whether the two sides' bytes are the same too is printed
    (they differ when the event schema grew in between: columns no row of the corpus uses).
    ``slices``: (name, configuration) of each slice measured (default: ``DEFAULT_SLICES``)."""
    if slices is None:
        slices = tuple(item for item in ALL_SLICES if item[0] in DEFAULT_SLICES)
    sides = (("before", before), ("after", sys.executable))
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for _ in range(rounds):
        for name, _config in slices:
            for side, python in sides:
                run = _one_run(python, name, events, workers, seed)
                runs.setdefault((name, side), []).append(run)
                console.print(
                    f"{name} {side}: {run['events']:,.0f} events in {run['seconds']:.1f} s, {run['cpu']:.1f} CPU-s "
                    f"(process {run['process_cpu']:.1f}, imports {run['imports_cpu']:.2f}), "
                    f"bytes {run['sha256'][:12]}, rows {run['content'][:12]}, load {os.getloadavg()[0]:.1f}"
                )
    table = Table(
        title=f"generation before / after (medians), {events:,} events, {workers} worker(s), {rounds} round(s); "
        "process CPU-s: the whole fresh process (start-up, imports, spawned workers)"
    )
    for column in (
        "slice",
        "before ev/s",
        "after ev/s",
        "ratio",
        "before ev/CPU-s",
        "after ev/CPU-s",
        "ratio (CPU)",
        "before ev/process CPU-s",
        "after ev/process CPU-s",
        "ratio (process)",
        "same rows",
        "same bytes",
    ):
        table.add_column(column, justify="right")
    consistent = True
    for name, _config in slices:
        contents = {r["content"] for side, _ in sides for r in runs[name, side]}
        per_side = [{r["sha256"] for r in runs[name, side]} for side, _ in sides]
        stable = all(len(h) == 1 for h in per_side)
        consistent &= len(contents) == 1 and stable
        row = [name]
        for key in ("seconds", "cpu", "process_cpu"):
            m = {side: statistics.median(r["events"] / r[key] for r in runs[name, side]) for side, _ in sides}
            row += [f"{m['before']:,.0f}", f"{m['after']:,.0f}", f"{m['after'] / m['before']:.2f}"]
        same_bytes = ("yes" if len(set.union(*per_side)) == 1 else "no") if stable else "NOT WITHIN A SIDE"
        table.add_row(*row, "yes" if len(contents) == 1 else "NO", same_bytes)
    console.print(table)
    console.print(
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f}"
    )
    if not consistent:
        console.print("same seed, different rows (or bytes that change between rounds of one side): see the table")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
