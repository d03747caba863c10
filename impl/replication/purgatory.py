"""The purgatory of one broker: delayed produces (acks=-1 waiting for the HW) and delayed fetches
(waiting for minBytes), one structure as Kafka's DelayedOperationPurgatory (kafka-facts §6).

Guarantees (impl.purgatory's, shared with the exactly-once slice's delayed fetches): each parked
operation completes exactly once (forceComplete semantics): ``take_*`` removes what it returns,
``expire`` returns None for an operation already gone. Completion order is creation order. A
duplicated request is parked twice (each copy is answered). What completes an operation is
decided by the broker (impl.replication.broker), which re-checks the purgatory on the triggers
Kafka uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kconform.traces.events import NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND

from ..purgatory import Purgatory as SharedPurgatory


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


class Purgatory(SharedPurgatory[Delayed]):
    """Parked operations of one broker, in creation order (impl.purgatory), with the replication
    slice's two kinds."""

    def watch(self, req: int, offset: int, deadline_ms: int, client: int) -> DelayedProduce:
        """Start watching a produce whose record was appended at ``offset``."""
        op = self.park(lambda op_id: DelayedProduce(op_id, req, offset, deadline_ms, client))
        assert isinstance(op, DelayedProduce)
        return op

    def watch_fetch(self, make: Callable[[int], DelayedFetch]) -> DelayedFetch:
        """Park the fetch ``make(op_id)`` builds."""
        op = self.park(make)
        assert isinstance(op, DelayedFetch)
        return op

    def complete_ready(self, hw: int, maximal_isr_size: int, min_isr: int) -> list[tuple[DelayedProduce, int]]:
        """checkEnoughReplicasReachOffset: every produce whose record is below the HW completes, NONE
        or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the maximal ISR is smaller than the min ISR."""
        error = NONE if maximal_isr_size >= min_isr else NOT_ENOUGH_REPLICAS_AFTER_APPEND
        done = self.take(lambda op: isinstance(op, DelayedProduce) and hw > op.offset)
        return [(op, error) for op in done if isinstance(op, DelayedProduce)]

    def take_fetches(self, ready: Callable[[DelayedFetch], bool]) -> list[DelayedFetch]:
        """Remove and return every parked fetch ``ready`` accepts (DelayedFetch.tryComplete)."""
        done = self.take(lambda op: isinstance(op, DelayedFetch) and ready(op))
        return [op for op in done if isinstance(op, DelayedFetch)]
