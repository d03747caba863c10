"""Incremental fetch sessions, broker side (KIP-227): the session cache and the fetch contexts.

Pure functions over frozen values, one per rule of Kafka's ``core/src/main/scala/kafka/server/
FetchSession.scala`` (trunk 2024-10, commit 1eb7644; ported to ``server/.../FetchSession.java`` by
KAFKA-19132 with the same rules):

- ``FetchMetadata.nextEpoch`` (``next_epoch``): epochs count 1, 2, ... and wrap from Int.MaxValue to
  **1**, never to 0 (INITIAL) or -1 (FINAL);
- ``FetchManager.newContext`` + ``FetchContext.updateAndGenerateResponseData`` (``handle_fetch``): a
  full request (epoch 0 or -1) removes the session it names; epoch -1 is sessionless; epoch 0 tries
  to create a session of every requested partition (``maybeCreateSession``). An incremental request
  names a session that must exist (FETCH_SESSION_ID_NOT_FOUND) at exactly its epoch
  (INVALID_FETCH_SESSION_EPOCH); its partitions are added or updated, its forgotten ones removed; a
  session left empty is removed and answered sessionless; else the session is touched, its epoch
  advances, and the answer carries only the partitions ``CachedPartition.maybeUpdateResponseData``
  selects, moving those that returned records to the end of the session's order (KAFKA-12330);
- ``FetchSessionCacheShard.maybeCreateSession / tryEvict / touch`` (``create_session``, ``touch``):
  a free slot, else the least recently used session if unused for more than the eviction time, else
  the smallest evictable session by ``EvictableKey(privileged, size, id)`` if the newcomer is not
  smaller.

Out of scope, with the reason: topic ids (FETCH_SESSION_TOPIC_ID_ERROR needs a request-version
switch inside one session, which no client does), diverging epochs and preferred read replicas
(the slice has no followers that truncate and no rack-aware reads: both only *add* inclusion
reasons), the late epoch re-check of ``IncrementalFetchContext`` (two request threads racing on one
session: the simulation handles a request in one step), cache shards (KAFKA-9401: one shard is
the single-shard cache of Kafka before 3.8).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

from kconform.model.errors import FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, NONE
from kconform.model.frozen_map import FrozenMap
from kconform.model.not_enabled import NotEnabled
from kconform.model.records import AbortedTxn, Record

INVALID_SESSION_ID = 0
"""FetchMetadata.INVALID_SESSION_ID: no session."""
INITIAL_EPOCH = 0
"""FetchMetadata.INITIAL_EPOCH: a full request that asks for a new session."""
FINAL_EPOCH = -1
"""FetchMetadata.FINAL_EPOCH: a full request that closes its session and asks for none."""
INT32_MAX = 2**31 - 1
MIN_EVICTION_MS = 120_000
"""KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS."""

FULL_NEW = "full-new"
"""A full request (epoch 0) answered with a new session."""
FULL_NO_SLOT = "full-no-slot"
"""A full request (epoch 0) the cache had no room for: answered sessionless (session id 0)."""
SESSIONLESS = "sessionless"
"""A full request with epoch -1 (FINAL): answered without a session."""
INCREMENTAL = "incremental"
"""An incremental request answered within its session."""
CLOSED = "closed"
"""An incremental request that left its session empty: the session is removed, sessionless answer."""
SESSION_ERROR = "error"
"""FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH (SessionErrorContext)."""
OUTCOMES = (FULL_NEW, FULL_NO_SLOT, SESSIONLESS, INCREMENTAL, CLOSED, SESSION_ERROR)


def next_epoch(prev: int) -> int:
    """FetchMetadata.nextEpoch: -1 stays -1; Int.MaxValue wraps to 1 (never 0, INITIAL); else + 1."""
    if prev < 0:
        return FINAL_EPOCH
    if prev == INT32_MAX:
        return 1
    return prev + 1


def is_full(epoch: int) -> bool:
    """FetchMetadata.isFull: epoch INITIAL (0) or FINAL (-1)."""
    return epoch in (INITIAL_EPOCH, FINAL_EPOCH)


@dataclass(frozen=True)
class PartitionData:
    """One partition of a fetch answer (FetchResponseData.PartitionData, the fields the slice uses).
    An error answer carries HW, LSO and log start -1 (ReplicaManager's LogReadResult of an error)."""

    name: str
    error: int
    hw: int
    lso: int
    log_start: int
    records: tuple[Record, ...] = ()
    aborted: tuple[AbortedTxn, ...] = ()


@dataclass(frozen=True)
class CachedPartition:
    """FetchSession's CachedPartition: the request parameters (``fetch_offset``) and the last HW and
    log start the session answered (-1 for a partition added by an incremental request: it is always
    in the next answer)."""

    name: str
    fetch_offset: int
    hw: int = -1
    log_start: int = -1


def must_respond(cached: CachedPartition, data: PartitionData) -> bool:
    """CachedPartition.maybeUpdateResponseData's test: records, a changed HW or log start, or an error
    (diverging epoch and preferred replica are out of scope, module docstring). The LSO is no
    reason of its own: Kafka leaves LSO-only changes out (it moves with the HW; kafka-facts §5)."""
    return bool(data.records) or data.hw != cached.hw or data.log_start != cached.log_start or data.error != NONE


def updated_cache(cached: CachedPartition, data: PartitionData) -> CachedPartition:
    """maybeUpdateResponseData with updateResponseData: the answered HW and log start are cached; an
    error caches HW -1 so that the partition is answered again once the error clears."""
    hw = -1 if data.error != NONE else data.hw
    return replace(cached, hw=hw, log_start=data.log_start)


@dataclass(frozen=True)
class Session:
    """FetchSession: id, privileged (a follower's), partitions in round-robin order, creation and
    last-use times, the epoch the next request must carry, and what the cache last recorded at
    ``touch``: its size and which eviction maps hold it (evictableByAll / evictableByPrivileged)."""

    id: int
    privileged: bool
    partitions: tuple[CachedPartition, ...]
    creation_ms: int
    last_used_ms: int
    epoch: int
    cached_size: int = 0
    evictable_by_all: bool = False
    evictable_by_privileged: bool = False

    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.partitions)

    def find(self, name: str) -> CachedPartition | None:
        return next((c for c in self.partitions if c.name == name), None)


@dataclass(frozen=True)
class Cache:
    """FetchSessionCacheShard: the sessions by id, at most ``max_slots``
    (max.incremental.fetch.session.cache.slots), evictable after ``eviction_ms``."""

    max_slots: int
    eviction_ms: int = MIN_EVICTION_MS
    sessions: FrozenMap[int, Session] = field(default_factory=FrozenMap)

    def get(self, session_id: int) -> Session | None:
        return self.sessions.get(session_id)


def touch(session: Session, now_ms: int, eviction_ms: int) -> Session:
    """FetchSessionCacheShard.touch: last use = now, the size recorded, and the eviction maps
    recomputed: evictable by a privileged newcomer if unprivileged or older than the eviction time
    since creation, by anyone only if older than that (KAFKA-9137 fixed touch to use ``now``)."""
    old_enough = now_ms - session.creation_ms > eviction_ms
    return replace(
        session,
        last_used_ms=now_ms,
        cached_size=len(session.partitions),
        evictable_by_all=old_enough,
        evictable_by_privileged=(not session.privileged) or old_enough,
    )


def _lru(cache: Cache) -> Session | None:
    """The first entry of ``lastUsed``: the smallest (lastUsedMs, id)."""
    return min(cache.sessions.values(), key=lambda s: (s.last_used_ms, s.id), default=None)


def _evictable_key(s: Session) -> tuple[bool, int, int]:
    """EvictableKey(privileged, size, id), ordered privileged false < true, then size, then id."""
    return (s.privileged, s.cached_size, s.id)


def eviction_victim(cache: Cache, privileged: bool, size: int, now_ms: int) -> Session | None:
    """FetchSessionCacheShard.tryEvict's choice for a newcomer (``privileged``, ``size``): the least
    recently used session if unused for more than the eviction time; else the smallest session of
    the newcomer's evictable map if the newcomer's key (privileged, size, 0) is not smaller; else
    None (the newcomer gets no session)."""
    lru = _lru(cache)
    if lru is None:
        return None
    if now_ms - lru.last_used_ms > cache.eviction_ms:
        return lru
    pool = [s for s in cache.sessions.values() if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
    if not pool:
        return None
    first = min(pool, key=_evictable_key)
    if (privileged, size, 0) < _evictable_key(first):
        return None
    return first


@dataclass(frozen=True)
class Request:
    """A fetch request as the broker sees it: FetchMetadata (``session_id``, ``epoch``), the
    partitions with their fetch offsets (``to_send``: fetchData in request order) and the forgotten
    ones (``forgotten``: toForget). ``privileged``: a follower's request (isFromFollower)."""

    session_id: int
    epoch: int
    to_send: tuple[tuple[str, int], ...]
    forgotten: tuple[str, ...] = ()
    privileged: bool = False


@dataclass(frozen=True)
class Answer:
    """A fetch answer: the top-level error, the session id it carries (0: none), the partitions in
    answer order, the outcome (``OUTCOMES``) and the session evicted to make room (0: none)."""

    outcome: str
    error: int
    session_id: int
    partitions: tuple[PartitionData, ...]
    evicted: int = INVALID_SESSION_ID


class Reader(Protocol):
    """What the broker's log layer answers for a partition at a fetch offset (ReplicaManager.readFromLog)."""

    def __call__(self, name: str, fetch_offset: int) -> PartitionData: ...


FULL_CONTEXT = "FullFetchContext"
SESSIONLESS_CONTEXT = "SessionlessFetchContext"
INCREMENTAL_CONTEXT = "IncrementalFetchContext"
ERROR_CONTEXT = "SessionErrorContext"


@dataclass(frozen=True)
class Context:
    """A FetchContext: its ``kind`` (Kafka's class name), the partitions the broker reads for it in
    order with their fetch offsets (``reads``), the session of an incremental context, the error
    of a SessionErrorContext, the request epoch (the late re-check) and, for a sessionless one,
    the outcome it answers with (SESSIONLESS for epoch -1, CLOSED for a session left empty)."""

    kind: str
    reads: tuple[tuple[str, int], ...] = ()
    session_id: int = INVALID_SESSION_ID
    error: int = NONE
    request_epoch: int = INITIAL_EPOCH
    outcome: str = ""
    privileged: bool = False


def new_context(cache: Cache, now_ms: int, req: Request) -> tuple[Cache, Context]:
    """FetchManager.newContext: a full request removes the session it names and gets a sessionless
    (epoch -1) or full context; an incremental one a session error, or (after FetchSession.update)
    a sessionless context if the session is now empty (the session is removed), else an
    incremental context on the touched session whose epoch moved to the next one."""
    if is_full(req.epoch):
        if req.session_id != INVALID_SESSION_ID:
            cache = replace(cache, sessions=cache.sessions.remove(req.session_id))
        if req.epoch == FINAL_EPOCH:
            return cache, Context(SESSIONLESS_CONTEXT, req.to_send, outcome=SESSIONLESS)
        return cache, Context(FULL_CONTEXT, req.to_send, privileged=req.privileged)
    session = cache.get(req.session_id)
    if session is None:
        return cache, Context(ERROR_CONTEXT, error=FETCH_SESSION_ID_NOT_FOUND)
    if session.epoch != req.epoch:
        return cache, Context(ERROR_CONTEXT, error=INVALID_FETCH_SESSION_EPOCH)
    session = apply_request(session, req)
    if not session.partitions:
        cache = replace(cache, sessions=cache.sessions.remove(session.id))
        return cache, Context(SESSIONLESS_CONTEXT, req.to_send, outcome=CLOSED)
    session = touch(session, now_ms, cache.eviction_ms)
    session = replace(session, epoch=next_epoch(session.epoch))
    cache = replace(cache, sessions=cache.sessions.set(session.id, session))
    reads = tuple((c.name, c.fetch_offset) for c in session.partitions)
    return cache, Context(INCREMENTAL_CONTEXT, reads, session.id, request_epoch=req.epoch)


def respond(
    cache: Cache, now_ms: int, ctx: Context, data: tuple[PartitionData, ...], new_session_id: int
) -> tuple[Cache, Answer]:
    """The context's updateAndGenerateResponseData over what the broker read (``data``, in
    ``ctx.reads`` order; a test may give fewer). A full context creates a session of every answered
    partition (maybeCreateSession, ``new_session_id`` being Kafka's random draw: the
    implementation's choice, positive and not in use); an incremental one re-checks the session's
    epoch (a concurrent duplicate: INVALID_FETCH_SESSION_EPOCH with the real session id), then
    selects the updates (``select_updates``)."""
    if ctx.kind == ERROR_CONTEXT:
        return cache, Answer(SESSION_ERROR, ctx.error, INVALID_SESSION_ID, ())
    if ctx.kind == SESSIONLESS_CONTEXT:
        return cache, Answer(ctx.outcome, NONE, INVALID_SESSION_ID, data)
    if ctx.kind == FULL_CONTEXT:
        partitions = tuple(
            CachedPartition(name, offset, d.hw, d.log_start) for (name, offset), d in zip(ctx.reads, data, strict=False)
        )
        cache, session_id, evicted = create_session(cache, now_ms, ctx.privileged, partitions, new_session_id)
        return cache, Answer(FULL_NEW if session_id else FULL_NO_SLOT, NONE, session_id, data, evicted)
    session = cache.get(ctx.session_id)
    if session is None or session.epoch != next_epoch(ctx.request_epoch):
        return cache, Answer(SESSION_ERROR, INVALID_FETCH_SESSION_EPOCH, ctx.session_id, ())
    session, selected = select_updates(session, data)
    cache = replace(cache, sessions=cache.sessions.set(session.id, session))
    return cache, Answer(INCREMENTAL, NONE, session.id, selected)


def create_session(
    cache: Cache, now_ms: int, privileged: bool, partitions: tuple[CachedPartition, ...], new_session_id: int
) -> tuple[Cache, int, int]:
    """FetchSessionCacheShard.maybeCreateSession: (the cache, the new session's id or 0 when there
    is no room, the id of the session evicted for it or 0). The new session has epoch 1 and is
    touched at ``now_ms``."""
    evicted = INVALID_SESSION_ID
    if len(cache.sessions) >= cache.max_slots:
        victim = eviction_victim(cache, privileged, len(partitions), now_ms)
        if victim is None:
            return cache, INVALID_SESSION_ID, INVALID_SESSION_ID
        evicted = victim.id
        cache = replace(cache, sessions=cache.sessions.remove(victim.id))
    if new_session_id <= INVALID_SESSION_ID or new_session_id in cache.sessions:
        raise NotEnabled(f"a new fetch session id is positive and not in use (newSessionId), got {new_session_id}")
    session = Session(new_session_id, privileged, partitions, now_ms, now_ms, next_epoch(INITIAL_EPOCH))
    session = touch(session, now_ms, cache.eviction_ms)
    return replace(cache, sessions=cache.sessions.set(session.id, session)), session.id, evicted


def handle_fetch(cache: Cache, now_ms: int, req: Request, read: Reader, new_session_id: int) -> tuple[Cache, Answer]:
    """One request handled to completion: ``new_context``, the broker reads every partition of the
    context (``read``), ``respond``."""
    cache, ctx = new_context(cache, now_ms, req)
    data = tuple(read(name, offset) for name, offset in ctx.reads)
    return respond(cache, now_ms, ctx, data, new_session_id)


def apply_request(session: Session, req: Request) -> Session:
    """FetchSession.update: partitions of the request not in the session are added at the end with
    no cached answer; those in it get the new fetch offset; forgotten ones are removed."""
    parts = list(session.partitions)
    for name, offset in req.to_send:
        index = next((i for i, c in enumerate(parts) if c.name == name), None)
        if index is None:
            parts.append(CachedPartition(name, offset))
        else:
            parts[index] = replace(parts[index], fetch_offset=offset)
    forgotten = set(req.forgotten)
    return replace(session, partitions=tuple(c for c in parts if c.name not in forgotten))


def select_updates(session: Session, data: tuple[PartitionData, ...]) -> tuple[Session, tuple[PartitionData, ...]]:
    """IncrementalFetchContext's PartitionIterator with updates: over the partitions read (``data``,
    in session order), keep those ``must_respond`` selects, cache what they carry, and move each
    that returned records to the end of the session's order (KAFKA-12330: only those with records,
    so a partition whose HW moved is not starved)."""
    order = list(session.partitions)
    out: list[PartitionData] = []
    for d in data:
        index = next(i for i, c in enumerate(order) if c.name == d.name)
        cached = order[index]
        if not must_respond(cached, d):
            continue
        out.append(d)
        new = updated_cache(cached, d)
        if d.records:
            del order[index]
            order.append(new)
        else:
            order[index] = new
    return replace(session, partitions=tuple(order)), tuple(out)


def lose_cache(cache: Cache) -> Cache:
    """A broker restart: the FetchSessionCache lives in memory only; every session is gone."""
    return replace(cache, sessions=FrozenMap())


__all__ = [
    "CLOSED",
    "ERROR_CONTEXT",
    "FINAL_EPOCH",
    "FULL_CONTEXT",
    "FULL_NEW",
    "FULL_NO_SLOT",
    "INCREMENTAL",
    "INCREMENTAL_CONTEXT",
    "INITIAL_EPOCH",
    "INVALID_SESSION_ID",
    "MIN_EVICTION_MS",
    "OUTCOMES",
    "SESSIONLESS",
    "SESSIONLESS_CONTEXT",
    "SESSION_ERROR",
    "Answer",
    "Cache",
    "CachedPartition",
    "Context",
    "PartitionData",
    "Reader",
    "Request",
    "Session",
    "apply_request",
    "create_session",
    "eviction_victim",
    "handle_fetch",
    "is_full",
    "lose_cache",
    "must_respond",
    "new_context",
    "next_epoch",
    "respond",
    "select_updates",
    "touch",
    "updated_cache",
]
