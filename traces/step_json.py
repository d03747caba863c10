"""The JSON text of a step's operation as a corpus stores it (the ``op`` column of ``steps/``).

``step_json(op)`` is exactly ``json.dumps(op.to_json(), separators=(",", ":"))``: the same
characters, for every operation. A generated corpus stores one per step, so it is made cheaply:
per operation class, once, a ``%`` template of the JSON text with one slot per field (``%d`` for an
int, the ASCII-escaped JSON string for a str, ``true``/``false`` for a bool, in the order of
``to_json``: ``op`` then the fields in declaration order), filled from the field values. A value
whose type is not exactly its field's (a bool in an int field, None, a subclass), a class whose
fields are not all int, str or bool, or one with its own ``to_json`` takes the general encoder
instead, which gives the same text as ``json.dumps``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

from kconform.traces.operations import Operation

_JSON = json.JSONEncoder(separators=(",", ":"))
"""``json.dumps(obj, separators=(",", ":"))``'s encoder."""

_ENCODE: Callable[[Any, int], Any] = (
    c_make_encoder(None, _JSON.default, encode_basestring_ascii, None, ":", ",", False, False, True)
    if c_make_encoder is not None
    else lambda obj, _level: (_JSON.encode(obj),)
)
"""``_JSON``'s C encoder, made once (``JSONEncoder.encode`` makes it anew per call): the same
arguments ``JSONEncoder.iterencode`` passes (ensure_ascii, allow_nan, unsorted keys) but no
circular-reference markers, which an operation's flat dict of numbers and strings does not need."""

_ENCODERS: dict[type[Operation], Callable[[Operation], str]] = {}


def step_json(op: Operation) -> str:
    """``json.dumps(op.to_json(), separators=(",", ":"))``, the same text (see the module)."""
    encode = _ENCODERS.get(type(op))
    if encode is None:
        encode = _ENCODERS[type(op)] = encoder_for(type(op))
    return encode(op)


def general_step_json(op: Operation) -> str:
    """The general path: ``op.to_json()`` through the C encoder."""
    return "".join(_ENCODE(op.to_json(), 0))


_SLOTS: dict[str, tuple[str, str, str]] = {
    # field annotation: (template slot, exact type check of value v, what fills the slot)
    "int": ("%d", "type({v}) is int", "{v}"),
    "str": ("%s", "type({v}) is str", "_escape({v})"),
    "bool": ("%s", "type({v}) is bool", '("true" if {v} else "false")'),
}


def encoder_for(cls: type[Operation]) -> Callable[[Operation], str]:
    """The function that gives ``step_json`` of an operation of exactly ``cls``."""
    fields = dataclasses.fields(cls)
    if (
        getattr(cls, "to_json") is not Operation.to_json  # noqa: B009 (the function, not a bound method)
        or any(f.type not in _SLOTS or f.name == "op" for f in fields)
    ):
        return general_step_json
    template = '{"op":' + encode_basestring_ascii(cls.kind).replace("%", "%%")
    checks, fills, reads = [], [], []
    for i, f in enumerate(fields):
        slot, check, fill = _SLOTS[str(f.type)]
        template += "," + encode_basestring_ascii(f.name).replace("%", "%%") + ":" + slot
        reads.append(f"    v{i} = op.{f.name}")
        checks.append(check.format(v=f"v{i}"))
        fills.append(fill.format(v=f"v{i}"))
    template += "}"
    if not fields:
        text = template.replace("%%", "%")
        return lambda _op: text
    source = "\n".join(
        [
            "def encode(op):",
            *reads,
            f"    if {' and '.join(checks)}:",
            f"        return _TEMPLATE % ({', '.join(fills)},)",
            "    return _general(op)",
        ]
    )
    env: dict[str, Any] = {"_TEMPLATE": template, "_escape": encode_basestring_ascii, "_general": general_step_json}
    exec(compile(source, f"<step_json {cls.__name__}>", "exec"), env)  # from the field names only
    encode: Callable[[Operation], str] = env["encode"]
    return encode
