"""kconform serve's fault schedule: the file format's validation, and a librdkafka run under injected
retriable errors, a broker crash and a coordinator move that stays exactly-once and conformant."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from kconform.conformance.serve.cluster import ServedCluster, served_config
from kconform.conformance.serve.faults import ScheduleError, load_schedule
from kconform.conformance.serve.server import Server, ServerThread

QUIET = {"log_level": 0}

SCHEDULE = """
[[fault]]
at_ms = 0
kind = "error"
api = "produce"
error = "NOT_LEADER_OR_FOLLOWER"
count = 2

[[fault]]
at_ms = 0
kind = "error"
api = "produce"
error = "REQUEST_TIMED_OUT"
count = 1

[[fault]]
at_ms = 0
kind = "error"
api = "end_txn"
error = "CONCURRENT_TRANSACTIONS"
count = 1

[[fault]]
at_ms = 0
kind = "error"
api = "find_coordinator"
error = "COORDINATOR_LOAD_IN_PROGRESS"
count = 1

[[fault]]
at_ms = 0
kind = "delay"
api = "fetch"
ms = 50
duration_ms = 2000

[[fault]]
at_ms = 1500
kind = "move_coordinator"
txn_id = "tx-f"
broker = 2

[[fault]]
at_ms = 2000
kind = "crash"
broker = 1
duration_ms = 400
"""


def test_a_schedule_names_the_fault_and_field_at_fault(tmp_path: Path) -> None:
    good = tmp_path / "f.toml"
    good.write_text(SCHEDULE, encoding="utf-8")
    assert [f.kind for f in load_schedule(good, 3)][:2] == ["error", "error"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[fault]]\nat_ms = 0\nkind = "error"\napi = "metadata"\nerror = "NOT_LEADER_OR_FOLLOWER"\n')
    with pytest.raises(ScheduleError, match=r"fault\[0\]\.api: NOT_LEADER_OR_FOLLOWER is answered by"):
        load_schedule(bad, 3)
    crash = tmp_path / "c.json"
    crash.write_text('{"fault": [{"at_ms": 1, "kind": "crash", "broker": 5, "duration_ms": 10}]}')
    with pytest.raises(ScheduleError, match=r"fault\[0\]\.broker: one of 0\.\.2"):
        load_schedule(crash, 3)


@pytest.mark.slow
def test_librdkafka_under_the_schedule_stays_exactly_once_and_conformant(tmp_path: Path) -> None:
    schedule = tmp_path / "faults.toml"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    cluster = ServedCluster(served_config(3))
    server = Server(cluster, load_schedule(schedule, 3))
    with ServerThread(server) as served:
        bs = served.start()
        time.sleep(0.3)  # the schedule's at_ms = 0 faults are active from the first tick
        p = Producer({"bootstrap.servers": bs, "enable.idempotence": True, "acks": "all", "linger.ms": 2, **QUIET})
        for i in range(6):
            p.produce("f", value=b"i%d" % i)
            p.flush(10)
        tp = Producer({"bootstrap.servers": bs, "transactional.id": "tx-f", "linger.ms": 2, **QUIET})
        tp.init_transactions(15)
        for t in range(3):
            tp.begin_transaction()
            tp.produce("f", value=b"t%d" % t)
            if t == 1:
                tp.flush(10)
                tp.abort_transaction(15)
            else:
                tp.commit_transaction(15)
            time.sleep(0.5)  # the coordinator move and the crash land between transactions
        c = Consumer(
            {
                "bootstrap.servers": bs,
                "group.id": "gf",
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
                **QUIET,
            }
        )
        c.subscribe(["f"])
        got: list[bytes] = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(got) < 8:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                value = m.value()
                assert value is not None, "every record the test produced has a value"
                got.append(value)
        c.close()
        failure = served.call(lambda: cluster.failure)
        injected = served.call(lambda: dict(server.stats.injected))
        moved = served.call(lambda: any(type(r.op).__name__ == "MoveCoordinator" for r in cluster.run.steps))
    assert failure is None
    assert sorted(got) == sorted([b"i0", b"i1", b"i2", b"i3", b"i4", b"i5", b"t0", b"t2"])
    assert injected == {
        "produce NOT_LEADER_OR_FOLLOWER": 2,
        "produce REQUEST_TIMED_OUT": 1,
        "end_txn CONCURRENT_TRANSACTIONS": 1,
        "find_coordinator COORDINATOR_LOAD_IN_PROGRESS": 1,
        "crash broker 1": 1,
    }
    assert moved
