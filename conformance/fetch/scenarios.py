"""The fetch-session slice's known-bug zoo: operation sequences that steer the cluster into the
situations of historic fetch-session bugs, each judged by the model like any run (a scenario
encodes a situation, never a verdict: it passes on the reference and fails on the mutant).
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.fetch_config import BROKER, FetchConfig
from kconform.traces import operations as o


@dataclass(frozen=True)
class Scenario:
    """A named operation sequence, the bug it is about and the reference mutants it exposes."""

    name: str
    bug: str
    mutants: tuple[str, ...]
    ops: tuple[o.Operation, ...]


def _fetch(client: int) -> tuple[o.Operation, ...]:
    return (o.Poll(client=client), o.Run(ms=300))


def _assign(client: int, *names: str) -> tuple[o.Operation, ...]:
    return tuple(o.Assign(client=client, partition=n, assigned=True) for n in names)


_IDLE_THEN_BUSY = (
    *_assign(0, "t-0"),
    *_assign(1, "t-1"),
    *_assign(2, "t-2"),
    *_fetch(0),
    o.Advance(ms=1_000),
    *_fetch(1),
    *(op for _ in range(13) for op in (o.Advance(ms=10_000), *_fetch(0))),
    *_fetch(2),
)

_SESSION_ORDER = (
    *_assign(1, "t-0", "t-1", "t-2"),
    *(o.AppendRecords(partition=n, count=2, txn=0) for n in ("t-0", "t-1", "t-2")),
    *(o.AdvanceHw(partition=n, offset=-1) for n in ("t-0", "t-1", "t-2")),
    *_fetch(1),
    *_fetch(1),
    o.DeleteRecords(partition="t-0", offset=1),
    *_fetch(1),
    o.DeleteRecords(partition="t-0", offset=2),
    o.DeleteRecords(partition="t-1", offset=1),
    *_fetch(1),
)

_OLD_BUSY_SESSIONS = (
    *_assign(1, "t-1"),
    *_assign(2, "t-2"),
    *_assign(0, "t-0", "t-1"),
    *_fetch(1),
    *_fetch(2),
    *(op for _ in range(13) for op in (o.Advance(ms=10_000), *_fetch(1), *_fetch(2))),
    *_fetch(0),
)
"""Consumer 1 and follower 2 (privileged) hold both slots and fetch every 10 s for 130 s, so no
session is idle past the eviction time but both are older than it; then consumer 0 (unprivileged,
two partitions) arrives and evicts consumer 1's session, the smallest of evictableByAll."""

_MOVES_REACH_THE_SESSION = (
    *_assign(0, "t-0", "t-1"),
    o.AppendRecords(partition="t-0", count=3, txn=0),
    o.AdvanceHw(partition="t-0", offset=0),
    *_fetch(0),
    o.AdvanceHw(partition="t-0", offset=1),
    *_fetch(0),
    o.AdvanceHw(partition="t-0", offset=0),
    o.AdvanceHw(partition="t-0", offset=-1),
    *_fetch(0),
    o.AppendRecords(partition="t-1", count=1, txn=1),
    o.AppendRecords(partition="t-1", count=20, txn=2),
    o.AdvanceHw(partition="t-1", offset=-1),
    *_fetch(0),
    o.DeleteRecords(partition="t-0", offset=9),
    *_fetch(0),
    o.DeleteRecords(partition="t-0", offset=2),
    o.ToggleLeadership(partition="t-1"),
    *_fetch(0),
    o.ToggleLeadership(partition="t-1"),
    *_fetch(0),
    o.Bounce(broker=BROKER),
    *_fetch(0),
    o.CloseSession(client=0),
    *_fetch(0),
)
"""Consumer 0's session of t-0 and t-1 while the partitions change under it: appends (plain,
committed, aborted; up to the largest batch an operation may ask for), the HW moved to an offset
below it, to 1 and to the LEO, the log start moved to the HW and then not back, leadership moved
away and back; then the broker restarts and the consumer closes. Every change of HW, log start or
error must reach the session's next incremental answer, and the judge checks that each operation
did what it asks (conformance.fetch.environment)."""

_AT_THE_EVICTION_TIME = (
    *_assign(0, "t-0"),
    *_assign(1, "t-1"),
    *_assign(2, "t-2"),
    *_fetch(0),
    *_fetch(2),
    o.Advance(ms=120_000 - 600),
    *_fetch(1),
    *_fetch(1),
)
"""Consumer 0's session (created at 0 ms) and follower 2's (at 300 ms) hold both slots, neither
older than the eviction time at its last touch; consumer 1 asks for a session exactly 120,000 ms
(the eviction time) after consumer 0's last use, and again 300 ms later: the first finds no session
idle for *more* than the eviction time and nothing evictable (no slot), the second evicts consumer
0's."""

_DUPLICATED_REQUEST = (
    *_assign(0, "t-0"),
    o.AppendRecords(partition="t-0", count=2, txn=0),
    o.AdvanceHw(partition="t-0", offset=-1),
    *_fetch(0),
    o.Poll(client=0),
    o.Duplicate(index=0),
    o.Run(ms=300),
    *_fetch(0),
    o.Poll(client=0),
    o.Duplicate(index=0),
    o.Drop(index=1),
    o.Run(ms=300),
    *_fetch(0),
)
"""Consumer 0's incremental request is duplicated on the way (a retry): the copy is handled first and
moves the session's epoch, so the original arrives with a stale epoch and is refused; the client
uses the first answer and ignores the second, and its next request is incremental again. Then once
more with the copy's answer lost: the client gets the refusal and falls back to a full request."""

_UNASSIGNED_IN_FLIGHT = (
    *_assign(0, "t-0", "t-1"),
    o.AppendRecords(partition="t-0", count=2, txn=0),
    o.AdvanceHw(partition="t-0", offset=-1),
    o.Poll(client=0),
    o.Assign(client=0, partition="t-0", assigned=False),
    o.Run(ms=300),
    *_fetch(0),
)
"""Consumer 0 loses t-0 while a request for it is in flight; the answer's records of t-0 reach no
one, and the next request forgets t-0."""

_OLD_PRIVILEGED_SESSION = (
    *_assign(2, "t-2"),
    *_fetch(2),
    *(op for _ in range(13) for op in (o.Advance(ms=10_000), *_fetch(2))),
    o.CloseSession(client=2),
    o.Drop(index=0),
    *_fetch(2),
    o.CloseSession(client=2),
    o.Drop(index=0),
    *_assign(2, "t-1"),
    *_fetch(2),
    *_fetch(2),
)
"""Follower 2's fetcher (privileged) keeps its session busy for 130 s, then restarts twice and both
close requests are lost (epoch -1, dropped on the way), so its two old sessions hold both slots: the
first older than the eviction time and used 300 ms ago, the second young. The third instance, with
two partitions, asks for a session: no session is idle past the eviction time, and the first is
the smallest of evictableByPrivileged (a privileged session older than the eviction time is in it,
FetchSessionCacheShard.touch), so it is evicted for the newcomer."""

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "second-fetch-in-flight",
            "KAFKA-8052: a fetch sent before the previous answer was handled reuses the session epoch",
            ("fetch-before-response",),
            (
                *_assign(0, "t-0"),
                *(o.Poll(client=0), o.Poll(client=0), o.Run(ms=300)),  # the run's first message: id 0
                *_fetch(0),
                *(o.Poll(client=0), o.Poll(client=0), o.Run(ms=300)),
            ),
        ),
        Scenario(
            "forget-a-partition",
            "platformatic/kafka#321: partitions no longer fetched must be listed as forgotten",
            ("no-forget",),
            (*_assign(0, "t-0", "t-1"), *_fetch(0), o.Assign(client=0, partition="t-1", assigned=False), *_fetch(0)),
        ),
        Scenario(
            "restart-loses-the-session",
            "redpanda#27749: after FETCH_SESSION_ID_NOT_FOUND the client must fall back to a full request",
            ("no-reset-on-session-error",),
            (*_assign(0, "t-0"), *_fetch(0), o.Bounce(broker=BROKER), *_fetch(0), *_fetch(0)),
        ),
        Scenario(
            "log-start-only-changes",
            "KAFKA-12330 and Redpanda CORE-14617: partitions included only for a new log start keep their "
            "place in the session's order, and are never left out",
            ("moves-all-included", "size-pass-updates-cache"),
            _SESSION_ORDER,
        ),
        Scenario(
            "evict-the-idle-session",
            "KAFKA-9137: a full cache evicts the least recently used session, not the oldest one",
            ("stale-last-used",),
            _IDLE_THEN_BUSY,
        ),
        Scenario(
            "evict-an-old-busy-session",
            "KIP-227 (FetchSessionCacheShard.touch / tryEvict): with no session idle past the eviction "
            "time, a session older than it is evictable by any newcomer, and a larger newcomer evicts the "
            "smallest such",
            (),
            _OLD_BUSY_SESSIONS,
        ),
        Scenario(
            "evict-at-the-eviction-time",
            "KIP-227 (FetchSessionCacheShard.tryEvict: lastUsed idle for more than evictionMs, a strict "
            "bound): a session idle for exactly the eviction time is not evicted by time",
            (),
            _AT_THE_EVICTION_TIME,
        ),
        Scenario(
            "duplicated-incremental-request",
            "KIP-227 (FetchManager.newContext: a session's epoch must match, else INVALID_FETCH_SESSION_EPOCH; "
            "FetchSessionHandler.handleResponse falls back to a full request only on its own request's error)",
            (),
            _DUPLICATED_REQUEST,
        ),
        Scenario(
            "unassigned-while-in-flight",
            "Fetcher / FetchCollector: data for a partition no longer assigned when the answer arrives is "
            "dropped, not delivered",
            (),
            _UNASSIGNED_IN_FLIGHT,
        ),
        Scenario(
            "request-lost-in-a-restart",
            "KIP-227 with a broker restart: a request in flight when the broker restarts is lost with its "
            "connection; the client times out (request.timeout.ms, FetchSessionHandler.handleError) and "
            "starts over with a full request",
            (),
            (
                *_assign(0, "t-0"),
                *_fetch(0),
                o.Poll(client=0),
                o.Bounce(broker=BROKER),
                o.Advance(ms=31_000),
                *_fetch(0),
                *_fetch(0),
            ),
        ),
        Scenario(
            "partition-moves-reach-the-session",
            "KIP-227 (CachedPartition.maybeUpdateResponseData): a partition whose HW, log start or error "
            "changed is in the session's next incremental answer, whatever moved it",
            (),
            _MOVES_REACH_THE_SESSION,
        ),
        Scenario(
            "evict-an-old-privileged-session",
            "KIP-227 (FetchSessionCacheShard.touch / tryEvict): a privileged session older than the eviction "
            "time is evictable by a privileged newcomer that is not smaller",
            (),
            _OLD_PRIVILEGED_SESSION,
        ),
    )
}


def zoo(cfg: FetchConfig) -> list[Scenario]:
    """Every scenario, cheapest first, if the configuration has the partitions and clients they
    name (three of each, the default); none otherwise."""
    return list(SCENARIOS.values()) if cfg.partitions >= 3 and cfg.clients >= 3 else []


__all__ = ["SCENARIOS", "Scenario", "zoo"]
