"""Hand-made exactly-once traces for the miner's tests: for each txn stream invariant one trace that
breaks it and no other invariant (``TXN_BROKEN``), and near misses that break nothing
(``TXN_NEAR_MISSES``). Default TxnConfig: ``txn-1`` lives on ``__transaction_state-10``,
``my-group``'s offsets on ``__consumer_offsets-12``, verification on, a 10 s abort-check interval."""

from __future__ import annotations

from kconform.model.txn_config import TxnConfig
from kconform.traces.events import (
    CONTROLLER,
    AddPartitionsHandled,
    ClockAdvanced,
    ConsumerPolled,
    CoordinatorLoaded,
    CoordinatorMoved,
    EndTxnHandled,
    Event,
    InitProducerIdHandled,
    MarkerHandled,
    OffsetCommitHandled,
    OffsetFetchHandled,
    ProducerExpired,
    Quiesced,
    Record,
    TopicOffset,
    TxnConsumerFetchHandled,
    TxnOffsetCommitHandled,
    TxnProduceHandled,
    TxnTimedOut,
    VerifyApplied,
)

STATE_PARTITION = "__transaction_state-10"
OFFSETS_PARTITION = "__consumer_offsets-12"
PID = 1000


def idem(req: int, seq: int, rids: tuple[int, ...], offset: int, epoch: int = 0) -> TxnProduceHandled:
    """An idempotent (non-transactional) batch of producer 7 appended to t-0."""
    return TxnProduceHandled(0, req, "t-0", "", 7, epoch, seq, rids, False, -1, "appended", 0, offset, -1)


def rejected(req: int, seq: int, rids: tuple[int, ...], error: int) -> TxnProduceHandled:
    return TxnProduceHandled(0, req, "t-0", "", 7, 0, seq, rids, False, -1, "rejected", error, -1, -1)


def txn_append(req: int, seq: int, rids: tuple[int, ...], offset: int, epoch: int = 0) -> list[Event]:
    """A transactional batch of ``txn-1`` to t-0, appended after the coordinator verified it."""
    return [
        TxnProduceHandled(0, req, "t-0", "txn-1", PID, epoch, seq, rids, True, 1, "verifying", 0, -1, 100 + req),
        VerifyApplied(0, 100 + req, req, "appended", 0, offset),
    ]


def marker(msg: int, offset: int, commit: bool, coordinator_epoch: int = 0, partition: str = "t-0") -> MarkerHandled:
    return MarkerHandled(0, msg, partition, PID, 0, commit, coordinator_epoch, 0, offset)


def record(offset: int, rid: int, control: int = -1) -> Record:
    return Record(offset, PID, 0, 0 if control < 0 else -1, rid, 1, control)


def init(epoch: int = 0) -> InitProducerIdHandled:
    return InitProducerIdHandled(1, 0, "txn-1", True, 60_000, -1, -1, 0, PID, epoch, "Empty")


def add(epoch: int = 0) -> AddPartitionsHandled:
    return AddPartitionsHandled(1, 2, "txn-1", PID, epoch, ("t-0",), 0, "Ongoing")


def end(epoch: int, state: str, commit: bool = True) -> EndTxnHandled:
    return EndTxnHandled(1, 3, "txn-1", PID, epoch, 1, commit, 0, state, PID, epoch)


COORDINATOR_UP: list[Event] = [
    CoordinatorMoved(CONTROLLER, STATE_PARTITION, 1, 0),
    CoordinatorLoaded(1, STATE_PARTITION, 0),
]
OFFSETS_7 = (TopicOffset("t-0", 7),)

TXN_BROKEN: dict[str, list[Event]] = {
    "ProducerSequencesContiguous": [idem(1, 0, (1, 2), 0), idem(2, 3, (3,), 2)],
    "NoDuplicateAppends": [idem(1, 0, (1, 2), 0), idem(2, 0, (1, 2), 2)],
    "ValidTxnTransitions": [init(), end(0, "PrepareCommit")],
    "TxnAtomicVisibility": [
        *txn_append(1, 0, (1, 2), 0),
        TxnConsumerFetchHandled(0, 5, "t-0", 0, True, 0, (record(0, 1),), 2, 1, ()),
    ],
    "NoAbortedRead": [
        *txn_append(1, 0, (1,), 0),
        marker(9, 1, commit=False),
        TxnConsumerFetchHandled(0, 5, "t-0", 0, True, 0, (record(0, 1), record(1, -1, 0)), 2, 2, ()),
        ConsumerPolled(-40, 5, "t-0", True, (1,), 2),
    ],
    "TxnEndsWithinBound": [
        *COORDINATOR_UP,
        init(),
        add(),
        ClockAdvanced(CONTROLLER, 70_000),
        ClockAdvanced(CONTROLLER, 80_000),
    ],
    "TxnOffsetsVisibleOnCommit": [
        TxnOffsetCommitHandled(0, 1, "my-group", "txn-1", PID, 0, 1, OFFSETS_7, 0, 0),
        OffsetFetchHandled(0, 2, "my-group", False, 0, OFFSETS_7),
    ],
    "DuplicateBatchesRecognised": [idem(1, 0, (1,), 0), rejected(2, 0, (1,), 45)],
    "MarkerCoordinatorFencing": [marker(1, 0, True, coordinator_epoch=1), marker(2, 1, True, coordinator_epoch=0)],
    "TxnWritesVerified": [TxnProduceHandled(0, 1, "t-0", "txn-1", PID, 0, 0, (1,), True, 1, "appended", 0, 0, -1)],
    "EndTxnEpochFencing": [add(epoch=1), end(0, "PrepareCommit")],
}
"""Each breaks the invariant it is filed under and no other (all under the default TxnConfig)."""

TXN_QUIESCED_OPEN: list[Event] = [
    *COORDINATOR_UP,
    init(),
    add(),
    *txn_append(1, 0, (1,), 0),
    Quiesced(CONTROLLER, True),
]
"""TxnEndsWithinBound's other arm: the world quiesced with a transaction still Ongoing and open on t-0."""

TXN_STALE_OFFSET_READ: list[Event] = [
    OffsetCommitHandled(0, 1, "my-group", OFFSETS_7, 0, 0),
    OffsetCommitHandled(0, 2, "my-group", (TopicOffset("t-0", 3),), 0, 1),
    OffsetFetchHandled(0, 3, "my-group", False, 0, OFFSETS_7),
]
"""TxnOffsetsVisibleOnCommit's other arm: an OffsetFetch answers an offset that was committed, but
not the latest committed one."""

TXN_UNCOMMITTED_LSO_PAST_OPEN: list[Event] = [
    *txn_append(1, 0, (1, 2), 0),
    TxnConsumerFetchHandled(0, 5, "t-0", 0, False, 0, (record(0, 1), record(1, 2)), 2, 1, ()),
]
"""LsoBounds' other arm: a read_uncommitted answer (its records up to the HW, as they should be) whose
LSO passes the first offset of the transaction still open on t-0."""

TXN_NEAR_MISSES: dict[str, tuple[TxnConfig, list[Event]]] = {
    "sequences continue": (TxnConfig(), [idem(1, 0, (1, 2), 0), idem(2, 2, (3,), 2)]),
    "new epoch restarts sequences": (TxnConfig(), [idem(1, 4, (1,), 0), idem(2, 0, (2,), 1, epoch=1)]),
    "duplicate after expiry": (
        TxnConfig(),
        [idem(1, 0, (1, 2), 0), ProducerExpired(0, "t-0", 7), idem(2, 0, (1, 2), 2)],
    ),
    "TV2 empty abort": (
        TxnConfig(transaction_version=2),
        [init(), end(0, "CompleteAbort", commit=False)],
    ),
    "LSO at the open transaction": (
        TxnConfig(),
        [*txn_append(1, 0, (1, 2), 0), TxnConsumerFetchHandled(0, 5, "t-0", 0, True, 0, (), 2, 0, ())],
    ),
    "read_uncommitted LSO at the open transaction": (
        TxnConfig(),
        [
            *txn_append(1, 0, (1, 2), 0),
            TxnConsumerFetchHandled(0, 5, "t-0", 0, False, 0, (record(0, 1), record(1, 2)), 2, 0, ()),
        ],
    ),
    "aborted records filtered": (
        TxnConfig(),
        [
            *txn_append(1, 0, (1,), 0),
            marker(9, 1, commit=False),
            TxnConsumerFetchHandled(0, 5, "t-0", 0, True, 0, (record(0, 1), record(1, -1, 0)), 2, 2, ()),
            ConsumerPolled(-40, 5, "t-0", True, (), 2),
        ],
    ),
    "timed out at the bound": (
        TxnConfig(),
        [
            *COORDINATOR_UP,
            init(),
            add(),
            ClockAdvanced(CONTROLLER, 70_000),
            TxnTimedOut(1, "txn-1", PID, 1, "PrepareAbort"),
            ClockAdvanced(CONTROLLER, 80_000),
        ],
    ),
    "committed offsets": (
        TxnConfig(),
        [
            TxnOffsetCommitHandled(0, 1, "my-group", "txn-1", PID, 0, 1, OFFSETS_7, 0, 0),
            marker(3, 1, True, partition=OFFSETS_PARTITION),
            OffsetFetchHandled(0, 2, "my-group", False, 0, OFFSETS_7),
        ],
    ),
    "a later plain commit beats an earlier transactional one": (
        TxnConfig(),
        [
            TxnOffsetCommitHandled(0, 1, "my-group", "txn-1", PID, 0, 1, OFFSETS_7, 0, 0),
            OffsetCommitHandled(0, 2, "my-group", (TopicOffset("t-0", 3),), 0, 1),
            marker(3, 2, True, partition=OFFSETS_PARTITION),
            OffsetFetchHandled(0, 4, "my-group", False, 0, (TopicOffset("t-0", 3),)),
        ],
    ),
    "duplicate out of the window": (
        TxnConfig(),
        [idem(1, 0, (1,), 0), *(idem(2 + i, 1 + i, (2 + i,), 1 + i) for i in range(5)), rejected(9, 0, (1,), 45)],
    ),
    "marker fencing reset by expiry": (
        TxnConfig(),
        [marker(1, 0, True, coordinator_epoch=1), ProducerExpired(0, "t-0", PID), marker(2, 1, True)],
    ),
    "verification off": (
        TxnConfig(verification=False),
        [TxnProduceHandled(0, 1, "t-0", "txn-1", PID, 0, 0, (1,), True, 1, "appended", 0, 0, -1)],
    ),
    "EndTxn at the transaction's epoch": (TxnConfig(), [add(epoch=1), end(1, "PrepareCommit")]),
}
"""Each is one step from a TXN_BROKEN trace and breaks nothing."""
