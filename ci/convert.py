"""``kconform convert SRC DST``: JSON Lines traces ↔ Parquet corpus.

SRC a corpus directory (it has manifest.json): the whole corpus is checked first
(kconform.traces.inputs.corpus; any problem: exit 2, nothing written), then DST becomes a directory
of JSON Lines files, one per trace (``trace-T.jsonl``, the counterexample format). SRC one or more ``.jsonl`` files or a
directory of them: DST becomes a corpus (trace ids in the order given). A file that cannot be read
is reported with its line or row and skipped, the rest is converted; the exit code is then 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, user_error


def add_parser(commands: Any) -> None:
    """Register ``convert``."""
    conv = commands.add_parser(
        "convert",
        help="convert JSON Lines trace files to a Parquet corpus, or a corpus to JSON Lines files",
        description="A corpus directory (with manifest.json) becomes one JSON Lines file per trace; JSON Lines "
        "files (or a directory of them) become a corpus.",
    )
    conv.add_argument("src", type=Path, nargs="+", metavar="SRC")
    conv.add_argument("dst", type=Path, metavar="DST")
    conv.add_argument(
        "--buckets", type=int, default=1, metavar="N", help="buckets of a new corpus (1..1024, default: 1)"
    )
    conv.set_defaults(handler=cmd_convert)


def cmd_convert(args: argparse.Namespace) -> int:
    from kconform.traces.corpus import MANIFEST

    if not 1 <= args.buckets <= 1024:
        return user_error(f"--buckets must be between 1 and 1024, got {args.buckets}")
    sources: list[Path] = args.src
    if len(sources) == 1 and (sources[0] / MANIFEST).exists():
        return _to_jsonl(sources[0], args.dst)
    files: list[Path] = []
    for src in sources:
        files.extend(sorted(src.glob("*.jsonl")) if src.is_dir() else [src])
    if not files:
        return user_error(f"no .jsonl files in {', '.join(map(str, sources))}")
    return _to_parquet(files, args.dst, args.buckets)


def _to_jsonl(src: Path, dst: Path) -> int:
    from kconform.traces.corpus import CorpusError, ReadReport, read_manifest, read_traces
    from kconform.traces.counterexample import write_counterexample
    from kconform.traces.inputs.corpus import validate_corpus

    try:
        manifest = read_manifest(src)
    except CorpusError as e:
        return user_error(str(e))
    if dst.exists() and not dst.is_dir():
        return user_error(f"{dst}: exists and is not a directory")
    _good, problems = validate_corpus(src, manifest)
    if problems:
        for problem in problems:
            print(f"kconform: error: {problem}", file=sys.stderr)
        return user_error(f"{src}: refused ({len(problems)} problem(s)); nothing was converted")
    dst.mkdir(parents=True, exist_ok=True)
    report = ReadReport()
    for meta, cx in read_traces(src, manifest, report):
        write_counterexample(dst / f"trace-{meta.trace}.jsonl", cx)
    print(f"wrote {report.traces_read} trace file(s) ({report.events_read:,} events) to {dst}")
    for error in report.errors:
        print(f"kconform: error: {error}", file=sys.stderr)
    if report.errors:
        print(
            f"kconform: error: {len(report.skipped_traces)} trace(s) not converted: {report.skipped_traces[:20]}",
            file=sys.stderr,
        )
        return EXIT_ERROR
    return EXIT_PASS


def _to_parquet(files: list[Path], dst: Path, buckets: int) -> int:
    from kconform.traces.corpus import MANIFEST, write_corpus
    from kconform.traces.counterexample import TraceFileError, read_counterexample

    if dst.exists() and (not dst.is_dir() or (any(dst.iterdir()) and not (dst / MANIFEST).exists())):
        return user_error(f"{dst}: exists and is not an empty directory or a corpus")
    traces = []
    failed = []
    for path in files:
        try:
            traces.append(read_counterexample(path))
        except TraceFileError as e:
            failed.append(str(e))
    if traces:
        manifest = write_corpus(
            dst, traces, buckets=min(buckets, len(traces)), generator={"converted_from": [str(f) for f in files]}
        )
        print(f"wrote a corpus of {len(manifest.traces)} trace(s), {manifest.events:,} events, to {dst}")
    for message in failed:
        print(f"kconform: error: {message}", file=sys.stderr)
    if failed:
        print(f"kconform: error: {len(failed)} of {len(files)} file(s) not converted", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_PASS
