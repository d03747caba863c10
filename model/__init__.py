"""The executable specification of one replicated Kafka partition.

``config`` (configuration and the protocol ladder), ``state`` (immutable state), ``epochs`` (the
leader-epoch cache), ``replication`` (one pure function per protocol handler), ``invariants`` (named
guarantees) and ``actions`` (atomic actions for state-space search).
"""

from kconform.model.config import ConfigError, Protocol, ReplicationConfig
from kconform.model.invariants import INVARIANTS, Invariant, Violation
from kconform.model.replication import NotEnabled
from kconform.model.state import State, initial_state

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
