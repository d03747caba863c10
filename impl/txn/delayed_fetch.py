"""Delayed consumer fetches at a partition leader of the exactly-once slice (DelayedFetch in
Kafka's fetch purgatory; model.txn_delayed_fetch is the rule).

Guarantees (impl.purgatory's, the one purgatory of every slice's reference): a parked fetch
completes exactly once (``take_ready`` and ``expire`` remove what they return; ``expire`` of a
fetch already answered returns None), in creation order; a duplicated request is parked twice and
each copy is answered. What is ready is decided by the broker
(impl.txn.broker), which re-checks the fetches of a partition when its HW (and so its LSO) moves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..purgatory import Purgatory


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


class FetchPurgatory(Purgatory[ParkedFetch]):
    """The parked fetches of one broker, in creation order (impl.purgatory)."""

    def take_ready(self, partition: str, ready: Callable[[ParkedFetch], bool]) -> list[ParkedFetch]:
        """checkAndComplete on ``partition``'s key: remove and return every fetch ``ready`` accepts."""
        return self.take(lambda op: op.partition == partition and ready(op))
