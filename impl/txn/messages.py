"""Wire messages of the exactly-once slice: client requests, their answers, verification and markers.

Payloads are frozen so a duplicated message is delivered twice with identical content. An answer
names the request it answers by its message id (``req`` for client requests, ``msg`` for
broker-to-broker ones), as Kafka's correlation id does; everything else a handler needs to judge
a stale answer travels in the request it keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.fast_init import fast_frozen_inits
from kconform.traces.events import AbortedTxn, Record, TopicOffset

from ..messages import Payload


@dataclass(frozen=True)
class InitPidRequest(Payload):
    """Client → coordinator: InitProducerId (``txn_id`` "" = idempotent producer; KIP-360 expected
    pid/epoch, -1 when not supplied)."""

    txn_id: str
    timeout_ms: int
    expected_pid: int
    expected_epoch: int


@dataclass(frozen=True)
class InitPidResponse(Payload):
    req: int
    error: int
    pid: int
    epoch: int


@dataclass(frozen=True)
class AddPartitionsRequest(Payload):
    """Client → coordinator: AddPartitionsToTxn (client versions)."""

    txn_id: str
    pid: int
    epoch: int
    partitions: tuple[str, ...]


@dataclass(frozen=True)
class AddOffsetsRequest(Payload):
    """Client → coordinator: AddOffsetsToTxn for ``group``."""

    txn_id: str
    pid: int
    epoch: int
    group: str


@dataclass(frozen=True)
class EndTxnRequest(Payload):
    """Client → coordinator: EndTxn; ``ctxn`` is the harness's client-transaction number."""

    txn_id: str
    pid: int
    epoch: int
    commit: bool
    ctxn: int


@dataclass(frozen=True)
class CoordinatorResponse(Payload):
    """Coordinator → client: the answer to AddPartitions / AddOffsets / EndTxn ``req``;
    ``pid``/``epoch`` are EndTxn's result identity (TV2), else -1."""

    req: int
    error: int
    pid: int
    epoch: int


@dataclass(frozen=True)
class TxnProduceRequest(Payload):
    """Client → partition leader: one batch of ``rids`` with sequences from ``base_seq``."""

    partition: str
    txn_id: str
    pid: int
    epoch: int
    base_seq: int
    rids: tuple[int, ...]
    transactional: bool
    ctxn: int


@dataclass(frozen=True)
class TxnProduceResponse(Payload):
    req: int
    error: int
    base_offset: int


@dataclass(frozen=True)
class VerifyRequest(Payload):
    """Partition leader → coordinator: AddPartitionsToTxn v4 verifyOnly (KIP-890 part 1)."""

    txn_id: str
    pid: int
    epoch: int
    partition: str


@dataclass(frozen=True)
class VerifyResponse(Payload):
    msg: int
    error: int


@dataclass(frozen=True)
class MarkerRequest(Payload):
    """Coordinator → partition leader: WriteTxnMarkers for one partition."""

    txn_id: str
    partition: str
    pid: int
    epoch: int
    commit: bool
    coordinator_epoch: int


@dataclass(frozen=True)
class MarkerResponse(Payload):
    msg: int
    error: int


@dataclass(frozen=True)
class TxnOffsetCommitRequest(Payload):
    """Producer → group coordinator: offsets committed inside a transaction."""

    group: str
    txn_id: str
    pid: int
    epoch: int
    ctxn: int
    offsets: tuple[TopicOffset, ...]


@dataclass(frozen=True)
class OffsetCommitRequest(Payload):
    """Group client → group coordinator: plain offset commit."""

    group: str
    offsets: tuple[TopicOffset, ...]


@dataclass(frozen=True)
class OffsetFetchRequest(Payload):
    group: str
    require_stable: bool


@dataclass(frozen=True)
class GroupResponse(Payload):
    """Group coordinator → client: the answer to (Txn)OffsetCommit / OffsetFetch ``req``."""

    req: int
    error: int
    offsets: tuple[TopicOffset, ...]


@dataclass(frozen=True)
class TxnFetchRequest(Payload):
    """Consumer → partition leader: Fetch from ``fetch_offset`` at an isolation level, with
    fetch.min.bytes (records) and fetch.max.wait.ms (0: answered at once, TxnConsumerFetchHandled)."""

    partition: str
    fetch_offset: int
    read_committed: bool
    min_bytes: int = 1
    max_wait_ms: int = 0


@dataclass(frozen=True)
class TxnFetchResponse(Payload):
    req: int
    error: int
    records: tuple[Record, ...]
    aborted: tuple[AbortedTxn, ...]


fast_frozen_inits(vars(), __name__)  # each frozen dataclass here gets a cheaper, identical __init__ (model.fast_init)
