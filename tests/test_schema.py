"""The event schema: the checked-in JSON Schema is the generated one; columns derive from the classes."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import ClassVar

import pytest

from kconform.traces.events import (
    EVENT_TYPES,
    SCHEMA_VERSION,
    Event,
    EventDecodeError,
    OffsetFetchHandled,
    event_from_json,
)
from kconform.traces.schema import (
    SCHEMA_FILE,
    SchemaError,
    SchemaVersionError,
    check_schema_version,
    columns,
    json_schema,
    schema_text,
)


def test_checked_in_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "traces/event-schema.json is stale: run python -m kconform.traces.schema --write"
    )


def test_schema_describes_every_kind_with_exactly_its_fields() -> None:
    schema = json_schema()
    assert schema["schema_version"] == SCHEMA_VERSION
    for kind, cls in EVENT_TYPES.items():
        entry = schema["$defs"][kind]
        fields = [f.name for f in dataclasses.fields(cls)]
        required = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
        assert entry["required"] == ["kind", *required]  # a field added later has a default
        assert set(entry["properties"]) == {"kind", *fields}
        assert entry["properties"]["kind"] == {"const": kind}
        assert entry["description"], f"{kind} has no docstring to document it"
    assert {ref["$ref"] for ref in schema["$defs"]["event"]["oneOf"]} == {f"#/$defs/{k}" for k in EVENT_TYPES}


def test_every_field_becomes_one_column() -> None:
    names = {f.name for cls in EVENT_TYPES.values() for f in dataclasses.fields(cls)} - {"node"}
    assert {c.name for c in columns()} == names
    entries = next(c for c in columns() if c.name == "entries")
    assert entries.type == "tuple[Entry, ...]" and set(entries.kinds) == {
        "fetch_handled",
        "fetch_completed",
        "consumer_fetch_handled",
        "consumer_fetch_wait_handled",
        "consumer_fetch_completed",
        "replica_fetch_handled",
    }


def test_a_field_name_with_two_types_is_refused() -> None:
    @dataclass(frozen=True)
    class Clash(Event):
        kind: ClassVar[str] = "clash"
        hw: str

    with pytest.raises(SchemaError, match=r"'hw' is int in .* but str in clash"):
        columns({**EVENT_TYPES, "clash": Clash})


def test_an_unsupported_field_type_is_refused() -> None:
    @dataclass(frozen=True)
    class Odd(Event):
        kind: ClassVar[str] = "odd"
        ratio: float

    with pytest.raises(SchemaError, match=r"odd\.ratio: unsupported field type float"):
        columns({"odd": Odd})


@pytest.mark.parametrize("version", [0, SCHEMA_VERSION + 1, "1", True, None])
def test_unknown_schema_versions_are_refused(version: object) -> None:
    with pytest.raises(SchemaVersionError, match="unsupported schema_version"):
        check_schema_version(version, "f.json")
    assert check_schema_version(SCHEMA_VERSION, "f.json") == SCHEMA_VERSION


def test_schema_text_is_valid_sorted_json() -> None:
    text = schema_text()
    assert json.loads(text) == json_schema()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_a_field_added_later_may_be_absent_from_older_files() -> None:
    """OffsetFetchHandled.unstable (KIP-447 per partition) came after schema version 2 files were
    written: a line without it decodes with the default; any other missing field is still refused."""
    line = {
        "kind": "offset_fetch_handled",
        "node": 0,
        "req": 1,
        "group": "g",
        "require_stable": True,
        "error": 0,
        "offsets": [["t-0", 3]],
    }
    decoded = event_from_json(line)
    assert isinstance(decoded, OffsetFetchHandled) and decoded.unstable == ()
    del line["offsets"]
    with pytest.raises(EventDecodeError, match="missing field 'offsets'"):
        event_from_json(line)
