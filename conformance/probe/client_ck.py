"""The confluent-kafka (librdkafka) adapter of the probe worker.

Outcome rules (what makes an operation ``fail`` rather than ``info``): librdkafka retries produce
requests internally, so a delivery error only proves the record was *not* written when the record never
left the client or the error is one no broker write precedes (:data:`DEFINITE_PRODUCE_ERRORS`);
a timed-out message "may have been persisted" (librdkafka's ``RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED``),
so it is ``info``. A transaction is ``fail`` when it raised before we asked to commit (fenced while
producing, a record not delivered: without EndTxn(commit) the coordinator can only abort it, KIP-98), or
when an abortable error (``txn_requires_abort``) was followed by a completed abort. An error raised by
``commit_transaction`` itself is ``info``, even PRODUCER_FENCED: a retried EndTxn whose first attempt
committed is answered PRODUCER_FENCED once a newer instance has bumped the epoch (Kafka's
TransactionCoordinator.endTransaction checks the epoch before the state).
Reads (poll, fetch-offsets, assign, seek) change nothing, so their errors are ``fail``.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from kconform.conformance.probe.worker import AdapterBase, Answer, Json, error, missing, read_record, send_answer

DEFINITE_PRODUCE_ERRORS = frozenset(
    {
        "_MSG_SIZE_TOO_LARGE",
        "MSG_SIZE_TOO_LARGE",
        "_UNKNOWN_PARTITION",
        "_UNKNOWN_TOPIC",
        "UNKNOWN_TOPIC_OR_PART",
        "TOPIC_AUTHORIZATION_FAILED",
        "INVALID_REQUIRED_ACKS",
        "_PURGE_QUEUE",
        "_QUEUE_FULL",
        "_INVALID_ARG",
    }
)


def _err(e: Any) -> dict[str, Json]:
    """A history error from a KafkaError (or any exception)."""
    if isinstance(e, ck.KafkaException) and e.args and isinstance(e.args[0], ck.KafkaError):
        e = e.args[0]
    if isinstance(e, ck.KafkaError):
        return error(e.name(), e.str(), e.code())
    return error(type(e).__name__, str(e))


def _kerr(e: Exception) -> ck.KafkaError | None:
    if isinstance(e, ck.KafkaException) and e.args and isinstance(e.args[0], ck.KafkaError):
        return e.args[0]
    return None


def _tp(key: str, offset: int | None = None) -> ck.TopicPartition:
    topic, _, partition = key.rpartition(":")
    if offset is None:
        return ck.TopicPartition(topic, int(partition))
    return ck.TopicPartition(topic, int(partition), offset)


def _key(tp: Any) -> str:
    return f"{tp.topic}:{tp.partition}"


class ConfluentAdapter(AdapterBase):
    """One producer and/or one consumer of confluent-kafka, driven by worker commands."""

    name = "confluent-kafka"
    version = f"{ck.version()} (librdkafka {ck.libversion()[0]})"

    def __init__(self) -> None:
        self.producer: ck.Producer | None = None
        self.consumer: ck.Consumer | None = None
        self.transactional_id: str | None = None

    # -- set-up -----------------------------------------------------------------------------------
    def op_topics(self, args: dict[str, Json], timeout: float) -> Answer:
        """Create topics (CreateTopics), then read every topic's partition count from Metadata.

        A target that refuses CreateTopics (librdkafka's mock cluster) gets its topics auto-created by
        a Metadata request for them (``allow.auto.create.topics``); the counts are then the target's.
        """
        wanted: dict[str, int] = dict(args["topics"])
        conf = {"bootstrap.servers": args["bootstrap"], "socket.timeout.ms": int(timeout * 1000), "log_level": 3}
        created: dict[str, str] = {}
        if args.get("create", True):
            admin = AdminClient(conf)
            futures = admin.create_topics(
                [NewTopic(t, n, int(args.get("replication_factor", 1))) for t, n in wanted.items()],
                operation_timeout=min(5.0, timeout / 2),
                request_timeout=min(5.0, timeout / 2),
            )
            for topic, future in futures.items():
                try:
                    future.result(timeout)
                    created[topic] = "created"
                except Exception as e:
                    kerr = _kerr(e)
                    created[topic] = kerr.name() if kerr is not None else str(e)
        counts: dict[str, int] = {}
        deadline = time.monotonic() + timeout
        consumer = ck.Consumer(
            {
                "bootstrap.servers": args["bootstrap"],
                "group.id": "kconform-topics",
                "allow.auto.create.topics": True,
                "log_level": 3,
            }
        )
        try:
            while time.monotonic() < deadline and len(counts) < len(wanted):
                for topic in wanted:
                    try:
                        md = consumer.list_topics(topic, timeout=max(0.5, min(2.0, deadline - time.monotonic())))
                    except ck.KafkaException:
                        continue
                    info = md.topics.get(topic)
                    if info is not None and info.error is None and info.partitions:
                        counts[topic] = len(info.partitions)
                if len(counts) < len(wanted):
                    time.sleep(0.2)
        finally:
            consumer.close()
        if len(counts) < len(wanted):
            missing = sorted(set(wanted) - set(counts))
            return ("fail", {"created": created}, error("TOPICS_MISSING", f"no metadata for {missing}: {created}"))
        return ("ok", {"topics": counts, "created": created}, None)

    def op_producer(self, args: dict[str, Json], timeout: float) -> Answer:
        conf: dict[str, Any] = {
            "bootstrap.servers": args["bootstrap"],
            "client.id": args.get("client_id", "kconform"),
            "acks": "all" if args.get("acks", "all") == "all" else args["acks"],
            "enable.idempotence": bool(args.get("idempotent", False)),
            "message.timeout.ms": int(args.get("message_timeout_ms", 8000)),
            "socket.timeout.ms": 5000,
            "linger.ms": 2,
            "log_level": 3,
        }
        if args.get("transactional_id"):
            self.transactional_id = str(args["transactional_id"])
            conf["transactional.id"] = self.transactional_id
            conf["transaction.timeout.ms"] = int(args.get("transaction_timeout_ms", 30000))
            conf["enable.idempotence"] = True
        self.producer = ck.Producer(conf)
        return ("ok", None, None)

    def op_consumer(self, args: dict[str, Json], timeout: float) -> Answer:
        self.consumer = ck.Consumer(
            {
                "bootstrap.servers": args["bootstrap"],
                "client.id": args.get("client_id", "kconform"),
                "group.id": args["group"],
                "isolation.level": args.get("isolation", "read_committed"),
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
                "socket.timeout.ms": 5000,
                "log_level": 3,
            }
        )
        return ("ok", None, None)

    # -- producing --------------------------------------------------------------------------------
    def _produce(self, records: list[dict[str, Json]]) -> list[dict[str, Json]]:
        assert self.producer is not None
        results: list[dict[str, Json]] = [dict(r, offset=None) for r in records]

        def report(index: int) -> Any:
            def callback(err: ck.KafkaError | None, msg: ck.Message) -> None:
                if err is not None:
                    results[index]["error"] = _err(err)
                else:
                    offset = msg.offset()
                    results[index]["offset"] = offset if offset is not None and offset >= 0 else None
                    results[index]["delivered"] = True

            return callback

        for i, r in enumerate(records):
            try:
                self.producer.produce(
                    r["topic"], value=str(r["value"]).encode(), partition=int(r["partition"]), on_delivery=report(i)
                )
            except (BufferError, ck.KafkaException) as e:
                results[i]["error"] = _err(e) if isinstance(e, ck.KafkaException) else error("_QUEUE_FULL", str(e))
        return results

    def op_send(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.producer is None:
            return missing("producer", "send")
        results = self._produce(list(args["records"]))
        self.producer.flush(timeout)
        return send_answer(results, DEFINITE_PRODUCE_ERRORS)

    def op_init(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.producer is None:
            return missing("producer", "init")
        try:
            self.producer.init_transactions(timeout)
        except ck.KafkaException as e:
            kerr = _kerr(e)
            dead = kerr is not None and kerr.fatal()
            return ("info" if kerr is None or kerr.retriable() or dead else "fail", None, dict(_err(e), dead=dead))
        return ("ok", {"transactional_id": self.transactional_id}, None)

    def op_txn(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.producer is None:
            return missing("producer", "txn")
        deadline = time.monotonic() + timeout

        def left() -> float:
            return max(0.1, deadline - time.monotonic())

        producer = self.producer
        results: list[dict[str, Json]] = [dict(r, offset=None) for r in args["records"]]
        committing = False  # from here on EndTxn(commit) may have reached the coordinator
        try:
            producer.begin_transaction()
            results = self._produce(list(args["records"]))
            producer.flush(left())
            for r in results:
                r.pop("delivered", None)
            undelivered = next((r["error"] for r in results if "error" in r), None)
            if undelivered is not None:
                # A record of the transaction failed: librdkafka requires an abort (txn_requires_abort).
                with contextlib.suppress(ck.KafkaException):
                    producer.abort_transaction(left())
                return ("fail", {"records": results}, dict(undelivered, dead=True))
            offsets = args.get("offsets")
            if offsets:
                if self.consumer is None:
                    return ("fail", None, error("NO_CONSUMER", "sendOffsetsToTransaction needs a consumer"))
                tps = [_tp(k, int(v)) for k, v in offsets["offsets"].items()]
                producer.send_offsets_to_transaction(tps, self.consumer.consumer_group_metadata(), left())
            if args["end"] == "commit":
                committing = True
                producer.commit_transaction(left())
            else:
                producer.abort_transaction(left())
        except ck.KafkaException as e:
            return self._txn_failure(e, results, committing, left())
        except (SystemError, RuntimeError) as e:
            # confluent-kafka surfaces some fatal producer errors (fencing) as a bare SystemError from flush().
            err = dict(error(type(e).__name__, str(e)), dead=True)
            return ("info" if committing else "fail", {"records": results}, err)
        return ("ok", {"records": results}, None)

    def _txn_failure(
        self, e: ck.KafkaException, results: list[dict[str, Json]], committing: bool, left: float
    ) -> Answer:
        """The outcome of a transaction that raised: see the module docstring."""
        assert self.producer is not None
        kerr = _kerr(e)
        err = _err(e)
        value = {"records": results}
        abortable = kerr is not None and not kerr.fatal() and kerr.txn_requires_abort()
        aborted = False
        if abortable:
            try:
                self.producer.abort_transaction(left)
                aborted = True
            except ck.KafkaException:
                pass
        if not committing:
            # Commit was never asked for: the coordinator can only abort this transaction.
            return ("fail", value, dict(err, dead=not aborted))
        if aborted:
            return ("fail", value, err)
        return ("info", value, dict(err, dead=True))

    # -- consuming --------------------------------------------------------------------------------
    def op_assign(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "assign")
        start = args.get("start", "beginning")
        offset = ck.OFFSET_BEGINNING if start == "beginning" else ck.OFFSET_STORED
        self.consumer.assign([_tp(k, offset) for k in args["partitions"]])
        return ("ok", None, None)

    def op_poll(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "poll")
        wait = min(float(args.get("wait", 1.0)), timeout)
        try:
            messages = self.consumer.consume(int(args.get("max", 100)), wait)
            records = []
            errors = []
            for m in messages:
                if m.error() is not None:
                    errors.append(_err(m.error()))
                    continue
                records.append(read_record(m.topic(), m.partition(), m.offset(), m.value()))
            assignment = self.consumer.assignment()
            positions = {}
            for tp in self.consumer.position(assignment) if assignment else []:
                if tp.offset is not None and tp.offset >= 0:
                    positions[_key(tp)] = tp.offset
        except ck.KafkaException as e:
            return ("fail", None, _err(e))
        value: dict[str, Json] = {"records": records, "positions": positions}
        if errors:
            value["errors"] = errors
        return ("ok", value, None)

    def op_seek(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "seek")
        try:
            self.consumer.seek(_tp(str(args["partition"]), int(args["offset"])))
        except ck.KafkaException as e:
            return ("fail", None, _err(e))
        return ("ok", None, None)

    def op_commit(self, args: dict[str, Json], timeout: float) -> Answer:
        """OffsetCommit: a broker error answer means the offsets were not written; a timeout is unknown."""
        if self.consumer is None:
            return missing("consumer", "commit")
        tps = [_tp(k, int(v)) for k, v in args["offsets"].items()]
        try:
            answered = self.consumer.commit(offsets=tps, asynchronous=False)
        except ck.KafkaException as e:
            kerr = _kerr(e)
            definite = kerr is not None and kerr.code() > 0 and not kerr.retriable()
            return ("fail" if definite else "info", None, _err(e))
        bad = [tp for tp in answered or [] if tp.error is not None]
        if bad:
            return ("info", None, _err(bad[0].error))
        return ("ok", None, None)

    def op_fetch_offsets(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "fetch-offsets")
        try:
            answered = self.consumer.committed([_tp(k) for k in args["partitions"]], timeout=timeout)
        except ck.KafkaException as e:
            return ("fail", None, _err(e))
        offsets: dict[str, int | None] = {}
        for tp in answered:
            if tp.error is not None:
                return ("fail", None, _err(tp.error))
            offsets[_key(tp)] = tp.offset if tp.offset is not None and tp.offset >= 0 else None
        return ("ok", {"offsets": offsets}, None)

    def op_close(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is not None:
            with contextlib.suppress(ck.KafkaException, RuntimeError):
                self.consumer.close()
        if self.producer is not None:
            self.producer.flush(min(timeout, 2.0))
        return ("ok", None, None)
