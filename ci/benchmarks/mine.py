"""Mining throughput: the Spark miner, the single-process oracle and DuckDB on the same corpora.

Run: ``python -m kconform.ci.benchmarks.mine [--sizes 1000000 10000000] [--workers 2]``. For each size
it generates a corpus (seed 0, reference cluster, no mutants), then measures, each in a fresh
process so that peak memory is its own:

- the Spark miner on ``local[2]`` (every invariant, violations written as in ``kconform mine``);
- DuckDB running the same SQL text on the same Parquet files (2 threads);
- the oracle (lockstep judge over every trace), on at most ``--oracle-events`` events of the corpus
  (whole traces); beyond that its rate is extrapolated, and the table says so.

Events/s counts the corpus' events over wall-clock seconds of the engine's work (Spark: from the
first read to the violations on disk, the session start-up is reported apart). Peak memory is
the high-water resident set (``VmHWM``) of the process, and for Spark of the JVM that holds the
driver and, in local mode, the executors. Ratios are from the same run. It prints numbers; it
asserts nothing.
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


def _one(engine: str, corpus: str, oracle_events: int) -> dict[str, Any]:
    """Measure one engine on one corpus in this process; returns the figures."""
    from kconform.traces.corpus import read_manifest

    manifest = read_manifest(corpus)
    out: dict[str, Any] = {"engine": engine, "events": manifest.events}
    if engine == "spark":
        from kconform.traces.mine.engine import run_spark, spark_session

        started = time.perf_counter()
        spark = spark_session("local[2]", {"spark.driver.memory": "3g"})
        out["startup_s"] = time.perf_counter() - started
        with tempfile.TemporaryDirectory() as tmp:
            result = run_spark(spark, corpus, manifest, manifest.buckets, out=Path(tmp) / "v.parquet")
        jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
        out["jvm_peak_mb"] = _peak_rss_mb(jvm_pid)
        spark.stop()
        out.update(seconds=result.seconds, violations=len(result.counts))
    elif engine == "duckdb":
        from kconform.traces.mine.engine import run_duckdb

        result = run_duckdb(corpus, manifest, manifest.buckets, threads=2)
        out.update(seconds=result.seconds, violations=len(result.counts))
    else:
        from kconform.traces.oracle import run_oracle

        chosen, total = [], 0
        for t in manifest.traces:
            if total >= oracle_events:
                break
            chosen.append(t.trace)
            total += t.events
        oracle = run_oracle(corpus, manifest, chosen)
        out.update(seconds=oracle.seconds, judged_events=oracle.events, violations=len(oracle.flagged))
    out["python_peak_mb"] = _peak_rss_mb()
    return out


def _measure(engine: str, corpus: Path, oracle_events: int) -> dict[str, Any]:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "kconform.ci.benchmarks.mine",
            "--one",
            engine,
            "--corpus",
            str(corpus),
            "--oracle-events",
            str(oracle_events),
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--oracle-events", type=int, default=1_000_000, help="events the oracle judges at most")
    parser.add_argument("--engines", nargs="+", default=["spark", "duckdb", "oracle"])
    parser.add_argument("--dir", type=Path, default=None, help="where corpora go (default: a temporary directory)")
    parser.add_argument("--reuse", action="store_true", help="mine corpora already in --dir instead of regenerating")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(_one(args.one, args.corpus, args.oracle_events)))
        return 0

    from kconform.traces.corpus import read_manifest
    from kconform.traces.generate import Plan, generate

    console = Console(width=max(Console().width, 150))
    console.print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    base = args.dir or Path(tempfile.mkdtemp(prefix="kconform-bench-"))
    table = Table(title="mining throughput (events/s; one run)")
    for column in (
        "events",
        "generate ev/s",
        "spark ev/s",
        "spark JVM peak MiB",
        "duckdb ev/s",
        "duckdb peak MiB",
        "oracle ev/s",
        "spark / duckdb",
        "spark / oracle",
    ):
        table.add_column(column, justify="right")
    for size in args.sizes:
        corpus = base / f"corpus-{size}"
        if args.reuse and (corpus / "manifest.json").exists():
            manifest, gen_rate = read_manifest(corpus), 0.0  # same seed and plan: the same corpus
        else:
            result = generate(corpus, Plan(events=size, seed=0), workers=args.workers)
            manifest, gen_rate = result.manifest, result.events_per_second
            console.print(f"generated {manifest.events:,} events in {result.seconds:.1f} s ({gen_rate:,.0f} ev/s)")
        figures: dict[str, dict[str, Any]] = {}
        for engine in args.engines:
            figures[engine] = _measure(engine, corpus, args.oracle_events)
            console.print(json.dumps(figures[engine]))

        spark, duck, oracle = (_rate(figures, e) for e in ("spark", "duckdb", "oracle"))
        oracle_note = ""
        if "oracle" in figures and figures["oracle"]["judged_events"] < figures["oracle"]["events"]:
            oracle_note = f" (on {figures['oracle']['judged_events']:,})"
        table.add_row(
            f"{manifest.events:,}",
            f"{gen_rate:,.0f}",
            f"{spark:,.0f}",
            f"{figures.get('spark', {}).get('jvm_peak_mb', 0):,.0f}",
            f"{duck:,.0f}",
            f"{figures.get('duckdb', {}).get('python_peak_mb', 0):,.0f}",
            f"{oracle:,.0f}{oracle_note}",
            f"{spark / duck:.2f}" if duck else "-",
            f"{spark / oracle:.1f}" if oracle else "-",
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
