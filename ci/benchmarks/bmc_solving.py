"""Bounded model checking time per solving variant, side by side on the same searches (issue 5).

conformance.replication.bmc decides each length k either with one incremental solver (the prefix asserted once,
each length's goal under an assumption literal) or with a fresh solver per length behind z3's
bit-vector preprocessing (``FRESH_TACTIC``), over every run or only over runs in partial-order
normal form (``reduce``). The variants: ``incremental`` (the loop before issue 5's speed-up, all
runs), ``fresh`` (all runs), ``fresh+reduced`` (the default). All must give the same verdicts (the
same minimal length, or UNSAT up to the bound); this script checks that and prints, per search,
each variant's per-length solve times, its total wall time and its speed-up over the first.

The default searches are the 2-replica historic bugs of docs/bmc.md (2 records, leader epochs <= 3)
and one UNSAT search on a fixed rung. Run: ``python -m kconform.ci.benchmarks.bmc_solving
[--search NAME ...] [--variant fresh+reduced ...]``; the variants of one search run one after the
other in one process, so they see the same machine load as nearly as a shared machine allows.
"""

from __future__ import annotations

import argparse
import platform

import z3  # type: ignore[import-untyped]
from rich.console import Console
from rich.table import Table

from kconform.ci.benchmarks.minimal import Bug
from kconform.conformance.replication.bmc import BmcResult, bmc
from kconform.model.actions import SearchBounds
from kconform.model.config import Protocol, ReplicationConfig

SEARCHES = (
    Bug("truncate-to-hw StrongIsr", Protocol.TRUNCATE_TO_HW, 2, "StrongIsr", SearchBounds(), 10),
    Bug("kip-101 divergence", Protocol.KIP_101, 2, "NoDivergenceBelowHw", SearchBounds(), 12),
    Bug("truncate-to-hw loss", Protocol.TRUNCATE_TO_HW, 2, "NoCommittedDataLoss", SearchBounds(), 12),
    Bug(
        "kip-320 UNSAT <= 6, 1 record, epochs <= 2",
        Protocol.KIP_320,
        2,
        "StrongIsr",
        SearchBounds(max_records=1, max_leader_epoch=2),
        6,
    ),
)


VARIANTS = {"incremental": ("incremental", False), "fresh": ("fresh", False), "fresh+reduced": ("fresh", True)}
"""Variant name -> (solving mode, reduce)."""


def verdict(res: BmcResult) -> str:
    """The outcome a mode must agree on: the minimal length, or UNSAT up to the bound."""
    return f"minimal {res.found.depth}" if res.found is not None else f"UNSAT <= {res.checked_steps}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--search", action="append", default=[], help="only searches whose name starts with this")
    parser.add_argument("--variant", action="append", choices=VARIANTS, default=[], help="default: all")
    args = parser.parse_args()
    variants = args.variant or list(VARIANTS)
    console = Console()
    console.print(f"{platform.machine()}, Python {platform.python_version()}, z3 {z3.get_version_string()}")
    table = Table(title="bounded model checking: per-length solve seconds and total wall time per mode")
    for col in ("search", "variant", "verdict", "per-k solve s", "total s", f"speed-up over {variants[0]}"):
        table.add_column(col)
    for search in SEARCHES:
        if args.search and not any(search.name.startswith(s) for s in args.search):
            continue
        cfg = ReplicationConfig(replicas=search.replicas, min_insync_replicas=1, protocol=search.protocol)
        results = {}
        for name in variants:
            solving, reduce = VARIANTS[name]
            res = bmc(cfg, search.bounds, [search.invariant], search.max_steps, solving=solving, reduce=reduce)
            results[name] = res
            console.print(f"{search.name}, {name}: {verdict(res)} in {res.seconds:.1f} s")  # progress
        verdicts = {verdict(r) for r in results.values()}
        if len(verdicts) != 1:
            raise SystemExit(f"{search.name}: the variants disagree: {verdicts}")
        first = results[variants[0]].seconds
        for name, res in results.items():
            table.add_row(
                search.name,
                name,
                verdict(res),
                " ".join(f"{s:.1f}" for s in res.solve_seconds),
                f"{res.seconds:.1f}",
                f"{first / res.seconds:.1f}x",
            )
    console.print(table)


if __name__ == "__main__":
    main()
