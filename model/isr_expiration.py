"""The isr-expiration task's bound: how long a running leader may keep a lagging follower in its ISR.

Kafka's ReplicaManager.startup schedules ``isr-expiration`` (ReplicaManager.maybeShrinkIsr →
Partition.maybeShrinkIsr) every ``replica.lag.time.max.ms / 2``; Kafka's own comment there: "a
follower can lag behind leader for up to config.replicaLagTimeMaxMs x 1.5 before it is removed from
ISR". Partition.maybeShrinkIsr proposes the ISR without Partition.getOutOfSyncReplicas (members
other than the leader for which isFollowerOutOfSync: not ReplicaState.isCaughtUp) unless an
AlterPartition is in flight (``partitionState.isInflight``; KIP-497).

Guarantee of this module: ``late_members`` names a follower only when every run of the task that a
leader must have made in the last check period (its broker runs, it leads, nothing in flight, the
follower in its committed ISR and out of sync the whole time) would have proposed it out. The
window starts at the latest of: the follower's last caught-up time + replica.lag.time.max.ms + 1
(isCaughtUp: ``now - lastCaughtUpTimeMs <= replicaMaxLagMs``), the last time its LEO stopped being
the leader's (isCaughtUp's first clause), and the last time the leader became leader, applied a
partition record or saw its proposal end (``Replica.isr_since_ms``). A task run more often than every
period only shrinks earlier, which stays permitted; crashes, lost messages and leader changes end or
restart the window.
"""

from __future__ import annotations

from collections.abc import Iterator

from kconform.model.config import ReplicationConfig
from kconform.model.state import RemoteReplica, Replica, State
from kconform.model.timer_bounds import NEVER


def caught_up(cfg: ReplicationConfig, rem: RemoteReplica, leader_leo: int, now_ms: int) -> bool:
    """Kafka's ReplicaState.isCaughtUp: at the leader's LEO, or caught up within the lag time."""
    if rem.leo == leader_leo:
        return True
    return rem.last_caught_up_ms is not None and now_ms - rem.last_caught_up_ms <= cfg.replica_lag_time_max_ms


def out_of_sync(cfg: ReplicationConfig, r: Replica, leader: int, now_ms: int) -> tuple[int, ...]:
    """Partition.getOutOfSyncReplicas: the members of ``r``'s committed ISR other than the
    leader that are not caught up (isFollowerOutOfSync), in ISR order."""
    return tuple(f for f in r.isr if f != leader and not caught_up(cfg, r.remotes[f], r.leo, now_ms))


def check_period_ms(cfg: ReplicationConfig) -> int:
    """ReplicaManager's isr-expiration period, ``replicaLagTimeMaxMs / 2`` (at least 1 ms)."""
    return max(1, cfg.replica_lag_time_max_ms // 2)


def shrink_deadlines(s: State, cfg: ReplicationConfig) -> Iterator[tuple[int, int, int]]:
    """(leader, follower, deadline ms) for each out-of-sync member of a running leader's committed
    ISR while no AlterPartition is in flight: by the deadline the leader has proposed it out."""
    period = check_period_ms(cfg)
    for b, r in enumerate(s.replicas):
        if r.pending_isr is not None or not s.presumes_leadership(b):
            continue
        for f in out_of_sync(cfg, r, b, s.now_ms):
            rem = r.remotes[f]
            start = r.isr_since_ms
            if rem.last_caught_up_ms is not None:
                start = max(start, rem.last_caught_up_ms + cfg.replica_lag_time_max_ms + 1)
            if rem.left_leo_ms is not None:
                start = max(start, rem.left_leo_ms)
            yield b, f, start + period


def quiet_until(s: State, cfg: ReplicationConfig) -> int:
    """The latest time up to which ``late_members`` is empty on ``s`` with its clock moved there
    (timer_bounds.NEVER: at every time): the earliest shrink deadline of an ISR member not at its
    leader's LEO. A member at the LEO is caught up (never late); one caught up within the lag time
    at a later clock has a deadline past that time (``start`` counts from its last catch-up plus
    the lag time), so it is out of sync, hence late, exactly when the clock passes its deadline."""
    period = check_period_ms(cfg)
    until = NEVER
    for b, r in enumerate(s.replicas):
        if r.pending_isr is not None or not s.presumes_leadership(b):
            continue
        leo = len(r.log)
        for f in r.isr:
            rem = r.remotes[f]
            if f == b or rem.leo == leo:
                continue
            start = r.isr_since_ms
            if rem.last_caught_up_ms is not None:
                start = max(start, rem.last_caught_up_ms + cfg.replica_lag_time_max_ms + 1)
            if rem.left_leo_ms is not None:
                start = max(start, rem.left_leo_ms)
            until = min(until, start + period)
    return until


def late_members(s: State, cfg: ReplicationConfig) -> tuple[str, ...]:
    """One message per ISR member whose shrink deadline has passed on ``s``'s clock."""
    return tuple(
        f"leader {b} kept follower {f} in its ISR past {deadline} ms (now {s.now_ms} ms; "
        f"replica.lag.time.max.ms {cfg.replica_lag_time_max_ms} + check period {check_period_ms(cfg)})"
        for b, f, deadline in shrink_deadlines(s, cfg)
        if s.now_ms > deadline
    )
