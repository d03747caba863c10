"""The log checks, each named after the guarantee it judges (see each class's docstring for the
rule and its Kafka source). :func:`all_checks` builds a fresh set for one run."""

from __future__ import annotations

from kconform.traces.logs.checks.base import (
    ADVISORY,
    NOT_OBSERVED,
    PASSED,
    VIOLATED,
    Check,
    Finding,
    Witness,
    run_checks,
)
from kconform.traces.logs.checks.fetch import AbortedTransactionsBelowLso, FetchAnswerOffsets, FetchSessionEpochs
from kconform.traces.logs.checks.kraft import (
    KraftElrOutsideIsr,
    KraftEpochsIncrease,
    KraftIsrWithinReplicas,
    KraftLeaderInIsr,
)
from kconform.traces.logs.checks.replication import (
    EpochCheckpointValid,
    HighWatermarkBelowLogEnd,
    IsrChangesKeepLeader,
    LeaderEpochsIncreaseAcrossStateChanges,
    LeaderEpochsIncreasePerBroker,
    NoTruncationBelowHighWatermark,
    OneLeaderPerEpoch,
    TruncationAgreesWithEpochAnswer,
)
from kconform.traces.logs.checks.segment import (
    LeaderEpochsNonDecreasing,
    OffsetsContiguous,
    OffsetsIncreasing,
    ProducerEpochsNonDecreasing,
    ProducerSequencesContiguous,
)
from kconform.traces.logs.checks.txn import (
    DEFAULT_MAX_TXN_TIMEOUT_MS,
    AbortedIndexCoversAbortedBatches,
    MarkerCoordinatorEpochs,
    TxnBatchesClosedByMarker,
    TxnInitEpochs,
    TxnLogTransitions,
)

__all__ = [
    "ADVISORY",
    "NOT_OBSERVED",
    "PASSED",
    "VIOLATED",
    "Check",
    "Finding",
    "Witness",
    "all_checks",
    "check_names",
    "run_checks",
]


def all_checks(max_txn_timeout_ms: int = DEFAULT_MAX_TXN_TIMEOUT_MS) -> list[Check]:
    """One fresh instance of every check, in report order."""
    return [
        OffsetsIncreasing(),
        OffsetsContiguous(),
        LeaderEpochsNonDecreasing(),
        ProducerSequencesContiguous(),
        ProducerEpochsNonDecreasing(),
        TxnBatchesClosedByMarker(max_txn_timeout_ms),
        MarkerCoordinatorEpochs(),
        TxnLogTransitions(),
        TxnInitEpochs(),
        AbortedIndexCoversAbortedBatches(),
        OneLeaderPerEpoch(),
        LeaderEpochsIncreasePerBroker(),
        LeaderEpochsIncreaseAcrossStateChanges(),
        HighWatermarkBelowLogEnd(),
        IsrChangesKeepLeader(),
        TruncationAgreesWithEpochAnswer(),
        NoTruncationBelowHighWatermark(),
        EpochCheckpointValid(),
        KraftIsrWithinReplicas(),
        KraftLeaderInIsr(),
        KraftElrOutsideIsr(),
        KraftEpochsIncrease(),
        FetchAnswerOffsets(),
        AbortedTransactionsBelowLso(),
        FetchSessionEpochs(),
    ]


def check_names() -> list[str]:
    """The names of every check, in report order."""
    return [c.name for c in all_checks()]
