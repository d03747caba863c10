"""A JSON value checked against ``traces/event-schema.json``, generically.

The validator interprets the subset of JSON Schema 2020-12 the generated schema uses: ``$ref``,
``type`` (one or a list of types), ``const``, ``enum``, ``properties`` / ``required`` / ``additionalProperties: false``,
``items``, ``prefixItems`` / ``minItems``, ``minimum`` / ``maximum``, ``maxLength`` and ``oneOf``.
A ``oneOf`` whose alternatives are objects told apart by a ``const`` property (``kind`` of an event,
``op`` of an operation) is decided by that property, so an unknown kind is reported with the known
ones instead of as "matches none of 42 alternatives". The first problem is reported as a
``SchemaProblem``: the dotted path of the field and the message. Nothing here is written per event
kind or per operation: new kinds are checked as soon as the schema has them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any


class SchemaProblem(ValueError):
    """``path`` (e.g. ``events[2].leader``) and what is wrong there."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)


@cache
def _schema() -> dict[str, Any]:
    from kconform.traces.schema import json_schema  # here: traces.schema imports the readers

    return json_schema()


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a non-integer number" if not value.is_integer() else f"the number {value!r} (write it as an integer)"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "boolean": (bool,),
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _discriminator(alternatives: list[dict[str, Any]]) -> tuple[str, dict[Any, dict[str, Any]]] | None:
    """The property whose ``const`` tells ``alternatives`` apart, and const → alternative."""
    resolved = [_resolve(a) for a in alternatives]
    for key in ("kind", "op"):
        table = {}
        for alt in resolved:
            const = alt.get("properties", {}).get(key, {}).get("const")
            if const is None:
                break
            table[const] = alt
        else:
            return key, table
    return None


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        schema = _schema()["$defs"][name]
    return schema


@cache
def _oneof_table(defname: str) -> tuple[str, dict[Any, dict[str, Any]]] | None:
    return _discriminator(_schema()["$defs"][defname]["oneOf"])


def check(value: Any, schema: dict[str, Any], path: str = "") -> None:
    """SchemaProblem unless ``value`` is valid under ``schema`` (a node of the event schema)."""
    ref = schema.get("$ref")
    if ref is not None:
        name = ref.removeprefix("#/$defs/")
        target = _schema()["$defs"][name]
        if "oneOf" in target:
            _check_oneof(value, name, path)
            return
        check(value, target, path)
        return
    if "const" in schema:
        if value != schema["const"] or type(value) is not type(schema["const"]):
            raise SchemaProblem(path, f"should be {schema['const']!r}, got {_short(value)}")
        return
    if "enum" in schema:
        if not any(value == e and type(value) is type(e) for e in schema["enum"]):
            known = ", ".join(repr(e) for e in schema["enum"])
            raise SchemaProblem(path, f"{_short(value)} is not one of {known}")
        return
    typ = schema.get("type")
    if typ is not None:
        allowed = typ if isinstance(typ, list) else [typ]
        if not any(_is_type(value, t) for t in allowed):
            word = " or ".join(typ_word(t) for t in allowed)
            raise SchemaProblem(path, f"should be {word}, got {_json_type(value)} {_short(value)}")
    if isinstance(value, int) and not isinstance(value, bool):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            why = f" ({schema['description']})" if "description" in schema else ""
            raise SchemaProblem(path, f"{value} is outside {lo}..{hi}{why}")
    elif isinstance(value, str):
        limit = schema.get("maxLength")
        if limit is not None and len(value) > limit:
            raise SchemaProblem(path, f"a string of {len(value)} characters (at most {limit})")
    elif isinstance(value, list):
        _check_array(value, schema, path)
    elif isinstance(value, dict):
        _check_object(value, schema, path)


def _is_type(value: Any, typ: str) -> bool:
    """Whether ``value`` has the JSON Schema type ``typ`` (a boolean is not an integer)."""
    if typ == "null":
        return value is None
    return isinstance(value, _TYPES[typ]) and not (typ == "integer" and isinstance(value, bool))


def typ_word(typ: str) -> str:
    words = {"integer": "an integer", "boolean": "true or false", "string": "a string", "null": "null"}
    return words.get(typ, f"an {typ}")


def _check_array(value: list[Any], schema: dict[str, Any], path: str) -> None:
    prefix = schema.get("prefixItems")
    if prefix is not None:
        if len(value) < schema.get("minItems", 0) or (schema.get("items") is False and len(value) > len(prefix)):
            raise SchemaProblem(path, f"should have {len(prefix)} elements, got {len(value)}")
        for i, (item, sub) in enumerate(zip(value, prefix, strict=False)):
            check(item, sub, _join(path, i))
        return
    if len(value) < schema.get("minItems", 0):
        raise SchemaProblem(path, f"should have at least {schema['minItems']} element(s), got {len(value)}")
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            check(item, items, _join(path, i))


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> None:
    props: dict[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", ()) if k not in value]
    if missing:
        raise SchemaProblem(path, f"missing {', '.join(repr(k) for k in missing)}")
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(value) - set(props))
        if unknown:
            raise SchemaProblem(path, f"unknown key(s) {unknown} (known: {', '.join(props)})")
    for key, sub in props.items():
        if key in value:
            check(value[key], sub, _join(path, key))


_TAG_WORDS = {"event": "event kind", "operation": "operation"}


def _check_oneof(value: Any, defname: str, path: str) -> None:
    table = _oneof_table(defname)
    if table is None:  # pragma: no cover - the generated schema always has a discriminator
        raise SchemaProblem(path, f"cannot check a {defname} without a discriminating property")
    key, alternatives = table
    if not isinstance(value, dict):
        raise SchemaProblem(path, f"should be an object, got {_json_type(value)} {_short(value)}")
    tag = value.get(key)
    alt = alternatives.get(tag) if isinstance(tag, str) else None
    if alt is None:
        known = ", ".join(sorted(alternatives))
        word = _TAG_WORDS.get(defname, defname)
        raise SchemaProblem(_join(path, key), f"unknown {word} {_short(tag)} (known: {known})")
    check(value, alt, path)


def check_def(value: Any, defname: str, path: str = "") -> None:
    """SchemaProblem unless ``value`` is a valid ``$defs.<defname>`` (event, operation, header, step).
    A compiled validator decides; only a value it refuses is walked again to name the problem."""
    if _compiled(defname)(value):
        return
    check(value, {"$ref": f"#/$defs/{defname}"}, path)
    raise SchemaProblem(path, "does not match the schema")  # pragma: no cover - the walk names it first


Validator = Callable[[Any], bool]


@cache
def _compiled(defname: str) -> Validator:
    target = _schema()["$defs"][defname]
    if "oneOf" in target:
        table = _oneof_table(defname)
        assert table is not None
        key, alternatives = table
        by_tag = {tag: _compile(alt) for tag, alt in alternatives.items()}

        def one_of(v: Any) -> bool:
            if type(v) is not dict:
                return False
            tag = v.get(key)
            alt = by_tag.get(tag) if isinstance(tag, str) else None  # a list or dict tag is unhashable
            return alt is not None and alt(v)

        return one_of
    return _compile(target)


def _compile(schema: dict[str, Any]) -> Validator:
    """A boolean validator equivalent to ``check`` on ``schema`` (no messages: fast)."""
    ref = schema.get("$ref")
    if ref is not None:
        name = ref.removeprefix("#/$defs/")
        return lambda v: _compiled(name)(v)
    if "const" in schema:
        const = schema["const"]
        return lambda v: type(v) is type(const) and v == const
    if "enum" in schema:
        allowed = {(type(e), e) for e in schema["enum"]}
        return lambda v: (type(v), v) in allowed if isinstance(v, int | str | bool) else False
    typ = schema.get("type")
    if isinstance(typ, list):
        alternatives = [_compile({**schema, "type": one}) for one in typ]
        return lambda v: any(alt(v) for alt in alternatives)
    if typ == "null":
        return lambda v: v is None
    if typ == "integer":
        lo = schema.get("minimum", -(2**200))
        hi = schema.get("maximum", 2**200)
        return lambda v: type(v) is int and lo <= v <= hi
    if typ == "string":
        limit = schema.get("maxLength", 1 << 62)
        return lambda v: type(v) is str and len(v) <= limit
    if typ == "boolean":
        return lambda v: type(v) is bool
    if typ == "array":
        least = schema.get("minItems", 0)
        prefix = schema.get("prefixItems")
        if prefix is not None:
            parts = [_compile(p) for p in prefix]
            closed = schema.get("items") is False
            n = len(parts)
            return lambda v: (
                type(v) is list
                and len(v) >= least
                and (not closed or len(v) <= n)
                and all(p(x) for p, x in zip(parts, v, strict=False))
            )
        items = schema.get("items")
        item = _compile(items) if isinstance(items, dict) else (lambda v: True)
        return lambda v: type(v) is list and len(v) >= least and all(item(x) for x in v)
    if typ == "object":
        props = {k: _compile(sub) for k, sub in schema.get("properties", {}).items()}
        required = frozenset(schema.get("required", ()))
        closed = schema.get("additionalProperties") is False
        known = frozenset(props)

        def obj(v: Any) -> bool:
            if type(v) is not dict:
                return False
            keys = v.keys()
            if not required <= keys or (closed and not keys <= known):
                return False
            return all(check_(v[k]) for k, check_ in props.items() if k in v)

        return obj
    return lambda v: True
