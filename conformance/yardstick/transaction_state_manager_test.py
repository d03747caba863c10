"""TransactionStateManagerTest (core/src/test/scala/unit/kafka/coordinator/transaction/, trunk
1eb7644), the timeout scan and transactional-id expiration parts, ported onto one transactional
id's metadata.

The test's constants: ``transactionTimeoutMs`` 1000, the default ``TransactionConfig``
(``transactional.id.expiration.ms`` 604800000 = 7 days), metadata built by ``transactionMetadata``
with start and last-update timestamps at the mock clock's now (0 here) and epoch 0.
``timedOutTransactions()`` lists the ids ``timed_out`` judges; ``removeExpiredTransactionalIds()``
removes those ``may_expire`` allows (the test's ``setupAndRunTransactionalIdExpiration`` puts id 1
at now - expiration, id 2 at now; both are scenarios here).
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import COORDINATOR, TRUNK, Scenario, call
from kconform.model.errors import NOT_COORDINATOR

K = "TransactionStateManagerTest"
EXPIRATION_MS = 604_800_000
APPEND_FAILS = "a failed __transaction_state append: the model's log never fails an append (docs/transactions.md)"
PARTITIONS = (
    "state-partition loading, unloading, emigration and immigration, corrupted or unknown records: the model's "
    "coordinator holds one transactional id and loads it whole"
)
LISTING = "ListTransactions filtering and the metrics: coordinator bookkeeping the model does not state"
PENDING = "pendingState races of concurrent appends: the model's coordinator writes atomically"
BATCHING = (
    "how many tombstones one expiration append carries (batch size, offline log dir): below the model's abstraction"
)


def _meta(state: str, pid: int, timeout_ms: int = 1000, last_update_ms: int = 0) -> dict[str, object]:
    return {
        "pid": pid,
        "epoch": 0,
        "state": state,
        "timeout_ms": timeout_ms,
        "start_ms": 0,
        "last_update_ms": last_update_ms,
        "partitions": frozenset({"topic1-0"}) if state in ("Ongoing", "PrepareCommit", "PrepareAbort") else frozenset(),
    }


TOPIC1_01 = frozenset({"topic1-0", "topic1-1"})
LOADED_PARTITIONS = {"partitions": TOPIC1_01, "pending": frozenset()}


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, COORDINATOR, out_of_scope=why)


def timeout_scan(part: str, state: str, pid: int, timed_out: bool, timeout_ms: int = 1000) -> Scenario:
    """shouldOnlyConsiderTransactionsInTheOngoingStateToAbort: time.sleep(2000), then
    timedOutTransactions() == List(("ongoing", 0, 0))."""
    return Scenario(
        K,
        "shouldOnlyConsiderTransactionsInTheOngoingStateToAbort",
        TRUNK,
        COORDINATOR,
        given=_meta(state, pid, timeout_ms),
        steps=(call("timed_out", now=2000).then(timed_out=timed_out),),
        part=part,
    )


def expiration(method: str, state: str, removed: bool) -> tuple[Scenario, Scenario]:
    """setupAndRunTransactionalIdExpiration(Errors.NONE, state): id 1 last updated at now - expiration
    (removed when the state allows it: Empty, CompleteCommit, CompleteAbort), id 2 at now (kept)."""
    now = EXPIRATION_MS
    return (
        Scenario(
            K,
            method,
            TRUNK,
            COORDINATOR,
            given=_meta(state, 1, last_update_ms=0),
            steps=(call("may_expire", now=now).then(expirable=removed),),
            part="transactionalId1",
        ),
        Scenario(
            K,
            method,
            TRUNK,
            COORDINATOR,
            given=_meta("Empty", 2, last_update_ms=now),
            steps=(call("may_expire", now=now).then(expirable=False),),
            part="transactionalId2",
        ),
    )


SCENARIOS: tuple[Scenario, ...] = (
    timeout_scan("ongoing", "Ongoing", 0, True),
    timeout_scan("not-expiring (txnTimeout 10000)", "Ongoing", 1, False, timeout_ms=10_000),
    timeout_scan("prepare-commit", "PrepareCommit", 2, False),
    timeout_scan("prepare-abort", "PrepareAbort", 3, False),
    timeout_scan("complete-commit", "CompleteCommit", 4, False),
    timeout_scan("complete-abort", "CompleteAbort", 5, False),
    *expiration("shouldRemoveCompleteCommitExpiredTransactionalIds", "CompleteCommit", True),
    *expiration("shouldRemoveCompleteAbortExpiredTransactionalIds", "CompleteAbort", True),
    *expiration("shouldRemoveEmptyExpiredTransactionalIds", "Empty", True),
    *expiration("shouldNotRemoveOngoingTransactionalIds", "Ongoing", False),
    *expiration("shouldNotRemovePrepareAbortTransactionalIds", "PrepareAbort", False),
    *expiration("shouldNotRemovePrepareCommitTransactionalIds", "PrepareCommit", False),
    OUT("shouldNotRemoveExpiredTransactionalIdsIfLogAppendFails", APPEND_FAILS),
    OUT("testCompleteTransitionWhenAppendSucceeded", APPEND_FAILS),
    OUT("testAppendFailToCoordinatorNotAvailableError", APPEND_FAILS),
    OUT("testAppendFailToNotCoordinatorError", APPEND_FAILS),
    OUT("testAppendFailToCoordinatorLoadingError", APPEND_FAILS),
    OUT("testAppendFailToUnknownError", APPEND_FAILS),
    OUT("testPendingStateNotResetOnRetryAppend", PENDING),
    OUT("testAppendTransactionToLogWhileProducerFenced", PENDING),
    OUT("testAppendTransactionToLogWhilePendingStateChanged", PENDING),
    OUT(
        "testValidateTransactionTimeout",
        "the transaction.max.timeout.ms bound is checked by InitProducerId (TransactionCoordinatorTest)",
    ),
    OUT("testAddGetPids", PARTITIONS),
    OUT("testDeletePartition", PARTITIONS),
    OUT("testDeleteLoadingPartition", PARTITIONS),
    OUT("testLoadAndRemoveTransactionsForPartition", PARTITIONS),
    Scenario(
        K,
        "shouldReturnNotCoordinatorErrorIfTransactionIdPartitionNotOwned",
        TRUNK,
        COORDINATOR,
        steps=(call("lookup", leader=1, node=0).then(error=NOT_COORDINATOR),),
        resolution="the test's manager owns no state partition; here the state partition of the id is led by "
        "broker 1 and the lookup is broker 0's",
    ),
    *(
        Scenario(
            K,
            f"shouldWriteTxnMarkersForTransactionIn{name}State",
            TRUNK,
            COORDINATOR,
            given={**_meta(state, 1), **LOADED_PARTITIONS},
            steps=(call("load").then(state=state, pending=TOPIC1_01),),
            resolution="verifyWritesTxnMarkersInPrepareState: txnMetadata1 (producer id 1) in the Prepare* state "
            "with topic1-0 and topic1-1, written to the log and loaded; the loader hands the transaction to the "
            "marker channel (rememberTxnMarkers). The model's load makes both partitions pending again; before "
            "the load nothing is pending (a new coordinator has sent nothing)",
        )
        for name, state in (("PreparedCommit", "PrepareCommit"), ("PreparedAbort", "PrepareAbort"))
    ),
    OUT("testSuccessfulReimmigration", PARTITIONS),
    OUT("testLoadTransactionMetadataWithCorruptedLog", PARTITIONS),
    OUT("testIgnoreUnknownRecordType", PARTITIONS),
    OUT("testTransactionExpirationShouldNotFailWithUninitializedTransactionMetadata", PARTITIONS),
    OUT("testTransactionVersionInTransactionManager", PARTITIONS),
    OUT("testListTransactionsWithCoordinatorLoadingInProgress", LISTING),
    OUT("testListTransactionsFiltering", LISTING),
    OUT("testPartitionLoadMetric", LISTING),
    OUT("testTransactionalExpirationWithTooSmallBatchSize", BATCHING),
    OUT("testTransactionalExpirationWithOfflineLogDir", BATCHING),
    OUT("testTransactionExpirationShouldRespectBatchSize", BATCHING),
)
