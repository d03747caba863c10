"""How a transactional producer reacts to a coordinator's answer: Kafka's client-side TransactionManager
(clients/.../producer/internals/TransactionManager.java, trunk 1eb7644, Kafka 4.0), one handler per request.

The model's coordinator states what the broker answers; this module states what the producer then does
with each answer, so that a broker answer can be judged by the client-visible outcome Kafka's own client
gives it: ``OK``, ``RETRY`` (reenqueue: the request is sent again), ``FIND_COORDINATOR`` (lookupCoordinator,
then reenqueue), ``ABORTABLE`` (transitionToAbortableError: the application must abort),
``ABORTABLE_BUMP`` (abortableErrorIfPossible with a coordinator that supports bumping the epoch, KIP-360,
InitProducerId v3+: abortable, and the next InitProducerId bumps the epoch), ``FATAL``
(transitionToFatalError: the producer must be closed). ``raised`` is the error the application sees:
INVALID_PRODUCER_EPOCH is raised as PRODUCER_FENCED by every handler ("We could still receive
INVALID_PRODUCER_EPOCH from old versioned transaction coordinator, just treat it the same as
PRODUCE_FENCED", KIP-588).

A "retriable" error is one whose Java exception extends RetriableException: of the model's codes,
NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS,
REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
KAFKA_STORAGE_ERROR, UNSTABLE_OFFSET_COMMIT, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH (org.apache.kafka.common.errors). The
authorization and group-membership codes the handlers name are here by number, as Errors.java has them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.errors import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    FENCED_LEADER_EPOCH,
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH,
    INVALID_PRODUCER_EPOCH,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_TXN_STATE,
    KAFKA_STORAGE_ERROR,
    NONE,
    NOT_COORDINATOR,
    NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    NOT_LEADER_OR_FOLLOWER,
    PRODUCER_FENCED,
    REQUEST_TIMED_OUT,
    TRANSACTION_ABORTABLE,
    UNKNOWN_LEADER_EPOCH,
    UNKNOWN_TOPIC_OR_PARTITION,
    UNSTABLE_OFFSET_COMMIT,
)

OK = "ok"
RETRY = "retry"
FIND_COORDINATOR = "find_coordinator"
ABORTABLE = "abortable"
ABORTABLE_BUMP = "abortable_bump"
FATAL = "fatal"

INIT_PRODUCER_ID = "init_producer_id"
ADD_PARTITIONS = "add_partitions"
ADD_OFFSETS = "add_offsets"
END_TXN = "end_txn"
TXN_OFFSET_COMMIT = "txn_offset_commit"
FIND_COORDINATOR_REQUEST = "find_coordinator"
REQUESTS = (INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT, FIND_COORDINATOR_REQUEST)

ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
UNKNOWN_PRODUCER_ID = 59
FENCED_INSTANCE_ID = 82
"""Errors.java codes the handlers name that no handler of the model answers with."""

RETRIABLE: frozenset[int] = frozenset(
    {
        NOT_COORDINATOR,
        COORDINATOR_NOT_AVAILABLE,
        COORDINATOR_LOAD_IN_PROGRESS,
        CONCURRENT_TRANSACTIONS,
        REQUEST_TIMED_OUT,
        NOT_ENOUGH_REPLICAS,
        NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        NOT_LEADER_OR_FOLLOWER,
        UNKNOWN_TOPIC_OR_PARTITION,
        KAFKA_STORAGE_ERROR,
        UNSTABLE_OFFSET_COMMIT,
        FENCED_LEADER_EPOCH,
        UNKNOWN_LEADER_EPOCH,
        FETCH_SESSION_ID_NOT_FOUND,
        INVALID_FETCH_SESSION_EPOCH,
    }
)
"""The codes whose exception extends RetriableException (checked class by class at trunk 1eb7644)."""


@dataclass(frozen=True)
class Reaction:
    """What the producer does (``action``) and the error the application sees (``raised``: NONE if
    none; the handler's own code where it wraps it, as CommitFailedException wraps UNKNOWN_MEMBER_ID)."""

    action: str
    raised: int


def reaction(request: str, error: int) -> Reaction:
    """The TransactionManager handler of ``request`` answered ``error`` (one partition's error for
    AddPartitionsToTxn and TxnOffsetCommit). Raises ValueError for an unknown request."""
    if request not in REQUESTS:
        raise ValueError(f"unknown transactional request {request!r} (one of {', '.join(REQUESTS)})")
    if error == NONE:
        return Reaction(OK, NONE)
    if error in (INVALID_PRODUCER_EPOCH, PRODUCER_FENCED) and request != FIND_COORDINATOR_REQUEST:
        return Reaction(FATAL, PRODUCER_FENCED)
    if error == TRANSACTION_ABORTABLE:
        return Reaction(ABORTABLE, error)  # every handler (code 120, KIP-890)
    if request == FIND_COORDINATOR_REQUEST:
        if error in RETRIABLE:
            return Reaction(RETRY, error)
        return Reaction(ABORTABLE if error == GROUP_AUTHORIZATION_FAILED else FATAL, error)
    if request == TXN_OFFSET_COMMIT:
        if error in (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, REQUEST_TIMED_OUT):
            return Reaction(FIND_COORDINATOR, error)  # the group coordinator, then the commit is retried
        if error in RETRIABLE:
            return Reaction(RETRY, error)
        group = (GROUP_AUTHORIZATION_FAILED, FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION)
        return Reaction(ABORTABLE if error in group else FATAL, error)
    if error in (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR):
        return Reaction(FIND_COORDINATOR, error)
    if error in RETRIABLE:
        return Reaction(RETRY, error)  # CONCURRENT_TRANSACTIONS in AddPartitions with a shorter back-off
    if request == INIT_PRODUCER_ID:
        authorization = (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED)
        return Reaction(ABORTABLE if error in authorization else FATAL, error)  # else "Unexpected error"
    if error in (UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_ID_MAPPING):
        return Reaction(ABORTABLE_BUMP, error)
    if error in (INVALID_TXN_STATE, TRANSACTIONAL_ID_AUTHORIZATION_FAILED):
        return Reaction(FATAL, error)
    if request == ADD_OFFSETS and error == GROUP_AUTHORIZATION_FAILED:
        return Reaction(ABORTABLE, error)
    if request == ADD_PARTITIONS:
        return Reaction(ABORTABLE, error)  # hasPartitionErrors: "Could not add partitions to transaction"
    return Reaction(FATAL, error)  # "Unhandled error in EndTxnResponse" / "Unexpected error in AddOffsetsToTxn"
