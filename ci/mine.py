"""``kconform mine CORPUS``: every stream invariant of kconform.traces.mine as a Spark job.

Reads the manifest, checks every bucket file's footer and schema, mines the readable ones on the
Spark master given (default ``local[*]``), writes ``OUT/violations.parquet`` (invariant, trace,
positions, witness events), ``OUT/report.json`` and, with ``--excerpts N``, a JSON Lines
counterexample excerpt per flagged trace (``kconform replay FILE --model-only`` judges it), and
prints the summary table. Exit codes as the gate: 0 none, 1 violations, 2 unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kconform.ci.exitcodes import EXIT_ERROR

DEFAULT_OUT = Path("kconform-mine")


def add_parser(commands: Any) -> None:
    """Register ``mine`` on the ``kconform`` sub-command parser."""
    mine = commands.add_parser(
        "mine",
        help="check every stream invariant over a trace corpus with Spark (exit 0 none, 1 violations, 2 error)",
        description="Run the miner's invariants (window functions, joins and aggregations per trace) over a "
        "Parquet corpus written by 'kconform generate' or 'kconform convert'.",
    )
    mine.add_argument("corpus", type=Path, metavar="CORPUS")
    mine.add_argument("--master", default="local[*]", help="Spark master URL (default: %(default)s)")
    mine.add_argument(
        "--conf",
        dest="spark_conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting on top of the miner's defaults, e.g. spark.driver.memory=8g (repeatable)",
    )
    mine.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help="output directory (default: %(default)s)"
    )
    mine.add_argument(
        "--invariant",
        dest="invariants",
        action="append",
        default=[],
        metavar="NAME",
        help="check only this invariant (repeatable; default: all)",
    )
    mine.add_argument(
        "--excerpts",
        type=int,
        default=0,
        metavar="N",
        help="write a replayable JSON Lines excerpt for the first N flagged traces",
    )
    mine.add_argument(
        "--engine",
        choices=("spark", "duckdb"),
        default="spark",
        help="spark (default) or duckdb (same SQL, one machine)",
    )
    mine.set_defaults(handler=cmd_mine)


def _error(message: str) -> int:
    print(f"kconform: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def cmd_mine(args: argparse.Namespace) -> int:
    from rich.console import Console

    from kconform.traces.corpus import CorpusError, check_corpus_files, read_manifest
    from kconform.traces.mine.invariants import INVARIANTS
    from kconform.traces.mine.report import MineReport, write_excerpts

    unknown = [n for n in args.invariants if n not in INVARIANTS]
    if unknown:
        return _error(f"unknown invariant {unknown[0]!r}; known invariants: {', '.join(INVARIANTS)}")
    if args.excerpts < 0:
        return _error("--excerpts must be >= 0")
    malformed = [c for c in args.spark_conf if "=" not in c or not c.partition("=")[0].strip()]
    if malformed:
        return _error(f"--conf {malformed[0]!r}: expected KEY=VALUE")
    spark_conf = {key.strip(): value for key, _, value in (c.partition("=") for c in args.spark_conf)}
    if args.out.exists() and not args.out.is_dir():
        return _error(f"--out {args.out}: exists and is not a directory")
    try:
        manifest = read_manifest(args.corpus)
    except CorpusError as e:
        return _error(str(e))
    console = Console()
    good, errors = check_corpus_files(args.corpus, manifest)
    bad_buckets = set(manifest.buckets) - set(good)
    unchecked = [t.trace for t in manifest.traces if t.bucket in bad_buckets]
    for error in errors:
        console.print(f"[yellow]kconform: unreadable, skipped: {error}[/yellow]")
    args.out.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys(args.invariants)) or None
    from kconform.traces.mine import engine

    with console.status(f"mining {manifest.events:,} events with {args.engine} ({args.master})"):
        if not good:
            result = engine.EngineResult(engine._empty_violations())
        elif args.engine == "duckdb":
            result = engine.run_duckdb(args.corpus, manifest, good, names)
        else:
            spark = engine.spark_session(args.master, spark_conf)
            result = engine.run_spark(spark, args.corpus, manifest, good, names, out=args.out / "violations.parquet")
    if args.engine == "duckdb" or not good:
        import pyarrow.parquet as pq

        pq.write_table(result.violations, args.out / "violations.parquet")
    bad_traces = sorted({t for t, _p, _k in result.bad_rows})
    row_errors = [
        f"{args.corpus}: trace {t} position {p}: not a valid {k!r} event (unknown kind or a required field is null)"
        for t, p, k in result.bad_rows[:20]
    ]
    report = MineReport(
        corpus=str(args.corpus),
        engine=f"{args.engine} {args.master}" if args.engine == "spark" else "duckdb",
        events=result.events,
        traces=sum(1 for t in manifest.traces if t.bucket in set(good)) - len(bad_traces),
        seconds=result.seconds,
        counts=result.counts,
        errors=[str(e) for e in errors] + row_errors,
        unchecked=sorted(unchecked + bad_traces),
        planted=manifest.planted(),
    )
    if args.excerpts:
        paths, excerpt_errors = write_excerpts(args.corpus, manifest, report, args.out, args.excerpts)
        report.errors.extend(excerpt_errors)
        for path in paths:
            console.print(f"excerpt: {path}  (kconform replay {path} --model-only)")
    (args.out / "report.json").write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    console.print(report.table())
    for message in row_errors:
        console.print(f"[yellow]kconform: {message}[/yellow]")
    console.print(f"violations: {args.out / 'violations.parquet'}; report: {args.out / 'report.json'}")
    return report.exit_code()
