"""Node faults from a target file: pause/resume, kill/restart on the same ports, refusals, teardown."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import psutil
import pytest

from kconform.conformance.probe.cluster import Cluster, ClusterError
from kconform.conformance.probe.ports import wait_tcp
from kconform.conformance.probe.procs import ProcessGroup
from kconform.conformance.probe.target_file import SHIPPED_DIR, load_target


def _tansu_with(tmp_path: Path, **faults: bool) -> Path:
    text = (SHIPPED_DIR / "tansu.toml").read_text()
    for name, on in faults.items():
        text = text.replace(f"{name} = {str(not on).lower()}", f"{name} = {str(on).lower()}")
    path = tmp_path / "tansu-faults.toml"
    path.write_text(text)
    return path


def _status_becomes(pid: int, want: bool, timeout_s: float = 3.0) -> bool:
    """Whether ``pid`` is (want=True) / is not (want=False) stopped within the bound (signals are asynchronous)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if (psutil.Process(pid).status() == psutil.STATUS_STOPPED) == want:
            return True
        time.sleep(0.02)
    return False


def _connects(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def test_pause_kill_restart_and_teardown(tmp_path: Path) -> None:
    target = load_target(str(_tansu_with(tmp_path, kill=True, restart=True)))
    group = ProcessGroup()
    cluster = Cluster(target, group, tmp_path)
    try:
        bootstrap = cluster.start()
        run = cluster.nodes["tansu-0"]
        assert run.port is not None and run.child is not None and run.proxy is not None
        assert bootstrap == f"127.0.0.1:{run.advertised_port}" and run.advertised_port != run.port
        first = run.child.pid
        cluster.pause("tansu-0")
        assert _status_becomes(first, True)
        cluster.resume("tansu-0")
        assert _status_becomes(first, False)
        cluster.kill("tansu-0")
        assert not psutil.pid_exists(first) or psutil.Process(first).status() == psutil.STATUS_ZOMBIE
        assert not _connects(run.port)
        cluster.restart("tansu-0")
        assert run.child is not None and run.child.pid != first and wait_tcp("127.0.0.1", run.port, 5)
        assert run.starts == 2
        last = run.child.pid
    finally:
        cluster.close()
        group.close()
    assert not psutil.pid_exists(last) or psutil.Process(last).status() == psutil.STATUS_ZOMBIE


def test_faults_the_target_does_not_allow_are_refused(tmp_path: Path) -> None:
    target = load_target("tansu")  # kill and restart are off: memory storage
    group = ProcessGroup()
    cluster = Cluster(target, group, tmp_path)
    try:
        cluster.start()
        with pytest.raises(ClusterError, match="does not allow kill"):
            cluster.kill("tansu-0")
        with pytest.raises(ClusterError, match="does not allow restart"):
            cluster.restart("tansu-0")
    finally:
        cluster.close()
        group.close()


def test_a_node_that_exits_while_starting_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "exits.toml"
    path.write_text('[target]\nname = "x"\n[[node]]\nname = "n0"\nstart = ["{python}", "-c", "raise SystemExit(3)"]\n')
    group = ProcessGroup()
    cluster = Cluster(load_target(str(path)), group, tmp_path)
    try:
        with pytest.raises(ClusterError, match="exited with code 3 while starting"):
            cluster.start()
    finally:
        cluster.close()
        group.close()
