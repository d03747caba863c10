"""ProducerStateManagerTest (storage/src/test/java/org/apache/kafka/storage/internals/log/), ported.

The model's produce is UnifiedLog's (the duplicate check runs before ProducerAppendInfo), and its
log starts at offset 0 with every append at the LEO, so a test's offsets are reached with
``pad(to)`` (records without a producer id from other writers) before the producer's append.
Constants: producerId 1, epoch 0, defaultSequence 0; producer.id.expiration.ms is the test's
ProducerStateManagerConfig default (86400000).
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import PARTITION, TRUNK, Scenario, Step, call, check
from kconform.traces.events import (
    INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE,
    NONE,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    TRANSACTION_COORDINATOR_FENCED,
)

K = "ProducerStateManagerTest"
PID, E = 1, 0
EXPIRY = 86_400_000
INT_MAX = 2**31 - 1
SNAPSHOT = "producer-state snapshots and log reload: the model keeps producer state as a value (no files)"
REPLICA = "appends of origin REPLICATION (a follower's log): the exactly-once slice's partition is its leader only"
VERIFY = (
    "KIP-890 verification entries at the ProducerStateManager level: the model checks them at "
    "the leader (TxnProduceHandled)"
)
LATE = "hasLateTransaction (a metric of transactions older than the max timeout): not a protocol answer"


def S(method: str, *steps: Step, part: str = "", resolution: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, steps=steps, part=part, resolution=resolution)


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, out_of_scope=why)


def pad(to: int) -> Step:
    return call("pad", to=to).step()


def prod(
    epoch: int, seq: int, txn: bool = False, pid: int = PID, now: int = 0, records: int = 1, **want: object
) -> Step:
    return call("produce", pid=pid, epoch=epoch, seq=seq, txn=txn, now=now, records=records).then(**want)


def marker(epoch: int, commit: bool, pid: int = PID, coordinator_epoch: int = 0, **want: object) -> Step:
    return call("marker", pid=pid, epoch=epoch, commit=commit, coordinator_epoch=coordinator_epoch).then(**want)


SCENARIOS: tuple[Scenario, ...] = (
    S(
        "testBasicIdMapping",
        prod(E, 0, error=NONE),
        prod(E, 1, error=NONE),
        prod(E, 5, error=OUT_OF_ORDER_SEQUENCE_NUMBER),
        prod(E + 1, 0, error=NONE),
        prod(E, 0, error=INVALID_PRODUCER_EPOCH),
        part="without the in-place duplicate",
        resolution="the test's third append (sequence 1 again) is OutOfOrderSequence at the ProducerStateManager "
        "level because Kafka checks duplicates earlier, in UnifiedLog; the model's produce is UnifiedLog's, "
        "so that append is a duplicate there (UnifiedLogTest.testDuplicateAppends ports it)",
    ),
    S(
        "testAppendTxnMarkerWithNoProducerState",
        pad(27),
        marker(2, True, error=NONE),
        check(producer_epochs={PID: 2}, last_seqs={PID: -1}),
        prod(0, 0, error=INVALID_PRODUCER_EPOCH),
        prod(2, 17, error=OUT_OF_ORDER_SEQUENCE_NUMBER),
        prod(2, 0, error=NONE),
        check(producer_epochs={PID: 2}, last_seqs={PID: 0}),
    ),
    S(
        "testProducerSequenceWrapAround",
        pad(735),
        prod(15, INT_MAX, error=NONE),
        prod(15, 0, error=NONE),
        check(producer_epochs={PID: 15}, last_seqs={PID: 0}),
        part="first batch from a client: an unknown producer's first sequence is not validated either",
    ),
    S(
        "testProducerSequenceInvalidWrapAround",
        pad(735),
        prod(15, INT_MAX, error=NONE),
        prod(15, 1, error=OUT_OF_ORDER_SEQUENCE_NUMBER),
        part="first batch from a client",
    ),
    S(
        "testControlRecordBumpsProducerEpoch",
        prod(E, 0, error=NONE),
        marker(1, False, error=NONE),
        check(producer_epochs={PID: 1}, ongoing={}, last_seqs={PID: -1}),
        prod(1, 0, error=NONE),
        check(last_seqs={PID: 0}),
    ),
    S(
        "testTxnFirstOffsetMetadataCached",
        pad(2342),
        prod(E, 0, txn=True, error=NONE),
        check(first_unstable=2342),
        part="offset less the segment base 990000",
        resolution="the test appends at 992342 in a segment based at 990000; the model's log starts at 0: 2342",
    ),
    S(
        "testOutOfSequenceAfterControlRecordEpochBump",
        prod(E, 0, txn=True, error=NONE),
        prod(E, 1, txn=True, error=NONE),
        marker(1, False, error=NONE),
        prod(1, 2, txn=True, error=OUT_OF_ORDER_SEQUENCE_NUMBER),
        prod(2, 2, txn=True, error=OUT_OF_ORDER_SEQUENCE_NUMBER),
        prod(1, 0, txn=True, error=NONE),
        check(producer_epochs={PID: 1}, last_seqs={PID: 0}),
    ),
    S(
        "testNonTransactionalAppendWithOngoingTransaction",
        prod(E, 0, txn=True, error=NONE),
        prod(E, 1, txn=False, error=INVALID_TXN_STATE),
    ),
    S(
        "testProducerStateAfterFencingAbortMarker",
        prod(E, 0, txn=True, error=NONE),
        marker(E + 1, False, error=NONE),
        check(ongoing={}),
        call("expire", pid=PID, now=0, expiration_ms=EXPIRY).then(expired=False),
    ),
    S(
        "testPidExpirationTimeout",
        pad(1),
        prod(5, 0, error=NONE),
        call("expire", pid=PID, now=EXPIRY + 1, expiration_ms=EXPIRY).then(expired=True),
        prod(5, 1, error=NONE, base_offset=2),
        check(last_seqs={PID: 1}, leo=3),
    ),
    S(
        "testFirstUnstableOffset",
        check(first_unstable=-1),
        pad(99),
        prod(5, 0, txn=True, error=NONE),
        check(first_unstable=99),
        pad(105),
        prod(5, 0, txn=True, pid=2, error=NONE),
        check(first_unstable=99),
        pad(109),
        marker(5, True, offset=109),
        check(first_unstable=99, ongoing={2: 105}),
        call("advance_hw", hw=100).then(first_unstable=99),
        call("advance_hw", hw=110).then(first_unstable=105),
        pad(112),
        marker(5, False, pid=2, offset=112),
        check(first_unstable=105, ongoing={}),
        call("advance_hw", hw=113).then(first_unstable=-1),
    ),
    S(
        "testProducersWithOngoingTransactionsDontExpire",
        pad(99),
        prod(5, 0, txn=True, error=NONE),
        call("expire", pid=PID, now=EXPIRY + 1, expiration_ms=EXPIRY).then(expired=False, ongoing={PID: 99}),
    ),
    S(
        "testOldEpochForControlRecord",
        pad(99),
        prod(5, 0, txn=True, error=NONE),
        marker(3, True, error=INVALID_PRODUCER_EPOCH),
    ),
    S(
        "testCoordinatorFencing",
        pad(99),
        prod(5, 0, txn=True, error=NONE),
        marker(5, True, coordinator_epoch=1, offset=100),
        check(coordinator_epochs={PID: 1}),
        marker(5, True, coordinator_epoch=1, error=NONE),
        marker(5, True, coordinator_epoch=2, error=NONE),
        marker(5, True, coordinator_epoch=1, error=TRANSACTION_COORDINATOR_FENCED),
    ),
    S(
        "testLastStableOffsetCompletedTxn",
        pad(2342),
        prod(E, 0, txn=True, pid=1),
        pad(2367),
        prod(E, 0, txn=True, pid=2),
        pad(2399),
        prod(E, 0, txn=True, pid=3),
        pad(2414),
        marker(E, True, pid=1, offset=2414),
        call("advance_hw", hw=2415).then(first_unstable=2367),
        pad(2434),
        marker(E, True, pid=3, offset=2434),
        call("advance_hw", hw=2435).then(first_unstable=2367),
        pad(2512),
        marker(E, True, pid=2, offset=2512),
        call("advance_hw", hw=2513).then(first_unstable=-1),
        part="offsets less the segment base 990000",
        resolution="the test's offsets start at 992342 in a segment based at 990000; the model's log starts at 0, so "
        "every offset is the test's minus 990000 (the lastStableOffset(completedTxn) values are the "
        "aborted index's, checked by UnifiedLogTest scenarios)",
    ),
    S(
        "testSkipEmptyTransactions",
        pad(16),
        prod(E, 0, txn=True, records=5),
        call("advance_hw", hw=21).then(first_unstable=16),
        marker(E, True, offset=21),
        marker(E, True, offset=22),
        marker(E, False, offset=23),
        prod(E, 5, txn=True, records=4, base_offset=24),
        marker(E, False, offset=28),
        marker(E, False, offset=29),
        prod(E, 9, txn=True, records=2, base_offset=30),
        call("advance_hw", hw=32).then(first_unstable=30, aborted_index=[(PID, 24, 28, 29)]),
    ),
    S(
        "testSequenceNotValidatedForGroupMetadataTopic",
        pad(99),
        call("txn_offset_commit", group="g", pid=PID, epoch=E, offsets={"t-0": 1}).then(error=NONE),
        call("txn_offset_commit", group="g", pid=PID, epoch=E, offsets={"t-0": 2}).then(error=NONE),
        part="coordinator-origin writes (TxnOffsetCommit)",
    ),
    OUT("testProducerSequenceWithWrapAroundBatchRecord", REPLICA),
    OUT("testNoValidationOnFirstEntryWhenLoadingLog", REPLICA),
    OUT("testAcceptAppendWithoutProducerStateOnReplica", REPLICA),
    OUT("testAcceptAppendWithSequenceGapsOnReplica", REPLICA),
    OUT("testHasLateTransaction", LATE),
    OUT("testHasLateTransactionInitializedAfterReload", LATE),
    OUT("testHasLateTransactionUpdatedAfterPartialTruncation", LATE),
    OUT("testHasLateTransactionUpdatedAfterFullTruncation", LATE),
    OUT(
        "testPrepareUpdateDoesNotMutate",
        "an implementation property of ProducerAppendInfo (the model is pure throughout)",
    ),
    OUT("testTruncateAndReloadRemovesOutOfRangeSnapshots", SNAPSHOT),
    OUT("testTakeSnapshot", SNAPSHOT),
    OUT("testFetchSnapshotEmptySnapShot", SNAPSHOT),
    OUT("testRecoverFromSnapshotUnfinishedTransaction", SNAPSHOT),
    OUT("testRecoverFromSnapshotFinishedTransaction", SNAPSHOT),
    OUT("testRecoverFromSnapshotEmptyTransaction", SNAPSHOT),
    OUT("testRemoveExpiredPidsOnReload", SNAPSHOT),
    OUT("testDeleteSnapshotsBefore", SNAPSHOT),
    OUT(
        "testTruncateFullyAndStartAt",
        "truncation of the exactly-once partition: its leader never loses an append (docs/transactions.md)",
    ),
    OUT("testReloadSnapshots", SNAPSHOT),
    OUT(
        "testFirstUnstableOffsetAfterTruncation",
        "truncation of the exactly-once partition: its leader never loses an append",
    ),
    OUT("testLoadFromSnapshotRetainsNonExpiredProducers", SNAPSHOT),
    OUT("testSkipSnapshotIfOffsetUnchanged", SNAPSHOT),
    OUT("testCoordinatorFencedAfterReload", SNAPSHOT),
    OUT("testLoadFromEmptySnapshotFile", SNAPSHOT),
    OUT("testLoadFromTruncatedSnapshotFile", SNAPSHOT),
    OUT("testLoadFromCorruptSnapshotFile", SNAPSHOT),
    OUT(
        "testAppendEmptyControlBatch", "an empty control batch (no records) is never written by the model's coordinator"
    ),
    OUT("testRemoveStraySnapshotsKeepCleanShutdownSnapshot", SNAPSHOT),
    OUT("testRemoveAllStraySnapshots", SNAPSHOT),
    OUT("testRemoveAndMarkSnapshotForDeletion", SNAPSHOT),
    OUT("testRemoveAndMarkSnapshotForDeletionAlreadyDeleted", SNAPSHOT),
    OUT("testEntryForVerification", VERIFY),
    OUT("testSequenceAndEpochInVerificationEntry", VERIFY),
    OUT("testThrowOutOfOrderSequenceWithVerificationSequenceCheck", VERIFY),
    OUT("testVerificationStateEntryExpiration", VERIFY),
    OUT("testReadWriteSnapshot", SNAPSHOT),
)
