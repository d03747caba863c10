"""The registry of slices: the one place that knows which slices exist.

Everything that works for any slice (runner, campaigns, gate, replay, coverage, reports, trace
generation, the miner) asks this module for a ``Slice`` (conformance.slice): by name (``get``),
by configuration (``for_config``) or all of them in the gate's order (``all_slices``). The
built-in slices are modules named in ``BUILTIN_SLICES``, each defining ``SLICE``; a module is
imported on the first lookup that needs it, so importing the registry (or listing the names)
costs nothing and a slice's machinery (Hypothesis, z3, the reference cluster) loads only when
used. ``register`` adds another slice at run time (a plug-in, or a test's fake slice).
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

from kconform.conformance.slice import ModelSearch, Slice
from kconform.model.config import ConfigError
from kconform.model.configs import register_config, slice_of, unregister_config

BUILTIN_SLICES: dict[str, str] = {
    "replication": "kconform.conformance.replication.slice",
    "txn": "kconform.conformance.txn.slice",
    "fetch": "kconform.conformance.fetch.slice",
}
"""Name -> module defining the built-in slice (its ``SLICE``), in the order the gate runs them.
Adding a slice is one line here."""

_slices: dict[str, Slice[Any]] = {}
_by_type: dict[type, Slice[Any]] = {}


class UnknownSlice(LookupError):
    """No registered slice has this name or configuration type."""


def register(s: Slice[Any]) -> Slice[Any]:
    """Add ``s`` (and its config parser, model.configs.register_config); a name or configuration
    type already registered by another slice is an error."""
    other = _slices.get(s.name) or _by_type.get(s.config_type)
    if other is not None and other is not s:
        raise ValueError(f"slice {s.name!r} clashes with the registered slice {other.name!r}")
    _slices[s.name] = s
    _by_type[s.config_type] = s
    register_config(s.name, s.config_type, s.parse_config)
    return s


def unregister(name: str) -> None:
    """Remove the slice ``name`` (tests registering a fake slice clean up with it)."""
    s = _slices.pop(name, None)
    if s is not None:
        _by_type.pop(s.config_type, None)
        unregister_config(name)


def _load(name: str) -> Slice[Any] | None:
    """The slice ``name``: registered already, or a built-in one imported now; None if unknown."""
    found = _slices.get(name)
    if found is not None:
        return found
    module = BUILTIN_SLICES.get(name)
    if module is None:
        return None
    defined = getattr(importlib.import_module(module), "SLICE", None)
    if not isinstance(defined, Slice) or defined.name != name:
        raise TypeError(f"{module} defines no SLICE named {name!r} (a conformance.slice.Slice)")
    return register(defined)


def names() -> tuple[str, ...]:
    """The names of every slice, built-in ones first in the gate's order (imports nothing)."""
    return (*BUILTIN_SLICES, *(n for n in _slices if n not in BUILTIN_SLICES))


def get(name: str) -> Slice[Any]:
    """The slice called ``name``; UnknownSlice lists the known ones."""
    found = _load(name)
    if found is None:
        raise UnknownSlice(f"unknown slice {name!r} (one of {', '.join(names())})")
    return found


def all_slices() -> tuple[Slice[Any], ...]:
    """Every slice, in ``names`` order (imports the built-in ones)."""
    return tuple(get(n) for n in names())


def for_config(cfg: object) -> Slice[Any]:
    """The slice whose configuration type is exactly ``cfg``'s type. Only that slice is imported
    when model.configs knows the type (a corpus worker of one slice loads no other slice's
    machinery); otherwise every slice is."""
    found = _by_type.get(type(cfg))
    if found is None:
        with contextlib.suppress(ConfigError):
            _load(slice_of(cfg))
        found = _by_type.get(type(cfg))
    if found is None:
        all_slices()
        found = _by_type.get(type(cfg))
    if found is None:
        raise UnknownSlice(f"no slice has configurations of type {type(cfg).__name__}")
    return found


def searchable() -> tuple[str, ...]:
    """The names of the slices that have a model search (``kconform explore`` / ``bmc``)."""
    return tuple(s.name for s in all_slices() if s.search is not None)


def search_of(s: Slice[Any]) -> ModelSearch[Any]:
    """The model search of slice ``s`` (its ``search`` module's ``SEARCH``, imported now);
    UnknownSlice, naming the slices that have one, if ``s`` has none."""
    if s.search is None:
        raise UnknownSlice(f"the {s.name} slice has no model search (slices with one: {', '.join(searchable())})")
    defined = getattr(importlib.import_module(s.search), "SEARCH", None)
    if not isinstance(defined, ModelSearch):
        raise TypeError(f"{s.search} defines no SEARCH (a conformance.slice.ModelSearch)")
    return defined


__all__ = [
    "BUILTIN_SLICES",
    "UnknownSlice",
    "all_slices",
    "for_config",
    "get",
    "names",
    "register",
    "search_of",
    "searchable",
    "unregister",
]
