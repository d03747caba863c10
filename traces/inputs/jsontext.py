"""JSON text as kconform accepts it, in every file alike.

Python's ``json`` module accepts more than a conformance tool may: duplicate keys (the last one
silently wins), ``NaN`` and ``Infinity``, integers of any length (and raises a bare ValueError past
4,300 digits), nesting until the interpreter's recursion limit. ``loads`` refuses all of these with
a ``JsonTextError`` naming the problem, bounds the nesting depth before parsing, and leaves floats
as floats (so a reader that wants an integer refuses ``89.0``).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted (the schema needs 6: step, events, event, list,
struct, value)."""

MAX_INT_DIGITS = 20
"""Longest integer literal accepted: int64's range needs 19 digits and a sign."""

MAX_LINE_BYTES = 64 << 20
"""Longest line of a JSON Lines file (64 MiB; a step line of the largest counterexample, 65,537
steps of InitProducerId round trips, is under 1 KiB)."""

MAX_FILE_BYTES = 1 << 30
"""Largest JSON or JSON Lines file read (1 GiB)."""


class JsonTextError(ValueError):
    """The text is not JSON kconform accepts; ``column`` is 1-based when known."""

    def __init__(self, message: str, column: int | None = None) -> None:
        self.column = column
        super().__init__(message if column is None else f"{message} at column {column}")


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")
_LONG_INT = re.compile(r"(?<![\d.eE+-])-?\d{" + str(MAX_INT_DIGITS + 1) + r",}(?![\d.eE])")


def _check_depth(bare: str) -> None:
    """``bare``: the text with every string emptied."""
    if bare.count("[") + bare.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _BRACKETS.finditer(bare):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_DEPTH:
            raise JsonTextError(f"nested deeper than {MAX_DEPTH} levels")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonTextError(f"duplicate key {key!r} in one object")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise JsonTextError(f"{name} is not a JSON number")


def loads(text: str) -> Any:
    """Parse one JSON value; JsonTextError on anything refused (see the module docstring)."""
    bare = _STRINGS.sub('""', text) if '"' in text else text
    _check_depth(bare)
    if _LONG_INT.search(bare) is not None:
        raise JsonTextError(f"an integer of more than {MAX_INT_DIGITS} digits")
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except json.JSONDecodeError as e:
        raise JsonTextError(f"not valid JSON: {e.msg}", e.colno) from None
    except RecursionError:  # _check_depth makes this unreachable; kept as a second fence
        raise JsonTextError(f"nested deeper than {MAX_DEPTH} levels") from None


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes; OSError as the OS reports it, JsonTextError past ``limit`` bytes (checked
    before reading)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise JsonTextError(f"{size:,} bytes: larger than the {limit:,} bytes kconform reads")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise JsonTextError(f"larger than the {limit:,} bytes kconform reads")
    return data
