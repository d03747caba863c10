"""TransactionManagerTest (clients/src/test/java/org/apache/kafka/clients/producer/internals/, trunk
1eb7644), the parts that state what the producer does with a coordinator's answer.

Each test prepares a broker answer (the mocked InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
EndTxn, TxnOffsetCommit or FindCoordinator response with one error) and asserts the producer's
reaction: a fatal error (``assertFatalError``, the producer must be closed), an abortable one
(``assertAbortableError``), a coordinator lookup and a retry, and the exception the application
sees (INVALID_PRODUCER_EPOCH raised as PRODUCER_FENCED). The model's table is
``model.producer_errors.reaction``. Every method of the class is a row: the rest drive the
producer's accumulator, sequence numbers and batches through a mocked network (the produce path's
UNKNOWN_PRODUCER_ID and epoch bumps included) and are out of scope with that reason.
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import PRODUCER, TRUNK, Scenario, call
from kconform.model import producer_errors as PE
from kconform.model.errors import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    INVALID_PRODUCER_EPOCH,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_TXN_STATE,
    NOT_COORDINATOR,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
    UNKNOWN_TOPIC_OR_PARTITION,
)

K = "TransactionManagerTest"
FC = PE.FIND_COORDINATOR_REQUEST
TOC = PE.TXN_OFFSET_COMMIT
TXN_AUTH = PE.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
CLIENT = (
    "the producer client's own machinery, driven through a mocked network: its accumulator and batches "
    "(expiry, drain, retries, in-flight requests), sequence numbers and their reset after a produce error, "
    "timeouts, what the API allows in each TransactionManager state, disconnects and unsupported versions. "
    "The model states the client only as its reaction to each coordinator answer (model.producer_errors)"
)

NOT_REACTIONS = (
    "resendFailedProduceRequestAfterAbortableError",
    "shouldFailAbortIfAddOffsetsFailsWithFatalError",
    "shouldNotAddPartitionsToTransactionWhenTopicAuthorizationFailed",
    "shouldNotSendAbortTxnRequestWhenOnlyAddOffsetsRequestFailed",
    "shouldNotSendAbortTxnRequestWhenOnlyAddPartitionsRequestFailed",
    "testAbortResendsAddPartitionErrorIfRetried",
    "testAbortResendsProduceRequestIfRetried",
    "testAbortTransactionAndResetSequenceNumberOnUnknownProducerId",
    "testAbortTransactionAndReuseSequenceNumberOnError",
    "testAbortableErrorWhileAbortInProgress",
    "testAddPartitionToTransactionRetainsRetryBackoffWhenPartitionsAlreadyAdded",
    "testAllowAbortOnProduceFailure",
    "testAllowDrainInAbortableErrorState",
    "testBackgroundInvalidStateTransitionIsFatal",
    "testBasicTransaction",
    "testBatchCompletedAfterProducerReset",
    "testBatchFailureAfterProducerReset",
    "testBumpEpochAfterTimeoutWithoutPendingInflightRequests",
    "testBumpEpochAndResetSequenceNumbersAfterUnknownProducerId",
    "testBumpTransactionalEpochOnAbortableError",
    "testBumpTransactionalEpochOnTimeout",
    "testBumpTransactionalEpochOnUnknownProducerIdError",
    "testCanBumpEpochDuringCoordinatorDisconnect",
    "testCancelUnsentAddPartitionsAndProduceOnAbort",
    "testCommitTransactionWithInFlightProduceRequest",
    "testCommitTransactionWithUnsentProduceRequest",
    "testCommitWithTopicAuthorizationFailureInAddPartitionsInFlight",
    "testDefaultSequenceNumber",
    "testDisallowCommitOnProduceFailure",
    "testDisconnectAndRetry",
    "testDropCommitOnBatchExpiry",
    "testDuplicateSequenceAfterProducerReset",
    "testEndTxnNotSentIfIncompleteBatches",
    "testEpochBumpAfterLastInflightBatchFails",
    "testFailIfNotReadyForSendAfterAbortableError",
    "testFailIfNotReadyForSendAfterFatalError",
    "testFailIfNotReadyForSendIdempotentProducer",
    "testFailIfNotReadyForSendIdempotentProducerFatalError",
    "testFailIfNotReadyForSendNoOngoingTransaction",
    "testFailIfNotReadyForSendNoProducerId",
    "testFailedInflightBatchAfterEpochBump",
    "testFindCoordinatorAllowedInAbortableErrorState",
    "testFlushPendingPartitionsOnCommit",
    "testForegroundInvalidStateTransitionIsRecoverable",
    "testHandlingOfNetworkExceptionOnTxnOffsetCommit",
    "testHasOngoingTransactionAbortableError",
    "testHasOngoingTransactionFatalError",
    "testHasOngoingTransactionSuccessfulAbort",
    "testHasOngoingTransactionSuccessfulCommit",
    "testHealthyPartitionRetriesDuringEpochBump",
    "testInitializeTransactionsTwiceRaisesError",
    "testInvalidProducerEpochFromProduce",
    "testIsSendToPartitionAllowedWithAddedPartitionAfterAbortableError",
    "testIsSendToPartitionAllowedWithAddedPartitionAfterFatalError",
    "testIsSendToPartitionAllowedWithInFlightPartitionAddAfterAbortableError",
    "testIsSendToPartitionAllowedWithInFlightPartitionAddAfterFatalError",
    "testIsSendToPartitionAllowedWithPartitionNotAdded",
    "testIsSendToPartitionAllowedWithPendingPartitionAfterAbortableError",
    "testIsSendToPartitionAllowedWithPendingPartitionAfterFatalError",
    "testLookupCoordinatorOnDisconnectAfterSend",
    "testLookupCoordinatorOnDisconnectBeforeSend",
    "testMaybeAddPartitionToTransaction",
    "testMultipleAddPartitionsPerForOneProduce",
    "testNoDrainWhenPartitionsPending",
    "testNoFailedBatchHandlingWhenTxnManagerIsInFatalError",
    "testNoProducerIdResetAfterLastInFlightBatchSucceeds",
    "testNotReadyForSendAfterAbortableError",
    "testNotReadyForSendAfterFatalError",
    "testNotReadyForSendBeforeBeginTransaction",
    "testNotReadyForSendBeforeInitTransactions",
    "testProducerIdReset",
    "testRaiseErrorWhenNoPartitionsPendingOnDrain",
    "testRecoveryFromAbortableErrorProduceRequestInRetry",
    "testRecoveryFromAbortableErrorTransactionNotStarted",
    "testRecoveryFromAbortableErrorTransactionStarted",
    "testRetryAbortTransaction",
    "testRetryAbortTransactionAfterCommitTimeout",
    "testRetryAbortTransactionAfterTimeout",
    "testRetryCommitTransaction",
    "testRetryCommitTransactionAfterAbortTimeout",
    "testRetryCommitTransactionAfterTimeout",
    "testRetryInitTransactionsAfterTimeout",
    "testSendOffsetWithGroupMetadataFailAsAutoDowngradeTxnCommitNotEnabled",
    "testSendOffsetsWithGroupMetadata",
    "testSenderShutdownWithPendingTransactions",
    "testSequenceNumberOverflow",
    "testTransactionManagerEnablesV2",
    "testTransitionToAbortableErrorOnBatchExpiry",
    "testTransitionToAbortableErrorOnMultipleBatchExpiry",
    "testTransitionToFatalErrorWhenRetriedBatchIsExpired",
    "testUnsupportedFindCoordinator",
    "testUnsupportedInitTransactions",
)
"""The methods of the class that are not reaction tests (out of scope: CLIENT)."""


def S(method: str, request: str, error: int, action: str, raised: int, resolution: str = "") -> Scenario:
    return Scenario(
        K,
        method,
        TRUNK,
        PRODUCER,
        steps=(call("answer", request=request, error=error).then(action=action, raised=raised),),
        resolution=resolution,
    )


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, PRODUCER, out_of_scope=why)


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
    *(
        S(method, request, error, action, error)
        for method, request, error, action in (
            ("testGroupAuthorizationFailureInFindCoordinator", FC, PE.GROUP_AUTHORIZATION_FAILED, PE.ABORTABLE),
            ("testGroupAuthorizationFailureInTxnOffsetCommit", TOC, PE.GROUP_AUTHORIZATION_FAILED, PE.ABORTABLE),
            ("testHandlingOfCoordinatorLoadingErrorOnTxnOffsetCommit", TOC, COORDINATOR_LOAD_IN_PROGRESS, PE.RETRY),
            (
                "testHandlingOfTransactionalIdAuthorizationFailedErrorOnTxnOffsetCommit",
                TOC,
                PE.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                PE.FATAL,
            ),
            (
                "testHandlingOfUnknownTopicPartitionErrorOnAddPartitions",
                PE.ADD_PARTITIONS,
                UNKNOWN_TOPIC_OR_PARTITION,
                PE.RETRY,
            ),
            ("testHandlingOfUnknownTopicPartitionErrorOnTxnOffsetCommit", TOC, UNKNOWN_TOPIC_OR_PARTITION, PE.RETRY),
            (
                "testHandlingOfUnsupportedForMessageFormatErrorOnTxnOffsetCommit",
                TOC,
                PE.UNSUPPORTED_FOR_MESSAGE_FORMAT,
                PE.FATAL,
            ),
            ("testUnsupportedForMessageFormatInTxnOffsetCommit", TOC, PE.UNSUPPORTED_FOR_MESSAGE_FORMAT, PE.FATAL),
            ("testIllegalGenerationInTxnOffsetCommitByGroupMetadata", TOC, PE.ILLEGAL_GENERATION, PE.ABORTABLE),
            ("testUnknownMemberIdInTxnOffsetCommitByGroupMetadata", TOC, PE.UNKNOWN_MEMBER_ID, PE.ABORTABLE),
            (
                "testTopicAuthorizationFailureInAddPartitions",
                PE.ADD_PARTITIONS,
                PE.TOPIC_AUTHORIZATION_FAILED,
                PE.ABORTABLE,
            ),
            ("testTransactionalIdAuthorizationFailureInAddOffsetsToTxn", PE.ADD_OFFSETS, TXN_AUTH, PE.FATAL),
            ("testTransactionalIdAuthorizationFailureInAddPartitions", PE.ADD_PARTITIONS, TXN_AUTH, PE.FATAL),
            ("testTransactionalIdAuthorizationFailureInFindCoordinator", FC, TXN_AUTH, PE.FATAL),
            ("testTransactionalIdAuthorizationFailureInInitProducerId", PE.INIT_PRODUCER_ID, TXN_AUTH, PE.ABORTABLE),
            ("testTransactionalIdAuthorizationFailureInTxnOffsetCommit", TOC, TXN_AUTH, PE.FATAL),
            (
                "testBumpTransactionalEpochOnRecoverableAddPartitionRequestError",
                PE.ADD_PARTITIONS,
                INVALID_PRODUCER_ID_MAPPING,
                PE.ABORTABLE_BUMP,
            ),
            (
                "testBumpTransactionalEpochOnRecoverableAddOffsetsRequestError",
                PE.ADD_OFFSETS,
                INVALID_PRODUCER_ID_MAPPING,
                PE.ABORTABLE_BUMP,
            ),
        )
    ),
    *(OUT(method, CLIENT) for method in NOT_REACTIONS),
)
