"""``kconform generate OUT --events N``: a Parquet trace corpus from the reference cluster.

Seeded random workloads and faults (kconform.traces.generate) of the replication slice or, with
``--slice txn [--transaction-version 0|2]``, the exactly-once slice (kconform.traces.txn.workload);
``--workers`` processes, a progress bar, ``--plant MUTANT[:N]`` to switch a mutant of that slice on
in N traces (the manifest says which, and the configuration each trace ran with); prints the rate.
Exit 0 when written, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kconform.ci.exitcodes import EXIT_PASS, user_error
from kconform.conformance import registry
from kconform.model.configs import TXN


def add_parser(commands: Any, add_config_arguments: Any, load_config: Any) -> None:
    """Register ``generate``; ``add_config_arguments`` adds --config / --set (shared with the gate) and
    ``load_config(path, settings)`` turns them into a configuration of either slice (its ``slice``
    key picks it; --slice and --transaction-version are settings applied before --set)."""
    gen = commands.add_parser(
        "generate",
        help="write a Parquet corpus of reference-cluster traces (seeded, parallel)",
        description="Run the reference cluster under seeded random workloads and faults until the corpus holds "
        "--events events; same seed, same corpus.",
    )
    gen.add_argument("out", type=Path, metavar="OUT")
    gen.add_argument("--events", type=int, required=True, metavar="N", help="events in total (at least)")
    gen.add_argument("--seed", type=int, default=0, metavar="N", help="corpus seed (default: 0)")
    gen.add_argument("--trace-events", type=int, default=None, metavar="N", help="events per trace (default: 5000)")
    gen.add_argument("--workers", type=int, default=1, metavar="N", help="processes (default: 1)")
    gen.add_argument(
        "--plant",
        action="append",
        default=[],
        metavar="MUTANT[:N]",
        help="switch MUTANT (of the corpus's slice) on in N traces (default 1) chosen from the seed, each run with "
        "the configuration the mutant needs (late-endtxn-next-txn: transaction version 2); repeatable",
    )
    gen.add_argument(
        "--slice",
        choices=registry.names(),
        help="which slice's reference cluster (conformance.registry): replication (default), txn (idempotent and "
        "transactional producers, read_committed consumers), ...; same as --set slice=NAME",
    )
    gen.add_argument(
        "--transaction-version",
        type=int,
        choices=(0, 2),
        metavar="0|2",
        help="with --slice txn: transaction version 0 (default) or 2 (KIP-890 part 2)",
    )
    add_config_arguments(gen)
    gen.add_argument("--no-progress", action="store_true", help="no progress bar")
    gen.set_defaults(handler=lambda args: _handle(args, load_config))


def _handle(args: argparse.Namespace, load_config: Any) -> int:
    if args.transaction_version is not None and args.slice != TXN:
        return user_error("--transaction-version needs --slice txn")
    return cmd_generate(args, load_config(args.config, slice_settings(args)))


def slice_settings(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """--slice and --transaction-version as config settings, then the --set ones (which win)."""
    settings: list[tuple[str, Any]] = [("slice", args.slice)] if args.slice else []
    if args.transaction_version is not None:
        settings.append(("transaction_version", args.transaction_version))
    return settings + list(args.settings)


def parse_plant(texts: list[str]) -> tuple[tuple[str, int], ...]:
    """``["name:3", "other"]`` → (("name", 3), ("other", 1)); ValueError on a bad count."""
    out = []
    for text in texts:
        name, sep, count = text.partition(":")
        n = int(count) if sep else 1
        if n < 1:
            raise ValueError(f"--plant {text}: the count must be a positive integer")
        out.append((name, n))
    return tuple(out)


MAX_EVENTS = 10**11
"""The largest corpus ``generate`` makes in one go (100 billion events)."""
MAX_WORKERS = 64
MAX_TRACE_EVENTS = 10**8


def cmd_generate(args: argparse.Namespace, config: Any) -> int:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from kconform.model.configs import slice_of
    from kconform.traces.generate import DEFAULT_TRACE_EVENTS, Plan, generate

    if args.events < 1 or args.workers < 1 or (args.trace_events is not None and args.trace_events < 1):
        return user_error("--events, --workers and --trace-events must be positive integers")
    bounds = (("--events", args.events, MAX_EVENTS), ("--workers", args.workers, MAX_WORKERS))
    for flag, value, most in (*bounds, ("--trace-events", args.trace_events or 1, MAX_TRACE_EVENTS)):
        if value > most:
            return user_error(f"{flag} {value}: at most {most:,}")
    if not -(2**63) <= args.seed < 2**63:
        return user_error(f"--seed {args.seed}: a corpus seed is an int64")
    try:
        plan = Plan(
            events=args.events,
            seed=args.seed,
            trace_events=args.trace_events or min(DEFAULT_TRACE_EVENTS, args.events),
            config=config,
            plant=parse_plant(args.plant),
        )
        plan.planted()
    except ValueError as e:
        return user_error(str(e))
    console = Console()
    columns = (
        TextColumn("generating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("events"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, disable=args.no_progress) as progress:
        task = progress.add_task("events", total=plan.traces * plan.trace_events)
        try:
            result = generate(args.out, plan, args.workers, lambda n: progress.advance(task, n))
        except FileExistsError as e:
            return user_error(str(e))
    m = result.manifest
    console.print(
        f"wrote {m.events:,} {slice_of(config)} events in {len(m.traces):,} traces ({len(m.buckets)} buckets) "
        f"to {args.out} "
        f"in {result.seconds:.1f} s: {result.events_per_second:,.0f} events/s with {args.workers} worker(s)"
    )
    for trace, mutants in sorted(m.planted().items()):
        console.print(f"  trace {trace}: {', '.join(mutants)}")
    return EXIT_PASS
