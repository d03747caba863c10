"""The transaction coordinator: metadata per transactional id and one pure function per handler.

Sources: kafka-facts §1 (TransactionCoordinator, TransactionMetadata, TransactionStateManager,
TransactionMarkerChannelManager; KIP-98, KIP-360, KIP-588, KIP-890). Every function takes the
transactional id's metadata (None when unknown) and the request, and returns the metadata after
the handler with the answer; states move only along model.txn_graph's edges.

Abstractions (docs/transactions.md): a handler's log write to ``__transaction_state`` is atomic
with the handler (the log never fails an append here), so Kafka's ``pendingState`` never
survives a handler and CONCURRENT_TRANSACTIONS arises only from Prepare* states and fencing;
``hasFailedEpochFence`` is never set. Errors are those of current client request versions
(PRODUCER_FENCED, not the pre-KIP-588 INVALID_PRODUCER_EPOCH mapping). Who owns which
``__transaction_state`` partition (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS) is checked by
``coordinator_error`` over ``StatePartition``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model import txn_graph as G
from kconform.model.errors import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    INVALID_PRODUCER_EPOCH,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_REQUEST,
    INVALID_TRANSACTION_TIMEOUT,
    INVALID_TXN_STATE,
    NONE,
    NOT_COORDINATOR,
    PRODUCER_FENCED,
    RETRIABLE_MARKER_ERRORS,
    TRANSACTION_ABORTABLE,
    TRANSACTION_COORDINATOR_FENCED,
)
from kconform.model.evolve import evolve
from kconform.model.not_enabled import NotEnabled as NotEnabled
from kconform.model.txn_config import SHORT_MAX, TxnConfig

EPOCH_EXHAUSTED = SHORT_MAX - 1
"""32766: TransactionMetadata.isEpochExhausted(e) = e >= Short.MaxValue - 1 (kafka-facts §1.3)."""
NO_PID = -1
NO_EPOCH = -1


@dataclass(frozen=True)
class TxnMetadata:
    """TransactionMetadata (kafka-facts §1.1) of one transactional id.

    ``partitions`` is the durable set (what the last log record says); ``pending`` is the
    in-memory set of partitions of a Prepare* transaction whose marker was not acknowledged yet
    (reset to ``partitions`` when a coordinator loads the log); ``markers_abandoned`` is set when a
    marker answer said INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED (kafka-facts §1.8).
    """

    pid: int
    epoch: int
    state: str
    timeout_ms: int
    previous_pid: int = NO_PID
    next_pid: int = NO_PID
    last_epoch: int = NO_EPOCH
    partitions: frozenset[str] = frozenset()
    start_ms: int = -1
    last_update_ms: int = -1
    pending: frozenset[str] = frozenset()
    markers_abandoned: bool = False

    @property
    def committing(self) -> bool:
        return self.state in (G.PREPARE_COMMIT, G.COMPLETE_COMMIT)


@dataclass(frozen=True)
class StatePartition:
    """A ``__transaction_state`` partition as the coordinators see it: its leader (the coordinator
    of its transactional ids), the coordinator epoch (= the partition's leader epoch), and whether
    that leader finished loading the log, and when (-1 before; model.txn_timeout's window starts
    there)."""

    leader: int
    coordinator_epoch: int
    loaded: bool
    loaded_ms: int = -1


@dataclass(frozen=True)
class Answer:
    """What a coordinator handler answered: error, the (pid, epoch) returned (-1 when none), and
    the state after the handler ("" when the id has no metadata)."""

    error: int
    pid: int = NO_PID
    epoch: int = NO_EPOCH
    state: str = G.NO_STATE


def state_of(meta: TxnMetadata | None) -> str:
    """The state name of ``meta``, "" for an id without metadata."""
    return G.NO_STATE if meta is None else meta.state


def _error(meta: TxnMetadata | None, error: int) -> tuple[TxnMetadata | None, Answer]:
    return meta, Answer(error, state=state_of(meta))


def _to(meta: TxnMetadata, cfg: TxnConfig, state: str, **changes: object) -> TxnMetadata:
    """prepareTransitionTo + completeTransitionTo in one step: only along the graph's edges."""
    if not G.is_valid_transition(meta.state, state, cfg.transaction_version):
        raise NotEnabled(f"{meta.state} → {state} is not a valid transition (kafka-facts §1.1)")
    return evolve(meta, state=state, **changes)


def exhausted(epoch: int) -> bool:
    """TransactionMetadata.isEpochExhausted: epoch ≥ 32766 (32767 is reserved for fencing)."""
    return epoch >= EPOCH_EXHAUSTED


def coordinator_error(part: StatePartition, node: int) -> int:
    """TransactionStateManager.getAndMaybeAddTransactionState (kafka-facts §1.2): NOT_COORDINATOR
    from a broker not leading the state partition, COORDINATOR_LOAD_IN_PROGRESS while loading."""
    if part.leader != node:
        return NOT_COORDINATOR
    if not part.loaded:
        return COORDINATOR_LOAD_IN_PROGRESS
    return NONE


# ---------------------------------------------------------------------------------------------
# InitProducerId (kafka-facts §1.3, KIP-98, KIP-360)


def init_producer_id(
    meta: TxnMetadata | None,
    cfg: TxnConfig,
    now_ms: int,
    timeout_ms: int,
    expected_pid: int,
    expected_epoch: int,
    fresh_pid: int,
) -> tuple[TxnMetadata | None, Answer]:
    """TransactionCoordinator.handleInitProducerId for a transactional id, after the coordinator
    lookup. ``fresh_pid`` is a producer id never handed out before, used when the rules allocate
    one (unknown id, rotation at an exhausted epoch).

    Order: timeout outside (0, max] → INVALID_TRANSACTION_TIMEOUT; exactly one of the expected
    pid/epoch given → INVALID_REQUEST; an unknown id gets {fresh pid, epoch -1, Empty}; a given
    expected (pid, epoch) that is not the current pid (nor the previous pid with an exhausted
    epoch, nor metadata at epoch -1) → PRODUCER_FENCED; Prepare* → CONCURRENT_TRANSACTIONS;
    Empty/Complete*: rotate the pid at an exhausted epoch, else bump (a retry with the last epoch
    gets the current epoch back, anything else is PRODUCER_FENCED); Ongoing: fence (epoch + 1,
    PrepareAbort) and answer CONCURRENT_TRANSACTIONS so the client retries.
    """
    if not 0 < timeout_ms <= cfg.transaction_max_timeout_ms:
        return _error(meta, INVALID_TRANSACTION_TIMEOUT)
    if (expected_pid == NO_PID) != (expected_epoch == NO_EPOCH):
        return _error(meta, INVALID_REQUEST)
    given = expected_pid != NO_PID
    if meta is None:
        meta = TxnMetadata(pid=fresh_pid, epoch=NO_EPOCH, state=G.EMPTY, timeout_ms=timeout_ms, last_update_ms=now_ms)
    if given and not (
        meta.epoch == NO_EPOCH
        or expected_pid == meta.pid
        or (expected_pid == meta.previous_pid and exhausted(expected_epoch))
    ):
        return _error(meta, PRODUCER_FENCED)
    if meta.state in G.PREPARED:
        return _error(meta, CONCURRENT_TRANSACTIONS)
    if meta.state == G.ONGOING:
        return _fence_and_abort(meta, cfg, now_ms), Answer(CONCURRENT_TRANSACTIONS, state=G.PREPARE_ABORT)
    if meta.state not in (G.EMPTY, *G.COMPLETED):
        raise NotEnabled(f"InitProducerId in state {meta.state}: IllegalStateException in Kafka")
    reset = {"timeout_ms": timeout_ms, "partitions": frozenset(), "start_ms": -1, "last_update_ms": now_ms}
    if exhausted(meta.epoch) and (not given or expected_epoch == meta.epoch):
        new = _to(
            meta,
            cfg,
            G.EMPTY,
            pid=fresh_pid,
            epoch=0,
            previous_pid=meta.pid,
            last_epoch=meta.epoch if given else NO_EPOCH,
            **reset,
        )
        return new, Answer(NONE, new.pid, new.epoch, new.state)
    if not given:
        epoch, last = meta.epoch + 1, NO_EPOCH
    elif meta.epoch in (expected_epoch, NO_EPOCH):
        epoch, last = meta.epoch + 1, meta.epoch
    elif expected_epoch == meta.last_epoch:
        epoch, last = meta.epoch, meta.last_epoch  # a retry: the epoch it already got
    else:
        return _error(meta, PRODUCER_FENCED)
    if exhausted(meta.epoch) and epoch != meta.epoch:
        raise NotEnabled("prepareIncrementProducerEpoch on an exhausted epoch: IllegalStateException in Kafka")
    new = _to(meta, cfg, G.EMPTY, epoch=epoch, last_epoch=last, **reset)
    return new, Answer(NONE, new.pid, new.epoch, new.state)


def _fence_and_abort(meta: TxnMetadata, cfg: TxnConfig, now_ms: int) -> TxnMetadata:
    """prepareFenceProducerEpoch (epoch + 1, lastProducerEpoch -1) then the server-initiated abort
    with that epoch: PrepareAbort via the pending-only PrepareEpochFence (kafka-facts §1.3 step 10,
    §1.6). For TV2 the later trunk keeps this path separate ("isEpochFence"): no second bump."""
    if meta.epoch >= SHORT_MAX:
        raise NotEnabled("fencing at epoch 32767 would overflow: IllegalStateException in Kafka")
    return _to(
        meta,
        cfg,
        G.PREPARE_ABORT,
        epoch=meta.epoch + 1,
        last_epoch=NO_EPOCH,
        pending=meta.partitions,
        markers_abandoned=False,
        last_update_ms=now_ms,
    )


# ---------------------------------------------------------------------------------------------
# AddPartitionsToTxn / AddOffsetsToTxn (kafka-facts §1.4)


def add_partitions(
    meta: TxnMetadata | None, cfg: TxnConfig, now_ms: int, pid: int, epoch: int, partitions: frozenset[str]
) -> tuple[TxnMetadata | None, Answer]:
    """handleAddPartitionsToTransaction (client versions): no metadata or another pid →
    INVALID_PRODUCER_ID_MAPPING; another epoch → PRODUCER_FENCED; Prepare* →
    CONCURRENT_TRANSACTIONS; Ongoing already holding them all → NONE without a write; else Ongoing
    with the union (the start time set when coming from Empty/Complete*)."""
    if meta is None or meta.pid != pid:
        return _error(meta, INVALID_PRODUCER_ID_MAPPING)
    if meta.epoch != epoch:
        return _error(meta, PRODUCER_FENCED)
    if meta.state in G.PREPARED:
        return _error(meta, CONCURRENT_TRANSACTIONS)
    if meta.state == G.ONGOING and partitions <= meta.partitions:
        return meta, Answer(NONE, state=meta.state)
    start = now_ms if meta.state in (G.EMPTY, *G.COMPLETED) else meta.start_ms
    new = _to(meta, cfg, G.ONGOING, partitions=meta.partitions | partitions, start_ms=start, last_update_ms=now_ms)
    return new, Answer(NONE, state=new.state)


# ---------------------------------------------------------------------------------------------
# EndTxn (kafka-facts §1.5)

_TV0_TABLE: dict[tuple[str, bool], int | str] = {
    (G.ONGOING, True): G.PREPARE_COMMIT,
    (G.ONGOING, False): G.PREPARE_ABORT,
    (G.PREPARE_COMMIT, True): CONCURRENT_TRANSACTIONS,
    (G.PREPARE_COMMIT, False): INVALID_TXN_STATE,
    (G.PREPARE_ABORT, True): INVALID_TXN_STATE,
    (G.PREPARE_ABORT, False): CONCURRENT_TRANSACTIONS,
    (G.COMPLETE_COMMIT, True): NONE,
    (G.COMPLETE_COMMIT, False): INVALID_TXN_STATE,
    (G.COMPLETE_ABORT, True): INVALID_TXN_STATE,
    (G.COMPLETE_ABORT, False): NONE,
    (G.EMPTY, True): INVALID_TXN_STATE,
    (G.EMPTY, False): INVALID_TXN_STATE,
}
"""kafka-facts §1.5's table: (state, commit) → the Prepare state entered, or the error answered."""


def end_txn(
    meta: TxnMetadata | None, cfg: TxnConfig, now_ms: int, pid: int, epoch: int, commit: bool, fresh_pid: int
) -> tuple[TxnMetadata | None, Answer]:
    """TransactionCoordinator.handleEndTransaction from a client, TV0 or TV2 by the config.

    The answer's (pid, epoch) is the producer's identity for its next transaction: the request's
    in TV0, the bumped (or, on overflow, rotated) one in TV2; -1 on error. A Prepare with no
    partitions (TV2's empty abort) completes at once: there is no marker to wait for
    (TransactionMarkerChannelManager writes Complete* directly).
    """
    if meta is None:
        return _error(meta, INVALID_PRODUCER_ID_MAPPING)
    if cfg.transaction_version >= 2:
        return _end_txn_tv2(meta, cfg, now_ms, pid, epoch, commit, fresh_pid)
    if meta.pid != pid:
        return _error(meta, INVALID_PRODUCER_ID_MAPPING)
    if epoch != meta.epoch:
        return _error(meta, PRODUCER_FENCED)
    cell = _TV0_TABLE.get((meta.state, commit))
    if cell is None:
        raise NotEnabled(f"EndTxn in state {meta.state}: IllegalStateException in Kafka")
    if isinstance(cell, int):
        if cell == NONE:
            return meta, Answer(NONE, pid, epoch, meta.state)
        return _error(meta, cell)
    new = _prepare(meta, cfg, now_ms, cell, meta.epoch, NO_PID)
    return new, Answer(NONE, pid, epoch, new.state)


def _prepare(meta: TxnMetadata, cfg: TxnConfig, now_ms: int, state: str, epoch: int, next_pid: int) -> TxnMetadata:
    new = _to(
        meta,
        cfg,
        state,
        epoch=epoch,
        last_epoch=meta.epoch if epoch != meta.epoch else meta.last_epoch,
        next_pid=next_pid,
        pending=meta.partitions,
        markers_abandoned=False,
        last_update_ms=now_ms,
    )
    return complete(new, cfg, now_ms) if not new.pending else new


def _end_txn_tv2(
    meta: TxnMetadata, cfg: TxnConfig, now_ms: int, pid: int, epoch: int, commit: bool, fresh_pid: int
) -> tuple[TxnMetadata | None, Answer]:
    """KIP-890 part 2 (kafka-facts §1.5, the later-trunk rules where this Kafka version differs):
    every EndTxn bumps the epoch at Prepare; at an exhausted epoch a next pid is allocated, Prepare
    carries 32767 and Complete switches to (next pid, 0). Retries are recognised by the stored
    epoch being the request's + 1 (or the overflow pair); a same-epoch EndTxn on Complete* is a
    new one (later trunk): an abort bumps the epoch (empty abort), a commit is INVALID_TXN_STATE."""
    retry_bump = meta.pid == pid and meta.epoch == epoch + 1
    retry_overflow = pid == meta.previous_pid and epoch == EPOCH_EXHAUSTED and meta.epoch == 0
    if meta.pid != pid and not retry_overflow:
        return _error(meta, INVALID_PRODUCER_ID_MAPPING)
    current = meta.pid == pid and meta.epoch == epoch
    retry = retry_bump or retry_overflow
    state = meta.state
    if state == G.ONGOING:
        if not current:
            return _error(meta, PRODUCER_FENCED)
        return _tv2_prepare(meta, cfg, now_ms, G.PREPARE_COMMIT if commit else G.PREPARE_ABORT, fresh_pid)
    if state in G.PREPARED:
        if not retry_bump:
            return _error(meta, PRODUCER_FENCED)
        same = (state == G.PREPARE_COMMIT) == commit
        return _error(meta, CONCURRENT_TRANSACTIONS if same else INVALID_TXN_STATE)
    if state == G.EMPTY:
        if retry:
            return _error(meta, PRODUCER_FENCED)
        if not current:
            return _error(meta, PRODUCER_FENCED)
        if commit:
            return _error(meta, INVALID_TXN_STATE)
        return _tv2_prepare(meta, cfg, now_ms, G.PREPARE_ABORT, fresh_pid)
    if state in G.COMPLETED:
        if not (retry or current):
            return _error(meta, PRODUCER_FENCED)
        committed = state == G.COMPLETE_COMMIT
        if retry:
            if commit == committed:
                return meta, Answer(NONE, meta.pid, meta.epoch, state)
            return _error(meta, INVALID_TXN_STATE)
        if commit:
            return _error(meta, INVALID_TXN_STATE)
        return _tv2_prepare(meta, cfg, now_ms, G.PREPARE_ABORT, fresh_pid)
    raise NotEnabled(f"EndTxn in state {state}: IllegalStateException in Kafka")


def _tv2_prepare(
    meta: TxnMetadata, cfg: TxnConfig, now_ms: int, state: str, fresh_pid: int
) -> tuple[TxnMetadata, Answer]:
    if meta.epoch >= SHORT_MAX:
        raise NotEnabled("EndTxn at epoch 32767: the producer must have been fenced")
    overflow = meta.epoch + 1 >= SHORT_MAX
    new = _prepare(meta, cfg, now_ms, state, meta.epoch + 1, fresh_pid if overflow else NO_PID)
    if overflow:
        return new, Answer(NONE, fresh_pid, 0, new.state)
    return new, Answer(NONE, new.pid, meta.epoch + 1, new.state)


# ---------------------------------------------------------------------------------------------
# Markers and completion (kafka-facts §1.5, §1.8)


def complete(meta: TxnMetadata, cfg: TxnConfig, now_ms: int) -> TxnMetadata:
    """All markers acknowledged: write CompleteCommit/CompleteAbort (partitions cleared); a TV2
    overflow switches to (next pid, epoch 0) with the old pid as previous.

    lastProducerEpoch is kept (TransactionMetadata.prepareComplete, Kafka trunk since KIP-890 part
    2 was finished; TransactionMetadataTest.testEpochBumpOnEndTxnOverflow): after an overflow it
    stays 32766, the last epoch the client saw, so that the client's InitProducerId retry with
    (old pid, 32766) is recognised as a retry and answered (next pid, 0), not PRODUCER_FENCED."""
    target = G.COMPLETE_COMMIT if meta.state == G.PREPARE_COMMIT else G.COMPLETE_ABORT
    changes: dict[str, object] = {"partitions": frozenset(), "pending": frozenset(), "last_update_ms": now_ms}
    if meta.next_pid != NO_PID:
        changes.update(pid=meta.next_pid, epoch=0, previous_pid=meta.pid, next_pid=NO_PID)
    return _to(meta, cfg, target, **changes)


def marker_answered(meta: TxnMetadata, cfg: TxnConfig, now_ms: int, partition: str, error: int) -> TxnMetadata:
    """TransactionMarkerRequestCompletionHandler for one partition of a Prepare* transaction: NONE
    acknowledges it (the last acknowledgement writes Complete*); a retriable error leaves it
    pending; INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED abandon the transaction's
    markers (until a coordinator loads the log again)."""
    if error == NONE:
        new = evolve(meta, pending=meta.pending - {partition})
        return complete(new, cfg, now_ms) if not new.pending else new
    if error in (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED):
        return evolve(meta, markers_abandoned=True)
    if error in RETRIABLE_MARKER_ERRORS:
        return meta
    raise NotEnabled(f"marker error {error}: IllegalStateException in Kafka")


def loaded(meta: TxnMetadata) -> TxnMetadata:
    """What a coordinator loading the log knows: the durable record; a Prepare* transaction sends
    markers to all its partitions again (loadTransactionsForTxnTopicPartition)."""
    if meta.state in G.PREPARED:
        return evolve(meta, pending=meta.partitions, markers_abandoned=False)
    return evolve(meta, pending=frozenset(), markers_abandoned=False)


# ---------------------------------------------------------------------------------------------
# Timeout, expiry, verification (kafka-facts §1.6, §1.7, §1.9)


def timed_out(meta: TxnMetadata, now_ms: int) -> bool:
    """timedOutTransactions: Ongoing and txnStartTimestamp + txnTimeoutMs < now (strict)."""
    return meta.state == G.ONGOING and meta.start_ms + meta.timeout_ms < now_ms


def abort_timed_out(meta: TxnMetadata, cfg: TxnConfig, now_ms: int) -> TxnMetadata:
    """The timeout rollback: fence (epoch + 1, KAFKA-6119) and PrepareAbort. The cleanup task runs
    every 10 s in Kafka; the model lets it run at any time after the deadline (scheduling)."""
    if not timed_out(meta, now_ms):
        raise NotEnabled(f"transaction not timed out (state {meta.state}, start {meta.start_ms}, now {now_ms})")
    return _fence_and_abort(meta, cfg, now_ms)


def may_expire(meta: TxnMetadata, cfg: TxnConfig, now_ms: int) -> bool:
    """Transactional-id expiration: Empty/Complete* and last update ≤ now - expiration."""
    return meta.state in G.EXPIRATION_ALLOWED and meta.last_update_ms <= now_ms - cfg.transactional_id_expiration_ms


def verify(meta: TxnMetadata | None, pid: int, epoch: int, partition: str) -> int:
    """handleVerifyPartitionsInTransaction (AddPartitionsToTxn v4 verifyOnly, KIP-890 part 1)."""
    if meta is None or meta.pid != pid:
        return INVALID_PRODUCER_ID_MAPPING
    if meta.epoch != epoch:
        return PRODUCER_FENCED
    if meta.state in G.PREPARED:
        return CONCURRENT_TRANSACTIONS
    if meta.state == G.ONGOING and partition in meta.partitions:
        return NONE
    return TRANSACTION_ABORTABLE
