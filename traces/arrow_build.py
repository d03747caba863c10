"""Arrow arrays from Python values, assembled from buffers (corpus writing, traces.corpus).

``pa.array`` on a Python list makes pyarrow try to import pandas first (to recognise a pandas
object): 0.3 CPU-s, a fifth of a 100k-event generation worker, for nothing. These builders make
the same arrays (same type, same values, same validity) from the values' bytes instead
(``array.array`` packs the integers in C, strings are joined once), so a process that only
writes corpora never imports pandas.

Every builder takes a dense list (one value per row, any placeholder in a null row) and an
optional validity bitmap (``validity(mask)``; None: no nulls). Values of the wrong type raise
TypeError or OverflowError, as ``pa.array`` would. A ``placed`` builder makes the same array from
the values of the rows that have one only, given where they go (``Placement``): the corpus writer's
columns, without an Arrow ``take``, so a process that only writes corpora never imports
``pyarrow.compute`` either (0.03 CPU-s).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain
from operator import attrgetter
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

Builder = Callable[[Sequence[Any], pa.Buffer | None], pa.Array]
"""(dense values, validity bitmap or None) -> an array of one type."""


def validity(mask: bytes | bytearray) -> pa.Buffer:
    """The Arrow validity bitmap of a 0/1 byte per row (1: the row has a value)."""
    return _bits(np.frombuffer(mask, dtype=np.uint8))


def _bits(flags: np.ndarray[Any, Any]) -> pa.Buffer:
    """An Arrow bitmap (least significant bit first) of one flag per row (non-zero: set)."""
    return pa.py_buffer(np.packbits(flags, bitorder="little"))


def int64s(values: Sequence[int], valid: pa.Buffer | None = None) -> pa.Array:
    """An int64 array."""
    return pa.Array.from_buffers(pa.int64(), len(values), [valid, pa.py_buffer(array("q", values))])


def bools(values: Sequence[bool], valid: pa.Buffer | None = None) -> pa.Array:
    """A bool array."""
    flags = np.frombuffer(array("b", values), dtype=np.uint8)
    return pa.Array.from_buffers(pa.bool_(), len(values), [valid, _bits(flags)])


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
    return _by_type(typ, _SCALARS, _list_of)


def empty(typ: pa.DataType) -> Any:
    """The placeholder a dense list holds in a null row of ``typ``."""
    if typ == pa.int64() or typ == pa.bool_():
        return 0
    if typ == pa.string():
        return ""
    return ()


@dataclass(frozen=True)
class Placement:
    """Where the values of a column whose rows do not all have one go: ``order[j]`` is the index,
    in the list of values given, of the ``j``-th row (in row order) that has a value; ``mask`` is
    True in those rows, ``valid`` the validity bitmap of ``mask``."""

    order: np.ndarray[Any, Any]
    mask: np.ndarray[Any, Any]
    valid: pa.Buffer

    @property
    def rows(self) -> int:
        return len(self.mask)


Placed = Callable[[list[Any], Placement], pa.Array]
"""(values, where they go) -> an array of one type, null in the rows without a value."""

_B = TypeVar("_B", "Builder", "Placed")


def _placed_int64s(values: list[int], at: Placement) -> pa.Array:
    dense = np.zeros(at.rows, dtype=np.int64)
    dense[at.mask] = np.frombuffer(array("q", values), dtype=np.int64)[at.order]
    return pa.Array.from_buffers(pa.int64(), at.rows, [at.valid, pa.py_buffer(dense)])


def _placed_bools(values: list[bool], at: Placement) -> pa.Array:
    dense = np.zeros(at.rows, dtype=np.uint8)
    dense[at.mask] = np.frombuffer(array("b", values), dtype=np.uint8)[at.order]
    return pa.Array.from_buffers(pa.bool_(), at.rows, [at.valid, _bits(dense)])


def _offsets(lengths: Sequence[int], at: Placement) -> pa.Buffer:
    """int32 offsets of a variable-size column: each row's length (0 in a row without a value)."""
    dense = np.zeros(at.rows + 1, dtype=np.int64)
    dense[1:][at.mask] = np.fromiter(lengths, dtype=np.int64, count=len(lengths))
    return pa.py_buffer(np.cumsum(dense).astype(np.int32))


def _placed_strings(values: list[str], at: Placement) -> pa.Array:
    encoded = list(map(str.encode, map(values.__getitem__, at.order.tolist())))
    data = b"".join(encoded)
    return pa.Array.from_buffers(
        pa.string(), at.rows, [at.valid, _offsets(list(map(len, encoded)), at), pa.py_buffer(data)]
    )


def _placed_list_of(typ: pa.ListType, child: Callable[[list[Any]], pa.Array]) -> Placed:
    def build(values: list[Sequence[Any]], at: Placement) -> pa.Array:
        rows = list(map(values.__getitem__, at.order.tolist()))
        flat = child(list(chain.from_iterable(rows)))
        return pa.Array.from_buffers(typ, at.rows, [at.valid, _offsets(list(map(len, rows)), at)], children=[flat])

    return build


_PLACED_SCALARS: dict[pa.DataType, Placed] = {
    pa.int64(): _placed_int64s,
    pa.bool_(): _placed_bools,
    pa.string(): _placed_strings,
}


def placed(typ: pa.DataType) -> Placed:
    """The placed builder of arrays of ``typ`` (the types ``builder`` knows): the same array as
    ``builder(typ)`` of the dense list, from the values of the rows that have one; ValueError for
    another type."""
    return _by_type(typ, _PLACED_SCALARS, _placed_list_of)


def _by_type(
    typ: pa.DataType,
    scalars: Mapping[pa.DataType, _B],
    list_of: Callable[[pa.ListType, Callable[[list[Any]], pa.Array]], _B],
) -> _B:
    """What ``builder`` and ``placed`` share: a scalar type's entry of ``scalars``; for a list of
    structs or of a scalar, ``list_of`` over the builder of its flattened values. ValueError for
    another type."""
    if typ in scalars:
        return scalars[typ]
    if isinstance(typ, pa.ListType):
        value = typ.value_type
        if isinstance(value, pa.StructType):
            return list_of(typ, _structs(value))
        if value in _SCALARS:
            scalar = _SCALARS[value]
            return list_of(typ, lambda flat: scalar(flat, None))
    raise ValueError(f"no Arrow builder for {typ}")
