"""kconform serve in the slow tier: the acceptance path end to end (``kconform probe --target serve``
starts ``kconform serve`` and drives it with librdkafka: probe valid, model pass) and a mutant the
served model and the probe both expose through real clients, replayed from the served trace."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from kconform.conformance.serve.cluster import ServedCluster, served_config
from kconform.conformance.serve.server import Server, ServerThread
from kconform.impl.txn.cluster import TxnCluster
from kconform.traces.inputs.trace_file import read_trace_file
from kconform.traces.replay import replay

pytestmark = pytest.mark.slow

QUIET = {"log_level": 0}


def test_probe_target_serve_runs_end_to_end_valid_and_conformant(tmp_path: Path) -> None:
    out = tmp_path / "probe"
    done = subprocess.run(
        [sys.executable, "-m", "kconform.ci.cli", "probe", "--target", "serve", "--seconds", "6", "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "VALID" in done.stdout
    verdict = json.loads((tmp_path / "kconform-serve" / "verdict.json").read_text())
    assert verdict["verdict"] == "pass" and not verdict["server_errors"]
    assert verdict["requests"].get("end_txn", 0) > 0 and verdict["requests"].get("fetch", 0) > 0


def test_lso_ignoring_open_transactions_is_caught_by_the_model_and_seen_by_a_real_client(tmp_path: Path) -> None:
    """lso-ignores-ongoing (KIP-98: the LSO stays below the first open transaction): a read_committed
    librdkafka consumer reads a record of a transaction that is still open; the model flags the
    fetch answer and the served trace replays to the same verdict. The near miss (the correct
    reference) is tests/test_serve_clients.py."""
    cluster = ServedCluster(served_config(1), frozenset({"lso-ignores-ongoing"}))
    with ServerThread(Server(cluster)) as served:
        bs = served.start()
        tp = Producer({"bootstrap.servers": bs, "transactional.id": "tx-open", "linger.ms": 1, **QUIET})
        tp.init_transactions(10)
        tp.begin_transaction()
        tp.produce("open", value=b"open-1")
        tp.flush(10)  # the transaction stays open
        c = Consumer(
            {
                "bootstrap.servers": bs,
                "group.id": "g-open",
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
                **QUIET,
            }
        )
        c.subscribe(["open"])
        got: list[bytes] = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not got:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                value = m.value()
                assert value is not None
                got.append(value)
        c.close()
        tp.abort_transaction(10)
        failure = served.call(lambda: cluster.failure)
        path = served.call(lambda: cluster.write_trace(tmp_path / "served.jsonl"))
    assert got == [b"open-1"]  # what the client saw: an uncommitted record under read_committed
    assert failure is not None and failure.name == "txn_consumer_fetch_handled"
    cx = read_trace_file(path)
    result = replay(cx, TxnCluster(), 60, 600)
    assert result.reproduces(cx)
