"""A local Spark master listens on loopback only; a cluster master keeps the operator's network
(traces.mine.loopback)."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import pytest

from kconform.traces.mine.loopback import is_local, loopback_conf, pin_loopback


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2,3]", "local-cluster[2,1,2048]"])
def test_a_local_master_binds_the_driver_to_loopback(master: str) -> None:
    assert is_local(master)
    assert loopback_conf(master) == {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


@pytest.mark.parametrize("master", ["spark://10.0.0.5:7077", "yarn", "k8s://https://10.0.0.1:6443"])
def test_a_cluster_master_keeps_its_network(master: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    assert not is_local(master)
    assert loopback_conf(master) == {}
    pin_loopback(master)
    assert "SPARK_LOCAL_IP" not in os.environ


def test_the_jvms_of_a_local_master_get_loopback_unless_the_environment_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    pin_loopback("local-cluster[2,1,2048]")
    assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"
    monkeypatch.setenv("SPARK_LOCAL_IP", "10.1.2.3")
    pin_loopback("local[2]")
    assert os.environ["SPARK_LOCAL_IP"] == "10.1.2.3"


def _listening(pid: int) -> list[str]:
    """The local addresses ``pid`` listens on (TCP), from ``ss``."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, timeout=30).stdout
    return [line.split()[3] for line in out.splitlines() if f"pid={pid}," in line]


@pytest.mark.slow
def test_a_local_spark_job_listens_on_loopback_only() -> None:
    from kconform.traces.mine.engine import spark_context

    sc: Any = spark_context("local[2]")
    try:
        assert sc.parallelize(range(4), 2).map(lambda x: x + 1).sum() == 10
        jvm_pid = int(sc._jvm.ProcessHandle.current().pid())
        addresses = _listening(jvm_pid)
        assert addresses, "the driver JVM listens on something (its RPC endpoint), or this test proves nothing"
        assert all(a.rsplit(":", 1)[0] in ("127.0.0.1", "[::ffff:127.0.0.1]") for a in addresses), addresses
    finally:
        sc.stop()
