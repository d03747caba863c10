"""Kafka's checkpoint files: ``leader-epoch-checkpoint`` (LeaderEpochCheckpointFile: the epoch cache
of one partition replica, KIP-101) and the offset checkpoints of a log directory
(``replication-offset-checkpoint`` = high watermarks, ``recovery-point-offset-checkpoint``,
``log-start-offset-checkpoint``, ``cleaner-offset-checkpoint``; OffsetCheckpointFile).

Both have the same layout since 0.8 / 0.11 (CheckpointFile): a version line (0), a count line, then
``count`` entries: ``epoch startOffset`` or ``topic partition offset``. The file is recognized by
its name (a copy may carry a prefix or suffix, e.g. ``broker1-leader-epoch-checkpoint.txt``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath

from kconform.traces.logs.dumplog import partition_of_path
from kconform.traces.logs.observations import CHECKPOINT_OFFSET, EPOCH_ENTRY, Obs, cut

EPOCH_FILE = "leader-epoch-checkpoint"
OFFSET_FILES = (
    "replication-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)


class CheckpointParseError(ValueError):
    """A checkpoint line that does not have the checkpoint layout."""


def checkpoint_kind(path: str) -> str | None:
    """``leader-epoch-checkpoint``, one of :data:`OFFSET_FILES`, or None for any other file."""
    name = PurePath(path).name
    if EPOCH_FILE in name:
        return EPOCH_FILE
    for kind in OFFSET_FILES:
        if kind in name:
            return kind
    return None


def parse_checkpoint(path: str, kind: str, lines: Iterator[tuple[int, str]]) -> Iterator[Obs]:
    """Observations of one checkpoint file; a line out of layout raises CheckpointParseError
    naming it (``line N: ...``)."""
    partition = partition_of_path(path) if kind == EPOCH_FILE else None
    expected: int | None = None
    version_seen = False
    seen = 0
    for number, raw in lines:
        text = raw.strip()
        if not text:
            continue
        if not version_seen:
            if not _is_int(text):
                raise CheckpointParseError(f"line {number}: version: expected an integer, got {text[:40]!r}")
            version_seen = True
            continue
        if expected is None:
            if not _is_int(text):
                raise CheckpointParseError(f"line {number}: entry count: expected an integer, got {text[:40]!r}")
            expected = int(text)
            continue
        parts = text.split()
        seen += 1
        if kind == EPOCH_FILE:
            if len(parts) != 2 or not all(_is_int(p) for p in parts):
                raise CheckpointParseError(f"line {number}: expected 'epoch startOffset', got {text[:60]!r}")
            yield Obs(
                kind=EPOCH_ENTRY,
                file=path,
                line=number,
                text=cut(raw),
                stream=f"{path}#epochs",
                partition=partition,
                leader_epoch=int(parts[0]),
                offset=int(parts[1]),
                count=expected,
            )
        else:
            if len(parts) != 3 or not _is_int(parts[1]) or not _is_int(parts[2]):
                raise CheckpointParseError(f"line {number}: expected 'topic partition offset', got {text[:60]!r}")
            yield Obs(
                kind=CHECKPOINT_OFFSET,
                file=path,
                line=number,
                text=cut(raw),
                stream=f"{path}#{kind}",
                partition=f"{parts[0]}-{int(parts[1])}",
                offset=int(parts[2]),
                state=kind,
                count=expected,
            )
    if expected is not None and seen != expected:
        raise CheckpointParseError(f"entry count says {expected} entries, the file has {seen}")


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
