"""Replayable excerpts: a finding's witness lines written as a small input that ``kconform logs check``
re-checks to the same finding.

A finding names its witnesses (file:line). The excerpt holds, per witness file and in the file's line
order, the lines that carry them, read again from the input (witness texts in the report are cut,
metadata payloads are not), plus the context the parsers need to read them the same way:

- the ``Dumping FILE`` line that opens the witness's dump (it names the partition and starts the
  chain);
- a control batch's record lines (its marker type and coordinator epoch are on them);
- the continuation lines of a log record (a message wrapped over several lines);
- a checkpoint file whole (its header declares the entry count; such files are small).

Each excerpt is a directory ``DIR/<check>-<n>/`` holding one file per witness file, under the name
of the file's parent directory (a checkpoint's partition is its directory name) and its own name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from kconform.traces.logs.checkpoints import checkpoint_kind
from kconform.traces.logs.checks.base import Check, Finding
from kconform.traces.logs.log4j import MAX_CONTINUATION, parse_header
from kconform.traces.logs.reader import ReadStats, lines

MAX_EXCERPTS = 50
"""Excerpts written per run (the first findings of each check, in report order)."""
_RECORD_LINES = 5
"""Record lines kept after a control batch (its marker record comes first)."""
_SAFE = re.compile(r"[^\w.\-]+")


def excerpt_lines(path: Path, wanted: set[int]) -> list[str]:
    """The lines of ``path`` that an excerpt of the witness lines ``wanted`` needs, in file order."""
    if checkpoint_kind(str(path)) is not None:
        return [text for _n, text in lines(path, ReadStats())]
    keep: list[str] = []
    dumping: tuple[int, str] | None = None
    dumping_kept = -1
    follow = 0  # lines still to keep after a witness (control records, continuation lines)
    follow_kind = ""
    for number, text in lines(path, ReadStats()):
        stripped = text.strip()
        if stripped.startswith("Dumping "):
            dumping = (number, text)
            follow = 0
            continue
        if number in wanted:
            if dumping is not None and dumping_kept != dumping[0]:
                keep.append(dumping[1])
                dumping_kept = dumping[0]
            keep.append(text)
            if stripped.startswith("baseOffset: ") and "isControl: true" in stripped:
                follow, follow_kind = _RECORD_LINES, "record"
            elif parse_header(number, text) is not None:
                follow, follow_kind = MAX_CONTINUATION, "continuation"
            else:
                follow = 0
            continue
        if follow <= 0:
            continue
        belongs = (
            stripped.startswith("|")
            if follow_kind == "record"
            else bool(stripped) and parse_header(number, text) is None
        )
        if belongs:
            keep.append(text)
            follow -= 1
        else:
            follow = 0
    return keep


def write_excerpt(finding: Finding, directory: Path) -> Path:
    """Write ``finding``'s excerpt into ``directory`` (created) and return it."""
    by_file: dict[str, set[int]] = {}
    for w in finding.witnesses:
        by_file.setdefault(w.file, set()).add(w.line)
    directory.mkdir(parents=True, exist_ok=True)
    for i, (name, wanted) in enumerate(sorted(by_file.items())):
        source = Path(name)  # the reader names each input file by its path
        parent = _SAFE.sub("_", source.parent.name) or f"input{i}"
        target = directory / parent / source.name.removesuffix(".gz")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f"{line}\n" for line in excerpt_lines(source, wanted)), encoding="utf-8")
    return directory


def write_excerpts(checks: Sequence[Check], out: Path, limit: int = MAX_EXCERPTS) -> dict[tuple[str, int], Path]:
    """Excerpts of the findings of ``checks`` under ``out``: {(check, finding index): directory}."""
    written: dict[tuple[str, int], Path] = {}
    for check in checks:
        for index, finding in enumerate(check.findings):
            if len(written) >= limit:
                return written
            written[(check.name, index)] = write_excerpt(finding, out / f"{check.name}-{index + 1}")
    return written
