"""The transaction coordinator of one ``__transaction_state`` partition on one broker, at one
coordinator epoch (TransactionCoordinator + TransactionStateManager + the marker channel).

Guarantees (kafka-facts §1):
- every state change is appended to the durable state log before it is answered or acted on
  (appends are synchronous here, so no ``pendingState`` is ever observable and
  CONCURRENT_TRANSACTIONS comes only from Prepare* states and fencing);
- a coordinator that lost the partition (``active`` false) neither answers nor sends: its timers
  stop and answers to its markers change nothing; a newly loaded coordinator re-sends the markers
  of every transaction its log leaves in PrepareCommit/PrepareAbort;
- markers are re-sent until every partition acknowledged (retriable errors after
  MARKER_BACKOFF_MS, lost messages after MARKER_TIMEOUT_MS); then Complete* is written;
- Ongoing transactions older than their timeout are aborted with a bumped epoch every
  ``abort_timed_out_interval_ms`` (KAFKA-6119); idle ids expire (kafka-facts §1.7).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.model.errors import RETRIABLE_MARKER_ERRORS
from kconform.model.txn_config import SHORT_MAX
from kconform.traces.events import (
    CONCURRENT_TRANSACTIONS,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_REQUEST,
    INVALID_TRANSACTION_TIMEOUT,
    INVALID_TXN_STATE,
    NONE,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
    AddOffsetsHandled,
    AddPartitionsHandled,
    CoordinatorLoaded,
    EndTxnHandled,
    InitProducerIdHandled,
    MarkerResponseHandled,
    MarkerSent,
    TxnIdExpired,
    TxnTimedOut,
    VerifyHandled,
)

from ..clock import TimerAction
from ..messages import Message
from . import mutants as m
from .messages import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    CoordinatorResponse,
    EndTxnRequest,
    InitPidRequest,
    InitPidResponse,
    MarkerRequest,
    MarkerResponse,
    VerifyRequest,
    VerifyResponse,
)
from .runtime import TxnRecord, TxnWorld

EMPTY = "Empty"
ONGOING = "Ongoing"
PREPARE_COMMIT = "PrepareCommit"
PREPARE_ABORT = "PrepareAbort"
COMPLETE_COMMIT = "CompleteCommit"
COMPLETE_ABORT = "CompleteAbort"
PREPARE = (PREPARE_COMMIT, PREPARE_ABORT)
COMPLETE = (COMPLETE_COMMIT, COMPLETE_ABORT)

MARKER_BACKOFF_MS = 100
"""Re-send delay after a retriable marker error (the channel manager's retry backoff)."""
MARKER_TIMEOUT_MS = 30_000
"""A marker unanswered this long is re-sent (request.timeout.ms of the inter-broker client)."""
TXN_ID_EXPIRY_CHECK_MS = 3_600_000
"""transaction.remove.expired.transaction.cleanup.interval.ms (kafka-facts §8)."""


@dataclass
class TxnMetadata:
    """TransactionMetadata: the fields of the log record plus the markers still unacknowledged."""

    pid: int
    epoch: int
    timeout_ms: int
    prev_pid: int = -1
    next_pid: int = -1
    last_epoch: int = -1
    state: str = EMPTY
    partitions: set[str] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = 0
    markers: dict[str, int] = field(default_factory=dict)
    """Partition → id of the marker message in flight (-1: waiting to be re-sent)."""

    def record(self) -> TxnRecord:
        return TxnRecord(
            self.pid,
            self.prev_pid,
            self.next_pid,
            self.epoch,
            self.last_epoch,
            self.timeout_ms,
            self.state,
            tuple(sorted(self.partitions)),
            self.start_ms,
            self.last_update_ms,
        )

    @staticmethod
    def from_record(r: TxnRecord) -> TxnMetadata:
        return TxnMetadata(
            r.pid,
            r.epoch,
            r.timeout_ms,
            r.prev_pid,
            r.next_pid,
            r.last_epoch,
            r.state,
            set(r.partitions),
            r.start_ms,
            r.last_update_ms,
        )


class TxnCoordinator:
    """The coordinator of ``state_partition`` on broker ``node`` at ``coordinator_epoch``."""

    def __init__(self, node: int, world: TxnWorld, state_partition: str, coordinator_epoch: int) -> None:
        self.node = node
        self.world = world
        self.state_partition = state_partition
        self.coordinator_epoch = coordinator_epoch
        self.loading = True
        self.active = True
        self.txns: dict[str, TxnMetadata] = {}
        self._markers_in_flight: dict[int, tuple[str, str]] = {}
        """Marker message id → (transactional id, partition)."""
        self._due_markers: list[str] = []
        """Transactions that entered Prepare* in the running handler."""

    # ------------------------------------------------------------------------------- load

    def load(self) -> None:
        """Replay the state log; re-send markers of every Prepare* transaction (KIP-98)."""
        if not self.active:
            return
        log = self.world.metadata.state_logs[self.state_partition]
        self.txns = {txn_id: TxnMetadata.from_record(r) for txn_id, r in sorted(log.replay().items())}
        self.loading = False
        self.world.events.emit(CoordinatorLoaded(self.node, self.state_partition, self.coordinator_epoch))
        if not self.world.mutant(m.FAILOVER_FORGETS_PREPARE):
            for txn_id, meta in sorted(self.txns.items()):
                if meta.state in PREPARE:
                    self._send_markers(txn_id, meta)
        self._schedule(self.world.config.abort_timed_out_interval_ms, "txn-timeout-abort", self._abort_timed_out)
        self._schedule(TXN_ID_EXPIRY_CHECK_MS, "txn-id-expiry", self._expire_ids)

    def deactivate(self) -> None:
        """The partition moved away: forget in-memory work (its timers stop on their own)."""
        self.active = False
        self.txns = {}
        self._markers_in_flight = {}

    def _schedule(self, delay_ms: int, name: str, action: TimerAction) -> None:
        def fire() -> None:
            if self.active:
                action()
                self._schedule(delay_ms, name, action)

        self.world.scheduler.schedule(delay_ms, self.node, name, fire)

    def _write(self, txn_id: str, meta: TxnMetadata) -> None:
        meta.last_update_ms = self.world.now_ms
        self.world.metadata.state_logs[self.state_partition].append(txn_id, meta.record())

    def busy(self) -> bool:
        """Whether this coordinator still has work of its own that ends a transaction: loading is
        pending, a transaction is Ongoing (the timeout abort is a timer that will fire), or a
        Prepare* transaction has markers not yet acknowledged (in flight or waiting to be
        re-sent). A Prepare* transaction with no marker outstanding is not work: nothing here will
        ever complete it, so the world is quiet and the Quiesced liveness check (traces/events.py)
        reports it as a hanging transaction instead of waiting for it until the bound runs out."""
        if not self.active:
            return False
        return self.loading or any(t.state == ONGOING or (t.state in PREPARE and t.markers) for t in self.txns.values())

    # ------------------------------------------------------------------------ InitProducerId

    def handle_init_pid(self, msg: Message, req: InitPidRequest) -> None:
        """kafka-facts §1.3, steps 3-10."""
        error, pid, epoch, state = self._init_pid(req)
        self.world.events.emit(
            InitProducerIdHandled(
                self.node,
                msg.msg_id,
                req.txn_id,
                True,
                req.timeout_ms,
                req.expected_pid,
                req.expected_epoch,
                error,
                pid,
                epoch,
                state,
            )
        )
        self.world.network.send(self.node, msg.src, InitPidResponse(msg.msg_id, error, pid, epoch))
        self._flush_markers()

    def _init_pid(self, req: InitPidRequest) -> tuple[int, int, int, str]:
        cfg = self.world.config
        meta = self.txns.get(req.txn_id)
        if not 0 < req.timeout_ms <= cfg.transaction_max_timeout_ms:
            return INVALID_TRANSACTION_TIMEOUT, -1, -1, meta.state if meta else ""
        if (req.expected_pid == -1) != (req.expected_epoch == -1):
            return INVALID_REQUEST, -1, -1, meta.state if meta else ""
        if meta is None:
            meta = TxnMetadata(self.world.metadata.allocate_pid(), -1, req.timeout_ms)
            meta.last_update_ms = self.world.now_ms
            self.txns[req.txn_id] = meta
        exhausted = req.expected_epoch >= SHORT_MAX - 1
        if req.expected_pid != -1 and not (
            meta.epoch == -1 or req.expected_pid == meta.pid or (req.expected_pid == meta.prev_pid and exhausted)
        ):
            return PRODUCER_FENCED, -1, -1, meta.state
        if meta.state in PREPARE:
            return CONCURRENT_TRANSACTIONS, -1, -1, meta.state
        if meta.state == ONGOING:
            meta.last_epoch, meta.epoch = -1, meta.epoch + 1  # prepareFenceProducerEpoch
            self._prepare(req.txn_id, meta, commit=False)
            return CONCURRENT_TRANSACTIONS, -1, -1, meta.state
        if (
            meta.epoch >= SHORT_MAX - 1
            and req.expected_epoch in (-1, meta.epoch)
            and not self.world.mutant(m.EPOCH_OVERFLOW)
        ):
            meta.last_epoch = meta.epoch if req.expected_epoch != -1 else -1
            meta.prev_pid, meta.pid, meta.epoch = meta.pid, self.world.metadata.allocate_pid(), 0
        elif req.expected_epoch == -1:
            meta.last_epoch, meta.epoch = -1, meta.epoch + 1
        elif req.expected_epoch == meta.epoch or meta.epoch == -1:
            meta.last_epoch, meta.epoch = meta.epoch, meta.epoch + 1
        elif req.expected_epoch != meta.last_epoch:
            return PRODUCER_FENCED, -1, -1, meta.state
        meta.state = EMPTY
        meta.partitions = set()
        meta.start_ms = -1
        meta.timeout_ms = req.timeout_ms
        self._write(req.txn_id, meta)
        return NONE, meta.pid, meta.epoch, meta.state

    # --------------------------------------------------------------- AddPartitions / AddOffsets

    def handle_add_partitions(self, msg: Message, req: AddPartitionsRequest) -> None:
        error, state = self._add(req.txn_id, req.pid, req.epoch, set(req.partitions))
        self.world.events.emit(
            AddPartitionsHandled(self.node, msg.msg_id, req.txn_id, req.pid, req.epoch, req.partitions, error, state)
        )
        self.world.network.send(self.node, msg.src, CoordinatorResponse(msg.msg_id, error, -1, -1))

    def handle_add_offsets(self, msg: Message, req: AddOffsetsRequest) -> None:
        partition = self.world.config.offsets_partition(req.group)
        error, state = self._add(req.txn_id, req.pid, req.epoch, {partition})
        self.world.events.emit(
            AddOffsetsHandled(self.node, msg.msg_id, req.txn_id, req.pid, req.epoch, req.group, error, state)
        )
        self.world.network.send(self.node, msg.src, CoordinatorResponse(msg.msg_id, error, -1, -1))

    def _add(self, txn_id: str, pid: int, epoch: int, partitions: set[str]) -> tuple[int, str]:
        """handleAddPartitionsToTransaction (kafka-facts §1.4): (error, state after)."""
        meta = self.txns.get(txn_id)
        if meta is None or meta.pid != pid:
            return INVALID_PRODUCER_ID_MAPPING, meta.state if meta else ""
        if epoch != meta.epoch:
            return PRODUCER_FENCED, meta.state
        if meta.state in PREPARE:
            return CONCURRENT_TRANSACTIONS, meta.state
        if meta.state == ONGOING and partitions <= meta.partitions:
            return NONE, meta.state
        if meta.state != ONGOING:
            meta.start_ms = self.world.now_ms
        meta.partitions |= partitions
        meta.state = ONGOING
        self._write(txn_id, meta)
        return NONE, meta.state

    # --------------------------------------------------------------------------------- EndTxn

    def handle_end_txn(self, msg: Message, req: EndTxnRequest) -> None:
        if self.world.config.transaction_version == 2:
            error, pid, epoch, state = self._end_txn_v2(req)
        else:
            error, pid, epoch, state = self._end_txn_v0(req)
        self.world.events.emit(
            EndTxnHandled(
                self.node, msg.msg_id, req.txn_id, req.pid, req.epoch, req.ctxn, req.commit, error, state, pid, epoch
            )
        )
        self.world.network.send(self.node, msg.src, CoordinatorResponse(msg.msg_id, error, pid, epoch))
        self._flush_markers()

    def _end_txn_v0(self, req: EndTxnRequest) -> tuple[int, int, int, str]:
        """The TV0 table of kafka-facts §1.5; result identity = the request's."""
        meta = self.txns.get(req.txn_id)
        if meta is None or meta.pid != req.pid:
            return INVALID_PRODUCER_ID_MAPPING, -1, -1, meta.state if meta else ""
        if req.epoch != meta.epoch:
            return PRODUCER_FENCED, -1, -1, meta.state
        error = self._end_by_state(req.txn_id, meta, req.commit)
        return (error, req.pid, req.epoch, meta.state) if error == NONE else (error, -1, -1, meta.state)

    def _end_txn_v2(self, req: EndTxnRequest) -> tuple[int, int, int, str]:
        """KIP-890 part 2 (kafka-facts §1.5, this version): every EndTxn bumps the epoch."""
        meta = self.txns.get(req.txn_id)
        if meta is None:
            return INVALID_PRODUCER_ID_MAPPING, -1, -1, ""
        retry_on_overflow = req.pid == meta.prev_pid and req.epoch == SHORT_MAX - 1 and meta.epoch == 0
        if req.pid != meta.pid and not retry_on_overflow:
            return INVALID_PRODUCER_ID_MAPPING, -1, -1, meta.state
        retry_on_bump = meta.epoch == req.epoch + 1
        current = req.pid == meta.pid and req.epoch == meta.epoch
        if meta.state == EMPTY or (meta.state in COMPLETE and current):
            # the later trunk's TV2 table (kafka-facts §1.5 [later trunk]): a current-epoch EndTxn on
            # Empty / Complete* is a new one: commit → INVALID_TXN_STATE, abort → an empty abort
            if not current:
                return PRODUCER_FENCED, -1, -1, meta.state
            if req.commit:
                return INVALID_TXN_STATE, -1, -1, meta.state
            self._empty_abort(req.txn_id, meta)
            return NONE, meta.pid, meta.epoch, meta.state
        if meta.state == ONGOING:
            valid = req.epoch == meta.epoch or (
                meta.state == ONGOING and retry_on_bump and self.world.mutant(m.LATE_ENDTXN_NEXT_TXN)
            )
        elif meta.state in PREPARE:
            valid = retry_on_bump
        else:
            valid = retry_on_bump or retry_on_overflow
        if not valid:
            return PRODUCER_FENCED, -1, -1, meta.state
        error = self._end_by_state(req.txn_id, meta, req.commit)
        if error != NONE:
            return error, -1, -1, meta.state
        if meta.state in PREPARE and meta.next_pid >= 0:
            return NONE, meta.next_pid, 0, meta.state
        return NONE, meta.pid, meta.epoch, meta.state

    def _empty_abort(self, txn_id: str, meta: TxnMetadata) -> None:
        """TV2 abort with no transaction: bump the epoch (allocating the next producer id at an
        exhausted epoch), write PrepareAbort and, with no marker to send, CompleteAbort."""
        if meta.epoch >= SHORT_MAX - 1:
            meta.next_pid = self.world.metadata.allocate_pid()
        meta.last_epoch, meta.epoch = meta.epoch, meta.epoch + 1
        meta.partitions = set()
        meta.start_ms = self.world.now_ms
        self._prepare(txn_id, meta, commit=False)
        self._due_markers.remove(txn_id)
        self._complete(txn_id, meta)

    def _end_by_state(self, txn_id: str, meta: TxnMetadata, commit: bool) -> int:
        """The state column of the EndTxn table (both versions); Ongoing → Prepare*."""
        if meta.state == ONGOING:
            if self.world.config.transaction_version == 2:
                if meta.epoch >= SHORT_MAX - 1:
                    meta.next_pid = self.world.metadata.allocate_pid()
                meta.last_epoch, meta.epoch = meta.epoch, meta.epoch + 1
            self._prepare(txn_id, meta, commit)
            return NONE
        same = PREPARE_COMMIT if commit else PREPARE_ABORT
        done = COMPLETE_COMMIT if commit else COMPLETE_ABORT
        if meta.state == same:
            return CONCURRENT_TRANSACTIONS
        if meta.state == done:
            return NONE
        return INVALID_TXN_STATE

    def _prepare(self, txn_id: str, meta: TxnMetadata, commit: bool) -> None:
        """Write Prepare*; the markers go out after the handler answered (``_flush_markers``)."""
        meta.state = PREPARE_COMMIT if commit else PREPARE_ABORT
        self._write(txn_id, meta)
        self._due_markers.append(txn_id)

    def _flush_markers(self) -> None:
        due, self._due_markers = self._due_markers, []
        for txn_id in due:
            self._send_markers(txn_id, self.txns[txn_id])

    # ----------------------------------------------------------------------------- markers

    def _send_markers(self, txn_id: str, meta: TxnMetadata) -> None:
        meta.markers = {}
        for partition in sorted(meta.partitions):
            self._send_marker(txn_id, meta, partition)

    def _send_marker(self, txn_id: str, meta: TxnMetadata, partition: str) -> None:
        leader = self.world.metadata.leaders[partition]
        commit = meta.state == PREPARE_COMMIT
        request = MarkerRequest(txn_id, partition, meta.pid, meta.epoch, commit, self.coordinator_epoch)
        msg_id = self.world.network.send(self.node, leader, request)
        meta.markers[partition] = msg_id
        self._markers_in_flight[msg_id] = (txn_id, partition)
        self.world.events.emit(
            MarkerSent(
                self.node, msg_id, txn_id, partition, leader, meta.pid, meta.epoch, commit, self.coordinator_epoch
            )
        )

        def on_timeout() -> None:
            self._resend_if(txn_id, partition, msg_id)

        self.world.scheduler.schedule(MARKER_TIMEOUT_MS, self.node, "marker-timeout", on_timeout)

    def _resend_if(self, txn_id: str, partition: str, msg_id: int) -> None:
        """Re-send the marker of ``partition`` if ``msg_id`` is still the one it waits for."""
        meta = self.txns.get(txn_id)
        if not self.active or meta is None or meta.state not in PREPARE or meta.markers.get(partition) != msg_id:
            return
        self._send_marker(txn_id, meta, partition)  # a late answer to msg_id is then stale

    def owns_marker(self, msg_id: int) -> bool:
        return msg_id in self._markers_in_flight

    def handle_marker_response(self, resp: MarkerResponse) -> None:
        """TransactionMarkerRequestCompletionHandler (kafka-facts §1.8)."""
        txn_id, partition = self._markers_in_flight[resp.msg]  # kept: a duplicated answer is stale
        meta = self.txns.get(txn_id)
        if meta is None or meta.state not in PREPARE or meta.markers.get(partition) != resp.msg:
            self.world.events.emit(MarkerResponseHandled(self.node, resp.msg, resp.error, meta.state if meta else ""))
            return
        if resp.error in RETRIABLE_MARKER_ERRORS:
            meta.markers[partition] = -1

            def resend() -> None:
                if self.active and meta.state in PREPARE and meta.markers.get(partition) == -1:
                    self._send_marker(txn_id, meta, partition)

            self.world.scheduler.schedule(MARKER_BACKOFF_MS, self.node, "marker-retry", resend)
        else:  # NONE; INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED give the partition up
            del meta.markers[partition]
            if not meta.markers:
                self._complete(txn_id, meta)
        self.world.events.emit(MarkerResponseHandled(self.node, resp.msg, resp.error, meta.state))

    def _complete(self, txn_id: str, meta: TxnMetadata) -> None:
        meta.state = COMPLETE_COMMIT if meta.state == PREPARE_COMMIT else COMPLETE_ABORT
        meta.partitions = set()
        if meta.next_pid >= 0:
            meta.prev_pid, meta.pid, meta.next_pid = meta.pid, meta.next_pid, -1
            meta.epoch = 0  # last_epoch stays the pre-bump 32766 (TransactionMetadata.prepareComplete)
        self._write(txn_id, meta)

    # --------------------------------------------------------------------------- verification

    def handle_verify(self, msg: Message, req: VerifyRequest) -> None:
        """handleVerifyPartitionsInTransaction (KIP-890 part 1, kafka-facts §1.9)."""
        meta = self.txns.get(req.txn_id)
        if meta is None or meta.pid != req.pid:
            error = INVALID_PRODUCER_ID_MAPPING
        elif meta.epoch != req.epoch:
            error = PRODUCER_FENCED
        elif meta.state in PREPARE:
            error = CONCURRENT_TRANSACTIONS
        elif meta.state == ONGOING and req.partition in meta.partitions:
            error = NONE
        else:
            error = TRANSACTION_ABORTABLE
        self.world.events.emit(
            VerifyHandled(self.node, msg.msg_id, req.txn_id, req.pid, req.epoch, req.partition, error)
        )
        self.world.network.send(self.node, msg.src, VerifyResponse(msg.msg_id, error))

    # ------------------------------------------------------------------------------ timers

    def _abort_timed_out(self) -> None:
        """timedOutTransactions: Ongoing and start + timeout < now (strict); fence and abort."""
        now_ms = self.world.now_ms
        for txn_id, meta in sorted(self.txns.items()):
            if meta.state == ONGOING and meta.start_ms + meta.timeout_ms < now_ms:
                meta.last_epoch, meta.epoch = -1, meta.epoch + 1  # prepareFenceProducerEpoch
                meta.state = PREPARE_ABORT
                self._write(txn_id, meta)
                self.world.events.emit(TxnTimedOut(self.node, txn_id, meta.pid, meta.epoch, meta.state))
                self._send_markers(txn_id, meta)

    def _expire_ids(self) -> None:
        """Expire ids idle in Empty/Complete* for transactional.id.expiration.ms (tombstone)."""
        limit_ms = self.world.now_ms - self.world.config.transactional_id_expiration_ms
        for txn_id, meta in sorted(self.txns.items()):
            if meta.state in (EMPTY, *COMPLETE) and meta.last_update_ms <= limit_ms:
                self.world.metadata.state_logs[self.state_partition].append(txn_id, None)
                del self.txns[txn_id]
                self.world.events.emit(TxnIdExpired(self.node, txn_id))
