"""Live probe runs against the shipped targets: histories come out whole and every process is torn down.

Fast tier: a short run against librdkafka's mock cluster and against Tansu (confluent-kafka), and a
Ctrl-C in the middle of a run. Slow tier: kafka-python against Tansu, and longer runs with faults.
Leftover processes are found by an environment marker every child inherits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections import Counter
from pathlib import Path

import psutil
import pytest

from kconform.ci.cli import main
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.conformance.probe.history import read_history
from kconform.conformance.probe.runner import ProbeError, ProbeOptions, run_probe
from kconform.conformance.probe.target_file import SHIPPED_DIR

MARK = "KCONFORM_PROBE_TEST_RUN"


def _leftovers(mark: str) -> list[str]:
    """Live processes (not zombies, not this one) that carry the marker in their environment."""
    found = []
    for p in psutil.process_iter():
        if p.pid == os.getpid():
            continue
        try:
            if p.environ().get(MARK) == mark and p.status() != psutil.STATUS_ZOMBIE:
                found.append(" ".join(p.cmdline())[:120])
        except psutil.Error:
            continue
    return found


@pytest.fixture
def mark(monkeypatch: pytest.MonkeyPatch) -> str:
    value = uuid.uuid4().hex
    monkeypatch.setenv(MARK, value)
    return value


def _check_history(path: Path) -> Counter[tuple[str, str]]:
    _header, events, warnings = read_history(path)
    assert warnings == []
    kinds = Counter((e.f, e.type) for e in events)
    # writes were acknowledged, and the drain read them back
    assert kinds[("send", "ok")] > 0
    polled = [e for e in events if e.f == "poll" and e.type == "ok" and e.value is not None]
    seen = {r.value for e in polled for r in e.value.records}  # type: ignore[union-attr]
    assert any(v.startswith("p") and ".t-." in v for v in seen)
    return kinds


@pytest.mark.parametrize("target", ["librdkafka-mock", "tansu"])
def test_a_shipped_target_runs_to_a_verdict_that_rechecks_the_same(target: str, tmp_path: Path, mark: str) -> None:
    """`kconform probe --target NAME` starts the target, runs, judges, and tears everything down;
    `--check` on the history it wrote gives the same verdict (exit code)."""
    out = tmp_path / "out"
    code = main(["probe", "--target", target, "--ops", "120", "--seconds", "20", "--out", str(out)])
    assert code in (EXIT_PASS, EXIT_VIOLATION)  # a verdict: not an error (2) nor unknown (3)
    assert _leftovers(mark) == []
    history = out / f"history-{target}-confluent-kafka-7.jsonl"
    kinds = _check_history(history)
    assert kinds[("txn", "ok")] + kinds[("txn", "fail")] + kinds[("txn", "info")] > 0
    assert kinds[("init", "ok")] > 0
    header, _, _ = read_history(history)
    assert header.target == target and header.client == "confluent-kafka"
    assert {s.what for s in header.skipped} >= {"fault kill", "fault restart"}
    assert (out / "report.json").is_file() and (out / "report.html").is_file()
    assert main(["probe", "--check", str(history), "--out", str(tmp_path / "again")]) == code


def test_live_options_are_checked_before_anything_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [
        (["--target", "tansu", "--ops", "0"], "--ops: expected a positive integer"),
        (["--target", "tansu", "--seconds", "-1"], "--seconds: expected a positive number"),
        (["--target", "tansu", "--bootstrap-server", "127.0.0.1:9092"], "one of --target and --bootstrap-server"),
        (["--target", "tansu", "--check", "h.jsonl"], "--check judges a stored history"),
        (["--target", "tansu", "--capabilities", "txn=1"], "--capabilities"),
        (["--target", str(tmp_path / "none.toml")], "cannot read"),
    ]:
        assert main(["probe", *argv, "--out", str(tmp_path / "o")]) == EXIT_ERROR
        err = capsys.readouterr().err
        assert err.startswith("kconform: error: ") and message in err and "Traceback" not in err


def test_capabilities_switch_parts_of_the_workload_off(tmp_path: Path, mark: str) -> None:
    run = run_probe(
        ProbeOptions(target="tansu", capabilities="transactions=false,groups=false", ops=20, out_dir=tmp_path)
    )
    kinds = _check_history(run.history)
    assert not any(f in ("txn", "init", "subscribe", "commit") for f, _ in kinds)
    header, _, _ = read_history(run.history)
    assert any("transactions" in s.what and "transactions=false" in s.why for s in header.skipped)
    assert _leftovers(mark) == []


def test_bad_target_and_bad_bootstrap_are_harness_errors(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match="no shipped target"):
        run_probe(ProbeOptions(target="nope", out_dir=tmp_path))
    with pytest.raises(ProbeError, match=r"127\.0\.0\.1 only"):
        run_probe(ProbeOptions(bootstrap_server="10.1.2.3:9092", out_dir=tmp_path))
    with pytest.raises(ProbeError, match="exactly one"):
        run_probe(ProbeOptions(out_dir=tmp_path))


def test_a_target_that_never_gets_ready_is_torn_down(tmp_path: Path, mark: str) -> None:
    target = tmp_path / "dead.toml"
    target.write_text(
        textwrap.dedent(
            """\
            [target]
            name = "never-ready"
            ready_timeout_s = 2
            [[node]]
            name = "n0"
            start = ["{python}", "-c", "import time; time.sleep(60)"]
            """
        )
    )
    with pytest.raises(ProbeError, match="did not accept connections"):
        run_probe(ProbeOptions(target=str(target), ops=5, out_dir=tmp_path))
    assert _leftovers(mark) == []


CLI = "import sys; from kconform.ci.cli import main; sys.exit(main(sys.argv[1:]))"


def _gone(mark: str, seconds: float) -> list[str]:
    """The marked processes still alive after waiting up to ``seconds`` for them to exit."""
    deadline = time.monotonic() + seconds
    left = _leftovers(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _leftovers(mark)
    return left


def _kill_marked(mark: str) -> None:
    """SIGKILL every live process carrying the marker (orphans included) and reap what is ours: the
    test's own teardown, so that nothing outlives it whatever failed."""
    victims = []
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.environ().get(MARK) == mark:
                p.kill()
                victims.append(p)
        except psutil.Error:
            continue
    psutil.wait_procs(victims, timeout=10)


def test_ctrl_c_mid_run_tears_everything_down(tmp_path: Path, mark: str) -> None:
    """`kconform probe` interrupted by SIGINT (Ctrl-C) mid-run: no verdict (exit 2), no process left.

    Every wait is bounded but generous (a loaded machine starts Tansu and the workers slowly and
    tears them down slowly); whatever happens, the test kills every process carrying its marker."""
    cmd = [sys.executable, "-c", CLI, "probe", "--target", "tansu", "--seconds", "120", "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    history = tmp_path / "history-tansu-confluent-kafka-7.jsonl"
    try:
        deadline = time.monotonic() + 90
        while proc.poll() is None and time.monotonic() < deadline:
            if history.exists() and history.stat().st_size >= 3000:
                break
            time.sleep(0.2)
        assert proc.poll() is None, f"the run ended before the interrupt: {proc.communicate(timeout=30)[1][-2000:]}"
        assert history.exists(), "the run never started writing its history"
        assert _leftovers(mark), "the run should have live children mid-run"
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=90)
        assert proc.stderr is not None
        err = proc.stderr.read()
        assert code == EXIT_ERROR, err[-2000:]
        assert "interrupted" in err
        left = _gone(mark, 15)  # the CLI waited for its children: at most their last moments remain
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        _kill_marked(mark)
    assert left == []
    _, events, _ = read_history(history)  # the prefix written before the interrupt is a valid history
    assert events


@pytest.mark.slow
def test_kafka_python_client_against_tansu(tmp_path: Path, mark: str) -> None:
    run = run_probe(ProbeOptions(target="tansu", client="kafka-python", ops=60, seconds=30, out_dir=tmp_path))
    kinds = _check_history(run.history)
    assert kinds[("init", "ok")] > 0
    header, _, _ = read_history(run.history)
    assert header.client == "kafka-python"
    assert _leftovers(mark) == []


@pytest.mark.slow
def test_bootstrap_server_mode_against_a_cluster_we_did_not_start(tmp_path: Path, mark: str) -> None:
    helper = subprocess.Popen(
        [sys.executable, "-m", "kconform.conformance.probe.mock_cluster", "--brokers", "1"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert helper.stdout is not None
        line = helper.stdout.readline().strip()
        assert line.startswith("bootstrap: ")
        run = run_probe(ProbeOptions(bootstrap_server=line.split(" ", 1)[1], ops=60, out_dir=tmp_path))
        _check_history(run.history)
        header, _, _ = read_history(run.history)
        assert header.target == "bootstrap"
        assert any(s.what == "faults (nemesis)" for s in header.skipped)
    finally:
        helper.send_signal(signal.SIGTERM)
        helper.wait(timeout=10)
    assert _leftovers(mark) == []


@pytest.mark.slow
def test_kill_and_restart_of_a_node_with_volatile_storage(tmp_path: Path, mark: str) -> None:
    """Tansu with kill/restart allowed: the nemesis SIGKILLs the broker and starts it again on the same
    ports; memory storage restarts empty, which the header's volatile_storage makes allowed. Seed 0's
    first fault is a kill (the nemesis' choices are seeded)."""
    source = SHIPPED_DIR / "tansu.toml"
    target = tmp_path / "tansu-kill.toml"
    target.write_text(
        source.read_text().replace("kill = false", "kill = true").replace("restart = false", "restart = true")
    )
    run = run_probe(
        ProbeOptions(target=str(target), seed=0, seconds=8, capabilities="transactions=false", out_dir=tmp_path / "out")
    )
    assert run.faults.get("kill", 0) >= 1 and run.faults.get("restart", 0) >= 1
    header, events, _ = read_history(run.history)
    assert header.config.volatile_storage is True
    assert [e.f for e in events if e.process == "nemesis"][:2] == ["kill", "kill"]  # invoke, ok
    assert main(["probe", "--check", str(run.history), "--out", str(tmp_path / "check")]) == EXIT_PASS
    assert _leftovers(mark) == []
