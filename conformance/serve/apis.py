"""Each Kafka API the served cluster answers: a kio request body in, a response body (as a dict for
``protocol.build``) out, through the reference cluster where the slice has a handler.

Judged (one ``WireRequest`` per partition, group or coordinator request): Produce, Fetch,
InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit, OffsetCommit,
OffsetFetch. Answered by the serving layer from the reference's state, not judged (the model has
no handler for them): ApiVersions, Metadata, CreateTopics, FindCoordinator, ListOffsets (earliest
0, latest the HW or, read_committed, the LSO: ListOffsetsRequest's isolation level, KIP-98) and the
group membership requests (groups.py). Errors the serving layer gives without asking the reference
(a batch that does not decode, an unknown topic, a full name pool) are Kafka's codes for them.
"""

from __future__ import annotations

import uuid
from typing import Any

from kconform.impl.txn.messages import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    CoordinatorResponse,
    EndTxnRequest,
    GroupResponse,
    InitPidRequest,
    InitPidResponse,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TxnFetchRequest,
    TxnFetchResponse,
    TxnOffsetCommitRequest,
    TxnProduceRequest,
    TxnProduceResponse,
)
from kconform.model.records import COMMIT_MARKER, NO_CONTROL
from kconform.traces.events import TopicOffset

from .cluster import PoolExhausted, ServedCluster
from .records import Batch, BatchError, WireRecord, control_batch, decode_batches, encode_batch

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
REQUEST_TIMED_OUT = 7
COORDINATOR_NOT_AVAILABLE = 15
INVALID_RECORD = 87
INVALID_PARTITIONS = 37
TOPIC_ALREADY_EXISTS = 36
INVALID_TRANSACTION_TIMEOUT = 50
COORDINATOR_KEY_GROUP = 0
COORDINATOR_KEY_TXN = 1


class Apis:
    """The served APIs over one ServedCluster; ``endpoints[b]`` is broker b's (host, port)."""

    def __init__(self, cluster: ServedCluster, endpoints: list[tuple[str, int]], default_partitions: int = 1) -> None:
        self.cluster = cluster
        self.endpoints = endpoints
        self.default_partitions = default_partitions
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.notes: list[str] = []
        """What the serving layer refused without the reference (names a pool could not hold, ...)."""

    @property
    def cfg(self) -> Any:
        return self.cluster.cfg

    def leader(self, partition: str) -> int:
        return int(self.cluster.sim.world.metadata.leaders[partition])

    # ------------------------------------------------------------------------ metadata

    def _create(self, name: str, partitions: int) -> int:
        try:
            self.cluster.aliases.create_topic(name, partitions)
        except PoolExhausted as exc:
            self.notes.append(str(exc))
            return INVALID_PARTITIONS
        self.topic_ids.setdefault(name, uuid.uuid5(uuid.NAMESPACE_URL, f"kconform-serve/{name}"))
        return NONE

    def _topic_meta(self, name: str) -> dict[str, Any]:
        parts = self.cluster.aliases.topics.get(name)
        if parts is None:
            return {"error_code": UNKNOWN_TOPIC_OR_PARTITION, "name": name, "topic_id": None, "partitions": []}
        return {
            "error_code": NONE,
            "name": name,
            "topic_id": self.topic_ids[name],
            "is_internal": False,
            "partitions": [
                {
                    "error_code": NONE,
                    "partition_index": i,
                    "leader_id": self.leader(p),
                    "leader_epoch": 0,
                    "replica_nodes": [self.leader(p)],
                    "isr_nodes": [self.leader(p)],
                }
                for i, p in enumerate(parts)
            ],
        }

    def metadata(self, body: Any, version: int) -> dict[str, Any]:
        requested = body.topics
        if requested is None or (version == 0 and not requested):
            names = list(self.cluster.aliases.topics)
        else:
            names = [t.name for t in requested if t.name is not None]
            auto = getattr(body, "allow_auto_topic_creation", True)
            for n in names:
                if auto and n not in self.cluster.aliases.topics:
                    self._create(n, self.default_partitions)
        return {
            "throttle_time": 0,
            "brokers": [{"node_id": b, "host": h, "port": p} for b, (h, p) in enumerate(self.endpoints)],
            "cluster_id": "kconform-serve",
            "controller_id": 0,
            "topics": [self._topic_meta(n) for n in names],
        }

    def create_topics(self, body: Any) -> dict[str, Any]:
        out = []
        for t in body.topics:
            if t.name in self.cluster.aliases.topics:
                code = TOPIC_ALREADY_EXISTS
            else:
                n = t.num_partitions if t.num_partitions > 0 else self.default_partitions
                code = NONE if getattr(body, "validate_only", False) else self._create(t.name, n)
            parts = self.cluster.aliases.topics.get(t.name, ())
            out.append(
                {
                    "name": t.name,
                    "topic_id": self.topic_ids.get(t.name),
                    "error_code": code,
                    "error_message": None
                    if code == NONE
                    else self.notes[-1]
                    if code == INVALID_PARTITIONS
                    else "exists",
                    "num_partitions": len(parts) or -1,
                    "replication_factor": 1,
                    "configs": [],
                }
            )
        return {"throttle_time": 0, "topics": out}

    def find_coordinator(self, body: Any, version: int) -> dict[str, Any]:
        key_type = getattr(body, "key_type", COORDINATOR_KEY_GROUP)
        keys = list(body.coordinator_keys) if version >= 4 else [body.key]
        found = [self._coordinator(k, key_type) for k in keys]
        first = found[0]
        return {"throttle_time": 0, "coordinators": found, **{k: v for k, v in first.items() if k != "key"}}

    def _coordinator(self, key: str, key_type: int) -> dict[str, Any]:
        try:
            if key_type == COORDINATOR_KEY_TXN:
                partition = self.cfg.state_partition(self.cluster.aliases.txn_id(key))
            else:
                partition = self.cfg.offsets_partition(self.cluster.aliases.group(key))
        except PoolExhausted as exc:
            self.notes.append(str(exc))
            return {
                "key": key,
                "node_id": -1,
                "host": "",
                "port": -1,
                "error_code": COORDINATOR_NOT_AVAILABLE,
                "error_message": str(exc),
            }
        b = self.leader(partition)
        host, port = self.endpoints[b]
        return {"key": key, "node_id": b, "host": host, "port": port, "error_code": NONE, "error_message": None}

    # ------------------------------------------------------------------------- produce

    def produce(self, broker: int, conn: int, body: Any) -> dict[str, Any]:
        real_txn = getattr(body, "transactional_id", None)
        responses = []
        for topic in body.topic_data:
            parts = []
            for pd in topic.partition_data:
                error, base_offset = self._produce_partition(broker, conn, topic.name, pd.index, pd.records, real_txn)
                parts.append(
                    {
                        "index": pd.index,
                        "error_code": error,
                        "base_offset": base_offset,
                        "log_start_offset": 0,
                        "record_errors": [],
                    }
                )
            responses.append({"name": topic.name, "partition_responses": parts})
        return {"responses": responses, "throttle_time": 0}

    def _produce_partition(
        self, broker: int, conn: int, topic: str, index: int, data: bytes | None, real_txn: str | None
    ) -> tuple[int, int]:
        partition = self.cluster.aliases.partition(topic, index)
        if partition is None:
            return UNKNOWN_TOPIC_OR_PARTITION, -1
        try:
            batches = decode_batches(bytes(data or b""))
        except BatchError as exc:
            self.notes.append(f"produce to {topic}-{index}: {exc}")
            return exc.code, -1
        if len(batches) != 1 or batches[0].control or not batches[0].records:
            return INVALID_RECORD, -1
        batch = batches[0]
        txn_id = ""
        if batch.transactional:
            try:
                txn_id = self.cluster.aliases.txn_id(real_txn or "")
            except PoolExhausted:
                return COORDINATOR_NOT_AVAILABLE, -1
        rids = self.cluster.rids_for(
            partition, batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.records
        )
        ctxn = self.cluster.ctxn(txn_id, batch.producer_id, batch.producer_epoch) if batch.transactional else -1
        request = TxnProduceRequest(
            partition,
            txn_id,
            batch.producer_id,
            batch.producer_epoch,
            batch.base_sequence,
            rids,
            batch.transactional,
            ctxn,
        )
        answer = self.cluster.send(conn, broker, request)
        if not isinstance(answer, TxnProduceResponse):
            return REQUEST_TIMED_OUT, -1
        return answer.error, answer.base_offset

    # --------------------------------------------------------------------------- fetch

    def fetch(self, broker: int, conn: int, body: Any) -> tuple[dict[str, Any], int]:
        """The response and the number of records it holds (0: the caller may long-poll)."""
        read_committed = getattr(body, "isolation_level", 0) == 1
        total = 0
        responses = []
        for topic in body.topics:
            parts = []
            for fp in topic.partitions:
                entry, n = self._fetch_partition(
                    broker, conn, topic.topic, fp.partition, fp.fetch_offset, fp.partition_max_bytes, read_committed
                )
                total += n
                parts.append(entry)
            responses.append({"topic": topic.topic, "partitions": parts})
        return {"throttle_time": 0, "error_code": NONE, "session_id": 0, "responses": responses}, total

    def _fetch_partition(
        self, broker: int, conn: int, topic: str, index: int, offset: int, max_bytes: int, read_committed: bool
    ) -> tuple[dict[str, Any], int]:
        partition = self.cluster.aliases.partition(topic, index)
        base = {
            "partition_index": index,
            "high_watermark": -1,
            "last_stable_offset": -1,
            "log_start_offset": -1,
            "aborted_transactions": None,
            "records": None,
        }
        if partition is None:
            return {**base, "error_code": UNKNOWN_TOPIC_OR_PARTITION}, 0
        answer = self.cluster.send(conn, broker, TxnFetchRequest(partition, offset, read_committed))
        if not isinstance(answer, TxnFetchResponse):
            return {**base, "error_code": REQUEST_TIMED_OUT}, 0
        log = self.cluster.sim.brokers[self.leader(partition)].logs.get(partition)
        hw = log.hw if log is not None else -1
        lso = log.lso() if log is not None else -1
        data = self._encode(answer.records, max_bytes)
        aborted = (
            [{"producer_id": a.pid, "first_offset": a.first_offset} for a in answer.aborted] if read_committed else None
        )
        return {
            **base,
            "error_code": answer.error,
            "high_watermark": hw,
            "last_stable_offset": lso,
            "log_start_offset": 0,
            "aborted_transactions": aborted,
            "records": data,
        }, len(answer.records)

    def _encode(self, records: tuple[Any, ...], max_bytes: int) -> bytes:
        """The model's records as the client's batches (control records as marker batches), cut
        after the batch that passes ``max_bytes`` (at least one batch, as Kafka does)."""
        out = bytearray()
        i = 0
        while i < len(records) and (not out or len(out) < max_bytes):
            r = records[i]
            if r.control != NO_CONTROL:
                out += control_batch(r.offset, r.pid, r.epoch, r.control == COMMIT_MARKER, 0)
                i += 1
                continue
            batch_id = self.cluster.batch_of.get(r.rid)
            j = i + 1
            while (
                j < len(records)
                and records[j].control == NO_CONTROL
                and self.cluster.batch_of.get(records[j].rid) == batch_id
                and records[j].offset == records[j - 1].offset + 1
            ):
                j += 1
            group = records[i:j]
            wire = tuple(self.cluster.records.get(x.rid, WireRecord(0, None, None)) for x in group)
            attrs = 0x10 if r.txn else 0
            out += encode_batch(Batch(r.offset, r.pid, r.epoch, r.seq, attrs, wire))
            i = j
        return bytes(out)

    def list_offsets(self, body: Any) -> dict[str, Any]:
        read_committed = getattr(body, "isolation_level", 0) == 1
        topics = []
        for t in body.topics:
            parts = []
            for p in t.partitions:
                partition = self.cluster.aliases.partition(t.name, p.partition_index)
                if partition is None:
                    parts.append({"partition_index": p.partition_index, "error_code": UNKNOWN_TOPIC_OR_PARTITION})
                    continue
                log = self.cluster.sim.brokers[self.leader(partition)].logs[partition]
                if p.timestamp == -2:
                    offset = 0
                elif p.timestamp == -1:
                    offset = log.lso() if read_committed else log.hw
                else:
                    offset = next(
                        (
                            r.offset
                            for r in log.records[: log.hw]
                            if r.rid in self.cluster.records and self.cluster.records[r.rid].timestamp >= p.timestamp
                        ),
                        -1,
                    )
                parts.append(
                    {
                        "partition_index": p.partition_index,
                        "error_code": NONE,
                        "timestamp": -1,
                        "offset": offset,
                        "leader_epoch": 0,
                    }
                )
            topics.append({"name": t.name, "partitions": parts})
        return {"throttle_time": 0, "topics": topics}

    # ----------------------------------------------------------------- transactions

    def init_producer_id(self, broker: int, conn: int, body: Any) -> dict[str, Any]:
        real = body.transactional_id
        try:
            txn_id = self.cluster.aliases.txn_id(real) if real else ""
        except PoolExhausted as exc:
            self.notes.append(str(exc))
            return {
                "throttle_time": 0,
                "error_code": COORDINATOR_NOT_AVAILABLE,
                "producer_id": -1,
                "producer_epoch": -1,
            }
        timeout = int(body.transaction_timeout.total_seconds() * 1000)
        request = InitPidRequest(txn_id, timeout, getattr(body, "producer_id", -1), getattr(body, "producer_epoch", -1))
        answer = self.cluster.send(conn, broker, request)
        if not isinstance(answer, InitPidResponse):
            return {"throttle_time": 0, "error_code": REQUEST_TIMED_OUT, "producer_id": -1, "producer_epoch": -1}
        return {
            "throttle_time": 0,
            "error_code": answer.error,
            "producer_id": answer.pid,
            "producer_epoch": answer.epoch,
        }

    def _txn(self, real: str) -> str | None:
        try:
            return self.cluster.aliases.txn_id(real)
        except PoolExhausted as exc:
            self.notes.append(str(exc))
            return None

    def add_partitions(self, broker: int, conn: int, body: Any) -> dict[str, Any]:
        txn_id = self._txn(body.v3_and_below_transactional_id)
        pid, epoch = body.v3_and_below_producer_id, body.v3_and_below_producer_epoch
        wanted = [(t.name, p) for t in body.v3_and_below_topics for p in t.partitions]
        model = [self.cluster.aliases.partition(t, p) for t, p in wanted]
        if txn_id is None:
            error = COORDINATOR_NOT_AVAILABLE
        elif any(m is None for m in model):
            error = UNKNOWN_TOPIC_OR_PARTITION
        else:
            self.cluster.ctxn(txn_id, pid, epoch)
            answer = self.cluster.send(
                conn, broker, AddPartitionsRequest(txn_id, pid, epoch, tuple(m for m in model if m is not None))
            )
            error = answer.error if isinstance(answer, CoordinatorResponse) else REQUEST_TIMED_OUT
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (t, p), m in zip(wanted, model, strict=True):
            code = UNKNOWN_TOPIC_OR_PARTITION if m is None else error
            by_topic.setdefault(t, []).append({"partition_index": p, "partition_error_code": code})
        results = [{"name": t, "results_by_partition": r} for t, r in by_topic.items()]
        return {"throttle_time": 0, "results_by_topic_v3_and_below": results}

    def add_offsets(self, broker: int, conn: int, body: Any) -> dict[str, Any]:
        txn_id = self._txn(body.transactional_id)
        try:
            group = self.cluster.aliases.group(body.group_id)
        except PoolExhausted:
            group = None
        if txn_id is None or group is None:
            return {"throttle_time": 0, "error_code": COORDINATOR_NOT_AVAILABLE}
        answer = self.cluster.send(
            conn, broker, AddOffsetsRequest(txn_id, body.producer_id, body.producer_epoch, group)
        )
        return {
            "throttle_time": 0,
            "error_code": answer.error if isinstance(answer, CoordinatorResponse) else REQUEST_TIMED_OUT,
        }

    def end_txn(self, broker: int, conn: int, body: Any) -> dict[str, Any]:
        txn_id = self._txn(body.transactional_id)
        if txn_id is None:
            return {"throttle_time": 0, "error_code": COORDINATOR_NOT_AVAILABLE}
        pid, epoch = body.producer_id, body.producer_epoch
        ctxn = self.cluster.ctxn(txn_id, pid, epoch)
        answer = self.cluster.send(conn, broker, EndTxnRequest(txn_id, pid, epoch, bool(body.committed), ctxn))
        error = answer.error if isinstance(answer, CoordinatorResponse) else REQUEST_TIMED_OUT
        if error == NONE:
            self.cluster.txn_ended(txn_id, pid, epoch)
        return {"throttle_time": 0, "error_code": error}

    def txn_offset_commit(self, broker: int, conn: int, body: Any) -> dict[str, Any]:
        txn_id = self._txn(body.transactional_id)
        offsets, wanted = self._offsets(body.topics, "committed_offset")
        try:
            group = self.cluster.aliases.group(body.group_id)
        except PoolExhausted:
            group = None
        if txn_id is None or group is None:
            error = COORDINATOR_NOT_AVAILABLE
        else:
            ctxn = self.cluster.ctxn(txn_id, body.producer_id, body.producer_epoch)
            request = TxnOffsetCommitRequest(group, txn_id, body.producer_id, body.producer_epoch, ctxn, offsets)
            answer = self.cluster.send(conn, broker, request)
            error = answer.error if isinstance(answer, GroupResponse) else REQUEST_TIMED_OUT
        return {"throttle_time": 0, "topics": self._partition_errors(wanted, error)}

    # ----------------------------------------------------------------- group offsets

    def _offsets(self, topics: Any, field: str) -> tuple[tuple[TopicOffset, ...], list[tuple[str, int, bool]]]:
        out: list[TopicOffset] = []
        wanted: list[tuple[str, int, bool]] = []
        for t in topics:
            for p in t.partitions:
                model = self.cluster.aliases.partition(t.name, p.partition_index)
                wanted.append((t.name, p.partition_index, model is not None))
                if model is not None:
                    out.append(TopicOffset(model, getattr(p, field)))
        return tuple(out), wanted

    def _partition_errors(self, wanted: list[tuple[str, int, bool]], error: int) -> list[dict[str, Any]]:
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for t, p, known in wanted:
            by_topic.setdefault(t, []).append(
                {"partition_index": p, "error_code": error if known else UNKNOWN_TOPIC_OR_PARTITION}
            )
        return [{"name": t, "partitions": ps} for t, ps in by_topic.items()]

    def offset_commit(self, broker: int, conn: int, body: Any, membership_error: int) -> dict[str, Any]:
        offsets, wanted = self._offsets(body.topics, "committed_offset")
        try:
            group = self.cluster.aliases.group(body.group_id)
        except PoolExhausted:
            return {"throttle_time": 0, "topics": self._partition_errors(wanted, COORDINATOR_NOT_AVAILABLE)}
        if membership_error != NONE or not offsets:
            return {"throttle_time": 0, "topics": self._partition_errors(wanted, membership_error)}
        answer = self.cluster.send(conn, broker, OffsetCommitRequest(group, offsets))
        error = answer.error if isinstance(answer, GroupResponse) else REQUEST_TIMED_OUT
        return {"throttle_time": 0, "topics": self._partition_errors(wanted, error)}

    def offset_fetch(self, broker: int, conn: int, body: Any) -> dict[str, Any]:
        try:
            group = self.cluster.aliases.group(body.group_id)
        except PoolExhausted:
            return {"throttle_time": 0, "topics": [], "error_code": COORDINATOR_NOT_AVAILABLE}
        require_stable = bool(getattr(body, "require_stable", False))
        answer = self.cluster.send(conn, broker, OffsetFetchRequest(group, require_stable))
        if not isinstance(answer, GroupResponse):
            return {"throttle_time": 0, "topics": [], "error_code": REQUEST_TIMED_OUT}
        committed = {o.partition: o.offset for o in answer.offsets}
        unstable = self._unstable(group) if require_stable else set()
        if body.topics is None:
            asked: list[tuple[str, int, str | None]] = []
            for p in committed:
                real = self.cluster.aliases.real_partition(p)
                if real is not None:
                    asked.append((real[0], real[1], p))
        else:
            asked = [
                (t.name, i, self.cluster.aliases.partition(t.name, i)) for t in body.topics for i in t.partition_indexes
            ]
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for name, index, model in asked:
            entry: dict[str, Any] = {
                "partition_index": index,
                "committed_offset": -1,
                "metadata": "",
                "error_code": NONE,
            }
            if model is None:
                entry["error_code"] = UNKNOWN_TOPIC_OR_PARTITION
            elif model in unstable:
                entry["error_code"] = 88  # UNSTABLE_OFFSET_COMMIT (KIP-447)
            elif model in committed:
                entry["committed_offset"] = committed[model]
            by_topic.setdefault(name, []).append(entry)
        return {
            "throttle_time": 0,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
            "error_code": answer.error,
        }

    def _unstable(self, group: str) -> set[str]:
        for e in reversed(self.cluster.last_events):
            unstable = getattr(e, "unstable", None)
            if unstable is not None and getattr(e, "group", None) == group:
                return set(unstable)
        return set()
