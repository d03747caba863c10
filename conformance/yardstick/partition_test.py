"""PartitionTest (core/src/test/scala/unit/kafka/cluster/), ported onto the replication model.

A test's partition is built with ``given``: the leader's log as the epoch of each offset, the
leader epoch every replica knows, the ISR. The default rung (diverging-epoch, 2.7+) is trunk's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import REPLICATION, TRUNK, Scenario, Step, call, check
from kconform.model.errors import NETWORK_EXCEPTION, NEW_LEADER_ELECTED, UNKNOWN_TOPIC_OR_PARTITION
from kconform.traces.events import (
    FENCED_LEADER_EPOCH,
    INVALID_UPDATE_VERSION,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    UNKNOWN_LEADER_EPOCH,
)

K = "PartitionTest"
LOG_17 = [0, 0, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 7, 9, 9, 9]
"""testLastFetchedOffsetValidation's leader log: batches of epoch 0 (2), 3 (3+3), 4 (5), 7 (1), 9 (3)."""
KIP_392 = "a consumer fetching from a follower with client metadata (KIP-392): not in the model (issue 14 §2)"


def S(method: str, given: Mapping[str, Any], *steps: Step, part: str = "", resolution: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, REPLICATION, given=given, steps=steps, part=part, resolution=resolution)


def read(last_fetched_epoch: int, fetch_offset: int, diverging: tuple[int, int] | None) -> Step:
    want: dict[str, object] = {"error": NONE}
    if diverging is None:
        want.update(diverging_epoch=-1)
    else:
        want.update(diverging_epoch=diverging[0], diverging_end_offset=diverging[1], records=0)
    return call(
        "fetch", follower=1, fetch_offset=fetch_offset, last_fetched_epoch=last_fetched_epoch, current_leader_epoch=10
    ).then(**want)


T0 = 100_000
"""The test's MockTime at makeLeader (a wall-clock instant in Kafka; any instant past the lag time)."""
NEVER = None
"""A follower outside the ISR at makeLeader: Kafka's ReplicaState.resetReplicaState sets its
lastCaughtUpTimeMs to 0 (never caught up within the lag); the model writes that as None."""
UNKNOWN_SERVER_ERROR = -1
"""Errors.UNKNOWN_SERVER_ERROR, which an AlterPartition answer carries in testAlterIsrUnexpectedError
(the model's controller answers only NONE, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION and
INELIGIBLE_REPLICA; any other error leaves the proposal pending)."""
ONE_MIN_ISR = {"min_insync_replicas": 1}
"""PartitionTest's default topic config: min.insync.replicas 1."""


ELIGIBILITY = (
    "the leader's view of fenced, shutting-down and controlled-shutdown brokers (KIP-841: "
    "Partition.isReplicaIsrEligible reads the metadata cache) is not in the model's brokers: their ISR "
    "expansion and HW rules count every caught-up follower (docs/protocol.md), and the model's controller "
    "refuses a fenced member with INELIGIBLE_REPLICA instead"
)
BROKER_EPOCHS = (
    "broker epochs checked by the leader against its metadata cache (KIP-903) before an expansion: the model "
    "carries them in AlterPartition and the controller checks them, only with the ELR switch (model/elr.py)"
)
MANAGER = (
    "AlterPartitionManager's request building and its treatment of INVALID_REQUEST / invalid responses: below "
    "the model, whose leader and controller exchange proposals as values"
)
ZK = "the ZooKeeper ISR manager: the model's controller is KRaft's"
FUTURE_LOG = "the future replica of an alter-log-dirs move (log directories): not in the model"
LIST_OFFSETS = (
    "ListOffsets (earliest / latest / by timestamp / max timestamp, with and without the leader epoch): the "
    "model's replicas answer Fetch and OffsetsForLeaderEpoch, not ListOffsets"
)
OBJECTS = (
    "the Partition object's own bookkeeping (replica maps, remote replica objects after a role change, "
    "assignment updates, a log appended as follower, the HW checkpoint file, the under-replicated gauge): "
    "below the model, whose partition is one value per broker"
)
PLUMBING = "topic ids, partition.metadata files, metrics, log configs and partition listeners: not protocol"
VERIFICATION = (
    "the produce path's transaction verification guard (KIP-890): the exactly-once slice's partition holds it "
    "(TxnProduceHandled), not the replication partition"
)


def leader_of(log_len: int, isr: list[int], epoch_of_log: int = 4, leader_epoch: int = 5) -> dict[str, Any]:
    """seedLogData(numRecords = log_len, leaderEpoch = epoch_of_log) then makeLeader(leaderEpoch,
    isr, partitionEpoch 1) at ``T0``."""
    return {
        "logs": {0: [epoch_of_log] * log_len},
        "leader_epoch": leader_epoch,
        "isr": isr,
        "now": T0,
        "partition_epoch": 1,
    }


def two(**extra: Any) -> dict[str, Any]:
    return {"replicas": 2, **ONE_MIN_ISR, **extra}


def three(**extra: Any) -> dict[str, Any]:
    return {"replicas": 3, **ONE_MIN_ISR, **extra}


def C(method: str, given: Mapping[str, Any], config: Mapping[str, Any], *steps: Step, part: str = "",
      resolution: str = "") -> Scenario:  # fmt: skip
    return Scenario(
        K, method, TRUNK, REPLICATION, given=given, steps=steps, config=config, part=part, resolution=resolution
    )


def ff(follower: int, offset: int, **want: object) -> Step:
    """fetchFollower: the leader's side of a follower's Fetch, then Partition.maybeExpandIsr."""
    return call("fetch_follower", follower=follower, fetch_offset=offset).then(**want)


def fail_isr_update(error: int, **want: object) -> Step:
    return call("complete_isr_update", partition_epoch=-1, error=error).then(**want)


def handle_alter_isr_failure(method: str, error: int, retried: bool) -> Scenario:
    """PartitionTest.handleAlterIsrFailure: a one-member ISR at HW 10, the follower's fetch at 10
    proposes it in, and the AlterPartition answer is ``error``."""
    return C(
        method,
        leader_of(10, [0]),
        two(),
        check(leader_hw=10, last_caught_up={1: NEVER}, remote_leos={1: -1}),
        ff(1, 10, proposed=(0, 1), isr={0}, maximal_isr={0, 1}, last_caught_up={1: T0}),
        fail_isr_update(error, isr={0}, maximal_isr={0, 1}, inflight=True),
        resolution="model fixed (model.replication.apply_alter_partition_response): "
        + (
            "a retriable error re-submits the same proposal (still one in flight)"
            if retried
            else "a non-retriable error leaves the pending state until new metadata arrives (no retry)"
        )
        + "; the model dropped every answered proposal (Partition.handleAlterPartitionError)",
    )


LEADER_5 = {"leader": 0, "leader_epoch": 5}
FOLLOWER_5 = {"leader": 1, "leader_epoch": 5}

SCENARIOS: tuple[Scenario, ...] = (
    S(
        "testLastFetchedOffsetValidation",
        {"logs": {0: LOG_17}, "leader_epoch": 10},
        read(2, 5, (0, 2)),
        read(0, 4, (0, 2)),
        read(6, 6, (4, 13)),
        read(5, 9, (4, 13)),
        read(10, 18, (10, 17)),
        read(0, 2, None),
        read(7, 14, None),
        read(9, 17, None),
        read(10, 17, None),
        call("fetch", follower=1, fetch_offset=5, last_fetched_epoch=11, current_leader_epoch=10).then(
            error=OFFSET_OUT_OF_RANGE
        ),
        part="log start 0",
    ),
    S(
        "testLastFetchedOffsetValidation",
        {"logs": {0: LOG_17}, "leader_epoch": 10, "hw": {0: 17}},
        call("delete_records", offset=5).then(error=NONE, log_start=5),
        read(2, 8, (2, 5)),
        read(0, 5, None),
        read(3, 5, None),
        call("fetch", follower=1, fetch_offset=0, last_fetched_epoch=0, current_leader_epoch=10).then(
            error=OFFSET_OUT_OF_RANGE
        ),
        call("delete_records", offset=10).then(error=NONE, log_start=10),
        call("fetch", follower=1, fetch_offset=6, last_fetched_epoch=5, current_leader_epoch=10).then(
            error=OFFSET_OUT_OF_RANGE
        ),
        call("fetch", follower=1, fetch_offset=6, last_fetched_epoch=3, current_leader_epoch=10).then(
            error=OFFSET_OUT_OF_RANGE
        ),
        part="log start 5 and 10",
        resolution="the test moves the log start with maybeIncrementLogStartOffset after setting the HW to "
        "the LEO; here DeleteRecords (Partition.deleteRecordsOnLeader, KIP-107) moves it, which checks the "
        "same bound (never past the HW) and truncates the epoch cache from the start the same way",
    ),
    C(
        "testIsrExpansion",
        leader_of(10, [0]),
        two(),
        check(isr={0}, last_caught_up={1: NEVER}, remote_leos={1: -1}),
        ff(1, 3, proposed=(), isr={0}, last_caught_up={1: NEVER}, remote_leos={1: 3}),
        ff(1, 10, proposed=(0, 1), isr={0}, maximal_isr={0, 1}, last_caught_up={1: T0}, remote_leos={1: 10}),
        call("complete_isr_update", partition_epoch=2).then(isr={0, 1}, inflight=False, partition_epoch=2),
    ),
    C(
        "testIsrNotExpandedIfUpdateFails",
        leader_of(10, [0]),
        two(),
        ff(1, 10, proposed=(0, 1), isr={0}, maximal_isr={0, 1}, last_caught_up={1: T0}),
        fail_isr_update(INVALID_UPDATE_VERSION, isr={0}, maximal_isr={0, 1}, inflight=True),
        resolution="model fixed (model.replication.apply_alter_partition_response): INVALID_UPDATE_VERSION is "
        "not retried and the pending expansion stays until new metadata (Partition.handleAlterPartitionError); "
        "the model dropped it, so its maximal ISR lost the follower",
    ),
    C(
        "testMaybeShrinkIsr",
        leader_of(10, [0, 1, 2]),
        three(),
        check(leader_hw=0),
        ff(1, 10),
        check(last_caught_up={2: T0}, remote_leos={2: -1}),
        call("maybe_shrink").then(proposed=(), isr={0, 1, 2}),
        call("advance_clock", ms=30_001).step(),
        call("maybe_shrink").then(proposed=(0, 1), isr={0, 1, 2}, maximal_isr={0, 1, 2}, leader_hw=0),
        call("complete_isr_update", partition_epoch=2).then(
            partition_epoch=2, isr={0, 1}, maximal_isr={0, 1}, inflight=False, leader_hw=10
        ),
    ),
    C(
        "testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR",
        leader_of(10, [0, 1]),
        {"replicas": 3, "min_insync_replicas": 3},
        check(under_min_isr=True, leader_hw=0),
        ff(1, 10, leader_hw=0),
        ff(2, 10, leader_hw=0, maximal_isr={0, 1, 2}, proposed=(0, 1, 2)),
        call("complete_isr_update", partition_epoch=2).then(under_min_isr=False, leader_hw=10),
        resolution="the test's inter-broker protocol 3.7-IV2 and the model's trunk rung agree: the HW stays "
        "while the committed ISR is under min.insync.replicas (KAFKA-15583), whatever the maximal ISR",
    ),
    C(
        "testAlterIsrLeaderAndIsrRace",
        leader_of(10, [0, 1]),
        two(),
        check(leader_hw=0, last_caught_up={1: T0}, remote_leos={1: -1}),
        call("advance_clock", ms=30_001).step(),
        call("maybe_shrink").then(proposed=(0,), inflight=True),
        call("make_leader", leader_epoch=5, isr=[0, 1], partition_epoch=2).then(changed=False),
        check(leader_hw=0, inflight=False),
        part="until the new partition state",
    ),
    Scenario(
        K,
        "testAlterIsrLeaderAndIsrRace",
        TRUNK,
        REPLICATION,
        part="after the new partition state",
        out_of_scope="AlterPartitionManager's one request per partition: a second submit while the first is "
        "unanswered fails at once (OPERATION_NOT_ATTEMPTED) and the partition returns to its committed state; "
        "the model's leader drops its proposal on new metadata and ignores the old answer by its id, so the "
        "manager's queue is below the model",
    ),
    C(
        "testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp",
        leader_of(10, [0, 1]),
        two(),
        check(leader_hw=0),
        call("advance_clock", ms=5_000).step(),
        ff(1, 5, last_caught_up={1: T0}, remote_leos={1: 5}, leader_hw=5),
        call("advance_clock", ms=5_001).step(),
        call("produce", acks=1).step(),
        call("produce", acks=1).step(),
        call("produce", acks=1).step(),
        call("produce", acks=1).step(),
        call("produce", acks=1).step(),
        ff(1, 10, last_caught_up={1: T0 + 5_000}, remote_leos={1: 10}, leader_hw=10),
        call("maybe_shrink").then(proposed=(), isr={0, 1}),
        resolution="seedLogData's five records at leader epoch 5 are five acks=1 produces",
    ),
    C(
        "testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd",
        leader_of(10, [0, 1]),
        two(),
        ff(1, 10, last_caught_up={1: T0}, remote_leos={1: 10}, leader_hw=10),
        call("advance_clock", ms=30_001).step(),
        call("maybe_shrink").then(proposed=(), isr={0, 1}),
    ),
    C(
        "testIsrNotShrunkIfUpdateFails",
        leader_of(10, [0, 1]),
        two(),
        call("advance_clock", ms=30_001).step(),
        call("maybe_shrink").then(proposed=(0,), isr={0, 1}, leader_hw=0),
        fail_isr_update(INVALID_UPDATE_VERSION, inflight=True, isr={0, 1}, leader_hw=0),
        resolution="model fixed (model.replication.apply_alter_partition_response): the partition stays in "
        "PendingShrinkIsr after a non-retriable error (Partition.handleAlterPartitionError)",
    ),
    C(
        "testRetryShrinkIsr",
        leader_of(10, [0, 1]),
        two(),
        check(leader_hw=0),
        call("advance_clock", ms=30_001).step(),
        call("maybe_shrink").then(proposed=(0,), isr={0, 1}, maximal_isr={0, 1}),
        fail_isr_update(NETWORK_EXCEPTION, inflight=True, partition_epoch=1, isr={0, 1}, leader_hw=0),
        call("complete_isr_update", partition_epoch=2).then(
            partition_epoch=2, isr={0}, maximal_isr={0}, inflight=False, leader_hw=10
        ),
        resolution="model fixed (model.replication.apply_alter_partition_response): a retriable error keeps the "
        "proposal in flight while AlterPartitionManager re-sends it; the model dropped it",
    ),
    handle_alter_isr_failure("testAlterIsrNewLeaderElected", NEW_LEADER_ELECTED, retried=False),
    handle_alter_isr_failure("testAlterIsrUnknownTopic", UNKNOWN_TOPIC_OR_PARTITION, retried=False),
    handle_alter_isr_failure("testAlterIsrInvalidVersion", INVALID_UPDATE_VERSION, retried=False),
    handle_alter_isr_failure("testAlterIsrUnexpectedError", UNKNOWN_SERVER_ERROR, retried=True),
    C("testAtMinIsr", leader_of(0, [0], leader_epoch=8), three(), check(at_min_isr=True, under_min_isr=False)),
    C(
        "testIsUnderMinIsr",
        {"leader_epoch": 0, "isr": [0, 1], "partition_epoch": 1},
        {"replicas": 2, "min_insync_replicas": 2},
        check(under_min_isr=False),
        call("make_leader", leader_epoch=1, isr=[0], partition_epoch=2).step(),
        check(under_min_isr=True),
    ),
    C(
        "testUpdateFollowerFetchState",
        leader_of(6, [0, 1]),
        two(),
        check(last_caught_up={1: T0}, remote_leos={1: -1}),
        call("advance_clock", ms=500).step(),
        ff(1, 3, last_caught_up={1: T0}, remote_leos={1: 3}),
        call("advance_clock", ms=500).step(),
        ff(1, 6, last_caught_up={1: T0 + 1_000}, remote_leos={1: 6}),
        resolution="the remote replica's log start offset (0 after a fetch) is not in the leader's view of the "
        "model; its LEO and lastCaughtUpTimeMs are",
    ),
    C(
        "testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch",
        {"leader_epoch": 8, "isr": [0, 2], "now": T0, "partition_epoch": 1},
        three(),
        call("produce", acks=0).step(),
        call("produce", acks=0).step(),
        call("produce", acks=0).step(),
        call("produce", acks=0).step(),
        call("produce", acks=0).step(),
        check(leader_hw=0, leos={0: 5}),
        ff(2, 0),
        ff(2, 1, leader_hw=1),
        call("make_leader", leader=2, leader_epoch=9, isr=[0, 2], partition_epoch=2).step(),
        call("make_leader", leader_epoch=10, isr=[0, 2], partition_epoch=3).then(changed=True),
        call("produce", acks=0).step(),
        call("produce", acks=0).step(),
        ff(1, 0, proposed=()),
        ff(1, 1, proposed=(), isr={0, 2}),
        ff(1, 5, proposed=(0, 1, 2), isr={0, 2}, maximal_isr={0, 1, 2}),
        resolution="the test sends LeaderAndIsr three times at partition epoch 1 (ZooKeeper-era requests); "
        "under KRaft every leader change bumps it, so the two changes carry 2 and 3 here (the model ignores a "
        "record at the partition epoch it holds: model.replication.apply_metadata says why). The batches of 2, "
        "3 and 2 records are single-record produces; the follower at the start offset of the current leader "
        "epoch (5) may join (KIP-320's isFollowerInSync), below it not",
    ),
    C(
        "testDoNotResetReplicaStateIfLeaderEpochIsNotBumped",
        leader_of(0, [0], leader_epoch=8),
        two(),
        check(partition_epoch=1, isr={0}, last_caught_up={1: NEVER}, remote_leos={1: -1}),
        ff(1, 0, last_caught_up={1: T0}, remote_leos={1: 0}),
        call("make_leader", leader_epoch=8, isr=[0], partition_epoch=2).then(changed=False),
        check(partition_epoch=2, leader_epochs={0: 8}, isr={0}, last_caught_up={1: T0}, remote_leos={1: 0}),
    ),
    C(
        "testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped",
        leader_of(0, [0], leader_epoch=8),
        two(),
        check(partition_epoch=1, caches={0: ((8, 0),)}),
        call("produce", acks=1).step(),
        call("produce", acks=1).step(),
        call("make_leader", leader_epoch=8, isr=[0], partition_epoch=2).then(changed=False),
        check(partition_epoch=2, leader_epochs={0: 8}, isr={0}, caches={0: ((8, 0),)}),
    ),
    C(
        "testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch",
        leader_of(0, [0], leader_epoch=8),
        {"replicas": 1, **ONE_MIN_ISR},
        call("make_leader", leader_epoch=8, isr=[0], partition_epoch=0).then(changed=False),
        check(partition_epoch=1, leader_epochs={0: 8}),
    ),
    C(
        "testIgnoreFollowerPartitionStateChangeWithOlderPartitionEpoch",
        {"leader": 1, "leader_epoch": 8, "isr": [0, 1], "partition_epoch": 1},
        two(),
        call("make_leader", leader=1, leader_epoch=8, isr=[0, 1], partition_epoch=1).then(changed=False),
        check(partition_epochs={0: 1}, leader_epochs={0: 8}),
        resolution="the test's second makeFollower carries the same partition epoch 1 (Kafka applies it "
        "with the same content and reports no new leader epoch); the model ignores it: the same state",
    ),
    C(
        "testSingleInFlightAlterIsr",
        leader_of(10, [0, 1, 2]),
        {"replicas": 4, **ONE_MIN_ISR},
        ff(3, 10, proposed=(0, 1, 2, 3), isr={0, 1, 2}, maximal_isr={0, 1, 2, 3}, inflight=True),
        call("advance_clock", ms=30_001).step(),
        call("maybe_shrink").then(proposed=(), inflight=True),
    ),
    C(
        "testPartitionShouldRetryAlterPartitionRequest",
        leader_of(10, [0, 1, 2]),
        {"replicas": 4, **ONE_MIN_ISR},
        ff(3, 10, proposed=(0, 1, 2, 3)),
        fail_isr_update(UNKNOWN_SERVER_ERROR, inflight=True, isr={0, 1, 2}),
        call("complete_isr_update", partition_epoch=2).then(isr={0, 1, 2, 3}, partition_epoch=2, inflight=False),
        resolution="the mocked channel answers UNKNOWN_SERVER_ERROR then success; the retry is the same "
        "proposal still in flight (AlterPartitionManager sends it twice), then committed",
    ),
    C(
        "testHighWatermarkIncreasesWithFencedOrShutdownFollower",
        leader_of(10, [0, 1]),
        two(),
        ff(1, 10, last_caught_up={1: T0}, leader_hw=10),
        *[call("produce", acks=1).step() for _ in range(10)],
        call("make_leader", leader_epoch=5, isr=[0], partition_epoch=2).then(changed=False),
        check(isr={0}, maximal_isr={0}, leader_hw=10),
        call("maybe_shrink").then(proposed=()),
        part="unfenced",
        resolution="the follower caught up within replica.lag.time.max.ms still counts in the HW after the "
        "controller shrank the ISR: the HW stays 10",
    ),
    Scenario(
        K,
        "testHighWatermarkIncreasesWithFencedOrShutdownFollower",
        TRUNK,
        REPLICATION,
        part="fenced, shutdown",
        out_of_scope=ELIGIBILITY,
    ),
    Scenario(K, "testIsrNotExpandedIfReplicaIsFencedOrShutdown", TRUNK, REPLICATION, out_of_scope=ELIGIBILITY),
    Scenario(K, "testIsrNotExpandedIfReplicaIsInControlledShutdown", TRUNK, REPLICATION, out_of_scope=ELIGIBILITY),
    Scenario(
        K,
        "testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache",
        TRUNK,
        REPLICATION,
        out_of_scope=BROKER_EPOCHS,
    ),
    Scenario(K, "testFenceFollowerFetchWithStaleBrokerEpoch", TRUNK, REPLICATION, out_of_scope=BROKER_EPOCHS),
    Scenario(K, "testIsReplicaIsrEligibleWithEmptyReplicaMap", TRUNK, REPLICATION, out_of_scope=ELIGIBILITY),
    Scenario(K, "testInvalidAlterPartitionRequestsAreNotRetried", TRUNK, REPLICATION, out_of_scope=MANAGER),
    Scenario(K, "testZkIsrManagerAsyncCallback", TRUNK, REPLICATION, out_of_scope=ZK),
    *(
        Scenario(K, m, TRUNK, REPLICATION, out_of_scope=FUTURE_LOG)
        for m in (
            "testMaybeReplaceCurrentWithFutureReplica",
            "testMaybeReplaceCurrentWithFutureReplicaDifferentBaseOffsets",
            "testPartitionListenerWhenCurrentIsReplacedWithFutureLog",
        )
    ),
    *(
        Scenario(K, m, TRUNK, REPLICATION, out_of_scope=LIST_OFFSETS)
        for m in (
            "testFetchOffsetSnapshotEpochValidationForLeader",
            "testFetchOffsetSnapshotEpochValidationForFollower",
            "testFetchOffsetForTimestampEpochValidationForLeader",
            "testFetchOffsetForTimestampEpochValidationForFollower",
            "testFetchLatestOffsetIncludesLeaderEpoch",
            "testMonotonicOffsetsAfterLeaderChange",
            "testListOffsetIsolationLevels",
        )
    ),
    *(
        Scenario(K, m, TRUNK, REPLICATION, out_of_scope=OBJECTS)
        for m in (
            "testGetReplica",
            "testAppendRecordsToFollowerWithNoReplicaThrowsException",
            "testFollowerShouldNotHaveAnyRemoteReplicaStates",
            "testUpdateAssignmentAndIsr",
            "testReplicaFetchToFollower",
            "testFetchFromUnrecognizedFollower",
            "testMakeFollowerWithWithFollowerAppendRecords",
            "testMakeFollowerWithNoLeaderIdChange",
            "testAppendRecordsAsFollowerBelowLogStartOffset",
            "testUseCheckpointToInitializeHighWatermark",
            "testUnderReplicatedPartitionsCorrectSemantics",
        )
    ),
    *(
        Scenario(K, m, TRUNK, REPLICATION, out_of_scope=PLUMBING)
        for m in (
            "testTopicIdAndPartitionMetadataFileForLeader",
            "testTopicIdAndPartitionMetadataFileForFollower",
            "testAddAndRemoveMetrics",
            "testLogConfigNotDirty",
            "testLogConfigDirtyAsTopicUpdated",
            "testLogConfigDirtyAsBrokerUpdated",
            "testAddAndRemoveListeners",
            "testAddListenerFailsWhenPartitionIsDeleted",
            "testPartitionListenerWhenLogOffsetsChanged",
            "testPartitionListenerWhenPartitionFailed",
            "testPartitionListenerWhenPartitionIsDeleted",
        )
    ),
    Scenario(K, "testMaybeStartTransactionVerification", TRUNK, REPLICATION, out_of_scope=VERIFICATION),
    S(
        "testMakeLeaderUpdatesEpochCache",
        {"logs": {0: [0, 0, 5, 5]}, "leader_epoch": 8},
        call("epoch_query", epoch=8, current_leader_epoch=8).then(error=NONE, epoch=8, end_offset=4),
    ),
    S(
        "testOffsetForLeaderEpochValidationForLeader",
        LEADER_5,
        call("epoch_query", epoch=0).then(error=NONE),
        call("epoch_query", epoch=0, current_leader_epoch=5).then(error=NONE),
        call("epoch_query", epoch=0, current_leader_epoch=4).then(error=FENCED_LEADER_EPOCH),
        call("epoch_query", epoch=0, current_leader_epoch=6).then(error=UNKNOWN_LEADER_EPOCH),
    ),
    S(
        "testOffsetForLeaderEpochValidationForFollower",
        FOLLOWER_5,
        call("epoch_query", node=0, epoch=0).then(error=NOT_LEADER_OR_FOLLOWER),
        call("epoch_query", node=0, epoch=0, current_leader_epoch=5).then(error=NOT_LEADER_OR_FOLLOWER),
        call("epoch_query", node=0, epoch=0, current_leader_epoch=4).then(error=FENCED_LEADER_EPOCH),
        call("epoch_query", node=0, epoch=0, current_leader_epoch=6).then(error=UNKNOWN_LEADER_EPOCH),
        part="fetchOnlyFromLeader",
    ),
    Scenario(
        K,
        "testOffsetForLeaderEpochValidationForFollower",
        TRUNK,
        REPLICATION,
        part="from any replica",
        out_of_scope="OffsetsForLeaderEpoch with fetchOnlyFromLeader=false (consumers' KIP-392 validation "
        "against a follower): the model's queries are the followers' to the leader",
    ),
    S(
        "testLeaderEpochValidationOnLeader",
        LEADER_5,
        call("fetch", follower=1, fetch_offset=0).then(error=NONE),
        call("fetch", follower=1, fetch_offset=0, current_leader_epoch=5).then(error=NONE),
        call("fetch", follower=1, fetch_offset=0, current_leader_epoch=4).then(error=FENCED_LEADER_EPOCH),
        call("fetch", follower=1, fetch_offset=0, current_leader_epoch=6).then(error=UNKNOWN_LEADER_EPOCH),
    ),
    S(
        "testLeaderEpochValidationOnFollower",
        FOLLOWER_5,
        call("consumer_fetch", node=0, offset=0).then(error=NOT_LEADER_OR_FOLLOWER),
        call("consumer_fetch", node=0, offset=0, current_leader_epoch=5).then(error=NOT_LEADER_OR_FOLLOWER),
        call("consumer_fetch", node=0, offset=0, current_leader_epoch=4).then(error=FENCED_LEADER_EPOCH),
        call("consumer_fetch", node=0, offset=0, current_leader_epoch=6).then(error=UNKNOWN_LEADER_EPOCH),
        part="without client metadata",
    ),
    Scenario(
        K, "testLeaderEpochValidationOnFollower", TRUNK, REPLICATION, part="with client metadata", out_of_scope=KIP_392
    ),
)
