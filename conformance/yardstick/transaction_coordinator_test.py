"""TransactionCoordinatorTest (core/src/test/scala/unit/kafka/coordinator/transaction/), ported.

Read from a later trunk (4.2.0-SNAPSHOT) whose TV2 EndTxn table the model follows (kafka-facts
§1.5 "[later trunk]"). The test's constants: transactional id "known", producerId 10,
producerEpoch 1, producerId2 11, txnTimeoutMs 1, partitions {topic1-0}. TV1/TV0 tests run with
``transaction_version`` 0, TV2 ones with 2; parameterised tests give one scenario per parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import COORDINATOR, TRUNK_42, Scenario, Step, call
from kconform.traces.events import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_TXN_STATE,
    NONE,
    NOT_COORDINATOR,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
)

K = "TransactionCoordinatorTest"
PID, E, PID2 = 10, 1, 11
T1 = frozenset({"topic1-0"})
APPEND_FAILS = (
    "a failed __transaction_state append (hasFailedEpochFence): the model's log never "
    "fails an append (docs/transactions.md)"
)
NO_ID = "a null or empty transactional id: the model's ids come from the configuration and are never empty (TxnConfig)"
NOT_TXN = "DescribeTransactions / partition emigration: coordinator bookkeeping the model does not state"


def S(
    method: str, given: Mapping[str, Any], *steps: Step, tv: int = 0, part: str = "", resolution: str = ""
) -> Scenario:
    return Scenario(
        K,
        method,
        TRUNK_42,
        COORDINATOR,
        given=given,
        steps=steps,
        config={"transaction_version": tv},
        part=part,
        resolution=resolution,
    )


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK_42, COORDINATOR, out_of_scope=why)


def meta(state: str, epoch: int = E, last: int = E - 1, pid: int = PID, **kw: object) -> dict[str, object]:
    parts = T1 if state in ("Ongoing", "PrepareCommit", "PrepareAbort") else frozenset()
    return {
        "pid": pid,
        "epoch": epoch,
        "last_epoch": last,
        "state": state,
        "timeout_ms": 1,
        "partitions": parts,
        "previous_pid": PID,
        **kw,
    }


def end(epoch: int, commit: bool, /, **want: object) -> Step:
    return call("end_txn", pid=PID, epoch=epoch, commit=commit).then(**want)


def req_epoch(tv: int) -> int:
    """requestEpoch: TV2 clients send the epoch before the bump (producerEpoch - 1)."""
    return E - 1 if tv == 2 else E


SCENARIOS: tuple[Scenario, ...] = (
    S(
        "shouldInitPidWithEpochZeroForNewTransactionalId",
        {},
        call("init_producer_id", timeout_ms=1, fresh_pid=PID).then(error=NONE, result_pid=PID, result_epoch=0),
    ),
    S(
        "shouldGenerateNewProducerIdIfNoStateAndProducerIdAndEpochProvided",
        {},
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=E, fresh_pid=PID2).then(
            error=NONE, result_pid=PID2, result_epoch=0
        ),
    ),
    S(
        "shouldGenerateNewProducerIdIfEpochsExhausted",
        meta("Empty", 32766, 32765),
        call("init_producer_id", timeout_ms=1, fresh_pid=PID2).then(error=NONE, result_pid=PID2, result_epoch=0),
    ),
    S(
        "shouldGenerateNewProducerIdIfEpochsExhaustedV2",
        meta("Ongoing", 32766, 32765),
        call("end_txn", pid=PID, epoch=32766, commit=True, fresh_pid=PID2).then(
            error=NONE, result_pid=PID2, result_epoch=0
        ),
        tv=2,
    ),
    S(
        "shouldRespondWithInvalidPidMappingOnAddPartitionsToTransactionWhenTransactionalIdNotPresent",
        {},
        call("add_partitions", pid=0, epoch=1, partitions=T1).then(error=INVALID_PRODUCER_ID_MAPPING),
    ),
    S(
        "testVerifyPartitionHandling",
        meta("PrepareCommit", 0, -1, pid=1),
        call("verify", pid=0, epoch=0, partition="topic1-0").then(error=INVALID_PRODUCER_ID_MAPPING),
        part="wrong pid",
    ),
    S(
        "testVerifyPartitionHandling",
        meta("PrepareCommit", 0, -1, pid=0),
        call("verify", pid=0, epoch=1, partition="topic1-0").then(error=PRODUCER_FENCED),
        part="old epoch",
    ),
    S(
        "testVerifyPartitionHandling",
        meta("PrepareCommit", 0, -1, pid=0),
        call("verify", pid=0, epoch=0, partition="topic1-0").then(error=CONCURRENT_TRANSACTIONS),
        part="prepare",
    ),
    S(
        "testVerifyPartitionHandling",
        meta("Ongoing", 0, -1, pid=0, partitions=frozenset()),
        call("verify", pid=0, epoch=0, partition="topic1-0").then(error=TRANSACTION_ABORTABLE),
        part="not added",
    ),
    *(
        S(
            f"shouldRespondWith{name}On{req}When{cond}",
            meta("Ongoing"),
            call("lookup", leader=leader, node=0, loaded=loaded).then(error=error),
            part="lookup",
        )
        for req in ("InitPid", "AddPartitions", "EndTxn")
        for name, cond, leader, loaded, error in (
            ("NotCoordinator", "NotCoordinator", 1, True, NOT_COORDINATOR),
            ("CoordinatorLoadInProgress", "CoordinatorLoading", 0, False, COORDINATOR_LOAD_IN_PROGRESS),
        )
    ),
    *(
        S(
            f"shouldRespondWithConcurrentTransaction{s}OnAddPartitionsWhenStateIs{st}",
            meta(st, epoch=0, last=-1, pid=0),
            call("add_partitions", pid=0, epoch=0, partitions=T1).then(error=CONCURRENT_TRANSACTIONS),
            tv=2,
        )
        for s, st in (("s", "PrepareCommit"), ("", "PrepareAbort"))
    ),
    S(
        "shouldRespondWithProducerFencedOnAddPartitionsWhenEpochsAreDifferent",
        meta("PrepareCommit", 10, 9, pid=0),
        call("add_partitions", pid=0, epoch=0, partitions=T1).then(error=PRODUCER_FENCED),
        tv=2,
    ),
    S(
        "shouldAppendNewMetadataToLogOnAddPartitionsWhenPartitionsAdded",
        meta("Empty"),
        call("add_partitions", pid=PID, epoch=E, partitions=T1).then(error=NONE, state="Ongoing", partitions=T1),
    ),
    S(
        "shouldRespondWithSuccessOnAddPartitionsWhenStateIsOngoing",
        meta("Ongoing", partitions=frozenset()),
        call("add_partitions", pid=PID, epoch=E, partitions=T1).then(error=NONE, state="Ongoing", partitions=T1),
    ),
    *(
        S(
            f"shouldRespondWithSuccessOnAddPartitionsWhenStateIs{st}",
            meta(st),
            call("add_partitions", pid=PID, epoch=E, partitions=T1).then(error=NONE, state="Ongoing"),
            tv=tv,
            part=f"TV{tv}",
        )
        for st in ("CompleteCommit", "CompleteAbort")
        for tv in (0, 2)
    ),
    S(
        "shouldRespondWithErrorsNoneOnAddPartitionWhenNoErrorsAndPartitionsTheSame",
        meta("Empty", 0, -1, pid=0, partitions=T1),
        call("add_partitions", pid=0, epoch=0, partitions=T1).then(error=NONE),
    ),
    S(
        "shouldRespondWithErrorsNoneOnAddPartitionWhenOngoingVerifyOnlyAndPartitionsTheSame",
        meta("Ongoing", 0, -1, pid=0),
        call("verify", pid=0, epoch=0, partition="topic1-0").then(error=NONE),
    ),
    S(
        "shouldRespondWithInvalidTxnStateWhenVerifyOnlyAndPartitionNotPresent",
        meta("Empty", 0, -1, pid=0, partitions=T1),
        call("verify", pid=0, epoch=0, partition="topic2-0").then(error=TRANSACTION_ABORTABLE),
        part="topic2-0",
    ),
    *(
        S(
            "shouldReplyWithInvalidPidMappingOnEndTxnWhenTxnIdDoesntExist",
            {},
            call("end_txn", pid=0, epoch=0, commit=True).then(error=INVALID_PRODUCER_ID_MAPPING),
            tv=tv,
            part=f"TV{tv}",
        )
        for tv in (0, 2)
    ),
    *(
        S(
            "shouldReplyWithInvalidPidMappingOnEndTxnWhenPidDoesntMatchMapped",
            meta("Ongoing", 0, -1),
            call("end_txn", pid=0, epoch=0, commit=True).then(error=INVALID_PRODUCER_ID_MAPPING),
            tv=tv,
            part=f"TV{tv}",
        )
        for tv in (0, 2)
    ),
    *(
        S(
            "shouldReplyWithProducerFencedOnEndTxnWhenEpochIsNotSameAsTransaction",
            meta("Ongoing"),
            end(0, True, error=PRODUCER_FENCED),
            tv=tv,
            part=f"TV{tv}",
        )
        for tv in (0, 2)
    ),
    S(
        "testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV1",
        meta("CompleteCommit"),
        end(E - 1, True, error=PRODUCER_FENCED),
        part="retry",
    ),
    S(
        "testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV1",
        meta("CompleteCommit"),
        end(E, True, error=NONE),
        part="not retry",
    ),
    S(
        "testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV2",
        meta("CompleteCommit"),
        end(E - 1, True, error=NONE),
        tv=2,
        part="retry",
    ),
    S(
        "testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV2",
        meta("CompleteCommit"),
        end(E, True, error=INVALID_TXN_STATE),
        tv=2,
        part="not retry",
    ),
    S(
        "testEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV1",
        meta("CompleteAbort"),
        end(E - 1, False, error=PRODUCER_FENCED),
        part="retry",
    ),
    S(
        "testEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV1",
        meta("CompleteAbort"),
        end(E, False, error=NONE),
        part="not retry",
    ),
    S(
        "shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV2",
        meta("CompleteAbort"),
        end(E - 1, False, error=NONE, epoch=E),
        tv=2,
        part="retry",
    ),
    S(
        "shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV2",
        meta("CompleteAbort"),
        end(E, False, error=NONE, epoch=E + 1),
        tv=2,
        part="not retry: an empty abort bumps the epoch",
    ),
    *(
        S(
            "shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteAbortAndResultIsNotAbort",
            meta("CompleteAbort"),
            end(req_epoch(tv), True, error=INVALID_TXN_STATE),
            tv=tv,
            part=f"TV{tv}",
        )
        for tv in (0, 2)
    ),
    S(
        "shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteCommitAndResultIsNotCommit",
        meta("CompleteCommit"),
        end(E, False, error=INVALID_TXN_STATE),
    ),
    S(
        "testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV1",
        meta("CompleteCommit"),
        end(E - 1, False, error=PRODUCER_FENCED),
        part="retry",
    ),
    S(
        "testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV1",
        meta("CompleteCommit"),
        end(E, False, error=INVALID_TXN_STATE),
        part="not retry",
    ),
    S(
        "testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV2",
        meta("CompleteCommit"),
        end(E - 1, False, error=INVALID_TXN_STATE),
        tv=2,
        part="retry",
    ),
    S(
        "testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV2",
        meta("CompleteCommit"),
        end(E, False, error=NONE, epoch=E + 1),
        tv=2,
        part="not retry",
    ),
    *(
        S(
            "shouldReturnConcurrentTransactionsOnEndTxnRequestWhenStatusIsPrepareCommit",
            meta("PrepareCommit"),
            end(req_epoch(tv), True, error=CONCURRENT_TRANSACTIONS),
            tv=tv,
            part=f"TV{tv}",
        )
        for tv in (0, 2)
    ),
    *(
        S(
            "shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsPrepareAbort",
            meta("PrepareAbort", last=-1),
            end(req_epoch(tv), True, error=INVALID_TXN_STATE),
            tv=tv,
            part=f"TV{tv}",
        )
        for tv in (0, 2)
    ),
    S(
        "TestEndTxnRequestWhenEmptyTransactionStateForAbortInV1",
        meta("Empty", last=-1),
        end(E, False, error=INVALID_TXN_STATE),
    ),
    S(
        "TestEndTxnRequestWhenEmptyTransactionStateForAbortInV2",
        meta("Empty", last=-1),
        end(E - 1, False, error=PRODUCER_FENCED),
        tv=2,
        part="retry",
    ),
    S(
        "TestEndTxnRequestWhenEmptyTransactionStateForAbortInV2",
        meta("Empty", last=-1),
        end(E, False, error=NONE, epoch=E + 1),
        tv=2,
        part="not retry",
    ),
    S(
        "TestEndTxnRequestWhenEmptyTransactionStateForCommitInV2",
        meta("Empty", last=-1),
        end(E - 1, True, error=PRODUCER_FENCED),
        tv=2,
        part="retry",
    ),
    S(
        "TestEndTxnRequestWhenEmptyTransactionStateForCommitInV2",
        meta("Empty", last=-1),
        end(E, True, error=INVALID_TXN_STATE),
        tv=2,
        part="not retry",
    ),
    S(
        "shouldReturnInvalidTxnRequestOnEndTxnV2IfNotEndTxnV2Retry",
        meta("PrepareCommit", last=-1),
        end(E, True, error=PRODUCER_FENCED),
        tv=2,
        part="PrepareCommit",
    ),
    S(
        "shouldReturnInvalidTxnRequestOnEndTxnV2IfNotEndTxnV2Retry",
        meta("CompleteCommit", last=-1),
        end(E, True, error=INVALID_TXN_STATE),
        tv=2,
        part="CompleteCommit",
    ),
    S(
        "shouldReturnOkOnEndTxnV2IfEndTxnV2RetryEpochOverflow",
        meta("PrepareCommit", 32767, 32766, next_pid=PID2, previous_pid=-1),
        end(32766, True, error=CONCURRENT_TRANSACTIONS),
        tv=2,
        part="still completing",
    ),
    S(
        "shouldReturnOkOnEndTxnV2IfEndTxnV2RetryEpochOverflow",
        meta("CompleteCommit", 0, -1, pid=PID2, previous_pid=PID),
        end(32766, True, error=NONE, result_pid=PID2, result_epoch=0),
        tv=2,
        part="completed",
    ),
    Scenario(
        K,
        "shouldReturnConcurrentTxnOnAddPartitionsIfEndTxnV2EpochOverflowAndNotComplete",
        TRUNK_42,
        COORDINATOR,
        part="before Complete",
        out_of_scope="CONCURRENT_TRANSACTIONS comes from the pendingState of the Complete write in flight; the "
        "model writes atomically, so no request sees it (docs/transactions.md)",
    ),
    S(
        "shouldReturnConcurrentTxnOnAddPartitionsIfEndTxnV2EpochOverflowAndNotComplete",
        meta("PrepareCommit", 32767, 32766, next_pid=PID2, previous_pid=-1),
        call("complete").then(state="CompleteCommit", pid=PID2, epoch=0),
        call("add_partitions", pid=PID2, epoch=0, partitions=T1).then(error=NONE, state="Ongoing"),
        tv=2,
        part="after Complete",
    ),
    *(
        S(
            f"shouldAppendPrepare{w}ToLogOnEndTxnWhenStatusIsOngoingAndResultIs{w}",
            meta("Ongoing"),
            end(E, w == "Commit", error=NONE, state=f"Prepare{w}", epoch=E + (1 if tv == 2 else 0)),
            tv=tv,
            part=f"TV{tv}",
        )
        for w in ("Commit", "Abort")
        for tv in (0, 2)
    ),
    *(
        S(
            "shouldReturnInvalidEpochOnEndTxnWhenEpochIsLarger",
            meta("CompleteCommit", 1, 1),
            end(2, True, error=PRODUCER_FENCED),
            tv=tv,
            part=f"TV{tv}",
        )
        for tv in (0, 2)
    ),
    *(
        S(
            "shouldReturnInvalidEpochOnEndTxnWhenEpochIsSmaller",
            meta("CompleteCommit", 2, 1),
            end(req_epoch(tv), True, error=PRODUCER_FENCED),
            tv=tv,
            part=f"TV{tv}",
        )
        for tv in (0, 2)
    ),
    S(
        "shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExistingEmptyTransaction",
        meta("Empty"),
        call("init_producer_id", timeout_ms=1, fresh_pid=PID2).then(error=NONE, result_pid=PID, result_epoch=E + 1),
    ),
    *(
        S(
            f"shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExisting{n}Transaction",
            meta(st),
            call("init_producer_id", timeout_ms=1, fresh_pid=PID2).then(error=NONE, result_pid=PID, result_epoch=E + 1),
            tv=tv,
            part=f"TV{tv}",
        )
        for n, st in (("Complete", "CompleteAbort"), ("CompleteCommit", "CompleteCommit"))
        for tv in (0, 2)
    ),
    *(
        S(
            f"shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionIn{st}State",
            meta(st),
            call("init_producer_id", timeout_ms=1, fresh_pid=PID2).then(error=CONCURRENT_TRANSACTIONS),
        )
        for st in ("PrepareCommit", "PrepareAbort")
    ),
    S(
        "shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState",
        meta("Ongoing"),
        call("init_producer_id", timeout_ms=1, fresh_pid=PID2).then(
            error=CONCURRENT_TRANSACTIONS,
            result_pid=-1,
            result_epoch=-1,
            state="PrepareAbort",
            epoch=E + 1,
            last_epoch=-1,
        ),
    ),
    S(
        "shouldUseLastEpochToFenceWhenEpochsAreExhausted",
        meta("Ongoing", 32766, 32765),
        call("init_producer_id", timeout_ms=1, fresh_pid=PID2).then(
            error=CONCURRENT_TRANSACTIONS, epoch=32767, state="PrepareAbort", last_epoch=-1
        ),
    ),
    S(
        "shouldNotCauseEpochOverflowWhenInitPidDuringOngoingTxnV2",
        meta("Ongoing", 32766, 32765),
        call("init_producer_id", timeout_ms=1, fresh_pid=PID2).then(
            error=CONCURRENT_TRANSACTIONS, epoch=32767, state="PrepareAbort"
        ),
        tv=2,
    ),
    S(
        "shouldHandleTimeoutAtEpochOverflowBoundaryCorrectlyTV2",
        meta("Ongoing", 32766, 32765, start_ms=0),
        call("abort_timed_out", now=2).then(epoch=32767, pid=PID, state="PrepareAbort"),
        tv=2,
    ),
    S(
        "testInitProducerIdWithNoLastProducerData",
        meta("Empty", E + 1, -1, previous_pid=-1),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=E, fresh_pid=PID2).then(
            error=PRODUCER_FENCED
        ),
    ),
    S(
        "testFenceProducerWhenMappingExistsWithDifferentProducerId",
        meta("Empty", E, E - 1, pid=PID + 1, previous_pid=PID),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=E, fresh_pid=PID2).then(
            error=PRODUCER_FENCED
        ),
    ),
    S(
        "testInitProducerIdWithCurrentEpochProvided",
        meta("Empty", 10, 9),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=10, fresh_pid=PID2).then(
            error=NONE, result_pid=PID, result_epoch=11
        ),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=10, fresh_pid=PID2).then(
            error=NONE, result_pid=PID, result_epoch=11
        ),
    ),
    S(
        "testInitProducerIdStaleCurrentEpochProvided",
        meta("Empty", 10, 9),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=10, fresh_pid=PID2).then(
            error=NONE, result_pid=PID, result_epoch=11
        ),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=9, fresh_pid=PID2).then(
            error=PRODUCER_FENCED, result_pid=-1, result_epoch=-1
        ),
    ),
    S(
        "testRetryInitProducerIdAfterProducerIdRotation",
        meta("Empty", 32766, 32765),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=32766, fresh_pid=PID + 1).then(
            error=NONE, result_pid=PID + 1, result_epoch=0
        ),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=32766, fresh_pid=PID + 2).then(
            error=NONE, result_pid=PID + 1, result_epoch=0
        ),
    ),
    S(
        "testInitProducerIdWithInvalidEpochAfterProducerIdRotation",
        meta("Empty", 32766, 32765),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=32766, fresh_pid=PID + 1).then(
            error=NONE, result_pid=PID + 1, result_epoch=0
        ),
        call("init_producer_id", timeout_ms=1, expected_pid=PID, expected_epoch=32765, fresh_pid=PID + 2).then(
            error=PRODUCER_FENCED
        ),
    ),
    S(
        "shouldAbortExpiredTransactionsInOngoingStateAndBumpEpoch",
        meta("Ongoing", last=-1, start_ms=0),
        call("abort_timed_out", now=10_000).then(state="PrepareAbort", epoch=E + 1, last_epoch=-1, pid=PID),
    ),
    S(
        "shouldNotAbortExpiredTransactionsThatHaveAPendingStateTransition",
        meta("PrepareCommit", last=-1, start_ms=0),
        call("timed_out", now=10_000).then(timed_out=False),
    ),
    OUT("shouldReturnInvalidRequestWhenTransactionalIdIsEmpty", NO_ID),
    OUT(
        "shouldAcceptInitPidAndReturnNextPidWhenTransactionalIdIsNull",
        "InitProducerId without a transactional id (idempotent producer): the coordinator model "
        "holds transactional ids",
    ),
    OUT(
        "shouldReturnInvalidRequestWhenKeepPreparedIsTrue",
        "KIP-939 two-phase commit (keepPreparedTxn) is not in the model",
    ),
    OUT(
        "shouldReturnInvalidRequestWhen2PCEnabledButBroker2PCConfigFalse",
        "KIP-939 two-phase commit is not in the model",
    ),
    OUT("shouldRespondWithInvalidRequestAddPartitionsToTransactionWhenTransactionalIdIsEmpty", NO_ID),
    OUT("shouldRespondWithInvalidRequestAddPartitionsToTransactionWhenTransactionalIdIsNull", NO_ID),
    OUT("shouldRespondWithInvalidRequestOnEndTxnWhenTransactionalIdIsNull", NO_ID),
    OUT("shouldRespondWithInvalidRequestOnEndTxnWhenTransactionalIdIsEmpty", NO_ID),
    OUT(
        "shouldFailToAbortTransactionOnHandleInitPidWhenProducerEpochIsSmaller",
        "the metadata changes between the fence's prepare and its abort (a concurrent bump in a "
        "mock): the model's handlers are atomic",
    ),
    OUT("shouldNotRepeatedlyBumpEpochDueToInitPidDuringOngoingTxnIfAppendToLogFails", APPEND_FAILS),
    OUT("shouldNotBumpEpochWhenAbortingExpiredTransactionIfAppendToLogFails", APPEND_FAILS),
    OUT("testTV2AllowsEpochReBumpingAfterFailedWrite", APPEND_FAILS),
    OUT(
        "shouldNotAcceptSmallerEpochDuringTransactionExpiration",
        "the metadata is bumped by another handler between the timeout scan and the abort (a "
        "mock): the model's handlers are atomic",
    ),
    OUT(
        "shouldNotBumpEpochWithPendingTransaction",
        "a pendingState left by an in-flight append: the model writes atomically",
    ),
    OUT("shouldRemoveTransactionsForPartitionOnEmigration", NOT_TXN),
    OUT("testDescribeTransactionsWithEmptyTransactionalId", NOT_TXN),
    OUT("testDescribeTransactionsWithExpiringTransactionalId", NOT_TXN),
    OUT("testDescribeTransactionsWhileCoordinatorLoading", NOT_TXN),
    OUT("testDescribeTransactions", NOT_TXN),
    OUT(
        "shouldReturnWhenTransactionVersionDowngraded",
        "a client switching transaction version between requests: the model fixes the version per "
        "run (a config switch)",
    ),
    OUT(
        "shouldReturnCorrectlyWhenTransactionVersionUpgraded",
        "a client switching transaction version between requests: the model fixes the version per "
        "run (a config switch)",
    ),
)
