"""model.producer_errors: the transactional producer's reaction to each coordinator answer
(TransactionManager's handlers, trunk 1eb7644)."""

from __future__ import annotations

import pytest

from kconform.model import producer_errors as PE
from kconform.model.errors import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    INVALID_PRODUCER_EPOCH,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_TRANSACTION_TIMEOUT,
    INVALID_TXN_STATE,
    NONE,
    NOT_COORDINATOR,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
)


@pytest.mark.parametrize("request_", PE.REQUESTS)
def test_success_and_transaction_abortable_read_alike_in_every_handler(request_: str) -> None:
    assert PE.reaction(request_, NONE) == PE.Reaction(PE.OK, NONE)
    assert PE.reaction(request_, TRANSACTION_ABORTABLE) == PE.Reaction(PE.ABORTABLE, TRANSACTION_ABORTABLE)


def test_invalid_producer_epoch_is_raised_as_producer_fenced_except_by_find_coordinator() -> None:
    for request in set(PE.REQUESTS) - {PE.FIND_COORDINATOR_REQUEST}:
        assert PE.reaction(request, INVALID_PRODUCER_EPOCH) == PE.Reaction(PE.FATAL, PRODUCER_FENCED)
    # near miss: FindCoordinator has no fencing branch, the error stays its own
    assert PE.reaction(PE.FIND_COORDINATOR_REQUEST, INVALID_PRODUCER_EPOCH) == PE.Reaction(
        PE.FATAL, INVALID_PRODUCER_EPOCH
    )


def test_unknown_pid_mapping_bumps_the_epoch_where_the_handler_allows_it() -> None:
    for request in (PE.ADD_PARTITIONS, PE.ADD_OFFSETS, PE.END_TXN):
        assert PE.reaction(request, INVALID_PRODUCER_ID_MAPPING).action == PE.ABORTABLE_BUMP
    assert PE.reaction(PE.INIT_PRODUCER_ID, INVALID_PRODUCER_ID_MAPPING).action == PE.FATAL
    assert PE.reaction(PE.TXN_OFFSET_COMMIT, INVALID_PRODUCER_ID_MAPPING).action == PE.FATAL


def test_retriable_answers_are_retried_and_coordinator_moves_looked_up() -> None:
    assert PE.reaction(PE.END_TXN, CONCURRENT_TRANSACTIONS).action == PE.RETRY
    assert PE.reaction(PE.INIT_PRODUCER_ID, COORDINATOR_LOAD_IN_PROGRESS).action == PE.RETRY
    assert PE.reaction(PE.ADD_OFFSETS, NOT_COORDINATOR).action == PE.FIND_COORDINATOR
    # unexpected errors: fatal, except AddPartitionsToTxn's partition errors (abortable)
    assert PE.reaction(PE.END_TXN, INVALID_TRANSACTION_TIMEOUT).action == PE.FATAL
    assert PE.reaction(PE.ADD_PARTITIONS, INVALID_TRANSACTION_TIMEOUT).action == PE.ABORTABLE
    assert PE.reaction(PE.ADD_PARTITIONS, INVALID_TXN_STATE).action == PE.FATAL


def test_an_unknown_request_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown transactional request 'produce'"):
        PE.reaction("produce", NONE)
