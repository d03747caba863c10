"""Wire messages of the replication slice between the simulated nodes (requests, responses, metadata).

Payloads are frozen so a duplicated message is delivered twice with identical content. Each
response echoes what its handler on the receiving side needs to recognise a stale answer (the
leader and leader epoch the request was sent under, the fetch offset), as Kafka's fetcher keeps
that in its per-request state.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.fast_init import fast_frozen_inits
from kconform.traces.events import Entry

from ..messages import Payload


@dataclass(frozen=True)
class MetadataUpdate(Payload):
    """Controller → broker: the partition state of ``partition_epoch`` (KRaft metadata delta)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int


@dataclass(frozen=True)
class ProduceRequest(Payload):
    """Producer → broker: append record ``rid`` with ``acks``."""

    rid: int
    acks: int


@dataclass(frozen=True)
class ProduceResponse(Payload):
    """Broker → producer: the outcome of produce request ``req``."""

    req: int
    error: int


@dataclass(frozen=True)
class FetchRequest(Payload):
    """Follower → leader: replica Fetch from ``fetch_offset`` (KIP-320 / KIP-595 fields)."""

    leader: int
    fetch_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int
    follower_epoch: int
    broker_epoch: int = 0
    """The follower's broker epoch (KIP-903 ReplicaState.brokerEpoch; advances only with ELR)."""


@dataclass(frozen=True)
class FetchResponse(Payload):
    """Leader → follower: the answer to Fetch ``req`` plus the request's own fields echoed."""

    req: int
    error: int
    entries: tuple[Entry, ...]
    hw: int
    diverging_epoch: int
    diverging_end_offset: int
    leader_leo: int
    leader: int
    follower_epoch: int
    fetch_offset: int
    leader_log_start: int
    """The leader's log start offset (FetchResponse logStartOffset, KIP-107; -1 from a non-leader)."""


@dataclass(frozen=True)
class EpochQueryRequest(Payload):
    """Follower → leader: OffsetsForLeaderEpoch for ``requested_epoch`` (KIP-101/279/320)."""

    leader: int
    requested_epoch: int
    current_leader_epoch: int
    follower_epoch: int


@dataclass(frozen=True)
class EpochQueryResponse(Payload):
    """Leader → follower: (``epoch``, ``end_offset``) for query ``req``; request fields echoed."""

    req: int
    error: int
    epoch: int
    end_offset: int
    leader: int
    follower_epoch: int


@dataclass(frozen=True)
class AlterPartitionRequest(Payload):
    """Leader → controller: proposed ISR under the leader's epochs (KIP-497)."""

    leader: int
    leader_epoch: int
    partition_epoch: int
    isr: tuple[int, ...]
    broker_epochs: tuple[int, ...] = ()
    """AlterPartition v3 NewIsrWithEpochs (KIP-903): each member's broker epoch as the leader last
    saw it, aligned with ``isr``; sent only with ELR (the Kafka 4.x rung)."""


@dataclass(frozen=True)
class AlterPartitionResponse(Payload):
    """Controller → leader: the outcome of AlterPartition ``req`` and the controller's state."""

    req: int
    error: int
    isr: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int


@dataclass(frozen=True)
class ConsumerFetchRequest(Payload):
    """Consumer → broker: read_uncommitted Fetch from ``fetch_offset``; a Fetch that ``waits``
    carries fetch.min.bytes (records) and fetch.max.wait.ms (the plain one is answered at once)."""

    fetch_offset: int
    current_leader_epoch: int
    waits: bool = False
    min_bytes: int = 1
    max_wait_ms: int = 0


@dataclass(frozen=True)
class ConsumerFetchResponse(Payload):
    """Broker → consumer: the answer to consumer Fetch ``req``."""

    req: int
    error: int
    entries: tuple[Entry, ...]
    hw: int


@dataclass(frozen=True)
class ReplicaFetchRequest(Payload):
    """Follower-fetching consumer → any broker: a read_uncommitted Fetch with client metadata
    (KIP-392: rack_id, so a follower serves it and the leader may name a preferred read replica)."""

    fetch_offset: int
    current_leader_epoch: int


@dataclass(frozen=True)
class ReplicaFetchResponse(Payload):
    """Broker → follower-fetching consumer: the answer to Fetch ``req``."""

    req: int
    fetch_offset: int
    error: int
    entries: tuple[Entry, ...]
    hw: int
    preferred: int


fast_frozen_inits(vars(), __name__)  # each frozen dataclass here gets a cheaper, identical __init__ (model.fast_init)
