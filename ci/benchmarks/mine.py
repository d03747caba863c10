"""Mining throughput: the Spark miner, the single-process oracle and DuckDB on the same corpora.

Run: ``python -m kconform.ci.benchmarks.mine [--sizes 1000000 10000000] [--workers 2]``. For each size
it generates a corpus (seed 0, reference cluster, no mutants; ``--dir D --reuse`` mines the corpora
already in D, ``--corpus PATH`` mines an existing corpus such as a 100M-event one), then measures,
each in a fresh process so that peak memory is its own:

- the Spark miner on ``local[2]`` (every invariant, violations written as in ``kconform mine``);
- DuckDB running the same SQL text on the same Parquet files (2 threads);
- the oracle (lockstep judge over every trace), on at most ``--oracle-events`` events of the corpus
  (its first whole traces): on a larger corpus its figure is measured on that sample, and the
  table says so. Nothing is extrapolated.

Events/s counts the corpus' events over wall-clock seconds of the engine's work (Spark: from the
first read to the violations on disk; the session start-up is reported apart). CPU seconds are the
engine processes' user + system time over the same span (JVM and Python driver for Spark), and
events per CPU-second are shown beside wall-clock rates because the machine may be shared: the load
average at the end of each measurement is printed with it. Peak memory is the high-water resident
set (``VmHWM``): for Spark of the JVM, which in local mode is the driver and the executors, and of
the Python driver; for DuckDB and the oracle of their one process. Ratios (Spark / DuckDB, Spark /
oracle, and the scaling ratio: an engine's events/s at a size over its events/s at the first size,
1.0 = linear) are from the same run. It prints numbers; it asserts nothing.
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


def _one(
    engine: str, corpus: str, oracle_events: int, driver_memory: str, duckdb_memory: str | None, spark_runs: int = 1
) -> dict[str, Any]:
    """Measure one engine on one corpus in this process; returns the figures (Spark: the first run
    on a cold JVM, and with ``spark_runs`` > 1 the last one as ``warm_*``)."""
    from kconform.traces.corpus import read_manifest

    manifest = read_manifest(corpus)
    out: dict[str, Any] = {"engine": engine, "events": manifest.events}
    if engine == "spark":
        from kconform.traces.mine.engine import run_spark, spark_session

        started = time.perf_counter()
        spark = spark_session("local[2]", {"spark.driver.memory": driver_memory})
        out["startup_s"] = time.perf_counter() - started
        jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
        cpu = _cpu_s(jvm_pid) + _cpu_s()
        with tempfile.TemporaryDirectory() as tmp:
            result = run_spark(spark, corpus, manifest, manifest.buckets, out=Path(tmp) / "v.parquet")
            out["cpu_s"] = _cpu_s(jvm_pid) + _cpu_s() - cpu
            for _ in range(spark_runs - 1):
                cpu = _cpu_s(jvm_pid) + _cpu_s()
                warm = run_spark(spark, corpus, manifest, manifest.buckets, out=Path(tmp) / "w.parquet")
                out.update(warm_seconds=warm.seconds, warm_cpu_s=_cpu_s(jvm_pid) + _cpu_s() - cpu)
        out["jvm_peak_mb"] = _peak_rss_mb(jvm_pid)
        spark.stop()
        out.update(seconds=result.seconds, violations=len(result.counts))
    elif engine == "duckdb":
        from kconform.traces.mine.engine import run_duckdb

        cpu = _cpu_s()
        result = run_duckdb(corpus, manifest, manifest.buckets, threads=2, memory_limit=duckdb_memory)
        out.update(seconds=result.seconds, violations=len(result.counts), cpu_s=_cpu_s() - cpu)
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
    engine: str, corpus: Path, oracle_events: int, driver_memory: str, duckdb_memory: str | None, spark_runs: int
) -> dict[str, Any]:
    run = subprocess.run(
        [
            sys.executable,
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
        ],
        capture_output=True,
        text=True,
        check=False,
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000_000, 10_000_000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--oracle-events", type=int, default=1_000_000, help="events the oracle judges at most")
    parser.add_argument("--engines", nargs="+", default=["spark", "duckdb", "oracle"])
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
    parser.add_argument("--duckdb-memory", default=None, help="DuckDB memory_limit, e.g. 6GB (default: DuckDB's)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--one-corpus", help=argparse.SUPPRESS)
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
                )
            )
        )
        return 0

    from kconform.traces.corpus import read_manifest
    from kconform.traces.generate import Plan, generate

    console = Console(width=max(Console().width, 150))
    console.print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    base = args.dir or Path(tempfile.mkdtemp(prefix="kconform-bench-"))
    table = Table(title="mining throughput (events/s over wall-clock seconds; events per CPU-second in brackets)")
    for column in (
        "events",
        "generate ev/s",
        "spark ev/s",
        "spark warm ev/s",
        "spark start-up s",
        "spark peak RSS: JVM (driver + executors) / Python driver",
        "duckdb ev/s",
        "duckdb peak RSS",
        "oracle ev/s",
        "oracle peak RSS",
        "spark / duckdb",
        "spark / oracle",
        "load",
    ):
        table.add_column(column, justify="right")
    runs: list[tuple[int, dict[str, dict[str, Any]]]] = []
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
    for corpus, gen_rate in corpora:
        manifest = read_manifest(corpus)
        figures: dict[str, dict[str, Any]] = {}
        for engine in args.engines:
            if engine == "oracle" and args.oracle_up_to is not None and manifest.events > args.oracle_up_to:
                continue
            figures[engine] = _measure(
                engine, corpus, args.oracle_events, args.driver_memory, args.duckdb_memory, args.spark_runs
            )
            console.print(json.dumps(figures[engine]))
        runs.append((manifest.events, figures))
        spark, duck, oracle = (_rate(figures, e) for e in ("spark", "duckdb", "oracle"))
        oracle_note = ""
        if "oracle" in figures and figures["oracle"]["judged_events"] < figures["oracle"]["events"]:
            oracle_note = f", measured on a sample of {figures['oracle']['judged_events']:,} events"
        sf = figures.get("spark", {})
        table.add_row(
            f"{manifest.events:,}",
            f"{gen_rate:,.0f}" if gen_rate else "(reused)",
            f"{spark:,.0f} ({_cpu_rate(figures, 'spark'):,.0f})" if spark else "-",
            (
                f"{manifest.events / sf['warm_seconds']:,.0f} ({manifest.events / sf['warm_cpu_s']:,.0f})"
                if sf.get("warm_cpu_s")
                else "-"
            ),
            f"{sf['startup_s']:.1f}" if sf else "-",
            f"{_gib(sf.get('jvm_peak_mb', 0))} / {_gib(sf.get('python_peak_mb', 0))}" if sf else "-",
            f"{duck:,.0f} ({_cpu_rate(figures, 'duckdb'):,.0f})" if duck else "-",
            _gib(figures.get("duckdb", {}).get("python_peak_mb", 0)),
            f"{oracle:,.0f} ({_cpu_rate(figures, 'oracle'):,.0f}){oracle_note}" if oracle else "-",
            _gib(figures.get("oracle", {}).get("python_peak_mb", 0)),
            f"{spark / duck:.2f}" if spark and duck else "-",
            f"{spark / oracle:.1f}" if spark and oracle else "-",
            " ".join(f"{f['load']:.1f}" for f in figures.values()),
        )
    console.print(table)
    if len(runs) > 1:
        scaling = Table(title=f"scaling: events/s at each size / events/s at {runs[0][0]:,} events (1.0 = linear)")
        scaling.add_column("events", justify="right")
        for engine in args.engines:
            scaling.add_column(engine, justify="right")
        first = runs[0][1]
        for events, figures in runs[1:]:
            cells = []
            for engine in args.engines:
                base_rate, rate = _rate(first, engine), _rate(figures, engine)
                cells.append(f"{rate / base_rate:.2f}" if base_rate and rate else "-")
            scaling.add_row(f"{events:,}", *cells)
        console.print(scaling)
    return 0


if __name__ == "__main__":
    sys.exit(main())
