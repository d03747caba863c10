"""Reading inputs as numbered text lines, in bounded memory: files, directories (recursively, in
name order) and gzip files, with any bytes.

A line longer than :data:`MAX_LINE_BYTES` is cut there (the rest up to its newline is skipped and
counted), bytes that are not UTF-8 are decoded as U+FFFD, and a file whose first block holds NUL
bytes (a binary segment, an index) is skipped and reported, never parsed.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

MAX_LINE_BYTES = 64 * 1024
"""Longest line kept (bytes); Kafka's longest real lines (LeaderAndIsr requests, FetchResponseData
with many partitions) stay far below it."""

_SNIFF = 8192


class InputError(Exception):
    """An input path cannot be read (missing, unreadable, corrupt gzip); the message names it."""


@dataclass
class ReadStats:
    """What the reader met besides lines: skipped binary files and cut lines."""

    files: int = 0
    lines: int = 0
    binary_files: list[str] = field(default_factory=list)
    cut_lines: int = 0


def expand(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Every regular file under ``paths`` (directories recursively, sorted by name); a missing path
    raises :class:`InputError`."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.is_file()))
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(f"{p}: no such file or directory")
    return out


def _open(path: Path) -> BinaryIO:
    raw: BinaryIO = path.open("rb")
    head = raw.read(2)
    raw.seek(0)
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


def display_name(path: Path) -> str:
    """The name a finding shows for ``path`` (as given, relative where possible)."""
    return str(path)


def lines(path: Path, stats: ReadStats) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for every line of ``path`` (1-based, without the newline).

    Yields nothing for a binary file (recorded in ``stats.binary_files``).
    """
    try:
        stream = _open(path)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
    try:
        buffered: Any = (
            stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(cast(Any, stream), 1 << 16)
        )
        try:
            head = buffered.peek(_SNIFF)[:_SNIFF]
        except (OSError, EOFError) as e:
            raise InputError(f"{path}: cannot read: {e}") from e
        stats.files += 1
        if b"\x00" in head:
            stats.binary_files.append(str(path))
            return
        number = 0
        while True:
            try:
                chunk = buffered.readline(MAX_LINE_BYTES)
            except (OSError, EOFError, gzip.BadGzipFile) as e:
                raise InputError(f"{path}:{number + 1}: cannot read: {e}") from e
            if not chunk:
                return
            number += 1
            if not chunk.endswith(b"\n") and len(chunk) >= MAX_LINE_BYTES:
                stats.cut_lines += 1
                while True:  # skip the rest of the over-long line, a block at a time
                    rest = buffered.readline(MAX_LINE_BYTES)
                    if not rest or rest.endswith(b"\n"):
                        break
            stats.lines += 1
            yield number, chunk.decode("utf-8", errors="replace").rstrip("\r\n")
    finally:
        stream.close()
