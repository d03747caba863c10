"""Named guarantees of Kafka replication, each a function over states (or over one step).

Every invariant has a one-sentence docstring stating the guarantee and a citation. A violation
that the configuration permits (acks=1 loss, an unclean election, a crash losing unflushed data)
is reported with ``allowed=True`` and a reason, like Elle's allowed anomalies; it is not a failure.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from kconform.model import delayed, guarantees, log_start, purgatory, state_parts, timer_bounds
from kconform.model.config import ReplicationConfig
from kconform.model.guarantees import Invariant as Invariant
from kconform.model.guarantees import Memo as Memo
from kconform.model.guarantees import Violation as Violation
from kconform.model.records import Entry
from kconform.model.state import Replica, State

_REGISTRY = guarantees.Registry[State, ReplicationConfig](
    same=guarantees.equal_inputs, parts=guarantees.Parts(state_parts.NAMES, state_parts.changed)
)
"""Replication's invariants; a state check's inputs (the parts of a state it reads) are compared by
equality: small tuples of values, cheap to compare. Each state check also names the parts of a
state it reads (``over``, model.state_parts): through the judge's memo it is re-run only when one of
them differs from the state checked before, and a state equal to that one in every part keeps all
its verdicts (model.guarantees.Parts; tests/test_invariant_memo.py checks each declaration against
what the check reads)."""
INVARIANTS: dict[str, Invariant[State, ReplicationConfig]] = _REGISTRY.invariants
_register, _register_step = _REGISTRY.state, _REGISTRY.step

TIMER_BOUNDS = frozenset(
    {"IsrShrinkBounded", "IsrExpansionProposed", "FollowerKeepsFetching", "FollowerBacksOff", "CrashedBrokerFenced"}
)
"""Bounds on an implementation's timers and promptness (the isr-expiration task, the replica
fetcher's timeout and backoff, the controller's broker sessions, the leader's ISR expansion before
time moves on), judged only where every timer's time is seen (the lockstep judge's ``State.tracks_*``
flags). They are vacuous on the model searches' states, whose clock jumps and sends are atomic
actions of the search's choosing: a model search never checks them, and a file it writes is
replayed without them (traces.counterexample.Counterexample.checked)."""


def _loss_permitted(s: State, after_epoch: int) -> str:
    """Why a loss of data written in ``after_epoch`` is permitted by configuration, or ''."""
    if any(u > after_epoch for u in s.ghost.unclean_epochs):
        return "an unclean leader election happened after the write (unclean.leader.election.enable)"
    if s.ghost.crash_lost_data:
        return "a crash lost unflushed data (flush_interval_ms > 0)"
    return ""


def _any_permitted(s: State) -> str:
    return _loss_permitted(s, -1)


def _leaders(s: State) -> Iterator[tuple[int, Replica]]:
    for b, r in enumerate(s.replicas):
        if s.presumes_leadership(b):
            yield b, r


def _running(s: State) -> Iterator[tuple[int, Replica]]:
    for b, r in enumerate(s.replicas):
        if r.alive:
            yield b, r


def _entry_at(r: Replica, offset: int) -> Entry | None:
    return r.log[offset] if offset < r.leo else None


# The inputs of the state checks: what each reads, as values. Per replica, in broker order (an
# index is a broker id); a superset of what a check reads is sound (it is only re-run more often).
# A part several checks read is ``per_state``: computed once per state, whichever checks read it.


@guarantees.per_state
def _permits(s: State) -> tuple[object, ...]:
    """What _loss_permitted and _any_permitted read."""
    return (s.ghost.unclean_epochs, s.ghost.crash_lost_data)


@guarantees.per_state
def _logs(s: State) -> tuple[tuple[bool, int, tuple[Entry, ...], int], ...]:
    """Each replica's liveness, HW, log and log start (_running, HW and LEO checks)."""
    return tuple([(r.alive, r.hw, r.log, r.log_start) for r in s.replicas])


@guarantees.per_state
def _leader_logs(s: State) -> tuple[tuple[object, ...], ...]:
    """Each replica's leadership (State.presumes_leadership), leader epoch and log."""
    return tuple([(r.alive, r.registered, r.leader, r.leader_epoch, r.log) for r in s.replicas])


@guarantees.per_state
def _isr_views(s: State) -> tuple[tuple[object, ...], ...]:
    """Each replica's leadership, leader epoch, HW, log and own ISR view."""
    return tuple(
        [(r.alive, r.registered, r.leader, r.leader_epoch, r.hw, r.log, r.isr, r.log_start) for r in s.replicas]
    )


def _parked_and_clock(s: State) -> tuple[object, ...]:
    """What PurgatoryDeadlines reads: whether the purgatory is tracked, then each replica's liveness
    and parked operations, and the clock only while something is parked (the one input that is the
    clock: a tick is judged there, Judge.unchanged, because pass_time changes a replica whenever a
    deadline comes or passes with the operation still parked)."""
    if not s.tracks_purgatory:
        return (False,)
    parked = tuple([(r.alive, r.purgatory) for r in s.replicas])
    return (True, parked, s.now_ms if any(p for _, p in parked) else -1)


_over = state_parts.parts
_PERMITS = ("ghost.unclean_epochs", "ghost.crash_lost_data")
"""What _loss_permitted and _any_permitted read."""
_LEADERSHIP = ("replica.alive", "replica.registered", "replica.leader", "replica.leader_epoch", "replica.log")
"""What _leaders and the leaders' logs are: State.presumes_leadership, the epoch, the log."""
_LOGS = ("replica.alive", "replica.hw", "replica.log", "replica.log_start")


# ---------------------------------------------------------------------------------------------


@_register(
    "HwBelowLeo",
    "KIP-101; UnifiedLog.maybeIncrementHighWatermark",
    lambda s: (_logs(s),),
    _over("replica.alive", "replica.hw", "replica.log"),
)
def hw_below_leo(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Every running replica's high watermark is at most its log end offset."""
    for b, r in _running(s):
        if r.hw > r.leo:
            yield Violation("HwBelowLeo", f"broker {b}: HW {r.hw} > LEO {r.leo}")


@_register_step("LeaderHwMonotonic", "KIP-101; UnifiedLog.maybeIncrementHighWatermark is monotonic")
def leader_hw_monotonic(pre: State, post: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """A leader's high watermark never decreases within one leader epoch."""
    for b, (p, r) in enumerate(zip(pre.replicas, post.replicas, strict=True)):
        if p is r:
            continue  # the same replica: the same HW (as in the two step checks below)
        if (
            r.hw < p.hw
            and p.leader_epoch == r.leader_epoch
            and post.presumes_leadership(b)
            and pre.presumes_leadership(b)
        ):
            yield Violation("LeaderHwMonotonic", f"leader {b} epoch {r.leader_epoch}: HW {p.hw} -> {r.hw}")


@_register(
    "NoCommittedDataLoss",
    "KIP-101, KIP-279, KIP-320; Kafka's durability contract for acks=all",
    lambda s: (s.ghost.acked, *_permits(s), s.ghost.deleted_to, _leader_logs(s)),
    _over("ghost.acked", *_PERMITS, "ghost.deleted_to", *_LEADERSHIP),
)
def no_committed_data_loss(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Every acknowledged record stays at its offset in the log of every leader of the acknowledging
    leader's epoch or a later one (a superseded zombie leader of an earlier epoch may lack it),
    unless DeleteRecords or retention moved a log start past it (``Ghost.deleted_to``, KIP-107)."""
    leaders = list(_leaders(s))
    for a in s.ghost.acked:
        if a.offset < s.ghost.deleted_to:
            continue
        for b, r in leaders:
            if r.leader_epoch < max(a.epoch, a.leader_epoch):
                continue
            held = _entry_at(r, a.offset)
            if held is None or held.offset != a.offset or held.epoch != a.epoch or held.rid != a.rid:
                why = "" if a.guaranteed else f"acks={a.acks} does not wait for the ISR"
                why = why or _loss_permitted(s, a.epoch)
                yield Violation(
                    "NoCommittedDataLoss",
                    f"record {a.rid} acked (acks={a.acks}) at offset {a.offset} epoch {a.epoch} is "
                    f"{_entry_at(r, a.offset)} on leader {b} (epoch {r.leader_epoch})",
                    allowed=bool(why),
                    allowed_because=why,
                )


@_register(
    "NoDivergenceBelowHw",
    "KIP-101, KIP-279 (log divergence)",
    lambda s: (*_permits(s), _logs(s)),
    _over(*_PERMITS, *_LOGS),
)
def no_divergence_below_hw(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Any two running replicas hold the same record at every offset below both of their HWs."""
    running = list(_running(s))
    for i, (b1, r1) in enumerate(running):
        for b2, r2 in running[i + 1 :]:
            below = min(r1.hw, r2.hw, r1.leo, r2.leo)
            start = max(r1.log_start, r2.log_start)  # below both log starts' maximum one was deleted
            if r1.log[start:below] == r2.log[start:below]:
                continue  # the same record at every offset below both HWs (the loop would find none)
            for o in range(start, below):
                if r1.log[o] != r2.log[o]:
                    why = _any_permitted(s)
                    yield Violation(
                        "NoDivergenceBelowHw",
                        f"offset {o}: broker {b1} has {r1.log[o]}, broker {b2} has {r2.log[o]} (HWs {r1.hw}, {r2.hw})",
                        allowed=bool(why),
                        allowed_because=why,
                    )
                    break


@_register(
    "ConsumerReadsBelowHw",
    "KIP-101; FetchIsolation.HIGH_WATERMARK; DelayedFetch.onComplete",
    lambda s: (s.ghost.consumed,),
    _over("ghost.consumed"),
)
def consumer_reads_below_hw(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """A read_uncommitted consumer never receives a record at or above the serving leader's HW, also
    from a fetch that waited in the purgatory (its bound is the HW at completion time)."""
    for entry, hw in s.ghost.consumed:
        if entry.offset >= hw:
            yield Violation("ConsumerReadsBelowHw", f"consumer read offset {entry.offset} with HW {hw}")


@_register(
    "ConsumedRecordsStay",
    "KIP-101, KIP-279: what consumers saw is committed",
    lambda s: (s.ghost.consumed, *_permits(s), s.ghost.deleted_to, _leader_logs(s)),
    _over("ghost.consumed", *_PERMITS, "ghost.deleted_to", *_LEADERSHIP),
)
def consumed_records_stay(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Every record a consumer read stays at its offset in the log of every later leader, unless
    DeleteRecords or retention moved a log start past it (KIP-107)."""
    seen: set[Entry] = set()
    for entry, _hw in s.ghost.consumed:
        if entry in seen or entry.offset < s.ghost.deleted_to:
            continue
        seen.add(entry)
        for b, r in _leaders(s):
            if r.leader_epoch >= entry.epoch and _entry_at(r, entry.offset) != entry:
                why = _loss_permitted(s, entry.epoch)
                yield Violation(
                    "ConsumedRecordsStay",
                    f"consumed {entry} but leader {b} (epoch {r.leader_epoch}) has {_entry_at(r, entry.offset)}",
                    allowed=bool(why),
                    allowed_because=why,
                )


@_register_step("LeaderEpochsMonotonic", "KIP-101 (leader epochs), KIP-320")
def leader_epochs_monotonic(pre: State, post: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Neither the controller's nor a running broker's leader epoch ever decreases."""
    if post.controller.leader_epoch < pre.controller.leader_epoch:
        yield Violation(
            "LeaderEpochsMonotonic",
            f"controller leader epoch {pre.controller.leader_epoch} -> {post.controller.leader_epoch}",
        )
    for b, (p, r) in enumerate(zip(pre.replicas, post.replicas, strict=True)):
        if p is not r and p.alive and r.alive and r.leader_epoch < p.leader_epoch:
            yield Violation("LeaderEpochsMonotonic", f"broker {b}: leader epoch {p.leader_epoch} -> {r.leader_epoch}")


@_register(
    "EpochCacheStrictlyIncreasing",
    "KIP-101; LeaderEpochFileCache",
    lambda s: tuple([(r.epoch_cache, r.leo) for r in s.replicas]),
    _over("replica.epoch_cache", "replica.log"),
)
def epoch_cache_strictly_increasing(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """In every replica's epoch cache both epochs and start offsets strictly increase, within the log."""
    for b, r in enumerate(s.replicas):
        cache = r.epoch_cache
        for (e1, s1), (e2, s2) in itertools.pairwise(cache):
            if not (e1 < e2 and s1 < s2):
                yield Violation("EpochCacheStrictlyIncreasing", f"broker {b}: cache {cache} not increasing")
                break
        if cache and cache[-1][1] > r.leo:
            yield Violation("EpochCacheStrictlyIncreasing", f"broker {b}: cache {cache} starts beyond LEO {r.leo}")


@_register(
    "LeaderWritesUnique",
    "KIP-101: (leader epoch, offset) identifies a record",
    lambda s: (s.ghost.written,),
    _over("ghost.written"),
)
def leader_writes_unique(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """No two records were ever written by leaders at the same (leader epoch, offset)."""
    seen: dict[tuple[int, int], Entry] = {}
    for e in sorted(s.ghost.written):
        other = seen.setdefault((e.epoch, e.offset), e)
        if other != e:
            yield Violation("LeaderWritesUnique", f"epoch {e.epoch} offset {e.offset}: {other.rid} and {e.rid}")


def _isr_agreement(s: State, name: str, strong: bool) -> Iterator[Violation]:
    for b, r in _leaders(s):
        members = s.controller.isr if strong else r.isr
        for m in members:
            other = s.replicas[m]
            start = max(r.log_start, other.log_start)  # below it one of them deleted the records
            if other.log[start : r.hw] == r.log[start : r.hw]:
                continue  # equal prefixes: the same entry (or both none) at every offset below r.hw
            for o in range(start, r.hw):
                if _entry_at(r, o) != _entry_at(other, o):
                    why = _any_permitted(s)
                    yield Violation(
                        name,
                        f"leader {b} (epoch {r.leader_epoch}, HW {r.hw}) has {_entry_at(r, o)} at offset {o} "
                        f"but {'controller' if strong else 'its'} ISR member {m} has {_entry_at(other, o)}",
                        allowed=bool(why),
                        allowed_because=why,
                    )
                    break


@_register(
    "WeakIsr",
    "hachikuji/kafka-specification WeakIsr",
    lambda s: (*_permits(s), _isr_views(s)),
    _over(*_PERMITS, *_LEADERSHIP, *_LOGS, "replica.isr"),
)
def weak_isr(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """A replica presuming leadership holds, below its HW, the same records as every member of its own ISR view."""
    yield from _isr_agreement(s, "WeakIsr", strong=False)


@_register(
    "StrongIsr",
    "hachikuji/kafka-specification StrongIsr",
    lambda s: (*_permits(s), s.controller.isr, _isr_views(s)),
    _over(*_PERMITS, "controller", *_LEADERSHIP, *_LOGS, "replica.isr"),
)
def strong_isr(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """A replica presuming leadership holds, below its HW, the same records as every member of the controller's ISR."""
    yield from _isr_agreement(s, "StrongIsr", strong=True)


@_register(
    "LogStartBelowHw",
    "KIP-107; UnifiedLog.maybeIncrementLogStartOffset, KAFKA-5634, KAFKA-9491",
    lambda s: (_logs(s),),
    _over(*_LOGS),
)
def log_start_below_hw(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Every running replica's log start offset is at most its high watermark (with HwBelowLeo:
    logStartOffset ≤ HW ≤ LEO), and the record at its log start is still held."""
    for b, r in _running(s):
        if r.log_start > r.hw:
            yield Violation("LogStartBelowHw", f"broker {b}: log start {r.log_start} > HW {r.hw}")
        elif r.log_start < r.leo and r.log[r.log_start].epoch == log_start.DELETED:
            yield Violation("LogStartBelowHw", f"broker {b}: the record at its log start {r.log_start} is deleted")


@_register_step("LogStartMonotonic", "KIP-107; UnifiedLog.maybeIncrementLogStartOffset, UnifiedLog.truncateTo")
def log_start_monotonic(pre: State, post: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """A running replica's log start offset never decreases, except to its new LEO when a truncation
    empties the log below the old start (UnifiedLog.truncateTo: logStartOffset = min(target, start))."""
    for b, (p, r) in enumerate(zip(pre.replicas, post.replicas, strict=True)):
        if p is not r and p.alive and r.alive and r.log_start < p.log_start and r.log_start != r.leo:
            yield Violation("LogStartMonotonic", f"broker {b}: log start {p.log_start} -> {r.log_start} (LEO {r.leo})")


@_register(
    "NoReadBelowLogStart",
    "KIP-107; LocalLog.read: OFFSET_OUT_OF_RANGE below logStartOffset",
    lambda s: (s.ghost.consumed,),
    _over("ghost.consumed"),
)
def no_read_below_log_start(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """No consumer ever receives a record that was deleted (below the serving leader's log start)."""
    for entry, _hw in s.ghost.consumed:
        if entry.epoch == log_start.DELETED:
            yield Violation("NoReadBelowLogStart", f"consumer read deleted offset {entry.offset}")


@_register(
    "PurgatoryDeadlines",
    "DelayedOperation (timing-wheel expiry); DelayedFetch, DelayedProduce",
    _parked_and_clock,
    _over("tracks_purgatory", "replica.alive", "replica.purgatory", state_parts.CLOCK),
)
def purgatory_deadlines(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """No parked request (delayed produce or fetch) outlives its timeout on a running broker.

    Judged where time passes timer by timer (``State.tracks_purgatory``: the lockstep judge); the
    model searches' clock jumps complete timed-out operations by their own atomic actions."""
    if not s.tracks_purgatory:
        return
    for b, r in _running(s):
        for op in r.purgatory:
            if s.now_ms > op.deadline_ms:
                yield Violation(
                    "PurgatoryDeadlines",
                    delayed.past_deadline_message(f"broker {b}", purgatory.describe(op), s.now_ms, op.deadline_ms),
                )


@_register(
    "DelayedTriggersHonoured",
    "DelayedOperationPurgatory.checkAndComplete; Partition.tryCompleteDelayedRequests; "
    "ReplicaManager.addCompletePurgatoryAction, completeDelayedOperationsWhenNotPartitionLeader",
    lambda s: (s.ghost.overdue,),
    _over("ghost.overdue"),
)
def delayed_triggers_honoured(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Every completion trigger is honoured: a parked request that an HW advance, a log append, a
    loss of leadership or its deadline made completable is completed before time moves on."""
    for message in s.ghost.overdue:
        yield Violation("DelayedTriggersHonoured", message)


@timer_bounds.reports(
    _REGISTRY,
    "CrashedBrokerFenced",
    "KRaft broker sessions: BrokerHeartbeatManager.hasValidSession (broker.session.timeout.ms); "
    "QuorumController.rescheduleMaybeFenceStaleBrokers, ReplicationControlManager.maybeFenceOneStaleBroker",
    _over("ghost.late_fences"),
)
def crashed_broker_fenced(s: State) -> tuple[str, ...]:
    """A broker that crashed is fenced by the controller within broker.session.timeout.ms (plus a
    second's slack for a periodic check) unless it restarted first: its partitions then elect
    another leader instead of waiting for it.

    Judged where time passes timer by timer (``State.tracks_fencing``: the lockstep judge); the
    bound is model.fencing's."""
    return s.ghost.late_fences


@timer_bounds.reports(
    _REGISTRY,
    "IsrShrinkBounded",
    "ReplicaManager.startup (isr-expiration every replica.lag.time.max.ms / 2); Partition.maybeShrinkIsr, "
    "getOutOfSyncReplicas, isFollowerOutOfSync; ReplicaState.isCaughtUp; KIP-497",
    _over("ghost.late_shrinks"),
)
def isr_shrink_bounded(s: State) -> tuple[str, ...]:
    """A running leader with no AlterPartition in flight proposes an ISR member out within one
    isr-expiration period after it fell out of sync (replica.lag.time.max.ms without catching up).

    Judged where time passes timer by timer (``State.tracks_isr_expiration``: the lockstep judge);
    the bound and its window are model.isr_expiration's."""
    return s.ghost.late_shrinks


@timer_bounds.reports(
    _REGISTRY,
    "IsrExpansionProposed",
    "Partition.updateFollowerFetchState → maybeExpandIsr, canAddReplicaToIsr, isReplicaIsrEligible (KIP-841), "
    "needsExpandIsr / isFollowerInSync (KIP-320, KAFKA-7128); KIP-497",
    _over("ghost.late_expansions"),
)
def isr_expansion_proposed(s: State) -> tuple[str, ...]:
    """A leader proposes a follower back into its ISR at the Fetch that finds it in sync (LEO at
    least the HW and, from KIP-320, the start of the leader's epoch), unless an AlterPartition is in
    flight or its metadata may still hold the follower fenced: before time moves on.

    Judged where every Fetch, every partition record a broker receives and every move of time is
    seen (``State.tracks_isr_expansion``: the lockstep judge); the rule is model.isr_expansion's."""
    return s.ghost.late_expansions


@timer_bounds.reports(
    _REGISTRY,
    "FollowerKeepsFetching",
    "AbstractFetcherThread.doWork, processFetchRequest, handlePartitionsWithErrors / delayPartitions "
    "(replica.fetch.backoff.ms, ReplicaFetcherThread); BrokerBlockingSender's NetworkClient (request.timeout.ms), "
    "NetworkClientUtils.sendAndReceive; ReplicaFetcherManager.addFetcherForPartitions",
    _over("ghost.stalled_fetchers"),
)
def follower_keeps_fetching(s: State) -> tuple[str, ...]:
    """A running follower whose fetcher follows a leader asks it again at once when the fetcher
    starts or an answer to its latest request appended records or truncated its log, within
    replica.fetch.backoff.ms of any other answer, and within request.timeout.ms +
    replica.fetch.backoff.ms of a request that found no answer.

    With the lockstep judging of every answer this is replication progress conditioned on
    delivery: only the follower's own sending is demanded, never a delivery the network withheld.
    Judged where every request and every timer's time is seen (``State.tracks_fetchers``: the
    lockstep judge); the bound is model.fetch_pacing's."""
    return s.ghost.stalled_fetchers


@timer_bounds.reports(
    _REGISTRY,
    "FollowerBacksOff",
    "AbstractFetcherThread.handlePartitionsWithErrors / delayPartitions (replica.fetch.backoff.ms: "
    '"the amount of time to sleep when fetch partition error occurs"), maybeTruncateToEpochEndOffsets',
    _over("ghost.hasty_fetches"),
)
def follower_backs_off(s: State) -> tuple[str, ...]:
    """After an answer with an error, a follower asks its leader again no sooner than
    replica.fetch.backoff.ms later, unless new metadata restarts its fetcher.

    Judged where every request is seen (``State.tracks_fetchers``: the lockstep judge);
    model.fetch_pacing records each hasty request when it is sent."""
    return s.ghost.hasty_fetches


@_register(
    "ElrDisjointFromIsr",
    "KIP-966; PartitionChangeBuilder.maybePopulateTargetElr (ELR excludes the target ISR)",
    lambda s: (s.elr, s.controller.isr),
    _over("elr", "controller"),
)
def elr_disjoint_from_isr(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """No replica is both an ISR member and an Eligible Leader Replica."""
    both = sorted(set(s.elr) & set(s.controller.isr))
    if both:
        yield Violation("ElrDisjointFromIsr", f"replicas {both} are in the ISR {s.controller.isr} and the ELR {s.elr}")


@_register(
    "ElrOnlyBelowMinIsr",
    "KIP-966; PartitionChangeBuilder.maybePopulateTargetElr (ELR cleared once ISR >= min ISR)",
    lambda s: (s.elr, s.controller.isr),
    _over("elr", "controller"),
)
def elr_only_below_min_isr(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """The ELR is empty whenever the ISR has at least min.insync.replicas members."""
    if s.elr and len(s.controller.isr) >= cfg.effective_min_isr:
        yield Violation(
            "ElrOnlyBelowMinIsr",
            f"ELR {s.elr} kept while the ISR {s.controller.isr} has "
            f"min.insync.replicas={cfg.effective_min_isr} members",
        )


@_register(
    "LeaderUnfenced",
    "KIP-841 (a fenced replica is not eligible to become leader); KAFKA-19522 (fenced last known leader elected)",
    lambda s: (s.controller.leader, s.fenced),
    _over("controller", "fenced"),
)
def leader_unfenced(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """The controller's leader is never a fenced broker."""
    if s.controller.leader in s.fenced:
        yield Violation("LeaderUnfenced", f"leader {s.controller.leader} is fenced ({sorted(s.fenced)})")


def _elr_loss_permitted(s: State, cfg: ReplicationConfig, after_epoch: int) -> str:
    """Why KIP-966 does not promise the survival of a record written in ``after_epoch``, or ''."""
    if any(u > after_epoch for u in s.ghost.unclean_epochs):
        return "an unclean (or last-known-leader) election happened after the write"
    if len(s.ghost.lossy_crashes) >= cfg.effective_min_isr:
        return f"{len(s.ghost.lossy_crashes)} brokers lost unflushed data in crashes (>= min.insync.replicas)"
    if not cfg.elr:
        return (
            "without ELR (eligible.leader.replicas.version=0) the last ISR member stays in the ISR and "
            "is re-elected after a crash lost its data (the last replica standing of KIP-966)"
        )
    return ""


@_register(
    "ElrDurability",
    "KIP-966 (motivation: the last replica standing; guarantee with fewer than min ISR unclean shutdowns)",
    lambda s: (s.ghost.acked, s.ghost.unclean_epochs, s.ghost.lossy_crashes, s.ghost.deleted_to, _leader_logs(s)),
    _over("ghost.acked", "ghost.unclean_epochs", "ghost.lossy_crashes", "ghost.deleted_to", *_LEADERSHIP),
)
def elr_durability(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Every record acknowledged to acks=all stays at its offset on every leader of its epoch or a
    later one while fewer than min.insync.replicas brokers lost unflushed data in crashes and no
    unclean election followed the write, unless DeleteRecords or retention deleted it (KIP-107);
    promised with ELR only (else reported as allowed)."""
    leaders = list(_leaders(s))
    for a in s.ghost.acked:
        if not a.guaranteed or a.offset < s.ghost.deleted_to:
            continue
        for b, r in leaders:
            if r.leader_epoch < max(a.epoch, a.leader_epoch):
                continue
            held = _entry_at(r, a.offset)
            if held is None or held.epoch != a.epoch or held.rid != a.rid:
                why = _elr_loss_permitted(s, cfg, a.epoch)
                yield Violation(
                    "ElrDurability",
                    f"record {a.rid} acked (acks=all) at offset {a.offset} epoch {a.epoch} is {held} on leader "
                    f"{b} (epoch {r.leader_epoch}) after {len(s.ghost.lossy_crashes)} lossy crash(es)",
                    allowed=bool(why),
                    allowed_because=why,
                )


# The follower-fetching consumer (KIP-392; model.read_replica). Its deliveries also enter
# ``Ghost.consumed`` with the serving broker's HW, so ConsumerReadsBelowHw and ConsumedRecordsStay
# hold them to the same bar as a leader's: below the HW that served them, and committed.


@_register(
    "ReplicaReadBelowHw",
    "KIP-392; Partition.fetchRecords reads a follower's local log with FetchIsolation.HIGH_WATERMARK",
    lambda s: (s.ghost.reader.deliveries,),
    _over("ghost.reader"),
)
def replica_read_below_hw(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """The follower-fetching consumer only gets records below the HW of the broker that served
    them, leader or preferred read replica (a follower's HW never passes its leader's HW at the
    time the leader answered the follower)."""
    for d in s.ghost.reader.deliveries:
        if d.entry.offset >= d.served_hw:
            where = "preferred read replica" if d.from_follower else "leader"
            yield Violation(
                "ReplicaReadBelowHw",
                f"consumer got offset {d.entry.offset} from {where} {d.broker} with HW {d.served_hw}",
            )


@_register(
    "ReaderNoSkipNoRepeat",
    "KIP-392 (a switch between the leader and a preferred read replica keeps the position); FetchCollector",
    lambda s: (s.ghost.reader.deliveries, s.ghost.reader.resets),
    _over("ghost.reader"),
)
def reader_no_skip_no_repeat(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """Between position resets the follower-fetching consumer's deliveries are consecutive offsets,
    whichever broker served each one: a switch between the leader and a preferred read replica
    (either way, and on expiry) never skips nor repeats a record. After a reset they start at the
    reset's position."""
    starts = {r.after: r.to for r in s.ghost.reader.resets}
    expected = 0
    for i, d in enumerate(s.ghost.reader.deliveries):
        expected = starts.get(i, expected)
        if d.entry.offset != expected:
            yield Violation(
                "ReaderNoSkipNoRepeat",
                f"delivery {i} is offset {d.entry.offset} from broker {d.broker}, expected offset {expected}",
            )
            return
        expected += 1


@_register(
    "NoResetOnFollowerAnswer",
    "KIP-392; KAFKA-8365 (FetchCollector.handleInitializeErrors: OFFSET_OUT_OF_RANGE clears a set "
    "preferred read replica; only an answer that finds none set resets the position)",
    lambda s: (s.ghost.reader.resets,),
    _over("ghost.reader"),
)
def no_reset_on_follower_answer(s: State, cfg: ReplicationConfig) -> Iterator[Violation]:
    """The follower-fetching consumer never resets its position while it still has a preferred
    read replica: a lagging or truncated follower's OFFSET_OUT_OF_RANGE sends it back to the
    leader, which alone decides whether the position is out of range.

    Judged on whether a replica was set when the answer arrived, not on who answered: a
    consumer expires its preferred replica lazily, when it next selects a read replica
    (SubscriptionState.preferredReadReplica), and may do so while a Fetch to the follower is
    pending; that follower's OFFSET_OUT_OF_RANGE then finds nothing to clear, and Kafka resets
    (docs/follower-fetching.md)."""
    for r in s.ghost.reader.resets:
        if r.replica_set:
            who = "preferred read replica" if r.from_follower else "leader"
            yield Violation(
                "NoResetOnFollowerAnswer",
                f"position reset to {r.to} on OFFSET_OUT_OF_RANGE from {who} {r.broker} "
                "while a preferred read replica was set",
            )


def check_state(
    s: State, cfg: ReplicationConfig, names: frozenset[str] | None = None, memo: Memo | None = None
) -> list[Violation]:
    """Every state invariant (or the named ones) over ``s``. With a ``memo`` (one per sequence of
    states, e.g. one judge's), an invariant whose inputs equal those of its previous check in that
    memo is not re-run: its verdict then is returned again (a check is a function of its inputs and
    the config; states are immutable values; model.guarantees.Registry.check_state)."""
    return _REGISTRY.check_state(s, cfg, names, memo)


def check_step(pre: State, post: State, cfg: ReplicationConfig, names: frozenset[str] | None = None) -> list[Violation]:
    """Every step invariant (or the named ones) over the step ``pre`` → ``post``."""
    return _REGISTRY.check_step(pre, post, cfg, names)
