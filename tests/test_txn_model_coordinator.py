"""The transaction coordinator: each request and state cell of kafka-facts §1.3 to §1.9."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.model import coordinator as C
from kconform.model import txn_graph as G
from kconform.model.txn_config import TxnConfig
from kconform.traces.events import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_REQUEST,
    INVALID_TRANSACTION_TIMEOUT,
    INVALID_TXN_STATE,
    NONE,
    NOT_COORDINATOR,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
)

TV0 = TxnConfig()
TV2 = TxnConfig(transaction_version=2)
PID = 1000
FRESH = 2000
PARTS = frozenset({"t-0", "t-1"})
ITS = INVALID_TXN_STATE
PF = PRODUCER_FENCED


def meta(state: str, epoch: int = 5, partitions: frozenset[str] | None = None, **kw: object) -> C.TxnMetadata:
    if partitions is None:
        partitions = PARTS if state in (G.ONGOING, *G.PREPARED) else frozenset()
    m = C.TxnMetadata(pid=PID, epoch=epoch, state=state, timeout_ms=60_000, partitions=partitions, start_ms=0)
    return replace(m, pending=partitions if state in G.PREPARED else frozenset(), **kw)  # type: ignore[arg-type]


def test_coordinator_lookup_errors() -> None:
    assert C.coordinator_error(C.StatePartition(1, 0, True), 0) == NOT_COORDINATOR
    assert C.coordinator_error(C.StatePartition(0, 1, False), 0) == COORDINATOR_LOAD_IN_PROGRESS
    assert C.coordinator_error(C.StatePartition(0, 1, True), 0) == NONE


# ---------------------------------------------------------------------------------------------
# InitProducerId (§1.3)


def test_init_unknown_id_gets_fresh_pid_epoch_0() -> None:
    m, a = C.init_producer_id(None, TV0, 0, 60_000, -1, -1, FRESH)
    assert a == C.Answer(NONE, FRESH, 0, G.EMPTY)
    assert m is not None and (m.pid, m.epoch, m.state) == (FRESH, 0, G.EMPTY)


@pytest.mark.parametrize(
    ("timeout", "exp_pid", "exp_epoch", "error"),
    [
        (0, -1, -1, INVALID_TRANSACTION_TIMEOUT),
        (900_001, -1, -1, INVALID_TRANSACTION_TIMEOUT),
        (1, PID, -1, INVALID_REQUEST),
    ],
)
def test_init_request_errors(timeout: int, exp_pid: int, exp_epoch: int, error: int) -> None:
    m0 = meta(G.EMPTY)
    m, a = C.init_producer_id(m0, TV0, 0, timeout, exp_pid, exp_epoch, FRESH)
    assert (a.error, a.pid, a.epoch, m) == (error, -1, -1, m0)


@pytest.mark.parametrize(
    ("state", "expected", "answer", "after"),
    [
        (G.EMPTY, (-1, -1), (NONE, PID, 6), G.EMPTY),
        (G.COMPLETE_COMMIT, (-1, -1), (NONE, PID, 6), G.EMPTY),
        (G.COMPLETE_ABORT, (-1, -1), (NONE, PID, 6), G.EMPTY),
        (G.COMPLETE_ABORT, (PID, 5), (NONE, PID, 6), G.EMPTY),
        (G.COMPLETE_ABORT, (PID, 3), (PF, -1, -1), G.COMPLETE_ABORT),
        (G.COMPLETE_ABORT, (999, 5), (PF, -1, -1), G.COMPLETE_ABORT),
        (G.PREPARE_COMMIT, (-1, -1), (CONCURRENT_TRANSACTIONS, -1, -1), G.PREPARE_COMMIT),
        (G.PREPARE_ABORT, (-1, -1), (CONCURRENT_TRANSACTIONS, -1, -1), G.PREPARE_ABORT),
        (G.ONGOING, (-1, -1), (CONCURRENT_TRANSACTIONS, -1, -1), G.PREPARE_ABORT),
    ],
)
def test_init_by_state(state: str, expected: tuple[int, int], answer: tuple[int, int, int], after: str) -> None:
    m, a = C.init_producer_id(meta(state), TV0, 10, 60_000, *expected, FRESH)
    assert (a.error, a.pid, a.epoch, a.state) == (*answer, after)
    assert m is not None and m.state == after


def test_init_fences_ongoing_with_epoch_bump_then_retry_bumps_again() -> None:
    m, _ = C.init_producer_id(meta(G.ONGOING), TV0, 10, 60_000, -1, -1, FRESH)
    assert m is not None and (m.epoch, m.pending, m.last_epoch) == (6, PARTS, -1)
    done = C.complete(replace(m, pending=frozenset()), TV0, 11)
    _m2, a = C.init_producer_id(done, TV0, 12, 60_000, -1, -1, FRESH)
    assert (a.error, a.pid, a.epoch) == (NONE, PID, 7)


def test_init_retry_with_last_epoch_returns_the_current_epoch() -> None:
    m, a = C.init_producer_id(meta(G.EMPTY), TV0, 0, 60_000, PID, 5, FRESH)
    assert (a.epoch, m and m.last_epoch) == (6, 5)
    _m, retry = C.init_producer_id(m, TV0, 0, 60_000, PID, 5, FRESH)
    assert (retry.error, retry.epoch) == (NONE, 6)


def test_init_rotates_pid_at_epoch_32766() -> None:
    m, a = C.init_producer_id(meta(G.COMPLETE_COMMIT, epoch=32766), TV0, 0, 60_000, -1, -1, FRESH)
    assert a == C.Answer(NONE, FRESH, 0, G.EMPTY)
    assert m is not None and (m.previous_pid, m.last_epoch) == (PID, -1)
    m, a = C.init_producer_id(meta(G.EMPTY, epoch=32765), TV0, 0, 60_000, -1, -1, FRESH)
    assert (a.pid, a.epoch) == (PID, 32766)


def test_init_rotation_with_expected_epoch_and_its_retry() -> None:
    m, a = C.init_producer_id(meta(G.COMPLETE_ABORT, epoch=32766), TV0, 0, 60_000, PID, 32766, FRESH)
    assert (a.pid, a.epoch) == (FRESH, 0) and m is not None and m.last_epoch == 32766
    _m, retry = C.init_producer_id(m, TV0, 0, 60_000, PID, 32766, FRESH + 1)
    assert (retry.error, retry.pid, retry.epoch) == (NONE, FRESH, 0)


def test_fence_at_32766_reaches_32767_then_rotates() -> None:
    m, a = C.init_producer_id(meta(G.ONGOING, epoch=32766), TV0, 0, 60_000, -1, -1, FRESH)
    assert a.error == CONCURRENT_TRANSACTIONS and m is not None and m.epoch == 32767
    done = C.complete(replace(m, pending=frozenset()), TV0, 1)
    _m, a = C.init_producer_id(done, TV0, 2, 60_000, -1, -1, FRESH)
    assert (a.pid, a.epoch) == (FRESH, 0)
    with pytest.raises(C.NotEnabled):
        C.init_producer_id(meta(G.ONGOING, epoch=32767), TV0, 0, 60_000, -1, -1, FRESH)


# ---------------------------------------------------------------------------------------------
# AddPartitions (§1.4) and verification (§1.9)


@pytest.mark.parametrize(
    ("m", "pid", "epoch", "error", "after"),
    [
        (None, PID, 5, INVALID_PRODUCER_ID_MAPPING, ""),
        (meta(G.EMPTY), 999, 5, INVALID_PRODUCER_ID_MAPPING, G.EMPTY),
        (meta(G.EMPTY), PID, 4, PF, G.EMPTY),
        (meta(G.PREPARE_COMMIT), PID, 5, CONCURRENT_TRANSACTIONS, G.PREPARE_COMMIT),
        (meta(G.PREPARE_ABORT), PID, 5, CONCURRENT_TRANSACTIONS, G.PREPARE_ABORT),
        (meta(G.EMPTY), PID, 5, NONE, G.ONGOING),
        (meta(G.COMPLETE_COMMIT), PID, 5, NONE, G.ONGOING),
        (meta(G.COMPLETE_ABORT), PID, 5, NONE, G.ONGOING),
        (meta(G.ONGOING), PID, 5, NONE, G.ONGOING),
    ],
)
def test_add_partitions_by_state(m: C.TxnMetadata | None, pid: int, epoch: int, error: int, after: str) -> None:
    new, a = C.add_partitions(m, TV0, 50, pid, epoch, frozenset({"t-0"}))
    assert (a.error, a.state) == (error, after)
    if error == NONE:
        assert new is not None and "t-0" in new.partitions
        assert new.start_ms == (50 if m is not None and m.state != G.ONGOING else 0)


def test_add_partitions_already_present_changes_nothing() -> None:
    m = meta(G.ONGOING)
    new, a = C.add_partitions(m, TV0, 50, PID, 5, frozenset({"t-0"}))
    assert new is m and a.error == NONE


@pytest.mark.parametrize(
    ("m", "pid", "epoch", "partition", "error"),
    [
        (None, PID, 5, "t-0", INVALID_PRODUCER_ID_MAPPING),
        (meta(G.ONGOING), 999, 5, "t-0", INVALID_PRODUCER_ID_MAPPING),
        (meta(G.ONGOING), PID, 4, "t-0", PF),
        (meta(G.PREPARE_COMMIT), PID, 5, "t-0", CONCURRENT_TRANSACTIONS),
        (meta(G.ONGOING), PID, 5, "t-0", NONE),
        (meta(G.ONGOING, partitions=frozenset({"t-1"})), PID, 5, "t-0", TRANSACTION_ABORTABLE),
        (meta(G.COMPLETE_COMMIT), PID, 5, "t-0", TRANSACTION_ABORTABLE),
    ],
)
def test_verify(m: C.TxnMetadata | None, pid: int, epoch: int, partition: str, error: int) -> None:
    assert C.verify(m, pid, epoch, partition) == error


# ---------------------------------------------------------------------------------------------
# EndTxn TV0 (§1.5 table)


@pytest.mark.parametrize(
    ("state", "commit", "error", "after"),
    [
        (G.ONGOING, True, NONE, G.PREPARE_COMMIT),
        (G.ONGOING, False, NONE, G.PREPARE_ABORT),
        (G.PREPARE_COMMIT, True, CONCURRENT_TRANSACTIONS, G.PREPARE_COMMIT),
        (G.PREPARE_COMMIT, False, ITS, G.PREPARE_COMMIT),
        (G.PREPARE_ABORT, True, ITS, G.PREPARE_ABORT),
        (G.PREPARE_ABORT, False, CONCURRENT_TRANSACTIONS, G.PREPARE_ABORT),
        (G.COMPLETE_COMMIT, True, NONE, G.COMPLETE_COMMIT),
        (G.COMPLETE_COMMIT, False, ITS, G.COMPLETE_COMMIT),
        (G.COMPLETE_ABORT, True, ITS, G.COMPLETE_ABORT),
        (G.COMPLETE_ABORT, False, NONE, G.COMPLETE_ABORT),
        (G.EMPTY, True, ITS, G.EMPTY),
        (G.EMPTY, False, ITS, G.EMPTY),
    ],
)
def test_end_txn_tv0_table(state: str, commit: bool, error: int, after: str) -> None:
    m, a = C.end_txn(meta(state), TV0, 5, PID, 5, commit, FRESH)
    assert (a.error, a.state) == (error, after)
    assert (a.pid, a.epoch) == ((PID, 5) if error == NONE else (-1, -1))
    assert m is not None and m.epoch == 5
    if after in G.PREPARED and state == G.ONGOING:
        assert m.pending == PARTS


@pytest.mark.parametrize(
    ("m", "pid", "epoch", "error"),
    [
        (None, PID, 5, INVALID_PRODUCER_ID_MAPPING),
        (meta(G.ONGOING), 999, 5, INVALID_PRODUCER_ID_MAPPING),
        (meta(G.ONGOING), PID, 4, PF),
        (meta(G.ONGOING), PID, 6, PF),
    ],
)
def test_end_txn_identity_errors(m: C.TxnMetadata | None, pid: int, epoch: int, error: int) -> None:
    for cfg in (TV0, TV2):
        _m, a = C.end_txn(m, cfg, 5, pid, epoch, True, FRESH)
        assert a.error == error


# ---------------------------------------------------------------------------------------------
# EndTxn TV2 (§1.5, KIP-890 part 2, later trunk)


@pytest.mark.parametrize(
    ("state", "req_epoch", "commit", "error", "after", "result_epoch"),
    [
        (G.ONGOING, 5, True, NONE, G.PREPARE_COMMIT, 6),
        (G.ONGOING, 5, False, NONE, G.PREPARE_ABORT, 6),
        (G.PREPARE_COMMIT, 4, True, CONCURRENT_TRANSACTIONS, G.PREPARE_COMMIT, -1),
        (G.PREPARE_COMMIT, 4, False, ITS, G.PREPARE_COMMIT, -1),
        (G.PREPARE_ABORT, 4, False, CONCURRENT_TRANSACTIONS, G.PREPARE_ABORT, -1),
        (G.PREPARE_ABORT, 4, True, ITS, G.PREPARE_ABORT, -1),
        (G.PREPARE_COMMIT, 5, True, PF, G.PREPARE_COMMIT, -1),
        (G.EMPTY, 4, False, PF, G.EMPTY, -1),
        (G.EMPTY, 5, False, NONE, G.COMPLETE_ABORT, 6),
        (G.EMPTY, 4, True, PF, G.EMPTY, -1),
        (G.EMPTY, 5, True, ITS, G.EMPTY, -1),
        (G.COMPLETE_ABORT, 4, False, NONE, G.COMPLETE_ABORT, 5),
        (G.COMPLETE_ABORT, 5, False, NONE, G.COMPLETE_ABORT, 6),
        (G.COMPLETE_ABORT, 4, True, ITS, G.COMPLETE_ABORT, -1),
        (G.COMPLETE_ABORT, 5, True, ITS, G.COMPLETE_ABORT, -1),
        (G.COMPLETE_COMMIT, 4, False, ITS, G.COMPLETE_COMMIT, -1),
        (G.COMPLETE_COMMIT, 5, False, NONE, G.COMPLETE_ABORT, 6),
        (G.COMPLETE_COMMIT, 4, True, NONE, G.COMPLETE_COMMIT, 5),
        (G.COMPLETE_COMMIT, 5, True, ITS, G.COMPLETE_COMMIT, -1),
        (G.COMPLETE_COMMIT, 3, True, PF, G.COMPLETE_COMMIT, -1),
    ],
)
def test_end_txn_tv2_table(state: str, req_epoch: int, commit: bool, error: int, after: str, result_epoch: int) -> None:
    m, a = C.end_txn(meta(state), TV2, 5, PID, req_epoch, commit, FRESH)
    assert (a.error, a.state, a.epoch) == (error, after, result_epoch)
    assert m is not None and m.state == after


def test_end_txn_tv2_overflow_rotates_at_complete_and_retry_is_recognised() -> None:
    m, a = C.end_txn(meta(G.ONGOING, epoch=32766), TV2, 5, PID, 32766, True, FRESH)
    assert (a.error, a.pid, a.epoch) == (NONE, FRESH, 0)
    assert m is not None and (m.pid, m.epoch, m.next_pid) == (PID, 32767, FRESH)
    done = C.complete(replace(m, pending=frozenset()), TV2, 6)
    assert (done.pid, done.epoch, done.previous_pid, done.state) == (FRESH, 0, PID, G.COMPLETE_COMMIT)
    _m, retry = C.end_txn(done, TV2, 7, PID, 32766, True, FRESH + 1)
    assert (retry.error, retry.pid, retry.epoch) == (NONE, FRESH, 0)


def test_tv2_overflow_keeps_last_epoch_32766_and_init_retry_is_recognised() -> None:
    """Regression (issue 14): TransactionMetadataTest.testEpochBumpOnEndTxnOverflow (Kafka trunk,
    4.2.0-SNAPSHOT): Ongoing at epoch 32766, TV2 commit with next pid 9893 → PrepareCommit at 32767
    with lastProducerEpoch 32766 → CompleteCommit as (9893, 0) with lastProducerEpoch still 32766.
    The client that did not get the answer retries InitProducerId with (old pid, 32766): the old pid
    is the previous one and 32766 is exhausted (isValidProducerId), 0 is not exhausted, and 32766 ==
    lastProducerEpoch makes it a retry (prepareIncrementProducerEpoch): (9893, 0), not fenced."""
    m, _a = C.end_txn(meta(G.ONGOING, epoch=32766), TV2, 5, PID, 32766, True, 9893)
    assert m is not None and (m.epoch, m.last_epoch) == (32767, 32766)
    done = C.complete(replace(m, pending=frozenset()), TV2, 6)
    assert (done.pid, done.epoch, done.last_epoch, done.previous_pid) == (9893, 0, 32766, PID)
    again, init = C.init_producer_id(done, TV2, 7, 60_000, PID, 32766, FRESH)
    assert (init.error, init.pid, init.epoch) == (NONE, 9893, 0)
    assert again is not None and (again.pid, again.epoch, again.last_epoch) == (9893, 0, 32766)
    _m, stale = C.init_producer_id(done, TV2, 7, 60_000, PID, 32765, FRESH)
    assert stale.error == PRODUCER_FENCED  # 32765 is not exhausted: the old pid is no longer valid


# ---------------------------------------------------------------------------------------------
# Markers, load, timeout, expiry (§1.5 to §1.8)


def test_markers_complete_when_all_acknowledged() -> None:
    m = meta(G.PREPARE_COMMIT)
    m = C.marker_answered(m, TV0, 1, "t-0", NONE)
    assert m.state == G.PREPARE_COMMIT and m.pending == {"t-1"}
    assert C.marker_answered(m, TV0, 1, "t-1", 6).pending == {"t-1"}
    m = C.marker_answered(m, TV0, 2, "t-1", NONE)
    assert (m.state, m.partitions, m.last_update_ms) == (G.COMPLETE_COMMIT, frozenset(), 2)


def test_fenced_marker_abandons_until_load_resends_everything() -> None:
    m = C.marker_answered(meta(G.PREPARE_ABORT), TV0, 1, "t-0", 52)
    assert m.markers_abandoned and m.state == G.PREPARE_ABORT
    m = C.loaded(replace(m, pending=frozenset({"t-1"})))
    assert not m.markers_abandoned and m.pending == PARTS


def test_timeout_is_strict_and_bumps_the_epoch() -> None:
    m = meta(G.ONGOING)
    assert not C.timed_out(m, 60_000)
    with pytest.raises(C.NotEnabled):
        C.abort_timed_out(m, TV0, 60_000)
    aborted = C.abort_timed_out(m, TV0, 60_001)
    assert (aborted.state, aborted.epoch, aborted.pending) == (G.PREPARE_ABORT, 6, PARTS)


@pytest.mark.parametrize("state", G.STATES[:6])
def test_expiry_only_from_empty_or_complete(state: str) -> None:
    m = replace(meta(state), last_update_ms=0)
    cfg = TxnConfig(transactional_id_expiration_ms=100)
    assert C.may_expire(m, cfg, 100) == (state in G.EXPIRATION_ALLOWED)
    assert not C.may_expire(m, cfg, 99)
