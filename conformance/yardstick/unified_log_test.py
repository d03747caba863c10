"""UnifiedLogTest (core/src/test/scala/unit/kafka/log/), every test method a row: the HW / LSO /
aborted-index / producer-state / log-start parts ported onto the exactly-once partition (a leader's
log; appends without a ``seq`` continue the producer's sequence as
LogTestUtils.appendTransactionalAsLeader does), the rest (segments, snapshots, files, tiered
storage, follower appends and truncation, timestamps, the log's own API) listed with the reason."""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import PARTITION, TRUNK, Scenario, Step, call, check
from kconform.traces.events import (
    INVALID_PRODUCER_EPOCH,
    NONE,
    OFFSET_OUT_OF_RANGE,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    TRANSACTION_COORDINATOR_FENCED,
)

K = "UnifiedLogTest"


def S(method: str, *steps: Step, part: str = "", resolution: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, steps=steps, part=part, resolution=resolution)


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, out_of_scope=why)


def txn(pid: int, n: int, epoch: int = 0, **want: object) -> Step:
    return call("produce", pid=pid, epoch=epoch, records=n, txn=True).then(**want)


def plain(n: int) -> Step:
    return call("produce", records=n).step()


def end(pid: int, commit: bool, epoch: int = 0, coordinator_epoch: int = 0, **want: object) -> Step:
    return call("marker", pid=pid, epoch=epoch, commit=commit, coordinator_epoch=coordinator_epoch).then(**want)


def hw(to: int = -1, **want: object) -> Step:
    return call("advance_hw", hw=to).then(**want)


def rc(offset: int, *offsets: int) -> Step:
    return call("fetch", offset=offset, read_committed=True).then(offsets=offsets)


SCENARIOS: tuple[Scenario, ...] = (
    S(
        "testFetchUpToLastStableOffset",
        txn(1, 5),
        plain(3),
        txn(2, 2),
        txn(1, 4),
        plain(2),
        txn(1, 10),
        check(lso=0),
        rc(0),
        hw(-1, lso=0),
        rc(0),
        end(1, True),
        check(lso=0),
        hw(-1, lso=8),
        rc(7, 7),
        rc(8),
        end(2, False),
        check(lso=8),
        hw(-1, lso=28),
        rc(27, 27),
        rc(28),
    ),
    S(
        "testDuplicateAppends",
        *(call("produce", pid=1, epoch=0, seq=s).then(outcome="appended", base_offset=s) for s in range(6)),
        call("produce", pid=1, epoch=0, seq=6, records=3).then(outcome="appended", base_offset=6),
        call("produce", pid=1, epoch=0, seq=6, records=3).then(outcome="duplicate", error=NONE, base_offset=6),
        call("produce", pid=1, epoch=0, seq=7, records=2).then(error=OUT_OF_ORDER_SEQUENCE_NUMBER),
        call("produce", pid=1, epoch=0, seq=2).then(outcome="duplicate", base_offset=2),
        call("produce", pid=1, epoch=0, seq=1).then(error=OUT_OF_ORDER_SEQUENCE_NUMBER),
        call("produce", pid=1, epoch=0, seq=9).then(outcome="appended", base_offset=9),
        call("produce", pid=1, epoch=0, seq=9).then(outcome="duplicate", base_offset=9),
    ),
    S(
        "testOldProducerEpoch",
        call("produce", pid=1, epoch=1, seq=0).then(error=NONE),
        call("produce", pid=1, epoch=0, seq=0).then(error=INVALID_PRODUCER_EPOCH),
    ),
    S("testFirstUnstableOffsetNoTransactionalData", plain(3), check(first_unstable=-1)),
    S(
        "testFirstUnstableOffsetWithTransactionalData",
        txn(137, 3, epoch=5, base_offset=0),
        check(first_unstable=0),
        txn(137, 1, epoch=5),
        check(first_unstable=0),
        end(137, True, epoch=5, offset=4),
        check(first_unstable=0),
        hw(5, first_unstable=-1),
    ),
    S(
        "testTransactionIndexUpdated",
        txn(1, 5),
        plain(3),
        txn(2, 2),
        txn(1, 4),
        txn(3, 3),
        plain(2),
        txn(1, 10),
        end(1, False, offset=29),
        txn(2, 6),
        txn(4, 3),
        plain(10),
        txn(3, 9),
        end(3, True, offset=58),
        txn(4, 8),
        txn(2, 7),
        end(2, False, offset=74),
        plain(10),
        txn(4, 4),
        end(4, True, offset=89),
        check(aborted_index=[(1, 0, 29, 8), (2, 8, 74, 36)]),
        hw(30, first_unstable=8),
        hw(75, first_unstable=36),
        hw(-1, first_unstable=-1),
        part="offsets as the test's comments count them",
        resolution="the test's comments count the offset after each append (// 30 after the first marker); the "
        "marker offsets asserted here are those comments minus one",
    ),
    S(
        "testZombieCoordinatorFenced",
        txn(1, 10),
        end(1, False, coordinator_epoch=1, error=NONE),
        txn(1, 5),
        end(1, True, coordinator_epoch=2, error=NONE),
        end(1, False, coordinator_epoch=1, error=TRANSACTION_COORDINATOR_FENCED),
    ),
    S(
        "testZombieCoordinatorFencedEmptyTransaction",
        txn(1, 10),
        end(1, True, coordinator_epoch=0),
        end(1, False, coordinator_epoch=2, error=NONE),
        end(1, False, coordinator_epoch=2, error=NONE),
        end(1, False, coordinator_epoch=1, error=TRANSACTION_COORDINATOR_FENCED),
        part="the first transaction written as leader",
        resolution="the test appends its first transaction as a follower; the exactly-once partition is its leader "
        "only, so the same batch and marker are appended as leader (same producer state)",
    ),
    S(
        "testEndTxnWithFencedProducerEpoch",
        end(1, False, epoch=5, coordinator_epoch=1, error=NONE),
        end(1, False, epoch=4, coordinator_epoch=1, error=INVALID_PRODUCER_EPOCH),
    ),
    S(
        "testLastStableOffsetWithMixedProducerData",
        txn(137, 3, epoch=5),
        check(first_unstable=0),
        plain(3),
        txn(983, 3, epoch=5, base_offset=6),
        check(first_unstable=0),
        end(137, False, epoch=5, offset=9),
        hw(10, first_unstable=6),
        end(983, True, epoch=5, offset=10),
        hw(11, first_unstable=-1),
    ),
    S(
        "testAllowNonZeroSequenceOnFirstAppendNonZeroEpoch",
        check(ongoing={}),
        call("produce", pid=23, epoch=1, seq=3, records=2, txn=True).then(error=NONE, ongoing={23: 0}),
        part="verification answered",
        resolution="the test obtains a verification guard first; the partition vocabulary appends a verified batch",
    ),
    S(
        "testReadCommittedWithConcurrentHighWatermarkUpdates",
        txn(15, 1),
        call("fetch", offset=0, read_committed=True).then(offsets=()),
        end(15, False),
        hw(-1),
        txn(15, 1),
        call("fetch", offset=2, read_committed=True).then(offsets=()),
        hw(-1),
        call("fetch", offset=2, read_committed=True).then(offsets=()),
        end(15, False),
        hw(-1),
        txn(15, 1),
        hw(-1),
        call("fetch", offset=4, read_committed=True).then(offsets=()),
        end(15, False),
        part="three iterations, HW updates interleaved",
        resolution="the test races a HW-updating thread against append/read/abort loops up to offset 50 and "
        "asserts no read_committed read at the LEO is ever non-empty; the model is sequential, so three "
        "iterations with the HW update before and after the read stand for the interleavings",
    ),
    OUT(
        "testTruncateBelowFirstUnstableOffset",
        "truncation of the exactly-once partition: its leader never loses an append",
    ),
    OUT("testTruncateFullyAndStartBelowFirstUnstableOffset", "truncation of the exactly-once partition"),
    OUT(
        "testTransactionIndexUpdatedThroughReplication",
        "follower appends: the exactly-once partition is its leader only",
    ),
    S(
        "testLastStableOffsetDoesNotExceedLogStartOffsetMidSegment",
        txn(1, 5),
        plain(3),
        txn(1, 5),
        check(leo=13, first_unstable=0),
        hw(-1),
        call("delete_records", offset=5).then(error=NONE, log_start=5),
        check(first_unstable=5),
        resolution="segments and their roll/deletion are below the model (one sequence of records); the log "
        "start moves by DeleteRecords (KIP-107) as maybeIncrementLogStartOffset(ClientRecordDeletion) does, and "
        "the first unstable offset is lifted to it (UnifiedLog.maybeIncrementFirstUnstableOffset)",
    ),
    S(
        "testLastStableOffsetDoesNotExceedLogStartOffsetAfterSegmentDeletion",
        txn(1, 5),
        plain(3),
        txn(1, 5),
        check(leo=13, first_unstable=0),
        hw(-1),
        call("delete_records", offset=8).then(error=NONE, log_start=8),
        hw(-1),
        check(first_unstable=8),
        resolution="segments and their roll/deletion are below the model (one sequence of records); the log "
        "start moves by DeleteRecords (KIP-107) as maybeIncrementLogStartOffset(ClientRecordDeletion) does, and "
        "the first unstable offset is lifted to it (UnifiedLog.maybeIncrementFirstUnstableOffset)",
    ),
    S(
        "testCannotIncrementLogStartOffsetPastHighWatermark",
        plain(100),
        hw(25),
        call("delete_records", offset=26).then(error=OFFSET_OUT_OF_RANGE, log_start=0),
        check(log_start=0, hw=25),
        resolution="maybeIncrementLogStartOffset(26, ClientRecordDeletion) throws OffsetOutOfRangeException "
        "above the HW; DeleteRecords answers that error (Partition.deleteRecordsOnLeader, KIP-107) and the log "
        "start stays; the test's segment and retention settings only shape files",
    ),
    S(
        "testReadOutOfRange",
        call("pad", to=1024).step(),
        hw(-1),
        call("delete_records", offset=1024).then(error=NONE, log_start=1024),
        plain(1),
        hw(-1),
        call("fetch", offset=1025, read_committed=False).then(error=NONE, offsets=()),
        call("fetch", offset=0, read_committed=False).then(error=OFFSET_OUT_OF_RANGE, offsets=()),
        call("fetch", offset=1026, read_committed=False).then(error=OFFSET_OUT_OF_RANGE, offsets=()),
        resolution="the test's log starts at 1024 through createEmptyLogs (empty segment files); here 1024 "
        "records are written and deleted by DeleteRecords, which leaves the same log start and LEO; the reads "
        "at the LEO (empty), below the log start and past the LEO (OffsetOutOfRangeException) are the test's",
    ),
    OUT(
        "testAppendToTransactionIndexFailure",
        "a disk I/O failure while appending to the index: the model's log never fails",
    ),
    OUT("testAbortedTransactionSpanningMultipleSegments", "segments: the model's log is one sequence of records"),
)


# ---------------------------------------------------------------------------------------------
# Every other method of UnifiedLogTest (trunk 1eb7644), so that the class is one row per method.


def _read_all(hw_now: int, leo: int) -> tuple[Step, ...]:
    """assertHighWatermarkBoundedFetches: below the HW a read is not empty, from the HW to the LEO
    it is (FetchIsolation.HIGH_WATERMARK, the consumer's read_uncommitted)."""
    return tuple(
        call("fetch", offset=o, read_committed=False).then(error=NONE, offsets=tuple(range(o, hw_now)))
        for o in range(0, leo + 1)
    )


SEGMENTS = (
    "segments, rolls, indexes, splitting, flushing, record sizes, formats and compression: below the model's "
    "abstraction (one sequence of records)"
)
SNAPSHOTS = "producer-state snapshots, log reload and recovery: the model keeps producer state as a value (no files)"
FILES = "topic ids, partition.metadata files, directory renames and failed log directories: not in the model"
TIERED = "tiered storage (KIP-405: remote log start, local retention, remote reads): not in the model"
FOLLOWER_LOG = (
    "appends as follower, truncation and full truncation of the log: the exactly-once partition is its "
    "leader's and never truncates; the replication slice's truncation rules are AbstractFetcherThreadTest's "
    "rows"
)
TIMESTAMPS = "offsets by timestamp (ListOffsets) and time indexes: not in the model"
LOG_API = (
    "the log's own API contracts (append info, offsets assigned by the caller, reads with byte limits, "
    "offset listeners, the HW clamped by updateHighWatermark): below the model, whose appends are assigned "
    "offsets by the leader and whose HW moves only forward up to the LEO"
)
VERIFICATION = (
    "the verification guard at the log layer (KIP-890 part 1): the model checks verification at the leader "
    "(TxnProduceHandled)"
)
COMPACTION = "compacted topics (compaction of producer batches, constraints): not in the model"

UNPORTED: dict[str, str] = {
    **{
        m: SEGMENTS
        for m in (
            "testHighWatermarkMetadataUpdatedAfterSegmentRoll",
            "testTimeBasedLogRollDuringAppend",
            "testRollSegmentThatAlreadyExists",
            "testLogSegmentsCallCorrect",
            "testTimeBasedLogRollJitter",
            "testSizeBasedLogRoll",
            "testLoadEmptyLog",
            "testLogRollAfterLogHandlerClosed",
            "testFlushingEmptyActiveSegments",
            "testLogRolls",
            "testCompressedMessages",
            "testThatGarbageCollectingSegmentsDoesntChangeOffset",
            "testMessageSetSizeCheck",
            "testMessageSizeCheck",
            "testMessageSizeCheckInAppendAsFollower",
            "testIndexResizingAtTruncation",
            "testAppendMessageWithNullPayload",
            "testAppendWithNoTimestamp",
            "testLeaderEpochCacheClearedAfterDowngradeInAppendedMessages",
            "testLeaderEpochCacheClearedAfterDynamicMessageFormatDowngrade",
            "testLeaderEpochCacheCreatedAfterMessageFormatUpgrade",
            "testSplitOnOffsetOverflow",
            "testDegenerateSegmentSplit",
            "testDegenerateSegmentSplitWithOutOfRangeBatchLastOffset",
            "testDegenerateSplitSegmentWithOverflow",
            "testDeleteOldSegments",
            "testLogDeletionAfterClose",
            "testLoadPartitionDirWithNoSegmentsShouldNotThrow",
            "testDeletableSegmentsFilter",
            "testDeletableSegmentsIteration",
            "testGetFirstBatchTimestampForSegments",
            "testAsyncDelete",
        )
    },
    **{
        m: SNAPSHOTS
        for m in (
            "testOffsetFromProducerSnapshotFile",
            "testInitializationOfProducerSnapshotsUpgradePath",
            "testLogReinitializeAfterManualDelete",
            "testProducerExpireCheckAfterDelete",
            "testProducerIdMapTruncateTo",
            "testProducerIdMapTruncateToWithNoSnapshots",
            "testRetentionDeletesProducerStateSnapshots",
            "testLogStartOffsetMovementDeletesSnapshots",
            "testLoadingLogDeletesProducerStateSnapshotsPastLogEndOffset",
            "testProducerIdMapTruncateFullyAndStartAt",
            "testProducerIdExpirationOnSegmentDeletion",
            "testTakeSnapshotOnRollAndDeleteSnapshotOnRecoveryPointCheckpoint",
            "testProducerSnapshotAfterSegmentRollOnAppend",
            "testRebuildTransactionalState",
            "testDeleteSnapshotsOnIncrementLogStartOffset",
            "testRecoveryPointNotIncrementedOnProducerStateSnapshotFlushFailure",
            "testOffsetSnapshot",
            "testProducerIdMapOffsetUpdatedForNonIdempotentData",
            "testRetentionIdempotency",
        )
    },
    **{
        m: COMPACTION
        for m in (
            "testRebuildProducerIdMapWithCompactedData",
            "testRebuildProducerStateWithEmptyCompactedBatch",
            "testUpdateProducerIdMapWithCompactedData",
            "testCompactionDeletesProducerStateSnapshots",
            "testCompactedTopicConstraints",
            "testEnableRemoteLogStorageOnCompactedTopics",
        )
    },
    **{
        m: FILES
        for m in (
            "testLogFlushesPartitionMetadataOnAppend",
            "testLogFlushesPartitionMetadataOnClose",
            "testLogRecoversTopicId",
            "testNoOpWhenKeepPartitionMetadataFileIsFalse",
            "testLogFailsWhenInconsistentTopicIdSet",
            "testAppendToOrReadFromLogInFailedLogDir",
            "testWriteLeaderEpochCheckpointAfterDirectoryRename",
            "testTopicIdTransfersAfterDirectoryRename",
            "testTopicIdFlushesBeforeDirectoryRename",
            "testBackgroundDeletionWithIOException",
            "testRenamingDirWithoutReinitialization",
        )
    },
    **{
        m: TIERED
        for m in (
            "testFetchOffsetByTimestampFromRemoteStorage",
            "testFetchLatestTieredTimestampNoRemoteStorage",
            "testFetchLatestTieredTimestampWithRemoteStorage",
            "testRemoteLogStorageIsDisabledOnInternalAndRemoteLogMetadataTopic",
            "testNoOpWhenRemoteLogStorageIsDisabled",
            "testStartOffsetsRemoteLogStorageIsEnabled",
            "testActiveSegmentDeletionDueToRetentionTimeBreachWithRemoteStorage",
            "testSegmentDeletionEnabledBeforeUploadToRemoteTierWhenLogStartOffsetMovedAhead",
            "testRetentionOnLocalLogDeletionWhenRemoteLogCopyEnabledAndDefaultLocalRetentionBytes",
            "testRetentionOnLocalLogDeletionWhenRemoteLogCopyEnabledAndDefaultLocalRetentionMs",
            "testRetentionOnLocalLogDeletionWhenRemoteLogCopyDisabled",
            "testIncrementLocalLogStartOffsetAfterLocalLogDeletion",
        )
    },
    **{
        m: FOLLOWER_LOG
        for m in (
            "testTruncateFullyAndStart",
            "testTruncateToEndOffsetClearsEpochCache",
            "testDuplicateAppendToFollower",
            "testMultipleProducersWithDuplicatesInSingleAppend",
            "testMultipleProducerIdsPerMemoryRecord",
            "testTruncateTo",
            "testMaybeUpdateHighWatermarkAsFollower",
            "testHighWatermarkMaintenance",
            "testSegmentDeletionWithHighWatermarkInitialization",
        )
    },
    **{
        m: TIMESTAMPS
        for m in (
            "testBuildTimeIndexWhenNotAssigningOffsets",
            "testFetchOffsetByTimestampIncludesLeaderEpoch",
            "testFetchOffsetByTimestampWithMaxTimestampIncludesTimestamp",
            "testFetchOffsetByTimestampShouldReadOnlyLocalLogWhenLogIsEmpty",
            "testConvertToOffsetMetadataDoesNotThrowOffsetOutOfRangeError",
        )
    },
    **{
        m: LOG_API
        for m in (
            "testAppendAsLeaderWithRaftLeader",
            "testAppendInfoFirstOffset",
            "testFetchUpToLogEndOffset",
            "testAppendAndReadWithSequentialOffsets",
            "testAppendAndReadWithNonSequentialOffsets",
            "testReadAtLogGap",
            "testReadWithMinMessage",
            "testReadWithTooSmallMaxLength",
            "testAppendWithOutOfOrderOffsetsThrowsException",
            "testAppendBelowExpectedOffsetThrowsException",
            "testAppendEmptyLogBelowLogStartOffsetThrowsException",
            "testLogOffsetsListener",
            "testUpdateLogOffsetsListener",
            "testLogDeletionAfterDeleteRecords",
        )
    },
    **{
        m: VERIFICATION
        for m in (
            "testTransactionIsOngoingAndVerificationGuard",
            "testEmptyTransactionStillClearsVerificationGuard",
            "testDisabledVerificationClearsVerificationGuard",
            "testEnablingVerificationWhenRequestIsAtLogLayer",
        )
    },
}

MORE: tuple[Scenario, ...] = (
    S(
        "testFetchUpToHighWatermark",
        plain(3),
        plain(2),
        *_read_all(0, 5),
        hw(3),
        *_read_all(3, 5),
        hw(5),
        *_read_all(5, 5),
        resolution="a read below the HW returns the records up to the HW (assertNonEmptyFetch), from the HW "
        "to the LEO none (assertEmptyFetch)",
    ),
    S(
        "testActiveProducers",
        txn(1, 5, epoch=5),
        check(producer_epochs={1: 5}, last_seqs={1: 4}, ongoing={1: 0}, coordinator_epochs={1: -1}),
        end(1, True, epoch=5, coordinator_epoch=15),
        check(producer_epochs={1: 5}, last_seqs={1: 4}, ongoing={}, coordinator_epochs={1: 15}),
        call("produce", pid=2, epoch=5, records=3).then(error=NONE),
        check(producer_epochs={2: 5}, last_seqs={2: 2}, ongoing={}, coordinator_epochs={2: -1}),
    ),
    S(
        "testNonSequentialAppend",
        call("produce", pid=1, epoch=0, seq=0).then(error=NONE),
        call("produce", pid=1, epoch=0, seq=2).then(error=OUT_OF_ORDER_SEQUENCE_NUMBER),
    ),
    S(
        "testPeriodicProducerIdExpiration",
        call("produce", pid=23, epoch=0, seq=0, now=0).then(error=NONE),
        check(producer_epochs={23: 0}),
        call("expire", pid=23, now=100, expiration_ms=200).then(expired=False),
        call("expire", pid=23, now=200, expiration_ms=200).then(expired=True),
        check(producer_epochs={}),
        resolution="producer.id.expiration.ms 200 checked every 100 ms: kept at 100 ms, gone at 200 "
        "(ProducerStateManager.isProducerExpired: now - lastTimestamp >= the expiration)",
    ),
    S(
        "testCannotDeleteSegmentsAtOrAboveHighWatermark",
        plain(100),
        check(hw=0, leo=100),
        *(
            step
            for h in (1, 37, 99, 100)
            for step in (
                hw(h),
                call("delete_records", offset=h).then(error=NONE, log_start=h),
                call("delete_records", offset=h + 1).then(error=OFFSET_OUT_OF_RANGE, log_start=h),
            )
        ),
        check(log_start=100, leo=100),
        resolution="time retention with every record expired deletes what is below the HW and nothing above "
        "it (deleteOldSegments; KAFKA-5634): here DeleteRecords up to the HW moves the log start as far, and "
        "one past the HW is refused (model.log_start.delete_records); the HW values are a sample of the "
        "test's 0..100",
    ),
)

SCENARIOS = (*SCENARIOS, *MORE, *(OUT(m, why) for m, why in UNPORTED.items()))
