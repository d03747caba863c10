"""A broker: one replica of the partition, its request handlers, its timers (ReplicaManager,
KafkaApis, Partition glue).

Guarantees: every handler emits exactly one event of its kind (then the events it caused, such as
completed delayed produces); a crashed broker runs nothing; after a restart the broker applies no
metadata until the controller has registered it again; delayed produces complete at most once.
"""

from __future__ import annotations

from kconform.model.config import Protocol
from kconform.model.errors import INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED
from kconform.traces.events import (
    INVALID_REQUIRED_ACKS,
    NO_LEADER,
    NONE,
    NOT_ENOUGH_REPLICAS,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    REQUEST_TIMED_OUT,
    AlterPartitionApplied,
    BrokerCrashed,
    BrokerRestarted,
    Checkpointed,
    ConsumerFetchCompleted,
    ConsumerFetchHandled,
    ConsumerFetchWaitHandled,
    DeleteRecordsHandled,
    Entry,
    EpochQueryHandled,
    FetchCompleted,
    FetchHandled,
    FetchParked,
    IsrChangeProposed,
    MetadataApplied,
    ProduceCompleted,
    ProduceHandled,
    ReplicaFetchHandled,
    RetentionApplied,
)

from ..messages import Handlers, Message, handles
from ..network import CONTROLLER_NODE
from . import mutants
from .disk import Disk
from .fetcher import FetchState, ReplicaFetcher
from .log import ReplicaLog
from .messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    ConsumerFetchRequest,
    ConsumerFetchResponse,
    EpochQueryRequest,
    EpochQueryResponse,
    FetchRequest,
    FetchResponse,
    MetadataUpdate,
    ProduceRequest,
    ProduceResponse,
    ReplicaFetchRequest,
    ReplicaFetchResponse,
)
from .partition import Partition
from .purgatory import DelayedFetch, DelayedProduce, Purgatory
from .runtime import Runtime

NO_REPLICA = -1
"""No preferred read replica (FetchResponse preferred_read_replica = -1)."""


class Broker(Handlers):
    """Broker ``broker_id``: alive or crashed, with its disk surviving crashes."""

    def __init__(self, broker_id: int, rt: Runtime) -> None:
        self.broker_id = broker_id
        self.rt = rt
        self.disk = Disk()
        self.alive = True
        self.registered = False
        """Unfenced by the controller since the last (re)start: only then is metadata applied."""
        self.partition = Partition(
            broker_id, rt, ReplicaLog(self.disk, self._sync_appends, rt.config.protocol.kafka_7415)
        )
        self.fetcher = ReplicaFetcher(broker_id, rt, self.partition)
        self.purgatory = Purgatory()

    @property
    def _sync_appends(self) -> bool:
        return self.rt.config.flush_interval_ms == 0

    @property
    def log(self) -> ReplicaLog:
        return self.partition.log

    def _error_hw(self) -> int:
        """The HW reported with a failed fetch: own HW when leading, else -1 (a produce error
        reports the broker's own HW, "hw after" in ProduceHandled)."""
        return self.log.hw if self.partition.is_leader else -1

    # ------------------------------------------------------------------------------ lifecycle

    def start_timers(self) -> None:
        """Periodic HW checkpoint and ISR expiration check (ReplicaManager.startup)."""
        cfg = self.rt.config
        self.rt.scheduler.schedule(cfg.hw_checkpoint_interval_ms, self.broker_id, "hw-checkpoint", self._on_checkpoint)
        self.rt.scheduler.schedule(self._isr_check_interval_ms, self.broker_id, "isr-expiration", self._on_isr_check)

    @property
    def _isr_check_interval_ms(self) -> int:
        return max(1, self.rt.config.replica_lag_time_max_ms // 2)

    def crash(self) -> None:
        """BrokerCrashed: volatile state gone, the disk stays (BrokerCrashed docstring; the caller
        stops the broker's timers and drops its messages)."""
        assert self.alive
        self.rt.events.emit(BrokerCrashed(self.broker_id))
        self.alive = False
        self.registered = False
        self.fetcher.stop()
        self.purgatory.take_all()
        self.partition.forget_leadership()

    def restart(self) -> None:
        """BrokerRestarted: recover from disk (LEO = durable end, HW = min(checkpoint, LEO), epoch
        cache truncated at the LEO); no leadership known; timers start again."""
        assert not self.alive
        self.alive = True
        epoch = self.partition.broker_epoch + 1 if self.rt.config.elr else self.partition.broker_epoch
        self.partition = Partition(
            self.broker_id,
            self.rt,
            ReplicaLog.recover(self.disk, self._sync_appends, self.rt.config.protocol.kafka_7415),
            epoch,
        )
        self.fetcher = ReplicaFetcher(self.broker_id, self.rt, self.partition)
        self.purgatory = Purgatory()
        self.rt.events.emit(BrokerRestarted(self.broker_id, self.log.leo, self.log.hw))
        self.start_timers()

    def _on_checkpoint(self) -> None:
        """Checkpointed: flush the log (when flush_interval_ms > 0) and checkpoint the HW
        (ReplicaManager.checkpointHighWatermarks; the epoch checkpoint is written on every change,
        kafka-facts §3.6)."""
        self.log.checkpoint(flush=not self._sync_appends)
        self.rt.events.emit(Checkpointed(self.broker_id, self.log.leo, self.log.hw))
        self.rt.scheduler.schedule(
            self.rt.config.hw_checkpoint_interval_ms, self.broker_id, "hw-checkpoint", self._on_checkpoint
        )

    # ------------------------------------------------------------------------------ log start

    def delete_records(self, offset: int) -> None:
        """DeleteRecordsHandled (ReplicaManager.deleteRecords → Partition.deleteRecordsOnLeader,
        KIP-107): only the leader deletes; -1 means its HW; an offset below 0 or past the HW is
        OFFSET_OUT_OF_RANGE (UnifiedLog.maybeIncrementLogStartOffset); else the log start moves
        there when later. Followers learn it from their next Fetch answers. The answer's low
        watermark is the leader's own log start (DelayedDeleteRecords is not simulated)."""
        log = self.log
        if not self.partition.is_leader:
            self.rt.events.emit(DeleteRecordsHandled(self.broker_id, offset, NOT_LEADER_OR_FOLLOWER, -1))
            return
        target = log.hw if offset == -1 else offset
        if not 0 <= target <= log.hw:
            self.rt.events.emit(DeleteRecordsHandled(self.broker_id, offset, OFFSET_OUT_OF_RANGE, log.log_start))
            return
        log.increment_log_start(target)
        self.rt.events.emit(DeleteRecordsHandled(self.broker_id, offset, NONE, log.log_start))

    def retention(self, offset: int) -> None:
        """RetentionApplied (UnifiedLog.deleteOldSegments by time or size on every replica): the
        log start moves forward to ``offset``, never past this replica's own HW (KAFKA-5634); an
        offset that would not move it, or past the HW, deletes nothing and reports nothing."""
        log = self.log
        past_hw = self.rt.mutant(mutants.RETENTION_PAST_HW)
        bound = log.leo if past_hw else log.hw
        if not log.log_start < offset <= bound:
            return
        if offset > log.hw:  # the mutant: Log.updateLogStartOffset raised the HW with it
            log.hw = offset
        log.increment_log_start(offset)
        self.rt.events.emit(RetentionApplied(self.broker_id, log.log_start))

    # ------------------------------------------------------------------------------- dispatch

    def receive(self, msg: Message) -> None:
        """Run the handler for a message delivered to this (alive) broker."""
        assert self.alive
        self.dispatch(msg)

    @handles(FetchResponse)
    def _on_fetch_response(self, msg: Message, resp: FetchResponse) -> None:
        self.fetcher.on_fetch_response(resp)

    @handles(EpochQueryResponse)
    def _on_epoch_response(self, msg: Message, resp: EpochQueryResponse) -> None:
        self.fetcher.on_epoch_response(resp)

    # ------------------------------------------------------------------------------- metadata

    @handles(MetadataUpdate)
    def _on_metadata(self, msg: Message, update: MetadataUpdate) -> None:
        """MetadataApplied (ReplicaManager.applyDelta / becomeLeaderOrFollower, KIP-631 KRaft).

        Ignored unless registered and ``partition_epoch`` is newer (the controller re-delivers its
        latest record; see model.replication.apply_metadata); a higher leader epoch makes this
        broker leader or follower; the same leader epoch only updates the ISR (KAFKA-15021).
        """
        view = self.partition.view
        if not self.registered or update.partition_epoch <= view.partition_epoch:
            self._emit_metadata(update, "ignored", -1)
            return
        if update.leader_epoch > view.leader_epoch:
            if update.leader == self.broker_id:
                self._become_leader(update)
            elif not self.rt.mutant(mutants.FOLLOWER_IGNORES_NEW_LEADER):  # the mutant drops the record
                self._become_follower(update)
        elif update.leader_epoch == view.leader_epoch:
            self._update_isr(update)
        else:
            self._emit_metadata(update, "ignored", -1)

    def _emit_metadata(self, update: MetadataUpdate, outcome: str, truncated_to: int) -> None:
        self.rt.events.emit(
            MetadataApplied(
                self.broker_id,
                update.leader,
                update.leader_epoch,
                update.isr,
                update.partition_epoch,
                outcome,
                truncated_to,
                self.log.hw,
            )
        )

    def _become_leader(self, update: MetadataUpdate) -> None:
        """Partition.makeLeader (KIP-101 epoch start, KAFKA-7415; kafka-facts §3.1 state reset)."""
        self.fetcher.stop()
        self.partition.make_leader(update.leader_epoch, update.isr, update.partition_epoch)
        hw_increased = self.partition.maybe_increment_hw()
        self._emit_metadata(update, "become_leader", -1)
        if hw_increased:
            self._complete_delayed()

    def _become_follower(self, update: MetadataUpdate) -> None:
        """Partition.makeFollower + fetcher start, per protocol rung (kafka-facts §3.8).

        TRUNCATE_TO_HW (pre-KIP-101, and the truncate-to-hw mutant): truncate to the local HW now,
        then fetch. KIP-101/279/320: truncate after an OffsetsForLeaderEpoch round trip.
        DIVERGING_EPOCH (2.7+): fetch at once, truncation happens on fetch.
        """
        failed = self.purgatory.take_all()
        self.partition.make_follower(update.leader, update.leader_epoch, update.isr, update.partition_epoch)
        protocol = self.rt.config.protocol
        truncated_to = -1
        state = FetchState.IDLE
        if update.leader != NO_LEADER:
            if protocol is Protocol.TRUNCATE_TO_HW or self.rt.mutant(mutants.TRUNCATE_TO_HW):
                truncated_to = self.log.hw
                self.log.truncate_to(truncated_to)
                state = FetchState.FETCHING
            elif protocol.uses_epoch_query:
                state = FetchState.TRUNCATING
            else:
                state = FetchState.FETCHING
        self._emit_metadata(update, "become_follower", truncated_to)
        # ReplicaManager.completeDelayedOperationsWhenNotPartitionLeader: every parked operation is
        # re-checked and completes (not the leader any more; a fetch reads again and answers the error)
        for op in failed:
            if isinstance(op, DelayedProduce):
                self._finish_produce(op, NOT_LEADER_OR_FOLLOWER)
            elif self.rt.mutant(mutants.DELAYED_FETCH_SURVIVES_LEADER_CHANGE):
                self.purgatory.keep(op)  # left parked until its deadline
            else:
                self._finish_fetch(op)
        self.fetcher.start(state)

    def _update_isr(self, update: MetadataUpdate) -> None:
        """Same leader epoch, newer partition epoch: adopt the ISR; a leader re-checks its HW."""
        self.partition.update_isr(update.isr, update.partition_epoch)
        hw_increased = self.partition.maybe_increment_hw()
        self._emit_metadata(update, "update_isr", -1)
        if hw_increased:
            self._complete_delayed()

    # -------------------------------------------------------------------------------- produce

    @handles(ProduceRequest)
    def _on_produce(self, msg: Message, req: ProduceRequest) -> None:
        """ProduceHandled (Partition.appendRecordsToLeader, kafka-facts §3.4, §6)."""
        partition = self.partition
        error = NONE
        if req.acks not in (-1, 0, 1):
            error = INVALID_REQUIRED_ACKS
        elif not partition.is_leader:
            error = NOT_LEADER_OR_FOLLOWER
        elif req.acks == -1 and len(partition.view.isr) < self.rt.config.effective_min_isr:
            error = NOT_ENOUGH_REPLICAS
        if error != NONE:
            self.rt.events.emit(
                ProduceHandled(self.broker_id, msg.msg_id, req.rid, req.acks, error, -1, -1, self.log.hw)
            )
            if req.acks != 0:
                self._reply_produce(msg.src, msg.msg_id, error)
            return
        entry = Entry(self.log.leo, partition.view.leader_epoch, req.rid)
        self.log.append(entry)
        hw_increased = partition.maybe_increment_hw()
        self.rt.events.emit(
            ProduceHandled(self.broker_id, msg.msg_id, req.rid, req.acks, NONE, entry.offset, entry.epoch, self.log.hw)
        )
        if req.acks == 1:
            self._reply_produce(msg.src, msg.msg_id, NONE)
        elif req.acks == -1:
            if self.rt.mutant(mutants.ACKS_ALL_NO_WAIT):
                self.rt.events.emit(ProduceCompleted(self.broker_id, msg.msg_id, NONE))
                self._reply_produce(msg.src, msg.msg_id, NONE)
            else:
                self._watch_produce(msg, entry.offset)
        if hw_increased:
            self._complete_delayed()
        else:
            self._complete_delayed_fetches(hw_increased=False)  # LeaderHwChange.SAME: the LEO moved

    def _watch_produce(self, msg: Message, offset: int) -> None:
        timeout_ms = self.rt.config.request_timeout_ms
        op = self.purgatory.watch(msg.msg_id, offset, self.rt.now_ms + timeout_ms, msg.src)
        op_id = op.op_id
        op.timer = self.rt.scheduler.schedule(
            timeout_ms, self.broker_id, "produce-timeout", lambda: self._on_produce_timeout(op_id)
        )

    def _complete_delayed(self) -> None:
        """Re-check the whole purgatory after the HW increased (Partition.tryCompleteDelayedRequests:
        DelayedProduce.tryComplete, then DelayedFetch.tryComplete)."""
        ready = self.purgatory.complete_ready(
            self.log.hw, len(self.partition.maximal_isr()), self.rt.config.effective_min_isr
        )
        for op, error in ready:
            self._finish_produce(op, error)
        self._complete_delayed_fetches(hw_increased=True)

    def _on_produce_timeout(self, op_id: int) -> None:
        """DelayedProduce expiry: REQUEST_TIMED_OUT once the deadline is reached."""
        op = self.purgatory.expire(op_id)
        if isinstance(op, DelayedProduce):
            self._finish_produce(op, REQUEST_TIMED_OUT)

    def _finish_produce(self, op: DelayedProduce, error: int) -> None:
        self.rt.scheduler.cancel(op.timer)
        self.rt.events.emit(ProduceCompleted(self.broker_id, op.req, error))
        self._reply_produce(op.client, op.req, error)

    def _reply_produce(self, client: int, req: int, error: int) -> None:
        self.rt.network.send(self.broker_id, client, ProduceResponse(req, error))

    # ------------------------------------------------------------------------ follower fetch

    def _follower_read(self, req: FetchRequest) -> tuple[int, tuple[Entry, ...], int, int]:
        """Partition.fetchRecords / readRecords for a follower without touching its fetch state:
        (error, entries, diverging epoch, diverging end offset). Epoch check, leadership, diverging
        epoch (after the log start: a fetch below it is OFFSET_OUT_OF_RANGE), offset range, then
        log[fetchOffset:LEO]."""
        partition = self.partition
        log = self.log
        error = partition.check_current_leader_epoch(req.current_leader_epoch)
        if error is None and not partition.is_leader:
            error = NOT_LEADER_OR_FOLLOWER
        if error is None and req.fetch_offset < log.log_start:
            error = OFFSET_OUT_OF_RANGE  # below the log start, before the diverging-epoch check (KIP-107)
        if error is None and req.last_fetched_epoch >= 0:
            end_epoch, end_offset = log.epochs.end_offset_for(req.last_fetched_epoch, log.leo)
            if end_epoch == -1:
                error = OFFSET_OUT_OF_RANGE
            elif end_epoch < req.last_fetched_epoch or end_offset < req.fetch_offset:
                return NONE, (), end_epoch, end_offset
        if error is None and not 0 <= req.fetch_offset <= log.leo:
            error = OFFSET_OUT_OF_RANGE
        if error is not None:
            return error, (), -1, -1
        return NONE, log.read(req.fetch_offset, log.leo), -1, -1

    @handles(FetchRequest)
    def _on_fetch(self, msg: Message, req: FetchRequest) -> None:
        """FetchHandled or FetchParked (Partition.fetchRecords / readRecords; KIP-320, KIP-595,
        kafka-facts §3.7-3.8; ReplicaManager.fetchMessages).

        Epoch check, leadership, diverging epoch, offset range, then read to the LEO and update the
        follower's fetch state; with replica.fetch.wait.max.ms > 0 and fewer than
        replica.fetch.min.bytes records the Fetch waits in the purgatory (DelayedFetch). An ISR
        expansion and completed delayed operations may follow.
        """
        partition = self.partition
        log = self.log
        follower = msg.src
        error, entries, diverging_epoch, diverging_end_offset = self._follower_read(req)
        if error != NONE or diverging_epoch >= 0:
            hw = self._error_hw() if error != NONE else log.hw
            self._answer_fetch(msg.msg_id, msg.src, req, error, (), hw, diverging_epoch, diverging_end_offset, hw)
            return
        hw_before = log.hw
        partition.update_follower_fetch_state(follower, req.fetch_offset, req.broker_epoch)
        hw_increased = partition.maybe_increment_hw()
        cfg = self.rt.config
        if cfg.replica_fetch_wait_max_ms > 0 and len(entries) < cfg.replica_fetch_min_bytes:
            self.rt.events.emit(FetchParked(self.broker_id, msg.msg_id, follower, log.hw))
            self._park_fetch(
                msg,
                req,
                True,
                req.fetch_offset,
                min(req.fetch_offset, log.leo),
                req.last_fetched_epoch,
                req.current_leader_epoch,
                cfg.replica_fetch_min_bytes,
                cfg.replica_fetch_wait_max_ms,
            )
        else:
            self._answer_fetch(msg.msg_id, msg.src, req, NONE, entries, hw_before, -1, -1, log.hw)
        expanded = partition.isr_expand_proposal(follower)
        if expanded is not None:
            self._propose_isr(expanded)
        if hw_increased:
            self._complete_delayed()

    def _answer_fetch(
        self,
        msg_id: int,
        follower: int,
        req: FetchRequest,
        error: int,
        entries: tuple[Entry, ...],
        hw: int,
        diverging_epoch: int,
        diverging_end_offset: int,
        leader_hw: int,
        delayed: bool = False,
    ) -> None:
        leo = self.log.leo
        event = FetchCompleted if delayed else FetchHandled
        self.rt.events.emit(
            event(
                self.broker_id,
                msg_id,
                follower,
                error,
                entries,
                hw,
                diverging_epoch,
                diverging_end_offset,
                leo,
                leader_hw,
            )
        )
        response = FetchResponse(
            msg_id,
            error,
            entries,
            hw,
            diverging_epoch,
            diverging_end_offset,
            leo,
            req.leader,
            req.follower_epoch,
            req.fetch_offset,
            self.log.log_start if self.partition.is_leader else -1,
        )
        self.rt.network.send(self.broker_id, follower, response)

    # ------------------------------------------------------------------ delayed fetches

    def _park_fetch(
        self,
        msg: Message,
        request: FetchRequest | ConsumerFetchRequest,
        follower: bool,
        fetch_offset: int,
        start_offset: int,
        last_fetched_epoch: int,
        current_leader_epoch: int,
        min_bytes: int,
        max_wait_ms: int,
    ) -> None:
        """DelayedFetch: park the request until tryComplete says so or ``max_wait_ms`` passed."""
        deadline_ms = self.rt.now_ms + max_wait_ms
        op = self.purgatory.watch_fetch(
            lambda op_id: DelayedFetch(
                op_id,
                msg.msg_id,
                msg.src,
                follower,
                fetch_offset,
                start_offset,
                last_fetched_epoch,
                current_leader_epoch,
                min_bytes,
                deadline_ms,
                request,
            )
        )
        op_id = op.op_id
        op.timer = self.rt.scheduler.schedule(
            max_wait_ms, self.broker_id, "fetch-timeout", lambda: self._on_fetch_timeout(op_id)
        )

    def _fetch_ready(self, op: DelayedFetch) -> bool:
        """DelayedFetch.tryComplete, cases A-H (kafka-facts §6): fenced epoch or not leader; fetch
        offset past the isolation bound (LEO for a follower, HW for a consumer); a follower's
        diverging or undefined lastFetchedEpoch; at least minBytes records past the start."""
        partition = self.partition
        log = self.log
        if partition.check_current_leader_epoch(op.current_leader_epoch) is not None or not partition.is_leader:
            return True
        bound = log.leo if op.follower else log.hw
        if op.start_offset > bound:
            return True
        if op.follower and op.last_fetched_epoch >= 0:
            end_epoch, end_offset = log.epochs.end_offset_for(op.last_fetched_epoch, log.leo)
            if end_epoch == -1 or end_offset == -1:
                return True
            if end_epoch < op.last_fetched_epoch or end_offset < op.fetch_offset:
                return True
        if self.rt.mutant(mutants.DELAYED_FETCH_EARLY_RETURN):
            return True
        return bound - op.start_offset >= op.min_bytes

    def _complete_delayed_fetches(self, hw_increased: bool) -> None:
        """checkAndComplete on the fetch purgatory: every parked fetch that is ready now answers."""
        if not len(self.purgatory):
            return
        skip_consumers = hw_increased and self.rt.mutant(mutants.DELAYED_FETCH_MISSES_HW)
        for op in self.purgatory.take_fetches(
            lambda op: not (skip_consumers and not op.follower) and self._fetch_ready(op)
        ):
            self._finish_fetch(op)

    def _on_fetch_timeout(self, op_id: int) -> None:
        """DelayedFetch expiry: answered with what is there at the deadline."""
        op = self.purgatory.expire(op_id)
        if isinstance(op, DelayedFetch):
            self._finish_fetch(op)

    def _finish_fetch(self, op: DelayedFetch) -> None:
        """DelayedFetch.onComplete: read again now and answer (the follower's state is not updated
        a second time)."""
        self.rt.scheduler.cancel(op.timer)
        request = op.request
        if isinstance(request, FetchRequest):
            error, entries, diverging_epoch, diverging_end_offset = self._follower_read(request)
            hw = self._error_hw() if error != NONE else self.log.hw
            self._answer_fetch(
                op.req, op.client, request, error, entries, hw, diverging_epoch, diverging_end_offset, hw, delayed=True
            )
            return
        assert isinstance(request, ConsumerFetchRequest)
        error, entries, hw = self._consumer_read(request.fetch_offset, request.current_leader_epoch, delayed=True)
        self.rt.events.emit(ConsumerFetchCompleted(self.broker_id, op.req, error, entries, hw))
        self.rt.network.send(self.broker_id, op.client, ConsumerFetchResponse(op.req, error, entries, hw))

    # ---------------------------------------------------------------- OffsetsForLeaderEpoch

    @handles(EpochQueryRequest)
    def _on_epoch_query(self, msg: Message, req: EpochQueryRequest) -> None:
        """EpochQueryHandled (Partition.lastOffsetForLeaderEpoch; KIP-101, KIP-279, KIP-320).

        Epoch check first, then leadership, then endOffsetFor(requested); a KIP-101 (v0) answer
        carries no epoch (-1).
        """
        error = self.partition.check_current_leader_epoch(req.current_leader_epoch)
        if error is None and not self.partition.is_leader:
            error = NOT_LEADER_OR_FOLLOWER
        if error is not None:
            epoch, end_offset = -1, -1
        else:
            error = NONE
            epoch, end_offset = self.log.epochs.end_offset_for(req.requested_epoch, self.log.leo)
            if self.rt.config.protocol is Protocol.KIP_101:
                epoch = -1
        self.rt.events.emit(EpochQueryHandled(self.broker_id, msg.msg_id, msg.src, error, epoch, end_offset))
        response = EpochQueryResponse(msg.msg_id, error, epoch, end_offset, req.leader, req.follower_epoch)
        self.rt.network.send(self.broker_id, msg.src, response)

    # ------------------------------------------------------------------------------------ ISR

    def _on_isr_check(self) -> None:
        """isr-expiration task every replica.lag.time.max.ms / 2 (kafka-facts §3.3)."""
        if self.partition.is_leader:
            shrunk = self.partition.isr_shrink_proposal()
            if shrunk is not None:
                self._propose_isr(shrunk)
        self.rt.scheduler.schedule(self._isr_check_interval_ms, self.broker_id, "isr-expiration", self._on_isr_check)

    def _propose_isr(self, isr: tuple[int, ...]) -> None:
        """IsrChangeProposed: AlterPartition to the controller (KIP-497); one in flight at a time.

        The proposal changes the maximal ISR (an added member counts at once), so the HW rule runs
        again; ``hw`` is the HW after that, and completed produces follow the event.
        """
        view = self.partition.view
        request = AlterPartitionRequest(
            self.broker_id, view.leader_epoch, view.partition_epoch, isr, self.partition.seen_broker_epochs(isr)
        )
        msg = self.rt.network.send(self.broker_id, CONTROLLER_NODE, request)
        self.partition.set_pending(msg, isr)
        hw_increased = self.partition.maybe_increment_hw()
        self.rt.events.emit(
            IsrChangeProposed(self.broker_id, msg, isr, view.leader_epoch, view.partition_epoch, self.log.hw)
        )
        if hw_increased:
            self._complete_delayed()

    @handles(AlterPartitionResponse)
    def _on_alter_partition_response(self, msg: Message, resp: AlterPartitionResponse) -> None:
        """AlterPartitionApplied (Partition.submitAlterPartition's completion, KIP-497).

        Only the answer to the proposal in flight counts. Success at a partition epoch not older
        than ours commits the ISR; INELIGIBLE_REPLICA and OPERATION_NOT_ATTEMPTED return to the
        committed ISR; any other error, or a stale success, leaves the proposal pending until new
        metadata replaces it (handleAlterPartitionError: no retry of non-retriable errors). The HW
        may advance.
        """
        partition = self.partition
        if partition.pending_msg() == resp.req:
            if resp.error == NONE:
                if partition.is_leader and resp.partition_epoch >= partition.view.partition_epoch:
                    partition.update_isr(resp.isr, resp.partition_epoch)
            elif resp.error in (INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED):
                partition.clear_pending(resp.req)
        hw_increased = partition.maybe_increment_hw()
        self.rt.events.emit(
            AlterPartitionApplied(self.broker_id, resp.req, resp.error, resp.isr, resp.partition_epoch, self.log.hw)
        )
        if hw_increased:
            self._complete_delayed()

    # ------------------------------------------------------------------------------ consumers

    def _consumer_read(
        self, fetch_offset: int, current_leader_epoch: int, delayed: bool = False
    ) -> tuple[int, tuple[Entry, ...], int]:
        """A read_uncommitted read (FetchIsolation.HIGH_WATERMARK): (error, entries, hw) after the
        KIP-320 check, leadership and the offset range [log start, LEO] (kafka-facts §4, KIP-107)."""
        error = self.partition.check_current_leader_epoch(current_leader_epoch)
        if error is None and not self.partition.is_leader:
            error = NOT_LEADER_OR_FOLLOWER
        if error is None and not self.log.log_start <= fetch_offset <= self.log.leo:
            error = OFFSET_OUT_OF_RANGE
        if error is not None:
            return error, (), self._error_hw()
        hw = self.log.hw
        bound = self.log.leo if delayed and self.rt.mutant(mutants.DELAYED_FETCH_READS_LEO) else hw
        return NONE, self.log.read(fetch_offset, bound), hw

    @handles(ReplicaFetchRequest)
    def _on_replica_fetch(self, msg: Message, req: ReplicaFetchRequest) -> None:
        """ReplicaFetchHandled: a consumer Fetch with client metadata (KIP-392), which a follower
        serves too (FetchParams.fetchOnlyLeader is false). A leader first runs its replica
        selector (ReplicaManager.findPreferredReadReplica); when that names a follower the read is
        skipped. Otherwise the read is bounded by this broker's own HW."""
        error = self.partition.check_current_leader_epoch(req.current_leader_epoch)
        view = self.partition.view
        if error is None and (not self.registered or view.leader_epoch < 0):
            error = NOT_LEADER_OR_FOLLOWER
        entries: tuple[Entry, ...] = ()
        hw, preferred = -1, NO_REPLICA
        if error is None:
            hw = self.log.hw
            if self.partition.is_leader:
                preferred = self._preferred_read_replica(req.fetch_offset)
            if preferred == NO_REPLICA:
                if not self.log.log_start <= req.fetch_offset <= self.log.leo:
                    error = OFFSET_OUT_OF_RANGE
                else:
                    entries = self.log.read(req.fetch_offset, hw)
        code = NONE if error is None else error
        if code not in (NONE, OFFSET_OUT_OF_RANGE):
            hw = -1
        self.rt.events.emit(
            ReplicaFetchHandled(
                self.broker_id, msg.msg_id, req.fetch_offset, req.current_leader_epoch, code, entries, hw, preferred
            )
        )
        if entries and self.rt.mutant(mutants.FETCH_WITH_RECORDS_UNANSWERED):
            return  # the mutant: an answer with records is never sent (nisshi-io/nisshi#668)
        response = ReplicaFetchResponse(msg.msg_id, req.fetch_offset, code, entries, hw, preferred)
        self.rt.network.send(self.broker_id, msg.src, response)

    def _preferred_read_replica(self, fetch_offset: int) -> int:
        """RackAwareReplicaSelector over the candidates of findPreferredReadReplica: the broker of
        the consumer's rack (``client_rack``; every broker is its own rack) when it is a follower
        in the ISR (KAFKA-14372, 3.4) whose LEO as this leader knows it reaches ``fetch_offset``;
        else none (the leader serves)."""
        rack = self.rt.config.client_rack
        leading = self.partition.leading
        if leading is None or rack == self.broker_id or rack not in leading.remotes:
            return NO_REPLICA
        in_isr = rack in self.partition.view.isr or self.rt.mutant(mutants.READ_REPLICA_OUT_OF_ISR)
        if not in_isr or leading.remotes[rack].leo < fetch_offset:
            return NO_REPLICA
        return rack

    @handles(ConsumerFetchRequest)
    def _on_consumer_fetch(self, msg: Message, req: ConsumerFetchRequest) -> None:
        """ConsumerFetchHandled: read_uncommitted Fetch up to the HW (KIP-320 check, kafka-facts §4);
        a Fetch with fetch.min.bytes / fetch.max.wait.ms (``waits``) reports ConsumerFetchWaitHandled
        and, when it finds fewer than minBytes records below the HW, waits in the purgatory."""
        error, entries, hw = self._consumer_read(req.fetch_offset, req.current_leader_epoch)
        if req.waits:
            parked = req.max_wait_ms > 0 and error == NONE and len(entries) < req.min_bytes
            if parked:
                entries = ()
            self.rt.events.emit(
                ConsumerFetchWaitHandled(
                    self.broker_id,
                    msg.msg_id,
                    req.fetch_offset,
                    req.current_leader_epoch,
                    req.min_bytes,
                    req.max_wait_ms,
                    parked,
                    error,
                    entries,
                    hw,
                )
            )
            if parked:
                start = min(req.fetch_offset, self.log.hw)
                self._park_fetch(
                    msg,
                    req,
                    False,
                    req.fetch_offset,
                    start,
                    -1,
                    req.current_leader_epoch,
                    req.min_bytes,
                    req.max_wait_ms,
                )
                return
        else:
            self.rt.events.emit(
                ConsumerFetchHandled(self.broker_id, req.fetch_offset, req.current_leader_epoch, error, entries, hw)
            )
        self.rt.network.send(self.broker_id, msg.src, ConsumerFetchResponse(msg.msg_id, error, entries, hw))
