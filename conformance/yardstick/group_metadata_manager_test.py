"""GroupMetadataManagerTest (core/src/test/scala/unit/kafka/coordinator/group/, the classic group
coordinator of Kafka 0.11-3.x, still in trunk 1eb7644), its offset-commit and transactional-offset
parts, ported onto the ``__consumer_offsets`` partition of the exactly-once slice.

The ``testLoad*`` methods write a ``__consumer_offsets`` log (``appendTransactionalOffsetCommits``:
a transactional batch of offset commits of producer P at epoch E; ``completeTransactionalOffsetCommit``:
its COMMIT or ABORT marker; ``appendConsumerOffsetCommit``: a plain commit) and load it; loading
replays the records in offset order exactly as appending them does, so a scenario appends the same
records and checks what ``getOffsets`` then answers (``offset_fetch``: the committed offsets, and
with require_stable the partitions with pending transactional offsets). A topic partition is
named ``topic-partition``. Assertions on ``appendedBatchOffset`` (the record's offset) and on the
group's membership fields are not in the model's answer; the scenarios keep the offsets and
pendings the test asserts.
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import PARTITION, TRUNK, Scenario, Step, call

K = "GroupMetadataManagerTest"
MEMBERSHIP = (
    "group membership and group metadata records (generation, protocol, members, static members): not in the model"
)
SERDE = "record key/value serialization and versions: below the model's abstraction"
EXPIRY = "offset retention and expiration (offsets.retention.minutes, expireTimestamp): not in the model"
LOADING = (
    "log loading mechanics (segments, corrupted batches, record size, unknown record types, tombstones): "
    "the model appends, it does not read bytes"
)
OWNERSHIP = "partition ownership, unloading and coordinator moves of the group coordinator: not in the model"
APPEND_ERRORS = (
    "append failures of the offsets topic (NOT_ENOUGH_REPLICAS, mapped errors, metadata too large): not in the model"
)
METRICS = "metrics and log messages: not protocol"


def S(method: str, *steps: Step, part: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, given={"name": "__consumer_offsets-0"}, steps=steps, part=part)


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, out_of_scope=why)


def _names(offsets: dict[str, int]) -> dict[str, int]:
    return {k.replace("_", "-"): v for k, v in offsets.items()}


def commit(**offsets: int) -> Step:
    """appendConsumerOffsetCommit / storeOffsets without a producer."""
    return call("offset_commit", group="group", offsets=_names(offsets)).then(error=0)


def txn(pid: int, epoch: int, **offsets: int) -> Step:
    """appendTransactionalOffsetCommits(buffer, pid, epoch, ...)."""
    return call("txn_offset_commit", group="group", pid=pid, epoch=epoch, offsets=_names(offsets)).then(error=0)


def end(pid: int, epoch: int, commit: bool) -> Step:
    """completeTransactionalOffsetCommit(buffer, pid, epoch, ..., isCommit)."""
    return call("marker", pid=pid, epoch=epoch, commit=commit).then(error=0)


def offsets(committed: dict[str, int], pending: tuple[str, ...] = ()) -> tuple[Step, Step]:
    """getOffsets(group, requireStable, None) without and with require_stable. Asked for all
    partitions, ``GroupMetadataManager.getOffsets`` iterates ``group.allOffsets`` (the committed
    ones): with require_stable a committed partition with pending transactional offsets
    (``hasPendingOffsetCommitsForTopicPartition``) answers UNSTABLE_OFFSET_COMMIT, a partition with
    only pending offsets is not listed. The test's own ``hasPendingOffsetCommitsForTopicPartition``
    assertions on such partitions ask the group by name, which the model's OffsetFetch (all
    partitions) does not."""
    unstable = tuple(sorted(p for p in pending if p in committed))
    stable = {k: v for k, v in committed.items() if k not in pending}
    return (
        call("offset_fetch", group="group", require_stable=False).then(error=0, committed=committed, unstable=()),
        call("offset_fetch", group="group", require_stable=True).then(error=0, committed=stable, unstable=unstable),
    )


COMMITTED = {"foo_0": 23, "foo_1": 455, "bar_0": 8992}
COMMITTED_NAMES = _names(COMMITTED)
ABORTED = {"foo_2": 231, "foo_3": 4551, "bar_1": 89921}
PENDING = {"foo_3": 2312, "foo_4": 45512, "bar_2": 899212}

SCENARIOS: tuple[Scenario, ...] = (
    S("testLoadOffsetsWithoutGroup", commit(**COMMITTED), *offsets(COMMITTED_NAMES)),
    S(
        "testLoadEmptyGroupWithOffsets",
        commit(**COMMITTED),
        *offsets(COMMITTED_NAMES),
        part="offsets (group record: membership)",
    ),
    S(
        "testLoadTransactionalOffsetsWithoutGroup",
        txn(1000, 2, **COMMITTED),
        end(1000, 2, True),
        *offsets(COMMITTED_NAMES),
    ),
    S("testDoNotLoadAbortedTransactionalOffsetCommits", txn(1000, 2, **ABORTED), end(1000, 2, False), *offsets({})),
    S(
        "testGroupLoadedWithPendingCommits",
        txn(1000, 2, **COMMITTED),
        *offsets({}, tuple(COMMITTED_NAMES)),
    ),
    S(
        "testLoadWithCommittedAndAbortedTransactionalOffsetCommits",
        txn(1000, 2, **ABORTED),
        end(1000, 2, False),
        txn(1000, 2, **COMMITTED),
        end(1000, 2, True),
        *offsets(COMMITTED_NAMES),
    ),
    S(
        "testLoadWithCommittedAndAbortedAndPendingTransactionalOffsetCommits",
        txn(1000, 2, **COMMITTED),
        end(1000, 2, True),
        txn(1000, 2, **ABORTED),
        end(1000, 2, False),
        txn(1000, 2, **PENDING),
        *offsets(COMMITTED_NAMES, tuple(_names(PENDING))),
        end(1000, 2, True),  # handleTxnCompletion(producerId, ..., isCommit = true)
        *offsets({**COMMITTED_NAMES, **_names(PENDING)}),
    ),
    S(
        "testLoadTransactionalOffsetCommitsFromMultipleProducers",
        txn(1000, 2, **COMMITTED),
        end(1000, 2, True),
        txn(1001, 3, **ABORTED),
        end(1001, 3, True),
        *offsets({**COMMITTED_NAMES, **_names(ABORTED)}),
    ),
    S(
        "testGroupLoadWithConsumerAndTransactionalOffsetCommitsConsumerWins",
        txn(1000, 2, foo_0=23),
        commit(foo_0=24),
        end(1000, 2, True),
        *offsets({"foo-0": 24}),
    ),
    S(
        "testGroupLoadWithConsumerAndTransactionalOffsetCommitsTransactionWins",
        commit(foo_0=24),
        txn(1000, 2, foo_0=23),
        end(1000, 2, True),
        *offsets({"foo-0": 23}),
    ),
    S("testCommitOffset", commit(foo_0=37), *offsets({"foo-0": 37})),
    S(
        "testTransactionalCommitOffsetCommitted",
        txn(232, 0, foo_0=37),
        *offsets({}, ("foo-0",)),
        end(232, 0, True),  # completePendingTxnOffsetCommit(producerId, isCommit = true)
        *offsets({"foo-0": 37}),
    ),
    S(
        "testTransactionalCommitOffsetAborted",
        txn(232, 0, foo_0=37),
        *offsets({}, ("foo-0",)),
        end(232, 0, False),
        *offsets({}),
    ),
    S(
        "testLoadOffsetsWithEmptyControlBatch",
        commit(**COMMITTED),
        *offsets(COMMITTED_NAMES),
        part="offsets (empty control batch: loading)",
    ),
    OUT("testTransactionalCommitOffsetAppendFailure", APPEND_ERRORS),
    OUT("testTransactionalCommitOffsetWithOffsetMetadataTooLargePartialFailure", APPEND_ERRORS),
    OUT("testCommitOffsetFailure", APPEND_ERRORS),
    OUT("testCommitOffsetPartialFailure", APPEND_ERRORS),
    OUT("testOffsetMetadataTooLarge", APPEND_ERRORS),
    OUT("testOffsetMetadataTooLargePartialFailure", APPEND_ERRORS),
    OUT("testStoreGroupErrorMapping", APPEND_ERRORS),
    OUT("testCommitOffsetWhenCoordinatorHasMoved", OWNERSHIP),
    OUT("testStoreNonEmptyGroupWhenCoordinatorHasMoved", OWNERSHIP),
    OUT("testGroupNotExists", OWNERSHIP),
    OUT("testLoadOffsetsAndGroupIgnored", OWNERSHIP),
    OUT("testUnloadOffsetsAndGroup", OWNERSHIP),
    OUT("testUnloadOffsetsAndGroupIgnored", OWNERSHIP),
    OUT("testUnloadOffsetsAndGroupIgnoredAfterStopReplica", OWNERSHIP),
    OUT("testOffsetWriteAfterGroupRemoved", OWNERSHIP),
    OUT("testLoadOffsetsWithTombstones", LOADING),
    OUT("testLoadGroupWithTombstone", LOADING),
    OUT("testLoadGroupWithLargeGroupMetadataRecord", LOADING),
    OUT("testLoadGroupAndOffsetsWithCorruptedLog", LOADING),
    OUT("testLoadGroupAndOffsetsFromDifferentSegments", LOADING),
    OUT("testLoadGroupsAndOffsetsWillIgnoreUnknownMessage", LOADING),
    OUT("testReadMessageKeyCanReadUnknownMessage", LOADING),
    OUT("testLogInfoFromCleanupGroupMetadata", LOADING),
    OUT("testLoadOffsetsAndGroup", MEMBERSHIP),
    OUT("testAddGroup", MEMBERSHIP),
    OUT("testloadGroupWithStaticMember", MEMBERSHIP),
    OUT("testLoadConsumerGroup", MEMBERSHIP),
    OUT("testLoadEmptyConsumerGroup", MEMBERSHIP),
    OUT("testLoadConsumerGroupWithFaultyConsumerProtocol", MEMBERSHIP),
    OUT("testCurrentStateTimestampForAllGroupMetadataVersions", MEMBERSHIP),
    OUT("testReadFromOldGroupMetadata", MEMBERSHIP),
    OUT("testStoreEmptyGroup", MEMBERSHIP),
    OUT("testStoreEmptySimpleGroup", MEMBERSHIP),
    OUT("testStoreNonEmptyGroup", MEMBERSHIP),
    OUT("testGroupMetadataRemoval", MEMBERSHIP),
    OUT("testGroupMetadataRemovalWithLogAppendTime", MEMBERSHIP),
    OUT("testShouldThrowExceptionForUnsupportedGroupMetadataVersion", SERDE),
    OUT("testSerdeOffsetCommitValue", SERDE),
    OUT("testSerdeOffsetCommitValueWithExpireTimestamp", SERDE),
    OUT("testSerdeOffsetCommitValueWithNoneExpireTimestamp", SERDE),
    OUT("testSerializeGroupMetadataValueToHighestNonFlexibleVersion", SERDE),
    OUT("testSerializeOffsetCommitValueToHighestNonFlexibleVersion", SERDE),
    OUT("testDeserializeHighestSupportedGroupMetadataValueVersion", SERDE),
    OUT("testDeserializeHighestSupportedOffsetCommitValueVersion", SERDE),
    OUT("testDeserializeFutureOffsetCommitValue", SERDE),
    OUT("testDeserializeFutureGroupMetadataValue", SERDE),
    OUT("testLoadOffsetFromOldCommit", SERDE),
    OUT("testLoadOffsetWithExplicitRetention", EXPIRY),
    OUT("testExpireOffset", EXPIRY),
    OUT("testExpireGroupWithOffsetsOnly", EXPIRY),
    OUT("testOffsetExpirationSemantics", EXPIRY),
    OUT("testOffsetExpirationOfSimpleConsumer", EXPIRY),
    OUT("testOffsetExpirationOfActiveGroupSemantics", EXPIRY),
    OUT("testMetrics", METRICS),
    OUT("testPartitionLoadMetric", METRICS),
)
