"""``kconform probe``: black-box conformance of a system that speaks Kafka's wire protocol (issue 12).

``kconform probe --check HISTORY`` re-judges a stored history (conformance/probe/history.py) without
a cluster, like Jepsen's ``analyze``: prints the summary table and the verdict, writes report.json
and report.html (the witness operations per partition) under ``--out`` and, with ``--junit``, one
JUnit test case per anomaly class. Live runs (``--bootstrap-server``, ``--target``) drive real
clients and then judge the history they wrote the same way.

Exit codes: 0 valid, 1 anomalies the configuration does not allow, 2 input or harness error
(file:line and field named), 3 unknown (judged, nothing forbidden, but too little observed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_UNKNOWN, EXIT_VIOLATION, user_error

DEFAULT_OUT = Path("kconform-probe")


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Register ``probe`` on the ``kconform`` sub-command parser; returns it so the live-run options
    can be added next to ``--check``."""
    probe: argparse.ArgumentParser = commands.add_parser(
        "probe",
        help="judge a Kafka-protocol system through real clients, or re-check a stored history "
        "(exit 0 valid, 1 anomalies, 2 error, 3 unknown)",
        description="Judge a probe history against the guarantees Kafka clients can observe, with Jepsen's "
        "anomaly names; anomalies the history's configuration permits are reported as allowed.",
    )
    probe.add_argument("--check", type=Path, metavar="HISTORY", help="re-judge a stored history (no cluster)")
    probe.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help="report.json and report.html (default: %(default)s)",
    )
    probe.add_argument("--junit", type=Path, metavar="PATH", help="write a JUnit XML report (a case per anomaly)")
    probe.add_argument(
        "--keep",
        type=int,
        default=20,
        metavar="N",
        help="findings kept in full per anomaly class (default: %(default)s)",
    )
    live = probe.add_argument_group("live run (starts the target, drives real clients, then judges)")
    live.add_argument(
        "--target",
        metavar="FILE",
        help="a target file (docs/probe.md), or a shipped target's name: tansu, librdkafka-mock",
    )
    live.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT[,...]",
        help="a cluster kconform does not manage (127.0.0.1 only; no faults)",
    )
    live.add_argument(
        "--client",
        choices=("confluent-kafka", "kafka-python"),
        default="confluent-kafka",
        help="the client library of every client process (default: %(default)s)",
    )
    live.add_argument(
        "--capabilities",
        metavar="K=V,...",
        help="override the target's capabilities: transactions, idempotence, groups (true/false), replication_factor",
    )
    live.add_argument("--seed", type=int, default=7, help="the workload's and the nemesis' seed (default: %(default)s)")
    live.add_argument("--ops", type=int, metavar="N", help="main-phase budget in client operations")
    live.add_argument(
        "--seconds", type=float, metavar="S", help="main-phase budget in seconds (default 10 when no --ops)"
    )
    live.add_argument("--no-nemesis", action="store_true", help="run without faults")
    probe.set_defaults(handler=cmd_probe)
    return probe


def cmd_probe(args: argparse.Namespace) -> int:
    live = args.target is not None or args.bootstrap_server is not None
    if args.check is not None and live:
        return user_error("--check judges a stored history: give it without --target / --bootstrap-server")
    if args.check is None and not live:
        return user_error("nothing to do: give --check HISTORY (or a live run's --bootstrap-server / --target)")
    if args.keep < 1:
        return user_error(f"--keep: expected a positive integer, got {args.keep}")
    if args.junit is not None and (args.junit.is_dir() or not args.junit.parent.is_dir()):
        return user_error(f"--junit {args.junit}: give a file in an existing directory")
    if args.out.exists() and not args.out.is_dir():
        return user_error(f"--out {args.out}: exists and is not a directory")
    if live:
        return run_and_check(args)
    return check_and_report(args.check, args.out, args.junit, args.keep)


def run_and_check(args: argparse.Namespace) -> int:
    """A live run (kconform.conformance.probe.runner), then the same judgement as ``--check``.

    Everything the run started is torn down before this returns, also on Ctrl-C (exit 2: no verdict)."""
    from kconform.conformance.probe.procs import Interrupted
    from kconform.conformance.probe.runner import ProbeError, ProbeOptions, run_probe

    if args.target is not None and args.bootstrap_server is not None:
        return user_error("give one of --target and --bootstrap-server")
    if args.ops is not None and args.ops < 1:
        return user_error(f"--ops: expected a positive integer, got {args.ops}")
    if args.seconds is not None and not 0 < args.seconds <= 86_400:
        return user_error(f"--seconds: expected a positive number of seconds, got {args.seconds}")
    options = ProbeOptions(
        target=args.target,
        bootstrap_server=args.bootstrap_server,
        client=args.client,
        capabilities=args.capabilities,
        seed=args.seed,
        ops=args.ops,
        seconds=args.seconds,
        out_dir=args.out,
        nemesis=not args.no_nemesis,
    )
    try:
        run = run_probe(options)
    except ProbeError as e:
        return user_error(str(e))
    except Interrupted as e:
        print(f"kconform: interrupted ({e}): every process of the run was stopped; no verdict", file=sys.stderr)
        return EXIT_ERROR
    faults = ", ".join(f"{f} {n}" for f, n in sorted(run.faults.items())) or "none"
    print(
        f"probe {run.target} with {run.client}: {run.ops:,} operations in the main phase "
        f"({run.completed['ok']:,} ok, {run.completed['fail']:,} fail, {run.completed['info']:,} info), "
        f"faults: {faults}; {run.elapsed_s:.1f} s; history {run.history}"
    )
    return check_and_report(run.history, args.out, args.junit, args.keep)


def check_and_report(history: Path, out: Path, junit: Path | None, keep: int = 20) -> int:
    """Judge ``history``, print the table and verdict, write the reports; return the exit code."""
    from rich.console import Console

    from kconform.ci.junit import JUnitCase, write_junit
    from kconform.conformance.probe.anomalies import ANOMALIES
    from kconform.conformance.probe.checker import INVALID, UNKNOWN, CheckInputError, check_history
    from kconform.conformance.probe.history import HistoryError
    from kconform.conformance.probe.report import summary_table, write_reports

    started = time.monotonic()
    try:
        result = check_history(history, keep=keep)
    except (HistoryError, CheckInputError) as e:
        return user_error(f"{history}: {e}" if isinstance(e, CheckInputError) else str(e))
    seconds = time.monotonic() - started
    console = Console()
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
    for skipped in result.header.skipped:
        console.print(f"skipped by the run: {skipped.what} ({skipped.why})")
    console.print(summary_table(result))
    for finding in result.findings.findings():
        if not finding.allowed:
            console.print(
                f"[bold red]{finding.name}[/]{' ' + finding.partition if finding.partition else ''}: "
                f"{finding.explanation} "
                f"(operations {', '.join(map(str, finding.witnesses))})"
            )
    paths = write_reports(result, history, out)
    st = result.stats
    console.print(
        f"{st.lines:,} events, {st.values_written:,} values written, {st.values_acked:,} acknowledged, "
        f"{st.acked_judged:,} judged, {st.values_read:,} read, {st.unseen:,} unseen; checked in {seconds:.1f} s"
    )
    console.print(f"reports: {', '.join(paths)}")
    if junit is not None:
        cases = []
        for name in ANOMALIES:
            bad = result.findings.count(name, False)
            kept = [f for f in result.findings.findings() if f.name == name and not f.allowed]
            message = None
            if bad:
                message = f"{bad} x {name}\n" + "\n".join(
                    f"{f.partition or ''}: {f.explanation} (operations {list(f.witnesses)})" for f in kept
                )
            cases.append(JUnitCase(name, f"kconform.probe.{result.header.target}", 0.0, message))
        cases.append(
            JUnitCase(
                "enough-observed",
                f"kconform.probe.{result.header.target}",
                seconds,
                result.reason if result.verdict == UNKNOWN else None,
            )
        )
        write_junit(junit, f"kconform probe {history.name}", cases)
    style = {"valid": "bold green", "invalid": "bold red", "unknown": "bold yellow"}[result.verdict]
    console.print(f"[{style}]{result.verdict.upper()}[/]: {result.reason}")
    if result.verdict == INVALID:
        return EXIT_VIOLATION
    if result.verdict == UNKNOWN:
        return EXIT_UNKNOWN
    return EXIT_PASS
