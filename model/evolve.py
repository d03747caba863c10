"""``evolve``: ``dataclasses.replace`` for the model's frozen state values, without running ``__init__``.

The model's states are frozen dataclasses that every handler copies with a few fields changed;
``dataclasses.replace`` re-runs the generated ``__init__`` with every field, which is most of the
cost of a cheap handler (a clock tick, a follower's fetch state). ``evolve`` copies the instance
dictionary and overwrites the changed fields. The result is the object ``replace`` would build
(equal, same hash, same type) for every class it accepts: a dataclass whose fields all go through
``__init__`` (no ``init=False``, no ``InitVar``), without ``__post_init__`` or ``__slots__``;
other classes, and names that are not fields, raise TypeError like ``replace`` does.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")

_FIELDS: dict[type, frozenset[str]] = {}
"""Per accepted class: its field names."""


def _fields_of(cls: type) -> frozenset[str]:
    names = _FIELDS.get(cls)
    if names is not None:
        return names
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        raise TypeError(f"evolve() needs a dataclass without __post_init__ or __slots__, not {cls.__name__}")
    fields = dataclasses.fields(cls)
    pseudo = cls.__dataclass_fields__.values()
    if any(not f.init for f in fields) or any("InitVar" in str(f.type) for f in pseudo):
        raise TypeError(f"evolve() needs every field of {cls.__name__} to be an __init__ field")
    names = frozenset(f.name for f in fields)
    _FIELDS[cls] = names
    return names


def evolve(obj: T, **changes: Any) -> T:
    """A copy of the dataclass instance ``obj`` with ``changes``: what ``dataclasses.replace`` returns."""
    cls = type(obj)
    names = _FIELDS.get(cls) or _fields_of(cls)
    if not names.issuperset(changes):
        raise TypeError(f"{cls.__name__} has no field(s) {sorted(changes.keys() - names)}")
    new = object.__new__(cls)
    state = new.__dict__
    state.update(obj.__dict__)
    state.update(changes)
    return new


__all__ = ["evolve"]
