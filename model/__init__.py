"""The executable specification of one replicated Kafka partition.

``config`` (configuration and the protocol ladder), ``state`` (immutable state), ``epochs`` (the
leader-epoch cache), ``replication`` (one pure function per protocol handler), ``invariants`` (named
guarantees) and ``actions`` (atomic actions for state-space search).

The names below are loaded on first use (PEP 562): importing one module of the package (a corpus
generator needs ``model.config`` but not the model's handlers or invariants) does not import them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kconform.model.config import ConfigError, Protocol, ReplicationConfig
    from kconform.model.invariants import INVARIANTS, Invariant, Violation
    from kconform.model.replication import NotEnabled
    from kconform.model.state import State, initial_state

_HOME: dict[str, str] = {
    "ConfigError": "kconform.model.config",
    "Protocol": "kconform.model.config",
    "ReplicationConfig": "kconform.model.config",
    "INVARIANTS": "kconform.model.invariants",
    "Invariant": "kconform.model.invariants",
    "Violation": "kconform.model.invariants",
    "NotEnabled": "kconform.model.replication",
    "State": "kconform.model.state",
    "initial_state": "kconform.model.state",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "INVARIANTS",
    "ConfigError",
    "Invariant",
    "NotEnabled",
    "Protocol",
    "ReplicationConfig",
    "State",
    "Violation",
    "initial_state",
]
