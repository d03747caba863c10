"""Benchmark of ``kconform logs``: lines per second (and CPU-seconds) parsed, and parsed and checked, single
process; with ``--ingest``, the same input ingested to Parquet and checked per partition on DuckDB and on
Spark (``local[2]``), whose verdicts must agree with the single-process ones.

The input is the healthy real fixtures (tests/fixtures/logs) repeated into a base file of up to a
million lines; each repetition gets its own client ids so that repeated Fetch sessions stay
valid, and every dump repetition starts a new segment. Larger sizes read the base file through
several links (one stream per name), so 10M lines need no 2 GB of disk. The run must stay clean
(the figures are for checking, not for finding): a finding is printed and fails the benchmark.

    python -m kconform.ci.benchmarks.logs --lines 1000000 10000000
    python -m kconform.ci.benchmarks.logs --lines 1000000 --check-only --ingest

CPU-seconds are this process's user + system time and that of its waited-for children (Spark's JVM
and Python workers are counted only as far as the operating system reports them to the parent).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

from kconform.traces.logs.ingest import check_corpus, write_corpus
from kconform.traces.logs.parse import ParseStats, parse_paths
from kconform.traces.logs.run import check_observations

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "logs"
BASE_MAX = 1_000_000


def tagged(lines: list[str], rep: int) -> list[str]:
    """One repetition of ``lines`` with its own client ids and dump names (see ``write_base``)."""
    tag = f"r{rep}-"
    return [line.replace("clientId=", f"clientId={tag}").replace("Dumping ", f"Dumping /{tag}") for line in lines]


def repeats_cleanly(lines: list[str]) -> bool:
    """Whether two tagged repetitions of one excerpt, one after the other in one file, raise no finding.

    A broker log repeated is not a healthy broker log in general: a partition history that starts at
    leader epoch 0 again right after epoch 1, with no deletion between, is what
    leader-epochs-increase-per-broker rightly flags. Such an excerpt is left out of the base file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "twice.log"
        path.write_text("\n".join(tagged(lines, 0) + tagged(lines, 1)) + "\n")
        checks = check_observations(parse_paths([path], ParseStats()))
        return not any(c.fails and c.finding_count for c in checks)


def healthy_lines() -> tuple[list[str], list[str]]:
    """The lines of the healthy fixtures that repeat cleanly, and the names of those left out."""
    manifest = json.loads((FIXTURES / "fixtures.json").read_text())
    out: list[str] = []
    left_out: list[str] = []
    for name, entry in sorted(manifest.items()):
        if not entry["expect"]:
            lines = [f"===== {name} ====="]  # excerpts of different dumps must not join into one chain
            lines.extend((FIXTURES / name).read_text().splitlines())
            if repeats_cleanly(lines):
                out.extend(lines)
            else:
                left_out.append(name)
    return out, left_out


def write_base(path: Path, lines: int) -> tuple[int, list[str]]:
    """Write about ``lines`` lines (whole repetitions of the fixtures); return the count and the
    fixtures left out because they do not repeat cleanly."""
    seed, left_out = healthy_lines()
    written = 0
    rep = 0
    with path.open("w") as f:
        while written < lines:
            for line in tagged(seed, rep):
                f.write(line + "\n")
            written += len(seed)
            rep += 1
    return written, left_out


def cpu_seconds() -> float:
    """User + system CPU time of this process and its waited-for children so far."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(paths: list[Path], check: bool) -> tuple[int, float, float, int, dict[str, tuple[str, int]]]:
    """(lines, wall s, CPU s, failing findings, verdict per check) of one single-process pass."""
    stats = ParseStats()
    started, cpu0 = time.perf_counter(), cpu_seconds()
    observations = parse_paths(paths, stats)
    findings = 0
    verdicts: dict[str, tuple[str, int]] = {}
    if check:
        checks = check_observations(observations)
        findings = sum(c.finding_count for c in checks if c.fails)
        verdicts = {c.name: (c.status, c.finding_count) for c in checks}
    else:
        for _ in observations:
            pass
    return stats.read.lines, time.perf_counter() - started, cpu_seconds() - cpu0, findings, verdicts


def measure_ingest(paths: list[Path], out: Path, single: dict[str, tuple[str, int]]) -> bool:
    """Ingest ``paths`` to Parquet, check the corpus on DuckDB and on Spark; print one row per step and
    return whether both engines' verdicts equal the single-process ones."""
    started, cpu0 = time.perf_counter(), cpu_seconds()
    summary = write_corpus(paths, out)
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu0
    print(
        f"{'ingest (parse to Parquet)':<28} {summary.lines:>12,} {wall:>9.1f} {cpu:>8.1f} "
        f"{summary.lines / wall:>10,.0f}"
    )
    agree = True
    for engine, master in (("duckdb", ""), ("spark", "local[2]")):
        started, cpu0 = time.perf_counter(), cpu_seconds()
        result = check_corpus(out, engine=engine, master=master or "local[*]")
        wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu0
        verdicts = {t.name: (t.status, t.findings) for t in result.totals}
        same = verdicts == single
        agree = agree and same
        print(
            f"{'check corpus on ' + engine:<28} {summary.rows:>12,} {wall:>9.1f} {cpu:>8.1f} "
            f"{summary.lines / wall:>10,.0f} verdicts {'agree' if same else 'DIFFER'} with the single pass"
        )
    return agree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--check-only", action="store_true", help="skip the parse-only pass")
    parser.add_argument("--ingest", action="store_true", help="also ingest and check on DuckDB and Spark")
    args = parser.parse_args(argv)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = root / "base.log"
        base_lines, left_out = write_base(base, min(max(args.lines), BASE_MAX))
        print(f"base file: {base_lines:,} lines, {base.stat().st_size / 1e6:.0f} MB (healthy fixtures repeated)")
        if left_out:
            print(f"left out (a repeated history is not a healthy one): {', '.join(left_out)}")
        print(
            f"{'lines':>12} {'parse s':>9} {'parse lines/s':>14} {'parse+check s':>14} {'CPU s':>8} {'lines/s':>10} "
            f"{'lines/CPU-s':>12} {'findings':>9}"
        )
        status = 0
        for target in args.lines:
            copies = max(1, round(target / base_lines))
            paths = []
            for i in range(copies):
                link = root / f"copy-{i}.log"
                if not link.exists():
                    link.symlink_to(base)
                paths.append(link)
            n2, both_s, both_cpu, findings, verdicts = measure(paths, check=True)
            parse_cols = f"{'-':>9} {'-':>14}"
            if not args.check_only:
                n, parse_s, _, _, _ = measure(paths, check=False)
                assert n == n2
                parse_cols = f"{parse_s:>9.1f} {n / parse_s:>14,.0f}"
            print(
                f"{n2:>12,} {parse_cols} {both_s:>14.1f} {both_cpu:>8.1f} {n2 / both_s:>10,.0f} "
                f"{n2 / both_cpu:>12,.0f} {findings:>9}"
            )
            if findings:
                status = 1
            if args.ingest:
                print(f"{'step':<28} {'lines/rows':>12} {'wall s':>9} {'CPU s':>8} {'lines/s':>10}")
                if not measure_ingest(paths, root / f"corpus-{target}", verdicts):
                    status = 1
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS: {peak_mb:.0f} MB")
    return status


if __name__ == "__main__":
    sys.exit(main())
