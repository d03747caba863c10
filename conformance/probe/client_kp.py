"""The kafka-python adapter of the probe worker (the second, pure-Python client).

Outcome rules as for confluent-kafka (:mod:`kconform.conformance.probe.client_ck`): a produce is ``fail``
only when the error proves nothing reached a broker (:data:`DEFINITE_PRODUCE_ERRORS`); a transaction is
``fail`` when it raised before we asked to commit, or when ``commit_transaction`` was refused by the
client's own state check (nothing sent); an error of the commit itself is ``info``. Reads' errors are
``fail``.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import kafka
import kafka.errors as kerrors
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

from kconform.conformance.probe.worker import AdapterBase, Answer, Json, error, missing, read_record, send_answer

DEFINITE_PRODUCE_ERRORS = frozenset(
    {
        "MESSAGE_TOO_LARGE",
        "MessageSizeTooLargeError",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "TOPIC_AUTHORIZATION_FAILED",
        "INVALID_REQUIRED_ACKS",
    }
)


def _name(e: BaseException) -> str:
    message = getattr(e, "message", None)
    if isinstance(e, kerrors.BrokerResponseError) and isinstance(message, str):
        return message
    return type(e).__name__


def _err(e: BaseException) -> dict[str, Json]:
    code = getattr(e, "errno", None)
    return error(_name(e), str(e), code if isinstance(code, int) else None)


def _tp(key: str) -> Any:
    topic, _, partition = key.rpartition(":")
    return TopicPartition(topic, int(partition))


def _key(tp: Any) -> str:
    return f"{tp.topic}:{tp.partition}"


class KafkaPythonAdapter(AdapterBase):
    """One producer and/or one consumer of kafka-python, driven by worker commands."""

    name = "kafka-python"
    version = str(kafka.__version__)

    def __init__(self) -> None:
        self.producer: Any = None
        self.consumer: Any = None
        self.transactional_id: str | None = None

    def op_topics(self, args: dict[str, Json], timeout: float) -> Answer:
        """CreateTopics, then the partition counts from Metadata (auto-creating topics if refused)."""
        wanted: dict[str, int] = dict(args["topics"])
        created: dict[str, str] = {}
        if args.get("create", True):
            try:
                admin = KafkaAdminClient(
                    bootstrap_servers=args["bootstrap"],
                    request_timeout_ms=int(timeout * 1000),
                    bootstrap_timeout_ms=int(timeout * 1000),
                )
                try:
                    admin.create_topics(
                        [NewTopic(t, n, int(args.get("replication_factor", 1))) for t, n in wanted.items()],
                        timeout_ms=int(timeout * 1000),
                    )
                    created = dict.fromkeys(wanted, "created")
                except kerrors.KafkaError as e:
                    created = dict.fromkeys(wanted, _name(e))
                finally:
                    admin.close()
            except kerrors.KafkaError as e:
                created = dict.fromkeys(wanted, _name(e))
        try:
            consumer = KafkaConsumer(
                bootstrap_servers=args["bootstrap"],
                allow_auto_create_topics=True,
                request_timeout_ms=int(timeout * 1000),
                bootstrap_timeout_ms=int(timeout * 1000),
            )
        except kerrors.KafkaError as e:
            return ("fail", {"created": created}, _err(e))
        counts: dict[str, int] = {}
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline and len(counts) < len(wanted):
                for topic in wanted:
                    parts = consumer.partitions_for_topic(topic)
                    if parts:
                        counts[topic] = len(parts)
                if len(counts) < len(wanted):
                    time.sleep(0.2)
        finally:
            consumer.close()
        if len(counts) < len(wanted):
            missing = sorted(set(wanted) - set(counts))
            return ("fail", {"created": created}, error("TOPICS_MISSING", f"no metadata for {missing}: {created}"))
        return ("ok", {"topics": counts, "created": created}, None)

    def op_producer(self, args: dict[str, Json], timeout: float) -> Answer:
        acks: Any = args.get("acks", "all")
        conf: dict[str, Any] = {
            "bootstrap_servers": args["bootstrap"],
            "client_id": args.get("client_id", "kconform"),
            "acks": "all" if acks == "all" else int(acks),
            "enable_idempotence": bool(args.get("idempotent", False)),
            "request_timeout_ms": 5000,
            "delivery_timeout_ms": int(args.get("message_timeout_ms", 8000)),
            "max_block_ms": int(timeout * 1000),
            "linger_ms": 2,
        }
        if args.get("transactional_id"):
            self.transactional_id = str(args["transactional_id"])
            conf["transactional_id"] = self.transactional_id
            conf["transaction_timeout_ms"] = int(args.get("transaction_timeout_ms", 30000))
            conf["enable_idempotence"] = True
        self.producer = KafkaProducer(**conf)
        return ("ok", None, None)

    def op_consumer(self, args: dict[str, Json], timeout: float) -> Answer:
        self.consumer = KafkaConsumer(
            bootstrap_servers=args["bootstrap"],
            client_id=args.get("client_id", "kconform"),
            group_id=args["group"],
            isolation_level=args.get("isolation", "read_committed"),
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
            request_timeout_ms=7000,
        )
        return ("ok", None, None)

    def _produce(self, records: list[dict[str, Json]], timeout: float) -> list[dict[str, Json]]:
        results: list[dict[str, Json]] = []
        futures = []
        for r in records:
            out = dict(r, offset=None)
            results.append(out)
            try:
                futures.append(
                    self.producer.send(r["topic"], value=str(r["value"]).encode(), partition=int(r["partition"]))
                )
            except kerrors.KafkaError as e:
                out["error"] = _err(e)
                futures.append(None)
        deadline = time.monotonic() + timeout
        for out, future in zip(results, futures, strict=True):
            if future is None:
                continue
            try:
                md = future.get(timeout=max(0.1, deadline - time.monotonic()))
            except kerrors.KafkaError as e:
                out["error"] = _err(e)
                continue
            out["offset"] = md.offset if md.offset is not None and md.offset >= 0 else None
            out["delivered"] = True
        return results

    def op_send(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.producer is None:
            return missing("producer", "send")
        results = self._produce(list(args["records"]), timeout)
        return send_answer(results, DEFINITE_PRODUCE_ERRORS)

    def op_init(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.producer is None:
            return missing("producer", "init")
        try:
            self.producer.init_transactions()
        except kerrors.KafkaError as e:
            return ("info", None, dict(_err(e), dead=True))
        return ("ok", {"transactional_id": self.transactional_id}, None)

    def op_txn(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.producer is None:
            return missing("producer", "txn")
        results: list[dict[str, Json]] = [dict(r, offset=None) for r in args["records"]]
        committing = False  # from here on EndTxn(commit) may have reached the coordinator
        try:
            self.producer.begin_transaction()
            results = self._produce(list(args["records"]), timeout / 2)
            for r in results:
                r.pop("delivered", None)
            undelivered = next((r["error"] for r in results if "error" in r), None)
            if undelivered is not None:
                with contextlib.suppress(kerrors.KafkaError):
                    self.producer.abort_transaction()
                return ("fail", {"records": results}, dict(undelivered, dead=True))
            offsets = args.get("offsets")
            if offsets:
                if self.consumer is None:
                    return ("fail", None, error("NO_CONSUMER", "sendOffsetsToTransaction needs a consumer"))
                self.producer.send_offsets_to_transaction(
                    {_tp(k): OffsetAndMetadata(int(v), "", -1) for k, v in offsets["offsets"].items()},
                    self.consumer.group_metadata(),
                )
            if args["end"] == "commit":
                committing = True
                self.producer.commit_transaction()
            else:
                self.producer.abort_transaction()
        except kerrors.KafkaError as e:
            # kafka-python refuses a transactional call in an error state (e.g. fenced by an earlier request)
            # with "Cannot execute transactional method because we are in an error state": nothing was sent.
            refused = "Cannot execute transactional method" in str(e)
            if not committing or refused:
                return ("fail", {"records": results}, dict(_err(e), dead=True))
            return ("info", {"records": results}, dict(_err(e), dead=True))
        return ("ok", {"records": results}, None)

    def op_assign(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "assign")
        tps = [_tp(k) for k in args["partitions"]]
        self.consumer.assign(tps)
        if args.get("start", "beginning") == "beginning":
            self.consumer.seek_to_beginning(*tps)
        return ("ok", None, None)

    def op_poll(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "poll")
        wait = min(float(args.get("wait", 1.0)), timeout)
        try:
            batches = self.consumer.poll(timeout_ms=int(wait * 1000), max_records=int(args.get("max", 100)))
            records: list[dict[str, Json]] = []
            for recs in batches.values():
                records.extend(read_record(m.topic, m.partition, m.offset, m.value) for m in recs)
            positions = {}
            for tp in self.consumer.assignment():
                pos = self.consumer.position(tp, timeout_ms=int(max(0.5, timeout / 4) * 1000))
                if pos is not None and pos >= 0:
                    positions[_key(tp)] = pos
        except kerrors.KafkaError as e:
            return ("fail", None, _err(e))
        return ("ok", {"records": records, "positions": positions}, None)

    def op_seek(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "seek")
        try:
            self.consumer.seek(_tp(str(args["partition"])), int(args["offset"]))
        except (kerrors.KafkaError, AssertionError) as e:
            return ("fail", None, _err(e))
        return ("ok", None, None)

    def op_commit(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "commit")
        offsets = {_tp(k): OffsetAndMetadata(int(v), "", -1) for k, v in args["offsets"].items()}
        try:
            self.consumer.commit(offsets=offsets, timeout_ms=int(timeout * 1000))
        except kerrors.KafkaError as e:
            definite = isinstance(e, kerrors.BrokerResponseError) and not e.retriable
            return ("fail" if definite else "info", None, _err(e))
        return ("ok", None, None)

    def op_fetch_offsets(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "fetch-offsets")
        offsets: dict[str, int | None] = {}
        try:
            for k in args["partitions"]:
                off = self.consumer.committed(_tp(k), timeout_ms=int(timeout * 1000))
                offsets[k] = off if isinstance(off, int) and off >= 0 else None
        except kerrors.KafkaError as e:
            return ("fail", None, _err(e))
        return ("ok", {"offsets": offsets}, None)

    def op_close(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is not None:
            with contextlib.suppress(kerrors.KafkaError):
                self.consumer.close(autocommit=False, timeout_ms=1000)
        if self.producer is not None:
            with contextlib.suppress(kerrors.KafkaError):
                self.producer.close(timeout=1)
        return ("ok", None, None)
