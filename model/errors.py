"""Kafka's error codes: the outcomes a handler of the model (and of an implementation) answers with.

The numbers are Kafka's own (``org.apache.kafka.common.protocol.Errors``); ``NONE`` (0) is success.
Trace files, counterexamples and corpora store the numbers, so these values are part of the
serialized schema; tests/test_error_codes.py pins each one to the literal in Kafka's Errors.java.

:class:`ErrorCode` is the closed set the model and the reference answer with. It is an ``IntEnum``, so a
member *is* its number: it compares, hashes, formats (``str``, f-strings) and serializes (JSON, Parquet)
exactly as the int, and a code read back from a file as a plain int equals the member. Codes outside the
set (another implementation's, a damaged file's) stay plain ints: event fields are typed ``int``.
"""

from __future__ import annotations

from enum import IntEnum, unique


@unique
class ErrorCode(IntEnum):
    """The Kafka error codes this project's model and reference answer with (name and number as in Kafka).

    Its ``repr`` is the number too, so a message naming a code ("implementation says 0") reads as it did
    when codes were plain ints, and seeded reports stay byte-identical."""

    def __repr__(self) -> str:
        return int.__repr__(self)

    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    UNKNOWN_TOPIC_OR_PARTITION = 3
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    INVALID_REQUEST = 42
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    DUPLICATE_SEQUENCE_NUMBER = 46
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSTABLE_OFFSET_COMMIT = 88
    PRODUCER_FENCED = 90
    INVALID_UPDATE_VERSION = 95
    TRANSACTIONAL_ID_NOT_FOUND = 105
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    TRANSACTION_ABORTABLE = 120


# The members under their Kafka names, for ``from kconform.model.errors import NONE, ...``.
NONE = ErrorCode.NONE
OFFSET_OUT_OF_RANGE = ErrorCode.OFFSET_OUT_OF_RANGE
UNKNOWN_TOPIC_OR_PARTITION = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
NOT_LEADER_OR_FOLLOWER = ErrorCode.NOT_LEADER_OR_FOLLOWER
REQUEST_TIMED_OUT = ErrorCode.REQUEST_TIMED_OUT
NETWORK_EXCEPTION = ErrorCode.NETWORK_EXCEPTION
COORDINATOR_LOAD_IN_PROGRESS = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
COORDINATOR_NOT_AVAILABLE = ErrorCode.COORDINATOR_NOT_AVAILABLE
NOT_COORDINATOR = ErrorCode.NOT_COORDINATOR
NOT_ENOUGH_REPLICAS = ErrorCode.NOT_ENOUGH_REPLICAS
NOT_ENOUGH_REPLICAS_AFTER_APPEND = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
INVALID_REQUIRED_ACKS = ErrorCode.INVALID_REQUIRED_ACKS
INVALID_REQUEST = ErrorCode.INVALID_REQUEST
OUT_OF_ORDER_SEQUENCE_NUMBER = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
DUPLICATE_SEQUENCE_NUMBER = ErrorCode.DUPLICATE_SEQUENCE_NUMBER
INVALID_PRODUCER_EPOCH = ErrorCode.INVALID_PRODUCER_EPOCH
INVALID_TXN_STATE = ErrorCode.INVALID_TXN_STATE
INVALID_PRODUCER_ID_MAPPING = ErrorCode.INVALID_PRODUCER_ID_MAPPING
INVALID_TRANSACTION_TIMEOUT = ErrorCode.INVALID_TRANSACTION_TIMEOUT
CONCURRENT_TRANSACTIONS = ErrorCode.CONCURRENT_TRANSACTIONS
TRANSACTION_COORDINATOR_FENCED = ErrorCode.TRANSACTION_COORDINATOR_FENCED
OPERATION_NOT_ATTEMPTED = ErrorCode.OPERATION_NOT_ATTEMPTED
KAFKA_STORAGE_ERROR = ErrorCode.KAFKA_STORAGE_ERROR
FETCH_SESSION_ID_NOT_FOUND = ErrorCode.FETCH_SESSION_ID_NOT_FOUND
INVALID_FETCH_SESSION_EPOCH = ErrorCode.INVALID_FETCH_SESSION_EPOCH
FENCED_LEADER_EPOCH = ErrorCode.FENCED_LEADER_EPOCH
UNKNOWN_LEADER_EPOCH = ErrorCode.UNKNOWN_LEADER_EPOCH
UNSTABLE_OFFSET_COMMIT = ErrorCode.UNSTABLE_OFFSET_COMMIT
PRODUCER_FENCED = ErrorCode.PRODUCER_FENCED
INVALID_UPDATE_VERSION = ErrorCode.INVALID_UPDATE_VERSION
TRANSACTIONAL_ID_NOT_FOUND = ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
INELIGIBLE_REPLICA = ErrorCode.INELIGIBLE_REPLICA
NEW_LEADER_ELECTED = ErrorCode.NEW_LEADER_ELECTED
TRANSACTION_ABORTABLE = ErrorCode.TRANSACTION_ABORTABLE

RETRIABLE_MARKER_ERRORS: frozenset[ErrorCode] = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.KAFKA_STORAGE_ERROR,
    }
)
"""The WriteTxnMarkers answers after which the coordinator re-sends the marker
(TransactionMarkerRequestCompletionHandler: "these are retriable errors"; kafka-facts §1.8)."""

ERRORS: dict[int, str] = {code.value: code.name for code in ErrorCode}
"""Code → Kafka's name, for reports and coverage keys."""
