"""OffsetMetadataManagerTest (group-coordinator/src/test/java/.../coordinator/group/), every test
method a row (``testOffsetDeleteWith`` is a helper of parameterized tests, not a test): the offset
commit / fetch / transactional-offset / require_stable parts ported onto the ``__consumer_offsets``
partition of the exactly-once slice. ``verifyReplay(group, topic, partition, (recordOffset,
committedOffset))`` is a plain commit; ``verifyTransactionalReplay(pid, ...)`` a transactional one
(producer epoch 0); ``replayEndTransactionMarker(pid, result)`` the marker. A topic partition is
named ``topic-partition``."""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import PARTITION, TRUNK, Scenario, Step, call

K = "OffsetMetadataManagerTest"
MEMBERSHIP = "consumer-group membership (member ids, generations, member epochs): not in the model"
NAMED = (
    "OffsetFetch naming its partitions (fetchOffsets): the model's OffsetFetch asks for all of a group's "
    "partitions (fetchAllOffsets); the per-partition rule is the same"
)

DELETE = "offset deletion (OffsetDelete, DeleteGroups, partitions of a deleted topic): not in the model"
EXPIRY = "offset retention and expiration (offsets.retention.minutes, the cleanup of expired offsets): not in the model"
REPLAY = "replaying offset records and tombstones when loading the partition: below the model (no log reload)"
METRICS = "the coordinator's offset sensors and metrics: not a Kafka semantic the model states"


def S(method: str, *steps: Step, part: str = "", resolution: str = "") -> Scenario:
    return Scenario(
        K,
        method,
        TRUNK,
        PARTITION,
        given={"name": "__consumer_offsets-0"},
        steps=steps,
        part=part,
        resolution=resolution,
    )


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, out_of_scope=why)


def commit(group: str, **offsets: int) -> Step:
    return call("offset_commit", group=group, offsets=_names(offsets)).then(error=0)


def txn_commit(pid: int, group: str, **offsets: int) -> Step:
    return call("txn_offset_commit", group=group, pid=pid, epoch=0, offsets=_names(offsets)).then(error=0)


def _names(offsets: dict[str, int]) -> dict[str, int]:
    return {k.replace("_", "-"): v for k, v in offsets.items()}


def fetch(group: str, stable: bool, committed: dict[str, int], unstable: tuple[str, ...] = ()) -> Step:
    return call("offset_fetch", group=group, require_stable=stable).then(
        error=0, committed=committed, unstable=unstable
    )


def end(pid: int, commit: bool) -> Step:
    return call("marker", pid=pid, epoch=0, commit=commit).then(error=0)


SCENARIOS: tuple[Scenario, ...] = (
    S(
        "testFetchAllOffsetsWithPendingTransactionalOffsets",
        commit("group", foo_0=100, foo_1=110),
        commit("group", bar_0=200),
        txn_commit(10, "group", foo_1=111),
        txn_commit(10, "group", bar_0=201),
        txn_commit(10, "group", bar_1=211),
        fetch("group", True, {"foo-0": 100}, ("bar-0", "foo-1")),
        fetch("group", False, {"foo-0": 100, "foo-1": 110, "bar-0": 200}),
        end(10, True),
        fetch("group", True, {"foo-0": 100, "foo-1": 111, "bar-0": 201, "bar-1": 211}),
        resolution="model fixed (issue 14): require_stable is answered per partition (UNSTABLE_OFFSET_COMMIT for "
        "foo-1 and bar-0 only, foo-0 still returned; bar-1 has no committed offset and is not listed); "
        "the model failed the whole request",
    ),
    S(
        "testReplay",
        commit("foo", bar_0=100),
        commit("foo", bar_0=200),
        commit("foo", bar_1=200),
        commit("foo", bar_1=300),
        fetch("foo", False, {"bar-0": 200, "bar-1": 300}),
    ),
    S(
        "testTransactionalReplay",
        txn_commit(5, "foo", bar_0=100),
        txn_commit(5, "foo", bar_1=101),
        txn_commit(5, "bar", zar_0=100),
        fetch("foo", False, {}),
        fetch("bar", False, {}),
        fetch("foo", True, {}),
        part="pending offsets are invisible",
        resolution="the test asserts the pending offsets are stored under producer 5 and not in the main storage; "
        "the model's observable is OffsetFetch: nothing is returned before the marker",
    ),
    S(
        "testReplayTransactionEndMarkerWithCommit",
        commit("foo", bar_0=99),
        txn_commit(5, "foo", bar_0=100),
        txn_commit(6, "foo", bar_1=200),
        end(1, True),
        end(5, True),
        fetch("foo", False, {"bar-0": 100}),
        end(6, False),
        fetch("foo", False, {"bar-0": 100}),
        fetch("foo", True, {"bar-0": 100}),
    ),
    S(
        "testReplayTransactionEndMarkerKeepsTheMostRecentCommittedOffset",
        txn_commit(5, "foo", bar_0=100),
        commit("foo", bar_0=101),
        end(5, True),
        fetch("foo", False, {"bar-0": 101}),
    ),
    OUT("testFetchOffsetsWithPendingTransactionalOffsets", NAMED),
    OUT(
        "testFetchOffsetsAtDifferentCommittedOffset",
        "reads at an older committed offset of the coordinator's timeline (lastCommittedOffset): not in the model",
    ),
    OUT(
        "testFetchAllOffsetsAtDifferentCommittedOffset",
        "reads at an older committed offset of the coordinator's timeline (lastCommittedOffset): not in the model",
    ),
    OUT("testGenericGroupTransactionalOffsetCommit", MEMBERSHIP),
    OUT("testConsumerGroupTransactionalOffsetCommit", MEMBERSHIP),
    OUT("testGenericGroupTransactionalOffsetCommitWithUnknownMemberId", MEMBERSHIP),
    OUT("testGenericGroupTransactionalOffsetCommitWithIllegalGenerationId", MEMBERSHIP),
    S(
        "testFetchAllOffsetsWithUnknownGroup",
        fetch("group", False, {}),
        resolution="no committed offset of the group: the answer lists no partition",
    ),
    OUT("testFetchOffsetsWithUnknownGroup", NAMED),
    *(
        OUT(m, MEMBERSHIP)
        for m in (
            "testOffsetCommitWithUnknownGroup",
            "testGenericGroupOffsetCommitWithDeadGroup",
            "testGenericGroupOffsetCommitWithUnknownMemberId",
            "testGenericGroupOffsetCommitWithIllegalGeneration",
            "testGenericGroupOffsetCommitWithUnknownInstanceId",
            "testGenericGroupOffsetCommitWithFencedInstanceId",
            "testGenericGroupOffsetCommitWhileInCompletingRebalanceState",
            "testGenericGroupOffsetCommitWithoutMemberIdAndGeneration",
            "testGenericGroupOffsetCommitWithRetentionTime",
            "testGenericGroupOffsetCommitMaintainsSession",
            "testSimpleGroupOffsetCommit",
            "testSimpleGroupOffsetCommitWithInstanceId",
            "testConsumerGroupOffsetCommitWithUnknownMemberId",
            "testConsumerGroupOffsetCommitWithStaleMemberEpoch",
            "testConsumerGroupOffsetCommitWithIllegalGenerationId",
            "testConsumerGroupOffsetCommitFromAdminClient",
            "testConsumerGroupOffsetCommit",
            "testConsumerGroupOffsetCommitWithOffsetMetadataTooLarge",
            "testConsumerGroupTransactionalOffsetCommitWithUnknownGroupId",
            "testConsumerGroupTransactionalOffsetCommitWithUnknownMemberId",
            "testConsumerGroupTransactionalOffsetCommitWithStaleMemberEpoch",
            "testGenericGroupTransactionalOffsetCommitWithUnknownGroupId",
            "testGenericGroupFetchOffsetsWithDeadGroup",
            "testGenericGroupFetchAllOffsetsWithDeadGroup",
            "testConsumerGroupOffsetFetchWithMemberIdAndEpoch",
            "testConsumerGroupOffsetFetchFromAdminClient",
            "testConsumerGroupOffsetFetchWithUnknownMemberId",
            "testConsumerGroupOffsetFetchWithStaleMemberEpoch",
            "testConsumerGroupOffsetFetchWithIllegalGenerationId",
        )
    ),
    *(
        OUT(m, DELETE)
        for m in (
            "testGenericGroupOffsetDelete",
            "testGenericGroupOffsetDeleteWithErrors",
            "testGenericGroupOffsetDeleteWithPendingTransactionalOffsets",
            "testConsumerGroupOffsetDelete",
            "testConsumerGroupOffsetDeleteWithErrors",
            "testConsumerGroupOffsetDeleteWithPendingTransactionalOffsets",
            "testDeleteGroupAllOffsets",
            "testDeleteGroupAllOffsetsWithPendingTransactionalOffsets",
            "testOnPartitionsDeleted",
        )
    ),
    *(
        OUT(m, EXPIRY)
        for m in (
            "testCleanupExpiredOffsetsGroupHasNoOffsets",
            "testCleanupExpiredOffsetsGroupDoesNotExist",
            "testCleanupExpiredOffsetsEmptyOffsetExpirationCondition",
            "testCleanupExpiredOffsets",
            "testCleanupExpiredOffsetsWithPendingTransactionalOffsets",
        )
    ),
    OUT("testReplayWithTombstoneAndPendingTransactionalOffsets", REPLAY),
    *(
        OUT(m, METRICS)
        for m in (
            "testOffsetCommitsNumberMetricWithTransactionalOffsets",
            "testOffsetCommitsSensor",
            "testOffsetsExpiredSensor",
            "testOffsetDeletionsSensor",
        )
    ),
)
