"""Mining throughput before and after issue 18, side by side: Spark and DuckDB on the same corpora.

Run: ``python -m kconform.ci.benchmarks.mine [--sizes 1000000 10000000 100000000] [--before-up-to N]``.
For each size it generates a corpus (seed 0, reference cluster, no mutants; ``--dir D --reuse`` mines
the corpora already in D, ``--corpus PATH`` mines an existing corpus), then measures, each in a fresh
process so that peak memory is its own (``--engines`` chooses among them):

- ``validate``: the corpus check every ``kconform mine`` runs first (traces.inputs.corpus, pyarrow);
- ``spark-before`` / ``duckdb-before``: the plan as it was (``plan="windows"``: one shuffle by trace,
  window views, the SQL row check, every slice), Spark on ``local[2]``, DuckDB with 2 threads;
- ``spark-sorted`` / ``duckdb``: the sorted plan (``plan="sorted"``, after the corpus check): no
  shuffle of the events, the node state in one vectorised pass per file (Spark: ``mapInArrow``),
  the invariants in each engine's SQL;
- ``spark-tasks`` / ``duckdb-tasks``: the tasks plan (``plan="tasks"``, Spark's default until
  2026-11-27): each corpus file one task that runs the invariants' DuckDB SQL over its whole traces
  (Spark reads them and hands them over through ``mapInArrow``; DuckDB: the chunks in one process);
- ``spark``: the files plan (``plan="files"``, Spark's default): the same tasks, each reading its own
  corpus file with pyarrow; the JVM only schedules them and collects the violations;
- ``duckdb``: DuckDB's default since 2026-11-27, the same files plan in one process, two files at a
  time (two worker threads, one DuckDB thread per chunk, ``--duckdb-memory`` per chunk, spilling to a
  directory under the run's work directory); ``duckdb-sorted``: its default before (one connection
  over the node state of the whole corpus, whose memory grows with the corpus);
- ``spark-no-archive``: ``spark`` with its driver JVM started without the class data sharing
  archive (``KCONFORM_SPARK_CDS=off``), as before 2026-11-27 10:30 UTC;
- ``oracle``: the lockstep judge, on at most ``--oracle-events`` events (its first whole traces).

Before any Spark engine runs, the benchmark makes the class data sharing archive of Spark's driver
JVM if it is missing (traces.mine.jvm_archive, in a process of its own: once per Java and Spark
installation; the run says so and what it cost), so that every measured Spark engine maps it; with
``--before-python`` also the before interpreter's (its Spark installation is another).

``--before-python PY`` also measures ``--before-engines`` (default ``spark duckdb``) with another
interpreter, one whose ``kconform`` is an earlier commit (e.g. a checkout of it with its own virtual
environment): the before and after code side by side in one run, as ``ENGINE@before``.
``--replicate K`` then builds a corpus of K copies of the last corpus' files with fresh trace ids
(ci/benchmarks/replicate.py: how the 100M-event corpus is made from the generated 10M one, since
generating 100M events takes hours here), mines it with the same engines, and checks that every
engine's verdicts on it are exactly K times those on the source (the run says so, and fails if not).

Events/s counts the corpus' events over wall-clock seconds of the engine's work (Spark: from the
first read to the violations on disk; the session start-up is reported apart, its CPU-seconds as
"+ N start-up" in the Spark cells, and the ratio table gives Spark / DuckDB both without and with
it). CPU seconds are the
engine processes' user + system time over the same span (Spark: the JVM, the Python driver and the
Python workers below the JVM), and events per CPU-second are shown beside wall-clock rates because
the machine may be shared: the load average at the end of each measurement is printed with it.
Peak memory is the high-water resident set (``VmHWM``): of the JVM (in local mode driver and
executors), of the largest Python worker, of the Python driver; for DuckDB of its one process.
Ratios and the scaling table (events per CPU-second at a size over the first size's, 1.0 = linear)
are from the same run, and a last table puts issue 18's before and after side by side, one row per
size (``before_after_table``: Spark and DuckDB, the other checkout's figure when ``--before-python``
gave one, else the in-tree before plan). ``--before-up-to N`` runs the before plans only up to N
events (they take about 15 µs of CPU per event). It prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def _peak_rss_mb(pid: int | None = None) -> float:
    """VmHWM of ``pid`` (default: this process) in MiB; 0 if unknown."""
    try:
        text = Path(f"/proc/{pid or 'self'}/status").read_text()
    except OSError:
        return 0.0
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s(pid: int | None = None) -> float:
    """User + system CPU seconds of ``pid`` (default: this process), all threads; 0 if unknown."""
    try:
        fields = Path(f"/proc/{pid or 'self'}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Spark's Python daemon and workers below the JVM). Every thread's
    ``children`` is read: the JVM starts the Python daemon from a thread other than its main one, so
    the main thread's list alone (as read before 2026-11-26 23:20) missed the Python workers' CPU
    and memory."""
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        children: set[int] = set()
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                children.update(int(c) for c in task.read_text().split())
            except OSError:
                continue
        out.extend(sorted(children))
        todo.extend(sorted(children))
    return out


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid``'s descendants, with the children they have waited for."""
    total = 0.0
    for child in _descendants(pid):
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


ENGINES: dict[str, tuple[str, str]] = {
    "validate": ("validate", ""),
    "spark-before": ("spark", "windows"),
    "spark-sorted": ("spark", "sorted"),
    "spark-tasks": ("spark", "tasks"),
    "spark": ("spark", "files"),
    "spark-no-archive": ("spark", "files"),
    "duckdb-before": ("duckdb", "windows"),
    "duckdb": ("duckdb", "files"),
    "duckdb-sorted": ("duckdb", "sorted"),
    "duckdb-tasks": ("duckdb", "tasks"),
    "oracle": ("oracle", ""),
}
"""Benchmark engine → (engine, plan): ``*-before`` is the plan as it was before issue 18 (one
shuffle by trace, window views, the SQL row check, every slice); ``spark-sorted`` the sorted plan
(the node state pass through mapInArrow, the invariants in Spark SQL); ``spark-tasks`` the
``tasks`` plan (each task runs the invariants' DuckDB SQL over the whole traces Spark read from its
file and handed over as Arrow); ``spark`` the default ``files`` plan (each task reads its own file;
the JVM reads no event; its driver JVM maps the class data sharing archive of
traces.mine.jvm_archive, which the benchmark makes first if missing), ``spark-no-archive`` the same
without the archive; ``duckdb`` DuckDB's default files plan (two files at a time),
``duckdb-sorted`` its sorted plan (the default before 2026-11-27), ``duckdb-tasks`` the tasks plan's
chunks in one process. All but the before plans run
after the corpus check (traces.inputs.corpus, timed apart as ``validate``)."""


BEFORE_CONF: dict[str, dict[str, str]] = {
    name: {"spark.driver.extraJavaOptions": "", "spark.executor.extraJavaOptions": ""}
    for name in ("spark-before", "spark-sorted", "spark-tasks")
}
"""The Spark engines measured as they were before 2026-11-27: the JVMs' default Java options
(engine.JVM_OPTIONS since)."""

ENGINE_ENV: dict[str, dict[str, str]] = {"spark-no-archive": {"KCONFORM_SPARK_CDS": "off"}}
"""Environment of an engine's process: ``spark-no-archive`` starts its driver JVM without the class
data sharing archive (traces.mine.jvm_archive), as before 2026-11-27 10:30 UTC."""


def _one(
    engine: str,
    corpus: str,
    oracle_events: int,
    driver_memory: str,
    duckdb_memory: str | None,
    spark_runs: int = 1,
    spill: str | None = None,
) -> dict[str, Any]:
    """Measure one engine on one corpus in this process; returns the figures (Spark: the first run
    on a cold JVM, and with ``spark_runs`` > 1 the last one as ``warm_*``)."""
    from kconform.traces.corpus import read_manifest

    manifest = read_manifest(corpus)
    out: dict[str, Any] = {"engine": engine, "events": manifest.events}
    kind, plan = ENGINES[engine]
    validated = plan != "windows"
    if kind == "spark":
        from kconform.traces.mine.engine import run_spark, spark_context, spark_session

        started, python_cpu = time.perf_counter(), _cpu_s()
        # As `kconform mine` does: the files plan gets a context (Spark SQL only for witnesses),
        # the other plans a session.
        conf = {"spark.driver.memory": driver_memory, **BEFORE_CONF.get(engine, {})}
        spark: Any
        if plan == "files":
            spark = context = spark_context("local[2]", conf, class_archive="use")
        else:
            spark = spark_session("local[2]", conf, class_archive="use")
            context = spark.sparkContext
        try:
            out["startup_s"] = time.perf_counter() - started
            jvm_pid = int(context._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
            cpu = _cpu_s(jvm_pid) + _cpu_s() + _tree_cpu_s(jvm_pid)
            # The session's start-up: everything the JVM (and its children) spent so far, and the
            # Python driver since it asked for the session; reported apart from the mining.
            out["startup_cpu_s"] = cpu - python_cpu
            with tempfile.TemporaryDirectory() as tmp:
                result = run_spark(
                    spark,
                    corpus,
                    manifest,
                    manifest.buckets,
                    out=Path(tmp) / "v.parquet",
                    validated=validated,
                    plan=plan,
                )
                out["cpu_s"] = _cpu_s(jvm_pid) + _cpu_s() + _tree_cpu_s(jvm_pid) - cpu
                for _ in range(spark_runs - 1):
                    cpu = _cpu_s(jvm_pid) + _cpu_s() + _tree_cpu_s(jvm_pid)
                    warm = run_spark(
                        spark,
                        corpus,
                        manifest,
                        manifest.buckets,
                        out=Path(tmp) / "w.parquet",
                        validated=validated,
                        plan=plan,
                    )
                    out.update(
                        warm_seconds=warm.seconds, warm_cpu_s=_cpu_s(jvm_pid) + _cpu_s() + _tree_cpu_s(jvm_pid) - cpu
                    )
            out["jvm_peak_mb"] = _peak_rss_mb(jvm_pid)
            workers = [_peak_rss_mb(p) for p in _descendants(jvm_pid)]
            out["workers_peak_mb"] = max(workers, default=0.0)
            out["workers_peaks_mb"] = [round(w) for w in workers]
        finally:
            spark.stop()
        out.update(seconds=result.seconds, violations=len(result.counts), rows=sum(c[2] for c in result.counts))
    elif kind == "duckdb":
        from kconform.traces.mine.engine import run_duckdb

        cpu = _cpu_s()
        with tempfile.TemporaryDirectory(prefix="duckdb-spill-", dir=spill) as tmp:
            result = run_duckdb(
                corpus,
                manifest,
                manifest.buckets,
                threads=2,
                memory_limit=duckdb_memory,
                validated=validated,
                plan=plan,
                temp_directory=tmp,
            )
        out.update(
            seconds=result.seconds,
            violations=len(result.counts),
            rows=sum(c[2] for c in result.counts),
            cpu_s=_cpu_s() - cpu,
        )
    elif kind == "validate":
        from kconform.traces.inputs.corpus import validate_corpus

        cpu, started = _cpu_s(), time.perf_counter()
        _good, errors = validate_corpus(corpus, manifest)
        out.update(seconds=time.perf_counter() - started, cpu_s=_cpu_s() - cpu, violations=len(errors))
    else:
        from kconform.traces.oracle import run_oracle

        chosen, total = [], 0
        for t in manifest.traces:
            if total >= oracle_events:
                break
            chosen.append(t.trace)
            total += t.events
        cpu = _cpu_s()
        oracle = run_oracle(corpus, manifest, chosen)
        out.update(
            seconds=oracle.seconds, judged_events=oracle.events, violations=len(oracle.flagged), cpu_s=_cpu_s() - cpu
        )
    out["python_peak_mb"] = _peak_rss_mb()
    out["load"] = os.getloadavg()[0]
    return out


def _measure(
    engine: str,
    corpus: Path,
    oracle_events: int,
    driver_memory: str,
    duckdb_memory: str | None,
    spark_runs: int,
    python: str = sys.executable,
    spill: Path | None = None,
) -> dict[str, Any]:
    """``engine`` on ``corpus`` in a fresh process of ``python`` (another interpreter: the before code)."""
    run = subprocess.run(
        [
            python,
            "-m",
            "kconform.ci.benchmarks.mine",
            "--one",
            engine,
            "--one-corpus",
            str(corpus),
            "--oracle-events",
            str(oracle_events),
            "--driver-memory",
            driver_memory,
            "--spark-runs",
            str(spark_runs),
            *(["--duckdb-memory", duckdb_memory] if duckdb_memory else []),
            *(["--spill-dir", str(spill)] if spill is not None and python == sys.executable else []),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **ENGINE_ENV.get(engine, {})},
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    if run.returncode != 0 or not lines:
        raise RuntimeError(f"{engine} on {corpus} failed:\n{run.stdout}\n{run.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _rate(figures: dict[str, dict[str, Any]], engine: str) -> float:
    """Events per second of ``engine`` (0 when it was not measured)."""
    f = figures.get(engine)
    if not f:
        return 0.0
    return float(f.get("judged_events", f["events"])) / float(f["seconds"])


def _cpu_rate(figures: dict[str, dict[str, Any]], engine: str) -> float:
    """Events per CPU-second of ``engine`` (0 when it was not measured)."""
    f = figures.get(engine)
    if not f or not f.get("cpu_s"):
        return 0.0
    return float(f.get("judged_events", f["events"])) / float(f["cpu_s"])


def _gib(mb: float) -> str:
    return f"{mb / 1024:.1f} GiB" if mb else "-"


def _cell(figures: dict[str, dict[str, Any]], engine: str) -> str:
    """Events/s (events per CPU-second), then the CPU-seconds, and Spark's start-up CPU-seconds."""
    rate = _rate(figures, engine)
    if not rate:
        return "-"
    f = figures[engine]
    startup = f" + {f['startup_cpu_s']:.1f} start-up" if "startup_cpu_s" in f else ""
    return f"{rate:,.0f} ({_cpu_rate(figures, engine):,.0f}; {f.get('cpu_s', 0):.1f} CPU-s{startup})"


def _ratio(figures: dict[str, dict[str, Any]], top: str, bottom: str) -> str:
    """``top``'s events per CPU-second over ``bottom``'s (wall-clock ratio in brackets)."""
    a, b = _cpu_rate(figures, top), _cpu_rate(figures, bottom)
    if not a or not b:
        return "-"
    return f"{a / b:.2f} ({_rate(figures, top) / _rate(figures, bottom):.2f})"


def before_after_table(runs: list[tuple[int, dict[str, dict[str, Any]]]]) -> Table:
    """Issue 18's before / after, side by side: one row per corpus size, for Spark and for DuckDB
    the before figure, the after figure (the engine's default plan, ``spark`` / ``duckdb``) and
    after over before, each as events/s with events per CPU-second in brackets. The before figure
    is the other checkout's (``ENGINE@before``, ``--before-python``) when it was measured, else the
    plan as it was before issue 18 in this code (``ENGINE-before``); the cell names which. A pair
    not measured at a size shows "-"."""
    table = Table(
        title="before / after issue 18, side by side: events/s (events per CPU-second); "
        "after / before by CPU (by wall clock)"
    )
    table.add_column("events", justify="right")
    for engine in ("Spark", "DuckDB"):
        for column in ("before", "after", "after / before"):
            table.add_column(f"{engine} {column}", justify="right")
    for events, figures in runs:
        cells = [f"{events:,}"]
        for engine in ("spark", "duckdb"):
            before = next((b for b in (f"{engine}@before", f"{engine}-before") if b in figures), "")
            after = engine if engine in figures else ""
            for label in (before, after):
                cell = f"{_rate(figures, label):,.0f} ({_cpu_rate(figures, label):,.0f})" if label else "-"
                cells.append(escape(f"{cell} [{label}]") if label == before and label else cell)
            cells.append(_ratio(figures, after, before) if before and after else "-")
        table.add_row(*cells)
    return table


def _ratio_with_startup(figures: dict[str, dict[str, Any]], top: str, bottom: str) -> str:
    """As ``_ratio``, with each engine's start-up (Spark's session) added to its CPU-seconds and
    wall-clock seconds."""
    a, b = figures.get(top), figures.get(bottom)
    if not a or not b or not a.get("cpu_s") or not b.get("cpu_s"):
        return "-"
    cpu = (a["cpu_s"] + a.get("startup_cpu_s", 0.0)) / (b["cpu_s"] + b.get("startup_cpu_s", 0.0))
    wall = (a["seconds"] + a.get("startup_s", 0.0)) / (b["seconds"] + b.get("startup_s", 0.0))
    return f"{cpu:.2f} ({wall:.2f})"


def prepare_archive(python: str = sys.executable) -> str:
    """Make the class data sharing archive of Spark's driver JVM (traces.mine.jvm_archive) if it is
    missing, in a process of ``python`` (a session, a one-task job, its exit), so that every measured
    Spark engine of that interpreter starts with it; says what it did. The archive is per Java and
    Spark installation, so ``--before-python``'s own installation gets its own (else the before
    side's Spark would start without one, silently: the library only maps an existing archive)."""
    from kconform.traces.mine import jvm_archive

    if jvm_archive.mode("auto") != "auto":
        return f"class data sharing archive: KCONFORM_SPARK_CDS={os.environ.get('KCONFORM_SPARK_CDS')}"
    code = (
        "from kconform.traces.mine.engine import spark_session\n"
        "s = spark_session('local[2]', class_archive='auto')\n"
        "s.sparkContext.parallelize(range(2), 2).count()\n"
        "s.stop()\n"
        "from kconform.traces.mine import jvm_archive\n"
        "print('made' if jvm_archive._pending is not None else 'present')\n"
    )
    started = time.perf_counter()
    before = os.times()
    run = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False, timeout=900)
    after = os.times()
    cpu = after.children_user + after.children_system - before.children_user - before.children_system
    what = (run.stdout.strip().splitlines() or ["failed"])[-1]
    if run.returncode != 0:
        return f"class data sharing archive: the run that makes it failed ({run.stderr.strip()[-300:]})"
    if what == "present":
        return f"class data sharing archive: present in {jvm_archive.cache_dir()}"
    return (
        f"class data sharing archive: made in {jvm_archive.cache_dir()} in {time.perf_counter() - started:.1f} s, "
        f"{cpu:.1f} CPU-s (a session, one job, the dump at exit; once per Java and Spark installation)"
    )


DEFAULT_SIZES = (1_000_000, 10_000_000, 100_000_000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(DEFAULT_SIZES))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--oracle-events", type=int, default=1_000_000, help="events the oracle judges at most")
    parser.add_argument(
        "--engines",
        nargs="+",
        default=["validate", "spark-before", "spark-tasks", "spark", "duckdb-before", "duckdb"],
        choices=list(ENGINES),
    )
    parser.add_argument(
        "--before-up-to",
        type=int,
        default=None,
        metavar="N",
        help="run the before plans only on corpora of at most N events (default: on every corpus)",
    )
    parser.add_argument(
        "--oracle-up-to",
        type=int,
        default=None,
        metavar="N",
        help="run the oracle only on corpora of at most N events (default: on every corpus, sampled)",
    )
    parser.add_argument("--dir", type=Path, default=None, help="where corpora go (default: a temporary directory)")
    parser.add_argument("--reuse", action="store_true", help="mine corpora already in --dir instead of regenerating")
    parser.add_argument(
        "--corpus",
        dest="corpora",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="also mine this existing corpus, after the --sizes ones (repeatable)",
    )
    parser.add_argument("--driver-memory", default="3g", help="spark.driver.memory (default: %(default)s)")
    parser.add_argument(
        "--spark-runs",
        type=int,
        default=1,
        metavar="N",
        help="mine N times in one Spark session; the table adds the last (warm JVM) run (default: 1)",
    )
    parser.add_argument(
        "--duckdb-memory",
        default="1GB",
        help="DuckDB memory_limit: per chunk in the files plan, of the one connection in the others "
        "(default: %(default)s)",
    )
    parser.add_argument("--before-python", default=None, metavar="PY", help="the interpreter of the before code")
    parser.add_argument("--before-label", default="", help="what the before code is (a commit), for the output")
    parser.add_argument("--before-engines", nargs="+", default=["spark", "duckdb"], choices=list(ENGINES))
    parser.add_argument(
        "--replicate", type=int, default=0, metavar="K", help="also mine K copies of the last corpus (fresh trace ids)"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--one-corpus", help=argparse.SUPPRESS)
    parser.add_argument("--spill-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(
            json.dumps(
                _one(
                    args.one,
                    args.one_corpus,
                    args.oracle_events,
                    args.driver_memory,
                    args.duckdb_memory,
                    args.spark_runs,
                    args.spill_dir,
                )
            )
        )
        return 0

    from kconform.ci.benchmarks.replicate import replicate_corpus
    from kconform.traces.corpus import read_manifest
    from kconform.traces.generate import Plan, generate

    console = Console(width=max(Console().width, 200))
    console.print(
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}"
    )
    if any(ENGINES[e][0] == "spark" for e in args.engines):
        console.print(prepare_archive())
    base = args.dir or Path(tempfile.mkdtemp(prefix="kconform-bench-"))
    spill = base / "spill"
    spill.mkdir(parents=True, exist_ok=True)
    if args.before_python:
        console.print(f"before: {args.before_label or args.before_python} ({', '.join(args.before_engines)})")
        if any(ENGINES[e][0] == "spark" for e in args.before_engines):
            console.print(f"before: {prepare_archive(args.before_python)}")
    corpora: list[tuple[Path, float]] = []
    for size in args.sizes:
        corpus = base / f"corpus-{size}"
        if args.reuse and (corpus / "manifest.json").exists():
            corpora.append((corpus, 0.0))  # same seed and plan: the same corpus
        else:
            result = generate(corpus, Plan(events=size, seed=0), workers=args.workers)
            console.print(
                f"generated {result.manifest.events:,} events in {result.seconds:.1f} s "
                f"({result.events_per_second:,.0f} ev/s)"
            )
            corpora.append((corpus, result.events_per_second))
    corpora.extend((path, 0.0) for path in args.corpora)
    runs: list[tuple[int, dict[str, dict[str, Any]]]] = []
    notes: list[str] = []
    scaled_ok = True

    def mine_all(corpus: Path) -> dict[str, dict[str, Any]]:
        manifest = read_manifest(corpus)
        figures: dict[str, dict[str, Any]] = {}
        chosen = [(e, sys.executable, e) for e in args.engines]
        if args.before_python:
            chosen += [(e, args.before_python, f"{e}@before") for e in args.before_engines]
        for engine, python, label in chosen:
            if engine == "oracle" and args.oracle_up_to is not None and manifest.events > args.oracle_up_to:
                continue
            before = engine.endswith("-before") or label.endswith("@before")
            if before and args.before_up_to is not None and manifest.events > args.before_up_to:
                continue
            figures[label] = _measure(
                engine,
                corpus,
                args.oracle_events,
                args.driver_memory,
                None if python != sys.executable else args.duckdb_memory,  # the before code as it ran
                args.spark_runs,
                python,
                spill,
            )
            console.print(json.dumps({"label": label, **figures[label]}))
        runs.append((manifest.events, figures))
        return figures

    for corpus, gen_rate in corpora:
        mine_all(corpus)
        if gen_rate:
            notes.append(f"{runs[-1][0]:,} events generated at {gen_rate:,.0f} events/s")
    if args.replicate and corpora:
        source, source_figures = corpora[-1][0], runs[-1][1]
        target = base / f"{source.name}-x{args.replicate}"
        if not (args.reuse and (target / "manifest.json").exists()):
            started = time.perf_counter()
            replica = replicate_corpus(source, target, args.replicate)
            console.print(
                f"replicated {source} x{args.replicate}: {replica.events:,} events in "
                f"{time.perf_counter() - started:.1f} s"
            )
        figures = mine_all(target)
        for label, f in figures.items():
            if label not in source_figures or "violations" not in f:
                continue
            want = {k: args.replicate * source_figures[label][k] for k in ("violations", "rows") if k in f}
            got = {k: f[k] for k in want}
            scaled_ok &= got == want
            notes.append(
                f"{label}: verdicts on the copies {got}, {args.replicate} x the source's {want}: "
                + ("exact" if got == want else "NOT EXACT")
            )
        notes.insert(
            0,
            f"{runs[-1][0]:,} events: {args.replicate} copies of the {runs[-2][0]:,}-event corpus "
            "with fresh trace ids (ci/benchmarks/replicate.py), not generated",
        )
    table = Table(
        title="mining throughput, before / after issue 18 (each engine a fresh process; CPU-s: its processes' "
        "user + system time; Spark's start-up apart)"
    )
    for column in (
        "events",
        "engine",
        "wall s",
        "events/s",
        "CPU-s",
        "events per CPU-s",
        "peak RSS",
        "flagged",
        "load",
    ):
        table.add_column(column, justify="right")
    for events, figures in runs:
        for label, f in figures.items():
            startup = f" + {f['startup_cpu_s']:.1f} start-up" if "startup_cpu_s" in f else ""
            if "jvm_peak_mb" in f:
                workers = " + ".join(_gib(w) for w in f.get("workers_peaks_mb", [])) or _gib(f["workers_peak_mb"])
                rss = f"JVM {_gib(f['jvm_peak_mb'])}, Python workers {workers}, driver {_gib(f['python_peak_mb'])}"
            else:
                rss = _gib(f.get("python_peak_mb", 0))
            table.add_row(
                f"{events:,}",
                label,
                f"{f['seconds']:.1f}",
                f"{_rate(figures, label):,.0f}",
                f"{f.get('cpu_s', 0):.1f}{startup}",
                f"{_cpu_rate(figures, label):,.0f}",
                rss,
                str(f.get("violations", "-")),
                f"{f['load']:.1f}",
            )
    console.print(table)
    ratios = Table(title="ratios in this run, by CPU-seconds (by wall clock in brackets)")
    pairs = [
        ("spark", "duckdb"),
        ("spark@before", "duckdb@before"),
        ("spark", "spark@before"),
        ("duckdb", "duckdb@before"),
        ("spark", "spark-before"),
        ("duckdb", "duckdb-before"),
        ("duckdb", "duckdb-sorted"),
        ("spark", "spark-tasks"),
        ("spark", "spark-no-archive"),
    ]
    startup_pairs = [("spark", "duckdb"), ("spark-no-archive", "duckdb"), ("spark@before", "duckdb@before")]
    columns: list[tuple[str, list[str]]] = []
    for top, bottom in pairs:
        cross = top.startswith("spark") and bottom.startswith("duckdb")
        # Across engines: how many times DuckDB's rate Spark's is, i.e. Spark's cost over DuckDB's.
        cells = [_ratio(f, bottom, top) if cross else _ratio(f, top, bottom) for _events, f in runs]
        columns.append((f"{top} cost / {bottom} cost" if cross else f"{top} speed-up over {bottom}", cells))
    for top, bottom in startup_pairs:
        cells = [_ratio_with_startup(f, top, bottom) for _events, f in runs]
        columns.append((f"{top} cost / {bottom} cost, Spark's start-up counted", cells))
    columns = [(name, cells) for name, cells in columns if any(c != "-" for c in cells)]
    ratios.add_column("events", justify="right")
    for name, _cells in columns:
        ratios.add_column(name, justify="right")
    for i, (events, _figures) in enumerate(runs):
        ratios.add_row(f"{events:,}", *(cells[i] for _name, cells in columns))
    console.print(ratios)
    console.print(before_after_table(runs))
    if len(runs) > 1:
        scaling = Table(title=f"scaling: events per CPU-second at each size / at {runs[0][0]:,} events (1.0 = linear)")
        scaling.add_column("events", justify="right")
        labels = list(dict.fromkeys(label for _events, figures in runs for label in figures))
        for label in labels:
            scaling.add_column(label, justify="right")
        first = runs[0][1]
        for events, figures in runs[1:]:
            cells = []
            for label in labels:
                base_rate, rate = _cpu_rate(first, label), _cpu_rate(figures, label)
                cells.append(f"{rate / base_rate:.2f}" if base_rate and rate else "-")
            scaling.add_row(f"{events:,}", *cells)
        console.print(scaling)
    for note in notes:
        console.print(note)
    if not scaled_ok:
        console.print("the verdicts on the copies are not exactly the copies' count times the source's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
