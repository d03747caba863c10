"""``kconform mine CORPUS``: every stream invariant of kconform.traces.mine as a Spark job.

Reads the manifest and checks the whole corpus without any engine (kconform.traces.inputs.corpus:
content hashes, footers, schema, every row; any problem: exit 2 before Spark starts), mines it on
the Spark master given (default ``local[*]``), writes ``OUT/violations.parquet`` (invariant, trace,
positions, witness events), ``OUT/report.json`` and, with ``--excerpts N``, a JSON Lines
counterexample excerpt per flagged trace (``kconform replay FILE --model-only`` judges it), and
prints the summary table. Exit codes as the gate: 0 none, 1 violations, 2 unreadable input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from kconform.ci.exitcodes import user_error

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


def engine_failure(engine: str, exc: BaseException) -> str:
    """One readable line for an engine failure: the engine, the corpus file the message names (if
    any), and the first line of the error without the Java stack trace."""
    text = str(exc)
    java = re.search(r"(?m)^((?:[a-z]+\.)+[A-Za-z]*(?:Exception|Error)[^\n]*)", text)
    first = (java.group(1) if java else text.strip().splitlines()[0] if text.strip() else type(exc).__name__)[:300]
    path = re.search(r"(file:)?(/[^\s,:'\"]+\.parquet)", text)
    where = f" reading {path.group(2)}" if path else ""
    return f"{engine} failed{where}: {type(exc).__name__}: {first}"


def selection_problem(selected: list[str], manifest: Any) -> str | None:
    """Why an ``--invariant`` selection would check nothing in this corpus (None: it fits).

    A mined invariant reads the events of its own slice only (the miner's registry,
    traces.mine.invariants.SLICES, holds one module per slice, named after it), so an invariant
    of a slice no trace of the corpus belongs to would run and find nothing: a vacuous pass. Each
    selected invariant must fit the slice of at least one trace; the default (every invariant)
    always fits."""
    from kconform.model.configs import slice_of
    from kconform.traces.mine.invariants import SLICES

    if not selected:
        return None
    slice_by_invariant = {inv.name: m.__name__.rsplit(".", 1)[-1] for m in SLICES for inv in m.INVARIANTS}
    present = {slice_of(t.configuration()) for t in manifest.traces}
    unfit = [n for n in dict.fromkeys(selected) if slice_by_invariant.get(n) not in present]
    if not unfit:
        return None
    named = ", ".join(f"{n} ({slice_by_invariant.get(n)} slice)" for n in unfit)
    return (
        f"--invariant {named}: no trace of this corpus belongs to that slice (its traces: "
        f"{', '.join(sorted(present)) or 'none'}), so nothing would be checked; choose invariants of "
        f"{' or '.join(sorted(present)) or 'a slice it holds'}"
    )


def cmd_mine(args: argparse.Namespace) -> int:
    from rich.console import Console

    from kconform.traces.corpus import CorpusError, read_manifest
    from kconform.traces.inputs.corpus import validate_corpus
    from kconform.traces.mine.invariants import INVARIANTS
    from kconform.traces.mine.report import MineReport, write_excerpts

    unknown = [n for n in args.invariants if n not in INVARIANTS]
    if unknown:
        return user_error(f"unknown invariant {unknown[0]!r}; known invariants: {', '.join(INVARIANTS)}")
    if args.excerpts < 0:
        return user_error("--excerpts must be >= 0")
    malformed = [c for c in args.spark_conf if "=" not in c or not c.partition("=")[0].strip()]
    if malformed:
        return user_error(f"--conf {malformed[0]!r}: expected KEY=VALUE")
    spark_conf = {key.strip(): value for key, _, value in (c.partition("=") for c in args.spark_conf)}
    if args.out.exists() and not args.out.is_dir():
        return user_error(f"--out {args.out}: exists and is not a directory")
    try:
        manifest = read_manifest(args.corpus)
    except CorpusError as e:
        return user_error(str(e))
    unfit = selection_problem(args.invariants, manifest)
    if unfit:
        return user_error(f"{args.corpus}: {unfit}")
    waiting = [t.trace for t in manifest.traces if getattr(t.configuration(), "delayed_fetch", False)]
    if waiting:
        return user_error(
            f"{args.corpus}: trace {waiting[0]} (and {len(waiting) - 1} more) was generated with waiting fetches "
            "(replica_fetch_wait_max_ms / fetch_max_wait_ms > 0); the miner does not read delayed-fetch events yet "
            "(docs/traces.md): check it with the oracle. Nothing was mined"
        )
    console = Console()
    started = time.perf_counter()
    good, errors = validate_corpus(args.corpus, manifest)
    if errors:
        for error in errors:
            print(f"kconform: error: {error}", file=sys.stderr)
        bad = len(set(manifest.buckets) - set(good))
        return user_error(
            f"{args.corpus}: refused before mining ({len(errors)} problem(s), {bad} of {len(manifest.buckets)} "
            f"bucket(s); checked in {time.perf_counter() - started:.1f} s): nothing was mined"
        )
    unchecked: list[int] = []
    args.out.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys(args.invariants)) or None
    from kconform.traces.mine import engine

    with console.status(f"mining {manifest.events:,} events with {args.engine} ({args.master})"):
        try:
            if args.engine == "duckdb":
                # One worker per core, each mining one corpus file at a time (bounded memory); a
                # chunk's DuckDB spills past its memory limit under the output directory.
                result = engine.run_duckdb(
                    args.corpus,
                    manifest,
                    good,
                    names,
                    threads=os.cpu_count() or 1,
                    validated=True,
                    temp_directory=args.out / "duckdb-spill",
                )
            else:
                # The first run of a Java and Spark installation saves the driver's classes as it
                # exits (traces.mine.jvm_archive), for later runs to start in half the CPU. A context,
                # not a session: the files plan starts Spark SQL only for violations' witnesses.
                spark = engine.spark_context(args.master, spark_conf, class_archive="auto")
                out = args.out / "violations.parquet"
                result = engine.run_spark(spark, args.corpus, manifest, good, names, out=out, validated=True)
        except Exception as e:  # an engine failure the checks above could not foresee: one line, exit 2
            return user_error(engine_failure(args.engine, e))
    if args.engine == "duckdb":
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
