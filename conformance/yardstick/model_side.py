"""The scenario vocabulary over the model: one driver per subject, each handler a model function.

Handlers and observables (names a scenario uses):

- ``epoch_cache`` (model.epochs, LeaderEpochFileCache): ``assign(epoch, offset)``,
  ``end_offset_for(epoch, log_end)`` → ``epoch``, ``end_offset``; ``truncate_from_end(offset)``,
  ``truncate_from_start(offset)``.
  Observables: ``entries``, ``latest_epoch``. Config: ``protocol`` (a ladder rung).
- ``coordinator`` (model.coordinator, TransactionMetadata / TransactionCoordinator for one
  transactional id): ``init_producer_id(timeout_ms, expected_pid, expected_epoch, fresh_pid, now)``,
  ``add_partitions(pid, epoch, partitions, now)``, ``end_txn(pid, epoch, commit, fresh_pid, now)``,
  ``complete(now)``, ``marker_answered(partition, error, now)``, ``abort_timed_out(now)``,
  ``timed_out(now)`` → ``timed_out``, ``may_expire(now)`` → ``expirable``,
  ``verify(pid, epoch, partition)`` → ``error``, ``load()``, ``lookup(leader, node, loaded)`` →
  ``error`` (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS); answers ``error``, ``result_pid``,
  ``result_epoch``. Observables: ``pid``, ``epoch``, ``last_epoch``, ``previous_pid``,
  ``next_pid``, ``state``, ``partitions``, ``pending``, ``timeout_ms``, ``start_ms``. Config:
  ``transaction_version``, ``transaction_max_timeout_ms``, ``transactional_id_expiration_ms``.
- ``partition`` (model.txn_partition, UnifiedLog + ProducerStateManager + the offsets of a
  ``__consumer_offsets`` partition): ``produce(pid, epoch, seq, records, txn, now)`` → ``outcome``,
  ``error``, ``base_offset``; ``marker(pid, epoch, commit, coordinator_epoch, now)`` → ``error``,
  ``offset``; ``advance_hw(hw)`` (-1: to the LEO); ``fetch(offset, read_committed)`` → ``error``,
  ``offsets``, ``aborted``, ``fetch_lso``; ``poll(offset, read_committed)`` → ``consumed``,
  ``next_offset``; ``expire(pid, now, expiration_ms)`` → ``expired``;
  ``txn_offset_commit(group, pid, epoch, offsets)`` / ``offset_commit(group, offsets)`` → ``error``;
  ``offset_fetch(group, require_stable)`` → ``error``, ``committed``, ``unstable``;
  ``delete_records(offset)`` → ``error``, ``log_start`` (KIP-107, model.log_start: never past the
  HW; fetches outside [log start, LEO] answer OFFSET_OUT_OF_RANGE; the first unstable offset and
  the LSO are lifted to the log start as UnifiedLog.maybeIncrementFirstUnstableOffset does).
  ``pad(to)`` appends records without a producer id until the LEO is ``to``; ``produce`` without
  ``seq`` continues the producer's sequence. Observables:
  ``leo``, ``hw``, ``log_start``, ``lso``, ``first_unstable``, ``aborted_index``, ``producer_epochs``,
  ``last_seqs``, ``ongoing``, ``coordinator_epochs``.
- ``replication`` (model.replication over a partition built from ``given``): see
  ``ReplicationDriver``.
- ``fetch_session`` and ``fetch_session_handler`` (model.fetch_session, model.fetch_client): see
  conformance.yardstick.fetch_side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kconform.conformance.yardstick.dsl import (
    COORDINATOR,
    EPOCH_CACHE,
    PARTITION,
    PRODUCER,
    REPLICATION,
    Driver,
    Refused,
    ScenarioError,
)
from kconform.model import coordinator as C
from kconform.model import epochs, isr_expiration
from kconform.model import log_start as LS
from kconform.model import producer_errors as PE
from kconform.model import producer_state as P
from kconform.model import replication as R
from kconform.model import txn_delayed_fetch as D
from kconform.model import txn_graph as G
from kconform.model import txn_partition as T
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.errors import NONE, OFFSET_OUT_OF_RANGE
from kconform.model.state import FETCHING, TRUNCATING, PartitionRecord, RemoteReplica, Replica, State
from kconform.model.txn_config import TxnConfig
from kconform.traces.events import Entry, TopicOffset


def _args(handler: str, args: Mapping[str, Any], allowed: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` over the defaults ``allowed``; an unknown or missing argument is a ScenarioError."""
    unknown = set(args) - set(allowed)
    if unknown:
        raise ScenarioError(f"{handler}: unknown argument(s) {sorted(unknown)} (known: {sorted(allowed)})")
    out = {**allowed, **args}
    missing = [k for k, v in out.items() if v is _REQUIRED]
    if missing:
        raise ScenarioError(f"{handler}: missing argument(s) {missing}")
    return out


_REQUIRED = object()


def protocol_of(config: Mapping[str, Any]) -> Protocol:
    return Protocol(config.get("protocol", Protocol.DIVERGING_EPOCH.value))


# ---------------------------------------------------------------------------------------------
# epoch_cache


class EpochCacheDriver:
    """model.epochs on a cache given as ``entries`` (LeaderEpochFileCacheTest)."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.cache: epochs.EpochCache = tuple((int(e), int(s)) for e, s in given.get("entries", ()))
        self.fixed = protocol_of(config).kafka_7415

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        if handler == "assign":
            a = _args(handler, args, {"epoch": _REQUIRED, "offset": _REQUIRED})
            self.cache = epochs.assign(self.cache, a["epoch"], a["offset"], kafka_7415=self.fixed)
            return {}
        if handler == "end_offset_for":
            a = _args(handler, args, {"epoch": _REQUIRED, "log_end": _REQUIRED})
            e, end = epochs.end_offset_for(self.cache, a["epoch"], a["log_end"], kafka_7415=self.fixed)
            return {"epoch": e, "end_offset": end}
        if handler == "truncate_from_end":
            a = _args(handler, args, {"offset": _REQUIRED})
            self.cache = epochs.truncate_from_end(self.cache, a["offset"])
            return {}
        if handler == "truncate_from_start":
            a = _args(handler, args, {"offset": _REQUIRED})
            self.cache = epochs.truncate_from_start(self.cache, a["offset"])
            return {}
        raise ScenarioError(f"epoch_cache has no handler {handler!r}")

    def observe(self) -> Mapping[str, Any]:
        return {"entries": self.cache, "latest_epoch": epochs.latest_epoch(self.cache)}


# ---------------------------------------------------------------------------------------------
# coordinator


def txn_config(config: Mapping[str, Any]) -> TxnConfig:
    known = {"transaction_version", "transaction_max_timeout_ms", "transactional_id_expiration_ms"}
    return TxnConfig(**{k: v for k, v in config.items() if k in known})


def metadata_of(given: Mapping[str, Any]) -> C.TxnMetadata | None:
    """TxnMetadata from ``given`` (None: the transactional id is unknown)."""
    if not given:
        return None
    partitions = frozenset(given.get("partitions", ()))
    state = given["state"]
    pending = frozenset(given.get("pending", partitions if state in G.PREPARED else ()))
    return C.TxnMetadata(
        pid=given["pid"],
        epoch=given["epoch"],
        state=state,
        timeout_ms=given.get("timeout_ms", 60_000),
        previous_pid=given.get("previous_pid", -1),
        next_pid=given.get("next_pid", -1),
        last_epoch=given.get("last_epoch", -1),
        partitions=partitions,
        start_ms=given.get("start_ms", 0 if state in (G.ONGOING, *G.PREPARED) else -1),
        last_update_ms=given.get("last_update_ms", 0),
        pending=pending,
    )


class CoordinatorDriver:
    """model.coordinator for one transactional id (TransactionMetadataTest, TransactionCoordinatorTest,
    TransactionStateManagerTest, TransactionMarkerChannelManagerTest)."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.cfg = txn_config(config)
        self.meta = metadata_of(given)

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            return self._call(handler, args)
        except C.NotEnabled as e:
            raise Refused(str(e)) from None

    def _answer(self, meta: C.TxnMetadata | None, answer: C.Answer) -> Mapping[str, Any]:
        self.meta = meta
        return {"error": answer.error, "result_pid": answer.pid, "result_epoch": answer.epoch}

    def _need(self) -> C.TxnMetadata:
        if self.meta is None:
            raise Refused("the transactional id has no metadata")
        return self.meta

    def _call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        cfg = self.cfg
        if handler == "init_producer_id":
            a = _args(
                handler,
                args,
                {"timeout_ms": 60_000, "expected_pid": -1, "expected_epoch": -1, "fresh_pid": _REQUIRED, "now": 0},
            )
            return self._answer(
                *C.init_producer_id(
                    self.meta, cfg, a["now"], a["timeout_ms"], a["expected_pid"], a["expected_epoch"], a["fresh_pid"]
                )
            )
        if handler == "add_partitions":
            a = _args(handler, args, {"pid": _REQUIRED, "epoch": _REQUIRED, "partitions": _REQUIRED, "now": 0})
            return self._answer(
                *C.add_partitions(self.meta, cfg, a["now"], a["pid"], a["epoch"], frozenset(a["partitions"]))
            )
        if handler == "end_txn":
            a = _args(
                handler, args, {"pid": _REQUIRED, "epoch": _REQUIRED, "commit": _REQUIRED, "fresh_pid": -1, "now": 0}
            )
            return self._answer(*C.end_txn(self.meta, cfg, a["now"], a["pid"], a["epoch"], a["commit"], a["fresh_pid"]))
        if handler == "complete":
            a = _args(handler, args, {"now": 0})
            meta = self._need()
            if meta.state not in G.PREPARED:
                raise Refused(f"complete in state {meta.state}")
            self.meta = C.complete(meta, cfg, a["now"])
            return {}
        if handler == "marker_answered":
            a = _args(handler, args, {"partition": _REQUIRED, "error": _REQUIRED, "now": 0})
            self.meta = C.marker_answered(self._need(), cfg, a["now"], a["partition"], a["error"])
            return {}
        if handler == "abort_timed_out":
            a = _args(handler, args, {"now": _REQUIRED})
            self.meta = C.abort_timed_out(self._need(), cfg, a["now"])
            return {}
        if handler == "timed_out":
            a = _args(handler, args, {"now": _REQUIRED})
            return {"timed_out": C.timed_out(self._need(), a["now"])}
        if handler == "may_expire":
            a = _args(handler, args, {"now": _REQUIRED})
            return {"expirable": C.may_expire(self._need(), cfg, a["now"])}
        if handler == "verify":
            a = _args(handler, args, {"pid": _REQUIRED, "epoch": _REQUIRED, "partition": _REQUIRED})
            return {"error": C.verify(self.meta, a["pid"], a["epoch"], a["partition"])}
        if handler == "lookup":
            a = _args(handler, args, {"leader": _REQUIRED, "node": _REQUIRED, "loaded": True})
            return {"error": C.coordinator_error(C.StatePartition(a["leader"], 0, a["loaded"]), a["node"])}
        if handler == "load":
            _args(handler, args, {})
            self.meta = C.loaded(self._need())
            return {}
        raise ScenarioError(f"coordinator has no handler {handler!r}")

    def observe(self) -> Mapping[str, Any]:
        m = self.meta
        if m is None:
            return {"state": G.NO_STATE}
        return {
            "pid": m.pid,
            "epoch": m.epoch,
            "last_epoch": m.last_epoch,
            "previous_pid": m.previous_pid,
            "next_pid": m.next_pid,
            "state": m.state,
            "partitions": m.partitions,
            "pending": m.pending,
            "timeout_ms": m.timeout_ms,
            "start_ms": m.start_ms,
            "markers_abandoned": m.markers_abandoned,
        }


# ---------------------------------------------------------------------------------------------
# partition


class Sequences:
    """A producer's next sequence per (pid, epoch), as LogTestUtils' appenders keep it: a call
    without ``seq`` continues it, a call with one sets it (shared by the model and the reference)."""

    def __init__(self) -> None:
        self._next: dict[tuple[int, int], int] = {}

    def next(self, pid: int, epoch: int, seq: int | None, records: int) -> int:
        if pid == -1:
            return -1
        first = self._next.get((pid, epoch), 0) if seq is None else seq
        self._next[(pid, epoch)] = P.increment_sequence(first, records)
        return first


def _offsets(value: Mapping[str, int]) -> tuple[TopicOffset, ...]:
    return tuple(TopicOffset(p, o) for p, o in value.items())


class PartitionDriver:
    """model.txn_partition on one partition led by broker 0 (UnifiedLogTest, ProducerStateManagerTest,
    OffsetMetadataManagerTest, GroupMetadataManagerTest, FetcherTest's broker answers)."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.p = T.Partition(given.get("name", "t-0"), 0)
        self.log_start = 0
        self.rid = 0
        self.seqs = Sequences()
        self.now_ms = 0
        self.parked: list[D.TxnDelayedFetch] = []
        self.completed: list[T.FetchAnswer] = []

    def _complete(self, ready: bool) -> Mapping[str, Any]:
        """ReplicaManager's checkAndComplete (``ready``) or the timer's expiry: the parked fetches
        that complete now answer (model.txn_delayed_fetch)."""
        done = [df for df in self.parked if (D.ready(self.p, df) if ready else df.deadline_ms <= self.now_ms)]
        self.parked = [df for df in self.parked if df not in done]
        self.completed += [D.read(self.p, df)[0] for df in done]
        return {"completed": len(done)}

    def _answer(self, ans: T.FetchAnswer) -> dict[str, Any]:
        return {
            "error": ans.error,
            "offsets": tuple(r.offset for r in ans.records),
            "aborted": tuple((t.pid, t.first_offset) for t in ans.aborted),
            "fetch_lso": ans.lso if ans.lso < 0 else LS.clamp_hw(ans.lso, self.log_start),
        }

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        if handler == "produce":
            a = _args(handler, args, {"pid": -1, "epoch": -1, "seq": None, "records": 1, "txn": False, "now": 0})
            seq = self.seqs.next(a["pid"], a["epoch"], a["seq"], a["records"])
            rids = tuple(range(self.rid, self.rid + a["records"]))
            self.rid += a["records"]
            self.p, r = T.produce(self.p, 0, a["now"], False, a["pid"], a["epoch"], seq, rids, a["txn"], -1)
            return {"outcome": r.outcome, "error": r.error, "base_offset": r.base_offset}
        if handler == "pad":
            a = _args(handler, args, {"to": _REQUIRED})
            n = a["to"] - self.p.leo
            if n > 0:
                self.p, _r = T.produce(self.p, 0, 0, False, -1, -1, -1, tuple(range(self.rid, self.rid + n)), False, -1)
                self.rid += n
            return {}
        if handler == "marker":
            a = _args(
                handler,
                args,
                {"pid": _REQUIRED, "epoch": _REQUIRED, "commit": _REQUIRED, "coordinator_epoch": 0, "now": 0},
            )
            self.p, m = T.append_marker(self.p, 0, a["now"], a["pid"], a["epoch"], a["commit"], a["coordinator_epoch"])
            return {"error": m.error, "offset": m.offset}
        if handler == "advance_hw":
            a = _args(handler, args, {"hw": -1})
            hw = self.p.leo if a["hw"] == -1 else a["hw"]
            try:
                self.p = T.advance_hw(self.p, hw)
            except ValueError as e:
                raise Refused(str(e)) from None
            return self._complete(ready=True)  # Partition.tryCompleteDelayedRequests
        if handler == "fetch_wait":
            a = _args(
                handler,
                args,
                {"offset": _REQUIRED, "read_committed": _REQUIRED, "min_bytes": _REQUIRED, "max_wait_ms": _REQUIRED},
            )
            ans = T.consumer_fetch(self.p, 0, a["offset"], a["read_committed"])
            if D.answers_at_once(ans, a["min_bytes"], a["max_wait_ms"]):
                return {"parked": False, **self._answer(ans)}
            deadline = self.now_ms + a["max_wait_ms"]
            self.parked.append(D.park(self.p, 0, 0, a["offset"], a["read_committed"], a["min_bytes"], deadline))
            return {"parked": True}
        if handler == "advance_clock":
            a = _args(handler, args, {"ms": _REQUIRED})
            self.now_ms += a["ms"]
            return self._complete(ready=False)
        if handler == "completed":
            if not self.completed:
                raise Refused("no delayed fetch has completed")
            return self._answer(self.completed[-1])
        if handler == "delete_records":
            a = _args(handler, args, {"offset": _REQUIRED})
            error, self.log_start = LS.delete_records(a["offset"], self.log_start, self.p.hw)
            return {"error": error, "log_start": self.log_start}
        if handler in ("fetch", "poll"):
            a = _args(handler, args, {"offset": _REQUIRED, "read_committed": _REQUIRED})
            if not LS.in_range(a["offset"], self.log_start, self.p.leo):
                return {"error": OFFSET_OUT_OF_RANGE, "offsets": (), "aborted": (), "fetch_lso": -1}
            ans = T.consumer_fetch(self.p, 0, a["offset"], a["read_committed"])
            if handler == "poll":
                polled = T.poll(ans, a["offset"], a["read_committed"])
                return {"consumed": tuple(r.offset for r in polled.records), "next_offset": polled.next_offset}
            return self._answer(ans)
        if handler == "expire":
            a = _args(handler, args, {"pid": _REQUIRED, "now": _REQUIRED, "expiration_ms": _REQUIRED})
            after = T.expire_producer(self.p, a["pid"], a["now"], a["expiration_ms"])
            if after is not None:
                self.p = after
            return {"expired": after is not None}
        if handler == "txn_offset_commit":
            a = _args(
                handler,
                args,
                {"group": _REQUIRED, "pid": _REQUIRED, "epoch": _REQUIRED, "offsets": _REQUIRED, "now": 0},
            )
            self.p, oc = T.txn_offset_commit(
                self.p, 0, a["now"], a["group"], a["pid"], a["epoch"], _offsets(a["offsets"])
            )
            return {"error": oc.error}
        if handler == "offset_commit":
            a = _args(handler, args, {"group": _REQUIRED, "offsets": _REQUIRED})
            self.p, pc = T.offset_commit(self.p, 0, a["group"], _offsets(a["offsets"]))
            return {"error": pc.error}
        if handler == "offset_fetch":
            a = _args(handler, args, {"group": _REQUIRED, "require_stable": _REQUIRED})
            of = T.offset_fetch(self.p, 0, a["group"], a["require_stable"])
            return {
                "error": of.error,
                "committed": {o.partition: o.offset for o in of.offsets},
                "unstable": tuple(sorted(of.unstable)),
            }
        raise ScenarioError(f"partition has no handler {handler!r}")

    def observe(self) -> Mapping[str, Any]:
        p = self.p
        fus = T.first_unstable_offset(p)
        # UnifiedLog.maybeIncrementFirstUnstableOffset: never below the log start, nor then the LSO.
        return {
            "leo": p.leo,
            "hw": p.hw,
            "log_start": self.log_start,
            "lso": LS.clamp_hw(T.last_stable_offset(p), self.log_start),
            "first_unstable": -1 if fus is None else LS.clamp_hw(fus, self.log_start),
            "aborted_index": tuple(
                (t.pid, t.first_offset, t.last_offset, t.last_stable_offset) for t in p.aborted_index
            ),
            "producer_epochs": {pid: e.epoch for pid, e in p.producers.items()},
            "last_seqs": {pid: e.last_seq for pid, e in p.producers.items()},
            "ongoing": {pid: e.txn_first_offset for pid, e in p.producers.items() if e.in_transaction},
            "coordinator_epochs": {pid: e.coordinator_epoch for pid, e in p.producers.items()},
        }


# ---------------------------------------------------------------------------------------------
# replication


def replication_state(given: Mapping[str, Any], cfg: ReplicationConfig) -> State:
    """A partition as a Kafka test sets it up: ``logs`` {broker: [epoch of each offset]}, ``hw``
    {broker: HW}, ``leader`` and ``leader_epoch`` (every replica's view), ``isr``, ``follow``
    (followers' fetcher state: "fetching" or "truncating"), ``follower_leos`` {broker: the leader's
    view of that follower's LEO}, ``leader_epochs`` {broker: the leader epoch that broker knows,
    where it differs from ``leader_epoch``: a follower fenced or ahead}, ``now``, ``log_start``
    {broker: log start offset; the offsets below it deleted}, ``partition_epoch`` (0). Epoch caches
    follow the logs (and, with KAFKA-7415, the leader's epoch starts at its LEO). Without a given
    ``hw`` the leader's HW is then moved as Partition.makeLeader's maybeIncrementLeaderHW does."""
    leader = given.get("leader", 0)
    leader_epoch = given.get("leader_epoch", 0)
    isr = tuple(sorted(given.get("isr", cfg.brokers)))
    logs: Mapping[int, list[int]] = given.get("logs", {})
    hws: Mapping[int, int] = given.get("hw", {})
    leos: Mapping[int, int] = given.get("follower_leos", {})
    now = given.get("now", 0)
    follow = given.get("follow", FETCHING)
    known_epochs: Mapping[int, int] = given.get("leader_epochs", {})
    starts: Mapping[int, int] = given.get("log_start", {})
    partition_epoch = given.get("partition_epoch", 0)
    replicas = []
    for b in cfg.brokers:
        log = tuple(Entry(o, e, 1000 * b + o) for o, e in enumerate(logs.get(b, [])))
        cache: epochs.EpochCache = ()
        for entry in log:
            cache = epochs.assign(cache, entry.epoch, entry.offset, kafka_7415=cfg.protocol.kafka_7415)
        if b == leader and cfg.protocol.kafka_7415:
            cache = epochs.assign(cache, known_epochs.get(b, leader_epoch), len(log))
        remotes = tuple(
            RemoteReplica(leo=leos.get(f, -1), last_caught_up_ms=now if f in isr else None) for f in cfg.brokers
        )
        replicas.append(
            Replica(
                log=log,
                hw=hws.get(b, 0),
                epoch_cache=cache,
                registered=True,
                leader=leader,
                leader_epoch=known_epochs.get(b, leader_epoch),
                partition_epoch=partition_epoch,
                isr=isr,
                fetch_state=follow if b != leader else "idle",
                remotes=remotes,
                durable_leo=len(log),
                hw_checkpoint=hws.get(b, 0),
            )
        )
        if starts.get(b, 0):
            replicas[-1] = R.advance_log_start(replicas[-1], starts[b])
    rec = PartitionRecord(leader, leader_epoch, isr, partition_epoch)
    # The purgatory's completion triggers are tracked, as the lockstep judge does (State.tracks_purgatory).
    state = State(tuple(replicas), rec, frozenset(), (rec,), now_ms=now, tracks_purgatory=True)
    if 0 <= leader < len(replicas) and "hw" not in given:
        # Partition.makeLeader ends with maybeIncrementLeaderHW: a leader alone in its ISR, with no
        # follower caught up, has its HW at its LEO at once (model.replication.leader_hw_target).
        target = R.leader_hw_target(state, cfg, leader)
        state = state.with_replica(leader, replace(state.replica(leader), hw=target))
    return state


class ReplicationDriver:
    """model.replication (PartitionTest, ReplicaManagerTest, AbstractFetcherThreadTest,
    ReplicaFetcherThreadTest). Handlers and their answers:
    ``produce(node, acks)`` → ``error``, ``offset``;
    ``fetch(node, follower, fetch_offset, last_fetched_epoch, current_leader_epoch)`` → ``error``,
    ``records``, ``diverging_epoch``, ``diverging_end_offset``, ``hw`` (the answer's);
    ``apply_diverging(follower, epoch, end_offset, leader_hw)`` and
    ``apply_epoch_answer(follower, epoch, end_offset)`` → ``outcome``, ``truncated_to``;
    ``epoch_query(node, epoch, current_leader_epoch)`` → ``error``, ``epoch``, ``end_offset``;
    ``consumer_fetch(node, offset, current_leader_epoch)`` → ``error``, ``records``;
    ``may_expand(node, follower)`` → ``in_sync``; ``hw_target(node)`` → ``target``;
    ``replicate(follower, rounds)`` → ``outcomes`` (round trips with the leader, by rung);
    ``become_follower(node, leader, leader_epoch)`` → ``outcome``, ``truncated_to``;
    ``delete_records(node, offset)`` → ``error``, ``log_start`` (KIP-107).
    Observables: ``log_starts`` {broker: log start offset}, ``logs`` (epoch per offset; -1 below the
    log start), ``latest_epochs``, ``leos``, ``hws``, ``caches`` {broker: ...}, ``leader_hw``,
    ``fetch_states`` {broker: "fetching" / "truncating" / "idle"},
    ``leader_epochs`` {broker: the leader epoch it knows}."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        known = {
            "replicas",
            "min_insync_replicas",
            "protocol",
            "replica_lag_time_max_ms",
            "replica_fetch_min_bytes",
            "replica_fetch_wait_max_ms",
        }
        unknown = set(config) - known
        if unknown:
            raise ScenarioError(f"replication config: unknown key(s) {sorted(unknown)}")
        kw: dict[str, Any] = {k: v for k, v in config.items() if k != "protocol"}
        self.cfg = ReplicationConfig(protocol=protocol_of(config), **kw)
        self.s = replication_state(given, self.cfg)
        self.leader = given.get("leader", 0)
        self.msg = 0

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            return self._call(handler, args)
        except R.NotEnabled as e:
            raise Refused(str(e)) from None

    def _call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        s, cfg = self.s, self.cfg
        if handler == "produce":
            a = _args(handler, args, {"node": self.leader, "acks": -1})
            self.s, r = R.produce(s, cfg, a["node"], 1, 1, a["acks"])
            return {"error": r.error, "offset": r.offset}
        if handler == "fetch":
            a = _args(
                handler,
                args,
                {
                    "node": self.leader,
                    "follower": _REQUIRED,
                    "fetch_offset": _REQUIRED,
                    "last_fetched_epoch": -1,
                    "current_leader_epoch": -1,
                },
            )
            q = R.FetchRequest(a["node"], a["fetch_offset"], a["last_fetched_epoch"], a["current_leader_epoch"], -1)
            self.s, resp = R.handle_fetch(s, cfg, a["node"], a["follower"], q)
            return {
                "error": resp.error,
                "records": len(resp.entries),
                "diverging_epoch": resp.diverging_epoch,
                "diverging_end_offset": resp.diverging_end_offset,
                "hw": resp.hw,
            }
        if handler in ("apply_diverging", "apply_epoch_answer"):
            extra = {"leader_hw": -1} if handler == "apply_diverging" else {}
            a = _args(handler, args, {"follower": _REQUIRED, "epoch": _REQUIRED, "end_offset": _REQUIRED, **extra})
            f = a["follower"]
            rep = s.replica(f)
            if handler == "apply_diverging":
                rep = replace(rep, fetch_state=FETCHING)
                self.s = s.with_replica(f, rep)
                dq = R.FetchRequest(rep.leader, rep.leo, -1, -1, rep.leader_epoch)
                dresp = R.FetchResponse(0, (), a["leader_hw"], a["epoch"], a["end_offset"], -1, a["leader_hw"])
                self.s, fo = R.apply_fetch_response(self.s, cfg, f, dq, dresp)
                return {"outcome": fo.outcome, "truncated_to": fo.truncated_to}
            rep = replace(rep, fetch_state=TRUNCATING)
            self.s = s.with_replica(f, rep)
            eq = R.EpochQuery(rep.leader, epochs.latest_epoch(rep.epoch_cache), -1, rep.leader_epoch)
            self.s, eo = R.apply_epoch_answer(self.s, cfg, f, eq, R.EpochAnswer(0, a["epoch"], a["end_offset"]))
            return {"outcome": eo.outcome, "truncated_to": eo.truncated_to}
        if handler == "epoch_query":
            a = _args(handler, args, {"node": self.leader, "epoch": _REQUIRED, "current_leader_epoch": -1})
            ans = R.handle_epoch_query(
                s, cfg, a["node"], R.EpochQuery(a["node"], a["epoch"], a["current_leader_epoch"], -1)
            )
            return {"error": ans.error, "epoch": ans.epoch, "end_offset": ans.end_offset}
        if handler == "consumer_fetch":
            a = _args(handler, args, {"node": self.leader, "offset": _REQUIRED, "current_leader_epoch": -1})
            self.s, cf = R.consumer_fetch(s, cfg, a["node"], a["offset"], a["current_leader_epoch"])
            return {"error": cf.error, "records": len(cf.entries)}
        if handler == "delete_records":
            a = _args(handler, args, {"node": self.leader, "offset": _REQUIRED})
            self.s, do = R.delete_records(s, cfg, a["node"], a["offset"])
            return {"error": do.error, "log_start": do.log_start}
        if handler == "replicate":
            a = _args(handler, args, {"follower": _REQUIRED, "rounds": 1})
            outcomes: list[str] = []
            for _ in range(a["rounds"]):
                outcomes.append(self._round(a["follower"]))
            return {"outcomes": tuple(outcomes)}
        if handler == "become_follower":
            a = _args(handler, args, {"node": _REQUIRED, "leader": _REQUIRED, "leader_epoch": _REQUIRED})
            ctl = s.controller
            mo = self._publish(
                a["node"], PartitionRecord(a["leader"], a["leader_epoch"], ctl.isr, ctl.partition_epoch + 1)
            )
            return {"outcome": mo.outcome, "truncated_to": mo.truncated_to}
        if handler == "may_expand":
            a = _args(handler, args, {"node": self.leader, "follower": _REQUIRED})
            return {"in_sync": R.may_expand(s, cfg, a["node"], a["follower"])}
        if handler == "fetch_follower":
            a = _args(handler, args, {"follower": _REQUIRED, "fetch_offset": _REQUIRED, "last_fetched_epoch": -1})
            q = R.FetchRequest(self.leader, a["fetch_offset"], a["last_fetched_epoch"], -1, -1)
            self.s, resp = R.handle_fetch(s, cfg, self.leader, a["follower"], q)
            proposed = self._maybe_expand(a["follower"]) if resp.error == NONE else ()
            return {"error": resp.error, "records": len(resp.entries), "hw": resp.hw, "proposed": proposed}
        if handler == "maybe_shrink":
            return {"proposed": self._maybe_shrink()}
        if handler == "complete_isr_update":
            a = _args(handler, args, {"partition_epoch": _REQUIRED, "error": NONE})
            return self._complete_isr_update(a["partition_epoch"], a["error"])
        if handler == "make_leader":
            a = _args(
                handler, args, {"leader_epoch": _REQUIRED, "isr": _REQUIRED, "partition_epoch": _REQUIRED, "leader": 0}
            )
            mo = self._publish(
                0, PartitionRecord(a["leader"], a["leader_epoch"], tuple(sorted(a["isr"])), a["partition_epoch"])
            )
            if a["leader"] == 0:
                self.leader = 0
            return {"outcome": mo.outcome, "changed": mo.outcome == "become_leader"}
        if handler == "advance_clock":
            a = _args(handler, args, {"ms": _REQUIRED})
            self.s = R.advance_clock(s, s.now_ms + a["ms"])
            return {}
        if handler == "consumer_fetch_wait":
            a = _args(
                handler,
                args,
                {
                    "node": self.leader,
                    "req": 2,
                    "offset": _REQUIRED,
                    "current_leader_epoch": -1,
                    "min_bytes": 1,
                    "max_wait_ms": _REQUIRED,
                },
            )
            self.s, cf, parked = R.consumer_fetch_wait(
                s, cfg, a["node"], a["req"], a["offset"], a["current_leader_epoch"], a["min_bytes"], a["max_wait_ms"]
            )
            return {"parked": parked, "error": cf.error}
        if handler == "follower_fetch_wait":
            a = _args(handler, args, {"follower": _REQUIRED, "req": 3, "fetch_offset": _REQUIRED})
            q = R.FetchRequest(self.leader, a["fetch_offset"], -1, -1, -1)
            self.s, _resp = R.park_fetch(s, cfg, self.leader, a["follower"], a["req"], q)
            return {"parked": True}
        if handler == "complete_produce":
            a = _args(handler, args, {"node": self.leader, "req": 1, "error": _REQUIRED})
            try:
                self.s = R.complete_produce(s, cfg, a["node"], a["req"], a["error"])
            except R.NotEnabled:
                return {"accepted": False}
            return {"accepted": True}
        if handler == "complete_fetch":
            a = _args(handler, args, {"node": self.leader, "req": _REQUIRED})
            self.s, answer = R.complete_fetch(s, cfg, a["node"], a["req"])
            records = answer.entries
            return {"error": answer.error, "records": len(records)}
        if handler == "hw_target":
            a = _args(handler, args, {"node": self.leader})
            return {"target": R.leader_hw_target(s, cfg, a["node"])}
        raise ScenarioError(f"replication has no handler {handler!r}")

    def _publish(self, node: int, rec: PartitionRecord) -> R.MetadataOutcome:
        """The controller publishes ``rec`` and broker ``node`` applies it (R.apply_metadata)."""
        s = replace(self.s, controller=rec, published=(*self.s.published, rec))
        self.s, mo = R.apply_metadata(s, self.cfg, node, rec)
        return mo

    def _maybe_expand(self, f: int) -> tuple[int, ...]:
        """Partition.maybeExpandIsr after a follower's fetch: with no AlterPartition in flight, a
        follower outside the ISR that the model says is in sync (R.may_expand) is proposed in; the
        proposal (the maximal ISR) is returned, () when none is sent."""
        r = self.s.replica(self.leader)
        if r.pending_isr is not None or f in r.isr or not R.may_expand(self.s, self.cfg, self.leader, f):
            return ()
        return self._propose(tuple(sorted((*r.isr, f))))

    def _maybe_shrink(self) -> tuple[int, ...]:
        """Partition.maybeShrinkIsr: with no AlterPartition in flight, the ISR members the model
        says are not caught up (model.isr_expiration.out_of_sync) are proposed out."""
        s, cfg = self.s, self.cfg
        r = s.replica(self.leader)
        if r.pending_isr is not None:
            return ()
        out = isr_expiration.out_of_sync(cfg, r, self.leader, s.now_ms)
        if not out:
            return ()
        return self._propose(tuple(f for f in r.isr if f not in out))

    def _propose(self, isr: tuple[int, ...]) -> tuple[int, ...]:
        self.msg += 1
        self.s = R.propose_isr(self.s, self.cfg, self.leader, self.msg, isr)
        return isr

    def _complete_isr_update(self, partition_epoch: int, error: int) -> Mapping[str, Any]:
        """AlterPartitionManager's answer to the proposal in flight (the test's completeIsrUpdate /
        failIsrUpdate): on success the controller has committed the proposed ISR at
        ``partition_epoch``."""
        r = self.s.replica(self.leader)
        if r.pending_isr is None:
            raise ScenarioError("complete_isr_update: no AlterPartition in flight")
        isr = r.pending_isr.isr
        self.s = R.apply_alter_partition_response(
            self.s, self.cfg, self.leader, r.pending_isr.msg, error, isr, partition_epoch
        )
        return {}

    def _round(self, f: int) -> str:
        """One round trip of follower ``f`` with its leader: an OffsetsForLeaderEpoch while
        truncating (KIP-101..320 rungs), else a Fetch (with lastFetchedEpoch on diverging-epoch)."""
        s, cfg = self.s, self.cfg
        r = s.replica(f)
        if r.fetch_state == TRUNCATING:
            q = R.epoch_query_request(s, cfg, f)
            ans = R.handle_epoch_query(s, cfg, q.leader, q)
            self.s, eo = R.apply_epoch_answer(s, cfg, f, q, ans)
            return eo.outcome
        fq = R.fetch_request(s, cfg, f)
        s, resp = R.handle_fetch(s, cfg, fq.leader, f, fq)
        self.s, fo = R.apply_fetch_response(s, cfg, f, fq, resp)
        return fo.outcome

    def observe(self) -> Mapping[str, Any]:
        rs = self.s.replicas
        return {
            "logs": {b: tuple(e.epoch for e in r.log) for b, r in enumerate(rs)},
            "latest_epochs": {b: epochs.latest_epoch(r.epoch_cache) for b, r in enumerate(rs)},
            "leos": {b: r.leo for b, r in enumerate(rs)},
            "hws": {b: r.hw for b, r in enumerate(rs)},
            "caches": {b: r.epoch_cache for b, r in enumerate(rs)},
            "leader_hw": rs[self.leader].hw,
            "fetch_states": {b: r.fetch_state for b, r in enumerate(rs)},
            "leader_epochs": {b: r.leader_epoch for b, r in enumerate(rs)},
            "log_starts": {b: r.log_start for b, r in enumerate(rs)},
            "partition_epochs": {b: r.partition_epoch for b, r in enumerate(rs)},
            "parked": {b: tuple(sorted(d.req for d in r.purgatory)) for b, r in enumerate(rs)},
            "due": {b: tuple(sorted(r.due)) for b, r in enumerate(rs)},
            **self._leader_view(),
        }

    def _leader_view(self) -> dict[str, Any]:
        """The leader's partition state (Partition.partitionState and its remote ReplicaStates):
        ``isr`` (committed), ``maximal_isr`` (with an expansion in flight, KIP-497), ``inflight``,
        ``partition_epoch``, ``remote_leos`` and ``last_caught_up`` {follower: ms, None = never},
        ``under_min_isr`` / ``at_min_isr`` (Partition.isUnderMinIsr / isAtMinIsr: the committed
        ISR's size against min.insync.replicas)."""
        r = self.s.replica(self.leader)
        others = [f for f in self.cfg.brokers if f != self.leader]
        return {
            "isr": frozenset(r.isr),
            "maximal_isr": frozenset(R.maximal_isr(r)),
            "inflight": r.pending_isr is not None,
            "partition_epoch": r.partition_epoch,
            "remote_leos": {f: r.remotes[f].leo for f in others},
            "last_caught_up": {f: r.remotes[f].last_caught_up_ms for f in others},
            "under_min_isr": len(r.isr) < self.cfg.effective_min_isr,
            "at_min_isr": len(r.isr) == self.cfg.effective_min_isr,
        }


class ProducerDriver:
    """model.producer_errors (TransactionManagerTest): ``answer(request, error)`` → ``action``,
    ``raised``; the subject has no state of its own (``observe`` is empty)."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        if given or config:
            raise ScenarioError("producer: the reaction table takes no given state or config")

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        if handler != "answer":
            raise ScenarioError(f"producer has no handler {handler!r}")
        a = _args(handler, args, {"request": _REQUIRED, "error": _REQUIRED})
        try:
            r = PE.reaction(a["request"], a["error"])
        except ValueError as e:
            raise ScenarioError(str(e)) from None
        return {"action": r.action, "raised": r.raised}

    def observe(self) -> Mapping[str, Any]:
        return {}


def model_driver(subject: str) -> Driver:
    """The model's driver of ``subject``."""
    from kconform.conformance.yardstick.fetch_side import MODEL_DRIVERS as FETCH_DRIVERS  # imports this module

    drivers: dict[str, type[Any]] = {
        EPOCH_CACHE: EpochCacheDriver,
        COORDINATOR: CoordinatorDriver,
        PARTITION: PartitionDriver,
        REPLICATION: ReplicationDriver,
        PRODUCER: ProducerDriver,
        **FETCH_DRIVERS,
    }
    driver: Driver = drivers[subject]()
    return driver


__all__ = ["P", "model_driver", "replication_state"]
