"""TransactionManagerTest (clients/src/test/java/org/apache/kafka/clients/producer/internals/, trunk
1eb7644), the parts that state what the producer does with a coordinator's answer.

Each test prepares a broker answer (the mocked InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
EndTxn, TxnOffsetCommit or FindCoordinator response with one error) and asserts the producer's
reaction: a fatal error (``assertFatalError``, the producer must be closed), an abortable one
(``assertAbortableError``), a coordinator lookup and a retry, and the exception the application
sees (INVALID_PRODUCER_EPOCH raised as PRODUCER_FENCED). The model's table is
``model.producer_errors.reaction``. Only these reaction tests are ported: the rest of the class
drives the producer's accumulator, sequence numbers and batches through a mocked network (the
produce path's UNKNOWN_PRODUCER_ID and epoch bumps included); they are not listed here.
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import PRODUCER, TRUNK, Scenario, call
from kconform.model import producer_errors as PE
from kconform.model.errors import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_NOT_AVAILABLE,
    INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE,
    NOT_COORDINATOR,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
)

K = "TransactionManagerTest"


def S(method: str, request: str, error: int, action: str, raised: int, resolution: str = "") -> Scenario:
    return Scenario(
        K,
        method,
        TRUNK,
        PRODUCER,
        steps=(call("answer", request=request, error=error).then(action=action, raised=raised),),
        resolution=resolution,
    )


def fenced(method: str, request: str, error: int) -> Scenario:
    """assertFatalError(ProducerFencedException.class): INVALID_PRODUCER_EPOCH is converted."""
    return S(method, request, error, PE.FATAL, PRODUCER_FENCED)


SCENARIOS: tuple[Scenario, ...] = (
    fenced("testProducerFencedExceptionInInitProducerId", PE.INIT_PRODUCER_ID, PRODUCER_FENCED),
    fenced(
        "testInvalidProducerEpochConvertToProducerFencedInInitProducerId", PE.INIT_PRODUCER_ID, INVALID_PRODUCER_EPOCH
    ),
    fenced("testProducerFencedInAddPartitionToTxn", PE.ADD_PARTITIONS, PRODUCER_FENCED),
    fenced(
        "testInvalidProducerEpochConvertToProducerFencedInAddPartitionToTxn", PE.ADD_PARTITIONS, INVALID_PRODUCER_EPOCH
    ),
    fenced("testProducerFencedInAddOffSetsToTxn", PE.ADD_OFFSETS, PRODUCER_FENCED),
    fenced("testInvalidProducerEpochConvertToProducerFencedInAddOffSetsToTxn", PE.ADD_OFFSETS, INVALID_PRODUCER_EPOCH),
    fenced("testInvalidProducerEpochConvertToProducerFencedInEndTxn", PE.END_TXN, INVALID_PRODUCER_EPOCH),
    fenced("testHandlingOfProducerFencedErrorOnTxnOffsetCommit", PE.TXN_OFFSET_COMMIT, PRODUCER_FENCED),
    fenced("testHandlingOfInvalidProducerEpochErrorOnTxnOffsetCommit", PE.TXN_OFFSET_COMMIT, INVALID_PRODUCER_EPOCH),
    S("testInvalidTxnStateFailureInAddOffsetsToTxn", PE.ADD_OFFSETS, INVALID_TXN_STATE, PE.FATAL, INVALID_TXN_STATE),
    S("testInvalidTxnStateInAddPartitions", PE.ADD_PARTITIONS, INVALID_TXN_STATE, PE.FATAL, INVALID_TXN_STATE),
    S(
        "testCoordinatorNotAvailable",
        PE.FIND_COORDINATOR_REQUEST,
        COORDINATOR_NOT_AVAILABLE,
        PE.RETRY,
        COORDINATOR_NOT_AVAILABLE,
        resolution="the FindCoordinator answer COORDINATOR_NOT_AVAILABLE is retried (the test's next answer "
        "finds the coordinator); the application sees no error",
    ),
    S(
        "testLookupCoordinatorOnNotCoordinatorError",
        PE.INIT_PRODUCER_ID,
        NOT_COORDINATOR,
        PE.FIND_COORDINATOR,
        NOT_COORDINATOR,
        resolution="InitProducerId answered NOT_COORDINATOR: the producer looks the coordinator up again and "
        "re-sends (initPidResult not completed); the application sees no error",
    ),
    S(
        "testAddPartitionToTransactionOverridesRetryBackoffForConcurrentTransactions",
        PE.ADD_PARTITIONS,
        CONCURRENT_TRANSACTIONS,
        PE.RETRY,
        CONCURRENT_TRANSACTIONS,
        resolution="retried with the shorter back-off (20 ms); the back-off itself is not modelled",
    ),
    S(
        "testAddPartitionToTransactionRetainsRetryBackoffForRegularRetriableError",
        PE.ADD_PARTITIONS,
        COORDINATOR_NOT_AVAILABLE,
        PE.FIND_COORDINATOR,
        COORDINATOR_NOT_AVAILABLE,
        resolution="looked up and retried with the default back-off; the back-off itself is not modelled",
    ),
    S(
        "testFencedInstanceIdInTxnOffsetCommitByGroupMetadata",
        PE.TXN_OFFSET_COMMIT,
        PE.FENCED_INSTANCE_ID,
        PE.ABORTABLE,
        PE.FENCED_INSTANCE_ID,
    ),
    *(
        S(
            f"testTransactionAbortableExceptionIn{name}",
            request,
            TRANSACTION_ABORTABLE,
            PE.ABORTABLE,
            TRANSACTION_ABORTABLE,
        )
        for name, request in (
            ("InitProducerId", PE.INIT_PRODUCER_ID),
            ("AddPartitions", PE.ADD_PARTITIONS),
            ("FindCoordinator", PE.FIND_COORDINATOR_REQUEST),
            ("EndTxn", PE.END_TXN),
            ("AddOffsetsToTxn", PE.ADD_OFFSETS),
            ("TxnOffsetCommit", PE.TXN_OFFSET_COMMIT),
        )
    ),
)
