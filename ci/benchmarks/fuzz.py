"""The fuzz benchmark: many damaged inputs of every kind through the real command line.

Run: ``python -m kconform.ci.benchmarks.fuzz [--cases counterexample=100000 trace=100000 corpus=1000
options=20000] [--seconds KIND=S ...] [--workers 2] [--seed 0] [--hang 60]``; ``--seconds`` caps a kind's
wall clock (the line then says how many of the asked cases ran). Every input kind of kconform.ci.fuzzing.KINDS
is fuzzed (counterexample files and JSON Lines traces by ``replay`` in both modes and ``convert``,
corpora by ``mine --engine duckdb`` and ``convert``, the command line's options with every engine
stubbed; Kafka's logs through the library pass of ``logs check`` with every ``--logs-cli-every``-th
case through the whole command line and every ``--logs-subprocess-every``-th in a subprocess,
kconform.ci.fuzz_logs). Printed per kind: cases, exit 0 / 1 / 2, tracebacks, hangs, damaged inputs not refused,
of them judged clean (exit 0), re-encodings whose exit code changed, the slowest case, the rate, the
peak resident memory so far and the load;
then the time to refuse a corrupt corpus before any engine (a 1M-event corpus with one flipped
byte, and with a rewritten, re-hashed part file whose rows are wrong), unless ``--no-refusal``.
Exit 1 if any traceback, hang or missed refusal happened.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from kconform.ci.fuzz_logs import fuzz_logs
from kconform.ci.fuzzing import KINDS, Tally, fuzz_kind

DEFAULT_CASES = {
    "counterexample": 100_000,
    "trace": 100_000,
    "corpus": 1_000,
    "options": 20_000,
    "history": 10_000,
    "logs": 10_000,
}


def _worker(job: tuple[str, list[str], int, int, str, float, float | None, int, int]) -> dict[str, Any]:
    name, samples, cases, seed, scratch, hang_s, deadline, cli_every, subprocess_every = job
    extra: dict[str, Any] = {}
    if name == "logs":
        logs = fuzz_logs(
            [Path(s) for s in samples], cases, seed, Path(scratch), hang_s, deadline, cli_every, subprocess_every
        )
        tally: Tally = logs
        extra = {
            "cli_cases": logs.cli_cases,
            "cli_exits": {str(k): v for k, v in logs.cli_exits.items()},
            "subprocess_cases": logs.subprocess_cases,
            "disagreements": logs.disagreements[:20],
            "disagreement_count": len(logs.disagreements),
        }
    else:
        tally = fuzz_kind(
            KINDS[name], [Path(s) for s in samples], cases, seed, Path(scratch), hang_s, deadline=deadline
        )
    return extra | {
        "cases": tally.cases,
        "exits": dict(tally.exits),
        "tracebacks": tally.tracebacks[:20],
        "traceback_count": len(tally.tracebacks),
        "hangs": tally.hangs[:20],
        "hang_count": len(tally.hangs),
        "missed": tally.missed[:20],
        "missed_count": len(tally.missed),
        "clean_on_damage": tally.clean_on_damage,
        "reencoding": tally.reencoding_mismatch[:20],
        "reencoding_count": len(tally.reencoding_mismatch),
        "slowest": list(tally.slowest),
        "seconds": tally.seconds,
    }


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"exits": Counter()}
    for part in parts:
        for key, value in part.items():
            if key in ("exits", "cli_exits"):
                out.setdefault(key, Counter()).update({int(k): v for k, v in value.items()})
            elif key == "slowest":
                out["slowest"] = max(out.get("slowest", [0.0, ""]), value, key=lambda x: x[0])
            elif isinstance(value, list):
                out.setdefault(key, []).extend(value)
            else:
                out[key] = out.get(key, 0) + value
    return out


def run_kind(
    name: str,
    cases: int,
    workers: int,
    seed: int,
    root: Path,
    hang_s: float,
    seconds: float | None = None,
    cli_every: int = 50,
    subprocess_every: int = 2000,
) -> tuple[dict[str, Any], float]:
    """Fuzz one kind with ``cases`` cases split over ``workers`` processes, for at most about ``seconds``
    after its samples are written; (merged tally, wall s). The ``logs`` kind runs every case through
    the library pass of ``kconform logs check`` and every ``cli_every``-th / ``subprocess_every``-th
    through the command line in process / in a subprocess (kconform.ci.fuzz_logs)."""
    samples = [str(p) for p in KINDS[name].samples(root / f"samples-{name}")]
    deadline = None if seconds is None else time.monotonic() + seconds
    shares = [cases // workers + (1 if i < cases % workers else 0) for i in range(workers)]
    jobs = [
        (
            name,
            samples,
            n,
            seed * 1000 + i,
            str(root / f"scratch-{name}-{i}"),
            hang_s,
            deadline,
            cli_every,
            subprocess_every,
        )
        for i, n in enumerate(shares)
        if n
    ]
    started, cpu = time.perf_counter(), _cpu()
    if workers == 1:
        parts = [_worker(job) for job in jobs]
    else:
        with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
            parts = pool.map(_worker, jobs)
    merged = _merge(parts)
    merged["cpu_seconds"] = _cpu() - cpu
    return merged, time.perf_counter() - started


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its reaped children (the pool's workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _peak_rss_mb() -> float:
    """Peak resident memory (MB) of this process and of its largest reaped child (the pool's workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024  # Linux: KiB


def refusal_seconds(root: Path, events: int) -> dict[str, float]:
    """Seconds ``kconform mine`` takes to refuse a corrupt corpus of ``events`` events (it never
    starts an engine): a flipped byte (the hash), and a re-hashed part file with a relabelled trace
    (the row checks), plus the time a clean corpus's checks take."""
    from kconform.ci.fuzzing import run_case
    from kconform.traces.generate import Plan, generate
    from kconform.traces.inputs.corpus import sealed

    corpus = root / "big"
    generate(corpus, Plan(events=events, seed=1, trace_events=20_000), workers=2)
    out: dict[str, float] = {}
    from kconform.traces.corpus import EVENTS_DIR, bucket_path, read_manifest
    from kconform.traces.inputs.corpus import validate_corpus

    started, cpu = time.perf_counter(), time.process_time()
    validate_corpus(corpus, read_manifest(corpus))
    out["clean corpus, every check"] = time.perf_counter() - started
    out["clean corpus, every check, CPU"] = time.process_time() - cpu
    flipped = root / "flipped"
    shutil.copytree(corpus, flipped)
    part = bucket_path(flipped, EVENTS_DIR, 0)
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0x01
    part.write_bytes(bytes(data))
    cpu = time.process_time()
    outcome = run_case(["mine", str(flipped), "--out", str(root / "o1")], hang_s=1800)
    assert outcome.code == 2, outcome.stderr
    out["flipped byte: refused by mine"] = outcome.seconds
    out["flipped byte: refused by mine, CPU"] = time.process_time() - cpu
    import pyarrow as pa
    import pyarrow.parquet as pq

    relabelled = root / "relabelled"
    shutil.copytree(corpus, relabelled)
    part = bucket_path(relabelled, EVENTS_DIR, read_manifest(corpus).buckets[-1])
    table = pq.read_table(part)
    traces = table["trace"].to_pylist()
    traces[-1] = 10**9
    pq.write_table(table.set_column(0, table.schema.field(0), pa.array(traces, pa.int64())), part)
    obj = json.loads((relabelled / "manifest.json").read_text())
    buckets = tuple(sorted({t["bucket"] for t in obj["traces"]}))
    (relabelled / "manifest.json").write_text(json.dumps(sealed(relabelled, obj, buckets)))
    cpu = time.process_time()
    outcome = run_case(["mine", str(relabelled), "--out", str(root / "o2")], hang_s=1800)
    assert outcome.code == 2, outcome.stderr
    out["relabelled row in the last bucket (re-hashed): refused by mine"] = outcome.seconds
    out["relabelled row: refused by mine, CPU"] = time.process_time() - cpu
    out["events"] = float(read_manifest(corpus).events)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=[], metavar="KIND=N", help="cases per kind")
    parser.add_argument("--kinds", nargs="*", default=list(DEFAULT_CASES), help="kinds to fuzz")
    parser.add_argument("--seconds", nargs="*", default=[], metavar="KIND=S", help="wall-clock cap per kind")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hang", type=float, default=60.0, help="seconds before a case counts as hung")
    parser.add_argument("--refusal-events", type=int, default=1_000_000)
    parser.add_argument("--no-refusal", action="store_true")
    parser.add_argument(
        "--logs-cli-every", type=int, default=50, help="logs kind: every Nth case also through the command line"
    )
    parser.add_argument(
        "--logs-subprocess-every", type=int, default=2000, help="logs kind: every Nth case also in a subprocess"
    )
    parser.add_argument("--dir", type=Path, default=None, help="scratch directory (default: a temporary one)")
    args = parser.parse_args()
    cases = dict(DEFAULT_CASES)
    for text in args.cases:
        name, _, n = text.partition("=")
        cases[name] = int(n)
    seconds: dict[str, float] = {}
    for text in args.seconds:
        name, _, n = text.partition("=")
        seconds[name] = float(n)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {os.getloadavg()}"
    )
    root = args.dir or Path(tempfile.mkdtemp(prefix="kconform-fuzz-"))
    failed = False
    try:
        for name in args.kinds:
            tally, wall = run_kind(
                name,
                cases[name],
                args.workers,
                args.seed,
                root,
                args.hang,
                seconds.get(name),
                args.logs_cli_every,
                args.logs_subprocess_every,
            )
            exits = tally["exits"]
            slow_s, slow_what = tally.get("slowest", [0.0, ""])
            print(
                f"{name}: {tally['cases']:,} of {cases[name]:,} cases in {wall:,.0f} s "
                f"({tally['cases'] / max(wall, 1e-9):,.1f}/s, {tally['cpu_seconds']:,.0f} CPU s, "
                f"{args.workers} workers): exit 0 {exits.get(0, 0):,}, exit 1 {exits.get(1, 0):,}, "
                f"exit 2 {exits.get(2, 0):,}; tracebacks {tally['traceback_count']}, hangs {tally['hang_count']}, "
                f"damaged not refused {tally['missed_count']} (judged clean {tally['clean_on_damage']}), "
                f"re-encodings with another exit {tally['reencoding_count']}; slowest {slow_s:.2f} s: {slow_what}; "
                f"peak RSS {_peak_rss_mb():,.0f} MB, load {os.getloadavg()}"
            )
            if "cli_cases" in tally:
                print(
                    f"  {name}: library pass on every case; command line in process on {tally['cli_cases']:,} "
                    f"(exit 0 / 1 / 2 {', '.join(str(tally['cli_exits'].get(c, 0)) for c in (0, 1, 2))}), "
                    f"in a subprocess on {tally['subprocess_cases']:,}; exit codes differing from the library "
                    f"pass {tally['disagreement_count']}"
                )
            for key in ("tracebacks", "hangs", "missed", "reencoding", "disagreements"):
                for line in tally.get(key, [])[:5]:
                    print(f"  {key}: {line}")
            failed |= bool(
                tally["traceback_count"]
                or tally["hang_count"]
                or tally["missed_count"]
                or tally.get("disagreement_count")
            )
        if not args.no_refusal:
            for what, value in refusal_seconds(root / "refusal", args.refusal_events).items():
                print(
                    f"corpus refusal: {what}: {value:,.0f}"
                    if what == "events"
                    else f"corpus refusal: {what}: {value:.2f} s"
                )
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
