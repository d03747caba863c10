"""A JSON Lines trace or counterexample file, checked completely before anything judges it.

What is checked, in order, each failure a ``TraceFileError`` (an ``InputError``) naming the line
and the field:

1. the file: at most ``jsontext.MAX_FILE_BYTES``, UTF-8, not empty, lines at most
   ``jsontext.MAX_LINE_BYTES``, at most ``limits.MAX_STEPS`` steps;
2. every line: JSON as ``jsontext.loads`` accepts it (no duplicate keys, NaN, huge integers or
   deep nesting), an object;
3. the header: format marker and schema version first (their messages say what the file is), then
   the header schema of ``event-schema.json`` (types, ranges, unknown keys), the configuration
   (``inputs.config``), the verdict: an invariant-violation names an invariant of the file's slice,
   a non-conformance an event kind, ``invariants`` (never empty) only invariants of that slice, the
   step one of the file's (or -1);
4. every step: the step schema (the operation and every event, with Kafka's ranges and enums),
   numbered 0, 1, 2, ...; ``boot`` only as step 0; every id checked against the configuration
   (``inputs.references``); an operation of the other slice refused;
5. the file as a whole: at least one event to judge (a file without any is never a pass).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn

from kconform.model import invariants as replication_invariants
from kconform.model import txn_invariants
from kconform.model.config import ConfigError, ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.events import EVENT_TYPES, SCHEMA_VERSION, Event
from kconform.traces.inputs import jsontext, limits, references
from kconform.traces.inputs.config import parse_config
from kconform.traces.inputs.schemacheck import SchemaProblem, check_def
from kconform.traces.operations import OPERATION_TYPES, Boot, operation_from_json

if TYPE_CHECKING:
    from kconform.traces.counterexample import Counterexample, Step


def _converter(typ: str) -> Callable[[Any], Any] | None:
    from kconform.traces.schema import struct_class

    cls = struct_class(typ)
    if cls is not None:
        return lambda v: tuple(cls(*x) for x in v)
    return tuple if typ.startswith("tuple[") else None


@cache
def _decoders() -> dict[str, tuple[type[Event], tuple[tuple[str, Callable[[Any], Any] | None], ...]]]:
    """Per kind: the class and (field, converter) pairs, for events the schema already accepted."""
    return {
        kind: (cls, tuple((f.name, _converter(str(f.type))) for f in dataclasses.fields(cls)))
        for kind, cls in EVENT_TYPES.items()
    }


def decode_event(obj: dict[str, Any]) -> Event:
    """The Event of a schema-valid JSON object (no second type check: ``check_def`` did it)."""
    cls, fields = _decoders()[obj["kind"]]
    return cls(**{name: obj[name] if conv is None else conv(obj[name]) for name, conv in fields})


def invariant_names(cfg: AnyConfig) -> tuple[str, ...] | None:
    """The invariants the judge of ``cfg``'s slice can check (None: a slice registered at run time,
    whose judge checks the names itself)."""
    if isinstance(cfg, TxnConfig):
        return tuple(txn_invariants.INVARIANTS)
    if isinstance(cfg, ReplicationConfig):
        return tuple(replication_invariants.INVARIANTS)
    return None


class _File:
    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, line: int | None, field: str, message: str) -> NoReturn:
        from kconform.traces.counterexample import TraceFileError

        raise TraceFileError(self.name, line, message, field)

    def schema(self, value: Any, defname: str, line: int, prefix: str = "") -> None:
        try:
            check_def(value, defname)
        except SchemaProblem as e:
            path = e.path if not prefix else f"{prefix}.{e.path}" if e.path else prefix
            self.fail(line, path, e.message)


def read_trace_file(path: str | os.PathLike[str]) -> Counterexample:
    """Read and validate a JSON Lines trace / counterexample file (see the module docstring)."""
    from kconform.traces.counterexample import Counterexample

    f = _File(os.fspath(path))
    lines, complete = _lines(f)
    header = _object(f, lines, 1, complete, "the header")
    cfg, fields = _header(f, header)
    if len(lines) - 1 > limits.MAX_STEPS:
        f.fail(None, "", f"{len(lines) - 1:,} steps; kconform reads at most {limits.MAX_STEPS:,}")
    steps = tuple(
        _step(f, _object(f, lines, i + 2, complete, f"step {i}"), i + 2, i, cfg) for i in range(len(lines) - 1)
    )
    init_events = fields.pop("init_events")
    if not init_events and not any(s.events for s in steps):
        f.fail(None, "", "no events at all: nothing to judge (an empty trace is never a pass)")
    verdict = fields["verdict"]
    if verdict["kind"] != "pass" and not -1 <= verdict["step"] < max(len(steps), 1):
        f.fail(1, "verdict.step", f"step {verdict['step']} is not a step of the file (it has {len(steps)})")
    return Counterexample(steps=steps, init_events=init_events, **fields)


def _lines(f: _File) -> tuple[list[str], bool]:
    from kconform.traces.counterexample import FORMAT

    try:
        data = jsontext.read_bytes(f.name)
    except OSError as e:
        f.fail(None, "", f"cannot read the file: {e.strerror or e}")
    except jsontext.JsonTextError as e:
        f.fail(None, "", str(e))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        f.fail(data.count(b"\n", 0, e.start) + 1, "", f"not UTF-8 text (byte {data[e.start]:#04x})")
    if not text.strip():
        f.fail(1, "", f"empty file; expected a {FORMAT} header on line 1")
    lines = text.split("\n")
    complete = lines[-1] == ""  # a file written by write_counterexample ends with "\n"
    if complete:
        lines.pop()
    for number, line in enumerate(lines, 1):
        if len(line) > jsontext.MAX_LINE_BYTES:
            f.fail(number, "", f"a line of {len(line):,} characters (at most {jsontext.MAX_LINE_BYTES:,})")
    return lines, complete


def _object(f: _File, lines: list[str], line: int, complete: bool, what: str) -> dict[str, Any]:
    raw = lines[line - 1]
    if not raw.strip():
        f.fail(line, "", f"blank line; expected {what} as a JSON object")
    try:
        obj = jsontext.loads(raw)
    except jsontext.JsonTextError as e:
        if line == len(lines) and not complete and str(e).startswith("not valid JSON"):
            f.fail(line, "", f"the last line is cut off (the file was truncated while being written?): {e}")
        f.fail(line, "", str(e))
    if not isinstance(obj, dict):
        f.fail(line, "", f"{what} should be a JSON object, got {type(obj).__name__}")
    return obj


def _header(f: _File, header: dict[str, Any]) -> tuple[AnyConfig, dict[str, Any]]:
    from kconform.traces.counterexample import FORMAT, SUPPORTED_SCHEMA_VERSIONS

    marker = header.get("format")
    if marker != FORMAT:
        f.fail(1, "format", f"not a {FORMAT} file (the header's format is {marker!r})")
    version = header.get("schema_version")
    if isinstance(version, bool) or version not in SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(str(v) for v in SUPPORTED_SCHEMA_VERSIONS)
        newer = isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION
        hint = " (written by a newer kconform?)" if newer else ""
        f.fail(1, "schema_version", f"unsupported schema_version {version!r}{hint}; this kconform reads {supported}")
    f.schema(header, "header", 1)
    try:
        cfg = parse_config(header["config"])
    except ConfigError as e:
        f.fail(1, "config", f"bad config: {e}")
    verdict = header["verdict"]
    known = invariant_names(cfg)
    if known is None:
        known = (verdict["name"], *verdict.get("invariants", ()))
    if verdict["kind"] == "invariant-violation" and verdict["name"] not in known:
        f.fail(1, "verdict.name", f"unknown invariant {verdict['name']!r} in this slice (known: {', '.join(known)})")
    if verdict["kind"] == "non-conformance" and verdict["name"] not in EVENT_TYPES.keys() | OPERATION_TYPES.keys():
        f.fail(
            1,
            "verdict.name",
            f"{verdict['name']!r} is not an event or operation kind (a non-conformance names the handler, "
            "or the operation not done as asked)",
        )
    unknown = sorted(set(verdict.get("invariants", ())) - set(known))
    if unknown:
        f.fail(1, "verdict.invariants", f"unknown invariant(s) {unknown} in this slice (known: {', '.join(known)})")
    init = header.get("init_events", [])
    for position, event in enumerate(init):
        _refs(f, 1, f"init_events[{position}]", event, cfg)
    fields = {
        "config": cfg,
        "seed": header["seed"],
        "mutants": tuple(header["mutants"]),
        "implementation": header["implementation"],
        "verdict": verdict,
        "init_events": tuple(decode_event(e) for e in init),
    }
    return cfg, fields


def _refs(f: _File, line: int, where: str, event: dict[str, Any], cfg: AnyConfig) -> None:
    problem = references.event_problem(event, cfg)
    if problem is not None:
        f.fail(line, f"{where}.{problem[0]}", problem[1])


def _step(f: _File, obj: dict[str, Any], line: int, index: int, cfg: AnyConfig) -> Step:
    from kconform.traces.counterexample import Step

    f.schema(obj, "step", line)
    if obj["step"] != index:
        f.fail(line, "step", f"expected step {index} (steps are numbered 0, 1, 2, ... in order), got {obj['step']}")
    op = obj["op"]
    if op["op"] == Boot.kind and index != 0:
        f.fail(line, "op", "boot is step 0 only (its events are the cluster's start-up)")
    problem = references.operation_problem(op, cfg)
    if problem is not None:
        f.fail(line, f"op.{problem[0]}", problem[1])
    for position, event in enumerate(obj["events"]):
        _refs(f, line, f"events[{position}]", event, cfg)
    return Step(operation_from_json(op), tuple(decode_event(e) for e in obj["events"]))
