"""Benchmark of ``kconform logs``: lines per second parsed, and parsed and checked, single process.

The input is the healthy real fixtures (tests/fixtures/logs) repeated into a base file of up to a
million lines; each repetition gets its own client ids so that repeated Fetch sessions stay
valid, and every dump repetition starts a new segment. Larger sizes read the base file through
several links (one stream per name), so 10M lines need no 2 GB of disk. The run must stay clean
(the figures are for checking, not for finding): a finding is printed and fails the benchmark.

    python -m kconform.ci.benchmarks.logs --lines 1000000 10000000
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from kconform.traces.logs.parse import ParseStats, parse_paths
from kconform.traces.logs.run import check_observations

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "logs"
BASE_MAX = 1_000_000


def healthy_lines() -> list[str]:
    manifest = json.loads((FIXTURES / "fixtures.json").read_text())
    out: list[str] = []
    for name, entry in sorted(manifest.items()):
        if not entry["expect"]:
            out.append(f"===== {name} =====")  # excerpts of different dumps must not join into one chain
            out.extend((FIXTURES / name).read_text().splitlines())
    return out


def write_base(path: Path, lines: int) -> int:
    """Write about ``lines`` lines (whole repetitions of the fixtures); return the count."""
    seed = healthy_lines()
    written = 0
    rep = 0
    with path.open("w") as f:
        while written < lines:
            tag = f"r{rep}-"
            for line in seed:
                f.write(line.replace("clientId=", f"clientId={tag}").replace("Dumping ", f"Dumping /{tag}") + "\n")
            written += len(seed)
            rep += 1
    return written


def measure(paths: list[Path], check: bool) -> tuple[int, float, int]:
    stats = ParseStats()
    started = time.perf_counter()
    observations = parse_paths(paths, stats)
    findings = 0
    if check:
        checks = check_observations(observations)
        findings = sum(c.finding_count for c in checks if c.fails)
    else:
        for _ in observations:
            pass
    return stats.read.lines, time.perf_counter() - started, findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--check-only", action="store_true", help="skip the parse-only pass")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = root / "base.log"
        base_lines = write_base(base, min(max(args.lines), BASE_MAX))
        print(f"base file: {base_lines:,} lines, {base.stat().st_size / 1e6:.0f} MB (healthy fixtures repeated)")
        print(
            f"{'lines':>12} {'parse s':>9} {'parse lines/s':>14} {'parse+check s':>14} {'lines/s':>10} {'findings':>9}"
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
            n2, both_s, findings = measure(paths, check=True)
            if args.check_only:
                print(f"{n2:>12,} {'-':>9} {'-':>14} {both_s:>14.1f} {n2 / both_s:>10,.0f} {findings:>9}")
            else:
                n, parse_s, _ = measure(paths, check=False)
                assert n == n2
                print(
                    f"{n:>12,} {parse_s:>9.1f} {n / parse_s:>14,.0f} {both_s:>14.1f} {n / both_s:>10,.0f} {findings:>9}"
                )
            if findings:
                status = 1
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS: {peak_mb:.0f} MB")
    return status


if __name__ == "__main__":
    sys.exit(main())
