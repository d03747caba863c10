"""Helpers for reference-cluster tests: pick events, replicate, steer single messages."""

from __future__ import annotations

from typing import TypeVar

from kconform.impl import ReferenceCluster
from kconform.traces import events as ev
from kconform.traces import operations as ops

E = TypeVar("E", bound=ev.Event)


def of(events: list[ev.Event], kind: type[E]) -> list[E]:
    """The events of one kind, in order."""
    return [e for e in events if isinstance(e, kind)]


def replicate(rc: ReferenceCluster, rounds: int = 4) -> list[ev.Event]:
    """Deliver everything and let the fetchers' backoff timers fire, ``rounds`` times."""
    out: list[ev.Event] = []
    for _ in range(rounds):
        out += rc.apply(ops.Settle(10_000)) + rc.apply(ops.Advance(500))
    return out + rc.apply(ops.Settle(10_000))


def deliver(rc: ReferenceCluster, payload: type, src: int | None = None, dst: int | None = None) -> list[ev.Event]:
    """Deliver the oldest in-flight message of ``payload`` type (optionally from/to a node)."""
    index = rc.cluster.index_of(payload, src, dst)
    assert index is not None, f"no {payload.__name__} in flight from {src} to {dst}"
    return rc.apply(ops.Deliver(index))
