"""Delayed consumer fetches at a partition leader of the exactly-once slice (DelayedFetch in
Kafka's fetch purgatory; model.txn_delayed_fetch is the rule).

Guarantees: a parked fetch completes exactly once (``take_ready`` and ``expire`` remove what they
return; ``expire`` of a fetch already answered returns None), in creation order; a duplicated
request is parked twice and each copy is answered. What is ready is decided by the broker
(impl.txn.broker), which re-checks the fetches of a partition when its HW (and so its LSO) moves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class ParkedFetch:
    """One parked consumer Fetch: purgatory id, request (message) id, the consumer's node, the
    request's fields, where the byte count starts, minBytes (records), deadline and timer."""

    op_id: int
    req: int
    client: int
    partition: str
    fetch_offset: int
    start_offset: int
    read_committed: bool
    min_bytes: int
    deadline_ms: int
    timer: int | None = None


class FetchPurgatory:
    """The parked fetches of one broker, in creation order."""

    def __init__(self) -> None:
        self._parked: list[ParkedFetch] = []
        self._next_op_id = 0

    def __len__(self) -> int:
        return len(self._parked)

    def park(self, make: Callable[[int], ParkedFetch]) -> ParkedFetch:
        """tryCompleteElseWatch that did not complete: the fetch ``make(op_id)`` waits."""
        op = make(self._next_op_id)
        self._next_op_id += 1
        self._parked.append(op)
        return op

    def take_ready(self, partition: str, ready: Callable[[ParkedFetch], bool]) -> list[ParkedFetch]:
        """checkAndComplete on ``partition``'s key: remove and return every fetch ``ready`` accepts."""
        done = [op for op in self._parked if op.partition == partition and ready(op)]
        self._parked = [op for op in self._parked if op not in done]
        return done

    def expire(self, op_id: int) -> ParkedFetch | None:
        """The fetch whose deadline passed, removed; None if it already completed."""
        for op in self._parked:
            if op.op_id == op_id:
                self._parked.remove(op)
                return op
        return None
