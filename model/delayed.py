"""The purgatory's bookkeeping, written once for every slice: parked operations, the ones a
completion trigger found completable (``due``), expiry and the report of a trigger not honoured.

Kafka parks a request it cannot answer yet as a DelayedOperation in a DelayedOperationPurgatory
(``tryCompleteElseWatch``), re-checks the watchers of a key when something changes
(``checkAndComplete``: each watcher's ``tryComplete``), and force-completes an operation at its
deadline (the timing wheel's expiry); ``forceComplete`` runs ``onComplete`` exactly once. What a
slice parks and when its operations are completable differ (model.purgatory: the replication
slice's delayed produces and fetches; model.txn_delayed_fetch: the exactly-once slice's
read_committed fetches); this module holds what they share, over tuples of immutable operations:

- ``recheck``: a trigger re-checks the parked operations; those ``ready`` now become due (at most
  once per parked copy: a duplicated request parked twice has two copies with one ``req``);
- ``remove``: an operation completed and leaves with its obligation;
- ``overdue`` / ``expire``: when time moves on, an operation still parked that a trigger made due
  earlier was not completed synchronously, as Kafka completes it in the handler that pulled the
  trigger (reported once, read by the slices' DelayedTriggersHonoured); then every operation whose
  deadline came is due (its expiry).

Every function is pure: it returns new tuples and never reads a clock of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar


class Parked(Protocol):
    """What the bookkeeping reads of a parked operation: its request id and its deadline."""

    @property
    def req(self) -> int: ...

    @property
    def deadline_ms(self) -> int: ...


Op = TypeVar("Op", bound=Parked)


def copies(ops: Sequence[Parked], req: int) -> int:
    """How many parked copies request ``req`` has (a duplicated request is parked twice)."""
    return sum(1 for op in ops if op.req == req)


def recheck(ops: Sequence[Op], due: tuple[int, ...], ready: Callable[[Op], bool]) -> tuple[int, ...]:
    """checkAndComplete: ``due`` plus the request of every parked operation ``ready`` accepts now
    (a copy already due is not counted twice)."""
    out = list(due)
    for op in ops:
        if out.count(op.req) < copies(ops, op.req) and ready(op):
            out.append(op.req)
    return tuple(out)


def remove(ops: tuple[Op, ...], due: tuple[int, ...], op: Op) -> tuple[tuple[Op, ...], tuple[int, ...]]:
    """``op`` completed (forceComplete runs once): one copy leaves, with one due mark of its request."""
    i = ops.index(op)
    left = list(due)
    if op.req in left:
        left.remove(op.req)
    return ops[:i] + ops[i + 1 :], tuple(left)


def overdue(ops: Sequence[Op], due: tuple[int, ...]) -> list[Op]:
    """The parked operations a trigger made due that are still parked (a trigger not honoured)."""
    return [op for op in ops if op.req in due]


def expire(ops: Sequence[Op], due: tuple[int, ...], now_ms: int) -> tuple[int, ...]:
    """``due`` plus every parked operation whose deadline has come (the timing wheel's expiry)."""
    expired = [op.req for op in ops if op.deadline_ms <= now_ms and op.req not in due]
    return (*due, *expired)


def late_message(where: str, what: str, now_ms: int) -> str:
    """The one line DelayedTriggersHonoured reports for an operation not completed in time."""
    return f"{where}: {what} was completable since an earlier trigger and still waits at {now_ms} ms"


def past_deadline_message(where: str, what: str, now_ms: int, deadline_ms: int) -> str:
    """The one line PurgatoryDeadlines reports for an operation that outlived its timeout."""
    return f"{where}: {what} still waits at {now_ms} ms, past its deadline {deadline_ms} ms"
