"""traces.step_json: a step's operation text is exactly ``json.dumps(op.to_json(),
separators=(",", ":"))`` for every operation class, with values of the field's type, of another
type (a bool in an int field, None) and strings that JSON escapes."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from kconform.traces import operations as ops
from kconform.traces.step_json import encoder_for, general_step_json, step_json

OPERATIONS = [
    v
    for v in vars(ops).values()
    if isinstance(v, type) and issubclass(v, ops.Operation) and dataclasses.is_dataclass(v) and v is not ops.Operation
]

VALUES: dict[str, list[Any]] = {
    "int": [0, -1, 2**70, 17, True, None],
    "str": ["", "t-0", 'q"uote\\', "é%s%d\n", "\u2603", None],
    "bool": [True, False, 1, None],
}


def _dumps(op: ops.Operation) -> str:
    return json.dumps(op.to_json(), separators=(",", ":"))


@pytest.mark.parametrize("cls", OPERATIONS, ids=lambda c: c.__name__)
def test_every_operation_is_encoded_as_json_dumps_encodes_it(cls: type[ops.Operation]) -> None:
    fields = dataclasses.fields(cls)
    for i in range(6):
        values = {f.name: VALUES[str(f.type)][(i + j) % len(VALUES[str(f.type)])] for j, f in enumerate(fields)}
        op = cls(**values)
        assert step_json(op) == _dumps(op) == general_step_json(op)


def test_every_operation_of_the_schema_has_its_template() -> None:
    """Only classes with fields other than int, str and bool (none today) take the general path."""
    assert [c.__name__ for c in OPERATIONS if encoder_for(c) is general_step_json] == []


def test_an_operation_with_its_own_to_json_takes_the_general_path() -> None:
    @dataclass(frozen=True)
    class Odd(ops.Operation):
        kind: ClassVar[str] = "odd"
        n: int

        def to_json(self) -> dict[str, Any]:
            return {"op": self.kind, "twice": 2 * self.n}

    assert encoder_for(Odd) is general_step_json
    assert step_json(Odd(3)) == '{"op":"odd","twice":6}'
