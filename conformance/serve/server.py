"""The asyncio server of ``kconform serve``: one listener per simulated broker on 127.0.0.1, each
request parsed (protocol.py), answered through the judged reference (apis.py, groups.py), faults
applied from the schedule (faults.py).

Kafka's per-connection ordering is kept: a connection's requests are handled one at a time, in
order (Kafka mutes a channel while its request is in flight). Bad input is handled as Kafka does
(protocol.py): the connection is closed, every other connection keeps being served, and nothing
already judged is lost (the judge runs on the reference, not on the bytes).

Guarantees: only 127.0.0.1 is bound; every wait is bounded (a frame's body by REQUEST_READ_TIMEOUT_S,
an idle connection by IDLE_TIMEOUT_S, a Fetch long-poll by its max wait capped at MAX_FETCH_WAIT_S,
group waits by their timeouts); ``stop`` closes every listener and connection and cancels every task.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from . import protocol as P
from .apis import NONE, Apis
from .cluster import ServedCluster
from .faults import AFTER_APPLY, API_NAMES, INJECTABLE, Fault
from .groups import GroupCoordinator

LOG = logging.getLogger("kconform.serve")
HOST = "127.0.0.1"
IDLE_TIMEOUT_S = 600.0
"""connections.max.idle.ms (Kafka's default, 10 minutes)."""
REQUEST_READ_TIMEOUT_S = 30.0
MAX_FETCH_WAIT_S = 1.0
TICK_S = 0.1
API_BY_KEY = {v: k for k, v in API_NAMES.items()}


@dataclass
class Stats:
    """What the server saw, for the summary and the benchmark."""

    requests: Counter[str] = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=dict)
    closed: Counter[str] = field(default_factory=Counter)
    """Connections closed by the server, by reason."""
    injected: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    """Server bugs (a handler raised): the connection was closed and the server kept serving."""


class Server:
    """The served cluster on ``brokers`` listeners."""

    def __init__(
        self,
        cluster: ServedCluster,
        faults: list[Fault] | None = None,
        max_request_bytes: int = P.DEFAULT_MAX_REQUEST_BYTES,
        default_partitions: int = 1,
    ) -> None:
        self.cluster = cluster
        self.brokers = cluster.cfg.brokers
        self.apis = Apis(cluster, [(HOST, 0)] * self.brokers, default_partitions)
        self.groups = GroupCoordinator(time.monotonic)
        self.max_request_bytes = max_request_bytes
        self.faults = list(faults or [])
        self.stats = Stats()
        self._listeners: dict[int, asyncio.Server] = {}
        self._conns: dict[int, tuple[int, asyncio.StreamWriter]] = {}
        self._conn_ids = itertools.count(0)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._data = asyncio.Event()
        self._t0 = time.monotonic()
        self._active: list[Fault] = []
        self._waited = 0.0
        """Seconds the current request spent waiting (long-poll, group), not handling."""
        self._down: set[int] = set()

    # --------------------------------------------------------------------- lifecycle

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in self.apis.endpoints)

    async def start(self, ports: list[int] | None = None) -> None:
        for b in range(self.brokers):
            port = ports[b] if ports else 0
            await self._listen(b, port)
        self._spawn(self._ticker())

    async def _listen(self, broker: int, port: int) -> None:
        srv = await asyncio.start_server(lambda r, w: self._accept(broker, r, w), HOST, port, reuse_address=True)
        self._listeners[broker] = srv
        self.apis.endpoints[broker] = (HOST, srv.sockets[0].getsockname()[1])

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        for srv in self._listeners.values():
            srv.close()
        for _b, w in list(self._conns.values()):
            w.close()
        for t in list(self._tasks):
            t.cancel()
        for t in list(self._tasks):
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(t, 2.0)
        for srv in self._listeners.values():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(srv.wait_closed(), 2.0)

    async def _ticker(self) -> None:
        """The clock follows wall time; due faults start; group sessions expire."""
        while True:
            await asyncio.sleep(TICK_S)
            try:
                self.cluster.catch_up()
                self.groups.expire()
                await self._due_faults()
            except Exception as exc:  # a bug must be visible, not kill the clock
                self.stats.errors.append(f"tick: {type(exc).__name__}: {exc}")
                LOG.exception("tick failed")

    # ------------------------------------------------------------------------ faults

    async def _due_faults(self) -> None:
        now_ms = (time.monotonic() - self._t0) * 1000
        while self.faults and self.faults[0].at_ms <= now_ms:
            f = self.faults.pop(0)
            if f.kind == "crash":
                await self._crash(f.broker, f.duration_ms)
            elif f.kind == "move_coordinator":
                ids = list(self.cluster.aliases.txn_ids) if f.txn_id == "*" else [f.txn_id]
                for txn_id in ids:
                    self.cluster.move_coordinator(txn_id, f.broker)
            else:
                self._active.append(f)
        self._active = [
            f
            for f in self._active
            if (f.kind == "error" and f.count > 0) or (f.kind == "delay" and now_ms < f.at_ms + f.duration_ms)
        ]

    async def _crash(self, broker: int, duration_ms: int) -> None:
        """The broker's process is gone: its listener and connections close; it listens again on
        the same port after ``duration_ms`` (its logs survive: the reference's partitions never lose
        an append)."""
        port = self.apis.endpoints[broker][1]
        srv = self._listeners.pop(broker)
        srv.close()
        self._down.add(broker)
        for b, w in list(self._conns.values()):
            if b == broker:
                w.close()
        self.stats.injected[f"crash broker {broker}"] += 1

        async def restart() -> None:
            await asyncio.sleep(duration_ms / 1000)
            for _ in range(50):
                try:
                    await self._listen(broker, port)
                    break
                except OSError:
                    await asyncio.sleep(0.1)
            self._down.discard(broker)

        self._spawn(restart())

    def _injected(self, api: str, broker: int) -> Fault | None:
        for f in self._active:
            if f.kind == "error" and f.count > 0 and f.api == api and f.broker in (-1, broker):
                f.count -= 1
                self.stats.injected[f"{api} {f.error}"] += 1
                return f
        return None

    def _delay_ms(self, api: str, broker: int) -> int:
        return max(
            (f.ms for f in self._active if f.kind == "delay" and f.api in ("*", api) and f.broker in (-1, broker)),
            default=0,
        )

    # -------------------------------------------------------------------- connections

    async def _accept(self, broker: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = next(self._conn_ids)
        self._conns[conn] = (broker, writer)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        try:
            await self._serve(broker, conn, reader, writer)
        except P.CloseConnection as exc:
            self.stats.closed[str(exc).split(":")[0]] += 1
            LOG.info("broker %d: closing connection %d: %s", broker, conn, exc)
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError):
            pass
        except asyncio.CancelledError:
            return  # shutdown: a connection task ends normally (asyncio's stream callback cannot take a cancelled one)
        except Exception as exc:
            self.stats.errors.append(f"broker {broker} connection {conn}: {type(exc).__name__}: {exc}")
            LOG.exception("broker %d: request failed", broker)
        finally:
            self._conns.pop(conn, None)
            writer.close()

    async def _serve(self, broker: int, conn: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while broker not in self._down:
            prefix = await asyncio.wait_for(reader.readexactly(4), IDLE_TIMEOUT_S)
            size = P.frame_size(prefix, self.max_request_bytes)
            frame = await asyncio.wait_for(reader.readexactly(size), REQUEST_READ_TIMEOUT_S)
            parsed = P.parse_request(frame)
            if isinstance(parsed, P.Unsupported):
                self.stats.requests["api_versions (unsupported version)"] += 1
                writer.write(P.unsupported_api_versions(parsed))
                await writer.drain()
                continue
            api = API_BY_KEY.get(parsed.api_key, str(parsed.api_key))
            started = time.perf_counter()
            self._waited = 0.0
            body = await self._handle(broker, conn, api, parsed)
            self.stats.requests[api] += 1
            busy = time.perf_counter() - started - self._waited
            self.stats.seconds[api] = self.stats.seconds.get(api, 0.0) + busy
            if body is None:
                continue
            delay = self._delay_ms(api, broker)
            if delay:
                await asyncio.sleep(delay / 1000)
            writer.write(P.encode_response(parsed.api_key, parsed.api_version, parsed.correlation_id, body))
            await writer.drain()

    async def _handle(self, broker: int, conn: int, api: str, req: P.Request) -> Any:
        """The response body (a kio instance), or None when there is none (Produce with acks=0)."""
        b, v = req.body, req.api_version
        fault = self._injected(api, broker)
        if fault is not None and fault.error not in AFTER_APPLY:
            return P.build(P.response_class(req.api_key, v), _error_body(api, b, INJECTABLE[fault.error]))
        a = self.apis
        values: dict[str, Any]
        if api == "api_versions":
            return P.api_versions_body(v)
        if api == "metadata":
            values = a.metadata(b, v)
        elif api == "create_topics":
            values = a.create_topics(b)
        elif api == "find_coordinator":
            values = a.find_coordinator(b, v)
        elif api == "produce":
            values = a.produce(broker, conn, b)
            self._data_changed()
            if fault is not None:
                values = _error_body(api, b, INJECTABLE[fault.error])
            if b.acks == 0:
                return None
        elif api == "fetch":
            values, n = a.fetch(broker, conn, b)
            wait_s = min(b.max_wait.total_seconds(), MAX_FETCH_WAIT_S)
            if n == 0 and wait_s > 0:
                waited = time.perf_counter()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._data.wait(), wait_s)
                self._waited += time.perf_counter() - waited
                values, n = a.fetch(broker, conn, b)
        elif api == "list_offsets":
            values = a.list_offsets(b)
        elif api == "init_producer_id":
            values = a.init_producer_id(broker, conn, b)
        elif api == "add_partitions_to_txn":
            values = a.add_partitions(broker, conn, b)
        elif api == "add_offsets_to_txn":
            values = a.add_offsets(broker, conn, b)
        elif api == "end_txn":
            values = a.end_txn(broker, conn, b)
            self._data_changed()
        elif api == "txn_offset_commit":
            values = a.txn_offset_commit(broker, conn, b)
        elif api == "offset_commit":
            generation = getattr(b, "generation_id_or_member_epoch", getattr(b, "generation_id", -1))
            error = self.groups.check_generation(b.group_id, getattr(b, "member_id", ""), generation)
            values = a.offset_commit(broker, conn, b, error)
        elif api == "offset_fetch":
            values = a.offset_fetch(broker, conn, b)
        elif api == "join_group":
            values = await self._join(b, v)
        elif api == "sync_group":
            assignments = {x.member_id: bytes(x.assignment) for x in b.assignments}
            fut = self.groups.sync(b.group_id, b.member_id, b.generation_id, assignments)
            waited = time.perf_counter()
            values = await _bounded(fut, 30.0, {"error_code": 27, "assignment": b""})
            self._waited += time.perf_counter() - waited
            values["throttle_time"] = 0
        elif api == "heartbeat":
            values = {"throttle_time": 0, "error_code": self.groups.heartbeat(b.group_id, b.member_id, b.generation_id)}
        elif api == "leave_group":
            ids = [m.member_id for m in b.members] if v >= 3 else [b.member_id]
            codes = self.groups.leave(b.group_id, ids)
            values = {
                "throttle_time": 0,
                "error_code": codes[0] if v < 3 else NONE,
                "members": [
                    {"member_id": m, "group_instance_id": None, "error_code": c}
                    for m, c in zip(ids, codes, strict=True)
                ],
            }
        else:
            raise P.CloseConnection(f"api {api} is not served")
        return P.build(P.response_class(req.api_key, v), values)

    async def _join(self, b: Any, v: int) -> dict[str, Any]:
        session_ms = int(b.session_timeout.total_seconds() * 1000)
        rebalance = getattr(b, "rebalance_timeout", None)
        rebalance_ms = (
            session_ms if rebalance is None or rebalance.total_seconds() < 0 else int(rebalance.total_seconds() * 1000)
        )
        protocols = [(p.name, bytes(p.metadata)) for p in b.protocols]
        fut = self.groups.join(b.group_id, b.member_id, b.protocol_type, protocols, session_ms, rebalance_ms, v)
        waited = time.perf_counter()
        values = await _bounded(
            fut,
            rebalance_ms / 1000 + 5.0,
            {"error_code": 27, "member_id": b.member_id, "leader": "", "protocol_name": None, "members": []},
        )
        self._waited += time.perf_counter() - waited
        values["throttle_time"] = 0
        return values

    def _data_changed(self) -> None:
        self._data.set()
        self._data = asyncio.Event()


async def _bounded(fut: asyncio.Future[dict[str, Any]], seconds: float, otherwise: dict[str, Any]) -> dict[str, Any]:
    try:
        return dict(await asyncio.wait_for(asyncio.shield(fut), seconds))
    except TimeoutError:
        return dict(otherwise)


def _each_partition(
    topics: Iterable[Any], topic: tuple[str, str], partitions: tuple[str, str], answer: Callable[[Any], Any]
) -> list[dict[str, Any]]:
    """Per topic of a request, a response entry with its name and one ``answer`` per partition:
    ``topic`` is (the response's key, the request's attribute) of the name, ``partitions`` of the list."""
    (topic_key, topic_attr), (parts_key, parts_attr) = topic, partitions
    return [{topic_key: getattr(t, topic_attr), parts_key: [answer(p) for p in getattr(t, parts_attr)]} for t in topics]


def _error_body(api: str, body: Any, code: int) -> dict[str, Any]:
    """A response that answers every partition (or the request) with ``code``."""
    if api == "produce":
        produce = {"error_code": code, "base_offset": -1, "record_errors": []}
        answers = _each_partition(
            body.topic_data,
            ("name", "name"),
            ("partition_responses", "partition_data"),
            lambda p: {"index": p.index, **produce},
        )
        return {"throttle_time": 0, "responses": answers}
    if api == "fetch":
        fetch = {"error_code": code, "high_watermark": -1, "aborted_transactions": None, "records": None}
        answers = _each_partition(
            body.topics,
            ("topic", "topic"),
            ("partitions", "partitions"),
            lambda p: {"partition_index": p.partition, **fetch},
        )
        return {"throttle_time": 0, "error_code": NONE, "session_id": 0, "responses": answers}
    if api in ("list_offsets", "txn_offset_commit", "offset_commit"):
        answers = _each_partition(
            body.topics,
            ("name", "name"),
            ("partitions", "partitions"),
            lambda p: {"partition_index": p.partition_index, "error_code": code},
        )
        return {"throttle_time": 0, "topics": answers}
    if api == "add_partitions_to_txn":
        answers = _each_partition(
            body.v3_and_below_topics,
            ("name", "name"),
            ("results_by_partition", "partitions"),
            lambda p: {"partition_index": p, "partition_error_code": code},
        )
        return {"throttle_time": 0, "results_by_topic_v3_and_below": answers}
    if api == "offset_fetch":
        return {"throttle_time": 0, "topics": [], "error_code": code}
    if api == "find_coordinator":
        keys = list(getattr(body, "coordinator_keys", ()) or [getattr(body, "key", "")])
        entry = {"node_id": -1, "host": "", "port": -1, "error_code": code, "error_message": None}
        return {"throttle_time": 0, "coordinators": [{"key": k, **entry} for k in keys], **entry}
    return {"throttle_time": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1}


class ServerThread:
    """A Server on its own event loop in a background thread (tests, the benchmark, the probe
    runner): ``start`` returns once every listener is bound; ``stop`` tears it all down (bounded)."""

    def __init__(self, server: Server) -> None:
        import threading

        self.server = server
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="kconform-serve", daemon=True)

    def start(self, ports: list[int] | None = None) -> str:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(ports), self.loop).result(timeout=10)
        return self.server.bootstrap

    def call(self, fn: Any, timeout: float = 10.0) -> Any:
        """Run ``fn()`` on the server's loop (the cluster is not thread-safe) and return its result."""

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout=timeout)

    def stop(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(timeout=10)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
        if not self.loop.is_running():
            self.loop.close()

    def __enter__(self) -> ServerThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
