"""The produce purgatory: acks=-1 requests waiting for the leader HW (kafka-facts §6).

Guarantees: each delayed produce completes exactly once (forceComplete semantics), with the first
of: HW past its record (NONE / NOT_ENOUGH_REPLICAS_AFTER_APPEND), its deadline
(REQUEST_TIMED_OUT), or the broker losing leadership (NOT_LEADER_OR_FOLLOWER). Completion order is
creation order. A duplicated request is watched twice (it appended twice).
"""

from __future__ import annotations

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


class ProducePurgatory:
    """Pending delayed produces of one broker, in creation order."""

    def __init__(self) -> None:
        self._pending: list[DelayedProduce] = []
        self._next_op_id = 0

    def __len__(self) -> int:
        return len(self._pending)

    def watch(self, req: int, offset: int, deadline_ms: int, client: int) -> DelayedProduce:
        """Start watching a produce whose record was appended at ``offset``."""
        op = DelayedProduce(self._next_op_id, req, offset, deadline_ms, client)
        self._next_op_id += 1
        self._pending.append(op)
        return op

    def complete_ready(self, hw: int, maximal_isr_size: int, min_isr: int) -> list[tuple[DelayedProduce, int]]:
        """checkEnoughReplicasReachOffset: every op whose record is below the HW completes, NONE or
        NOT_ENOUGH_REPLICAS_AFTER_APPEND when the maximal ISR is smaller than the min ISR."""
        error = NONE if maximal_isr_size >= min_isr else NOT_ENOUGH_REPLICAS_AFTER_APPEND
        done = [op for op in self._pending if hw > op.offset]
        self._pending = [op for op in self._pending if hw <= op.offset]
        return [(op, error) for op in done]

    def expire(self, op_id: int) -> DelayedProduce | None:
        """The op whose deadline passed, removed; None if it already completed."""
        for op in self._pending:
            if op.op_id == op_id:
                self._pending.remove(op)
                return op
        return None

    def take_all(self) -> list[DelayedProduce]:
        """Remove every pending op (leadership lost or broker crashed), in creation order."""
        ops, self._pending = self._pending, []
        return ops
