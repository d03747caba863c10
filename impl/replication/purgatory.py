"""The purgatory of one broker: delayed produces (acks=-1 waiting for the HW) and delayed fetches
(waiting for minBytes), one structure as Kafka's DelayedOperationPurgatory (kafka-facts §6).

Guarantees: each parked operation completes exactly once (forceComplete semantics): ``take_*``
removes what it returns, ``expire`` returns None for an operation already gone. Completion order
is creation order. A duplicated request is parked twice (each copy is answered). What completes
an operation is decided by the broker (impl.replication.broker), which re-checks the purgatory on
the triggers Kafka uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kconform.traces.events import NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND


@dataclass
class DelayedProduce:
    """One watched acks=-1 produce: purgatory id, request id, appended offset, reply address."""

    op_id: int
    req: int
    offset: int
    deadline_ms: int
    client: int
    timer: int | None = None


@dataclass
class DelayedFetch:
    """One parked Fetch: purgatory id, request (message) id, the requester (a follower's broker id,
    or the consumer's node with ``follower`` False), the request's fields, the offset the byte count
    starts from, minBytes (records) and the deadline."""

    op_id: int
    req: int
    client: int
    follower: bool
    fetch_offset: int
    start_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int
    min_bytes: int
    deadline_ms: int
    request: object = None
    """The request payload, to answer with (impl.replication.messages)."""
    timer: int | None = None


Delayed = DelayedProduce | DelayedFetch


class Purgatory:
    """Parked operations of one broker, in creation order."""

    def __init__(self) -> None:
        self._pending: list[Delayed] = []
        self._next_op_id = 0

    def __len__(self) -> int:
        return len(self._pending)

    def _new_id(self) -> int:
        self._next_op_id += 1
        return self._next_op_id - 1

    def watch(self, req: int, offset: int, deadline_ms: int, client: int) -> DelayedProduce:
        """Start watching a produce whose record was appended at ``offset``."""
        op = DelayedProduce(self._new_id(), req, offset, deadline_ms, client)
        self._pending.append(op)
        return op

    def watch_fetch(self, make: Callable[[int], DelayedFetch]) -> DelayedFetch:
        """Park the fetch ``make(op_id)`` builds."""
        op = make(self._new_id())
        self._pending.append(op)
        return op

    def keep(self, op: Delayed) -> None:
        """Park ``op`` again, unchanged (its timer still runs): only the survives-leader-change mutant."""
        self._pending.append(op)

    def complete_ready(self, hw: int, maximal_isr_size: int, min_isr: int) -> list[tuple[DelayedProduce, int]]:
        """checkEnoughReplicasReachOffset: every produce whose record is below the HW completes, NONE
        or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the maximal ISR is smaller than the min ISR."""
        error = NONE if maximal_isr_size >= min_isr else NOT_ENOUGH_REPLICAS_AFTER_APPEND
        done = [op for op in self._pending if isinstance(op, DelayedProduce) and hw > op.offset]
        self._pending = [op for op in self._pending if op not in done]
        return [(op, error) for op in done]

    def take_fetches(self, ready: Callable[[DelayedFetch], bool]) -> list[DelayedFetch]:
        """Remove and return every parked fetch ``ready`` accepts (DelayedFetch.tryComplete)."""
        done = [op for op in self._pending if isinstance(op, DelayedFetch) and ready(op)]
        self._pending = [op for op in self._pending if op not in done]
        return done

    def expire(self, op_id: int) -> Delayed | None:
        """The op whose deadline passed, removed; None if it already completed."""
        for op in self._pending:
            if op.op_id == op_id:
                self._pending.remove(op)
                return op
        return None

    def take_all(self) -> list[Delayed]:
        """Remove every pending op (leadership lost or broker crashed), in creation order."""
        ops, self._pending = self._pending, []
        return ops
