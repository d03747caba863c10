"""Bounded model checking time per solving mode, side by side on the same searches (issue 5).

conformance.bmc decides each length k either with one incremental solver (the prefix asserted once,
each length's goal under an assumption literal) or with a fresh solver per length behind z3's
bit-vector preprocessing (``FRESH_TACTIC``). Both modes must give the same verdicts (the same
minimal length, or UNSAT up to the bound); this script checks that and prints, per search, each
mode's per-length solve times, its total wall time and the ratio incremental / fresh.

The default searches are the 2-replica historic bugs of docs/bmc.md (2 records, leader epochs <= 3)
and one UNSAT search on a fixed rung. Run: ``python -m kconform.ci.benchmarks.bmc_solving
[--search NAME ...] [--mode fresh --mode incremental]``; the modes of one search run one after the
other in one process, so they see the same machine load as nearly as a shared machine allows.
"""

from __future__ import annotations

import argparse
import platform
from dataclasses import dataclass

import z3  # type: ignore[import-untyped]
from rich.console import Console
from rich.table import Table

from kconform.conformance.bmc import SOLVING, BmcResult, bmc
from kconform.model.actions import SearchBounds
from kconform.model.config import Protocol, ReplicationConfig


@dataclass(frozen=True)
class Search:
    """One bounded model checking search: rung, cluster, bounds, invariant, longest run."""

    name: str
    protocol: Protocol
    replicas: int
    invariant: str
    bounds: SearchBounds
    steps: int


SEARCHES = (
    Search("truncate-to-hw StrongIsr", Protocol.TRUNCATE_TO_HW, 2, "StrongIsr", SearchBounds(), 10),
    Search("kip-101 divergence", Protocol.KIP_101, 2, "NoDivergenceBelowHw", SearchBounds(), 12),
    Search("truncate-to-hw loss", Protocol.TRUNCATE_TO_HW, 2, "NoCommittedDataLoss", SearchBounds(), 12),
    Search(
        "kip-320 UNSAT <= 6, 1 record, epochs <= 2",
        Protocol.KIP_320,
        2,
        "StrongIsr",
        SearchBounds(max_records=1, max_leader_epoch=2),
        6,
    ),
)


def verdict(res: BmcResult) -> str:
    """The outcome a mode must agree on: the minimal length, or UNSAT up to the bound."""
    return f"minimal {res.found.depth}" if res.found is not None else f"UNSAT <= {res.checked_steps}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--search", action="append", default=[], help="only searches whose name starts with this")
    parser.add_argument("--mode", action="append", choices=SOLVING, default=[], help="modes (default: both)")
    args = parser.parse_args()
    modes = args.mode or list(SOLVING)
    console = Console()
    console.print(f"{platform.machine()}, Python {platform.python_version()}, z3 {z3.get_version_string()}")
    table = Table(title="bounded model checking: per-length solve seconds and total wall time per mode")
    for col in ("search", "mode", "verdict", "per-k solve s", "total s", "incremental / fresh"):
        table.add_column(col)
    for search in SEARCHES:
        if args.search and not any(search.name.startswith(s) for s in args.search):
            continue
        cfg = ReplicationConfig(replicas=search.replicas, min_insync_replicas=1, protocol=search.protocol)
        results = {}
        for mode in modes:
            results[mode] = res = bmc(cfg, search.bounds, [search.invariant], search.steps, solving=mode)
            console.print(f"{search.name}, {mode}: {verdict(res)} in {res.seconds:.1f} s")  # progress
        verdicts = {verdict(r) for r in results.values()}
        if len(verdicts) != 1:
            raise SystemExit(f"{search.name}: the modes disagree: {verdicts}")
        for mode, res in results.items():
            ratio = "-"
            if mode == "fresh" and "incremental" in results:
                ratio = f"{results['incremental'].seconds / res.seconds:.1f}x"
            table.add_row(
                search.name,
                mode,
                verdict(res),
                " ".join(f"{s:.1f}" for s in res.solve_seconds),
                f"{res.seconds:.1f}",
                ratio,
            )
    console.print(table)


if __name__ == "__main__":
    main()
