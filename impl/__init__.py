"""The reference implementation: simulated Kafka clusters that emit the event vocabulary of
kconform.traces.events, one per slice (``replication/``, ``txn/``), over shared machinery at this
level (clock, network, messages, the world every node shares, the simulation core and its adapter
shell, the mutant registry).

The names below are loaded on first use (PEP 562): a process that runs one slice's cluster (a
corpus worker) does not import the other slices' clusters."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .mutants import MUTANTS
    from .replication.cluster import ReferenceCluster
    from .txn.cluster import TxnCluster

_HOME: dict[str, str] = {
    "MUTANTS": "kconform.impl.mutants",
    "ReferenceCluster": "kconform.impl.replication.cluster",
    "TxnCluster": "kconform.impl.txn.cluster",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = ["MUTANTS", "ReferenceCluster", "TxnCluster"]
