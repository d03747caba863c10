"""A broker of the exactly-once slice: leader of some data and ``__consumer_offsets`` partitions
(their logs never move), and coordinator of the ``__transaction_state`` partitions it leads.

Guarantees: a request for a partition this broker does not lead is answered
NOT_LEADER_OR_FOLLOWER, one for a transactional id whose state partition it does not own
NOT_COORDINATOR (COORDINATOR_LOAD_IN_PROGRESS while loading); a transactional batch of a producer
with no open transaction on the partition is appended only after the coordinator confirmed the
partition is in the transaction (KIP-890 part 1, with ``verification``); one event per handler run.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.traces.events import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE,
    NONE,
    NOT_COORDINATOR,
    NOT_ENOUGH_REPLICAS,
    NOT_LEADER_OR_FOLLOWER,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
    AbortedTxn,
    AddOffsetsHandled,
    AddPartitionsHandled,
    EndTxnHandled,
    HwAdvanced,
    InitProducerIdHandled,
    MarkerHandled,
    MarkerResponseHandled,
    OffsetCommitHandled,
    OffsetFetchHandled,
    ProducerExpired,
    Record,
    TxnConsumerFetchHandled,
    TxnFetchCompleted,
    TxnFetchWaitHandled,
    TxnOffsetCommitHandled,
    TxnProduceHandled,
    VerifyApplied,
    VerifyHandled,
)

from ..messages import Handlers, Message, handles
from . import mutants as m
from .coordinator import TxnCoordinator
from .delayed_fetch import FetchPurgatory, ParkedFetch
from .log import TxnPartitionLog
from .messages import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    CoordinatorResponse,
    EndTxnRequest,
    GroupResponse,
    InitPidRequest,
    InitPidResponse,
    MarkerRequest,
    MarkerResponse,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TxnFetchRequest,
    TxnFetchResponse,
    TxnOffsetCommitRequest,
    TxnProduceRequest,
    TxnProduceResponse,
    VerifyRequest,
    VerifyResponse,
)
from .runtime import TxnWorld

PRODUCER_EXPIRATION_CHECK_MS = 600_000
"""producer.id.expiration.check.interval.ms (kafka-facts §2.3)."""

VERIFY_ERROR_TO_PRODUCE: dict[int, int] = {
    PRODUCER_FENCED: INVALID_PRODUCER_EPOCH,
    TRANSACTION_ABORTABLE: INVALID_TXN_STATE,
    CONCURRENT_TRANSACTIONS: NOT_ENOUGH_REPLICAS,
    COORDINATOR_LOAD_IN_PROGRESS: NOT_ENOUGH_REPLICAS,
    COORDINATOR_NOT_AVAILABLE: NOT_ENOUGH_REPLICAS,
    NOT_COORDINATOR: NOT_ENOUGH_REPLICAS,
}
"""AddPartitionsToTxnManager's mapping of a verification error to the produce error (Produce ≤ v10;
kafka-facts §1.9); other errors pass through."""


@dataclass(frozen=True)
class _Verifying:
    """A produce waiting for its verification answer."""

    client: int
    req: int
    request: TxnProduceRequest
    guard: int


class TxnBroker(Handlers):
    """Broker ``broker_id``: its partition logs and the coordinators it runs."""

    def __init__(self, broker_id: int, world: TxnWorld) -> None:
        self.broker_id = broker_id
        self.world = world
        self.logs: dict[str, TxnPartitionLog] = {
            p: TxnPartitionLog(p, world) for p in world.config.log_partitions if world.metadata.leaders[p] == broker_id
        }
        self.coordinators: dict[str, TxnCoordinator] = {}
        self._verifying: dict[int, _Verifying] = {}
        self.purgatory = FetchPurgatory()

    def start_timers(self) -> None:
        def check() -> None:
            self._expire_producers()
            self.world.scheduler.schedule(PRODUCER_EXPIRATION_CHECK_MS, self.broker_id, "producer-expiry", check)

        self.world.scheduler.schedule(PRODUCER_EXPIRATION_CHECK_MS, self.broker_id, "producer-expiry", check)

    # ------------------------------------------------------------------------ coordinators

    def become_coordinator(self, state_partition: str, coordinator_epoch: int) -> TxnCoordinator:
        coordinator = TxnCoordinator(self.broker_id, self.world, state_partition, coordinator_epoch)
        self.coordinators[state_partition] = coordinator
        return coordinator

    def resign_coordinator(self, state_partition: str) -> None:
        coordinator = self.coordinators.pop(state_partition, None)
        if coordinator is not None:
            coordinator.deactivate()

    def _coordinator_for(self, txn_id: str) -> tuple[int, TxnCoordinator | None]:
        """(error, coordinator): kafka-facts §1.2."""
        coordinator = self.coordinators.get(self.world.config.state_partition(txn_id))
        if coordinator is None:
            return NOT_COORDINATOR, None
        if coordinator.loading:
            return COORDINATOR_LOAD_IN_PROGRESS, None
        return NONE, coordinator

    # ----------------------------------------------------------------------------- dispatch

    def receive(self, msg: Message) -> None:
        """Run the handler for a message delivered to this broker."""
        self.dispatch(msg)

    @handles(InitPidRequest)
    def _on_init_pid(self, msg: Message, req: InitPidRequest) -> None:
        if not req.txn_id:
            pid = self.world.metadata.allocate_pid()
            self.world.events.emit(
                InitProducerIdHandled(self.broker_id, msg.msg_id, "", False, req.timeout_ms, -1, -1, NONE, pid, 0, "")
            )
            self.world.network.send(self.broker_id, msg.src, InitPidResponse(msg.msg_id, NONE, pid, 0))
            return
        error, coordinator = self._coordinator_for(req.txn_id)
        if coordinator is not None:
            coordinator.handle_init_pid(msg, req)
            return
        self.world.events.emit(
            InitProducerIdHandled(
                self.broker_id,
                msg.msg_id,
                req.txn_id,
                True,
                req.timeout_ms,
                req.expected_pid,
                req.expected_epoch,
                error,
                -1,
                -1,
                "",
            )
        )
        self.world.network.send(self.broker_id, msg.src, InitPidResponse(msg.msg_id, error, -1, -1))

    @handles(AddPartitionsRequest, AddOffsetsRequest, EndTxnRequest, VerifyRequest)
    def _on_coordinator_request(
        self, msg: Message, req: AddPartitionsRequest | AddOffsetsRequest | EndTxnRequest | VerifyRequest
    ) -> None:
        error, coordinator = self._coordinator_for(req.txn_id)
        if coordinator is not None:
            if isinstance(req, AddPartitionsRequest):
                coordinator.handle_add_partitions(msg, req)
            elif isinstance(req, AddOffsetsRequest):
                coordinator.handle_add_offsets(msg, req)
            elif isinstance(req, EndTxnRequest):
                coordinator.handle_end_txn(msg, req)
            else:
                coordinator.handle_verify(msg, req)
            return
        node, emit = self.broker_id, self.world.events.emit
        if isinstance(req, AddPartitionsRequest):
            emit(AddPartitionsHandled(node, msg.msg_id, req.txn_id, req.pid, req.epoch, req.partitions, error, ""))
        elif isinstance(req, AddOffsetsRequest):
            emit(AddOffsetsHandled(node, msg.msg_id, req.txn_id, req.pid, req.epoch, req.group, error, ""))
        elif isinstance(req, EndTxnRequest):
            emit(
                EndTxnHandled(node, msg.msg_id, req.txn_id, req.pid, req.epoch, req.ctxn, req.commit, error, "", -1, -1)
            )
        else:
            emit(VerifyHandled(node, msg.msg_id, req.txn_id, req.pid, req.epoch, req.partition, error))
            self.world.network.send(node, msg.src, VerifyResponse(msg.msg_id, error))
            return
        self.world.network.send(node, msg.src, CoordinatorResponse(msg.msg_id, error, -1, -1))

    @handles(MarkerResponse)
    def _on_marker_response(self, msg: Message, resp: MarkerResponse) -> None:
        for coordinator in self.coordinators.values():
            if coordinator.owns_marker(resp.msg):
                coordinator.handle_marker_response(resp)
                return
        self.world.events.emit(MarkerResponseHandled(self.broker_id, resp.msg, resp.error, ""))

    # ------------------------------------------------------------------------------ produce

    @handles(TxnProduceRequest)
    def _on_produce(self, msg: Message, req: TxnProduceRequest) -> None:
        """Produce of one batch: verification when the partition has no ongoing transaction of the
        producer (ReplicaManager asks the coordinator before it appends, kafka-facts §1.9; so a late
        copy of a batch whose transaction ended there is verified, not answered as a duplicate),
        then the append's duplicate check and validation (§2.2)."""
        log = self.logs.get(req.partition)
        if log is None:
            self._produce_answer(msg.src, msg.msg_id, req, "rejected", NOT_LEADER_OR_FOLLOWER, -1, -1)
            return
        needs_verification = (
            req.transactional
            and self.world.config.verification
            and not self.world.mutant(m.NO_VERIFICATION)
            and not log.has_ongoing(req.pid)
        )
        if needs_verification:
            coordinator = self.world.metadata.leaders[self.world.config.state_partition(req.txn_id)]
            verify = VerifyRequest(req.txn_id, req.pid, req.epoch, req.partition)
            verify_msg = self.world.network.send(self.broker_id, coordinator, verify)
            guard = log.start_verification(req.pid, req.epoch, req.base_seq, verify_msg)
            self._verifying[verify_msg] = _Verifying(msg.src, msg.msg_id, req, guard)
            self._produce_event(msg.msg_id, req, "verifying", NONE, -1, verify_msg)
            return
        result = log.append_client(req.pid, req.epoch, req.base_seq, req.rids, req.transactional, None)
        self._produce_answer(msg.src, msg.msg_id, req, result.outcome, result.error, result.base_offset, -1)

    @handles(VerifyResponse)
    def _on_verify_response(self, msg: Message, resp: VerifyResponse) -> None:
        waiting = self._verifying.pop(resp.msg, None)
        if waiting is None:
            return
        req = waiting.request
        log = self.logs[req.partition]
        if resp.error == NONE:
            result = log.append_client(req.pid, req.epoch, req.base_seq, req.rids, req.transactional, waiting.guard)
            outcome, error, base_offset = result.outcome, result.error, result.base_offset
        else:
            outcome, error, base_offset = "rejected", VERIFY_ERROR_TO_PRODUCE.get(resp.error, resp.error), -1
        self.world.events.emit(VerifyApplied(self.broker_id, resp.msg, waiting.req, outcome, error, base_offset))
        self.world.network.send(self.broker_id, waiting.client, TxnProduceResponse(waiting.req, error, base_offset))

    def _produce_answer(
        self, client: int, req_id: int, req: TxnProduceRequest, outcome: str, error: int, base_offset: int, verify: int
    ) -> None:
        self._produce_event(req_id, req, outcome, error, base_offset, verify)
        self.world.network.send(self.broker_id, client, TxnProduceResponse(req_id, error, base_offset))

    def _produce_event(
        self, req_id: int, req: TxnProduceRequest, outcome: str, error: int, base_offset: int, verify: int
    ) -> None:
        self.world.events.emit(
            TxnProduceHandled(
                self.broker_id,
                req_id,
                req.partition,
                req.txn_id,
                req.pid,
                req.epoch,
                req.base_seq,
                req.rids,
                req.transactional,
                req.ctxn,
                outcome,
                error,
                base_offset,
                verify,
            )
        )

    # ------------------------------------------------------------------------------ markers

    @handles(MarkerRequest)
    def _on_marker(self, msg: Message, req: MarkerRequest) -> None:
        log = self.logs.get(req.partition)
        error: int
        if log is None:
            error, offset = NOT_LEADER_OR_FOLLOWER, -1
        else:
            error, offset = log.append_marker(req.pid, req.epoch, req.commit, req.coordinator_epoch)
        self.world.events.emit(
            MarkerHandled(
                self.broker_id,
                msg.msg_id,
                req.partition,
                req.pid,
                req.epoch,
                req.commit,
                req.coordinator_epoch,
                error,
                offset,
            )
        )
        self.world.network.send(self.broker_id, msg.src, MarkerResponse(msg.msg_id, error))

    # ------------------------------------------------------------------------------- fetch

    @handles(TxnFetchRequest)
    def _on_fetch(self, msg: Message, req: TxnFetchRequest) -> None:
        """A consumer Fetch: read up to the HW or the LSO (kafka-facts §4); with fetch.max.wait.ms
        (``max_wait_ms`` > 0) a fetch finding fewer than minBytes below its bound, and no error,
        waits in the purgatory (ReplicaManager.fetchMessages: TxnFetchWaitHandled, parked)."""
        log = self.logs.get(req.partition)
        error: int
        if log is None:
            error, hw, lso = NOT_LEADER_OR_FOLLOWER, -1, -1
            records: tuple[Record, ...] = ()
            aborted: tuple[AbortedTxn, ...] = ()
        else:
            error, records, aborted = log.fetch(req.fetch_offset, req.read_committed)
            hw, lso = (log.hw, log.lso()) if error == NONE else (-1, -1)  # an error carries no offsets
        if req.max_wait_ms > 0:
            self._fetch_wait(msg, req, error, records, hw, lso, aborted)
            return
        self.world.events.emit(
            TxnConsumerFetchHandled(
                self.broker_id,
                msg.msg_id,
                req.partition,
                req.fetch_offset,
                req.read_committed,
                error,
                records,
                hw,
                lso,
                aborted,
            )
        )
        self.world.network.send(self.broker_id, msg.src, TxnFetchResponse(msg.msg_id, error, records, aborted))

    def _fetch_wait(
        self,
        msg: Message,
        req: TxnFetchRequest,
        error: int,
        records: tuple[Record, ...],
        hw: int,
        lso: int,
        aborted: tuple[AbortedTxn, ...],
    ) -> None:
        parked = error == NONE and len(records) < req.min_bytes
        node = self.broker_id
        if parked:
            records, aborted = (), ()
        self.world.events.emit(
            TxnFetchWaitHandled(
                node,
                msg.msg_id,
                req.partition,
                req.fetch_offset,
                req.read_committed,
                req.min_bytes,
                req.max_wait_ms,
                parked,
                error,
                records,
                hw,
                lso,
                aborted,
            )
        )
        if not parked:
            self.world.network.send(node, msg.src, TxnFetchResponse(msg.msg_id, error, records, aborted))
            return
        start = min(req.fetch_offset, self._bound(req.partition, self._committed(req.read_committed)))
        op = self.purgatory.park(
            lambda op_id: ParkedFetch(
                op_id,
                msg.msg_id,
                msg.src,
                req.partition,
                req.fetch_offset,
                start,
                req.read_committed,
                req.min_bytes,
                self.world.scheduler.now_ms + req.max_wait_ms,
            )
        )
        op_id = op.op_id
        op.timer = self.world.scheduler.schedule(
            req.max_wait_ms, node, "fetch-timeout", lambda: self._on_fetch_timeout(op_id)
        )

    def _committed(self, read_committed: bool) -> bool:
        """The isolation level a parked fetch keeps: its request's (KAFKA-5355's broker lost it:
        every delayed fetch counted and read up to the HW)."""
        return read_committed and not self.world.mutant(m.DELAYED_FETCH_DROPS_ISOLATION)

    def _bound(self, partition: str, read_committed: bool) -> int:
        """FetchIsolation's bound: the LSO (TXN_COMMITTED) or the HW (HIGH_WATERMARK)."""
        log = self.logs[partition]
        return log.lso() if read_committed else log.hw

    def _fetch_ready(self, op: ParkedFetch) -> bool:
        """DelayedFetch.tryComplete at the fetch's isolation level: the fetch offset past the bound,
        or at least minBytes records between the start offset and the bound."""
        end = self._bound(op.partition, self._committed(op.read_committed))
        return op.start_offset > end or end - op.start_offset >= op.min_bytes

    def _complete_delayed_fetches(self, partition: str) -> None:
        """checkAndComplete on ``partition``: every parked fetch that is ready now answers."""
        if len(self.purgatory):
            for op in self.purgatory.take_ready(partition, self._fetch_ready):
                self._finish_fetch(op)

    def _on_fetch_timeout(self, op_id: int) -> None:
        """DelayedFetch expiry: answered with what is there at the deadline."""
        op = self.purgatory.expire(op_id)
        if op is not None:
            self._finish_fetch(op)

    def _finish_fetch(self, op: ParkedFetch) -> None:
        """DelayedFetch.onComplete: read again now at the fetch's isolation level and answer (the
        event reports the request's own isolation level)."""
        self.world.scheduler.cancel(op.timer)
        log = self.logs[op.partition]
        error, records, aborted = log.fetch(op.fetch_offset, self._committed(op.read_committed))
        self.world.events.emit(
            TxnFetchCompleted(
                self.broker_id,
                op.req,
                op.partition,
                op.fetch_offset,
                op.read_committed,
                error,
                records,
                log.hw,
                log.lso(),
                aborted,
            )
        )
        self.world.network.send(self.broker_id, op.client, TxnFetchResponse(op.req, error, records, aborted))

    def advance_hw(self, partition: str, offset: int) -> None:
        """Move the HW of a partition this broker leads to ``offset`` (-1: the LEO), clamped to
        [HW, LEO]; HwAdvanced when it moved."""
        log = self.logs[partition]
        hw = log.leo if offset < 0 else max(log.hw, min(offset, log.leo))
        if hw != log.hw:
            log.advance_hw(hw)
            self.world.events.emit(HwAdvanced(self.broker_id, partition, hw))
            self._complete_delayed_fetches(partition)  # LeaderHwChange.INCREASED: the LSO may move too

    def _expire_producers(self) -> None:
        for name, log in sorted(self.logs.items()):
            for pid in log.expire_producers():
                self.world.events.emit(ProducerExpired(self.broker_id, name, pid))

    # ------------------------------------------------------------------------ group offsets

    @handles(TxnOffsetCommitRequest, OffsetCommitRequest, OffsetFetchRequest)
    def _on_group_request(
        self, msg: Message, req: TxnOffsetCommitRequest | OffsetCommitRequest | OffsetFetchRequest
    ) -> None:
        log = self.logs.get(self.world.config.offsets_partition(req.group))
        node, emit = self.broker_id, self.world.events.emit
        if isinstance(req, TxnOffsetCommitRequest):
            error, base_offset = (
                (NOT_COORDINATOR, -1)
                if log is None
                else log.txn_offset_commit(req.pid, req.epoch, req.group, req.offsets)
            )
            emit(
                TxnOffsetCommitHandled(
                    node,
                    msg.msg_id,
                    req.group,
                    req.txn_id,
                    req.pid,
                    req.epoch,
                    req.ctxn,
                    req.offsets,
                    error,
                    base_offset,
                )
            )
            answer = GroupResponse(msg.msg_id, error, ())
        elif isinstance(req, OffsetCommitRequest):
            error, base_offset = (
                (NOT_COORDINATOR, -1) if log is None else (NONE, log.offset_commit(req.group, req.offsets))
            )
            emit(OffsetCommitHandled(node, msg.msg_id, req.group, req.offsets, error, base_offset))
            answer = GroupResponse(msg.msg_id, error, ())
        else:
            error, fetched, unstable = (
                (NOT_COORDINATOR, (), ()) if log is None else log.offset_fetch(req.group, req.require_stable)
            )
            emit(OffsetFetchHandled(node, msg.msg_id, req.group, req.require_stable, error, fetched, unstable))
            answer = GroupResponse(msg.msg_id, error, fetched)
        self.world.network.send(node, msg.src, answer)
