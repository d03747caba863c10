"""The fetch-session slice's broker: partitions (the exactly-once slice's partition logs plus a log
start offset and leadership) and Kafka's session cache, shaped like ``FetchSession.scala``'s
``FetchManager`` / ``FetchSessionCacheShard`` / ``CachedPartition`` (mutable objects, an LRU map
and the two evictable maps), answering ``SessionFetchRequest``.

Guarantees: one request is handled to completion in one delivery (no second request thread: the
late epoch re-check of IncrementalFetchContext never fires); new session ids come from the run's
seeded random source (Kafka: ThreadLocalRandom), positive and unique in the cache; every answer is
reported as one SessionFetchHandled event.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from kconform.model.fetch_config import BROKER, CLIENT_NODE_BASE, FetchConfig
from kconform.traces.events import (
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    SessionFetchHandled,
)

from ..messages import Handlers, Message, handles
from ..runtime import World
from ..txn.log import TxnPartitionLog
from . import mutants as m
from .messages import PartitionAnswer, SessionFetchRequest, SessionFetchResponse

INT32_MAX = 2**31 - 1
MAX_ID_DRAWS = 1_000
"""Draws of a new session id before giving up (at most max_slots of 2^31 - 2 ids are taken)."""


def next_epoch(epoch: int) -> int:
    """FetchMetadata.nextEpoch."""
    return -1 if epoch < 0 else 1 if epoch == INT32_MAX else epoch + 1


class PartitionLog:
    """One partition at the broker: the exactly-once slice's log, a log start, leadership."""

    def __init__(self, name: str, world: World[FetchConfig]) -> None:
        self.log = TxnPartitionLog(name, world)
        self.log_start = 0
        self.leading = True

    def read(self, fetch_offset: int, read_committed: bool, max_records: int) -> PartitionAnswer:
        """ReplicaManager.readFromLog for one partition."""
        name = self.log.name
        if not self.leading:
            return PartitionAnswer(name, NOT_LEADER_OR_FOLLOWER, -1, -1, -1, (), ())
        if fetch_offset < self.log_start or fetch_offset > self.log.leo:
            return PartitionAnswer(name, OFFSET_OUT_OF_RANGE, -1, -1, -1, (), ())
        error, records, aborted = self.log.fetch(fetch_offset, read_committed)
        records = records[:max_records]
        upper = records[-1].offset if records else -1
        aborted = tuple(a for a in aborted if a.first_offset <= upper)
        # The first unstable offset is never below the log start: UnifiedLog.maybeIncrementFirstUnstableOffset
        # lifts it to the log start when DeleteRecords moved past an open transaction's first offset.
        lso = max(self.log.lso(), self.log_start)
        return PartitionAnswer(name, error, self.log.hw, lso, self.log_start, records, aborted)


@dataclass
class CachedPartition:
    """FetchSession's CachedPartition: request parameters and the last answered HW / log start."""

    name: str
    fetch_offset: int
    high_watermark: int = -1
    local_log_start: int = -1

    def maybe_update_response_data(self, data: PartitionAnswer, update: bool) -> bool:
        """CachedPartition.maybeUpdateResponseData."""
        must = bool(data.records)
        if self.high_watermark != data.hw:
            must = True
            if update:
                self.high_watermark = data.hw
        if self.local_log_start != data.log_start:
            must = True
            if update:
                self.local_log_start = data.log_start
        if data.error != NONE:
            if update:
                self.high_watermark = -1
            must = True
        return must


class FetchSession:
    """FetchSession: its partitions in order (ImplicitLinkedHashCollection), times, epoch, and what
    the cache recorded at the last touch."""

    def __init__(self, session_id: int, privileged: bool, partitions: list[CachedPartition], now_ms: int) -> None:
        self.id = session_id
        self.privileged = privileged
        self.partitions = partitions
        self.creation_ms = now_ms
        self.last_used_ms = now_ms
        self.epoch = next_epoch(0)
        self.cached_size = -1

    def find(self, name: str) -> CachedPartition | None:
        return next((p for p in self.partitions if p.name == name), None)

    def update(self, to_send: tuple[tuple[str, int], ...], forgotten: tuple[str, ...]) -> None:
        """FetchSession.update: add or update the sent partitions, remove the forgotten ones."""
        for name, offset in to_send:
            cached = self.find(name)
            if cached is None:
                self.partitions.append(CachedPartition(name, offset))
            else:
                cached.fetch_offset = offset
        for name in forgotten:
            cached = self.find(name)
            if cached is not None:
                self.partitions.remove(cached)


class RandomInts(Protocol):
    """Where new session ids come from (``random.Random``; Kafka: ThreadLocalRandom)."""

    def randint(self, a: int, b: int) -> int: ...


class FetchSessionCache:
    """FetchSessionCacheShard: sessions, last-used order and the two evictable maps."""

    def __init__(self, max_entries: int, eviction_ms: int, rng: RandomInts) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.rng = rng
        self.sessions: dict[int, FetchSession] = {}
        self.evictable_by_all: dict[int, tuple[bool, int, int]] = {}
        self.evictable_by_privileged: dict[int, tuple[bool, int, int]] = {}

    def new_session_id(self) -> int:
        """FetchSessionCacheShard.newSessionId: a random positive id not in use (bounded draws)."""
        for _ in range(MAX_ID_DRAWS):
            session_id = self.rng.randint(1, INT32_MAX - 1)
            if session_id not in self.sessions:
                return session_id
        raise RuntimeError(f"no free fetch session id in {MAX_ID_DRAWS} draws")

    def maybe_create_session(self, now_ms: int, privileged: bool, partitions: list[CachedPartition]) -> tuple[int, int]:
        """(new session id or 0, the id of the session evicted for it or 0)."""
        evicted = 0
        if len(self.sessions) >= self.max_entries:
            evicted = self.try_evict(privileged, (privileged, len(partitions), 0), now_ms)
            if not evicted:
                return 0, 0
        session = FetchSession(self.new_session_id(), privileged, partitions, now_ms)
        self.sessions[session.id] = session
        self.touch(session, now_ms)
        return session.id, evicted

    def try_evict(self, privileged: bool, key: tuple[bool, int, int], now_ms: int) -> int:
        """FetchSessionCacheShard.tryEvict: the evicted session's id, or 0."""
        if not self.sessions:
            return 0
        lru = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - lru.last_used_ms > self.eviction_ms:
            self.remove(lru.id)
            return lru.id
        pool = self.evictable_by_privileged if privileged else self.evictable_by_all
        if not pool:
            return 0
        first_id, first_key = min(pool.items(), key=lambda kv: kv[1])
        if key < first_key:
            return 0
        self.remove(first_id)
        return first_id

    def remove(self, session_id: int) -> FetchSession | None:
        self.evictable_by_all.pop(session_id, None)
        self.evictable_by_privileged.pop(session_id, None)
        return self.sessions.pop(session_id, None)

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """FetchSessionCacheShard.touch."""
        session.last_used_ms = now_ms
        self.evictable_by_all.pop(session.id, None)
        self.evictable_by_privileged.pop(session.id, None)
        session.cached_size = len(session.partitions)
        key = (session.privileged, session.cached_size, session.id)
        old_enough = now_ms - session.creation_ms > self.eviction_ms
        if not session.privileged or old_enough:
            self.evictable_by_privileged[session.id] = key
        if old_enough:
            self.evictable_by_all[session.id] = key


class FetchBroker(Handlers):
    """The broker: its partitions and its FetchManager."""

    def __init__(self, world: World[FetchConfig], rng: random.Random) -> None:
        cfg = world.config
        self.world = world
        self.broker_id = BROKER
        self.logs = {name: PartitionLog(name, world) for name in cfg.names}
        self.cache = FetchSessionCache(cfg.max_slots, cfg.eviction_ms, rng)

    def receive(self, msg: Message) -> None:
        self.dispatch(msg)

    def restart(self) -> None:
        """The process restarts: the cache (memory only) is gone; the logs survive."""
        cfg = self.world.config
        self.cache = FetchSessionCache(cfg.max_slots, cfg.eviction_ms, self.cache.rng)

    def _read(self, name: str, offset: int, client: int) -> PartitionAnswer:
        cfg = self.world.config
        return self.logs[name].read(offset, cfg.is_read_committed(client), cfg.max_records)

    @handles(SessionFetchRequest)
    def on_fetch(self, msg: Message, req: SessionFetchRequest) -> None:
        """FetchManager.newContext + updateAndGenerateResponseData."""
        client = msg.src - CLIENT_NODE_BASE
        now_ms = self.world.now_ms
        cache = self.cache
        evicted = 0
        if req.epoch in (0, -1):
            if req.session_id != 0:
                cache.remove(req.session_id)
            data = [self._read(name, offset, client) for name, offset in req.to_send]
            if req.epoch == -1:
                outcome, session_id = "sessionless", 0
            else:
                cached = [
                    CachedPartition(name, offset, d.hw, d.log_start)
                    for (name, offset), d in zip(req.to_send, data, strict=True)
                ]
                session_id, evicted = cache.maybe_create_session(now_ms, req.from_follower, cached)
                outcome = "full-new" if session_id else "full-no-slot"
            self._answer(msg, client, outcome, NONE, session_id, evicted, data)
            return
        session = cache.sessions.get(req.session_id)
        if session is None:
            self._answer(msg, client, "error", FETCH_SESSION_ID_NOT_FOUND, 0, 0, [])
            return
        if session.epoch != req.epoch:
            self._answer(msg, client, "error", INVALID_FETCH_SESSION_EPOCH, 0, 0, [])
            return
        session.update(req.to_send, req.forgotten)
        if not session.partitions:
            cache.remove(session.id)
            self._answer(msg, client, "closed", NONE, 0, 0, [])
            return
        cache.touch(session, session.last_used_ms if self.world.mutant(m.STALE_LAST_USED) else now_ms)
        session.epoch = next_epoch(session.epoch)
        updates = [self._read(p.name, p.fetch_offset, client) for p in session.partitions]
        if self.world.mutant(m.SIZE_PASS_UPDATES_CACHE):
            for d in updates:  # the size pass run with the updating iterator
                cached_part = session.find(d.name)
                assert cached_part is not None
                cached_part.maybe_update_response_data(d, True)
        selected: list[PartitionAnswer] = []
        for d in updates:
            cached_part = session.find(d.name)
            assert cached_part is not None
            if not cached_part.maybe_update_response_data(d, True):
                continue
            selected.append(d)
            if d.records or self.world.mutant(m.MOVES_ALL_INCLUDED):
                session.partitions.remove(cached_part)
                session.partitions.append(cached_part)
        self._answer(msg, client, "incremental", NONE, session.id, 0, selected)

    def _answer(
        self,
        msg: Message,
        client: int,
        outcome: str,
        error: int,
        session_id: int,
        evicted: int,
        data: list[PartitionAnswer],
    ) -> None:
        self.world.events.emit(
            SessionFetchHandled(
                self.broker_id,
                msg.msg_id,
                client,
                outcome,
                error,
                session_id,
                evicted,
                tuple(d.name for d in data),
                tuple(d.error for d in data),
                tuple(d.hw for d in data),
                tuple(d.lso for d in data),
                tuple(d.log_start for d in data),
                tuple(len(d.records) for d in data),
                tuple(r for d in data for r in d.records),
                tuple(len(d.aborted) for d in data),
                tuple(a for d in data for a in d.aborted),
            )
        )
        self.world.network.send(
            self.broker_id, msg.src, SessionFetchResponse(msg.msg_id, error, session_id, tuple(data))
        )
