"""The scenario vocabulary of fetch sessions (KIP-227), over the model and, for the session cache
alone, over the reference.

- ``fetch_session`` (model.fetch_session: FetchSessionCacheShard and FetchManager's contexts):
  ``create(now, privileged, size, id)`` → ``session_id`` (maybeCreateSession with ``size`` dummy
  partitions; ``id`` is the id Kafka would draw at random); ``touch(id, now)``; ``remove(id)``;
  ``new_context(now, session_id, epoch, send, forget, follower)`` → ``context`` (Kafka's class
  name) and ``reads`` (the partitions the broker reads, with fetch offsets), with ``send`` a list of
  [partition, fetch offset]; ``respond(data, id)`` → ``error``, ``session_id``, ``partitions``,
  ``errors`` (updateAndGenerateResponseData of the last context over ``data``: [partition, hw, lso,
  log start, records, error (optional)]; ``id`` for a session a full context creates).
  Observables: ``sessions`` (ids), ``size``, ``total_partitions``, ``evictions``, ``orders`` (id →
  the session's partitions in round-robin order), ``epochs`` (id → the epoch its next request
  must carry). Given: ``slots``, ``eviction_ms``.
- ``fetch_session_handler`` (model.fetch_client: FetchSessionHandler): ``build(partitions)`` with
  [partition, request data...] in the builder's order → ``to_send``, ``to_forget``,
  ``session_partitions``, ``session_id``, ``epoch``, ``full``; ``response(error, session_id,
  partitions)`` → ``ok``; ``error()`` (handleError); ``close()`` (notifyClose). A partition's
  request data is any list of numbers (Kafka's PartitionData fields a test sets): two requests
  alter a partition iff they differ, which is all the handler asks of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kconform.conformance.yardstick.dsl import FETCH_HANDLER, FETCH_SESSION, ScenarioError
from kconform.conformance.yardstick.model_side import _REQUIRED, _args
from kconform.impl.fetch import broker as IB
from kconform.model import fetch_client as FC
from kconform.model import fetch_session as FS
from kconform.model.errors import NONE
from kconform.model.records import Record


def _dummy(size: int) -> tuple[FS.CachedPartition, ...]:
    """FetchSessionTest.dummyCreate: ``size`` partitions of topic foo."""
    return tuple(FS.CachedPartition(f"foo-{i}", 0) for i in range(size))


def _data(rows: Sequence[Sequence[Any]]) -> tuple[FS.PartitionData, ...]:
    out = []
    for row in rows:
        name, hw, lso, log_start, records, *error = row
        recs = tuple(Record(hw + i, -1, -1, -1, i, 0, -1) for i in range(records))
        out.append(FS.PartitionData(name, error[0] if error else NONE, hw, lso, log_start, recs))
    return tuple(out)


def _cache_observables(rows: Sequence[tuple[int, int, tuple[str, ...], int]], evictions: int) -> dict[str, Any]:
    """The ``fetch_session`` observables of a cache's sessions, given as (id, size recorded at the
    last touch, partitions in order, epoch)."""
    return {
        "sessions": frozenset(sid for sid, _size, _names, _epoch in rows),
        "size": len(rows),
        "total_partitions": sum(size for _sid, size, _names, _epoch in rows),
        "evictions": evictions,
        "orders": {sid: names for sid, _size, names, _epoch in rows},
        "epochs": {sid: epoch for sid, _size, _names, epoch in rows},
    }


class FetchSessionModel:
    """``fetch_session`` over the model."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.cache = FS.Cache(int(given.get("slots", 1000)), int(given.get("eviction_ms", FS.MIN_EVICTION_MS)))
        self.evictions = 0
        self.ctx: FS.Context | None = None
        self.now = 0

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        if handler == "create":
            a = _args(handler, args, {"now": _REQUIRED, "privileged": False, "size": _REQUIRED, "id": _REQUIRED})
            self.cache, sid, evicted = FS.create_session(
                self.cache, a["now"], a["privileged"], _dummy(a["size"]), a["id"]
            )
            self.evictions += evicted != 0
            return {"session_id": sid}
        if handler == "touch":
            a = _args(handler, args, {"id": _REQUIRED, "now": _REQUIRED})
            session = self.cache.get(a["id"])
            if session is None:
                raise ScenarioError(f"touch: no session {a['id']}")
            touched = FS.touch(session, a["now"], self.cache.eviction_ms)
            self.cache = FS.Cache(
                self.cache.max_slots, self.cache.eviction_ms, self.cache.sessions.set(a["id"], touched)
            )
            return {}
        if handler == "remove":
            a = _args(handler, args, {"id": _REQUIRED})
            self.cache = FS.Cache(self.cache.max_slots, self.cache.eviction_ms, self.cache.sessions.remove(a["id"]))
            return {}
        if handler == "new_context":
            a = _args(
                handler,
                args,
                {"now": _REQUIRED, "session_id": 0, "epoch": 0, "send": (), "forget": (), "follower": False},
            )
            req = FS.Request(
                a["session_id"], a["epoch"], tuple((n, o) for n, o in a["send"]), tuple(a["forget"]), a["follower"]
            )
            self.now = a["now"]
            self.cache, self.ctx = FS.new_context(self.cache, self.now, req)
            return {"context": self.ctx.kind, "reads": self.ctx.reads}
        if handler == "respond":
            a = _args(handler, args, {"data": (), "id": 0})
            if self.ctx is None:
                raise ScenarioError("respond: no context (call new_context first)")
            self.cache, answer = FS.respond(self.cache, self.now, self.ctx, _data(a["data"]), a["id"])
            self.evictions += answer.evicted != 0
            return {
                "error": answer.error,
                "session_id": answer.session_id,
                "partitions": tuple(d.name for d in answer.partitions),
                "errors": tuple(d.error for d in answer.partitions),
            }
        raise ScenarioError(f"fetch_session has no handler {handler!r}")

    def observe(self) -> Mapping[str, Any]:
        rows = [(s.id, s.cached_size, s.names(), s.epoch) for s in self.cache.sessions.values()]
        return _cache_observables(rows, self.evictions)


class FetchSessionReference:
    """``fetch_session`` over the reference's FetchSessionCache (impl/fetch/broker.py); its contexts
    run only inside the broker's request handler (the gate checks them in lockstep)."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.cache = IB.FetchSessionCache(
            int(given.get("slots", 1000)), int(given.get("eviction_ms", FS.MIN_EVICTION_MS)), _NoRandom()
        )
        self.evictions = 0

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        if handler == "create":
            a = _args(handler, args, {"now": _REQUIRED, "privileged": False, "size": _REQUIRED, "id": _REQUIRED})
            self.cache.rng = _NoRandom(a["id"])
            parts = [IB.CachedPartition(f"foo-{i}", 0) for i in range(a["size"])]
            sid, evicted = self.cache.maybe_create_session(a["now"], a["privileged"], parts)
            self.evictions += evicted != 0
            return {"session_id": sid}
        if handler == "touch":
            a = _args(handler, args, {"id": _REQUIRED, "now": _REQUIRED})
            self.cache.touch(self.cache.sessions[a["id"]], a["now"])
            return {}
        if handler == "remove":
            a = _args(handler, args, {"id": _REQUIRED})
            self.cache.remove(a["id"])
            return {}
        raise _unsupported(handler)

    def observe(self) -> Mapping[str, Any]:
        rows = [
            (s.id, s.cached_size, tuple(p.name for p in s.partitions), s.epoch) for s in self.cache.sessions.values()
        ]
        return _cache_observables(rows, self.evictions)


def _unsupported(handler: str) -> Exception:
    from kconform.conformance.yardstick.reference_side import Unsupported

    return Unsupported(
        f"the reference runs {handler} only inside its broker's request handler (impl/fetch/broker.py "
        "FetchBroker.on_fetch); the gate checks it against the model in lockstep"
    )


class _NoRandom:
    """A random source that draws the id a scenario names (Kafka's ids are random)."""

    def __init__(self, value: int = 1) -> None:
        self.value = value

    def randint(self, a: int, b: int) -> int:
        return self.value


class FetchHandlerModel:
    """``fetch_session_handler`` over the model. Request data lists are interned to ints: equal
    lists give equal ints, which is the only property FetchSessionHandler uses."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.h = FC.INITIAL
        self.interned: dict[tuple[int, ...], int] = {}
        self.values: dict[int, tuple[int, ...]] = {}
        self.last: FS.Request | None = None

    def _intern(self, data: Sequence[int]) -> int:
        key = tuple(data)
        if key not in self.interned:
            self.interned[key] = len(self.interned)
            self.values[self.interned[key]] = key
        return self.interned[key]

    def _show(self, parts: Sequence[tuple[str, int]]) -> tuple[tuple[Any, ...], ...]:
        return tuple((name, *self.values[v]) for name, v in parts)

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        if handler == "build":
            a = _args(handler, args, {"partitions": _REQUIRED})
            wanted = tuple((p[0], self._intern(p[1:])) for p in a["partitions"])
            self.h, req = FC.build(self.h, wanted)
            return {
                "to_send": self._show(req.to_send),
                "to_forget": req.forgotten,
                "session_partitions": self._show(self.h.partitions),
                "session_id": req.session_id,
                "epoch": req.epoch,
                "full": FS.is_full(req.epoch),
            }
        if handler == "response":
            a = _args(handler, args, {"error": NONE, "session_id": 0, "partitions": ()})
            self.h, ok = FC.handle_response(self.h, a["error"], a["session_id"], tuple(a["partitions"]))
            return {"ok": ok}
        if handler == "error":
            self.h = FC.handle_error(self.h)
            return {}
        if handler == "close":
            self.h = FC.notify_close(self.h)
            return {}
        raise ScenarioError(f"fetch_session_handler has no handler {handler!r}")

    def observe(self) -> Mapping[str, Any]:
        return {"next_session_id": self.h.session_id, "next_epoch": self.h.epoch}


MODEL_DRIVERS: dict[str, type[Any]] = {FETCH_SESSION: FetchSessionModel, FETCH_HANDLER: FetchHandlerModel}
REFERENCE_DRIVERS: dict[str, type[Any]] = {FETCH_SESSION: FetchSessionReference}
"""Subjects the reference has a standalone unit for; the other's reason is in reference_side.REFERENCE_SCOPE."""

__all__ = ["MODEL_DRIVERS", "REFERENCE_DRIVERS"]
