"""The replication slice as the registry sees it: one ``Slice`` naming each of its parts."""

from __future__ import annotations

from kconform.conformance.replication import bmc, explore
from kconform.conformance.replication.coverage import reachable_keys
from kconform.conformance.replication.lockstep import Judge
from kconform.conformance.replication.machine import rules, swarm
from kconform.conformance.replication.scenarios import zoo
from kconform.conformance.slice import Slice
from kconform.impl.mutants import mutants_of
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model import invariants
from kconform.model.config import ReplicationConfig
from kconform.model.configs import REPLICATION, replication_from_json


def describe(cfg: ReplicationConfig) -> str:
    """The gate's one-line description of a replication configuration."""
    return f"protocol={cfg.protocol.value} replicas={cfg.replicas} min.insync.replicas={cfg.min_insync_replicas}"


SLICE: Slice[ReplicationConfig] = Slice(
    name=REPLICATION,
    title="replication of one partition (LEO, HW, ISR, leader epochs, truncation, elections, acks)",
    config_type=ReplicationConfig,
    parse_config=replication_from_json,
    gate_configs=lambda: ((REPLICATION, ReplicationConfig()),),
    describe=describe,
    make_judge=Judge,
    invariants=lambda: invariants.INVARIANTS,
    make_reference=ReferenceCluster,
    mutants=lambda: mutants_of(REPLICATION),
    swarm=swarm,
    machine_rules=rules,
    zoo=zoo,
    reachable_keys=reachable_keys,
    explore=explore.explore,
    bmc=bmc.bmc,
)
