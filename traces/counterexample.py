"""Counterexample files: one conformance run, step by step, replayable and human-readable.

Format (JSON Lines, UTF-8, one JSON object per line)::

    {"format": "kconform-counterexample", "schema_version": 1, "config": {...}, "seed": 7,
     "mutants": ["..."], "implementation": "reference",
     "verdict": {"kind": "invariant-violation", "name": "...", "message": "...", "step": 4},
     "init_events": [...]}
    {"step": 0, "op": {"op": "produce", "rid": 3, "acks": -1}, "events": [{"kind": ...}, ...]}
    {"step": 1, ...}

Line 1 is the header; every further line is one step: the operation given to the implementation
and the events it reported, in handler order. ``init_events`` (optional when reading, always
written) are the events of bringing the cluster up (``Adapter.reset``), so the model can judge a
file without re-running the implementation. ``verdict.kind`` is one of VERDICT_KINDS; extra keys
in the verdict are kept (e.g. the KIP that defines an invariant). One extra key has a meaning:
``invariants``, a list of invariant names, says the verdict was reached checking only those (a
model search for some invariants); replay then checks only those. Files are written atomically:
a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NoReturn

from kconform.model.config import ConfigError
from kconform.model.configs import AnyConfig, config_from_json
from kconform.model.invariants import INVARIANTS
from kconform.traces.atomicfile import atomic_text_writer
from kconform.traces.events import SCHEMA_VERSION, Event, EventDecodeError, event_from_json
from kconform.traces.operations import Operation, OperationDecodeError, operation_from_json

FORMAT = "kconform-counterexample"
"""The ``format`` marker in every header."""

MODEL_IMPLEMENTATION = "model"
"""The ``implementation`` of files written by the model search (kconform explore): their steps are
model actions, which no implementation can run; they are judged model-only."""

SUPPORTED_SCHEMA_VERSIONS: tuple[int, ...] = (1, SCHEMA_VERSION)
"""Event schema versions this kconform reads."""

VERDICT_KINDS: tuple[str, ...] = ("non-conformance", "invariant-violation", "pass")
"""non-conformance: the implementation reported an outcome the model does not allow;
invariant-violation: a named guarantee broke; pass: the run conformed (e.g. a recorded run)."""

_HEADER_KEYS = ("format", "schema_version", "config", "seed", "mutants", "implementation", "verdict")
_OPTIONAL_HEADER_KEYS = ("init_events",)
_STEP_KEYS = ("step", "op", "events")
_VERDICT_FIELDS: tuple[tuple[str, type], ...] = (
    ("kind", str),
    ("name", str),
    ("message", str),
    ("step", int),
)


class TraceFileError(ValueError):
    """A counterexample file that cannot be read: ``path``, the 1-based ``line`` (None when the
    problem is the file as a whole, e.g. it does not exist) and what is wrong with it."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Step:
    """One operation given to the implementation and the events it reported, in handler order."""

    op: Operation
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class Counterexample:
    """A whole run: how to set it up (config, seed, mutants, implementation), what happened
    (``init_events``, then ``steps``) and what the judge concluded (``verdict``, see make_verdict)."""

    config: AnyConfig
    seed: int
    mutants: tuple[str, ...]
    implementation: str
    verdict: dict[str, Any]
    steps: tuple[Step, ...]
    init_events: tuple[Event, ...] = ()

    def __post_init__(self) -> None:
        problem = _verdict_problem(self.verdict)
        if problem is not None:
            raise ValueError(problem)
        if not (isinstance(self.mutants, tuple) and all(isinstance(m, str) for m in self.mutants)):
            raise ValueError(f"mutants must be a tuple of names, got {self.mutants!r}")

    @property
    def checked(self) -> frozenset[str] | None:
        """The invariants the verdict was reached with (the verdict's ``invariants``); None: all."""
        names = self.verdict.get("invariants")
        return None if names is None else frozenset(names)


def make_verdict(kind: str, name: str, message: str, step: int) -> dict[str, Any]:
    """A verdict dict for Counterexample: ``kind`` from VERDICT_KINDS, ``name`` of the invariant
    or rule, a one-paragraph ``message`` saying why, and the ``step`` (0-based; -1 = start-up)."""
    verdict: dict[str, Any] = {"kind": kind, "name": name, "message": message, "step": step}
    problem = _verdict_problem(verdict)
    if problem is not None:
        raise ValueError(problem)
    return verdict


def _verdict_problem(verdict: Any) -> str | None:
    if not isinstance(verdict, dict):
        return f"the verdict is a JSON object, got {type(verdict).__name__}"
    for key, typ in _VERDICT_FIELDS:
        if key not in verdict:
            return f"the verdict has no {key!r}"
        value = verdict[key]
        if isinstance(value, bool) or not isinstance(value, typ):
            return f"verdict {key!r} should be {typ.__name__}, got {value!r}"
    if verdict["kind"] not in VERDICT_KINDS:
        return f"verdict kind {verdict['kind']!r} is not one of {', '.join(VERDICT_KINDS)}"
    checked = verdict.get("invariants")
    if checked is not None:
        if not (isinstance(checked, list) and all(isinstance(n, str) for n in checked)):
            return f"verdict 'invariants' should be a list of invariant names, got {checked!r}"
        unknown = sorted(set(checked) - set(INVARIANTS))
        if unknown:
            return f"verdict 'invariants' names unknown invariant(s) {unknown}"
    return None


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def write_counterexample(path: str | os.PathLike[str], cx: Counterexample) -> None:
    """Write ``cx`` to ``path`` atomically: the old file (if any) stays intact until the new one is
    complete and synced. The parent directory must exist."""
    with atomic_text_writer(path) as f:
        f.write(_dump_line(_header_json(cx)))
        for index, step in enumerate(cx.steps):
            f.write(_dump_line(_step_json(index, step)))


def _header_json(cx: Counterexample) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "config": cx.config.to_json(),
        "seed": cx.seed,
        "mutants": list(cx.mutants),
        "implementation": cx.implementation,
        "verdict": cx.verdict,
        "init_events": [e.to_json() for e in cx.init_events],
    }


def _step_json(index: int, step: Step) -> dict[str, Any]:
    return {"step": index, "op": step.op.to_json(), "events": [e.to_json() for e in step.events]}


def _dump_line(obj: dict[str, Any]) -> str:
    # allow_nan=False: NaN is not JSON and other readers would refuse the file.
    return json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n"


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def read_counterexample(path: str | os.PathLike[str]) -> Counterexample:
    """Read and validate a counterexample file; raise TraceFileError naming the file, the line and
    the problem (missing, empty, not JSON, truncated, unsupported schema version, bad config,
    operation or event, steps not numbered 0, 1, 2, ...)."""
    name = os.fspath(path)
    lines = _split_lines(name, _read_text(name))
    reader = _LineReader(name, lines)
    header = reader.object_at(1, what="the header")
    cx_fields = _parse_header(reader, header)
    steps = tuple(_parse_step(reader, line=index + 2, index=index) for index in range(len(reader) - 1))
    return Counterexample(steps=steps, **cx_fields)


def _read_text(name: str) -> str:
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceFileError(name, None, f"cannot read the file: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise TraceFileError(name, line, f"not UTF-8 text (byte {data[e.start]:#04x})") from None


def _split_lines(name: str, text: str) -> list[str]:
    """The file's lines (split on "\\n"); an empty or whitespace-only file has no header at all."""
    if not text.strip():
        raise TraceFileError(name, 1, f"empty file; expected a {FORMAT} header on line 1")
    return text.split("\n")


class _LineReader:
    """Parses the lines of one file and raises TraceFileError with the file name and line."""

    def __init__(self, name: str, lines: list[str]) -> None:
        self.name = name
        # A file written by write_counterexample ends with "\n", so split() leaves "" last.
        self.complete = lines[-1] == ""
        self.lines = lines[:-1] if self.complete else lines

    def __len__(self) -> int:
        return len(self.lines)

    def fail(self, line: int, message: str) -> NoReturn:
        raise TraceFileError(self.name, line, message)

    def object_at(self, line: int, what: str) -> dict[str, Any]:
        raw = self.lines[line - 1]
        if not raw.strip():
            self.fail(line, f"blank line; expected {what} as a JSON object")
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            if line == len(self.lines) and not self.complete:
                self.fail(line, f"the last line is cut off (the file was truncated while being written?): {e.msg}")
            self.fail(line, f"not valid JSON: {e.msg} at column {e.colno}")
        if not isinstance(obj, dict):
            self.fail(line, f"{what} should be a JSON object, got {_json_type(obj)}")
        return obj


def _parse_header(reader: _LineReader, header: dict[str, Any]) -> dict[str, Any]:
    fail = reader.fail
    marker = header.get("format")
    if marker != FORMAT:
        fail(1, f"not a {FORMAT} file (the header's format is {marker!r})")
    version = header.get("schema_version")
    if version not in SUPPORTED_SCHEMA_VERSIONS or isinstance(version, bool):
        supported = ", ".join(str(v) for v in SUPPORTED_SCHEMA_VERSIONS)
        hint = " (written by a newer kconform?)" if isinstance(version, int) and version > SCHEMA_VERSION else ""
        fail(1, f"unsupported schema_version {version!r}{hint}; this kconform reads version {supported}")
    missing = [k for k in _HEADER_KEYS if k not in header]
    if missing:
        fail(1, f"the header has no {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(header) - set(_HEADER_KEYS) - set(_OPTIONAL_HEADER_KEYS))
    if unknown:
        fail(1, f"unknown header field(s) {unknown}")
    try:
        config = config_from_json(header["config"])
    except ConfigError as e:
        fail(1, f"bad config: {e}")
    seed = header["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int):
        fail(1, f"seed should be an integer, got {seed!r}")
    mutants = header["mutants"]
    if not (isinstance(mutants, list) and all(isinstance(m, str) for m in mutants)):
        fail(1, f"mutants should be a list of names, got {mutants!r}")
    implementation = header["implementation"]
    if not isinstance(implementation, str):
        fail(1, f"implementation should be a string, got {implementation!r}")
    problem = _verdict_problem(header["verdict"])
    if problem is not None:
        fail(1, problem)
    init_events = _parse_events(reader, 1, header.get("init_events", []), "init_events")
    return {
        "config": config,
        "seed": seed,
        "mutants": tuple(mutants),
        "implementation": implementation,
        "verdict": header["verdict"],
        "init_events": init_events,
    }


def _parse_step(reader: _LineReader, line: int, index: int) -> Step:
    obj = reader.object_at(line, what=f"step {index}")
    missing = [k for k in _STEP_KEYS if k not in obj]
    if missing:
        reader.fail(line, f"the step has no {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(obj) - set(_STEP_KEYS))
    if unknown:
        reader.fail(line, f"unknown step field(s) {unknown}")
    number = obj["step"]
    if isinstance(number, bool) or number != index:
        reader.fail(line, f"expected step {index} (steps are numbered 0, 1, 2, ... in order), got {number!r}")
    try:
        op = operation_from_json(obj["op"])
    except OperationDecodeError as e:
        reader.fail(line, f"step {index}: bad operation: {e}")
    return Step(op=op, events=_parse_events(reader, line, obj["events"], f"step {index}"))


def _parse_events(reader: _LineReader, line: int, value: Any, where: str) -> tuple[Event, ...]:
    if not isinstance(value, list):
        reader.fail(line, f"{where}: events should be a list, got {_json_type(value)}")
    events: list[Event] = []
    for position, obj in enumerate(value):
        try:
            events.append(event_from_json(obj))
        except EventDecodeError as e:
            reader.fail(line, f"{where}, event {position}: {e}")
    return tuple(events)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------


def format_program(cx: Counterexample) -> str:
    """The run as a readable Python-like program, one line per operation, the verdict at the end
    (as Hypothesis prints a failing stateful test). The step the verdict names is marked."""
    verdict_step = cx.verdict["step"] if cx.verdict["kind"] != "pass" else None
    lines = [
        f"config = {type(cx.config).__name__}.from_json({cx.config.to_json()!r})",
        f"cluster = Cluster({cx.implementation!r}, config, seed={cx.seed!r}, mutants={list(cx.mutants)!r})",
    ]
    for index, step in enumerate(cx.steps):
        marker = f"  # <- step {index}: {cx.verdict['kind']}" if index == verdict_step else ""
        lines.append(f"cluster.{step.op}{marker}")
    lines.extend(_verdict_comment(cx.verdict, len(cx.steps)))
    return "\n".join(lines) + "\n"


def _verdict_comment(verdict: dict[str, Any], steps: int) -> Iterable[str]:
    kind, name, step = verdict["kind"], verdict["name"], verdict["step"]
    if kind == "pass":
        where = f"after {steps} step(s)"
    elif 0 <= step < steps:
        where = f"at step {step}"
    elif step < 0:
        where = "during start-up"
    else:
        where = f"at step {step} (beyond the {steps} recorded)"
    yield f"# verdict: {kind} {name} {where}".rstrip()
    for text in str(verdict["message"]).splitlines():
        yield f"#   {text}".rstrip()
