"""The replication slice as the registry sees it: one ``Slice`` naming each of its parts."""

from __future__ import annotations

from kconform.conformance.replication import coverage, machine, scenarios
from kconform.conformance.replication.lockstep import Judge
from kconform.conformance.slice import Slice, SliceModules, slice_of
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model import invariants
from kconform.model.config import ReplicationConfig
from kconform.model.configs import REPLICATION, replication_from_json

GATE_CONFIG = ReplicationConfig(
    replica_fetch_wait_max_ms=500,
    fetch_max_wait_ms=500,
    fetch_min_bytes=2,
    eligible_leader_replicas_version=1,
    follower_fetching=True,
    log_start_moves=True,
)
"""The configuration ``--slice all`` gates: the suite's defaults with Kafka's default fetch waits
(replica.fetch.wait.max.ms and fetch.max.wait.ms 500 ms), so followers and consumers wait in the
purgatory (DelayedFetch); consumers draw fetch.min.bytes 1 or 2. On the top rung, with KIP-966
Eligible Leader Replicas (eligible.leader.replicas.version=1, on by default for new clusters since
Kafka 4.1; docs/elr.md), so the ELR zoo scenarios run too. The rungs below are gated by
``--slice replication`` (default configuration) and ``--set protocol=...``.
KIP-392 follower fetching is on, so the follower-fetching consumer (operation ``consume_replica``)
and its zoo scenarios run too. DeleteRecords and retention move log starts (``log_start_moves``,
issue 14 §2), so the log-start zoo scenario runs too."""


def describe(cfg: ReplicationConfig) -> str:
    """The gate's one-line description of a replication configuration."""
    out = f"protocol={cfg.protocol.value} replicas={cfg.replicas} min.insync.replicas={cfg.min_insync_replicas}"
    if cfg.delayed_fetch:
        out += (
            f" replica.fetch.wait.max.ms={cfg.replica_fetch_wait_max_ms} fetch.max.wait.ms={cfg.fetch_max_wait_ms}"
            f" fetch.min.bytes<={cfg.fetch_min_bytes}"
        )
    if cfg.elr:
        out += f" eligible.leader.replicas.version={cfg.eligible_leader_replicas_version}"
    if cfg.follower_fetching:
        out += f" follower-fetching client.rack=broker-{cfg.client_rack}"
    if cfg.log_start_moves:
        out += " log_start_moves"
    return out


SLICE: Slice[ReplicationConfig] = slice_of(
    SliceModules(machine, scenarios, coverage, invariants),
    name=REPLICATION,
    title="replication of one partition (LEO, HW, ISR, leader epochs, truncation, elections, acks)",
    config_type=ReplicationConfig,
    parse_config=replication_from_json,
    gate_configs=lambda: ((REPLICATION, GATE_CONFIG),),
    describe=describe,
    make_judge=Judge,
    make_reference=ReferenceCluster,
    search="kconform.conformance.replication.search",
)
