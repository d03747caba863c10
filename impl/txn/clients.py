"""Clients of the exactly-once slice: the transactional / idempotent producer, the consumer and
the group-offsets client.

Guarantees of the producer (kafka-facts §2.2, §8; TransactionManager):
- sequence numbers per partition start at 0 for a new (pid, epoch), grow by the batch size and
  wrap at Int.MaxValue; a retry re-sends the same batch (same sequences, a new request id);
- at most MAX_IN_FLIGHT batches per partition are in flight (max.in.flight.requests 5);
- a batch is re-sent after a retriable error (RETRY_BACKOFF_MS) or when unanswered for
  REQUEST_TIMEOUT_MS, until DELIVERY_TIMEOUT_MS after its first send: then it expires and the
  transaction can only abort;
- a partition gets records only after AddPartitionsToTxn succeeded for it; EndTxn is sent only when
  no batch or offset commit of the transaction is outstanding;
- coordinator requests go to the broker FindCoordinator names (the state partition's current
  leader); what the producer does with a coordinator's or group coordinator's error is the model's
  table of Kafka's TransactionManager (model.producer_errors.reaction, one handler per request):
  retried (after coordinator errors, CONCURRENT_TRANSACTIONS and the other retriable codes),
  fatal (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, ...: the producer stops for
  good), abortable (TRANSACTION_ABORTABLE, authorization: the application must abort), or abortable
  with an epoch bump (UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_ID_MAPPING of AddPartitionsToTxn,
  AddOffsetsToTxn and EndTxn; KIP-360, Kafka 2.6+: the abort is followed by an InitProducerId
  carrying the current (pid, epoch), and EndTxn is skipped after INVALID_PRODUCER_ID_MAPPING,
  TransactionManager.beginCompletingTransaction / completeTransaction);
- with transaction version 2 the producer continues with the (pid, epoch) EndTxn returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.model import producer_errors as PE
from kconform.traces.events import (
    ABORT_MARKER,
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    INVALID_PRODUCER_EPOCH,
    INVALID_PRODUCER_ID_MAPPING,
    NONE,
    NOT_COORDINATOR,
    NOT_ENOUGH_REPLICAS,
    NOT_LEADER_OR_FOLLOWER,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    PRODUCER_FENCED,
    REQUEST_TIMED_OUT,
    AbortedTxn,
    ConsumerPolled,
    Record,
    TopicOffset,
)

from ..messages import Message, Payload
from . import mutants as m
from .log import next_seq
from .messages import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    CoordinatorResponse,
    EndTxnRequest,
    GroupResponse,
    InitPidRequest,
    InitPidResponse,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TxnFetchRequest,
    TxnFetchResponse,
    TxnOffsetCommitRequest,
    TxnProduceRequest,
    TxnProduceResponse,
)
from .runtime import TxnWorld

MAX_IN_FLIGHT = 5
INT32_MAX = 2**31 - 1
INT16_MAX = 2**15 - 1
INT64_MAX = 2**63 - 1
RETRY_BACKOFF_MS = 100
REQUEST_TIMEOUT_MS = 30_000
DELIVERY_TIMEOUT_MS = 120_000
RETRIABLE = frozenset(
    {
        COORDINATOR_LOAD_IN_PROGRESS,
        COORDINATOR_NOT_AVAILABLE,
        NOT_COORDINATOR,
        CONCURRENT_TRANSACTIONS,
        NOT_ENOUGH_REPLICAS,
        NOT_LEADER_OR_FOLLOWER,
        REQUEST_TIMED_OUT,
        OUT_OF_ORDER_SEQUENCE_NUMBER,
    }
)
FENCED = frozenset({PRODUCER_FENCED, INVALID_PRODUCER_EPOCH})

_REQUEST_OF = {
    "init": PE.INIT_PRODUCER_ID,
    "add": PE.ADD_PARTITIONS,
    "add_offsets": PE.ADD_OFFSETS,
    "offset_commit": PE.TXN_OFFSET_COMMIT,
    "end": PE.END_TXN,
}
"""The TransactionManager handler (model.producer_errors) of each kind of coordinator request."""

UNINITIALIZED = "UNINITIALIZED"
INITIALIZING = "INITIALIZING"
READY = "READY"
IN_TRANSACTION = "IN_TRANSACTION"
COMMITTING = "COMMITTING_TRANSACTION"
ABORTING = "ABORTING_TRANSACTION"
ABORTABLE_ERROR = "ABORTABLE_ERROR"
FATAL_ERROR = "FATAL_ERROR"


def producer_node(client: int) -> int:
    """Network address of producer client ``client``."""
    return -10 - client


def producer_at(address: int) -> int:
    """The producer client whose network address is ``address`` (the inverse of ``producer_node``)."""
    return -10 - address


def consumer_node(consumer: int) -> int:
    """Network address of consumer ``consumer``."""
    return -40 - consumer


def consumer_at(address: int) -> int:
    """The consumer whose network address is ``address`` (the inverse of ``consumer_node``)."""
    return -40 - address


GROUP_CLIENT_NODE = -70


@dataclass
class _Batch:
    partition: str
    base_seq: int
    rids: tuple[int, ...]
    ctxn: int
    first_sent_ms: int = -1
    req: int = -1
    """Id of the request currently carrying the batch (-1: not in flight)."""


@dataclass
class _Pending:
    """A coordinator or group request awaiting its answer; re-sent by ``resend``."""

    kind: str
    payload: Payload
    dst_partition: str
    """The partition whose leader receives it (a state or offsets partition)."""
    req: int = -1


@dataclass
class _PartitionState:
    next_seq: int = 0
    in_flight: list[_Batch] = field(default_factory=list)
    queued: list[_Batch] = field(default_factory=list)


class _RequestTimeout:
    """The timer action of a coordinator or group request's timeout: ``producer._request_timed_out(req)``.

    One slotted object that holds the request's id, not the request: an answered request's timer
    stays queued until the clock reaches it (it fires as a no-op then, as in Kafka's
    NetworkClient, whose timeout check skips completed requests), and a closure over the request
    kept the request, its payload and five more objects alive that long (the epoch-exhaustion
    scenario queues 32,770 of them; the cyclic collector walked them all at every full pass)."""

    __slots__ = ("producer", "req")

    def __init__(self, producer: TxnProducer, req: int) -> None:
        self.producer = producer
        self.req = req

    def __call__(self) -> None:
        self.producer._request_timed_out(self.req)


class TxnProducer:
    """One producer instance: transactional (``txn_id``) or idempotent (``txn_id`` "")."""

    def __init__(self, client: int, txn_id: str, world: TxnWorld) -> None:
        self.client = client
        self.node = producer_node(client)
        self.txn_id = txn_id
        self.world = world
        self.state = UNINITIALIZED
        self.pid = -1
        self.epoch = -1
        self.ctxn = -1
        self.partitions: dict[str, _PartitionState] = {}
        self.added: set[str] = set()
        self.adding: set[str] = set()
        self.requests: dict[int, _Pending] = {}
        """Outstanding coordinator / group requests by request id."""
        self.offsets_to_commit: list[tuple[str, TopicOffset]] = []
        self.backing_off = 0
        """Coordinator / group requests waiting for their retry backoff."""
        self.end_commit: bool | None = None
        """The EndTxn the application asked for, waiting for outstanding work (None: none)."""
        self.bump_required = False
        """TransactionManager.epochBumpRequired: the transaction's end is followed by an
        InitProducerId with the current (pid, epoch) (KIP-360)."""
        self.last_error: int = NONE
        """TransactionManager.lastError's code, set by an abortable error, cleared when the
        transaction completes."""

    # ------------------------------------------------------------------------ application API

    def init(self) -> None:
        """initTransactions (or the idempotent producer's InitProducerId)."""
        if self.state not in (UNINITIALIZED, READY):
            return
        self.state = INITIALIZING
        expected_pid, expected_epoch = (self.pid, self.epoch) if self.txn_id and self.pid >= 0 else (-1, -1)
        request = InitPidRequest(self.txn_id, self.world.config.transaction_timeout_ms, expected_pid, expected_epoch)
        self._send_coordinator("init", request)

    def begin(self, ctxn: int) -> bool:
        if not self.txn_id or self.state != READY:
            return False
        self.state = IN_TRANSACTION
        self.ctxn = ctxn
        return True

    def send(self, partition: str, rids: tuple[int, ...]) -> None:
        if self.txn_id and self.state != IN_TRANSACTION:
            return
        if not self.txn_id and self.state != READY:
            return
        ps = self.partitions.setdefault(partition, _PartitionState())
        batch = _Batch(partition, ps.next_seq, rids, self.ctxn if self.txn_id else -1)
        ps.next_seq = next_seq(ps.next_seq, len(rids))
        ps.queued.append(batch)
        if self.txn_id and partition not in self.added and partition not in self.adding:
            self.adding.add(partition)
            self._send_coordinator("add", AddPartitionsRequest(self.txn_id, self.pid, self.epoch, (partition,)))
        self._drain(partition)

    def rogue_produce(
        self, partition: str, broker: int, seq_delta: int, epoch_delta: int, rids: tuple[int, ...]
    ) -> bool:
        """Send one batch an adversarial client may send under this producer's id (operation
        ``rogue_produce``: a shifted sequence and epoch, maybe to a non-leader, maybe before
        AddPartitionsToTxn); the answer finds no batch of this producer and is ignored, so the
        producer's own state never changes. False (nothing sent) when the operation says to ignore it."""
        if self.pid < 0 or (seq_delta == 0 and epoch_delta == 0):
            return False
        if self.txn_id and (epoch_delta > 0 or not self.world.config.verification):
            return False
        ps = self.partitions.get(partition)
        base_seq = (ps.next_seq if ps is not None else 0) + seq_delta
        epoch = self.epoch + epoch_delta
        if not 0 <= base_seq <= INT32_MAX or not 0 <= epoch <= INT16_MAX:
            return False
        leader = self.world.metadata.leaders[partition]
        dst = leader if broker < 0 else broker
        request = TxnProduceRequest(
            partition, self.txn_id, self.pid, epoch, base_seq, rids, bool(self.txn_id), self.ctxn if self.txn_id else -1
        )
        self.world.network.send(self.node, dst, request)
        return True

    def rogue_end_txn(self, broker: int, epoch_delta: int, commit: bool) -> None:
        """Send an EndTxn an adversarial client may send (operation ``rogue_end_txn``): this
        producer's id, its epoch shifted by ``epoch_delta``, at whatever moment of its transaction,
        to the coordinator (``broker`` -1) or another broker. Its answer finds no pending request
        of this producer and is ignored. Nothing is sent before the producer has an id, without a
        transactional id, or when the shifted epoch is not an int16 epoch."""
        epoch = self.epoch + epoch_delta
        if not self.txn_id or self.pid < 0 or not 0 <= epoch <= INT16_MAX:
            return
        coordinator = self.world.metadata.leaders[self.world.config.state_partition(self.txn_id)]
        dst = coordinator if broker < 0 else broker
        self.world.network.send(self.node, dst, EndTxnRequest(self.txn_id, self.pid, epoch, commit, -1))

    def rogue_add_partitions(self, partition: str, broker: int, epoch_delta: int) -> None:
        """Send an AddPartitionsToTxn an adversarial client may send (operation
        ``rogue_add_partitions``): this producer's id, its epoch shifted by ``epoch_delta``, for
        ``partition``, to the coordinator (``broker`` -1) or another broker; the answer is ignored.
        Nothing is sent before the producer has an id, without a transactional id, or when the
        shifted epoch is not an int16 epoch."""
        epoch = self.epoch + epoch_delta
        if not self.txn_id or self.pid < 0 or not 0 <= epoch <= INT16_MAX:
            return
        coordinator = self.world.metadata.leaders[self.world.config.state_partition(self.txn_id)]
        dst = coordinator if broker < 0 else broker
        self.world.network.send(self.node, dst, AddPartitionsRequest(self.txn_id, self.pid, epoch, (partition,)))

    def rogue_init_producer(self, broker: int, pid_delta: int, epoch_delta: int) -> None:
        """Send an InitProducerId an adversarial client may send (operation
        ``rogue_init_producer``): KIP-360's expected producer id and epoch are this producer's
        shifted, to the coordinator (``broker`` -1) or another broker; the answer is ignored.
        Nothing is sent before the producer has an id, without a transactional id, or when the
        shifted id or epoch is out of range."""
        pid, epoch = self.pid + pid_delta, self.epoch + epoch_delta
        if not self.txn_id or self.pid < 0 or not 0 <= pid <= INT64_MAX or not 0 <= epoch <= INT16_MAX:
            return
        coordinator = self.world.metadata.leaders[self.world.config.state_partition(self.txn_id)]
        dst = coordinator if broker < 0 else broker
        timeout_ms = self.world.config.transaction_timeout_ms
        self.world.network.send(self.node, dst, InitPidRequest(self.txn_id, timeout_ms, pid, epoch))

    def send_offsets(self, group: str, offset: TopicOffset) -> None:
        if not self.txn_id or self.state != IN_TRANSACTION:
            return
        self.offsets_to_commit.append((group, offset))
        self._send_coordinator("add_offsets", AddOffsetsRequest(self.txn_id, self.pid, self.epoch, group))

    def end(self, commit: bool) -> None:
        """commitTransaction / abortTransaction: EndTxn once nothing of the transaction is outstanding."""
        if commit and self.state != IN_TRANSACTION:
            return
        if not commit and self.state not in (IN_TRANSACTION, ABORTABLE_ERROR):
            return
        self.state = COMMITTING if commit else ABORTING
        self.end_commit = commit
        self._maybe_end()

    def busy(self) -> bool:
        """Whether this producer still has work it will do by itself (requests, batches, an EndTxn)."""
        if self.state == FATAL_ERROR:
            return False
        return (
            bool(self.requests)
            or self.backing_off > 0
            or self.end_commit is not None
            or any(ps.in_flight or ps.queued for ps in self.partitions.values())
        )

    # ------------------------------------------------------------------------------- sending

    def _send_coordinator(self, kind: str, payload: Payload) -> None:
        dst = self.world.config.state_partition(self.txn_id) if self.txn_id else self.world.config.data[0]
        self._send_pending(_Pending(kind, payload, dst))

    def _send_pending(self, pending: _Pending) -> None:
        """FindCoordinator (the partition's current leader), send, arm the request timeout."""
        leader = self.world.metadata.leaders[pending.dst_partition]
        pending.req = self.world.network.send(self.node, leader, pending.payload)
        self.requests[pending.req] = pending
        timeout = _RequestTimeout(self, pending.req)
        self.world.scheduler.schedule(REQUEST_TIMEOUT_MS, self.node, "request-timeout", timeout)

    def _request_timed_out(self, req: int) -> None:
        """Request ``req``'s timeout: re-send it if it is still unanswered (its entry in ``requests``)."""
        pending = self.requests.pop(req, None)
        if pending is not None and self.state != FATAL_ERROR:
            self._send_pending(pending)

    def _retry_later(self, pending: _Pending) -> None:
        self.backing_off += 1

        def retry() -> None:
            self.backing_off -= 1
            if self.state != FATAL_ERROR:
                self._send_pending(pending)

        self.world.scheduler.schedule(RETRY_BACKOFF_MS, self.node, "retry", retry)

    def _drain(self, partition: str) -> None:
        """Send queued batches of ``partition`` while fewer than MAX_IN_FLIGHT are in flight."""
        ps = self.partitions[partition]
        if self.txn_id and partition not in self.added:
            return
        while ps.queued and len(ps.in_flight) < MAX_IN_FLIGHT:
            batch = ps.queued.pop(0)
            ps.in_flight.append(batch)
            self._send_batch(batch)

    def _send_batch(self, batch: _Batch) -> None:
        if batch.first_sent_ms < 0:
            batch.first_sent_ms = self.world.now_ms
        leader = self.world.metadata.leaders[batch.partition]
        request = TxnProduceRequest(
            batch.partition,
            self.txn_id,
            self.pid,
            self.epoch,
            batch.base_seq,
            batch.rids,
            bool(self.txn_id),
            batch.ctxn,
        )
        batch.req = self.world.network.send(self.node, leader, request)
        req = batch.req

        def on_timeout() -> None:
            if batch.req == req:
                self._retry_batch(batch, 0)

        self.world.scheduler.schedule(REQUEST_TIMEOUT_MS, self.node, "produce-timeout", on_timeout)

    def _retry_batch(self, batch: _Batch, backoff_ms: int) -> None:
        """Re-send ``batch`` after ``backoff_ms``, or expire it past the delivery timeout."""
        batch.req = -1
        if self.world.now_ms - batch.first_sent_ms >= DELIVERY_TIMEOUT_MS:
            self._batch_done(batch, failed=True)
            return

        def resend() -> None:
            if self.state != FATAL_ERROR and batch in self.partitions[batch.partition].in_flight and batch.req == -1:
                self._send_batch(batch)

        self.world.scheduler.schedule(backoff_ms, self.node, "produce-retry", resend)

    def _batch_done(self, batch: _Batch, failed: bool) -> None:
        ps = self.partitions[batch.partition]
        ps.in_flight.remove(batch)
        batch.req = -1
        if failed and self.txn_id and self.state in (IN_TRANSACTION, COMMITTING):
            self.state = ABORTABLE_ERROR
            self.end_commit = None
        self._drain(batch.partition)
        self._maybe_end()

    def _maybe_end(self) -> None:
        if self.end_commit is None or self.state not in (COMMITTING, ABORTING):
            return
        outstanding = self.backing_off > 0 or any(
            p.kind in ("add", "add_offsets", "offset_commit", "end") for p in self.requests.values()
        )
        if outstanding or any(ps.in_flight for ps in self.partitions.values()):
            return
        for ps in self.partitions.values():
            ps.queued.clear()
        self.adding.clear()
        self.offsets_to_commit.clear()
        commit, self.end_commit = self.end_commit, None
        if self.bump_required and self.last_error == INVALID_PRODUCER_ID_MAPPING:
            # beginCompletingTransaction: "the server will not accept an EndTxnRequest, so skip
            # directly to InitProducerId"
            self._complete()
            return
        self._send_coordinator("end", EndTxnRequest(self.txn_id, self.pid, self.epoch, commit, self.ctxn))

    # ----------------------------------------------------------------------------- answers

    def receive(self, msg: Message) -> None:
        p = msg.payload
        if isinstance(p, TxnProduceResponse):
            self._on_produce_response(p)
            return
        assert isinstance(p, InitPidResponse | CoordinatorResponse | GroupResponse), type(p).__name__
        pending = self.requests.pop(p.req, None)
        if pending is None or self.state == FATAL_ERROR:
            return
        action = PE.reaction(_REQUEST_OF[pending.kind], p.error).action
        if action in (PE.RETRY, PE.FIND_COORDINATOR):
            self._retry_later(pending)  # the next send goes to the current coordinator
            return
        if action == PE.FATAL:
            self.state = FATAL_ERROR
            return
        if action != PE.OK:
            self._abortable(p.error, bump=action == PE.ABORTABLE_BUMP)
        ok = action == PE.OK
        if pending.kind == "init":
            assert isinstance(p, InitPidResponse)
            if ok:
                self._on_init(p)
        elif pending.kind == "add":
            assert isinstance(pending.payload, AddPartitionsRequest)
            self._on_added(pending.payload.partitions[0], ok)
        elif pending.kind == "add_offsets":
            self._on_offsets_added(ok)
        elif pending.kind == "offset_commit":
            self._maybe_end()
        elif ok:
            assert isinstance(p, CoordinatorResponse)
            self._on_end(p)

    def _on_init(self, p: InitPidResponse) -> None:
        self.last_error = NONE
        self.pid, self.epoch = p.pid, p.epoch
        self.partitions = {}
        self.added = set()
        self.state = READY

    def _on_added(self, partition: str, ok: bool) -> None:
        self.adding.discard(partition)
        if not ok:
            self.partitions[partition].queued.clear()
        else:
            self.added.add(partition)
            self._drain(partition)
        self._maybe_end()

    def _on_offsets_added(self, ok: bool) -> None:
        if not ok or not self.offsets_to_commit:
            self._maybe_end()
            return
        group, offset = self.offsets_to_commit.pop(0)
        request = TxnOffsetCommitRequest(group, self.txn_id, self.pid, self.epoch, self.ctxn, (offset,))
        self._send_pending(_Pending("offset_commit", request, self.world.config.offsets_partition(group)))

    def _on_end(self, p: CoordinatorResponse) -> None:
        if self.world.config.transaction_version == 2 and (p.pid, p.epoch) != (self.pid, self.epoch):
            self.pid, self.epoch = p.pid, p.epoch
            self.partitions = {}
        self._complete()

    def _complete(self) -> None:
        """TransactionManager.completeTransaction: READY, or, when an epoch bump is required,
        INITIALIZING with an InitProducerId carrying the current (pid, epoch) (KIP-360)."""
        self.added = set()
        self.ctxn = -1
        self.last_error = NONE
        if not self.bump_required:
            self.state = READY
            return
        self.bump_required = False
        self.state = INITIALIZING
        request = InitPidRequest(self.txn_id, self.world.config.transaction_timeout_ms, self.pid, self.epoch)
        self._send_coordinator("init", request)

    def _abortable(self, error: int = NONE, bump: bool = False) -> None:
        """TxnRequestHandler.abortableError (and abortableErrorIfPossible when ``bump``: Kafka's
        coordinators since 2.5 support the bump, InitProducerId v3). Kafka's
        transitionToAbortableError skips the transition while the transaction is being aborted
        (state ABORTING), and from INITIALIZING it is valid (TransactionManager.isTransitionValid)."""
        if bump and self.txn_id:
            self.bump_required = True
        if self.state in (IN_TRANSACTION, COMMITTING, INITIALIZING, ABORTABLE_ERROR):
            self.state = ABORTABLE_ERROR
            self.end_commit = None
            self.last_error = error

    def _on_produce_response(self, p: TxnProduceResponse) -> None:
        batch = next(
            (b for ps in self.partitions.values() for b in ps.in_flight if b.req == p.req and b.req >= 0), None
        )
        if batch is None or self.state == FATAL_ERROR:
            return
        if p.error == NONE:
            self._batch_done(batch, failed=False)
        elif p.error in FENCED:
            self.state = FATAL_ERROR
        elif p.error in RETRIABLE:
            self._retry_batch(batch, RETRY_BACKOFF_MS)
        else:
            self._batch_done(batch, failed=True)


class TxnConsumer:
    """A consumer with a position per partition, at either isolation level."""

    def __init__(self, consumer: int, world: TxnWorld) -> None:
        self.node = consumer_node(consumer)
        self.world = world
        self.positions: dict[str, int] = {}
        self._fetches: dict[int, TxnFetchRequest] = {}

    def fetch(self, partition: str, read_committed: bool) -> None:
        cfg = self.world.config
        request = TxnFetchRequest(
            partition, self.positions.get(partition, 0), read_committed, cfg.fetch_min_bytes, cfg.fetch_max_wait_ms
        )
        req = self.world.network.send(self.node, self.world.metadata.leaders[partition], request)
        self._fetches[req] = request

    def busy(self) -> bool:
        return False

    def receive(self, msg: Message) -> None:
        """Turn a fetch answer into what the application sees (CompletedFetch, kafka-facts §4)."""
        p = msg.payload
        assert isinstance(p, TxnFetchResponse), type(p).__name__
        request = self._fetches.get(p.req)
        if request is None or p.error != NONE:
            return
        filtering = request.read_committed and not self.world.mutant(m.NO_ABORTED_FILTER)
        rids = delivered_rids(p.records, p.aborted, filtering)
        next_offset = p.records[-1].offset + 1 if p.records else request.fetch_offset
        self.positions[request.partition] = max(self.positions.get(request.partition, 0), next_offset)
        self.world.events.emit(
            ConsumerPolled(self.node, p.req, request.partition, request.read_committed, tuple(rids), next_offset)
        )


def delivered_rids(records: tuple[Record, ...], aborted: tuple[AbortedTxn, ...], filtering: bool) -> list[int]:
    """CompletedFetch (kafka-facts §4): the record ids a consumer's application gets from a fetch
    answer; with ``filtering`` (read_committed) an aborted transaction's records are dropped from
    its first offset up to its ABORT marker; control records never reach the application."""
    pending = sorted(aborted, key=lambda a: a.first_offset)
    aborted_pids: set[int] = set()
    rids: list[int] = []
    for record in records:
        if filtering and record.pid >= 0:
            while pending and pending[0].first_offset <= record.offset:
                aborted_pids.add(pending.pop(0).pid)
            if record.control == ABORT_MARKER:
                aborted_pids.discard(record.pid)
                continue
            if record.txn and record.pid in aborted_pids:
                continue
        if record.control < 0:
            rids.append(record.rid)
    return rids


class GroupClient:
    """Plain OffsetCommit / OffsetFetch for any group (an admin or a non-transactional consumer)."""

    def __init__(self, world: TxnWorld) -> None:
        self.world = world

    def commit(self, group: str, offset: TopicOffset) -> None:
        self._send(group, OffsetCommitRequest(group, (offset,)))

    def fetch(self, group: str, require_stable: bool) -> None:
        self._send(group, OffsetFetchRequest(group, require_stable))

    def _send(self, group: str, payload: Payload) -> None:
        leader = self.world.metadata.leaders[self.world.config.offsets_partition(group)]
        self.world.network.send(GROUP_CLIENT_NODE, leader, payload)

    def receive(self, msg: Message) -> None:
        assert isinstance(msg.payload, GroupResponse), type(msg.payload).__name__
