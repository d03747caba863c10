"""The scenario vocabulary over the reference implementation (impl/), where it has the same unit.

The reference is a simulated cluster; three of its units stand alone and take the vocabulary's
handlers directly: the leader-epoch cache (``impl.log.LeaderEpochCache``), a partition leader's
log with producer state and offsets (``impl.txn_log.TxnPartitionLog``) and the transaction
coordinator's request logic (``impl.txn_coordinator.TxnCoordinator``: InitProducerId,
AddPartitionsToTxn, EndTxn, completion, the timeout scan). A handler the reference runs only inside
its simulated network (marker answers, loading, verification, the replication handlers) makes the
scenario's reference verdict ``n/a`` with that reason; the gate checks those handlers against the
model in lockstep.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import COORDINATOR, EPOCH_CACHE, PARTITION, Driver, Refused, ScenarioError
from kconform.conformance.yardstick.model_side import _REQUIRED, Sequences, _args, protocol_of, txn_config
from kconform.impl.replication.log import LeaderEpochCache
from kconform.impl.txn import coordinator as IC
from kconform.impl.txn.cluster import TxnSimulation
from kconform.impl.txn.log import TxnPartitionLog
from kconform.impl.txn.messages import EndTxnRequest, InitPidRequest
from kconform.model import txn_graph as G
from kconform.traces.events import NONE, TopicOffset

TXN_ID = "txn-1"


FILLER_PID = 2**40
"""The producer id of records "from other writers" (``pad``, a produce without a producer id): the
reference has no non-idempotent producer path, and such records only occupy offsets. Hidden from
the producer-state observables."""


class Unsupported(Exception):
    """The reference has no standalone unit for this handler (the message says why)."""


class RefEpochCache:
    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.cache = LeaderEpochCache(
            tuple((int(e), int(s)) for e, s in given.get("entries", ())), kafka_7415=protocol_of(config).kafka_7415
        )

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        if handler == "assign":
            a = _args(handler, args, {"epoch": _REQUIRED, "offset": _REQUIRED})
            self.cache.assign(a["epoch"], a["offset"])
            return {}
        if handler == "end_offset_for":
            a = _args(handler, args, {"epoch": _REQUIRED, "log_end": _REQUIRED})
            e, end = self.cache.end_offset_for(a["epoch"], a["log_end"])
            return {"epoch": e, "end_offset": end}
        if handler == "truncate_from_end":
            a = _args(handler, args, {"offset": _REQUIRED})
            self.cache.truncate_from_end(a["offset"])
            return {}
        if handler == "truncate_from_start":
            a = _args(handler, args, {"offset": _REQUIRED})
            self.cache.truncate_from_start(a["offset"])
            return {}
        raise ScenarioError(f"epoch_cache has no handler {handler!r}")

    def observe(self) -> Mapping[str, Any]:
        return {"entries": self.cache.snapshot(), "latest_epoch": self.cache.latest_epoch()}


class RefPartition:
    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.sim = TxnSimulation(txn_config(config), frozenset())
        self.log = TxnPartitionLog(given.get("name", "t-0"), self.sim.world)
        self.rid = 0
        self.seqs = Sequences()

    def _produce(self, pid: int, epoch: int, seq: int, records: int, txn: bool) -> Mapping[str, Any]:
        if pid == -1:  # the reference's producers are all idempotent: another writer's batch
            pid, epoch, txn = FILLER_PID, 0, False
            seq = self.seqs.next(pid, epoch, None, records)
        rids = tuple(range(self.rid, self.rid + records))
        self.rid += records
        r = self.log.append_client(pid, epoch, seq, rids, txn, None)
        return {"outcome": r.outcome, "error": r.error, "base_offset": r.base_offset}

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        world = self.sim.world
        if handler == "produce":
            a = _args(handler, args, {"pid": -1, "epoch": -1, "seq": None, "records": 1, "txn": False, "now": 0})
            world.scheduler.now_ms = a["now"]
            return self._produce(
                a["pid"],
                a["epoch"],
                self.seqs.next(a["pid"], a["epoch"], a["seq"], a["records"]),
                a["records"],
                a["txn"],
            )
        if handler == "pad":
            a = _args(handler, args, {"to": _REQUIRED})
            if a["to"] > self.log.leo:
                self._produce(-1, -1, -1, a["to"] - self.log.leo, False)
            return {}
        if handler == "marker":
            a = _args(
                handler,
                args,
                {"pid": _REQUIRED, "epoch": _REQUIRED, "commit": _REQUIRED, "coordinator_epoch": 0, "now": 0},
            )
            world.scheduler.now_ms = a["now"]
            error, offset = self.log.append_marker(a["pid"], a["epoch"], a["commit"], a["coordinator_epoch"])
            return {"error": error, "offset": offset}
        if handler == "advance_hw":
            a = _args(handler, args, {"hw": -1})
            hw = self.log.leo if a["hw"] == -1 else a["hw"]
            if not self.log.hw <= hw <= self.log.leo:
                raise Refused(f"HW {self.log.hw} -> {hw} with LEO {self.log.leo}")
            self.log.advance_hw(hw)
            return {}
        if handler == "delete_records":
            raise Unsupported(
                "the reference's exactly-once log (impl/txn/log.py) has no log start: DeleteRecords is the fetch "
                "slice broker's (impl/fetch/broker.PartitionLog), driven by that slice's gate"
            )
        if handler in ("fetch_wait", "advance_clock", "completed"):
            raise Unsupported(
                "the delayed fetch is the reference broker's purgatory (impl/txn/broker.py), not its log's: the "
                "gate drives it (zoo scenario delayed-fetch-beyond-lso, tests/test_txn_delayed_fetch.py)"
            )
        if handler in ("fetch", "poll"):
            if handler == "poll":
                raise Unsupported("the consumer's filter runs in the reference's consumer client, not in the log")
            a = _args(handler, args, {"offset": _REQUIRED, "read_committed": _REQUIRED})
            error, records, aborted = self.log.fetch(a["offset"], a["read_committed"])
            return {
                "error": error,
                "offsets": tuple(r.offset for r in records),
                "aborted": tuple((t.pid, t.first_offset) for t in aborted),
                "fetch_lso": self.log.lso(),
            }
        if handler == "expire":
            a = _args(handler, args, {"pid": _REQUIRED, "now": _REQUIRED, "expiration_ms": _REQUIRED})
            if a["expiration_ms"] != world.config.producer_id_expiration_ms:
                raise Unsupported("the reference reads producer.id.expiration.ms from its configuration")
            world.scheduler.now_ms = a["now"]
            before = set(self.log.producers)
            expired = self.log.expire_producers()
            if set(expired) - {a["pid"], FILLER_PID}:
                raise ScenarioError("the reference expired other producers too")
            return {"expired": a["pid"] in expired and a["pid"] in before}
        if handler == "txn_offset_commit":
            a = _args(
                handler,
                args,
                {"group": _REQUIRED, "pid": _REQUIRED, "epoch": _REQUIRED, "offsets": _REQUIRED, "now": 0},
            )
            offsets = tuple(TopicOffset(p, o) for p, o in a["offsets"].items())
            error, _base = self.log.txn_offset_commit(a["pid"], a["epoch"], a["group"], offsets)
            return {"error": error}
        if handler == "offset_commit":
            a = _args(handler, args, {"group": _REQUIRED, "offsets": _REQUIRED})
            self.log.offset_commit(a["group"], tuple(TopicOffset(p, o) for p, o in a["offsets"].items()))
            return {"error": NONE}
        if handler == "offset_fetch":
            a = _args(handler, args, {"group": _REQUIRED, "require_stable": _REQUIRED})
            error, offsets, unstable = self.log.offset_fetch(a["group"], a["require_stable"])
            return {
                "error": error,
                "committed": {o.partition: o.offset for o in offsets},
                "unstable": tuple(sorted(unstable)),
            }
        raise ScenarioError(f"partition has no handler {handler!r}")

    def observe(self) -> Mapping[str, Any]:
        log = self.log
        producers = {pid: e for pid, e in log.producers.items() if pid != FILLER_PID}
        unstable = [e.txn_first_offset for e in log.producers.values() if e.txn_first_offset >= 0]
        unstable += [first for first, _ in log.unreplicated]
        return {
            "leo": log.leo,
            "hw": log.hw,
            "lso": log.lso(),
            "first_unstable": min(unstable) if unstable else -1,
            "aborted_index": tuple(
                (a.pid, a.first_offset, a.last_offset, a.last_stable_offset) for a in log.aborted_index
            ),
            "producer_epochs": {pid: e.epoch for pid, e in producers.items()},
            "last_seqs": {pid: (e.batches[-1].last_seq if e.batches else -1) for pid, e in producers.items()},
            "ongoing": {pid: e.txn_first_offset for pid, e in producers.items() if e.txn_first_offset >= 0},
            "coordinator_epochs": {pid: e.coordinator_epoch for pid, e in producers.items()},
        }


class RefCoordinator:
    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        cfg = txn_config(config)
        self.sim = TxnSimulation(cfg, frozenset())
        world = self.sim.world
        # a Kafka test's partitions (topic1-0, ...) are led by broker 0 when markers go out
        world.metadata.leaders = collections.defaultdict(int, world.metadata.leaders)
        self.coordinator = IC.TxnCoordinator(99, world, cfg.state_partition(TXN_ID), 0)
        self.coordinator.loading = False
        if given:
            state = given["state"]
            parts = set(given.get("partitions", ()))
            meta = IC.TxnMetadata(
                given["pid"],
                given["epoch"],
                given.get("timeout_ms", 60_000),
                given.get("previous_pid", -1),
                given.get("next_pid", -1),
                given.get("last_epoch", -1),
                state,
                parts,
                given.get("start_ms", 0 if state in (G.ONGOING, *G.PREPARED) else -1),
                given.get("last_update_ms", 0),
            )
            if state in G.PREPARED:
                meta.markers = {p: -1 for p in given.get("pending", parts)}
            self.coordinator.txns[TXN_ID] = meta

    def _meta(self) -> IC.TxnMetadata | None:
        return self.coordinator.txns.get(TXN_ID)

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        world = self.sim.world
        if handler == "init_producer_id":
            a = _args(
                handler,
                args,
                {"timeout_ms": 60_000, "expected_pid": -1, "expected_epoch": -1, "fresh_pid": _REQUIRED, "now": 0},
            )
            world.metadata.next_pid, world.scheduler.now_ms = a["fresh_pid"], a["now"]
            error, pid, epoch, _state = self.coordinator._init_pid(
                InitPidRequest(TXN_ID, a["timeout_ms"], a["expected_pid"], a["expected_epoch"])
            )
            return {"error": error, "result_pid": pid, "result_epoch": epoch}
        if handler == "add_partitions":
            a = _args(handler, args, {"pid": _REQUIRED, "epoch": _REQUIRED, "partitions": _REQUIRED, "now": 0})
            world.scheduler.now_ms = a["now"]
            error, _state = self.coordinator._add(TXN_ID, a["pid"], a["epoch"], set(a["partitions"]))
            return {"error": error, "result_pid": -1, "result_epoch": -1}
        if handler == "end_txn":
            a = _args(
                handler, args, {"pid": _REQUIRED, "epoch": _REQUIRED, "commit": _REQUIRED, "fresh_pid": -1, "now": 0}
            )
            if a["fresh_pid"] != -1:
                world.metadata.next_pid = a["fresh_pid"]
            world.scheduler.now_ms = a["now"]
            req = EndTxnRequest(TXN_ID, a["pid"], a["epoch"], a["commit"], 0)
            end = (
                self.coordinator._end_txn_v2 if world.config.transaction_version == 2 else self.coordinator._end_txn_v0
            )
            error, pid, epoch, _state = end(req)
            return {"error": error, "result_pid": pid, "result_epoch": epoch}
        if handler == "complete":
            a = _args(handler, args, {"now": 0})
            meta = self._meta()
            if meta is None or meta.state not in G.PREPARED:
                raise Refused("complete outside Prepare*")
            world.scheduler.now_ms = a["now"]
            self.coordinator._complete(TXN_ID, meta)
            return {}
        if handler == "abort_timed_out":
            a = _args(handler, args, {"now": _REQUIRED})
            world.scheduler.now_ms = a["now"]
            before = self._meta()
            state = before.state if before else ""
            self.coordinator._abort_timed_out()
            after = self._meta()
            if after is None or after.state == state:
                raise Refused("the reference's timeout scan skipped the transaction")
            return {}
        raise Unsupported(f"the reference runs {handler} only inside its simulated network")

    def observe(self) -> Mapping[str, Any]:
        m = self._meta()
        if m is None:
            return {"state": G.NO_STATE}
        return {
            "pid": m.pid,
            "epoch": m.epoch,
            "last_epoch": m.last_epoch,
            "previous_pid": m.prev_pid,
            "next_pid": m.next_pid,
            "state": m.state,
            "partitions": frozenset(m.partitions),
            "pending": frozenset(m.markers),
            "timeout_ms": m.timeout_ms,
            "start_ms": m.start_ms,
        }


REFERENCE_SCOPE: dict[str, str] = {
    "replication": "the reference's replication handlers run inside its simulated cluster (brokers, network, "
    "controller); the gate checks them against the model in lockstep",
    "producer": "the reference's transactional producer (impl/txn/clients.py) reacts to answers only inside its "
    "simulated cluster",
    "fetch_session_handler": "the reference's FetchSessionHandler lives in its client node (impl/fetch/client.py), "
    "driven through the simulated network; the gate checks it against the model in lockstep",
}
"""Subjects without a standalone reference unit, and why."""


def reference_driver(subject: str) -> Driver | None:
    """The reference's driver of ``subject``, None when it has none (REFERENCE_SCOPE says why)."""
    from kconform.conformance.yardstick.fetch_side import REFERENCE_DRIVERS as FETCH_DRIVERS

    drivers: dict[str, type[Any]] = {
        EPOCH_CACHE: RefEpochCache,
        PARTITION: RefPartition,
        COORDINATOR: RefCoordinator,
        **FETCH_DRIVERS,
    }
    cls = drivers.get(subject)
    if cls is None:
        return None
    driver: Driver = cls()
    return driver
