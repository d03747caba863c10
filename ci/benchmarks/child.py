"""Run one benchmark measurement in a fresh Python process and read its figures.

A benchmark that compares two checkouts, or wants a clean heap per measurement, runs each measurement
as a child process that prints its figures as one JSON object on its last line of standard output.
:func:`json_child` is that contract written once: it bounds the child's run time, and a child that
exits non-zero or prints no JSON line raises :class:`ChildFailed` naming the command and the tail of
its standard error, so a benchmark never reports figures from a failed run.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ChildFailed", "json_child"]


class ChildFailed(RuntimeError):
    """A benchmark child exited non-zero, timed out, or printed no JSON figures on its last line."""


def json_child(argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 3600) -> dict[str, Any]:
    """Run ``argv`` and return the JSON object on the last line of its standard output.

    Guarantees: the child is killed after ``timeout`` seconds (``ChildFailed``); a non-zero exit or a
    last line that is not a JSON object raises ``ChildFailed`` with the command and up to 2,000
    characters of its standard error.
    """
    what = " ".join(argv[:3])
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            env=None if env is None else dict(env),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise ChildFailed(f"benchmark child timed out after {timeout:.0f} s: {what}") from err
    if done.returncode != 0:
        raise ChildFailed(f"benchmark child failed (exit {done.returncode}): {what}\n{done.stderr.strip()[-2000:]}")
    lines = done.stdout.strip().splitlines()
    try:
        figures = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        figures = None
    if not isinstance(figures, dict):
        raise ChildFailed(
            f"benchmark child printed no JSON figures on its last line: {what}\n{done.stderr.strip()[-2000:]}"
        )
    return figures
