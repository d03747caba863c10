"""Atomic file replacement: a reader sees the old file or the new one, never half of either.

The content goes to a temporary file in the target's directory (same file system, so the rename is
atomic), is flushed and fsynced, and only then renamed over the target with ``os.replace``. If
anything fails before the rename, the temporary file is removed and the target is untouched.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from typing import TextIO

_NEW_FILE_MODE = 0o644
"""Mode of a newly created target (mkstemp's own 0600 would hide reports from CI artifact steps)."""


@contextlib.contextmanager
def atomic_text_writer(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """Yield a UTF-8 text file whose content replaces ``path`` when the block exits cleanly.

    If the block raises (or the flush, fsync or rename fails), ``path`` keeps its old content (or
    stays absent) and no temporary file is left behind. The parent directory must exist.
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        os.fchmod(fd, _mode_for(target))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (see atomic_text_writer)."""
    with atomic_text_writer(path) as f:
        f.flush()
        f.buffer.write(data)


def _mode_for(target: str) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return _NEW_FILE_MODE


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable; best effort (not every platform can fsync a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
