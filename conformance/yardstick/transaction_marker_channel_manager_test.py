"""TransactionMarkerChannelManagerTest (core/src/test/scala/unit/kafka/coordinator/transaction/, trunk
1eb7644), ported onto one transactional id's metadata.

The test's fixture: ``txnId2`` (producer id 1, epoch 0, ``PrepareCommit`` with ``topic1-0``,
coordinator epoch 0, transaction version 2) whose markers go to broker 1. The parts the model
states are what the coordinator writes once every marker is answered (``CompleteCommit``, once)
and what a coordinator that loads the transaction's state partition does with a Prepare*
transaction (sends its markers again and completes it). How requests are batched per broker, the
leader lookup in the metadata cache, the metrics, and a failing append of the completion are the
channel manager's machinery and out of scope, each with its reason.
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import COORDINATOR, TRUNK, Scenario, Step, call, check
from kconform.traces.events import NONE

K = "TransactionMarkerChannelManagerTest"
P = "topic1-0"
GIVEN = {"pid": 1, "epoch": 0, "state": "PrepareCommit", "partitions": frozenset({P}), "timeout_ms": 0}
TV2 = {"transaction_version": 2}
APPEND_FAILS = (
    "the append of the completion to __transaction_state fails ({}): the model's log never fails an append "
    "(docs/transactions.md)"
)
BATCHING = "how the channel manager batches markers into one WriteTxnMarkers request per broker: below the model"
LEADERS = (
    "the leader of a transaction's partition looked up in the metadata cache (unknown, not available, deleted "
    "topic): the model's partitions always have a leader to send markers to"
)
METRICS = "the channel manager's metrics: not a Kafka semantic the model states"


def S(method: str, *steps: Step, part: str = "", resolution: str = "") -> Scenario:
    return Scenario(
        K, method, TRUNK, COORDINATOR, given=GIVEN, steps=steps, config=TV2, part=part, resolution=resolution
    )


def OUT(method: str, why: str, part: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, COORDINATOR, out_of_scope=why, part=part)


SCENARIOS: tuple[Scenario, ...] = (
    OUT("testRemoveMetricsOnClose", METRICS),
    S(
        "shouldOnlyWriteTxnCompletionOnce",
        call("marker_answered", partition=P, error=NONE).then(state="CompleteCommit", pending=frozenset()),
        call("complete").refused(),
        resolution="the test races addTxnMarkersToSend against the answer under the metadata lock and verifies "
        "one appendTransactionToLog; here: the answer writes CompleteCommit, and a second completion is refused",
    ),
    S(
        "shouldNotLoseTxnCompletionAfterLoad",
        call("load").then(state="PrepareCommit", pending={P}),
        call("marker_answered", partition=P, error=NONE).then(state="CompleteCommit", pending=frozenset()),
        part="the new coordinator's markers",
        resolution="the test's matrix answers the old coordinator's in-flight marker (success or disconnect) while "
        "getTransactionState says NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or coordinator epoch 1; in every "
        "cell the old answer is dropped and the new coordinator's markers complete the transaction (one append at "
        "coordinator epoch 1). The model's load re-sends the markers of a Prepare* transaction; the completion "
        "follows their answers",
    ),
    OUT(
        "shouldNotLoseTxnCompletionAfterLoad",
        "the old coordinator's answer arriving after the load (6 cells: success or disconnect, with NOT_COORDINATOR, "
        "COORDINATOR_LOAD_IN_PROGRESS, coordinator epoch 1): the model has no coordinator epoch per in-flight "
        "request",
        part="the old coordinator's answer",
    ),
    OUT("shouldGenerateEmptyMapWhenNoRequestsOutstanding", BATCHING),
    OUT("shouldGenerateRequestPerPartitionPerBroker", BATCHING),
    OUT("shouldSkipSendMarkersWhenLeaderNotFound", LEADERS),
    OUT("shouldSaveForLaterWhenLeaderUnknownButNotAvailable", LEADERS),
    OUT(
        "shouldRemoveMarkersForTxnPartitionWhenPartitionEmigrated",
        "the transaction's state partition emigrating (removeMarkersForTxnTopicPartition): the model's coordinator "
        "of one transactional id does not emigrate",
    ),
    S(
        "shouldCompleteAppendToLogOnEndTxnWhenSendMarkersSucceed",
        check(state="PrepareCommit", pending={P}),
        call("marker_answered", partition=P, error=NONE).then(state="CompleteCommit", pending=frozenset()),
    ),
    OUT("shouldAbortAppendToLogOnEndTxnWhenNotCoordinatorError", APPEND_FAILS.format("NOT_COORDINATOR")),
    OUT(
        "shouldRetryAppendToLogOnEndTxnWhenCoordinatorNotAvailableError",
        APPEND_FAILS.format("COORDINATOR_NOT_AVAILABLE"),
    ),
    OUT("shouldCreateMetricsOnStarting", METRICS),
)
