"""ReplicaTest (core/src/test/scala/unit/kafka/cluster/), its Replica.resetReplicaState cases, ported
onto the replication model: what a broker keeps of a follower when it becomes leader in a new
leader epoch (Partition.makeLeader), as a new leader or re-elected without having left leadership.

Each test first sees the follower fetch at offset 10 with the leader at 10 (updateFetchState), then
resets with the leader's end offset 11 a moment later: here the leader (broker 0, ten records) sees
follower 1 fetch at 10, appends one record, and a second later applies a partition record of a
later leader epoch naming it leader again (re-elected), or one naming broker 1 and then one naming
it (a new leader).
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import REPLICATION, TRUNK, Scenario, Step, call, check
from kconform.conformance.yardstick.partition_test import NEVER, T0, ff, leader_of, two

K = "ReplicaTest"

NOT_OBSERVED = (
    "lastFetchLeaderLogEndOffset and lastFetchTimeMs (11 and the reset time in sync, 11 and 0 out of it; "
    "-1 and 0 for a new leader) are not observables of the model's partition; model.replication.reset_remotes "
    "sets them so (tests/test_reelected_leader.py), and a later Fetch reads them"
)


def _reset(method: str, in_sync: bool, new_leader: bool) -> Scenario:
    isr = [0, 1] if in_sync else [0]
    steps: list[Step] = [
        ff(1, 10, remote_leos={1: 10}, last_caught_up={1: T0}),
        call("produce", acks=1).step(),
        check(leos={0: 11}),
        call("advance_clock", ms=1_000).step(),
    ]
    if new_leader:
        steps.append(call("make_leader", leader=1, leader_epoch=6, isr=[0, 1], partition_epoch=2).step())
    epoch, partition_epoch = (7, 3) if new_leader else (6, 2)
    steps += [
        call("make_leader", leader_epoch=epoch, isr=isr, partition_epoch=partition_epoch).then(changed=True),
        check(
            remote_leos={1: -1 if new_leader else 10},
            last_caught_up={1: T0 + 1_000 if in_sync else NEVER},
        ),
    ]
    return Scenario(
        K,
        method,
        TRUNK,
        REPLICATION,
        given=leader_of(10, [0, 1]),
        steps=tuple(steps),
        config=two(),
        resolution=(
            "model fixed (model.replication.reset_remotes): the model forgot every follower's LEO on every new "
            "leader epoch, also when re-elected; "
            if not new_leader
            else ""
        )
        + NOT_OBSERVED,
    )


SCENARIOS: tuple[Scenario, ...] = (
    _reset("testResetReplicaStateWhenLeaderIsReelectedAndReplicaIsInSync", in_sync=True, new_leader=False),
    _reset("testResetReplicaStateWhenLeaderIsReelectedAndReplicaIsNotInSync", in_sync=False, new_leader=False),
    _reset("testResetReplicaStateWhenNewLeaderIsElectedAndReplicaIsInSync", in_sync=True, new_leader=True),
    _reset("testResetReplicaStateWhenNewLeaderIsElectedAndReplicaIsNotInSync", in_sync=False, new_leader=True),
)
