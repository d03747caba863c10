"""ReplicaManagerTest (core/src/test/scala/unit/kafka/server/, trunk 1eb7644), every test method a row.

The ReplicaManager tests set a partition up through LeaderAndIsr requests or KRaft metadata deltas
and drive produce and fetch through the manager. What the model states is the partition's answer:
a produce with illegal acks, a consumer fetch above the HW (empty, not out of range), a
read_committed fetch bounded by the LSO while a committed transaction's marker is not yet
replicated, and a leader becoming follower (and back) through a new leader epoch. Most methods
test the manager's own machinery (log directories, metrics, tiered storage, topic ids, StopReplica,
purgatories, KIP-392 replica selection, the produce-path transaction verification); each is
listed with that reason. ``parametrized`` methods are one row per parameter where it matters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import PARTITION, REPLICATION, TRUNK, Scenario, Step, call, check
from kconform.model.errors import (
    FENCED_LEADER_EPOCH,
    INVALID_REQUIRED_ACKS,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
)

K = "ReplicaManagerTest"

LOG_DIRS = (
    "log directories (alter-log-dirs fetchers, HW checkpoint files per directory, offline or lost dirs): not in "
    "the model"
)
METRICS = "the manager's metrics and gauges: not a Kafka semantic the model states"
TIERED = (
    "tiered storage (KIP-405: remote reads, OFFSET_MOVED_TO_TIERED_STORAGE, its metrics and quotas): not in the model"
)
KIP_392 = "a consumer fetching from a follower and the replica selector (KIP-392): not in the model (issue 14 §2)"
PURGATORY = (
    "delayed produce and fetch cleared by a ZooKeeper-era StopReplica: the model's replicas are never "
    "stopped or deleted (the leadership-change completions are ported above)"
)
TOPIC_IDS = "topic ids (KIP-516: partition.metadata files, inconsistent ids): the model names partitions, not topic ids"
STOP_REPLICA = (
    "ZooKeeper-era StopReplica and LeaderAndIsr stray-partition handling, partition deletion: the model's replicas "
    "are never deleted, and leadership reaches them as KRaft partition records"
)
MIGRATION = "the ZooKeeper to KRaft migration (full LeaderAndIsr during migration): not in the model"
VERIFICATION = (
    "the produce path's transaction verification (KIP-890 part 1: the broker asks the coordinator through "
    "AddPartitionsToTxnManager and holds a verification guard): the model's coordinator answers verify "
    "(TransactionCoordinatorTest rows), its partitions take no guard"
)
LIFECYCLE = (
    "creating, hosting and removing Partition objects in the manager (getOrCreatePartition, metadata deltas for "
    "removed topics or non-replicas, fetchers not restarted without an epoch bump): the model's partition exists "
    "on every broker from the start"
)
MOCKED_LEADER = (
    "a mocked leader endpoint answers offset 5 to any OffsetsForLeaderEpoch over a follower log of 10 records of "
    "unstated epochs: the test states no pair of logs the model could replicate"
)


def OUT(method: str, why: str, part: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, REPLICATION, out_of_scope=why, part=part)


def R(
    method: str, given: Mapping[str, Any], *steps: Step, part: str = "", resolution: str = "", replicas: int = 2
) -> Scenario:
    return Scenario(
        K,
        method,
        TRUNK,
        REPLICATION,
        given=given,
        steps=steps,
        config={"replicas": replicas, "min_insync_replicas": 1},
        part=part,
        resolution=resolution,
    )


def delta_parts(method: str, in_scope: Scenario) -> tuple[Scenario, Scenario]:
    """The delta tests run with enableRemoteStorage false and true: the true part is tiered storage's."""
    return in_scope, OUT(method, TIERED, part="enableRemoteStorage=true")


SCENARIOS: tuple[Scenario, ...] = (
    OUT("testHighWaterMarkDirectoryMapping", LOG_DIRS),
    OUT("testHighwaterMarkRelativeDirectoryMapping", LOG_DIRS),
    R(
        "testIllegalRequiredAcks",
        {"leader": 0, "leader_epoch": 0},
        call("produce", acks=3).then(error=INVALID_REQUIRED_ACKS),
        check(leos={0: 0}),
    ),
    OUT("testMaybeAddLogDirFetchersWithoutEpochCache", LOG_DIRS),
    OUT("testMaybeAddLogDirFetchersPausingCleaning", LOG_DIRS),
    Scenario(
        K,
        "testClearPurgatoryOnBecomingFollower",
        TRUNK,
        REPLICATION,
        given={"leader": 0, "leader_epoch": 0, "isr": [0, 1], "hw": {0: 0}},
        config={"replicas": 2, "min_insync_replicas": 1},
        steps=(
            call("produce", acks=-1).then(error=NONE),
            check(parked={0: (1,)}, due={0: ()}),
            call("become_follower", node=0, leader=1, leader_epoch=1).then(outcome="become_follower"),
            check(due={0: (1,)}),
            call("complete_produce", node=0, req=1, error=NONE).then(accepted=False),
            call("complete_produce", node=0, req=1, error=NOT_LEADER_OR_FOLLOWER).then(accepted=True),
            check(parked={0: ()}),
        ),
        resolution="the produce (acks=all) waits for the follower; becoming follower completes it at once "
        "(ReplicaManager.completeDelayedOperationsWhenNotPartitionLeader, model.purgatory's leadership "
        "trigger) and only NOT_LEADER_OR_FOLLOWER is a justified answer",
    ),
    OUT("checkRemoveMetricsCountMatchRegisterCount", METRICS),
    OUT("testFencedErrorCausedByBecomeLeader", LOG_DIRS),
    Scenario(
        K,
        "testReceiveOutOfOrderSequenceExceptionWithLogStartOffset",
        TRUNK,
        PARTITION,
        steps=(
            call("produce", pid=234, epoch=5, seq=0).then(error=NONE, base_offset=0),
            call("produce", pid=234, epoch=5, seq=1).then(error=NONE, base_offset=1),
            call("produce", pid=234, epoch=5, seq=2).then(error=NONE, base_offset=2),
            call("produce", pid=234, epoch=5, seq=13).then(error=OUT_OF_ORDER_SEQUENCE_NUMBER),
        ),
        resolution="the produce answer's logStartOffset field (0 here: nothing was deleted) is not part of the "
        "exactly-once partition's answer, whose log never moves its start; the error is what the model states "
        "(ProducerAppendInfo.checkSequence: a gap after the last sequence of a known producer)",
    ),
    OUT("testProducerIdCountMetrics", METRICS),
    OUT("testPartitionsWithLateTransactionsCount", METRICS),
    Scenario(
        K,
        "testReadCommittedFetchLimitedAtLSO",
        TRUNK,
        PARTITION,
        steps=(
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("advance_hw", hw=3).step(),
            call("fetch", offset=0, read_committed=True).then(error=NONE, offsets=(), fetch_lso=0, aborted=()),
            call("marker", pid=234, epoch=5, commit=True).then(error=NONE, offset=3),
            call("fetch", offset=0, read_committed=True).then(error=NONE, offsets=()),
            call("advance_hw", hw=4).step(),
            call("fetch", offset=0, read_committed=True).then(
                error=NONE, offsets=(0, 1, 2, 3), fetch_lso=4, aborted=()
            ),
        ),
        resolution="the follower fetches that move the HW (to 3, then 4) are advance_hw; the delayed fetch that "
        "times out (minBytes 1000, maxWait 1000) answers as the immediate one, so it is not repeated. The "
        "commit marker at offset 3 keeps the LSO at 0 until the HW passes it (ProducerStateManager's "
        "unreplicated transactions); the test's 4 batches are the 3 records and the marker",
    ),
    Scenario(
        K,
        "testReadCommittedFetchLimitedAtLSO",
        TRUNK,
        PARTITION,
        steps=(
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("advance_hw", hw=3).step(),
            call("fetch_wait", offset=0, read_committed=True, min_bytes=1000, max_wait_ms=1000).then(parked=True),
            call("advance_clock", ms=1001).then(completed=1),
            call("completed").then(error=NONE, offsets=(), fetch_lso=0, aborted=()),
        ),
        part="delayed fetch",
        resolution="the delayed fetch (minBytes 1000, maxWait 1000) parks at the LSO stuck at 0 and the timer's "
        "1001 ms expire it with nothing: model.txn_delayed_fetch (issue 15 §2); the reference's delayed fetch is "
        "its broker's, driven by the gate",
    ),
    Scenario(
        K,
        "testDelayedFetchIncludesAbortedTransactions",
        TRUNK,
        PARTITION,
        steps=(
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("produce", pid=234, epoch=5, txn=True).then(error=NONE),
            call("marker", pid=234, epoch=5, commit=False).then(error=NONE, offset=3),
            call("advance_hw", hw=4).step(),
            call("fetch_wait", offset=0, read_committed=True, min_bytes=10000, max_wait_ms=1000).then(parked=True),
            call("advance_clock", ms=1001).then(completed=1),
            call("completed").then(error=NONE, offsets=(0, 1, 2, 3), fetch_lso=4, aborted=((234, 0),)),
        ),
        resolution="KAFKA-5376's test: the read_committed fetch parks (minBytes 10000 over 4 records), the timer "
        "expires it after 1001 ms and the answer read at completion still carries the aborted transaction "
        "(DelayedFetch.onComplete reads at the request's isolation level; model.txn_delayed_fetch). The "
        "maxWait is the test helper's default (1000 ms); the reference's delayed fetch is its broker's, "
        "driven by the gate",
    ),
    R(
        "testFetchBeyondHighWatermark",
        {"leader": 0, "leader_epoch": 0, "logs": {0: [0, 0]}, "isr": (0, 1, 2)},
        call("fetch", follower=1, fetch_offset=1).then(error=NONE, records=1),
        call("consumer_fetch", offset=1).then(error=NONE, records=0),
        check(leader_hw=0),
        replicas=3,
        resolution="the two appended records are given as the leader's log; follower 1's fetch at offset 1 is "
        "answered with data above the HW, a consumer's at offset 1 (the HW is 0 while follower 2 has not "
        "fetched) with an empty record set, not OFFSET_OUT_OF_RANGE",
    ),
    OUT(
        "testFollowerStateNotUpdatedIfLogReadFails",
        "a failing local read (KafkaStorageException): the model's logs never fail",
    ),
    OUT("testFetchMessagesWithInconsistentTopicId", TOPIC_IDS),
    R(
        "testFetchMessagesWhenNotFollowerForOnePartition",
        {"leader": 0, "leader_epoch": 0, "logs": {0: [0, 0]}, "isr": (0, 1)},
        call("fetch", follower=1, fetch_offset=1, current_leader_epoch=0).then(error=NONE, records=1, hw=0),
        check(leader_hw=1),
        part="tp0 (replicas 0, 1)",
        resolution="the two appended records are given as the leader's log; follower 1's fetch at offset 1 is "
        "answered with the HW before the fetch (0), and the leader's HW then moves to 1",
    ),
    OUT(
        "testFetchMessagesWhenNotFollowerForOnePartition",
        "a fetch from broker 1 for a partition whose replicas are 0 and 2 (UNKNOWN_LEADER_EPOCH, the HW stays 0): "
        "every broker of the model is a replica of its partition",
        part="tp1 (replicas 0, 2)",
    ),
    OUT("testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate", MOCKED_LEADER),
    OUT("testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdateIbp26", MOCKED_LEADER),
    OUT("testReplicaSelector", KIP_392),
    OUT("testPreferredReplicaAsFollower", KIP_392),
    OUT("testPreferredReplicaAsLeader", KIP_392),
    OUT("testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr", KIP_392),
    OUT("testFetchFromFollowerShouldNotRunPreferLeaderSelect", KIP_392),
    OUT("testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined", KIP_392),
    OUT("testFollowerFetchWithDefaultSelectorNoForcedHwPropagation", KIP_392),
    OUT("testUnknownReplicaSelector", KIP_392),
    OUT("testDefaultReplicaSelector", KIP_392),
    OUT("testFetchFollowerNotAllowedForOlderClients", KIP_392),
    OUT("testFetchRequestRateMetrics", METRICS),
    *(
        Scenario(
            K,
            method,
            TRUNK,
            REPLICATION,
            given={"leader": 0, "leader_epoch": 1, "isr": [0, 1], "hw": {0: 0}},
            config={"replicas": 2, "min_insync_replicas": 1},
            steps=(
                call("consumer_fetch_wait", offset=0, current_leader_epoch=epoch, max_wait_ms=10).then(parked=True),
                call("become_follower", node=0, leader=1, leader_epoch=2).step(),
                check(due={0: (2,)}),
                call("complete_fetch", node=0, req=2).then(error=error),
            ),
            resolution="the consumer's fetch (maxWait 10, nothing to read) is parked; becoming follower completes "
            "it at once with the error the partition gives now: NOT_LEADER_OR_FOLLOWER without a leader epoch "
            "(an old client), FENCED_LEADER_EPOCH with the old epoch 1 (KIP-320)",
        )
        for method, epoch, error in (
            ("testBecomeFollowerWhileOldClientFetchInPurgatory", -1, NOT_LEADER_OR_FOLLOWER),
            ("testBecomeFollowerWhileNewClientFetchInPurgatory", 1, FENCED_LEADER_EPOCH),
        )
    ),
    OUT("testFetchFromLeaderAlwaysAllowed", KIP_392),
    OUT("testClearFetchPurgatoryOnStopReplica", PURGATORY),
    OUT("testClearProducePurgatoryOnStopReplica", PURGATORY),
    OUT("testVerificationForTransactionalPartitionsOnly", VERIFICATION),
    OUT("testTransactionVerificationFlow", VERIFICATION),
    OUT("testTransactionVerificationBlocksOutOfOrderSequence", VERIFICATION),
    OUT("testTransactionVerificationGuardOnMultiplePartitions", VERIFICATION),
    OUT("testExceptionWhenUnverifiedTransactionHasMultipleProducerIds", VERIFICATION),
    OUT("testTransactionVerificationWhenNotLeader", VERIFICATION),
    OUT("testDisabledTransactionVerification", VERIFICATION),
    OUT("testTransactionVerificationDynamicDisablement", VERIFICATION),
    OUT("testPreVerificationError", VERIFICATION),
    OUT("testFullLeaderAndIsrStrayPartitions", STOP_REPLICA),
    OUT("testUpdateStrayLogs", STOP_REPLICA),
    OUT("testOldLeaderLosesMetricsWhenReassignPartitions", METRICS),
    OUT("testOldFollowerLosesMetricsWhenReassignPartitions", METRICS),
    *(
        OUT(f"testStopReplicaWith{case}", STOP_REPLICA)
        for case in (
            "StaleControllerEpoch",
            "OfflinePartition",
            "InexistentPartition",
            "InexistentPartitionAndPartitionsDelete",
            "InexistentPartitionAndPartitionsDeleteAndIOException",
            "ExistingPartitionAndNewerLeaderEpoch",
            "ExistingPartitionAndOlderLeaderEpoch",
            "ExistingPartitionAndEqualLeaderEpoch",
            "ExistingPartitionAndDeleteSentinel",
            "ExistingPartitionAndLeaderEpochNotProvided",
            "DeletePartitionAndExistingPartitionAndNewerLeaderEpoch",
            "DeletePartitionAndExistingPartitionAndNewerLeaderEpochAndIOException",
            "DeletePartitionAndExistingPartitionAndOlderLeaderEpoch",
            "DeletePartitionAndExistingPartitionAndEqualLeaderEpoch",
            "DeletePartitionAndExistingPartitionAndDeleteSentinel",
            "DeletePartitionAndExistingPartitionAndLeaderEpochNotProvided",
        )
    ),
    OUT("testOffsetOutOfRangeExceptionWhenReadFromLog", TIERED),
    OUT("testOffsetOutOfRangeExceptionWhenFetchMessages", TIERED),
    OUT("testRemoteLogReaderMetrics", TIERED),
    OUT("testRemoteFetchExpiresPerSecMetric", TIERED),
    OUT("testSuccessfulBuildRemoteLogAuxStateMetrics", TIERED),
    OUT("testFailedBuildRemoteLogAuxStateMetrics", TIERED),
    OUT("testBuildRemoteLogAuxStateMetricsThrowsException", TIERED),
    OUT(
        "testReplicaNotAvailable",
        "REPLICA_NOT_AVAILABLE for a partition the manager does not host (a mocked getPartitionOrException): "
        "every broker of the model hosts the partition",
    ),
    OUT("testPartitionMetadataFile", TOPIC_IDS),
    OUT("testPartitionMetadataFileCreatedWithExistingLog", TOPIC_IDS),
    OUT("testPartitionMetadataFileCreatedAfterPreviousRequestWithoutIds", TOPIC_IDS),
    OUT("testInconsistentIdReturnsError", TOPIC_IDS),
    OUT("testPartitionMetadataFileNotCreated", TOPIC_IDS),
    OUT("testPartitionMarkedOfflineIfLogCantBeCreated", LOG_DIRS),
    OUT("testActiveProducerState", "DescribeProducers (KIP-664): the model has no admin requests"),
    OUT("testGetOrCreatePartition", LIFECYCLE),
    OUT("testGetOrCreatePartitionShouldNotCreateOfflinePartition", LOG_DIRS),
    OUT("testApplyDeltaShouldHandleReplicaAssignedToOnlineDirectory", LOG_DIRS),
    OUT("testApplyDeltaShouldHandleReplicaAssignedToUnassignedDirectory", LOG_DIRS),
    OUT("testApplyDeltaShouldHandleReplicaAssignedToLostDirectory", LOG_DIRS),
    *delta_parts(
        "testDeltaFromLeaderToFollower",
        R(
            "testDeltaFromLeaderToFollower",
            {"leader": 0, "leader_epoch": 0, "isr": (0, 1)},
            call("produce", node=0).then(error=NONE),
            call("become_follower", node=0, leader=1, leader_epoch=1).step(),
            call("produce", node=0).then(error=NOT_LEADER_OR_FOLLOWER),
            check(leader_epochs={0: 1}, fetch_states={0: "fetching"}),
            part="enableRemoteStorage=false",
            resolution="the test's produce of 10 records (acks -1) is one produce here; the delta that makes "
            "the other broker leader at epoch 1 is the controller's partition record applied on broker 0, "
            "which then fetches from broker 1",
        ),
    ),
    *delta_parts(
        "testDeltaFromFollowerToLeader",
        R(
            "testDeltaFromFollowerToLeader",
            {"leader": 1, "leader_epoch": 0, "isr": (0, 1)},
            call("produce", node=0).then(error=NOT_LEADER_OR_FOLLOWER),
            call("become_follower", node=0, leader=0, leader_epoch=1).step(),
            call("produce", node=0, acks=1).then(error=NONE),
            check(leader_epochs={0: 1}, fetch_states={0: "idle"}),
            part="enableRemoteStorage=false",
            resolution="the delta making broker 0 leader at epoch 1 is applied on broker 0 alone (broker 1 still "
            "thinks it leads at epoch 0, as in the test, where only the local broker exists), so the produce "
            "uses acks 1 (the test's acks -1 completes through its mocked follower fetch)",
        ),
    ),
    OUT("testDeltaFollowerWithNoChange", LIFECYCLE),
    OUT("testDeltaFollowerToNotReplica", LIFECYCLE),
    OUT("testDeltaFollowerRemovedTopic", LIFECYCLE),
    OUT("testDeltaLeaderToNotReplica", LIFECYCLE),
    OUT("testDeltaLeaderToRemovedTopic", LIFECYCLE),
    Scenario(
        K,
        "testDeltaToFollowerCompletesProduce",
        TRUNK,
        REPLICATION,
        given={"leader": 1, "leader_epoch": 0, "isr": [1, 2], "hw": {1: 0}},
        config={"replicas": 3, "min_insync_replicas": 1},
        steps=(
            call("produce", node=1, acks=-1).then(error=NONE),
            call("become_follower", node=1, leader=2, leader_epoch=1).step(),
            check(due={1: (1,)}),
            call("complete_produce", node=1, req=1, error=NOT_LEADER_OR_FOLLOWER).then(accepted=True),
        ),
        resolution="brokers 1 and 2 of the test are the model's 1 and 2 (broker 0 stays outside the ISR); "
        "the three records are one acks=all produce; the delta to follower (KRaft, applyLocalFollowersDelta) "
        "completes it with NOT_LEADER_OR_FOLLOWER",
    ),
    Scenario(
        K,
        "testDeltaToFollowerCompletesFetch",
        TRUNK,
        REPLICATION,
        given={"leader": 1, "leader_epoch": 0, "isr": [1, 2], "hw": {1: 0}},
        config={
            "replicas": 3,
            "min_insync_replicas": 1,
            "replica_fetch_min_bytes": 1_000_000,
            "replica_fetch_wait_max_ms": 1_000,
        },
        steps=(
            call("follower_fetch_wait", follower=2, fetch_offset=0).then(parked=True),
            call("become_follower", node=1, leader=2, leader_epoch=1).step(),
            check(due={1: (3,)}),
            call("complete_fetch", node=1, req=3).then(error=NOT_LEADER_OR_FOLLOWER),
        ),
        resolution="the follower's fetch (minBytes Int.MaxValue, maxWait 1000) is parked; the delta to "
        "follower completes it with NOT_LEADER_OR_FOLLOWER",
    ),
    OUT("testDeltaToLeaderOrFollowerMarksPartitionOfflineIfLogCantBeCreated", LOG_DIRS),
    OUT("testDeltaFollowerStopFetcherBeforeCreatingInitialFetchOffset", LIFECYCLE),
    OUT("testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithZkPath", LIFECYCLE),
    OUT("testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithKRaftPath", LIFECYCLE),
    OUT(
        "testReplicasAreStoppedWhileInControlledShutdownWithKRaft",
        "controlled shutdown (the broker fenced in KRaft, its replicas stopped): not in the model",
    ),
    OUT(
        "testPartitionListener", "the manager's partition listeners (used by the group coordinators): not in the model"
    ),
    OUT("testPartitionFetchStateUpdatesWithTopicIdChanges", TOPIC_IDS),
    OUT("testReplicaAlterLogDirsWithAndWithoutIds", LOG_DIRS),
    OUT("testDescribeLogDirs", LOG_DIRS),
    OUT("testDescribeLogDirsWithoutAnyPartitionTopic", LOG_DIRS),
    OUT(
        "testCheckpointHwOnShutdown",
        "the HW checkpoint written on a clean shutdown: the model's brokers crash, they do not shut down cleanly",
    ),
    OUT("testNotCallStopPartitionsForNonTieredTopics", TIERED),
    OUT("testFullLairDuringKRaftMigration", MIGRATION),
    OUT("testFullLairDuringKRaftMigrationRemovesOld", MIGRATION),
    OUT("testFullLairDuringKRaftMigrationWithTopicRecreations", MIGRATION),
    OUT("testMetadataLogDirFailureInZkShouldNotHaltBroker", LOG_DIRS),
    OUT("testRemoteReadQuotaExceeded", TIERED),
    OUT("testRemoteReadQuotaNotExceeded", TIERED),
)
