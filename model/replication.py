"""The replication protocol of one partition: one pure function per protocol handler.

Each function takes a State and the handler's inputs and returns the next State with the
handler's outcome, or raises NotEnabled when Kafka would not run the handler in that state. The
protocol rung (model.config.Protocol) is a parameter: the rungs differ only in ``_new_follower``,
``_diverging_truncation``/``_answer_truncation`` (the truncation point), ``_epoch_error`` callers
(what requests carry) and ``_may_expand`` (the epoch-start condition), each a few lines.

Sources: kafka-facts §3 (replication), §6 (delayed produce); KIP-101, KIP-279, KIP-320, KIP-497,
KIP-595 (truncation on fetch), KAFKA-15583 (HW frozen below min ISR).
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model import elr as elr_rules
from kconform.model import epochs, fencing, fetch_pacing, isr_expansion, isr_expiration, purgatory, timer_bounds
from kconform.model import log_start as ls
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.errors import (
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_REQUIRED_ACKS,
    INVALID_UPDATE_VERSION,
    NONE,
    NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    OPERATION_NOT_ATTEMPTED,
    REQUEST_TIMED_OUT,
)
from kconform.model.evolve import evolve
from kconform.model.isr_expansion import may_expand as may_expand
from kconform.model.isr_expiration import caught_up as caught_up
from kconform.model.not_enabled import NotEnabled as NotEnabled
from kconform.model.outcomes import EpochQueryResult, FetchResult, MetadataResult
from kconform.model.records import Entry
from kconform.model.state import (
    CONSUMER_REPLICA,
    FETCHING,
    IDLE,
    NO_BROKER_EPOCH,
    TRUNCATING,
    Acked,
    DelayedFetch,
    DelayedProduce,
    PartitionRecord,
    PendingIsr,
    RemoteReplica,
    Replica,
    State,
)
from kconform.model.timer_bounds import record_late

# =============================================================================================
# Controller (KRaft PartitionChangeBuilder, kafka-facts §3.5)
# =============================================================================================


@dataclass(frozen=True)
class Election:
    """The controller's decision: the new partition record and whether it was unclean."""

    record: PartitionRecord
    unclean: bool


def _elect(cfg: ReplicationConfig, isr: tuple[int, ...], fenced: frozenset[int]) -> tuple[int, tuple[int, ...], bool]:
    """ONLINE election: the first replica in assignment order in ISR and unfenced; else, with
    unclean.leader.election.enable (KIP-106), the first unfenced replica with ISR = [it]."""
    for b in cfg.brokers:
        if b in isr and b not in fenced:
            return b, isr, False
    if cfg.unclean_leader_election:
        for b in cfg.brokers:
            if b not in fenced:
                return b, (b,), True
    return -1, isr, False


def _publish(
    s: State,
    leader: int,
    isr: tuple[int, ...],
    unclean: bool,
    elr: tuple[int, ...] | None = None,
    last_known_elr: tuple[int, ...] | None = None,
) -> tuple[State, Election]:
    """Commit a partition change: leader epoch +1 iff the leader changed, partition epoch +1 iff
    anything changed (KIP-497 partition epoch, KAFKA-15021 no epoch bump on ISR-only changes);
    ``elr``/``last_known_elr`` (None: unchanged) are part of the change (KIP-966)."""
    c = s.controller
    isr = tuple(sorted(isr))
    elr = s.elr if elr is None else elr
    last_known_elr = s.last_known_elr if last_known_elr is None else last_known_elr
    if leader == c.leader and isr == c.isr and elr == s.elr and last_known_elr == s.last_known_elr:
        return s, Election(c, False)
    if elr != s.elr or last_known_elr != s.last_known_elr:
        s = evolve(s, elr=elr, last_known_elr=last_known_elr)
    epoch = c.leader_epoch + 1 if leader != c.leader else c.leader_epoch
    rec = PartitionRecord(leader=leader, leader_epoch=epoch, isr=isr, partition_epoch=c.partition_epoch + 1)
    ghost = s.ghost
    if unclean:
        ghost = evolve(ghost, unclean_epochs=(*ghost.unclean_epochs, epoch))
    return evolve(s, controller=rec, published=(*s.published, rec), ghost=ghost), Election(rec, unclean)


def controller_fence(s: State, cfg: ReplicationConfig, broker: int) -> tuple[State, Election]:
    """Fence ``broker``: it leaves the ISR unless it is the last member; if it led, re-elect."""
    if broker in s.fenced:
        raise NotEnabled(f"broker {broker} is already fenced")
    fenced = s.fenced | {broker}
    c = s.controller
    if cfg.elr:  # KAFKA-15584: the ISR may shrink to empty, the last member into the ELR
        return _elr_change(evolve(s, fenced=fenced), cfg, tuple(b for b in c.isr if b != broker))
    isr = tuple(b for b in c.isr if b != broker) or c.isr
    leader, unclean = c.leader, False
    if c.leader == broker:
        leader, isr, unclean = _elect(cfg, isr, fenced)
    s2, election = _publish(evolve(s, fenced=fenced), leader, isr, unclean)
    return s2, election


def _elr_change(
    s: State, cfg: ReplicationConfig, target_isr: tuple[int, ...], unclean: frozenset[int] = frozenset()
) -> tuple[State, Election]:
    """A partition change with ELR (PartitionChangeBuilder.build, KIP-966; model.elr): the ELR
    follows the ISR change, the current leader stays if still valid (unfenced and in the new ISR),
    else the controller elects (ISR, then ELR, then the last known leader, then unclean)."""
    c = s.controller
    elr = elr_rules.target_elr(cfg, c.isr, target_isr, s.elr, unclean)
    isr, leader, was_unclean = target_isr, c.leader, False
    if c.leader == -1 or c.leader in s.fenced or c.leader not in target_isr:
        leader, isr, elr, was_unclean = elr_rules.elect(cfg, target_isr, elr, s.last_known_elr, s.fenced)
    last_known = elr_rules.last_known_elr(c.leader, leader, s.last_known_elr)
    return _publish(s, leader, isr, was_unclean, elr, last_known)


def controller_unfence(s: State, cfg: ReplicationConfig, broker: int) -> tuple[State, Election]:
    """Unfence a running, registering ``broker``; a leaderless partition elects."""
    if broker not in s.fenced:
        raise NotEnabled(f"broker {broker} is not fenced")
    r = s.replica(broker)
    if not r.alive:
        raise NotEnabled(f"broker {broker} is not running, it cannot register")
    if cfg.elr and broker in s.unclean_shutdowns:
        # handleBrokerUncleanShutdown (KAFKA-15586): out of the ISR and the ELR at registration
        s, _ = _elr_change(s, cfg, tuple(b for b in s.controller.isr if b != broker), frozenset({broker}))
        s = evolve(s, unclean_shutdowns=s.unclean_shutdowns - {broker})
    s = evolve(s, fenced=s.fenced - {broker}).with_replica(broker, evolve(r, registered=True))
    c = s.controller
    if cfg.elr:
        return _elr_change(s, cfg, c.isr)
    if c.leader != -1:
        return s, Election(c, False)
    leader, isr, unclean = _elect(cfg, c.isr, s.fenced)
    return _publish(s, leader, isr, unclean)


def controller_move_leader(s: State, cfg: ReplicationConfig, broker: int) -> tuple[State, Election]:
    """Preferred/reassignment election of ``broker``: it must be in the ISR and unfenced."""
    c = s.controller
    if broker not in c.isr or broker in s.fenced or broker == c.leader:
        raise NotEnabled(f"broker {broker} cannot be elected (ISR {c.isr}, fenced {sorted(s.fenced)})")
    return _publish(s, broker, c.isr, False)


def controller_alter_partition(s: State, cfg: ReplicationConfig, sender: int, p: PendingIsr) -> tuple[State, int]:
    """AlterPartition (KIP-497): accept only from the current leader with the current epochs and
    with every added member unfenced; the result is the error code."""
    c = s.controller
    if c.leader != sender or p.leader_epoch != c.leader_epoch:
        return s, FENCED_LEADER_EPOCH
    if p.partition_epoch != c.partition_epoch:
        return s, INVALID_UPDATE_VERSION
    if any(b in s.fenced for b in set(p.isr) - set(c.isr)):
        return s, INELIGIBLE_REPLICA
    if cfg.elr and any(
        e != NO_BROKER_EPOCH and e != s.replica(b).broker_epoch for b, e in zip(p.isr, p.broker_epochs, strict=True)
    ):
        return s, INELIGIBLE_REPLICA  # KIP-903 (KAFKA-14139): a member's fetches came from an older incarnation
    if cfg.elr:
        s2, _ = _elr_change(s, cfg, tuple(sorted(p.isr)))
        return s2, NONE
    s2, _ = _publish(s, c.leader, p.isr, False)
    return s2, NONE


# =============================================================================================
# Shared broker mechanics
# =============================================================================================


def _append(s: State, cfg: ReplicationConfig, node: int, entry: Entry) -> State:
    r = s.replica(node)
    if entry.offset != r.leo:
        raise NotEnabled(f"broker {node}: append at offset {entry.offset} but LEO is {r.leo}")
    r = evolve(
        r,
        log=(*r.log, entry),
        epoch_cache=epochs.assign(r.epoch_cache, entry.epoch, entry.offset, cfg.protocol.kafka_7415),
        durable_leo=r.leo + 1 if cfg.flush_interval_ms == 0 else r.durable_leo,
    )
    return s.with_replica(node, r)


def _append_all(s: State, cfg: ReplicationConfig, node: int, entries: tuple[Entry, ...]) -> State:
    """``_append`` of each of ``entries`` in order, with one copy of the replica and the state at
    the end: the same log, epoch cache and durable LEO, and the same error at the first entry
    that is not at the LEO (nothing is kept then, as ``_append`` keeps nothing of a failed call)."""
    if not entries:
        return s
    r = s.replica(node)
    cache, leo, kafka_7415 = r.epoch_cache, r.leo, cfg.protocol.kafka_7415
    for entry in entries:
        if entry.offset != leo:
            raise NotEnabled(f"broker {node}: append at offset {entry.offset} but LEO is {leo}")
        cache = epochs.assign(cache, entry.epoch, entry.offset, kafka_7415)
        leo += 1
    r = evolve(
        r, log=(*r.log, *entries), epoch_cache=cache, durable_leo=leo if cfg.flush_interval_ms == 0 else r.durable_leo
    )
    return s.with_replica(node, r)


def _truncate(r: Replica, to: int) -> Replica:
    """Truncate the log to ``to`` entries: epoch cache from end, HW clamped, durable at once; a
    truncation below the log start moves it back to ``to`` (UnifiedLog.truncateTo)."""
    to = min(to, r.leo)
    return evolve(
        r,
        log=r.log[:to],
        epoch_cache=epochs.truncate_from_end(r.epoch_cache, to),
        hw=min(r.hw, to),
        durable_leo=min(r.durable_leo, to),
        log_start=ls.after_truncation(r.log_start, to),
    )


def advance_log_start(r: Replica, to: int) -> Replica:
    """UnifiedLog.maybeIncrementLogStartOffset: the log start moves forward to ``to`` (never back),
    the records below become ``log_start.deleted`` placeholders and the epoch cache is truncated
    from the start (LeaderEpochFileCache.truncateFromStart)."""
    if to <= r.log_start:
        return r
    if to > r.hw:
        raise NotEnabled(f"log start {to} above the HW {r.hw} (UnifiedLog.maybeIncrementLogStartOffset refuses it)")
    gone = tuple(ls.deleted(o) for o in range(r.log_start, to))
    return evolve(
        r,
        log=(*r.log[: r.log_start], *gone, *r.log[to:]),
        epoch_cache=epochs.truncate_from_start(r.epoch_cache, to),
        log_start=to,
    )


def _start_at(r: Replica, offset: int) -> Replica:
    """AbstractFetcherThread.truncateFullyAndStartAt (UnifiedLog.truncateFullyAndStartAt): the log
    is emptied and restarts at ``offset``, with log start, HW (KAFKA-9491) and LEO all ``offset``
    and an empty epoch cache (LeaderEpochFileCache.clearAndFlush)."""
    return evolve(
        r,
        log=tuple(ls.deleted(o) for o in range(offset)),
        epoch_cache=(),
        hw=offset,
        durable_leo=offset,
        log_start=offset,
    )


def maximal_isr(r: Replica) -> tuple[int, ...]:
    """Committed ISR plus a pending expansion (KIP-497); a pending shrink keeps the old ISR."""
    if r.pending_isr is not None and len(r.pending_isr.isr) > len(r.isr):
        return tuple(sorted(set(r.isr) | set(r.pending_isr.isr)))
    return r.isr


def leader_hw_target(s: State, cfg: ReplicationConfig, node: int) -> int:
    """The HW the leader moves to now (Partition.maybeIncrementLeaderHW, kafka-facts §3.1).

    Frozen while the committed ISR is below min.insync.replicas (KAFKA-15583); otherwise the
    minimum LEO over the leader and every follower in the maximal ISR or caught up; never down.
    """
    r = s.replica(node)
    if len(r.isr) < cfg.effective_min_isr:
        return r.hw
    new_hw = r.leo
    members = set(maximal_isr(r))
    for f in cfg.brokers:
        if f == node:
            continue
        rem = r.remotes[f]
        if f in members or caught_up(cfg, rem, r.leo, s.now_ms):
            new_hw = min(new_hw, rem.leo)
    return max(r.hw, new_hw)


def _maybe_advance_hw(s: State, cfg: ReplicationConfig, node: int) -> State:
    """Partition.maybeIncrementLeaderHW; an increase re-checks every parked operation
    (tryCompleteDelayedRequests, model.purgatory)."""
    if not s.presumes_leadership(node):
        return s
    r = s.replica(node)
    target = leader_hw_target(s, cfg, node)
    if target == r.hw:
        return s
    return purgatory.trigger(s.with_replica(node, evolve(r, hw=target)), cfg, node)


def _epoch_error(r: Replica, current_leader_epoch: int) -> int:
    """KIP-320 currentLeaderEpoch check (absent = -1 means no check)."""
    return purgatory.fence_error(r, current_leader_epoch)


def _require_alive(s: State, node: int) -> Replica:
    r = s.replica(node)
    if not r.alive:
        raise NotEnabled(f"broker {node} is not running")
    return r


# =============================================================================================
# Metadata (LeaderAndIsr / KRaft partition deltas)
# =============================================================================================


@dataclass(frozen=True)
class MetadataOutcome:
    outcome: MetadataResult
    truncated_to: int
    hw: int


def _new_follower(cfg: ReplicationConfig, r: Replica, has_leader: bool) -> tuple[Replica, int]:
    """What a replica does on becoming a follower, by protocol rung.

    Pre-KIP-101: truncate to the local HW at once. KIP-101/279/320: truncate after an
    OffsetsForLeaderEpoch round trip. Since 2.7: no truncation now; it happens on fetch.
    """
    if not has_leader:
        return evolve(r, fetch_state=IDLE), -1
    if cfg.protocol is Protocol.TRUNCATE_TO_HW:
        to = r.hw
        return evolve(_truncate(r, to), fetch_state=FETCHING), to
    if cfg.protocol.uses_epoch_query:
        return evolve(r, fetch_state=TRUNCATING), -1
    return evolve(r, fetch_state=FETCHING), -1


def _leader_cache(cfg: ReplicationConfig, r: Replica, leader_epoch: int) -> epochs.EpochCache:
    """Partition.makeLeader: since KAFKA-7415 (2.1) the new leader caches (its epoch, its LEO) at
    once; before, its epoch enters the cache with its first appended batch."""
    if not cfg.protocol.kafka_7415:
        return r.epoch_cache
    return epochs.assign(r.epoch_cache, leader_epoch, r.leo)


def reset_remotes(
    cfg: ReplicationConfig, r: Replica, isr: tuple[int, ...], now_ms: int, is_new_leader: bool
) -> tuple[RemoteReplica, ...]:
    """The followers' state a broker keeps on becoming leader in a new leader epoch
    (Partition.makeLeader: ``remoteReplicas.foreach(_.resetReplicaState(currentTimeMs,
    leaderEpochStartOffset, isNewLeader, isFollowerInSync))``, Replica.resetReplicaState).

    Every follower's caught-up time becomes now if it is in the new ISR, else never (Kafka's 0).
    A broker that was not leader (``isNewLeader = !isLeader``: it applied a record naming another
    leader or none, or it restarted) forgets the rest: LEO unknown (-1), no fetch seen. A broker
    that leads in the new epoch without having applied any record in between (it missed them: it
    was cut off, or KRaft handed it several records as one metadata delta) keeps each follower's
    LEO and broker epoch as its last Fetch left them (KAFKA-2721, 0.9.0.1: "Avoid handling
    duplicate LeaderAndISR requests"; the split by ``isNewLeader`` kept since KAFKA-13790, 3.3), and
    an ISR member's last fetch becomes (now, the leader's LEO), so that a later Fetch reaching the
    leader's LEO of that moment keeps it caught up as of now (Replica.updateFetchStateOrThrow).
    Kafka gives a follower out of the ISR lastFetchLeaderLogEndOffset = the leader's LEO with
    lastFetchTimeMs 0, which can only make it "caught up at time 0", never in Kafka's clock: the
    model writes that as no fetch seen (-1), which has the same effect without a time 0.

    So a re-elected leader's HW (maybeIncrementLeaderHW, right after) counts every ISR member's
    last known LEO at once, where a new leader waits for each member's first Fetch."""
    if is_new_leader:
        return tuple(RemoteReplica(last_caught_up_ms=now_ms if f in isr else None) for f in cfg.brokers)
    return tuple(
        evolve(rem, last_caught_up_ms=now_ms, last_fetch_leader_leo=r.leo, last_fetch_ms=now_ms)
        if f in isr
        else evolve(rem, last_caught_up_ms=None, last_fetch_leader_leo=-1, last_fetch_ms=0)
        for f, rem in enumerate(r.remotes)
    )


def _published(published: tuple[PartitionRecord, ...], rec: PartitionRecord) -> bool:
    """Whether ``rec`` is one of ``published`` (``rec in published``). The controller publishes
    partition epochs 0, 1, 2, ... in order (``_publish``: +1 per record, from the initial -1), so
    record ``pe`` is looked at first at index ``pe``; the scan remains for any other sequence."""
    pe = rec.partition_epoch
    if 0 <= pe < len(published):
        at = published[pe]
        if at is rec or at == rec:
            return True
    return rec in published


def apply_metadata(s: State, cfg: ReplicationConfig, node: int, rec: PartitionRecord) -> tuple[State, MetadataOutcome]:
    """A broker applies a published partition record (ignored unless newer than what it holds).

    Kafka's Partition.makeLeader skips only an older partition epoch: an equal one arrives when the
    leader learned it from its own AlterPartition answer first, and is applied with the same ISR.
    The model ignores it, because the simulated controller re-delivers its latest record where
    KRaft delivers each record once (a metadata image delta); the one difference is that Kafka
    would then drop a second proposal sent in that window (updateAssignmentAndIsr), which the
    model keeps in flight until its own answer."""
    r = _require_alive(s, node)
    if not _published(s.published, rec):
        raise NotEnabled(f"partition record {rec} was never published by the controller")
    if not r.registered or rec.partition_epoch <= r.partition_epoch or rec.leader_epoch < r.leader_epoch:
        return s, MetadataOutcome("ignored", -1, r.hw)
    truncated_to = -1
    outcome: MetadataResult
    if rec.leader == node and rec.leader_epoch > r.leader_epoch:
        remotes = reset_remotes(cfg, r, rec.isr, s.now_ms, is_new_leader=r.leader != node)
        r = evolve(
            r,
            leader=node,
            leader_epoch=rec.leader_epoch,
            partition_epoch=rec.partition_epoch,
            isr=rec.isr,
            fetch_state=IDLE,
            remotes=remotes,
            pending_isr=None,
            epoch_cache=_leader_cache(cfg, r, rec.leader_epoch),
        )
        outcome = "become_leader"
    elif rec.leader_epoch > r.leader_epoch:
        r = evolve(
            r,
            leader=rec.leader,
            leader_epoch=rec.leader_epoch,
            partition_epoch=rec.partition_epoch,
            isr=rec.isr,
            pending_isr=None,
        )
        r, truncated_to = _new_follower(cfg, r, rec.leader != -1)
        outcome = "become_follower"
    else:
        r = evolve(r, partition_epoch=rec.partition_epoch, isr=rec.isr, pending_isr=None)
        outcome = "update_isr"
    if s.tracks_isr_expiration:
        r = evolve(r, isr_since_ms=s.now_ms)
    s = _maybe_advance_hw(s.with_replica(node, r), cfg, node)
    if outcome == "become_follower":
        # ReplicaManager.completeDelayedOperationsWhenNotPartitionLeader (applyLocalFollowersDelta)
        s = purgatory.trigger(s, cfg, node)
    return s, MetadataOutcome(outcome, truncated_to, s.replica(node).hw)


# =============================================================================================
# Produce and the produce purgatory (kafka-facts §3.4, §6)
# =============================================================================================


@dataclass(frozen=True)
class ProduceOutcome:
    error: int
    offset: int
    epoch: int
    hw: int


def produce(s: State, cfg: ReplicationConfig, node: int, req: int, rid: int, acks: int) -> tuple[State, ProduceOutcome]:
    """Partition.appendRecordsToLeader: validate acks, leadership and min ISR, then append."""
    r = _require_alive(s, node)
    if acks not in (-1, 0, 1):
        return s, ProduceOutcome(INVALID_REQUIRED_ACKS, -1, -1, r.hw)
    if not s.presumes_leadership(node):
        return s, ProduceOutcome(NOT_LEADER_OR_FOLLOWER, -1, -1, r.hw)
    if acks == -1 and len(r.isr) < cfg.effective_min_isr:
        return s, ProduceOutcome(NOT_ENOUGH_REPLICAS, -1, -1, r.hw)
    entry = Entry(r.leo, r.leader_epoch, rid)
    if s.tracks_isr_expiration:
        s = _left_behind(s, node)
    s = _append(s, cfg, node, entry)
    ghost = evolve(s.ghost, written=s.ghost.written | {entry})
    if acks == 1:
        acked = Acked(rid, entry.offset, entry.epoch, 1, False, entry.epoch)
        ghost = evolve(ghost, acked=(*ghost.acked, acked))
    s = evolve(s, ghost=ghost)
    if acks == -1:
        s = purgatory.park(s, node, DelayedProduce(req, rid, entry.offset, s.now_ms + cfg.request_timeout_ms))
    hw_before = s.replica(node).hw
    s = _maybe_advance_hw(s, cfg, node)
    if s.replica(node).hw == hw_before:
        s = purgatory.trigger(s, cfg, node, produces=False)  # LeaderHwChange.SAME: the LEO moved
    return s, ProduceOutcome(NONE, entry.offset, entry.epoch, s.replica(node).hw)


def _left_behind(s: State, node: int) -> State:
    """The leader is about to append: followers at its LEO stop being caught up by isCaughtUp's
    first clause now (RemoteReplica.left_leo_ms, model.isr_expiration)."""
    r = s.replica(node)
    if not any(rem.leo == r.leo for rem in r.remotes):
        return s
    remotes = tuple(evolve(rem, left_leo_ms=s.now_ms) if rem.leo == r.leo else rem for rem in r.remotes)
    return s.with_replica(node, evolve(r, remotes=remotes))


def complete_produce(s: State, cfg: ReplicationConfig, node: int, req: int, error: int) -> State:
    """DelayedProduce completion: the answer must be one the broker's state justifies now."""
    r = _require_alive(s, node)
    dp = next((d for d in r.produces if d.req == req), None)
    if dp is None:
        raise NotEnabled(f"broker {node} has no delayed produce {req}")
    leads = s.presumes_leadership(node)
    if error in (NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        if not leads or r.hw <= dp.offset:
            raise NotEnabled(f"acks=all answer for offset {dp.offset} before the HW ({r.hw}) passed it")
        if r.log[dp.offset].rid != dp.rid:
            # The record was truncated away (Kafka completes delayed produces with
            # NOT_LEADER_OR_FOLLOWER when the partition becomes a follower, before truncating).
            raise NotEnabled(f"record {dp.rid} is no longer at offset {dp.offset} ({r.log[dp.offset]})")
        enough = len(maximal_isr(r)) >= cfg.effective_min_isr
        if (error == NONE) != enough:
            raise NotEnabled(
                f"maximal ISR {maximal_isr(r)} vs min.insync.replicas {cfg.effective_min_isr} "
                f"requires {'NONE' if enough else 'NOT_ENOUGH_REPLICAS_AFTER_APPEND'}"
            )
    elif error == REQUEST_TIMED_OUT:
        if s.now_ms < dp.deadline_ms:
            raise NotEnabled(f"timed out at {s.now_ms} ms before the deadline {dp.deadline_ms} ms")
    elif error == NOT_LEADER_OR_FOLLOWER:
        if leads:
            raise NotEnabled(f"NOT_LEADER_OR_FOLLOWER while broker {node} still leads")
    else:
        raise NotEnabled(f"a delayed produce cannot complete with error {error}")
    s = purgatory.take(s, node, dp)
    r = s.replica(node)
    if error == NONE:
        acked = Acked(dp.rid, dp.offset, r.log[dp.offset].epoch, -1, True, r.leader_epoch)
        s = evolve(s, ghost=evolve(s.ghost, acked=(*s.ghost.acked, acked)))
    return s


# =============================================================================================
# Follower fetch (KIP-320 fencing, KIP-595-style truncation on fetch)
# =============================================================================================


@dataclass(frozen=True)
class FetchRequest:
    leader: int
    fetch_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int
    follower_epoch: int


@dataclass(frozen=True)
class FetchResponse:
    error: int
    entries: tuple[Entry, ...]
    hw: int
    diverging_epoch: int
    diverging_end_offset: int
    leader_leo: int
    leader_hw: int
    leader_log_start: int = 0
    """The leader's log start offset (FetchResponse logStartOffset, KIP-107)."""


@dataclass(frozen=True)
class FetchApplyOutcome:
    outcome: FetchResult
    truncated_to: int
    appended: int
    hw: int


def fetch_request(s: State, cfg: ReplicationConfig, follower: int) -> FetchRequest:
    """The Fetch a follower in the fetching state sends: from its LEO, with lastFetchedEpoch
    (since 2.7) and currentLeaderEpoch (KIP-320) as its rung carries them."""
    r = _require_alive(s, follower)
    if not r.registered or r.fetch_state != FETCHING or r.leader < 0:
        raise NotEnabled(f"broker {follower} is not fetching (state {r.fetch_state}, leader {r.leader})")
    lfe = epochs.latest_epoch(r.epoch_cache) if cfg.protocol is Protocol.DIVERGING_EPOCH else -1
    cle = r.leader_epoch if cfg.protocol.fenced else -1
    return FetchRequest(r.leader, r.leo, lfe, cle, r.leader_epoch)


def _follower_read(s: State, cfg: ReplicationConfig, leader: int, q: FetchRequest) -> FetchResponse:
    """Partition.fetchRecords / readRecords for a follower, without touching its fetch state: the
    epoch check, leadership, the diverging-epoch check, the offset range, then log[fetchOffset:LEO]
    (``hw`` and ``leader_hw`` both the HW now). A delayed fetch answers with this read at completion
    (DelayedFetch.onComplete reads again; the follower's state is not updated a second time)."""
    r = _require_alive(s, leader)
    leads = s.presumes_leadership(leader)
    error = _epoch_error(r, q.current_leader_epoch)
    if error == NONE and not leads:
        error = NOT_LEADER_OR_FOLLOWER
    if error != NONE:
        hw = r.hw if leads else -1
        return FetchResponse(error, (), hw, -1, -1, r.leo, hw, r.log_start if leads else -1)
    if q.fetch_offset < r.log_start:
        return FetchResponse(OFFSET_OUT_OF_RANGE, (), r.hw, -1, -1, r.leo, r.hw, r.log_start)
    if q.last_fetched_epoch >= 0:
        end_epoch, end_offset = epochs.end_offset_for(
            r.epoch_cache, q.last_fetched_epoch, r.leo, cfg.protocol.kafka_7415
        )
        if end_epoch == -1:
            return FetchResponse(OFFSET_OUT_OF_RANGE, (), r.hw, -1, -1, r.leo, r.hw, r.log_start)
        if end_epoch < q.last_fetched_epoch or end_offset < q.fetch_offset:
            return FetchResponse(NONE, (), r.hw, end_epoch, end_offset, r.leo, r.hw, r.log_start)
    if not ls.in_range(q.fetch_offset, r.log_start, r.leo):
        return FetchResponse(OFFSET_OUT_OF_RANGE, (), r.hw, -1, -1, r.leo, r.hw, r.log_start)
    return FetchResponse(NONE, r.log[q.fetch_offset :], r.hw, -1, -1, r.leo, r.hw, r.log_start)


def handle_fetch(
    s: State, cfg: ReplicationConfig, leader: int, follower: int, q: FetchRequest
) -> tuple[State, FetchResponse]:
    """Leader side of a follower Fetch (Partition.fetchRecords + updateFollowerFetchState)."""
    resp = _follower_read(s, cfg, leader, q)
    if resp.error != NONE or resp.diverging_epoch != -1:
        return s, resp
    r = s.replica(leader)
    hw_before = r.hw
    rem = r.remotes[follower]
    caught: int | None = rem.last_caught_up_ms
    if q.fetch_offset >= r.leo:
        caught = s.now_ms
    elif rem.last_fetch_leader_leo >= 0 and q.fetch_offset >= rem.last_fetch_leader_leo:
        caught = rem.last_fetch_ms if caught is None else max(caught, rem.last_fetch_ms)
    rem = RemoteReplica(
        leo=q.fetch_offset,
        last_caught_up_ms=caught,
        last_fetch_leader_leo=max(r.leo, rem.last_fetch_leader_leo),
        last_fetch_ms=s.now_ms,
        left_leo_ms=s.now_ms if s.tracks_isr_expiration and rem.leo == r.leo != q.fetch_offset else rem.left_leo_ms,
        # atomic round trip: the sender's epoch (KIP-903, on the rung that has it)
        broker_epoch=s.replica(follower).broker_epoch if cfg.elr else rem.broker_epoch,
    )
    r = evolve(r, remotes=(*r.remotes[:follower], rem, *r.remotes[follower + 1 :]))
    s = _maybe_advance_hw(s.with_replica(leader, r), cfg, leader)
    if s.tracks_isr_expansion:
        s = isr_expansion.after_fetch(s, cfg, leader, follower)
    return s, FetchResponse(NONE, resp.entries, hw_before, -1, -1, r.leo, s.replica(leader).hw, r.log_start)


def fetch_waits(cfg: ReplicationConfig, resp: FetchResponse) -> bool:
    """ReplicaManager.fetchMessages: a follower Fetch waits in the purgatory iff its maxWaitMs
    (replica.fetch.wait.max.ms) is positive and the read found no error, no diverging epoch and
    fewer than minBytes (replica.fetch.min.bytes) records."""
    return (
        cfg.replica_fetch_wait_max_ms > 0
        and resp.error == NONE
        and resp.diverging_epoch == -1
        and len(resp.entries) < cfg.replica_fetch_min_bytes
    )


def park_fetch(
    s: State, cfg: ReplicationConfig, leader: int, follower: int, req: int, q: FetchRequest
) -> tuple[State, FetchResponse]:
    """A follower Fetch that waits: the follower's fetch state is updated as for an answered
    Fetch (the HW may advance), then a DelayedFetch of replica.fetch.wait.max.ms is parked."""
    s, resp = handle_fetch(s, cfg, leader, follower, q)
    if not fetch_waits(cfg, resp):
        raise NotEnabled(
            f"Fetch {req} from broker {follower} can be answered at once ({len(resp.entries)} records, "
            f"error {resp.error}, replica.fetch.min.bytes {cfg.replica_fetch_min_bytes}, "
            f"wait {cfg.replica_fetch_wait_max_ms} ms)"
        )
    r = s.replica(leader)
    df = DelayedFetch(
        req,
        follower,
        q.fetch_offset,
        min(q.fetch_offset, r.leo),
        q.last_fetched_epoch,
        q.current_leader_epoch,
        cfg.replica_fetch_min_bytes,
        s.now_ms + cfg.replica_fetch_wait_max_ms,
    )
    return purgatory.park(s, leader, df), resp


def _diverging_truncation(cfg: ReplicationConfig, r: Replica, epoch: int, end_offset: int) -> int:
    """Where a follower truncates given the leader's (epoch, end offset) (kafka-facts §3.8, KIP-279):
    with its own end offset for that epoch when it has the epoch, else its own end for the
    closest earlier epoch, else the leader's end offset."""
    own_epoch, own_end = epochs.end_offset_for(r.epoch_cache, epoch, r.leo, cfg.protocol.kafka_7415)
    if own_epoch == epoch:
        return min(end_offset, own_end, r.leo)
    if own_epoch != -1:
        return min(own_end, r.leo)
    return min(end_offset, r.leo)


def apply_fetch_response(
    s: State, cfg: ReplicationConfig, follower: int, q: FetchRequest, resp: FetchResponse
) -> tuple[State, FetchApplyOutcome]:
    """Follower side (ReplicaFetcherThread.processPartitionData / truncation on fetch)."""
    r = _require_alive(s, follower)
    if (
        r.leader != q.leader
        or r.leader_epoch != q.follower_epoch
        or r.fetch_state != FETCHING
        or r.leo != q.fetch_offset
    ):
        return s, FetchApplyOutcome("ignored", -1, 0, r.hw)
    if resp.error == NONE and resp.diverging_epoch != -1:
        to = _diverging_truncation(cfg, r, resp.diverging_epoch, resp.diverging_end_offset)
        r = _truncate(r, to)
        return s.with_replica(follower, r), FetchApplyOutcome("diverged", to, 0, r.hw)
    if resp.error == NONE:
        s = _append_all(s, cfg, follower, resp.entries)
        r = s.replica(follower)
        r = evolve(r, hw=ls.clamp_hw(min(resp.hw, r.leo), r.log_start))
        r = advance_log_start(r, ls.follower_log_start(r.log_start, resp.leader_log_start, r.hw))
        return s.with_replica(follower, r), FetchApplyOutcome("appended", -1, len(resp.entries), r.hw)
    if resp.error == OFFSET_OUT_OF_RANGE:
        how, to = ls.out_of_range_reset(r.leo, resp.leader_log_start, resp.leader_leo)
        if how == "truncate":
            r = _truncate(r, to)
        elif how == "start_at":
            r = _start_at(r, to)
        else:
            return s, FetchApplyOutcome("out_of_range", -1, 0, r.hw)
        return s.with_replica(follower, r), FetchApplyOutcome("out_of_range", to, 0, r.hw)
    return s, FetchApplyOutcome("error", -1, 0, r.hw)


# =============================================================================================
# OffsetsForLeaderEpoch (KIP-101, KIP-279; fenced by KIP-320)
# =============================================================================================


@dataclass(frozen=True)
class EpochQuery:
    leader: int
    requested_epoch: int
    current_leader_epoch: int
    follower_epoch: int


@dataclass(frozen=True)
class EpochAnswer:
    error: int
    epoch: int
    end_offset: int


@dataclass(frozen=True)
class EpochApplyOutcome:
    outcome: EpochQueryResult
    truncated_to: int
    hw: int


def epoch_query_request(s: State, cfg: ReplicationConfig, follower: int) -> EpochQuery:
    """The OffsetsForLeaderEpoch a truncating follower sends for its latest cached epoch."""
    r = _require_alive(s, follower)
    if not r.registered or r.fetch_state != TRUNCATING or r.leader < 0:
        raise NotEnabled(f"broker {follower} is not truncating (state {r.fetch_state})")
    cle = r.leader_epoch if cfg.protocol.fenced else -1
    return EpochQuery(r.leader, epochs.latest_epoch(r.epoch_cache), cle, r.leader_epoch)


def handle_epoch_query(s: State, cfg: ReplicationConfig, leader: int, q: EpochQuery) -> EpochAnswer:
    """Partition.lastOffsetForLeaderEpoch: epoch check, leadership, endOffsetFor (v0 has no epoch)."""
    r = _require_alive(s, leader)
    error = _epoch_error(r, q.current_leader_epoch)
    if error == NONE and not s.presumes_leadership(leader):
        error = NOT_LEADER_OR_FOLLOWER
    if error != NONE:
        return EpochAnswer(error, -1, -1)
    epoch, end = epochs.end_offset_for(r.epoch_cache, q.requested_epoch, r.leo, cfg.protocol.kafka_7415)
    if cfg.protocol is Protocol.KIP_101:
        epoch = -1
    return EpochAnswer(NONE, epoch, end)


def _answer_truncation(cfg: ReplicationConfig, r: Replica, a: EpochAnswer) -> tuple[int, bool]:
    """AbstractFetcherThread.getOffsetTruncationState: (truncation offset, complete?)."""
    if a.end_offset == -1:
        return r.hw, True
    if a.epoch == -1:
        return min(a.end_offset, r.leo), True
    own_epoch, own_end = epochs.end_offset_for(r.epoch_cache, a.epoch, r.leo, cfg.protocol.kafka_7415)
    if own_epoch == a.epoch:
        return min(a.end_offset, own_end, r.leo), True
    if own_epoch != -1:
        return min(own_end, r.leo), False
    return min(a.end_offset, r.leo), True


def apply_epoch_answer(
    s: State, cfg: ReplicationConfig, follower: int, q: EpochQuery, a: EpochAnswer
) -> tuple[State, EpochApplyOutcome]:
    """Follower truncation after OffsetsForLeaderEpoch; complete → start fetching."""
    r = _require_alive(s, follower)
    if r.leader != q.leader or r.leader_epoch != q.follower_epoch or r.fetch_state != TRUNCATING:
        return s, EpochApplyOutcome("ignored", -1, r.hw)
    if a.error != NONE:
        return s, EpochApplyOutcome("error", -1, r.hw)
    to, complete = _answer_truncation(cfg, r, a)
    r = _truncate(r, to)
    if complete:
        r = evolve(r, fetch_state=FETCHING)
    return s.with_replica(follower, r), EpochApplyOutcome("truncated" if complete else "retry", to, r.hw)


# =============================================================================================
# ISR changes (KIP-497)
# =============================================================================================


def may_shrink(s: State, cfg: ReplicationConfig, leader: int, removed: set[int]) -> bool:
    """Partition.getOutOfSyncReplicas: every removed follower failed isCaughtUp."""
    r = s.replica(leader)
    return all(not caught_up(cfg, r.remotes[f], r.leo, s.now_ms) for f in removed)


def propose_isr(s: State, cfg: ReplicationConfig, leader: int, msg: int, isr: tuple[int, ...]) -> State:
    """The leader proposes a shrink (laggards out) or an expansion (one in-sync follower in)."""
    r = _require_alive(s, leader)
    if not s.presumes_leadership(leader):
        raise NotEnabled(f"broker {leader} does not lead; it cannot alter the ISR")
    if r.pending_isr is not None:
        raise NotEnabled(f"broker {leader} already has AlterPartition {r.pending_isr.msg} in flight")
    new, cur = set(isr), set(r.isr)
    if leader not in new:
        raise NotEnabled(f"proposed ISR {sorted(new)} drops the leader {leader}")
    if new < cur:
        if not may_shrink(s, cfg, leader, cur - new):
            raise NotEnabled(f"shrink of {sorted(cur - new)} while caught up (replica.lag.time.max.ms)")
    elif new > cur and len(new - cur) == 1:
        (f,) = new - cur
        if not may_expand(s, cfg, leader, f):
            raise NotEnabled(f"expansion with follower {f} that is not in sync (LEO {r.remotes[f].leo})")
    else:
        raise NotEnabled(f"proposed ISR {sorted(new)} is neither a shrink nor a one-member expansion of {sorted(cur)}")
    members = tuple(sorted(new))
    seen = tuple(r.remotes[m].broker_epoch if m != leader else r.broker_epoch for m in members) if cfg.elr else ()
    pending = PendingIsr(msg, members, r.leader_epoch, r.partition_epoch, seen)
    since = s.now_ms if s.tracks_isr_expiration else r.isr_since_ms
    s = s.with_replica(leader, evolve(r, pending_isr=pending, isr_since_ms=since))
    if s.tracks_isr_expansion:
        s = isr_expansion.proposed(s, leader, members)
    return _maybe_advance_hw(s, cfg, leader)


RESET_TO_COMMITTED = frozenset({INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED})
"""AlterPartition errors after which the leader returns to its last committed ISR at once: the
controller says the request was not applied (Partition.handleAlterPartitionError)."""


def apply_alter_partition_response(
    s: State, cfg: ReplicationConfig, leader: int, msg: int, error: int, rec_isr: tuple[int, ...], partition_epoch: int
) -> State:
    """The leader's AlterPartition response (Partition.submitAlterPartition's completion).

    Only the answer to the proposal still in flight counts (an older one finds the partition state
    replaced and is ignored). Success at a partition epoch not older than the leader's commits the
    ISR (handleAlterPartitionUpdate; an equal epoch means the controller had nothing to change);
    a stale success is ignored and the proposal stays pending. INELIGIBLE_REPLICA and
    OPERATION_NOT_ATTEMPTED reset to the last committed ISR; every other error leaves the proposal
    pending (handleAlterPartitionError): non-retriable ones (FENCED_LEADER_EPOCH,
    INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_OR_PARTITION, NEW_LEADER_ELECTED...) until new metadata
    replaces the partition state, retriable ones while AlterPartitionManager re-sends the same
    proposal. PartitionTest's testIsrNotExpandedIfUpdateFails, testIsrNotShrunkIfUpdateFails,
    testRetryShrinkIsr and testAlterIsr* (conformance/yardstick/partition_test.py)."""
    r = _require_alive(s, leader)
    pending = r.pending_isr
    if pending is None or pending.msg != msg:
        return s
    if error == NONE:
        if r.leader == leader and partition_epoch >= r.partition_epoch:
            r = evolve(r, isr=tuple(sorted(rec_isr)), partition_epoch=partition_epoch, pending_isr=None)
    elif error in RESET_TO_COMMITTED:
        r = evolve(r, pending_isr=None)
    if s.tracks_isr_expiration and r.pending_isr is None:
        r = evolve(r, isr_since_ms=s.now_ms)
    return _maybe_advance_hw(s.with_replica(leader, r), cfg, leader)


# =============================================================================================
# Consumer fetch (read_uncommitted)
# =============================================================================================


@dataclass(frozen=True)
class ConsumerFetchOutcome:
    error: int
    entries: tuple[Entry, ...]
    hw: int


def consumer_fetch(
    s: State, cfg: ReplicationConfig, node: int, offset: int, current_leader_epoch: int
) -> tuple[State, ConsumerFetchOutcome]:
    """FetchIsolation.HIGH_WATERMARK: records from ``offset`` up to the HW (kafka-facts §4)."""
    r = _require_alive(s, node)
    leads = s.presumes_leadership(node)
    error = _epoch_error(r, current_leader_epoch)
    if error == NONE and not leads:
        error = NOT_LEADER_OR_FOLLOWER
    if error == NONE and not ls.in_range(offset, r.log_start, r.leo):
        error = OFFSET_OUT_OF_RANGE
    if error != NONE:
        return s, ConsumerFetchOutcome(error, (), r.hw if leads else -1)
    entries = r.log[offset : r.hw]
    consumed = s.ghost.consumed + tuple((e, r.hw) for e in entries)
    return evolve(s, ghost=evolve(s.ghost, consumed=consumed)), ConsumerFetchOutcome(NONE, entries, r.hw)


def consumer_fetch_wait(
    s: State,
    cfg: ReplicationConfig,
    node: int,
    req: int,
    offset: int,
    current_leader_epoch: int,
    min_bytes: int,
    max_wait_ms: int,
) -> tuple[State, ConsumerFetchOutcome, bool]:
    """A consumer Fetch with fetch.min.bytes / fetch.max.wait.ms (ReplicaManager.fetchMessages):
    answered at once (as ``consumer_fetch``) when maxWaitMs <= 0, on an error, or with at least
    minBytes records below the HW; else nothing is returned now and a DelayedFetch of
    ``max_wait_ms`` is parked (the third result says which)."""
    after, out = consumer_fetch(s, cfg, node, offset, current_leader_epoch)
    if max_wait_ms <= 0 or out.error != NONE or len(out.entries) >= min_bytes:
        return after, out, False
    r = s.replica(node)
    df = DelayedFetch(
        req, CONSUMER_REPLICA, offset, min(offset, r.hw), -1, current_leader_epoch, min_bytes, s.now_ms + max_wait_ms
    )
    return purgatory.park(s, node, df), ConsumerFetchOutcome(NONE, (), r.hw), True


def complete_fetch(
    s: State, cfg: ReplicationConfig, node: int, req: int
) -> tuple[State, FetchResponse | ConsumerFetchOutcome]:
    """A parked fetch completes (DelayedFetch.onComplete): allowed once tryComplete says so
    (model.purgatory.fetch_ready) or its deadline came; the answer is a fresh read at completion
    time within the request's isolation bound (LEO for a follower, HW for a consumer), carrying
    the error the broker's state gives now (FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, ...)."""
    r = _require_alive(s, node)
    df = next((d for d in r.fetches if d.req == req), None)
    if df is None:
        raise NotEnabled(f"broker {node} has no delayed fetch {req}")
    if not purgatory.fetch_ready(s, cfg, node, df) and s.now_ms < df.deadline_ms:
        bound = purgatory.fetch_bound(r, df.from_follower)
        raise NotEnabled(
            f"delayed fetch {req} completed at {s.now_ms} ms with {max(bound - df.start_offset, 0)} of "
            f"{df.min_bytes} records, before its deadline {df.deadline_ms} ms and without a completing condition"
        )
    s = purgatory.take(s, node, df)
    if df.from_follower:
        q = FetchRequest(node, df.fetch_offset, df.last_fetched_epoch, df.current_leader_epoch, -1)
        return s, _follower_read(s, cfg, node, q)
    return consumer_fetch(s, cfg, node, df.fetch_offset, df.current_leader_epoch)


# =============================================================================================
# Log start offset: DeleteRecords (KIP-107) and retention (model.log_start)
# =============================================================================================


@dataclass(frozen=True)
class DeleteRecordsOutcome:
    error: int
    log_start: int


def _deleted_to(s: State, offset: int) -> State:
    return evolve(s, ghost=evolve(s.ghost, deleted_to=max(s.ghost.deleted_to, offset)))


def delete_records(
    s: State, cfg: ReplicationConfig, node: int, offset: int, current_leader_epoch: int = -1
) -> tuple[State, DeleteRecordsOutcome]:
    """DeleteRecords on ``node`` (ReplicaManager.deleteRecords → Partition.deleteRecordsOnLeader,
    KIP-107): NOT_LEADER_OR_FOLLOWER unless it leads; ``offset`` -1 means the HW; an offset below
    0 or above the HW answers OFFSET_OUT_OF_RANGE; else the leader's log start moves there
    (model.log_start.delete_records). The answer's low watermark is the leader's log start: the
    DelayedDeleteRecords wait for the followers' log starts (Partition.lowWatermarkIfLeader) is not
    modelled; followers follow through their fetches (apply_fetch_response)."""
    r = _require_alive(s, node)
    error = _epoch_error(r, current_leader_epoch)
    if error == NONE and not s.presumes_leadership(node):
        error = NOT_LEADER_OR_FOLLOWER
    if error != NONE:
        return s, DeleteRecordsOutcome(error, -1)
    error, target = ls.delete_records(offset, r.log_start, r.hw)
    if error != NONE or target == r.log_start:
        return s, DeleteRecordsOutcome(error, r.log_start)
    s = _deleted_to(s.with_replica(node, advance_log_start(r, target)), target)
    return s, DeleteRecordsOutcome(NONE, target)


def retention(s: State, cfg: ReplicationConfig, node: int, offset: int) -> State:
    """Retention on any running replica (UnifiedLog.deleteOldSegments, by time or size: the model
    has no segments, so any later log start up to the replica's own HW; KAFKA-5634: never at or
    past the HW). Each replica applies its own retention; NotEnabled when nothing would move."""
    r = _require_alive(s, node)
    if not r.log_start < offset <= ls.retention_bound(r.hw):
        raise NotEnabled(f"broker {node}: retention to {offset} with log start {r.log_start}, HW {r.hw}")
    return _deleted_to(s.with_replica(node, advance_log_start(r, offset)), offset)


# =============================================================================================
# Crash, restart, checkpoint, time
# =============================================================================================


def crash(s: State, cfg: ReplicationConfig, node: int) -> State:
    """A crash keeps only durable state: the flushed log, the HW checkpoint, the epoch cache."""
    r = _require_alive(s, node)
    durable = r.leo if cfg.flush_interval_ms == 0 else r.durable_leo
    lost = durable < r.leo
    r = Replica(
        log=r.log[:durable],
        log_start=ls.after_truncation(r.log_start, durable),
        hw=min(r.hw_checkpoint, durable),
        epoch_cache=epochs.truncate_from_end(r.epoch_cache, durable),
        alive=False,
        remotes=tuple(RemoteReplica() for _ in cfg.brokers),
        durable_leo=durable,
        hw_checkpoint=r.hw_checkpoint,
        broker_epoch=r.broker_epoch,
        crashed_ms=s.now_ms if s.tracks_fencing else None,
    )
    s = s.with_replica(node, r)
    if lost:
        s = evolve(s, ghost=evolve(s.ghost, crash_lost_data=True, lossy_crashes=s.ghost.lossy_crashes | {node}))
    if cfg.elr:  # it will register without its previous broker epoch (KAFKA-15586)
        s = evolve(s, unclean_shutdowns=s.unclean_shutdowns | {node})
    return s


def restart(s: State, cfg: ReplicationConfig, node: int) -> State:
    """Recovery: LEO = durable end, HW = min(checkpoint, LEO); no leadership until registered."""
    r = s.replica(node)
    if r.alive:
        raise NotEnabled(f"broker {node} is running; it cannot restart")
    epoch = r.broker_epoch + 1 if cfg.elr else r.broker_epoch
    hw = ls.clamp_hw(min(r.hw_checkpoint, r.leo), r.log_start)
    return s.with_replica(node, evolve(r, alive=True, hw=hw, broker_epoch=epoch, crashed_ms=None))


def checkpoint(s: State, cfg: ReplicationConfig, node: int) -> State:
    """Flush the log to its LEO and checkpoint the HW (replica.high.watermark.checkpoint.interval.ms)."""
    r = _require_alive(s, node)
    return s.with_replica(node, evolve(r, durable_leo=r.leo, hw_checkpoint=r.hw))


def advance_clock(s: State, now_ms: int, cfg: ReplicationConfig | None = None) -> State:
    """Simulated time only moves forward. When the state tracks the purgatory (the lockstep judge)
    parked operations whose deadline came are due and those a trigger made due earlier are overdue
    (model.purgatory.pass_time). When it tracks ISR expiration (and ``cfg`` is given), ISR members
    a leader kept past the isr-expiration task's bound are recorded (``Ghost.late_shrinks``,
    model.isr_expiration): a new ghost value, so the judge re-checks on that tick. Likewise, where
    the followers' fetch pacing is tracked, followers whose next request is overdue
    (``Ghost.stalled_fetchers``, model.fetch_pacing), where fencing is tracked, crashed brokers
    the controller left unfenced past its session bound (``Ghost.late_fences``, model.fencing), and,
    where ISR expansion is tracked, expansions a leader still owed from a Fetch of the instant that
    ends (``Ghost.late_expansions``, model.isr_expansion)."""
    if now_ms < s.now_ms:
        raise NotEnabled(f"clock moved backwards from {s.now_ms} to {now_ms} ms")
    if s.ghost.owed_expansions and now_ms > s.now_ms:
        late = isr_expansion.late(s)
        s = evolve(s, ghost=evolve(s.ghost, owed_expansions=(), late_expansions=late or s.ghost.late_expansions))
    s = evolve(s, now_ms=now_ms)
    if s.tracks_purgatory and _has_parked(s):
        s = purgatory.pass_time(s, now_ms)
    if now_ms <= _quiet_until(s, cfg):
        return s  # nothing the three bounds below check is late yet: each would record nothing
    if cfg is not None and s.tracks_isr_expiration:
        s = record_late(s, "late_shrinks", isr_expiration.late_members(s, cfg))
    if s.tracks_fencing:
        s = record_late(s, "late_fences", fencing.late_fences(s))
    if cfg is not None and s.fetchers:
        s = record_late(s, "stalled_fetchers", fetch_pacing.stalled(s, cfg))
    return s


_QUIET: list[tuple[object, object, object, object, bool, bool, int]] = []
"""The last (replicas, fenced, fetchers, config, tracks ISR expiration, tracks fencing, quiet until)
``_quiet_until`` computed, replaced whole (a clock tick is most often followed by another on the
same replicas)."""


def _quiet_until(s: State, cfg: ReplicationConfig | None) -> int:
    """The latest time up to which, on ``s`` with its clock moved there, ``advance_clock``'s timer
    bounds (isr_expiration.late_members, fencing.late_fences, fetch_pacing.stalled, each where it
    is checked) find nothing late; computed once per replicas, fenced set, fetcher clocks and config."""
    if _QUIET:
        last = _QUIET[0]
        if (
            last[0] is s.replicas
            and last[1] is s.fenced
            and last[2] is s.fetchers
            and last[3] is cfg
            and last[4] == s.tracks_isr_expiration
            and last[5] == s.tracks_fencing
        ):
            return last[6]
    until = timer_bounds.NEVER
    if cfg is not None and s.tracks_isr_expiration:
        until = isr_expiration.quiet_until(s, cfg)
    if s.tracks_fencing:
        until = min(until, fencing.quiet_until(s))
    if cfg is not None and s.fetchers:
        until = min(until, fetch_pacing.quiet_until(s))
    _QUIET[:] = [(s.replicas, s.fenced, s.fetchers, cfg, s.tracks_isr_expiration, s.tracks_fencing, until)]
    return until


def _has_parked(s: State) -> bool:
    return any(r.purgatory for r in s.replicas)
