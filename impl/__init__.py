"""The reference implementation: simulated Kafka clusters that emit the event vocabulary of
kconform.traces.events, one per slice (``replication/``, ``txn/``), over shared machinery at this
level (clock, network, messages, the world every node shares, the simulation core and its adapter
shell, the mutant registry)."""

from .mutants import MUTANTS
from .replication.cluster import ReferenceCluster
from .txn.cluster import TxnCluster

__all__ = ["MUTANTS", "ReferenceCluster", "TxnCluster"]
