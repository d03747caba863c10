"""The reference implementation: a simulated Kafka cluster (brokers, controller, clients, network,
clock, disks) that emits the event vocabulary of kconform.traces.events."""

from .cluster import ReferenceCluster
from .mutants import MUTANTS

__all__ = ["MUTANTS", "ReferenceCluster"]
