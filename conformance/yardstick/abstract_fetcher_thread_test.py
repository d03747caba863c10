"""AbstractFetcherThreadTest (core/src/test/scala/unit/kafka/server/), the truncation tests, ported.

Kafka's MockFetcherThread reconciles a follower log with a leader log by round trips; here the
replica logs are ``given`` (the epoch of each offset: mkBatch(baseOffset, leaderEpoch) = one
record) and ``replicate(follower, rounds)`` runs the rung's round trips (Fetch with
lastFetchedEpoch on diverging-epoch, the default; OffsetsForLeaderEpoch then Fetch on the older
rungs) until the logs agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import REPLICATION, TRUNK, Scenario, Step, call, check

K = "AbstractFetcherThreadTest"


def S(
    method: str,
    given: Mapping[str, Any],
    *steps: Step,
    config: Mapping[str, Any] | None = None,
    part: str = "",
    resolution: str = "",
) -> Scenario:
    return Scenario(
        K, method, TRUNK, REPLICATION, given=given, steps=steps, config=config or {}, part=part, resolution=resolution
    )


def pair(
    leader: list[int],
    follower: list[int],
    leader_epoch: int,
    leader_hw: int,
    follower_hw: int = 0,
    follow: str = "fetching",
) -> dict[str, object]:
    return {
        "replicas": 2,
        "leader": 0,
        "leader_epoch": leader_epoch,
        "logs": {0: leader, 1: follower},
        "hw": {0: leader_hw, 1: follower_hw},
        "follow": follow,
    }


TWO = {"replicas": 2, "min_insync_replicas": 1}

SCENARIOS: tuple[Scenario, ...] = (
    S(
        "testTruncation",
        pair([1, 3, 5], [0, 2, 4], 5, 2),
        call("replicate", follower=1, rounds=4).then(outcomes=("diverged", "diverged", "diverged", "appended")),
        check(logs={0: (1, 3, 5), 1: (1, 3, 5)}, leos={0: 3, 1: 3}, hws={0: 2, 1: 2}),
        config=TWO,
        part="truncation on fetch",
    ),
    S(
        "testTruncation",
        pair([1, 3, 5], [0, 2, 4], 5, 2, follow="truncating"),
        call("replicate", follower=1, rounds=5).step(),
        check(logs={0: (1, 3, 5), 1: (1, 3, 5)}, leos={0: 3, 1: 3}, hws={1: 2}),
        config={**TWO, "protocol": "kip-320"},
        part="OffsetsForLeaderEpoch",
        resolution="the mock leader's HW stays 2; the model's leader advances its HW once the follower caught up, "
        "so only the follower's HW (2, from the leader's answers) is compared",
    ),
    S(
        "testDivergingEpochs",
        pair([0, 2, 5], [0, 2, 4], 5, 2),
        check(latest_epochs={1: 4}),
        call("replicate", follower=1).then(outcomes=("diverged",), latest_epochs={1: 2}),
        call("replicate", follower=1).then(logs={1: (0, 2, 5)}, latest_epochs={1: 5}),
        config=TWO,
    ),
    S(
        "testFollowerFetchOutOfRangeHigh",
        pair([], [0, 2, 4], 4, 0),
        call("replicate", follower=1).then(leos={1: 0}, hws={1: 0}),
        config=TWO,
        part="the leader's log already empty",
        resolution="the test first fetches in sync, then empties the leader's log (log.clear() in the mock) and "
        "fetches again; the model cannot delete a leader's records, so the scenario starts from the "
        "emptied leader: the follower ends at LEO 0, HW 0 as in the test",
    ),
    S(
        "testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable",
        pair([0, 2, 4], [0, 2, 4], 5, 2, 2, "truncating"),
        call("apply_epoch_answer", follower=1, epoch=-1, end_offset=-1).then(outcome="truncated", truncated_to=2),
        check(leos={1: 2}),
        config={**TWO, "protocol": "kip-279"},
    ),
    S(
        "testTruncateToHighWatermarkIfLeaderEpochRequestNotSupported",
        pair([0, 2, 4], [0, 2, 4], 5, 2, 2),
        call("become_follower", node=1, leader=0, leader_epoch=6).then(outcome="become_follower", truncated_to=2),
        check(leos={1: 2}),
        config={**TWO, "protocol": "truncate-to-hw"},
        part="a follower before 0.11",
        resolution="the test disables OffsetsForLeaderEpoch in the mock; the rung truncate-to-hw (before KIP-101) "
        "is that protocol: the follower truncates to its HW, 2",
    ),
)
