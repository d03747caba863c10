"""The follower side: one replica fetcher per broker (AbstractFetcherThread, ReplicaFetcherThread).

Guarantees: at most one request (Fetch or OffsetsForLeaderEpoch) outstanding; a request is sent at
once on entering a state and after a response that appended records or truncated (or, with
replica.fetch.wait.max.ms > 0, any answered Fetch: the leader did the waiting),
replica.fetch.backoff.ms (``replica_fetch_backoff_ms``) after an empty or failed response, and again
when an outstanding request found no answer within request_timeout_ms (model.fetch_pacing bounds
these, FollowerKeepsFetching); a response is applied only if the fetcher still follows the same leader in
the same epoch and state (and, for Fetch, its LEO is still the fetch offset); truncation follows
kafka-facts §3.8 for the configured protocol rung.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kconform.model.config import Protocol
from kconform.traces.events import (
    NO_LEADER,
    NONE,
    OFFSET_OUT_OF_RANGE,
    EpochQueryApplied,
    EpochQuerySent,
    FetchApplied,
    FetchSent,
)

from . import mutants
from .log import ReplicaLog
from .messages import EpochQueryRequest, EpochQueryResponse, FetchRequest, FetchResponse
from .partition import Partition
from .runtime import Runtime


class FetchState(enum.Enum):
    IDLE = "idle"
    """Not following anybody (leader, no leader known, or not registered)."""
    TRUNCATING = "truncating"
    """Waiting for OffsetsForLeaderEpoch before fetching (KIP-101 .. KIP-320)."""
    FETCHING = "fetching"


@dataclass
class _Outstanding:
    msg: int
    timeout_timer: int


# -------------------------------------------------------------------------------------------
# Truncation rules (kafka-facts §3.8, AbstractFetcherThread.getOffsetTruncationState)
# -------------------------------------------------------------------------------------------


def diverging_epoch_truncation(log: ReplicaLog, epoch: int, end_offset: int) -> int:
    """Where to truncate on a divergingEpoch (epoch, end_offset) in a Fetch response (KIP-595 style).

    Own end offset for that epoch with the same epoch → min(leader end, own end, LEO); own found with
    a smaller epoch → min(own end, LEO) (the next fetch carries the new last epoch); not found →
    min(leader end, LEO).
    """
    own_epoch, own_end = log.epochs.end_offset_for(epoch, log.leo)
    if own_epoch == epoch:
        return min(end_offset, own_end, log.leo)
    if own_epoch != -1:
        return min(own_end, log.leo)
    return min(end_offset, log.leo)


def epoch_answer_truncation(log: ReplicaLog, epoch: int, end_offset: int) -> tuple[int, bool]:
    """(truncation offset, complete) for an OffsetsForLeaderEpoch answer (KIP-101, KIP-279).

    Undefined end offset → the HW, complete; answer without epoch (v0, KIP-101) → min(end, LEO),
    complete; else as for a diverging epoch, incomplete only when the follower found the answer's
    epoch with a smaller one of its own (it then asks again with its new latest epoch).
    """
    if end_offset == -1:
        return log.hw, True
    if epoch == -1:
        return min(end_offset, log.leo), True
    own_epoch, own_end = log.epochs.end_offset_for(epoch, log.leo)
    if own_epoch == epoch:
        return min(end_offset, own_end, log.leo), True
    if own_epoch != -1:
        return min(own_end, log.leo), False
    return min(end_offset, log.leo), True


class ReplicaFetcher:
    """Fetches the partition from the leader in ``partition.view`` while the broker follows."""

    def __init__(self, broker_id: int, rt: Runtime, partition: Partition) -> None:
        self.broker_id = broker_id
        self.rt = rt
        self.partition = partition
        self.state = FetchState.IDLE
        self._outstanding: _Outstanding | None = None
        self._backoff_timer: int | None = None

    @property
    def log(self) -> ReplicaLog:
        return self.partition.log

    def start(self, state: FetchState) -> None:
        """Enter ``state`` for the leader now in the view; any earlier request is forgotten."""
        self.stop()
        if state is FetchState.IDLE or self.partition.view.leader == NO_LEADER:
            return
        self.state = state
        self._send()

    def stop(self) -> None:
        self.state = FetchState.IDLE
        self._forget_outstanding()
        self.rt.scheduler.cancel(self._backoff_timer)
        self._backoff_timer = None

    # ---------------------------------------------------------------------------- requests

    def _send(self) -> None:
        """Send the request of the current state and start its timeout."""
        assert self.state is not FetchState.IDLE and self._outstanding is None
        self.rt.scheduler.cancel(self._backoff_timer)
        self._backoff_timer = None
        msg = self._send_fetch() if self.state is FetchState.FETCHING else self._send_epoch_query()
        timer = self.rt.scheduler.schedule(
            self.rt.config.request_timeout_ms, self.broker_id, "fetch-timeout", lambda: self._on_timeout(msg)
        )
        self._outstanding = _Outstanding(msg, timer)

    def _send_fetch(self) -> int:
        """FetchSent: from the LEO; lastFetchedEpoch only under DIVERGING_EPOCH; currentLeaderEpoch
        from KIP-320 on."""
        protocol = self.rt.config.protocol
        view = self.partition.view
        last_fetched_epoch = self.log.epochs.latest_epoch() if protocol is Protocol.DIVERGING_EPOCH else -1
        current_leader_epoch = view.leader_epoch if protocol.fenced else -1
        request = FetchRequest(
            view.leader,
            self.log.leo,
            last_fetched_epoch,
            current_leader_epoch,
            view.leader_epoch,
            self.partition.broker_epoch,
        )
        msg = self.rt.network.send(self.broker_id, view.leader, request)
        self.rt.events.emit(
            FetchSent(
                self.broker_id,
                msg,
                view.leader,
                request.fetch_offset,
                last_fetched_epoch,
                current_leader_epoch,
                view.leader_epoch,
            )
        )
        return msg

    def _send_epoch_query(self) -> int:
        """EpochQuerySent: OffsetsForLeaderEpoch for the latest cached epoch (KIP-101)."""
        view = self.partition.view
        requested_epoch = self.log.epochs.latest_epoch()
        current_leader_epoch = view.leader_epoch if self.rt.config.protocol.fenced else -1
        request = EpochQueryRequest(view.leader, requested_epoch, current_leader_epoch, view.leader_epoch)
        msg = self.rt.network.send(self.broker_id, view.leader, request)
        self.rt.events.emit(
            EpochQuerySent(self.broker_id, msg, view.leader, requested_epoch, current_leader_epoch, view.leader_epoch)
        )
        return msg

    # --------------------------------------------------------------------------- responses

    def on_fetch_response(self, resp: FetchResponse) -> None:
        """FetchApplied (kafka-facts §3.2, §3.8): diverged / appended / out_of_range / error / ignored.
        After appending, the follower's HW is the leader's within its LEO and its log start the
        leader's within that HW (ReplicaFetcherThread.processPartitionData)."""
        view = self.partition.view
        log = self.log
        if (
            self.state is not FetchState.FETCHING
            or view.leader != resp.leader
            or view.leader_epoch != resp.follower_epoch
            or log.leo != resp.fetch_offset
        ):
            self.rt.events.emit(FetchApplied(self.broker_id, resp.req, "ignored", -1, 0, log.hw))
            self._next_after(resp.req, progressed=False)
            return
        truncated_to = -1
        appended = 0
        if resp.error == NONE and resp.diverging_epoch >= 0:
            if self.rt.mutant(mutants.KIP_101_TRUNCATION):  # KIP-101 alone: the leader's offset, no own lookup
                truncated_to = min(resp.diverging_end_offset, log.leo)
            else:
                truncated_to = diverging_epoch_truncation(log, resp.diverging_epoch, resp.diverging_end_offset)
            log.truncate_to(truncated_to)
            outcome = "diverged"
        elif resp.error == NONE:
            for entry in resp.entries:
                log.append(entry)
            appended = len(resp.entries)
            log.set_follower_hw(resp.hw)
            if min(resp.leader_log_start, log.hw) > log.log_start:  # never past its own HW (KAFKA-5634)
                log.increment_log_start(min(resp.leader_log_start, log.hw))
            outcome = "appended"
        elif resp.error == OFFSET_OUT_OF_RANGE:
            truncated_to = self._out_of_range(resp)
            outcome = "out_of_range"
        else:
            outcome = "error"
        self.rt.events.emit(FetchApplied(self.broker_id, resp.req, outcome, truncated_to, appended, log.hw))
        # With replica.fetch.wait.max.ms > 0 the leader already waited: fetch again at once
        # (AbstractFetcherThread backs off only after errors, replica.fetch.backoff.ms).
        waited = outcome == "appended" and self.rt.config.replica_fetch_wait_max_ms > 0
        self._next_after(resp.req, progressed=appended > 0 or truncated_to != -1 or waited)

    def _out_of_range(self, resp: FetchResponse) -> int:
        """AbstractFetcherThread.handleOutOfRangeError / fetchOffsetAndTruncate (never fatal since
        KAFKA-7414): the offset it truncated or restarted at, -1 when it only fetches again.

        A leader LEO below its own (an unclean leader) truncates there; an own LEO below the
        leader's log start empties the log and restarts at it (truncateFullyAndStartAt, log start,
        LEO and HW all there: KAFKA-9491); else it keeps its log and fetches again from its LEO,
        max(leader log start, own LEO) (KAFKA-2143: not a full truncation)."""
        log = self.log
        if resp.leader_leo < log.leo:
            log.truncate_to(resp.leader_leo)
            return resp.leader_leo
        if resp.leader_log_start > log.leo:
            hw = log.hw
            log.truncate_fully_and_start_at(resp.leader_log_start)
            if self.rt.mutant(mutants.START_AT_KEEPS_HW):
                log.hw = hw
            return resp.leader_log_start
        return -1

    def on_epoch_response(self, resp: EpochQueryResponse) -> None:
        """EpochQueryApplied (kafka-facts §3.8): truncated (→ fetching) / retry / error / ignored."""
        view = self.partition.view
        log = self.log
        if (
            self.state is not FetchState.TRUNCATING
            or view.leader != resp.leader
            or view.leader_epoch != resp.follower_epoch
        ):
            self.rt.events.emit(EpochQueryApplied(self.broker_id, resp.req, "ignored", -1, log.hw))
            self._next_after(resp.req, progressed=False)
            return
        if resp.error != NONE:
            self.rt.events.emit(EpochQueryApplied(self.broker_id, resp.req, "error", -1, log.hw))
            self._next_after(resp.req, progressed=False)
            return
        if self.rt.mutant(mutants.KIP_101_TRUNCATION):  # KIP-101 alone: the leader's offset, done at once
            offset, complete = (log.hw, True) if resp.end_offset == -1 else (min(resp.end_offset, log.leo), True)
        else:
            offset, complete = epoch_answer_truncation(log, resp.epoch, resp.end_offset)
        log.truncate_to(offset)
        if complete:
            self.state = FetchState.FETCHING
        outcome = "truncated" if complete else "retry"
        self.rt.events.emit(EpochQueryApplied(self.broker_id, resp.req, outcome, offset, log.hw))
        self._next_after(resp.req, progressed=True)

    # ------------------------------------------------------------------------------ pacing

    def _next_after(self, req: int, progressed: bool) -> None:
        """After a response to ``req``: it is no longer outstanding; send now after progress, else
        after the backoff. A response to an older request leaves a newer outstanding one alone."""
        if self._outstanding is not None and self._outstanding.msg == req:
            self._forget_outstanding()
        if self._outstanding is not None or self.state is FetchState.IDLE:
            return
        if progressed:
            self._send()
        elif self._backoff_timer is None:
            self._backoff_timer = self.rt.scheduler.schedule(
                self.rt.config.replica_fetch_backoff_ms, self.broker_id, "fetch-backoff", self._on_backoff
            )

    def _on_backoff(self) -> None:
        self._backoff_timer = None
        if self.state is not FetchState.IDLE and self._outstanding is None:
            self._send()

    def _on_timeout(self, msg: int) -> None:
        """The request ``msg`` found no answer within request_timeout_ms: abandon and resend."""
        if self._outstanding is None or self._outstanding.msg != msg:
            return
        self._outstanding = None
        if self.state is not FetchState.IDLE:
            self._send()

    def _forget_outstanding(self) -> None:
        if self._outstanding is not None:
            self.rt.scheduler.cancel(self._outstanding.timeout_timer)
            self._outstanding = None
