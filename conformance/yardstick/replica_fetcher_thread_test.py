"""ReplicaFetcherThreadTest (core/src/test/scala/unit/kafka/server/, trunk 1eb7644), ported onto the
replication model's follower.

Kafka's test mocks the follower's log: ``latestEpoch``, ``endOffsetForEpoch(e)``, ``logEndOffset``
and ``highWatermark`` are stubbed, and the test checks the offsets ``Partition.truncateTo`` is
called with after the leader's OffsetsForLeaderEpoch (or diverging-epoch Fetch) answer. Here the
follower's log is ``given`` as the epoch of each offset, built so that every stub the test sets
holds on it (``endOffsetForEpoch(4) = (120, 3)`` is a log of epoch 3 up to offset 120, then epoch
5 up to the LEO), and the answer is applied with ``apply_epoch_answer`` / ``apply_diverging``.
Each of the test's two partitions is one scenario (``part``). The rung is the inter-broker
protocol the test runs: OffsetsForLeaderEpoch tests before truncate-on-fetch (IBP 2.6, rung
``kip-320``), ``shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20`` at IBP 0.11 (``kip-101``:
the answer carries no epoch), truncate-on-fetch (2.7+, the default rung).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import REPLICATION, TRUNK, Scenario, Step, call, check

K = "ReplicaFetcherThreadTest"
KIP_320 = {"replicas": 2, "min_insync_replicas": 1, "protocol": "kip-320"}
KIP_279 = {"replicas": 2, "min_insync_replicas": 1, "protocol": "kip-279"}
KIP_101 = {"replicas": 2, "min_insync_replicas": 1, "protocol": "kip-101"}
DIVERGING = {"replicas": 2, "min_insync_replicas": 1}
REQUESTS = (
    "what the fetcher thread sends (request versions, which partitions need an OffsetsForLeaderEpoch, the Fetch "
    "request it builds): request building below the model's abstraction of a round trip"
)
THREAD = "the fetcher thread's own machinery (exceptions of the blocking sender, shutdown, metrics, lag gauges)"


def S(
    method: str,
    follower_log: list[int],
    follower_hw: int,
    *steps: Step,
    config: Mapping[str, Any],
    part: str = "",
    resolution: str = "",
) -> Scenario:
    given = {
        "replicas": 2,
        "leader": 0,
        "leader_epoch": 5,
        "logs": {0: [], 1: follower_log},
        "hw": {1: follower_hw},
        "follow": "truncating",
    }
    return Scenario(
        K, method, TRUNK, REPLICATION, given=given, steps=steps, config=config, part=part, resolution=resolution
    )


def OUT(method: str, why: str, part: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, REPLICATION, out_of_scope=why, part=part)


EPOCH_5 = [5] * 200
"""latestEpoch 5, endOffsetForEpoch(5) = (200, 5), LEO 200: every offset written in epoch 5."""
NO_MORE_EPOCHS = (
    "on trunk's cache this stub cannot hold: a log whose latest epoch is 5 answers endOffsetForEpoch(4) with "
    "(4, start of epoch 5) since KAFKA-7415 (2.1), so the model on the default rungs truncates to 0 (disagreed "
    "at porting). The stubs (latestEpoch 5, endOffsetForEpoch(4) = None) are the 2.0 cache's answer to an epoch "
    "below its first entry (undefined), from the KIP-279 era the test was written in (KAFKA-6361): rung kip-279"
)
EPOCH_3_THEN_5 = [3] * 120 + [5] * 80
"""latestEpoch 5, endOffsetForEpoch(4) = endOffsetForEpoch(3) = (120, 3), LEO 200."""
DIVERGING_LOG = [1] * 119 + [2] * 10 + [4] * 20 + [5] * 51
"""endOffsetForEpoch(4) = (149, 4), (3) = (129, 2), (2) = (119, 1), LEO 200 (the test's stubs)."""


def answer(epoch: int, end_offset: int, truncated_to: int) -> Step:
    return call("apply_epoch_answer", follower=1, epoch=epoch, end_offset=end_offset).then(
        truncated_to=truncated_to, leos={1: truncated_to}
    )


def diverging(epoch: int, end_offset: int, truncated_to: int) -> Step:
    return call("apply_diverging", follower=1, epoch=epoch, end_offset=end_offset).then(
        truncated_to=truncated_to, leos={1: truncated_to}
    )


SCENARIOS: tuple[Scenario, ...] = (
    OUT("shouldSendLatestRequestVersionsByDefault", REQUESTS),
    OUT("testFetchLeaderEpochRequestIfLastEpochDefinedForSomePartitions", REQUESTS),
    OUT("shouldHandleExceptionFromBlockingSend", THREAD),
    OUT("shouldFetchLeaderEpochOnFirstFetchOnlyIfLeaderEpochKnownToBothIbp26", REQUESTS),
    OUT("shouldNotFetchLeaderEpochOnFirstFetchWithTruncateOnFetch", REQUESTS),
    S(
        "shouldTruncateToOffsetSpecifiedInEpochOffsetResponse",
        EPOCH_5,
        199,
        answer(5, 156, 156),
        config=KIP_320,
        part="t1p0",
    ),
    S(
        "shouldTruncateToOffsetSpecifiedInEpochOffsetResponse",
        EPOCH_5,
        199,
        answer(5, 172, 172),
        config=KIP_320,
        part="t2p1",
    ),
    S(
        "shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs",
        EPOCH_5,
        197,
        answer(4, 156, 156),
        config=KIP_279,
        part="t1p0",
        resolution=NO_MORE_EPOCHS,
    ),
    S(
        "shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs",
        EPOCH_5,
        197,
        answer(4, 202, 200),
        config=KIP_279,
        part="t2p1 (the leader's end offset beyond the LEO)",
    ),
    S(
        "shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower",
        EPOCH_3_THEN_5,
        198,
        answer(4, 155, 120),
        answer(3, 101, 101),
        check(latest_epochs={1: 3}),
        config=KIP_320,
        part="t1p0",
    ),
    S(
        "shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower",
        EPOCH_3_THEN_5,
        198,
        answer(4, 143, 120),
        answer(3, 102, 102),
        config=KIP_320,
        part="t1p1",
    ),
    S(
        "shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower",
        DIVERGING_LOG,
        115,
        diverging(4, 140, 140),
        diverging(3, 130, 129),
        check(latest_epochs={1: 2}),
        config=DIVERGING,
        part="t1p0, loops 2 and 3",
    ),
    S(
        "shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower",
        DIVERGING_LOG,
        115,
        diverging(4, 141, 141),
        diverging(3, 131, 129),
        config=DIVERGING,
        part="t1p1, loops 2 and 3",
    ),
    OUT(
        "shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower",
        "loop 4 sets the mocked latestEpoch to None while endOffsetForEpoch(2) stays (119, 1): no log can have "
        "that shape after loop 3 truncated it to 129 (epoch 2 holds 119..128, so endOffsetForEpoch(2) of the "
        "real log is (129, 2) and the diverging (2, 120) truncates to 120); the model works on real logs",
        part="loop 4",
    ),
    S(
        "testTruncateOnFetchDoesNotUpdateHighWatermark",
        [4] * 149 + [5],
        130,
        call("apply_diverging", follower=1, epoch=4, end_offset=140, leader_hw=160).then(truncated_to=140),
        check(leos={1: 140}, hws={1: 130}),
        config=DIVERGING,
        resolution="the stubs latestEpoch 5, endOffsetForEpoch(4) = (149, 4), LEO 150, HW 130 are the log of "
        "149 records of epoch 4 and one of epoch 5",
    ),
    OUT("testLagIsUpdatedWhenNoRecords", THREAD),
    S(
        "shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20",
        EPOCH_3_THEN_5,
        198,
        answer(-1, 155, 155),
        config=KIP_101,
        part="t1p0",
    ),
    S(
        "shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20",
        EPOCH_3_THEN_5,
        198,
        answer(-1, 143, 143),
        config=KIP_101,
        part="t1p1",
    ),
    S(
        "shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset",
        [5] * 150,
        100,
        answer(-1, -1, 100),
        config=KIP_320,
        resolution="the test stubs no LEO; the follower's log here holds 150 records of epoch 5 (the stubbed "
        "latestEpoch) above its HW 100 = the initial fetch offset",
    ),
    OUT("shouldPollIndefinitelyIfLeaderReturnsAnyException", THREAD),
    S(
        "shouldMovePartitionsOutOfTruncatingLogState",
        [],
        0,
        check(fetch_states={1: "truncating"}),
        call("apply_epoch_answer", follower=1, epoch=4, end_offset=1).then(
            truncated_to=0, fetch_states={1: "fetching"}
        ),
        config=KIP_320,
        resolution="the stubs latestEpoch 4, endOffsetForEpoch(4) = (0, 4) describe an empty log whose cache "
        "holds (4, 0); the model's given log is empty with an empty cache, and the answer (4, 1) leaves it at 0",
    ),
    OUT(
        "shouldFilterPartitionsMadeLeaderDuringLeaderEpochRequest",
        "a partition made leader while the follower's OffsetsForLeaderEpoch is in flight: the fetcher thread "
        "drops the answer (removed from its partition map); the model's leadership change clears the fetch state",
    ),
    OUT("shouldCatchExceptionFromBlockingSendWhenShuttingDownReplicaFetcherThread", THREAD),
    OUT("shouldUpdateReassignmentBytesInMetrics", THREAD + "; reassignment is not in the model"),
    OUT("shouldNotUpdateReassignmentBytesInMetricsWhenNoReassignmentsInProgress", THREAD),
    OUT("testBuildFetch", REQUESTS),
    OUT(
        "testLocalFetchCompletionIfHighWatermarkUpdated",
        "the purgatory completing a local consumer's delayed fetch when the follower's HW moves: the delayed-fetch "
        "purgatory is not in this subject",
    ),
)
