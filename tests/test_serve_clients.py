"""Real clients against kconform serve: confluent-kafka (librdkafka) and kafka-python drive the
served reference cluster; the model judges every request the brokers handle, and a read_committed
consumer must not see an aborted record. A near miss: with the LSO mutant the judge flags the run."""

from __future__ import annotations

import time
from pathlib import Path

from confluent_kafka import Consumer, Producer

from kconform.conformance.serve.cluster import ServedCluster, served_config
from kconform.conformance.serve.server import Server, ServerThread
from kconform.impl.txn.cluster import TxnCluster
from kconform.traces.inputs.trace_file import read_trace_file
from kconform.traces.replay import replay

QUIET = {"log_level": 3}


def _consume(bootstrap: str, topic: str, committed: bool, want: int, seconds: float = 10.0) -> list[bytes]:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{topic}-{committed}",
            "isolation.level": "read_committed" if committed else "read_uncommitted",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **QUIET,
        }
    )
    got: list[bytes] = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and len(got) < want:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                value = m.value()
                assert value is not None, "every record the test produced has a value"
                got.append(value)
        if got:
            c.commit(asynchronous=False)
    finally:
        c.close()
    return got


def test_confluent_kafka_idempotent_and_transactional_producers_and_read_committed(tmp_path: Path) -> None:
    cluster = ServedCluster(served_config(3))
    with ServerThread(Server(cluster)) as served:
        bs = served.start()
        p = Producer({"bootstrap.servers": bs, "enable.idempotence": True, "acks": "all", "linger.ms": 2, **QUIET})
        for i in range(5):
            p.produce("plain", value=b"i%d" % i)
        assert p.flush(10) == 0
        tp = Producer({"bootstrap.servers": bs, "transactional.id": "tx-a", "linger.ms": 2, **QUIET})
        tp.init_transactions(10)
        tp.begin_transaction()
        tp.produce("plain", value=b"committed-1")
        tp.commit_transaction(10)
        tp.begin_transaction()
        tp.produce("plain", value=b"aborted-1")
        tp.flush(10)
        tp.abort_transaction(10)
        tp.begin_transaction()
        tp.produce("plain", value=b"committed-2")
        tp.commit_transaction(10)
        committed = _consume(bs, "plain", True, 7)
        uncommitted = _consume(bs, "plain", False, 8)
        failure = served.call(lambda: cluster.failure)
        path = served.call(lambda: cluster.write_trace(tmp_path / "served.jsonl"))
        kinds = served.call(lambda: dict(served.server.stats.requests))
    assert failure is None
    assert committed == [b"i0", b"i1", b"i2", b"i3", b"i4", b"committed-1", b"committed-2"]
    assert b"aborted-1" in uncommitted  # the near miss: the record is there for read_uncommitted
    for api in (
        "init_producer_id",
        "add_partitions_to_txn",
        "end_txn",
        "fetch",
        "join_group",
        "sync_group",
        "offset_commit",
    ):
        assert kinds.get(api, 0) > 0, api
    cx = read_trace_file(path)
    assert cx.verdict["kind"] == "pass" and cx.implementation == "reference"
    replayed = replay(cx, TxnCluster(), 60, 600)  # kconform replay re-drives the reference: same events
    assert replayed.failure is None and replayed.divergence is None


def test_kafka_python_produces_and_consumes() -> None:
    from kafka import KafkaConsumer, KafkaProducer

    cluster = ServedCluster(served_config(1))
    with ServerThread(Server(cluster)) as served:
        bs = served.start()
        producer = KafkaProducer(bootstrap_servers=bs, acks="all", request_timeout_ms=5000)
        for i in range(3):
            producer.send("kp", value=b"kp%d" % i).get(timeout=10)
        producer.close(timeout=5)
        consumer = KafkaConsumer(
            "kp", bootstrap_servers=bs, auto_offset_reset="earliest", consumer_timeout_ms=3000, group_id=None
        )
        got = [m.value for m in consumer]
        consumer.close()
        failure = served.call(lambda: cluster.failure)
    assert got == [b"kp0", b"kp1", b"kp2"]
    assert failure is None
