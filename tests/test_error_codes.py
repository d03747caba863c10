"""Every error code of the model is Kafka's own number: pinned to the literals of Kafka's Errors.java.

``KAFKA_ERRORS`` is copied by hand from ``clients/src/main/java/org/apache/kafka/common/protocol/Errors.java``
of apache/kafka trunk at 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25, version 4.0.0-SNAPSHOT); Kafka
never renumbers a code, so the table holds for every release that has the code. It is deliberately not derived
from ``kconform.model.errors``: a wrong constant there (INVALID_UPDATE_VERSION was once 108, which is Kafka's
NEW_LEADER_ELECTED) fails here.
"""

from __future__ import annotations

import json

from kconform.model import errors

KAFKA_ERRORS: dict[str, int] = {
    "NONE": 0,
    "OFFSET_OUT_OF_RANGE": 1,
    "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "NOT_LEADER_OR_FOLLOWER": 6,
    "REQUEST_TIMED_OUT": 7,
    "NETWORK_EXCEPTION": 13,
    "COORDINATOR_LOAD_IN_PROGRESS": 14,
    "COORDINATOR_NOT_AVAILABLE": 15,
    "NOT_COORDINATOR": 16,
    "NOT_ENOUGH_REPLICAS": 19,
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": 20,
    "INVALID_REQUIRED_ACKS": 21,
    "INVALID_REQUEST": 42,
    "OUT_OF_ORDER_SEQUENCE_NUMBER": 45,
    "DUPLICATE_SEQUENCE_NUMBER": 46,
    "INVALID_PRODUCER_EPOCH": 47,
    "INVALID_TXN_STATE": 48,
    "INVALID_PRODUCER_ID_MAPPING": 49,
    "INVALID_TRANSACTION_TIMEOUT": 50,
    "CONCURRENT_TRANSACTIONS": 51,
    "TRANSACTION_COORDINATOR_FENCED": 52,
    "OPERATION_NOT_ATTEMPTED": 55,
    "KAFKA_STORAGE_ERROR": 56,
    "FETCH_SESSION_ID_NOT_FOUND": 70,
    "INVALID_FETCH_SESSION_EPOCH": 71,
    "FENCED_LEADER_EPOCH": 74,
    "UNKNOWN_LEADER_EPOCH": 75,
    "UNSTABLE_OFFSET_COMMIT": 88,
    "PRODUCER_FENCED": 90,
    "INVALID_UPDATE_VERSION": 95,
    "TRANSACTIONAL_ID_NOT_FOUND": 105,
    "INELIGIBLE_REPLICA": 107,
    "NEW_LEADER_ELECTED": 108,
    "TRANSACTION_ABORTABLE": 120,
}
"""Kafka's name → code for every code the model, the reference or this test names."""


def _model_constants() -> dict[str, int]:
    return {k: int(v) for k, v in vars(errors).items() if k.isupper() and isinstance(v, int)}


def test_every_model_code_is_kafkas_number() -> None:
    constants = _model_constants()
    assert constants, "kconform.model.errors defines no code"
    wrong = {name: (code, KAFKA_ERRORS.get(name)) for name, code in constants.items() if KAFKA_ERRORS.get(name) != code}
    assert not wrong, f"(model, Kafka) codes differ or are not in the pinned table: {wrong}"


def test_names_map_is_every_constant_under_its_own_name() -> None:
    """ERRORS (code → name, used in reports and coverage keys) names exactly the constants, each by its name."""
    assert {code: name for name, code in _model_constants().items()} == errors.ERRORS


def test_codes_are_one_closed_enum_that_serializes_as_the_number() -> None:
    """Every constant is an ErrorCode member under its own name; JSON, str and repr give the bare number."""
    assert {name: code for name, code in _model_constants().items()} == {c.name: c.value for c in errors.ErrorCode}
    for name in _model_constants():
        member = getattr(errors, name)
        assert member is errors.ErrorCode[name]
        assert json.dumps(member) == str(member) == f"{member}" == repr(member) == str(member.value)


def test_invalid_update_version_is_not_new_leader_elected() -> None:
    """The bug this file was written for: 108 is NEW_LEADER_ELECTED (KIP-903), the stale partition epoch is 95."""
    assert errors.INVALID_UPDATE_VERSION == 95
    assert errors.ERRORS[108] == "NEW_LEADER_ELECTED" != errors.ERRORS[95]
