"""``kconform serve``: the exactly-once reference cluster behind Kafka's wire protocol (issue 16,
docs/serve.md). One listener per simulated broker on 127.0.0.1; every request real clients send is
judged by the model; on exit (SIGINT / SIGTERM, ``--seconds`` elapsed, or an error) the listeners
close and the run is written as a trace file ``kconform replay`` re-drives.

Exit codes: 0 every request served conformed, 1 the model found a non-conformance or invariant
violation (the trace file holds it), 2 bad options or schedule, or the server could not start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
from pathlib import Path
from typing import Any

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION, user_error

DEFAULT_OUT = Path("kconform-serve")
MAX_SECONDS = 7 * 24 * 3600


def add_parser(commands: Any) -> argparse.ArgumentParser:
    serve: argparse.ArgumentParser = commands.add_parser(
        "serve",
        help="serve the reference cluster on the Kafka wire protocol, judging every request "
        "(exit 0 conformed, 1 finding, 2 error)",
        description="Serve the exactly-once reference cluster to real Kafka clients on 127.0.0.1; the model judges "
        "every request the brokers handle (docs/serve.md).",
    )
    serve.add_argument("--slice", default="txn", help="the slice served: txn (the only one with a wire mapping)")
    serve.add_argument("--brokers", type=int, default=3, help="simulated brokers, one listener each (1..7, default 3)")
    serve.add_argument(
        "--mutant", action="append", default=[], dest="mutants", metavar="NAME", help="inject a known bug (repeatable)"
    )
    serve.add_argument("--faults", type=Path, metavar="SCHEDULE", help="fault schedule, TOML or JSON (docs/serve.md)")
    serve.add_argument(
        "--seed", type=int, default=0, help="recorded in the trace file (the served cluster has no random choice)"
    )
    serve.add_argument("--bootstrap-file", type=Path, metavar="F", help="also write the bootstrap servers to F")
    serve.add_argument(
        "--port",
        type=int,
        action="append",
        default=[],
        metavar="PORT",
        help="listener port per broker (default: ephemeral)",
    )
    serve.add_argument(
        "--partitions", type=int, default=1, help="partitions of an auto-created topic (num.partitions, default 1)"
    )
    serve.add_argument("--seconds", type=float, help="stop after this many seconds (default: until SIGINT / SIGTERM)")
    serve.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help="where the trace file goes (default: %(default)s)"
    )
    serve.set_defaults(handler=cmd_serve)
    return serve


def cmd_serve(args: argparse.Namespace) -> int:
    from kconform.conformance.serve.cluster import ServedCluster, served_config
    from kconform.conformance.serve.faults import ScheduleError, load_schedule
    from kconform.impl.mutants import check_mutants
    from kconform.model.config import ConfigError

    if args.slice != "txn":
        return user_error(
            f"--slice {args.slice}: only the txn slice is served "
            "(its reference has producer ids, transactions and groups)"
        )
    if args.port and len(args.port) != args.brokers:
        return user_error(f"--port given {len(args.port)} time(s) for {args.brokers} broker(s)")
    if args.seconds is not None and not 0 < args.seconds <= MAX_SECONDS:
        return user_error(f"--seconds must be in (0, {MAX_SECONDS}]")
    if not 1 <= args.partitions <= 8:
        return user_error("--partitions must be 1..8 (the served configuration has 8 data partitions)")
    try:
        cfg = served_config(args.brokers)
        mutants = check_mutants(args.mutants, "txn")
        faults = load_schedule(args.faults, args.brokers) if args.faults is not None else []
    except (ConfigError, ValueError) as exc:
        return user_error(str(exc))
    except ScheduleError as exc:
        return user_error(str(exc))
    return run_server(args, ServedCluster(cfg, mutants, args.seed), faults)


def run_server(args: argparse.Namespace, cluster: Any, faults: list[Any]) -> int:
    """Serve until SIGINT / SIGTERM or ``--seconds``; write the trace and verdict; the exit code.
    (The fuzz harness stubs this: option checking above is fuzzed, serving is not.)"""
    from kconform.conformance.serve.server import Server

    server = Server(cluster, faults, default_partitions=args.partitions)
    try:
        asyncio.run(_serve(server, args))
    except OSError as exc:
        return user_error(f"cannot listen: {exc}")
    finally:
        trace = cluster.write_trace(args.out / "served.jsonl")
    stats = server.stats
    _write_verdict(args.out / "verdict.json", cluster, server, trace)
    print(
        f"served {sum(stats.requests.values())} requests: "
        + ", ".join(f"{k} {v}" for k, v in sorted(stats.requests.items()))
    )
    if stats.closed:
        print("connections closed as Kafka closes them: " + ", ".join(f"{k} ({v})" for k, v in stats.closed.items()))
    for note in stats.errors[:10]:
        print(f"server error (the connection was closed, serving went on): {note}")
    print(f"trace file: {trace} (kconform replay {trace})")
    if cluster.failure is not None:
        f = cluster.failure
        print(f"{f.verdict} {f.name}: {f.message}")
        return EXIT_VIOLATION
    print("no non-conformance: every request served conformed to the model")
    return EXIT_ERROR if stats.errors else EXIT_PASS


def _write_verdict(path: Path, cluster: Any, server: Any, trace: Path) -> None:
    """verdict.json next to the trace: the model's verdict and the requests served (for scripts and
    for runs whose stdout nobody reads, such as the probe's ``serve`` target)."""
    f = cluster.failure
    verdict = {
        "verdict": "pass" if f is None else f.verdict,
        "name": None if f is None else f.name,
        "message": None if f is None else f.message,
        "requests": dict(sorted(server.stats.requests.items())),
        "injected": dict(server.stats.injected),
        "closed": dict(server.stats.closed),
        "server_errors": server.stats.errors,
        "trace": str(trace),
    }
    path.write_text(json.dumps(verdict, indent=2) + "\n", encoding="utf-8")


async def _serve(server: Any, args: argparse.Namespace) -> None:
    await server.start(args.port or None)
    print(f"bootstrap: {server.bootstrap}", flush=True)
    if args.bootstrap_file is not None:
        args.bootstrap_file.parent.mkdir(parents=True, exist_ok=True)
        args.bootstrap_file.write_text(server.bootstrap + "\n", encoding="utf-8")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        if args.seconds is None:
            await stop.wait()
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), args.seconds)
    finally:
        await server.stop()
