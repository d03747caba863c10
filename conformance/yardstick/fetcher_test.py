"""FetcherTest (clients/src/test/java/org/apache/kafka/clients/consumer/internals/, trunk 1eb7644): the
transactional reads, ported onto the exactly-once partition; every test method is a row.

Kafka's test writes a partition's batches (transactional records, commit and abort markers) into
a mocked Fetch response together with the aborted-transaction list the broker would send, and
checks what the consumer returns. Here the batches are appended to the model's partition as the
broker would append them (``produce`` with ``txn``, ``marker``), the HW is moved to the LEO (the
mocked HW is 100), and two things are compared: what the broker answers (``fetch``: the aborted
transactions (producer id, first offset) that the test wrote by hand) and what the consumer keeps
(``poll``: the consumed offsets and its next position). The other methods test the consumer
client's fetch machinery, each listed with its reason.
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import PARTITION, TRUNK, Scenario, Step, call
from kconform.model.errors import NONE

K = "FetcherTest"
CLIENT = (
    "the consumer client's fetch machinery (request building and buffering, assignment, pausing, seeking, "
    "positions after errors, record parsing and deserialization, leader changes in its metadata): the model's "
    "consumer is its read_committed filter (txn_partition.poll) over one partition's answer"
)
METRICS = "the consumer's fetch metrics (lag, lead, bytes, records, rates): not a Kafka semantic the model states"
TOPIC_IDS = "topic ids in Fetch requests (KIP-516, version 13+): the model names partitions, not topic ids"
KIP_392 = "preferred read replicas (KIP-392, a consumer fetching from a follower): not in the model (issue 14 §2)"
SESSIONS = "the consumer's fetch sessions: FetchSessionHandlerTest's rows (fetch_session_handler_test.py)"
CORRUPT = "corrupt or invalid record batches (CRC, malformed batch): the model's records are never damaged"


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, out_of_scope=why)


def S(method: str, *steps: Step, resolution: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, PARTITION, steps=steps, resolution=resolution)


def txn(pid: int, records: int, base: int) -> Step:
    """appendTransactionalRecords(buffer, pid, base, ...records): producer epoch 0."""
    return call("produce", pid=pid, epoch=0, txn=True, records=records).then(error=NONE, base_offset=base)


def end(pid: int, commit: bool, offset: int) -> Step:
    """commitTransaction / abortTransaction(buffer, pid, offset): a marker at coordinator epoch 0."""
    return call("marker", pid=pid, epoch=0, commit=commit).then(error=NONE, offset=offset)


HW = call("advance_hw").step()


def answered(aborted: tuple[tuple[int, int], ...]) -> Step:
    """The broker's read_committed answer from offset 0: the aborted transactions the test writes."""
    return call("fetch", offset=0, read_committed=True).then(error=NONE, aborted=aborted)


def consumed(offsets: tuple[int, ...], next_offset: int, read_committed: bool = True) -> Step:
    return call("poll", offset=0, read_committed=read_committed).then(consumed=offsets, next_offset=next_offset)


SCENARIOS: tuple[Scenario, ...] = (
    OUT("testFetchNormal", CLIENT),
    OUT("testInflightFetchOnPendingPartitions", CLIENT),
    OUT("testCloseShouldBeIdempotent", CLIENT),
    OUT("testFetcherCloseClosesFetchSessionsInBroker", SESSIONS),
    OUT("testFetchingPendingPartitions", CLIENT),
    OUT("testFetchWithNoTopicId", TOPIC_IDS),
    OUT("testFetchWithTopicId", TOPIC_IDS),
    OUT("testFetchForgetTopicIdWhenUnassigned", TOPIC_IDS),
    OUT("testFetchForgetTopicIdWhenReplaced", TOPIC_IDS),
    OUT("testFetchTopicIdUpgradeDowngrade", TOPIC_IDS),
    OUT("testMissingLeaderEpochInRecords", CLIENT),
    OUT("testLeaderEpochInConsumerRecord", CLIENT),
    OUT("testClearBufferedDataForTopicPartitions", CLIENT),
    OUT("testFetchSkipsBlackedOutNodes", CLIENT),
    S(
        "testFetcherIgnoresControlRecords",
        call("produce", pid=1, epoch=0).then(error=NONE, base_offset=0),
        end(1, False, 1),
        HW,
        consumed((0,), 2, read_committed=False),
        resolution="an idempotent record at 0 and an abort marker at 1, read uncommitted: the consumer returns "
        "the record and its position is 2 (the marker is skipped)",
    ),
    OUT("testFetchError", CLIENT),
    OUT("testFetchedRecordsRaisesOnSerializationErrors", CLIENT),
    OUT("testParseCorruptedRecord", CORRUPT),
    OUT("testInvalidDefaultRecordBatch", CORRUPT),
    OUT("testParseInvalidRecordBatch", CORRUPT),
    OUT("testHeaders", CLIENT),
    OUT("testFetchMaxPollRecords", CLIENT),
    OUT("testFetchMaxPollRecordsUnaligned", CLIENT),
    OUT("testFetchAfterPartitionWithFetchedRecordsIsUnassigned", CLIENT),
    OUT("testFetchNonContinuousRecords", CLIENT),
    OUT("testFetchRequestWhenRecordTooLarge", CLIENT),
    OUT("testFetchRequestInternalError", CLIENT),
    OUT("testUnauthorizedTopic", "authorization (TOPIC_AUTHORIZATION_FAILED): not in the model"),
    OUT("testFetchDuringEagerRebalance", CLIENT),
    OUT("testFetchDuringCooperativeRebalance", CLIENT),
    OUT("testInFlightFetchOnPausedPartition", CLIENT),
    OUT("testFetchOnPausedPartition", CLIENT),
    OUT("testFetchOnCompletedFetchesForPausedAndResumedPartitions", CLIENT),
    OUT("testFetchOnCompletedFetchesForSomePausedPartitions", CLIENT),
    OUT("testFetchOnCompletedFetchesForAllPausedPartitions", CLIENT),
    OUT("testPartialFetchWithPausedPartitions", CLIENT),
    OUT("testFetchDiscardedAfterPausedPartitionResumedAndSoughtToNewOffset", CLIENT),
    OUT("testHandleFetchResponseError", CLIENT),
    OUT("testEpochSetInFetchRequest", CLIENT),
    OUT("testFetchOffsetOutOfRange", CLIENT),
    OUT("testStaleOutOfRangeError", CLIENT),
    OUT("testFetchedRecordsAfterSeek", CLIENT),
    OUT("testFetchOffsetOutOfRangeException", CLIENT),
    OUT("testFetchPositionAfterException", CLIENT),
    OUT("testCompletedFetchRemoval", CLIENT),
    OUT("testSeekBeforeException", CLIENT),
    OUT("testFetchDisconnected", CLIENT),
    OUT("testQuotaMetrics", METRICS),
    OUT("testFetcherMetrics", METRICS),
    OUT("testFetcherLeadMetric", METRICS),
    OUT("testReadCommittedLagMetric", METRICS),
    OUT("testFetchResponseMetrics", METRICS),
    OUT("testFetchResponseMetricsWithSkippedOffset", METRICS),
    OUT("testFetchResponseMetricsWithOnePartitionError", METRICS),
    OUT("testFetchResponseMetricsWithOnePartitionAtTheWrongOffset", METRICS),
    OUT("testFetcherMetricsTemplates", METRICS),
    S("testSkippingAbortedTransactions", txn(1, 2, 0), end(1, False, 2), HW, answered(((1, 0),)), consumed((), 3)),
    S("testReturnCommittedTransactions", txn(1, 2, 0), end(1, True, 2), HW, answered(()), consumed((0, 1), 3)),
    S(
        "testReadCommittedWithCommittedAndAbortedTransactions",
        txn(1, 2, 0),
        txn(2, 1, 2),
        end(1, True, 3),
        txn(2, 1, 4),
        end(2, False, 5),
        txn(1, 1, 6),
        txn(2, 1, 7),
        txn(1, 1, 8),
        end(1, False, 9),
        end(2, True, 10),
        HW,
        answered(((1, 6), (2, 2))),
        consumed((0, 1, 7), 11),
        resolution="the test's keys commit1-1, commit1-2, commit2-1 are offsets 0, 1 and 7. The test lists the "
        "aborted transactions as the broker's transaction index holds them, by marker offset: (2, 2) then (1, 6); "
        "the model and the reference answer them sorted by producer id (disagreed on order at porting). The order "
        "carries no meaning (the consumer's CompletedFetch queues them by first offset; the lockstep judge "
        "compares them sorted), so the scenario states the set in the model's order",
    ),
    S(
        "testMultipleAbortMarkers",
        txn(1, 2, 0),
        end(1, False, 2),
        end(1, False, 3),
        txn(1, 2, 4),
        end(1, True, 6),
        HW,
        answered(((1, 0),)),
        consumed((4, 5), 7),
        resolution="the duplicate abort marker at 3 closes no transaction and is not indexed; the keys "
        "commit1-1, commit1-2 are offsets 4 and 5",
    ),
    OUT(
        "testReadCommittedAbortMarkerWithNoData",
        "the mocked answer lists an aborted transaction (producer, first offset 0) whose only batch is an abort "
        "marker at 5 with no data before it: a broker indexes an aborted transaction only when the producer "
        "wrote data in it, so no broker answers this; the model's partition cannot hold it",
    ),
    OUT(
        "testUpdatePositionWithLastRecordMissingFromBatch",
        "compaction (a batch's last record removed): not in the model",
    ),
    OUT("testUpdatePositionOnEmptyBatch", "an empty batch left by compaction: not in the model"),
    OUT("testReadCommittedWithCompactedTopic", "compaction (records of a transaction removed): not in the model"),
    S(
        "testReturnAbortedTransactionsInUncommittedMode",
        txn(1, 2, 0),
        end(1, False, 2),
        HW,
        consumed((0, 1), 3, read_committed=False),
    ),
    S(
        "testConsumerPositionUpdatedWhenSkippingAbortedTransactions",
        txn(1, 2, 0),
        end(1, False, 2),
        HW,
        answered(((1, 0),)),
        consumed((), 3),
    ),
    OUT("testConsumingViaIncrementalFetchRequests", SESSIONS),
    OUT("testFetcherConcurrency", CLIENT),
    OUT("testFetcherSessionEpochUpdate", SESSIONS),
    OUT(
        "testEmptyControlBatch",
        "an empty control batch (no records) between transactional batches: the model's coordinator never writes one",
    ),
    OUT("testSubscriptionPositionUpdatedWithEpoch", CLIENT),
    OUT(
        "testTruncationDetected",
        "the consumer's own truncation detection (KIP-320 OffsetsForLeaderEpoch from the consumer): the model's "
        "epoch queries are the followers'",
    ),
    OUT("testPreferredReadReplica", KIP_392),
    OUT("testFetchDisconnectedShouldClearPreferredReadReplica", KIP_392),
    OUT("testFetchDisconnectedShouldNotClearPreferredReadReplicaIfUnassigned", KIP_392),
    OUT("testFetchErrorShouldClearPreferredReadReplica", KIP_392),
    OUT("testPreferredReadReplicaOffsetError", KIP_392),
    OUT("testFetchCompletedBeforeHandlerAdded", CLIENT),
    OUT("testCorruptMessageError", CORRUPT),
    OUT("testWhenFetchResponseReturnsALeaderShipChangeErrorButNoNewLeaderInformation", CLIENT),
    OUT("testWhenFetchResponseReturnsALeaderShipChangeErrorAndNewLeaderInformation", CLIENT),
    OUT("testFetcherDontCacheAnyData", CLIENT),
)
