"""Delayed consumer fetches of the exactly-once slice: fetch.min.bytes / fetch.max.wait.ms at the
partition leader, with the read_committed bound (the LSO) that the replication slice lacks.

Kafka (ReplicaManager.fetchMessages, kafka-facts §6): a Fetch with maxWaitMs > 0 that finds no
error and fewer than minBytes below its isolation bound is parked as a DelayedFetch watched under
its partition's key. The bound is the fetch's FetchIsolation: HIGH_WATERMARK for read_uncommitted,
TXN_COMMITTED (the last stable offset) for read_committed (KIP-98; DelayedFetch.tryComplete's
``endOffset`` is ``lastStableOffset`` when the isolation level is READ_COMMITTED). A re-check
(``ready``, DelayedFetch.tryComplete) completes it when

- the broker no longer leads the partition (case A: answered NOT_LEADER_OR_FOLLOWER; the slice's
  data leaders never move, so only a parked copy at a non-leader could meet it, and none is parked);
- the fetch offset lies past the bound (the start offset above the bound: a truncated leader);
- the records between the start offset and the bound reach minBytes (one record counts as one
  byte; markers and aborted records count, as Kafka counts the bytes of the log below the bound).

The bound moves only with the HW here: an append leaves both the HW and the LSO where they were,
and a marker written below an unreplicated transaction holds the LSO until the HW passes it
(ProducerStateManager.unreplicatedTxns, kafka-facts §2.4). So the LSO advances, and parked
read_committed fetches are re-checked, when the HW advances (Partition.tryCompleteDelayedRequests,
ReplicaManager's ``LeaderHwChange.INCREASED``). At its deadline a parked fetch answers what is
there (the timing wheel's expiry). The answer is always a fresh read at completion time within the
request's own isolation level (DelayedFetch.onComplete → readFromLocalLog with the request's
FetchParams): KAFKA-5355 (0.11.0, Blocker) was a broker whose delayed fetch lost the isolation level
and returned records beyond the LSO to read_committed consumers.

The bookkeeping (due, expiry, overdue) is model.delayed, shared with the replication slice's
purgatory (model.purgatory); the state transitions are model.txn_state's.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model import txn_partition as T
from kconform.model.errors import NONE


@dataclass(frozen=True)
class TxnDelayedFetch:
    """A consumer Fetch parked at ``node`` (DelayedFetch): the request, its isolation level,
    minBytes (records) and deadline. ``start_offset`` is where the byte count starts: the fetch
    offset, or the bound when the fetch asked above it (LocalLog.read's offset metadata)."""

    req: int
    node: int
    partition: str
    fetch_offset: int
    start_offset: int
    read_committed: bool
    min_bytes: int
    deadline_ms: int


@dataclass(frozen=True, order=True)
class DelayedRead:
    """What a completed delayed fetch returned: the end of its records (last offset + 1; when none,
    the fetch offset or the bound if lower) and its isolation bound at completion (read by
    DelayedFetchIsolation)."""

    req: int
    partition: str
    read_committed: bool
    end: int
    bound: int


def bound(p: T.Partition, read_committed: bool) -> int:
    """The fetch's isolation bound (FetchIsolation): the LSO for read_committed (TXN_COMMITTED),
    the HW for read_uncommitted (HIGH_WATERMARK)."""
    return T.last_stable_offset(p) if read_committed else p.hw


def answers_at_once(answer: T.FetchAnswer, min_bytes: int, max_wait_ms: int) -> bool:
    """ReplicaManager.fetchMessages answers without waiting when maxWaitMs <= 0, on an error, or
    with at least minBytes below the bound (records counted as bytes)."""
    return max_wait_ms <= 0 or answer.error != NONE or len(answer.records) >= min_bytes


def park(
    p: T.Partition,
    node: int,
    req: int,
    fetch_offset: int,
    read_committed: bool,
    min_bytes: int,
    deadline_ms: int,
) -> TxnDelayedFetch:
    """The DelayedFetch a fetch that found too little becomes."""
    start = min(fetch_offset, bound(p, read_committed))
    return TxnDelayedFetch(req, node, p.name, fetch_offset, start, read_committed, min_bytes, deadline_ms)


def ready(p: T.Partition, df: TxnDelayedFetch) -> bool:
    """DelayedFetch.tryComplete for one partition at its own isolation level (see the module)."""
    if df.node != p.leader:
        return True
    end = bound(p, df.read_committed)
    if df.start_offset > end:
        return True
    return end - df.start_offset >= df.min_bytes


def read(p: T.Partition, df: TxnDelayedFetch) -> tuple[T.FetchAnswer, DelayedRead]:
    """DelayedFetch.onComplete: a fresh read at the request's isolation level, and what it returned."""
    answer = T.consumer_fetch(p, df.node, df.fetch_offset, df.read_committed)
    limit = bound(p, df.read_committed)
    # an empty read returned nothing above anything, even from a position past the bound (a
    # consumer that read to the HW read_uncommitted, then fetches read_committed below an open
    # transaction's first offset: Kafka answers empty, DelayedFetch.onComplete's readFromLog)
    end = answer.records[-1].offset + 1 if answer.records else min(df.fetch_offset, limit)
    return answer, DelayedRead(df.req, df.partition, df.read_committed, end, limit)


def describe(df: TxnDelayedFetch) -> str:
    """One line naming a parked fetch (for violations)."""
    isolation = "read_committed" if df.read_committed else "read_uncommitted"
    return f"delayed fetch {df.req} ({isolation}, {df.partition} offset {df.fetch_offset}, minBytes {df.min_bytes})"
