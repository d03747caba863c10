"""A broker's purgatory in the reference implementation, written once for every slice: parked
operations in creation order, each completed exactly once (Kafka's DelayedOperationPurgatory and
``forceComplete``; kafka-facts §6).

Guarantees: ``take`` and ``take_all`` remove what they return, ``expire`` returns None for an
operation already gone, so no operation is answered twice; completion order is creation order; a
duplicated request parked twice is two operations (each is answered). What completes an operation,
and when the purgatory is re-checked, is the broker's (impl.replication.broker: delayed produces
and fetches; impl.txn.broker: delayed consumer fetches at the LSO or the HW).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class Operation(Protocol):
    """What the purgatory reads of a parked operation: its purgatory id."""

    @property
    def op_id(self) -> int: ...


Op = TypeVar("Op", bound=Operation)


class Purgatory(Generic[Op]):
    """Parked operations of one broker, in creation order."""

    def __init__(self) -> None:
        self._pending: list[Op] = []
        self._next_op_id = 0

    def __len__(self) -> int:
        return len(self._pending)

    def park(self, make: Callable[[int], Op]) -> Op:
        """tryCompleteElseWatch that did not complete: the operation ``make(op_id)`` builds waits."""
        op = make(self._next_op_id)
        self._next_op_id += 1
        self._pending.append(op)
        return op

    def keep(self, op: Op) -> None:
        """Park ``op`` again, unchanged (its timer still runs): only a mutant does this."""
        self._pending.append(op)

    def take(self, ready: Callable[[Op], bool]) -> list[Op]:
        """checkAndComplete: remove and return every parked operation ``ready`` accepts."""
        done = [op for op in self._pending if ready(op)]
        self._pending = [op for op in self._pending if op not in done]
        return done

    def expire(self, op_id: int) -> Op | None:
        """The operation whose deadline passed, removed; None if it already completed."""
        for op in self._pending:
            if op.op_id == op_id:
                self._pending.remove(op)
                return op
        return None

    def take_all(self) -> list[Op]:
        """Remove every pending operation (leadership lost or broker crashed), in creation order."""
        ops, self._pending = self._pending, []
        return ops
