"""The purgatory of one broker: delayed produces and delayed fetches as one structure, with the
completion triggers of Kafka's DelayedOperationPurgatory.

Kafka parks a request that cannot be answered yet as a DelayedOperation watched under its
partition's key (``DelayedOperationPurgatory.tryCompleteElseWatch``) and re-checks the watchers of
that key when something changes (``checkAndComplete``); an expiry timer force-completes it at its
deadline. Which change re-checks what (ReplicaManager, Partition; kafka-facts §6):

- the leader's HW increased → every delayed operation of the partition
  (``Partition.tryCompleteDelayedRequests``; ``ReplicaManager.addCompletePurgatoryAction`` with
  ``LeaderHwChange.INCREASED``);
- an append that left the HW where it was → the delayed fetches (``LeaderHwChange.SAME``: "probably
  unblock some follower fetch requests since log end offset has been updated");
- the broker stopped leading → every delayed operation
  (``ReplicaManager.completeDelayedOperationsWhenNotPartitionLeader`` from applyLocalFollowersDelta);
- the deadline passed → that operation (the timing wheel's expiry, ``forceComplete``).

A re-check completes an operation when its own condition holds (``ready``): a produce when the HW
passed its record or the broker stopped leading (DelayedProduce.tryComplete /
Partition.checkEnoughReplicasReachOffset); a fetch in DelayedFetch.tryComplete's cases A-H. This
module records which parked operations a trigger found ready (``Replica.due``); the completion
handlers (model.replication) remove them. ``DelayedTriggersHonoured`` (model.invariants) holds that
none is still parked when time moves on: Kafka completes them synchronously, in the handler that
pulled the trigger. The model does not read this to *forbid* a completion: a completion any
state justifies is accepted (model.replication.complete_produce / complete_fetch).

The bookkeeping (which parked operations are due, expiry, overdue reports) is model.delayed,
shared with the exactly-once slice, whose read_committed consumers count up to the last stable
offset (FetchIsolation.TXN_COMMITTED) and are re-checked when the LSO moves, with the HW passing a
marker (model.txn_delayed_fetch). The replication slice has no transactions, so its consumers are
read_uncommitted (bound: HW) and its followers read to the LEO (FetchIsolation.LOG_END).
"""

from __future__ import annotations

from dataclasses import replace

from kconform.model import delayed, epochs
from kconform.model.config import ReplicationConfig
from kconform.model.errors import FENCED_LEADER_EPOCH, NONE, UNKNOWN_LEADER_EPOCH
from kconform.model.state import Delayed, DelayedFetch, DelayedProduce, Replica, State


def fence_error(r: Replica, current_leader_epoch: int) -> int:
    """KIP-320's currentLeaderEpoch check (Partition.checkCurrentLeaderEpoch; absent = -1: none)."""
    if current_leader_epoch < 0:
        return NONE
    if r.leader_epoch > current_leader_epoch:
        return FENCED_LEADER_EPOCH
    if r.leader_epoch < current_leader_epoch:
        return UNKNOWN_LEADER_EPOCH
    return NONE


def fetch_bound(r: Replica, from_follower: bool) -> int:
    """The isolation bound of a read (FetchIsolation): the LEO for a follower (LOG_END), the HW
    for a read_uncommitted consumer (HIGH_WATERMARK)."""
    return r.leo if from_follower else r.hw


def fetch_ready(s: State, cfg: ReplicationConfig, node: int, df: DelayedFetch) -> bool:
    """DelayedFetch.tryComplete: whether the parked fetch ``df`` may be answered now.

    Case E (the request's currentLeaderEpoch is fenced) and case A (no longer the leader: every
    fetch of this slice reads from the leader only, FetchParams.fetchOnlyLeader) first, as
    Partition.fetchOffsetSnapshot checks them; then case F (the fetch offset is past the bound:
    a truncated leader), case H for a follower carrying lastFetchedEpoch (its epoch now diverges
    or is undefined), case G (the records between the start offset and the bound reach minBytes).
    """
    r = s.replica(node)
    if fence_error(r, df.current_leader_epoch) != NONE or not s.presumes_leadership(node):
        return True
    bound = fetch_bound(r, df.from_follower)
    if df.start_offset > bound:
        return True
    if df.from_follower and df.last_fetched_epoch >= 0:
        end_epoch, end_offset = epochs.end_offset_for(
            r.epoch_cache, df.last_fetched_epoch, r.leo, cfg.protocol.kafka_7415
        )
        if end_epoch == -1 or end_offset == -1:
            return True
        if end_epoch < df.last_fetched_epoch or end_offset < df.fetch_offset:
            return True
    return bound - df.start_offset >= df.min_bytes


def produce_ready(s: State, node: int, dp: DelayedProduce) -> bool:
    """DelayedProduce.tryComplete: the HW passed the record, or the broker no longer leads."""
    return not s.presumes_leadership(node) or s.replica(node).hw > dp.offset


def ready(s: State, cfg: ReplicationConfig, node: int, op: Delayed) -> bool:
    """Whether a re-check of ``op`` completes it now."""
    if isinstance(op, DelayedFetch):
        return fetch_ready(s, cfg, node, op)
    return produce_ready(s, node, op)


def trigger(s: State, cfg: ReplicationConfig, node: int, produces: bool = True, fetches: bool = True) -> State:
    """checkAndComplete on ``node``'s partition key: every parked operation of the kinds re-checked
    that is ready now becomes due (at most once per parked copy; model.delayed.recheck)."""
    r = s.replica(node)
    if not r.purgatory or not s.tracks_purgatory:
        return s

    def checked(op: Delayed) -> bool:
        kind_checked = fetches if isinstance(op, DelayedFetch) else produces
        return kind_checked and ready(s, cfg, node, op)

    due = delayed.recheck(r.purgatory, r.due, checked)
    if len(due) == len(r.due):
        return s
    return s.with_replica(node, replace(r, due=due))


def park(s: State, node: int, op: Delayed) -> State:
    """tryCompleteElseWatch that did not complete: ``op`` waits in ``node``'s purgatory."""
    r = s.replica(node)
    return s.with_replica(node, replace(r, purgatory=(*r.purgatory, op)))


def take(s: State, node: int, op: Delayed) -> State:
    """``op`` completed (forceComplete runs once): it leaves the purgatory and its obligation ends.
    A duplicated request parked twice has two copies with one ``req``: one of them goes."""
    r = s.replica(node)
    ops, due = delayed.remove(r.purgatory, r.due, op)
    return s.with_replica(node, replace(r, purgatory=ops, due=due))


def pass_time(s: State, now_ms: int) -> State:
    """Time moves to ``now_ms``: operations that were due and are still parked are overdue (a
    trigger was not honoured); then every operation whose deadline has come is due (its expiry;
    model.delayed.overdue / expire)."""
    overdue = list(s.ghost.overdue)
    for b, r in enumerate(s.replicas):
        late = delayed.overdue(r.purgatory, r.due) if r.alive else []
        if late:
            overdue.extend(delayed.late_message(f"broker {b}", describe(op), now_ms) for op in late)
            s = s.with_replica(b, replace(r, due=()))  # reported once; its expiry can make it due again
    if len(overdue) != len(s.ghost.overdue):
        s = replace(s, ghost=replace(s.ghost, overdue=tuple(overdue)))
    for b, r in enumerate(s.replicas):
        due = delayed.expire(r.purgatory, r.due, now_ms)
        if r.alive and len(due) != len(r.due):
            s = s.with_replica(b, replace(r, due=due))
    return s


def describe(op: Delayed) -> str:
    """One line naming a parked operation (for violations)."""
    if isinstance(op, DelayedFetch):
        who = f"follower {op.replica}" if op.from_follower else "consumer"
        return f"delayed fetch {op.req} ({who}, offset {op.fetch_offset}, minBytes {op.min_bytes})"
    return f"delayed produce {op.req} (offset {op.offset})"
