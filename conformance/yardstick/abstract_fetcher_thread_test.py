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
from kconform.traces.events import FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH

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
    **more: object,
) -> dict[str, object]:
    return {
        **more,
        "replicas": 2,
        "leader": 0,
        "leader_epoch": leader_epoch,
        "logs": {0: leader, 1: follower},
        "hw": {0: leader_hw, 1: follower_hw},
        "follow": follow,
    }


TWO = {"replicas": 2, "min_insync_replicas": 1}
KIP_320 = {**TWO, "protocol": "kip-320"}
THREAD = "the fetcher thread's own bookkeeping (metrics, lag gauges, back-off delays, the failed-partitions set)"
REMOVED = (
    "a partition removed from the fetcher while its OffsetsForLeaderEpoch or Fetch is in flight: the thread "
    "drops the answer; the model's follower has no partition map to remove it from"
)
STORAGE = "a failing local append or truncation (KafkaStorageException): the model's logs never fail"
LOG_START = (
    "after OFFSET_OUT_OF_RANGE the follower asks the leader for its earliest offset (ListOffsets, "
    "fetchEarliestOffset) and the mocked leader throws FENCED_LEADER_EPOCH, so the thread marks the partition "
    "failed: the model's follower learns the leader's log start from the Fetch answer (model.log_start, "
    "KAFKA-9491), has no ListOffsets between replicas and no failed-partitions set"
)
FENCED = (
    "the fetcher thread then removes the partition and marks it failed (failedPartitions) until new metadata "
    "arrives; compared here: the leader's answer and the follower's log, which stays where it was"
)


def OUT(method: str, why: str, part: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, REPLICATION, out_of_scope=why, part=part)


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
    S(
        "testSimpleFetch",
        pair([0, 0], [], 0, 2),
        call("replicate", follower=1).then(outcomes=("appended",)),
        check(leos={1: 2}, hws={1: 2}),
        config=TWO,
    ),
    S(
        "testFencedTruncation",
        pair([1, 1], [], 1, 2, leader_epochs={1: 0}),
        call("fetch", follower=1, fetch_offset=0, current_leader_epoch=0).then(error=FENCED_LEADER_EPOCH, records=0),
        call("replicate", follower=1).step(),
        check(leos={1: 0}, hws={1: 0}),
        config=TWO,
        resolution=FENCED,
    ),
    S(
        "testFencedFetch",
        pair([0, 0], [0, 0], 1, 2, 2, leader_epochs={1: 0}),
        call("fetch", follower=1, fetch_offset=2, current_leader_epoch=0).then(error=FENCED_LEADER_EPOCH),
        call("replicate", follower=1).step(),
        check(leos={1: 2}),
        config=TWO,
        resolution="the test bumps the mock leader's epoch to 1 after the follower caught up (LEO 2); here the "
        "scenario starts after the bump. " + FENCED,
    ),
    S(
        "testUnknownLeaderEpochInTruncation",
        pair([0], [], 0, 1, follow="truncating", leader_epochs={1: 1}),
        call("epoch_query", epoch=-1, current_leader_epoch=1).then(error=UNKNOWN_LEADER_EPOCH),
        call("replicate", follower=1).step(),
        check(leos={1: 0}, fetch_states={1: "truncating"}),
        call("become_follower", node=0, leader=0, leader_epoch=1).step(),
        call("replicate", follower=1, rounds=2).step(),
        check(leos={1: 1}, fetch_states={1: "fetching"}),
        config=KIP_320,
        part="OffsetsForLeaderEpoch",
        resolution="the mock leader's HW is 2 over a one-record log; the model's HW is at most the LEO, so 1. "
        "The leader's epoch bump is the controller's new leader epoch 1 applied on broker 0",
    ),
    S(
        "testUnknownLeaderEpochWhileFetching",
        pair([0, 0], [0], 0, 2, 1, leader_epochs={1: 1}),
        call("fetch", follower=1, fetch_offset=1, current_leader_epoch=1).then(error=UNKNOWN_LEADER_EPOCH),
        call("replicate", follower=1).step(),
        check(leos={1: 1}, fetch_states={1: "fetching"}),
        config=TWO,
        resolution="the test itself calls this contrived: the follower fetched offset 0 at epoch 1, then the mock "
        "leader's epoch rewinds to 0; the scenario starts at the rewind (follower LEO 1, leader epoch 0) and "
        "checks the follower stays at its offset, still fetching. The last step (the leader back at epoch 1) is "
        "testSimpleFetch's",
    ),
    S(
        "testTruncationSkippedIfNoEpochChange",
        pair([1, 3, 5], [], 5, 2, follow="truncating"),
        call("replicate", follower=1, rounds=2).step(),
        check(logs={1: (1, 3, 5)}, leos={1: 3}, fetch_states={1: "fetching"}),
        config=KIP_320,
        resolution="the mock fetches one record per round, the model all the leader has; the test counts "
        "truncate() calls (1), which the model does not observe: the logs after the rounds are compared",
    ),
    S(
        "testTruncateOnFetchDoesNotProcessPartitionData",
        pair([0, 0, 2, 5, 5], [0, 0, 2, 4, 4, 4], 5, 4, 1),
        check(latest_epochs={1: 4}),
        call("replicate", follower=1).then(outcomes=("diverged",)),
        check(leos={1: 3}, hws={1: 1}),
        call("replicate", follower=1).step(),
        check(logs={1: (0, 0, 2, 5, 5)}, latest_epochs={1: 5}, leos={1: 5}, hws={1: 4}),
        config=TWO,
    ),
    OUT("testMetricsRemovedOnShutdown", THREAD),
    OUT("testConsumerLagRemovedWithPartition", THREAD),
    OUT("testDelay", THREAD),
    OUT("testPartitionsInError", THREAD),
    OUT("testTruncateToHighWatermarkDuringRemovePartitions", REMOVED),
    OUT("testTruncationOnFetchSkippedIfPartitionRemoved", REMOVED),
    OUT("testTruncateToEpochEndOffsetsDuringRemovePartitions", REMOVED),
    OUT("testFencedOffsetResetAfterOutOfRange", LOG_START),
    S(
        "testFollowerFetchOutOfRangeLow",
        pair([4, 4, 4], [0], 4, 2, log_start={0: 2}),
        call("replicate", follower=1).then(outcomes=("out_of_range",), log_starts={1: 2}, leos={1: 2}, hws={1: 2}),
        call("replicate", follower=1).then(outcomes=("appended",), logs={1: (-1, -1, 4)}),
        check(log_starts={0: 2, 1: 2}, leos={0: 3, 1: 3}, hws={0: 2, 1: 2}),
        config=TWO,
        resolution="the leader's records below its log start 2 are the model's deleted placeholders (epoch -1); "
        "the follower's LEO 1 is below it, so it restarts at 2 with an empty log "
        "(AbstractFetcherThread.truncateFullyAndStartAt) and then fetches the leader's record: log start, LEO and "
        "HW end equal to the leader's as in the test (the test's first doWork is the truncation phase, folded "
        "into the model's first round)",
    ),
    OUT(
        "testRetryAfterUnknownLeaderEpochInLatestOffsetFetch",
        "the follower's ListOffsets to the leader (fetchLatestOffsetFromLeader) after OFFSET_OUT_OF_RANGE: the "
        "model has no ListOffsets between replicas",
    ),
    OUT("testCorruptMessage", "a corrupt record batch (CRC): the model's records are never damaged"),
    OUT(
        "testLeaderEpochChangeDuringFencedFetchEpochsFromLeader",
        "the follower's own leader epoch changing while its OffsetsForLeaderEpoch is in flight (the answer is "
        "discarded): the model applies an answer to the request it was sent for, in one step",
    ),
    OUT(
        "testLeaderEpochChangeDuringSuccessfulFetchEpochsFromLeader",
        "as testLeaderEpochChangeDuringFencedFetchEpochsFromLeader, with the leader at the new epoch",
    ),
    OUT(
        "testTruncationThrowsExceptionIfLeaderReturnsPartitionsNotRequestedInFetchEpochs",
        "a malformed OffsetsForLeaderEpoch response (partitions not requested): the model's answers are well formed",
    ),
    OUT("testFetcherThreadHandlingPartitionFailureDuringAppending", STORAGE),
    OUT("testFetcherThreadHandlingPartitionFailureDuringTruncation", STORAGE),
    OUT("testMaybeUpdateTopicIds", "topic ids (KIP-516): the model names partitions, not topic ids"),
)
