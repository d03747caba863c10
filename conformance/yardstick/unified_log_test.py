"""UnifiedLogTest (core/src/test/scala/unit/kafka/log/), the HW / LSO / aborted-index / producer
parts, ported onto the exactly-once partition (a leader's log; appends without a ``seq`` continue
the producer's sequence as LogTestUtils.appendTransactionalAsLeader does)."""

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
