"""One broker's replica of the partition: its view of the partition state, its log, and, while it
leads, the state it keeps about the other replicas (Partition.scala, Replica.scala).

Guarantees: the leader HW only increases and never passes the LEO of a replica the HW rule counts
(kafka-facts §3.1); at most one ISR change is in flight; a pending expansion counts in the maximal
ISR at once, a pending shrink does not (KIP-497); epoch checks follow KIP-320 (kafka-facts §3.7).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.model.state import NO_BROKER_EPOCH
from kconform.traces.events import FENCED_LEADER_EPOCH, NO_LEADER, UNKNOWN_LEADER_EPOCH

from . import mutants
from .log import ReplicaLog
from .runtime import Runtime


@dataclass
class PartitionView:
    """What the broker last learned from the controller (or an AlterPartition answer)."""

    leader: int = NO_LEADER
    leader_epoch: int = -1
    isr: tuple[int, ...] = ()
    partition_epoch: int = -1


@dataclass
class RemoteReplica:
    """The leader's view of one follower (ReplicaState); times are simulated ms, None = never."""

    broker: int
    leo: int = -1
    last_caught_up_ms: int | None = None
    last_fetch_leader_leo: int = -1
    last_fetch_ms: int | None = None
    broker_epoch: int = NO_BROKER_EPOCH
    """The broker epoch of the follower's last successful fetch (KIP-903); -1 until this leader
    heard from it (ReplicaState.brokerEpoch None: Partition.addBrokerEpochToIsr sends -1)."""

    def is_caught_up(self, leader_leo: int, now_ms: int, lag_ms: int) -> bool:
        """ReplicaState.isCaughtUp: same LEO as the leader, or caught up within the lag time."""
        if self.leo == leader_leo:
            return True
        return self.last_caught_up_ms is not None and now_ms - self.last_caught_up_ms <= lag_ms

    def record_fetch(self, fetch_offset: int, leader_leo: int, now_ms: int, broker_epoch: int = 0) -> None:
        """Replica.updateFetchStateOrThrow (kafka-facts §3.1), with the fetching broker's epoch."""
        self.broker_epoch = broker_epoch
        if fetch_offset >= leader_leo:
            self.last_caught_up_ms = _latest(self.last_caught_up_ms, now_ms)
        elif fetch_offset >= self.last_fetch_leader_leo and self.last_fetch_ms is not None:
            self.last_caught_up_ms = _latest(self.last_caught_up_ms, self.last_fetch_ms)
        self.last_fetch_leader_leo = max(leader_leo, self.last_fetch_leader_leo)
        self.last_fetch_ms = now_ms
        self.leo = fetch_offset


def _latest(old: int | None, new: int) -> int:
    return new if old is None else max(old, new)


@dataclass(frozen=True)
class PendingIsrChange:
    """An AlterPartition in flight: its message id, the proposed ISR, the member it adds."""

    msg: int
    isr: tuple[int, ...]
    added: int | None


@dataclass
class LeaderState:
    """What a leader keeps on top of its log while it leads."""

    remotes: dict[int, RemoteReplica] = field(default_factory=dict)
    pending: PendingIsrChange | None = None


class Partition:
    """The partition as one broker holds it."""

    def __init__(self, broker_id: int, rt: Runtime, log: ReplicaLog, broker_epoch: int = 0) -> None:
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        """This incarnation's broker epoch (KIP-903): +1 at every restart with ELR."""
        self.rt = rt
        self.log = log
        self.view = PartitionView()
        self.leading: LeaderState | None = None
        self._former_remotes: dict[int, RemoteReplica] = {}
        """The followers' state of this broker's last leadership, which Kafka's Partition keeps
        (its Replica objects outlive a makeFollower) and a new leader resets: read only by the
        new-leader-keeps-follower-leo mutant."""

    @property
    def is_leader(self) -> bool:
        return self.view.leader == self.broker_id and self.leading is not None

    # ----------------------------------------------------------------------------------- roles

    def make_leader(self, leader_epoch: int, isr: tuple[int, ...], partition_epoch: int) -> None:
        """Partition.makeLeader with a new leader epoch (kafka-facts §3.1, §3.6).

        The epoch cache gets (epoch, LEO) (KAFKA-7415, 2.1+); any in-flight ISR proposal is dropped;
        HW unchanged (the caller then runs maybe_increment_hw, as makeLeader does). Every follower's
        state is reset by Replica.resetReplicaState(now, LEO, isNewLeader, isFollowerInSync): caught
        up now if in the new ISR, else never. A new leader (isNewLeader = !isLeader: it followed,
        had no leader, or restarted) forgets the rest, LEO unknown; a broker that was leading all
        along (it missed the records in between) keeps each follower's LEO and broker epoch
        (KAFKA-2721; ReplicaTest.testResetReplicaStateWhenLeaderIsReelected*), and an ISR member's
        last fetch becomes (now, the leader's LEO).
        """
        was_leader = self.is_leader
        self.view = PartitionView(self.broker_id, leader_epoch, isr, partition_epoch)
        if self.rt.config.protocol.kafka_7415:  # before KAFKA-7415 (2.1) the epoch comes with its first batch
            self.log.assign_epoch(leader_epoch, self.log.leo)
        now = self.rt.now_ms
        kept = self._former_remotes
        if was_leader:
            assert self.leading is not None
            kept = self.leading.remotes
        elif not self.rt.mutant(mutants.NEW_LEADER_KEEPS_FOLLOWER_LEO):
            kept = {}  # isNewLeader: nothing is kept
        remotes: dict[int, RemoteReplica] = {}
        for b in self.rt.config.brokers:
            if b == self.broker_id:
                continue
            old = kept.get(b)
            remote = RemoteReplica(b, last_caught_up_ms=now if b in isr else None)
            if old is not None:
                remote.leo, remote.broker_epoch = old.leo, old.broker_epoch
                if b in isr:
                    remote.last_fetch_leader_leo, remote.last_fetch_ms = self.log.leo, now
            remotes[b] = remote
        self.leading = LeaderState(remotes=remotes)

    def make_follower(self, leader: int, leader_epoch: int, isr: tuple[int, ...], partition_epoch: int) -> None:
        """Partition.makeFollower: adopt the new leadership; leader-only state is gone."""
        if self.is_leader:
            assert self.leading is not None
            self._former_remotes = self.leading.remotes
        self.view = PartitionView(leader, leader_epoch, isr, partition_epoch)
        self.leading = None

    def update_isr(self, isr: tuple[int, ...], partition_epoch: int) -> None:
        """Same leader epoch, newer partition epoch: only the ISR changes (KAFKA-15021).

        Like Partition.updateAssignmentAndIsr, the committed state replaces any in-flight
        AlterPartition: its answer, when it comes, no longer matches a pending proposal.
        """
        self.view = PartitionView(self.view.leader, self.view.leader_epoch, isr, partition_epoch)
        if self.leading is not None:
            self.leading.pending = None

    def forget_leadership(self) -> None:
        """Crash/restart: nothing is known until metadata arrives."""
        self.view = PartitionView()
        self.leading = None
        self._former_remotes = {}

    # ---------------------------------------------------------------------------- epoch check

    def check_current_leader_epoch(self, current_leader_epoch: int) -> int | None:
        """Partition.checkCurrentLeaderEpoch (KIP-320): the error code, or None when it passes.

        A request without an epoch (-1) is not checked; neither is any request under the
        no-epoch-fencing mutant.
        """
        if current_leader_epoch < 0:
            return None
        if self.rt.mutant(mutants.NO_EPOCH_FENCING):
            return None
        if self.view.leader_epoch > current_leader_epoch:
            return FENCED_LEADER_EPOCH
        if self.view.leader_epoch < current_leader_epoch:
            return UNKNOWN_LEADER_EPOCH
        return None

    # ------------------------------------------------------------------------------ leader HW

    def maximal_isr(self) -> tuple[int, ...]:
        """Committed ISR plus a pending expansion's new member (KIP-497)."""
        isr = set(self.view.isr)
        if self.leading is not None and self.leading.pending is not None and self.leading.pending.added is not None:
            isr.add(self.leading.pending.added)
        return tuple(sorted(isr))

    def maybe_increment_hw(self) -> bool:
        """Partition.maybeIncrementLeaderHW (kafka-facts §3.1); True iff the HW increased.

        No advance while the committed ISR is below the effective min ISR (KAFKA-15583). Else the
        HW moves to the least LEO among the leader and every follower that is in the maximal ISR
        or caught up (2.x-3.5 rule, no eligibility filter); an unknown LEO counts as -1.
        """
        if self.leading is None:
            return False
        cfg = self.rt.config
        if len(self.view.isr) < cfg.effective_min_isr and not self.rt.mutant(mutants.HW_BELOW_MIN_ISR):
            return False
        counted = self.maximal_isr()
        isr_only = self.rt.mutant(mutants.HW_IGNORES_PENDING_ISR)
        if isr_only:
            counted = self.view.isr
        leader_leo = self.log.leo
        candidate = leader_leo
        for broker in sorted(self.leading.remotes):
            remote = self.leading.remotes[broker]
            caught_up = remote.is_caught_up(leader_leo, self.rt.now_ms, cfg.replica_lag_time_max_ms)
            if broker in counted or (caught_up and not isr_only):
                candidate = min(candidate, remote.leo)
        return self.log.advance_hw(candidate)

    def update_follower_fetch_state(self, follower: int, fetch_offset: int, broker_epoch: int = 0) -> None:
        """A successful follower fetch from ``fetch_offset``: follower LEO, caught-up time and
        the follower's broker epoch."""
        assert self.leading is not None
        self.leading.remotes[follower].record_fetch(fetch_offset, self.log.leo, self.rt.now_ms, broker_epoch)

    def seen_broker_epochs(self, isr: tuple[int, ...]) -> tuple[int, ...]:
        """The broker epochs an AlterPartition carries for ``isr`` (KIP-903): the leader's own and,
        for each follower, that of its last fetch; empty without ELR."""
        if not self.rt.config.elr:
            return ()
        assert self.leading is not None
        remotes = self.leading.remotes
        return tuple(self.broker_epoch if b == self.broker_id else remotes[b].broker_epoch for b in isr)

    # ------------------------------------------------------------------------------------ ISR

    def isr_shrink_proposal(self) -> tuple[int, ...] | None:
        """Partition.maybeShrinkIsr: the ISR without every follower that is not caught up, or None
        when nobody lags or a proposal is already in flight (kafka-facts §3.3)."""
        if self.leading is None or self.leading.pending is not None:
            return None
        lag_ms = self.rt.config.replica_lag_time_max_ms
        laggards = [
            b
            for b in self.view.isr
            if b != self.broker_id
            and b in self.leading.remotes
            and not self.leading.remotes[b].is_caught_up(self.log.leo, self.rt.now_ms, lag_ms)
        ]
        if not laggards:
            return None
        return tuple(b for b in self.view.isr if b not in laggards)

    def isr_expand_proposal(self, follower: int) -> tuple[int, ...] | None:
        """Partition.maybeExpandIsr: ISR + ``follower`` when it is out of the ISR and its LEO ≥ HW and
        (KIP-320 and later) ≥ the start offset of the leader's epoch; None otherwise or while a
        proposal is in flight (kafka-facts §3.3)."""
        if self.leading is None or self.leading.pending is not None or follower in self.view.isr:
            return None
        remote = self.leading.remotes[follower]
        if remote.leo < self.log.hw:
            return None
        if self.rt.config.protocol.fenced and not self.rt.mutant(mutants.EARLY_ISR_EXPAND):
            epoch_start = self.log.epochs.start_offset_of(self.view.leader_epoch)
            if epoch_start is None or remote.leo < epoch_start:
                return None
        return tuple(sorted((*self.view.isr, follower)))

    def set_pending(self, msg: int, isr: tuple[int, ...]) -> None:
        """Record an in-flight AlterPartition; an added member joins the maximal ISR now."""
        assert self.leading is not None and self.leading.pending is None
        added = [b for b in isr if b not in self.view.isr]
        self.leading.pending = PendingIsrChange(msg, isr, added[0] if added else None)

    def pending_msg(self) -> int | None:
        """The id of the AlterPartition in flight, None when none is."""
        if self.leading is None or self.leading.pending is None:
            return None
        return self.leading.pending.msg

    def clear_pending(self, msg: int) -> None:
        """The AlterPartition ``msg`` was answered: it is no longer in flight."""
        if self.leading is not None and self.leading.pending is not None and self.leading.pending.msg == msg:
            self.leading.pending = None
