"""The boundary's tables cover every field (a new event kind or operation cannot slip past them), its
JSON reader refuses what Python's accepts silently, and the schema states Kafka's limits."""

from __future__ import annotations

import dataclasses

import pytest

from kconform.traces.events import EVENT_TYPES
from kconform.traces.inputs import jsontext, limits
from kconform.traces.inputs.schemacheck import SchemaProblem, check_def
from kconform.traces.operations import OPERATION_TYPES
from kconform.traces.schema import SCHEMA_FILE, event_fields, schema_text, struct_class, struct_fields


def test_every_int_field_of_every_kind_has_a_range() -> None:
    missing = [
        f"{kind}.{name}"
        for kind, cls in EVENT_TYPES.items()
        for name, typ in event_fields(cls)
        if typ in ("int", "tuple[int, ...]") and limits.field_range(kind, name) is None
    ]
    assert not missing, f"add a Range to traces/inputs/limits.py for {missing}"


def test_every_struct_field_has_a_range() -> None:
    missing = [
        f"{cls.__name__}.{name}"
        for event in EVENT_TYPES.values()
        for _n, typ in event_fields(event)
        if (cls := struct_class(typ)) is not None
        for name, ftyp in struct_fields(cls)
        if ftyp == "int" and (cls.__name__, name) not in limits.STRUCT_RANGES
    ]
    assert not missing


def test_every_operation_argument_has_a_rule() -> None:
    missing = [
        f"{kind}.{f.name}"
        for kind, cls in OPERATION_TYPES.items()
        for f in dataclasses.fields(cls)
        if (kind, f.name) not in limits.OPERATION_RULES
    ]
    assert not missing


def test_every_kind_outside_the_roles_table_is_a_broker_kind() -> None:
    assert set(limits.NODE_ROLES) <= set(EVENT_TYPES)
    assert {k for k, _f in limits.ENUMS} <= set(EVENT_TYPES)


def test_the_suite_bounds_match_the_reference_cluster() -> None:
    from kconform.impl import simulation
    from kconform.impl.txn import cluster as txn_cluster

    assert limits.MAX_CLIENTS == txn_cluster.MAX_CLIENTS
    assert limits.MAX_BATCH_RECORDS == txn_cluster.MAX_BATCH_RECORDS
    assert limits.MAX_SETTLE_MESSAGES == simulation.MAX_SETTLE_DELIVERIES


def test_the_checked_in_schema_states_the_limits() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text()
    assert '"maximum": 32767' in schema_text() and '"maximum": 9223372036854775807' in schema_text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": -Infinity}', "-Infinity is not a JSON number"),
        ("[" * 33 + "]" * 33, "nested deeper than 32 levels"),
        ('{"a": ' + "1" * 21 + "}", "an integer of more than 20 digits"),
        ('{"a": 1', "not valid JSON"),
    ],
)
def test_json_text_refuses(text: str, message: str) -> None:
    with pytest.raises(jsontext.JsonTextError, match=message):
        jsontext.loads(text)


def test_json_text_accepts_what_it_should() -> None:
    assert jsontext.loads('{"s": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "n": -1, "f": 1.5}') == {
        "s": "[" * 44,
        "n": -1,
        "f": 1.5,
    }
    assert jsontext.loads('{"big": "' + "9" * 100 + '"}')["big"] == "9" * 100


@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        ({"kind": "clock_advanced", "node": -1, "now_ms": 2**63}, "now_ms", "is outside -9223372036854775808.."),
        ({"kind": "clock_advanced", "node": -1, "now_ms": 5.0}, "now_ms", "the number 5.0"),
        ({"kind": "clock_advanced", "node": -1, "now_ms": True}, "now_ms", "got a boolean"),
        ({"kind": "clock_advanced", "node": -1}, "", "missing 'now_ms'"),
        ({"kind": "clock_advanced", "node": -1, "now_ms": 5, "x": 1}, "", "unknown key(s) ['x']"),
        ({"kind": "nope", "node": 0}, "kind", "unknown event kind 'nope'"),
    ],
)
def test_the_schema_check_names_the_field(value: object, path: str, message: str) -> None:
    with pytest.raises(SchemaProblem) as info:
        check_def(value, "event")
    assert info.value.path == path and message in info.value.message


@pytest.mark.parametrize("tag", [["x"], {"a": 1}, [], 3, None])
def test_an_unhashable_or_non_string_tag_is_named_not_a_traceback(tag: object) -> None:
    """Found by the fuzz benchmark (7 tracebacks in 3,204 counterexample files): a list or dict as an event's
    ``kind`` or an operation's ``op`` made the compiled schema's tag lookup raise TypeError (unhashable)."""
    with pytest.raises(SchemaProblem) as info:
        check_def({"kind": tag, "node": 0}, "event")
    assert info.value.path == "kind" and "unknown event kind" in info.value.message
    with pytest.raises(SchemaProblem) as info:
        check_def({"op": tag, "ms": 5}, "operation")
    assert info.value.path == "op" and "unknown operation" in info.value.message


def test_the_schema_check_accepts_a_valid_event() -> None:
    check_def({"kind": "clock_advanced", "node": -1, "now_ms": 5}, "event")
    check_def({"op": "advance", "ms": 5}, "operation")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "a\x00b"], "an argument holds a NUL byte"),
        (["convert", "x" * 5000, "/tmp/kconform-never-made"], "File name too long"),
        (["gate", "--set", "x=" + "[" * 5000], "nested deeper than 32 levels"),
    ],
)
def test_command_line_inputs_found_by_the_options_fuzzer(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from kconform.ci import cli

    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err
