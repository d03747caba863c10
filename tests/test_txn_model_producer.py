"""Producer state and append validation (kafka-facts §2.2): every sequence/epoch rule and edge."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.model import producer_state as P
from kconform.model import txn_graph as G
from kconform.model.txn_config import INT32_MAX
from kconform.traces.events import (
    INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE,
    NONE,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    TRANSACTION_COORDINATOR_FENCED,
)

OOS = OUT_OF_ORDER_SEQUENCE_NUMBER


def _entry(*ranges: tuple[int, int], epoch: int = 0, first_offset: int = 0) -> P.ProducerEntry:
    """An entry of ``epoch`` with cached batches of the given sequence ranges, offsets from 0."""
    e = P.EMPTY_ENTRY
    offset = first_offset
    for first, last in ranges:
        n = (last - first) % (INT32_MAX + 1) + 1
        e = P.apply_batch(e, epoch, P.BatchMetadata(first, last, offset, offset + n - 1), False, 0)
        offset += n
    return e


def test_sequence_arithmetic_wraps_at_int32_max() -> None:
    assert P.increment_sequence(INT32_MAX) == 0
    assert P.last_sequence(INT32_MAX - 1, 3) == 0
    assert P.last_sequence(5, 1) == 5


@pytest.mark.parametrize(
    ("entry", "epoch", "first", "last", "transactional", "expected"),
    [
        pytest.param(P.EMPTY_ENTRY, 0, 17, 17, False, (P.APPENDED, NONE), id="unknown-producer-any-seq"),
        pytest.param(_entry((0, 2)), 0, 3, 4, False, (P.APPENDED, NONE), id="next-seq"),
        pytest.param(_entry((0, 2)), 0, 4, 4, False, (P.REJECTED, OOS), id="gap-oos"),
        pytest.param(_entry((0, 2)), 0, 1, 3, False, (P.REJECTED, OOS), id="partial-overlap-oos"),
        pytest.param(_entry((0, 2)), 0, 0, 2, False, (P.DUPLICATE, NONE), id="exact-duplicate"),
        pytest.param(_entry((0, 2)), 1, 0, 0, False, (P.APPENDED, NONE), id="new-epoch-seq-0"),
        pytest.param(_entry((0, 2)), 1, 3, 3, False, (P.REJECTED, OOS), id="new-epoch-must-start-at-0"),
        pytest.param(_entry((0, 2), epoch=3), 2, 3, 3, False, (P.REJECTED, INVALID_PRODUCER_EPOCH), id="old-epoch"),
        pytest.param(_entry((0, 2), epoch=3), 2, 0, 2, False, (P.REJECTED, INVALID_PRODUCER_EPOCH), id="dup-old-epoch"),
        pytest.param(_entry((INT32_MAX - 1, INT32_MAX)), 0, 0, 0, False, (P.APPENDED, NONE), id="wrap-continues-at-0"),
        pytest.param(_entry((INT32_MAX - 1, 0)), 0, 1, 1, False, (P.APPENDED, NONE), id="batch-across-wrap"),
    ],
)
def test_validate_client_batch(
    entry: P.ProducerEntry, epoch: int, first: int, last: int, transactional: bool, expected: tuple[str, int]
) -> None:
    check = P.validate_client_batch(entry, epoch, first, last, transactional)
    assert (check.outcome, check.error) == expected


def test_duplicate_returns_the_original_offsets() -> None:
    e = _entry((0, 1), (2, 4), first_offset=10)
    check = P.validate_client_batch(e, 0, 2, 4, False)
    assert check == P.BatchCheck(P.DUPLICATE, NONE, 12)


def test_window_of_five_batches() -> None:
    e = _entry((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5))
    assert len(e.batches) == 5
    assert P.validate_client_batch(e, 0, 1, 1, False).outcome == P.DUPLICATE
    evicted = P.validate_client_batch(e, 0, 0, 0, False)
    assert (evicted.outcome, evicted.error) == (P.REJECTED, OOS)


def test_non_transactional_write_during_open_transaction_is_invalid_txn_state() -> None:
    e = P.apply_batch(P.EMPTY_ENTRY, 0, P.BatchMetadata(0, 0, 7, 7), True, 0)
    assert e.txn_first_offset == 7
    check = P.validate_client_batch(e, 0, 1, 1, False)
    assert (check.outcome, check.error) == (P.REJECTED, INVALID_TXN_STATE)
    assert P.validate_client_batch(e, 0, 1, 1, True).outcome == P.APPENDED


def test_same_epoch_marker_keeps_batches_new_epoch_marker_clears_them() -> None:
    e = P.apply_batch(P.EMPTY_ENTRY, 0, P.BatchMetadata(0, 4, 0, 4), True, 0)
    same = P.apply_marker(e, 0, 0, 1)
    assert same.batches == e.batches and not same.in_transaction
    assert P.validate_client_batch(same, 0, 5, 5, True).outcome == P.APPENDED
    bumped = P.apply_marker(e, 1, 0, 1)
    assert bumped.batches == () and bumped.epoch == 1
    assert P.validate_client_batch(bumped, 1, 0, 0, True).outcome == P.APPENDED
    assert P.validate_client_batch(bumped, 1, 5, 5, True).error == OOS


def test_marker_fencing() -> None:
    e = replace(P.EMPTY_ENTRY, epoch=3, coordinator_epoch=2)
    assert P.check_marker(e, 2, 2) == INVALID_PRODUCER_EPOCH
    assert P.check_marker(e, 3, 1) == TRANSACTION_COORDINATOR_FENCED
    assert P.check_marker(e, 4, 2) == NONE


def test_verification_entry_bounds_sequences_and_keeps_lowest() -> None:
    e = P.start_verification(_entry((0, 4)), 0, 7, guard=1)
    e = P.start_verification(e, 0, 5, guard=2)
    assert e.verification == P.VerificationEntry(5, 0, frozenset({1, 2}))
    assert P.check_sequence(e, 0, 6) == OOS
    higher = P.start_verification(e, 1, 9, guard=3)
    assert higher.verification is not None and (higher.verification.epoch, higher.verification.lowest_seq) == (1, 9)
    lower = P.start_verification(higher, 0, 0, guard=4)
    assert lower.verification is not None and lower.verification.lowest_seq == 9
    cleared = P.apply_batch(e, 0, P.BatchMetadata(5, 5, 9, 9), True, 0)
    assert cleared.verification is None


def test_expiry_needs_no_open_transaction_and_the_full_interval() -> None:
    e = replace(P.EMPTY_ENTRY, epoch=0, last_timestamp_ms=100)
    assert not P.expired(e, 1099, 1000)
    assert P.expired(e, 1100, 1000)
    assert not P.expired(replace(e, txn_first_offset=3), 10**9, 1000)


# ---------------------------------------------------------------------------------------------
# The transition graph (kafka-facts §1.1)


def test_graph_is_kafkas_valid_previous_table() -> None:
    assert len(G.edges(0)) == sum(len(v) for v in G.VALID_PREVIOUS.values())
    assert G.is_valid_transition(G.ONGOING, G.PREPARE_COMMIT)
    assert not G.is_valid_transition(G.EMPTY, G.PREPARE_COMMIT)
    assert not G.is_valid_transition(G.PREPARE_COMMIT, G.COMPLETE_ABORT)
    assert not G.is_valid_transition(G.COMPLETE_ABORT, G.PREPARE_ABORT, 0)
    assert G.is_valid_transition(G.PREPARE_EPOCH_FENCE, G.PREPARE_ABORT)


def test_tv2_adds_abort_edges_only() -> None:
    extra = set(G.edges(2)) - set(G.edges(0))
    assert extra == {
        (G.EMPTY, G.PREPARE_ABORT),
        (G.COMPLETE_COMMIT, G.PREPARE_ABORT),
        (G.COMPLETE_ABORT, G.PREPARE_ABORT),
    }
