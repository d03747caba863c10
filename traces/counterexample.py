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
model search for some invariants); replay then checks only those (a model search's file that names
none: every invariant but the timer bounds, Counterexample.checked). Files are written atomically:
a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kconform.model.configs import AnyConfig
from kconform.model.invariants import INVARIANTS, TIMER_BOUNDS
from kconform.model.txn_invariants import INVARIANTS as TXN_INVARIANTS
from kconform.traces.atomicfile import atomic_text_writer
from kconform.traces.events import SCHEMA_VERSION, Event
from kconform.traces.events import SUPPORTED_SCHEMA_VERSIONS as SUPPORTED_SCHEMA_VERSIONS
from kconform.traces.inputs.errors import InputError
from kconform.traces.operations import Operation

FORMAT = "kconform-counterexample"
"""The ``format`` marker in every header."""

MODEL_IMPLEMENTATION = "model"
"""The ``implementation`` of files written by the model search (kconform explore): their steps are
model actions, which no implementation can run; they are judged model-only."""

VERDICT_KINDS: tuple[str, ...] = ("non-conformance", "invariant-violation", "pass")
"""non-conformance: the implementation reported an outcome the model does not allow;
invariant-violation: a named guarantee broke; pass: the run conformed (e.g. a recorded run)."""

_VERDICT_FIELDS: tuple[tuple[str, type], ...] = (
    ("kind", str),
    ("name", str),
    ("message", str),
    ("step", int),
)


class TraceFileError(InputError):
    """A counterexample / trace file that cannot be read: ``path``, the 1-based ``line`` (None when
    the problem is the file as a whole, e.g. it does not exist), the ``field`` and what is wrong."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str, field: str = "") -> None:
        super().__init__(path, line, field, message)

    @property
    def path(self) -> str:
        return self.file


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
        """The invariants the verdict was reached with (the verdict's ``invariants``); None: all. A
        model search's file (MODEL_IMPLEMENTATION) that names none was checked against every
        invariant but the bounds on an implementation's timers (model.invariants.TIMER_BOUNDS),
        which its atomic actions never claim to meet."""
        names = self.verdict.get("invariants")
        if names is not None:
            return frozenset(names)
        if self.implementation == MODEL_IMPLEMENTATION:
            return frozenset(INVARIANTS) - TIMER_BOUNDS
        return None


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
        unknown = sorted(set(checked) - set(INVARIANTS) - set(TXN_INVARIANTS))
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


# The reader is the validation boundary's (it imports this module's classes): see
# kconform.traces.inputs.trace_file. read_counterexample(path) -> Counterexample raises
# TraceFileError naming the file, the line, the field and the problem.
from kconform.traces.inputs.trace_file import read_trace_file  # noqa: E402

read_counterexample = read_trace_file
