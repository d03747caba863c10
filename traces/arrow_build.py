"""Arrow arrays from Python values, assembled from buffers (corpus writing, traces.corpus).

``pa.array`` on a Python list makes pyarrow try to import pandas first (to recognise a pandas
object): 0.3 CPU-s, a fifth of a 100k-event generation worker, for nothing. These builders make
the same arrays (same type, same values, same validity) from the values' bytes instead
(``array.array`` packs the integers in C, strings are joined once), so a process that only
writes corpora never imports pandas.

Every builder takes a dense list (one value per row, any placeholder in a null row) and an
optional validity bitmap (``validity(mask)``; None: no nulls). Values of the wrong type raise
TypeError or OverflowError, as ``pa.array`` would.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate, chain
from operator import attrgetter
from typing import Any

import pyarrow as pa

Builder = Callable[[Sequence[Any], pa.Buffer | None], pa.Array]
"""(dense values, validity bitmap or None) -> an array of one type."""


def validity(mask: bytes | bytearray) -> pa.Buffer:
    """The Arrow validity bitmap of a 0/1 byte per row (1: the row has a value)."""
    flags = pa.Array.from_buffers(pa.int8(), len(mask), [None, pa.py_buffer(mask)])
    buffer = flags.cast(pa.bool_()).buffers()[1]
    assert buffer is not None
    return buffer


def int64s(values: Sequence[int], valid: pa.Buffer | None = None) -> pa.Array:
    """An int64 array."""
    return pa.Array.from_buffers(pa.int64(), len(values), [valid, pa.py_buffer(array("q", values))])


def bools(values: Sequence[bool], valid: pa.Buffer | None = None) -> pa.Array:
    """A bool array."""
    flags = pa.Array.from_buffers(pa.int8(), len(values), [valid, pa.py_buffer(array("b", values))])
    return flags.cast(pa.bool_())


def strings(values: Sequence[str], valid: pa.Buffer | None = None) -> pa.Array:
    """A string (UTF-8) array."""
    encoded = list(map(str.encode, values))
    offsets = array("i", accumulate(map(len, encoded), initial=0))
    data = b"".join(encoded)
    return pa.Array.from_buffers(pa.string(), len(values), [valid, pa.py_buffer(offsets), pa.py_buffer(data)])


def _list_of(typ: pa.ListType, child: Callable[[list[Any]], pa.Array]) -> Builder:
    def build(values: Sequence[Sequence[Any]], valid: pa.Buffer | None = None) -> pa.Array:
        offsets = array("i", accumulate(map(len, values), initial=0))
        flat = child(list(chain.from_iterable(values)))
        return pa.Array.from_buffers(typ, len(values), [valid, pa.py_buffer(offsets)], children=[flat])

    return build


def _structs(typ: pa.StructType) -> Callable[[list[Any]], pa.Array]:
    names = [typ.field(i).name for i in range(typ.num_fields)]
    makers = [builder(typ.field(i).type) for i in range(typ.num_fields)]
    get_all = attrgetter(*names)

    def build(items: list[Any]) -> pa.Array:
        # Every field of an item read at once (one tuple per item), then transposed: one pass over
        # the items instead of one per field.
        if len(names) == 1:
            per_field: list[Sequence[Any]] = [list(map(get_all, items))]
        else:
            per_field = list(zip(*map(get_all, items), strict=True)) if items else [() for _ in names]
        children = [make(values, None) for make, values in zip(makers, per_field, strict=True)]
        return pa.Array.from_buffers(typ, len(items), [None], children=children)

    return build


_SCALARS: dict[pa.DataType, Builder] = {pa.int64(): int64s, pa.bool_(): bools, pa.string(): strings}


def builder(typ: pa.DataType) -> Builder:
    """The builder of arrays of ``typ``: int64, bool, string, a list of one of those or a list of
    structs of them (every type a corpus column has, traces.corpus.arrow_type). ValueError for
    another type."""
    if typ in _SCALARS:
        return _SCALARS[typ]
    if isinstance(typ, pa.ListType):
        value = typ.value_type
        if isinstance(value, pa.StructType):
            return _list_of(typ, _structs(value))
        if value in _SCALARS:
            scalar = _SCALARS[value]
            return _list_of(typ, lambda flat: scalar(flat, None))
    raise ValueError(f"no Arrow builder for {typ}")


def empty(typ: pa.DataType) -> Any:
    """The placeholder a dense list holds in a null row of ``typ``."""
    if typ == pa.int64() or typ == pa.bool_():
        return 0
    if typ == pa.string():
        return ""
    return ()
