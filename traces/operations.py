"""Operations: the inputs a conformance run gives an implementation (client calls, faults, time).

An operation is what a user of the cluster or the world does; the events it causes are what the
implementation reports back. Counterexample files store one operation per step with its events.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Operation:
    """Base class of all operations."""

    kind: ClassVar[str] = "op"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.kind}
        out.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})
        return out

    def __str__(self) -> str:
        args = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))
        return f"{self.kind}({args})"


@dataclass(frozen=True)
class Boot(Operation):
    """The cluster starts: brokers register, the first leader is elected, metadata spreads.
    Always step 0 of a run; replay turns it into ``Adapter.reset``."""

    kind: ClassVar[str] = "boot"


@dataclass(frozen=True)
class Produce(Operation):
    """The producer sends record ``rid`` with ``acks`` to the broker it believes leads."""

    kind: ClassVar[str] = "produce"
    rid: int
    acks: int


@dataclass(frozen=True)
class Consume(Operation):
    """The read_uncommitted consumer fetches from ``offset`` at the broker it believes leads."""

    kind: ClassVar[str] = "consume"
    offset: int


@dataclass(frozen=True)
class Crash(Operation):
    """Broker ``broker`` crashes (loses what it did not flush)."""

    kind: ClassVar[str] = "crash"
    broker: int


@dataclass(frozen=True)
class Restart(Operation):
    """A crashed broker ``broker`` restarts and registers with the controller."""

    kind: ClassVar[str] = "restart"
    broker: int


@dataclass(frozen=True)
class Isolate(Operation):
    """Cut ``broker`` off from every other node, the controller included, until ``heal``."""

    kind: ClassVar[str] = "isolate"
    broker: int


@dataclass(frozen=True)
class Heal(Operation):
    """Remove every network partition."""

    kind: ClassVar[str] = "heal"


@dataclass(frozen=True)
class Deliver(Operation):
    """Deliver the in-flight message at position ``index`` (modulo the queue length) of the
    network queue ordered by send time; nothing if the queue is empty."""

    kind: ClassVar[str] = "deliver"
    index: int


@dataclass(frozen=True)
class DeliverTo(Operation):
    """Deliver the oldest in-flight message addressed to ``node`` (a broker id, or -1 for the
    controller); nothing if there is none."""

    kind: ClassVar[str] = "deliver_to"
    node: int


@dataclass(frozen=True)
class Drop(Operation):
    """Drop the in-flight message at ``index`` (modulo the queue length)."""

    kind: ClassVar[str] = "drop"
    index: int


@dataclass(frozen=True)
class Duplicate(Operation):
    """Deliver the in-flight message at ``index`` (modulo) twice: now and again later."""

    kind: ClassVar[str] = "duplicate"
    index: int


@dataclass(frozen=True)
class Advance(Operation):
    """Simulated time moves forward ``ms`` milliseconds; due timers fire in time order."""

    kind: ClassVar[str] = "advance"
    ms: int


@dataclass(frozen=True)
class Settle(Operation):
    """Deliver in-flight messages in send order until none is left or ``max_messages`` ran."""

    kind: ClassVar[str] = "settle"
    max_messages: int


@dataclass(frozen=True)
class Run(Operation):
    """A healthy network for ``ms`` milliseconds: deliver every in-flight message (bounded), then
    move the clock by at most 100 ms, until ``ms`` have passed. Cuts and crashes still apply."""

    kind: ClassVar[str] = "run"
    ms: int


@dataclass(frozen=True)
class MoveLeader(Operation):
    """An administrator asks the controller to make ``broker`` leader (preferred election);
    refused silently when ``broker`` is not in the ISR or not unfenced."""

    kind: ClassVar[str] = "move_leader"
    broker: int


@dataclass(frozen=True)
class ModelAction(Operation):
    """One atomic action of the model-level search (model.actions), e.g. ``replicate(1)``.

    Only steps of files written by ``kconform explore`` (implementation "model") carry it; their
    events are the handler calls of that action. No implementation can be driven by it: such a file
    is judged model-only."""

    kind: ClassVar[str] = "model_action"
    label: str


OPERATION_TYPES: dict[str, type[Operation]] = {
    cls.kind: cls
    for cls in (
        Boot,
        Produce,
        Consume,
        Crash,
        Restart,
        Isolate,
        Heal,
        Deliver,
        DeliverTo,
        Drop,
        Duplicate,
        Advance,
        Settle,
        Run,
        MoveLeader,
        ModelAction,
    )
}


class OperationDecodeError(ValueError):
    """A JSON object is not a valid operation."""


def operation_from_json(obj: Any) -> Operation:
    """Decode one operation; raise OperationDecodeError naming the problem (unknown op, a missing
    or ill-typed field: ``str`` fields take a JSON string, every other field an integer)."""
    if not isinstance(obj, dict):
        raise OperationDecodeError(f"an operation is a JSON object, got {type(obj).__name__}")
    kind = obj.get("op")
    cls = OPERATION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise OperationDecodeError(f"unknown operation {kind!r}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = obj.get(f.name)
        if f.type == "str":
            if not isinstance(value, str):
                raise OperationDecodeError(f"{kind}: field {f.name!r} should be a string, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int):
            raise OperationDecodeError(f"{kind}: field {f.name!r} should be an integer, got {value!r}")
        kwargs[f.name] = value
    return cls(**kwargs)
