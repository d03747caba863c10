"""``kconform logs check PATH...`` and ``kconform logs ingest PATH... --out CORPUS``: Kafka's own
recorded outputs (dump-log output, checkpoint files, broker and client logs; files, directories,
.gz) as input.

``check`` parses and checks in one streaming pass, prints the summary table, writes
``OUT/report.json``, ``OUT/report.html`` and (``--junit``) JUnit XML. Exit codes as the gate:
0 no violation, 1 a violation, 2 an input error (an unreadable path, or a known line that does not
parse without ``--lenient``: then no verdict is given). ``ingest`` writes the observations as a
Parquet corpus that ``--engine duckdb|spark`` checks with the same rules
(kconform.traces.logs.ingest).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION, user_error
from kconform.ci.junit import JUnitCase, write_junit

DEFAULT_OUT = Path("kconform-logs")


def add_parser(commands: Any) -> None:
    """Register ``logs`` (with ``check`` and ``ingest``) on the ``kconform`` sub-command parser."""
    logs = commands.add_parser(
        "logs",
        help="check Kafka's own outputs (dump-log, checkpoints, server/state-change/client logs) (exit 0/1/2)",
        description="Parse what a real Kafka cluster printed and check the guarantees those lines can show.",
    )
    sub = logs.add_subparsers(title="logs commands", dest="logs_command", required=True, metavar="COMMAND")

    check = sub.add_parser(
        "check",
        help="parse and check PATHs in one pass (exit 0 none, 1 violations, 2 input error)",
        description="Files, directories (recursively) and .gz files; lines of any Kafka version 0.10 to 4.x.",
    )
    check.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    check.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help="report directory (default: %(default)s)"
    )
    check.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML (one case per check)")
    check.add_argument(
        "--lenient",
        action="store_true",
        help="count known lines that do not parse as warnings instead of failing with exit 2",
    )
    check.add_argument(
        "--check", dest="checks", action="append", default=[], metavar="NAME", help="run only this check (repeatable)"
    )
    check.add_argument(
        "--max-txn-timeout-ms",
        type=int,
        default=None,
        metavar="MS",
        help="the cluster's transaction.max.timeout.ms (default 900000): older open transactions are hanging",
    )
    check.set_defaults(handler=cmd_check)

    ingest = sub.add_parser(
        "ingest",
        help="write the observations of PATHs as a Parquet corpus, then check it on DuckDB or Spark",
        description="Observations as Parquet (one row per observation, schema in docs/logs.md); the same checks "
        "then run per partition over the corpus with --engine.",
    )
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    ingest.add_argument("--out", type=Path, required=True, metavar="CORPUS", help="corpus directory to write")
    ingest.add_argument("--lenient", action="store_true", help="count known lines that do not parse as warnings")
    ingest.add_argument(
        "--engine",
        choices=("none", "duckdb", "spark"),
        default="none",
        help="after writing, check the corpus on this engine (default: only write)",
    )
    ingest.add_argument(
        "--master", default="local[*]", help="Spark master URL with --engine spark (default: %(default)s)"
    )
    ingest.set_defaults(handler=cmd_ingest)


def junit_cases(run: Any) -> list[JUnitCase]:
    """One JUnit case per check: failed when violated, skipped when not observed."""
    from kconform.traces.logs.checks import NOT_OBSERVED

    cases = []
    for c in run.checks:
        failure = None
        if c.fails:
            lines = [f"{c.finding_count} finding(s): {c.guarantee}"]
            if c.findings:
                first = c.findings[0]
                lines.append(first.message)
                lines.extend(f"{w.file}:{w.line}: {w.text}" for w in first.witnesses)
            failure = "\n".join(lines)
        cases.append(
            JUnitCase(
                name=c.name,
                classname="kconform.logs",
                time_s=0.0,
                failure_message=failure,
                skipped=failure is None and c.status == NOT_OBSERVED,
            )
        )
    return cases


def cmd_check(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.text import Text

    from kconform.traces.logs.checks import check_names
    from kconform.traces.logs.checks.txn import DEFAULT_MAX_TXN_TIMEOUT_MS
    from kconform.traces.logs.excerpt import write_excerpts
    from kconform.traces.logs.reader import InputError
    from kconform.traces.logs.report import input_table, summary_table, write_html, write_json
    from kconform.traces.logs.run import check_paths

    unknown = [n for n in args.checks if n not in check_names()]
    if unknown:
        return user_error(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(check_names())}")
    if args.max_txn_timeout_ms is not None and args.max_txn_timeout_ms <= 0:
        return user_error("--max-txn-timeout-ms must be positive")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return user_error(f"--out {args.out}: {e.strerror or e}")
    try:
        run = check_paths(
            args.paths,
            lenient=args.lenient,
            max_txn_timeout_ms=args.max_txn_timeout_ms or DEFAULT_MAX_TXN_TIMEOUT_MS,
            only=args.checks,
        )
    except InputError as e:
        return user_error(str(e))
    try:
        excerpts = write_excerpts(run.checks, args.out / "excerpts")
    except (InputError, OSError) as e:
        return user_error(f"writing excerpts under {args.out / 'excerpts'}: {e}")
    console = Console()
    console.print(input_table(run))
    console.print(summary_table(run))
    for check in run.checks:
        for note in check.notes:
            console.print(f"{check.name}: {note}", markup=False)
        for index, finding in enumerate(check.findings[:3]):
            # the message quotes the input (partition names, ...): never read as rich markup
            console.print(Text.assemble((check.name, "bold red"), f": {finding.message}"), highlight=False)
            for w in finding.witnesses:
                console.print(f"    {w.file}:{w.line}: {w.text}", highlight=False, markup=False)
            if (check.name, index) in excerpts:
                print(f"    excerpt: kconform logs check {excerpts[(check.name, index)]}", flush=True)
    write_json(run, args.out / "report.json", excerpts)
    write_html(run, args.out / "report.html")
    if args.junit is not None:
        try:
            write_junit(args.junit, "kconform logs check", junit_cases(run))
        except OSError as e:
            return user_error(f"--junit {args.junit}: {e.strerror or e}")
    stats = run.stats
    if stats.problem_count:
        shown = stats.problems[:10]
        for p in shown:
            print(f"{'warning' if run.lenient else 'error'}: {p}", file=sys.stderr)
        if stats.problem_count > len(shown):
            print(f"... and {stats.problem_count - len(shown)} more (report.json)", file=sys.stderr)
    print(f"report: {args.out / 'report.html'}")
    if stats.unreadable:
        for message in stats.unreadable[:10]:
            print(f"error: {message}", file=sys.stderr)
        user_error(
            f"{len(stats.unreadable)} input file(s) could not be read to their end (first: {stats.unreadable[0]}); "
            "no verdict (the report holds what was read)"
        )
    elif run.input_error:
        user_error(
            f"{stats.problem_count} known line(s) did not parse (first: "
            f"{stats.problems[0].file}:{stats.problems[0].line}); "
            "no verdict (use --lenient to count them as warnings)"
        )
    return exit_code(run)


def exit_code(run: Any) -> int:
    """The gate's answer for a finished run: 2 when a file could not be read to its end or (without
    --lenient) a known line did not parse, else 1 when a check is violated, else 0."""
    if run.input_error:
        return EXIT_ERROR
    return EXIT_VIOLATION if run.violations else EXIT_PASS


def cmd_ingest(args: argparse.Namespace) -> int:
    from kconform.traces.logs.ingest import IngestError, check_corpus, write_corpus
    from kconform.traces.logs.reader import InputError

    try:
        summary = write_corpus(args.paths, args.out, lenient=args.lenient)
    except (InputError, IngestError) as e:
        return user_error(str(e))
    print(f"wrote {summary.rows:,} observations from {summary.lines:,} lines to {args.out}")
    if summary.problems and not args.lenient:
        return user_error(
            f"{summary.problems} known line(s) did not parse (first: {summary.first_problem}); use --lenient"
        )
    if args.engine == "none":
        return EXIT_PASS
    try:
        result = check_corpus(args.out, engine=args.engine, master=args.master)
    except IngestError as e:
        return user_error(str(e))
    for name, status, judged, findings in result.rows():
        print(f"{name:48} {status:13} judged={judged:<8} findings={findings}")
    return EXIT_VIOLATION if result.violations else EXIT_PASS
