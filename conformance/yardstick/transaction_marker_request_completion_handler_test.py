"""TransactionMarkerRequestCompletionHandlerTest (core/src/test/scala/unit/kafka/coordinator/transaction/,
trunk 1eb7644), ported onto one transactional id's metadata.

The test's fixture: transactional id ``txnId1``, producer id 0, epoch 0, ``PrepareCommit`` with one
partition ``topic1-0``, coordinator epoch 0, transaction version 2. Each test answers the
WriteTxnMarkers request for that partition with one error and checks what the coordinator's
handler did: NONE removes the partition and writes the completion (``CompleteCommit``); the
retriable errors re-enqueue the marker (the partition stays pending); INVALID_PRODUCER_EPOCH and
TRANSACTION_COORDINATOR_FENCED drop the transaction's markers (``removeMarkersForTxn``:
``markers_abandoned`` in the model); any other error throws IllegalStateException (``refused``).
The model's handler is ``model.coordinator.marker_answered``; the reference answers markers only
inside its simulated cluster (``n/a``, the gate checks it in lockstep).
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import COORDINATOR, TRUNK, Scenario, Step, call
from kconform.model.errors import (
    INVALID_PRODUCER_EPOCH,
    INVALID_REQUIRED_ACKS,
    KAFKA_STORAGE_ERROR,
    NONE,
    NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    NOT_LEADER_OR_FOLLOWER,
    TRANSACTION_COORDINATOR_FENCED,
    UNKNOWN_TOPIC_OR_PARTITION,
)

K = "TransactionMarkerRequestCompletionHandlerTest"
P = "topic1-0"
GIVEN = {"pid": 0, "epoch": 0, "state": "PrepareCommit", "partitions": frozenset({P}), "timeout_ms": 0}
TV2 = {"transaction_version": 2}
UNKNOWN_SERVER_ERROR = -1
CORRUPT_MESSAGE = 2
MESSAGE_TOO_LARGE = 10
RECORD_LIST_TOO_LARGE = 18
"""Kafka's Errors.java codes the model never answers with (so not in model.errors)."""
MOVED = (
    "the coordinator lost or reloaded the transaction's state partition before the answer arrived "
    "(getTransactionState answers {}): the handler drops the markers without touching the metadata. The model's "
    "coordinator of one transactional id has no coordinator epoch per in-flight request; its cluster state "
    "(model.txn_state) discards a stale coordinator's work at unload"
)


def S(method: str, *steps: Step, resolution: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, COORDINATOR, given=GIVEN, steps=steps, config=TV2, resolution=resolution)


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, COORDINATOR, out_of_scope=why)


def retried(method: str, error: int) -> Scenario:
    """verifyRetriesPartitionOnError: topicPartitions still {topic1-0}, the marker re-enqueued."""
    return S(
        method,
        call("marker_answered", partition=P, error=error).then(
            state="PrepareCommit", partitions={P}, pending={P}, markers_abandoned=False
        ),
    )


def illegal(method: str, error: int) -> Scenario:
    """verifyThrowIllegalStateExceptionOnError."""
    return S(method, call("marker_answered", partition=P, error=error).refused())


def removed(method: str, error: int) -> Scenario:
    """verifyRemoveDelayedOperationOnError: removeMarkersForTxn, the metadata left as it was."""
    return S(
        method,
        call("marker_answered", partition=P, error=error).then(
            state="PrepareCommit", partitions={P}, markers_abandoned=True
        ),
    )


SCENARIOS: tuple[Scenario, ...] = (
    OUT(
        "shouldReEnqueuePartitionsWhenBrokerDisconnected",
        "a disconnect is no answer: the model's marker stays pending (re-sent) until a WriteTxnMarkers answer "
        "arrives, so there is no handler call to port",
    ),
    OUT(
        "shouldThrowIllegalStateExceptionIfErrorCodeNotAvailableForPid",
        "a malformed WriteTxnMarkers response (no entry for the producer id): the model's answers are well formed",
    ),
    S(
        "shouldCompleteDelayedOperationWhenNoErrors",
        call("marker_answered", partition=P, error=NONE).then(state="CompleteCommit", pending=frozenset()),
    ),
    OUT("shouldCompleteDelayedOperationWhenNotCoordinator", MOVED.format("NOT_COORDINATOR")),
    OUT("shouldCompleteDelayedOperationWhenCoordinatorLoading", MOVED.format("COORDINATOR_LOAD_IN_PROGRESS")),
    OUT("shouldCompleteDelayedOperationWhenCoordinatorEpochChanged", MOVED.format("coordinator epoch 1, not 0")),
    removed("shouldCompleteDelayedOperationWhenInvalidProducerEpoch", INVALID_PRODUCER_EPOCH),
    removed("shouldCompleteDelayedOperationWhenCoordinatorEpochFenced", TRANSACTION_COORDINATOR_FENCED),
    illegal("shouldThrowIllegalStateExceptionWhenUnknownError", UNKNOWN_SERVER_ERROR),
    illegal("shouldThrowIllegalStateExceptionWhenCorruptMessageError", CORRUPT_MESSAGE),
    illegal("shouldThrowIllegalStateExceptionWhenMessageTooLargeError", MESSAGE_TOO_LARGE),
    illegal("shouldThrowIllegalStateExceptionWhenRecordListTooLargeError", RECORD_LIST_TOO_LARGE),
    illegal("shouldThrowIllegalStateExceptionWhenInvalidRequiredAcksError", INVALID_REQUIRED_ACKS),
    retried("shouldRetryPartitionWhenUnknownTopicOrPartitionError", UNKNOWN_TOPIC_OR_PARTITION),
    retried("shouldRetryPartitionWhenNotLeaderOrFollowerError", NOT_LEADER_OR_FOLLOWER),
    retried("shouldRetryPartitionWhenNotEnoughReplicasError", NOT_ENOUGH_REPLICAS),
    retried("shouldRetryPartitionWhenNotEnoughReplicasAfterAppendError", NOT_ENOUGH_REPLICAS_AFTER_APPEND),
    retried("shouldRetryPartitionWhenKafkaStorageError", KAFKA_STORAGE_ERROR),
    OUT(
        "shouldRemoveTopicPartitionFromWaitingSetOnUnsupportedForMessageFormat",
        "UNSUPPORTED_FOR_MESSAGE_FORMAT comes from a partition on a message format before v2: the model's "
        "partitions are all v2 (Kafka 4.0 removed the older formats, KIP-724), so no broker answers it",
    ),
)
