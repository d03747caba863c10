"""Checking an implementation against the model, for every slice.

Shared machinery (written once): ``adapter`` (the plug-in interface), ``judge`` (the lockstep
judge's core), ``runner`` (one run), ``machine`` (the Hypothesis swarm machine's base),
``scenarios`` (the zoo runner), ``coverage`` (coverage keys and figures), ``hunt`` (budgeted
campaigns), ``slice`` (the slice interface) and ``registry`` (the slices). Each slice's own rules
live in its package: ``replication/`` (judge, machine, zoo, reachable outcomes, the model searches
explore and bmc) and ``txn/`` (judge, machine, zoo, reachable outcomes).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kconform.conformance.adapter import Adapter, AdapterError
    from kconform.conformance.judge import ALLOWED, INVARIANT_VIOLATION, NON_CONFORMANCE, Finding

_HOME: dict[str, str] = {
    "Adapter": "kconform.conformance.adapter",
    "AdapterError": "kconform.conformance.adapter",
    "ALLOWED": "kconform.conformance.judge",
    "INVARIANT_VIOLATION": "kconform.conformance.judge",
    "NON_CONFORMANCE": "kconform.conformance.judge",
    "Finding": "kconform.conformance.judge",
}
"""The names below are loaded on first use (PEP 562): a module that needs one part of the package
(a corpus generator reads the gate machines' draw ranges) does not import the judge."""


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = ["ALLOWED", "INVARIANT_VIOLATION", "NON_CONFORMANCE", "Adapter", "AdapterError", "Finding"]
