"""Handler-outcome coverage: the keys, what the model can reach, and the gate's --min-coverage."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.ci.gate import run_gate
from kconform.ci.options import GateOptions
from kconform.conformance.replication.coverage import STATIC_REACHABLE, coverage_key, reachable_keys
from kconform.conformance.replication.lockstep import Judge
from kconform.conformance.replication.pathevents import boot_events
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces import events as ev


def _console() -> Console:
    return Console(record=True, width=200)


@pytest.mark.parametrize(
    ("event", "key"),
    [
        (ev.MetadataApplied(1, 0, 1, (0, 1), 2, "become_follower", -1, 0), "metadata_applied:become_follower"),
        (ev.FetchApplied(1, 7, "diverged", 3, 0, 2), "fetch_applied:diverged"),
        (ev.EpochQueryApplied(1, 7, "retry", 2, 0), "epoch_query_applied:retry"),
        (ev.FetchHandled(0, 7, 1, ev.FENCED_LEADER_EPOCH, (), -1, -1, -1, 3, -1), "fetch_handled:FENCED_LEADER_EPOCH"),
        (ev.FetchHandled(0, 7, 1, ev.NONE, (), 2, 1, 2, 3, 2), "fetch_handled:diverging"),
        (ev.FetchHandled(0, 7, 1, ev.NONE, (ev.Entry(2, 1, 5),), 2, -1, -1, 3, 2), "fetch_handled:NONE"),
        (ev.ProduceCompleted(0, 4, ev.REQUEST_TIMED_OUT), "produce_completed:REQUEST_TIMED_OUT"),
        (
            ev.ProduceHandled(1, 4, 4, -1, ev.NOT_LEADER_OR_FOLLOWER, -1, -1, 0),
            "produce_handled:NOT_LEADER_OR_FOLLOWER",
        ),
        (
            ev.AlterPartitionHandled(ev.CONTROLLER, 3, ev.INVALID_UPDATE_VERSION, (0, 1), 4),
            "alter_partition_handled:INVALID_UPDATE_VERSION",
        ),
        (
            ev.ConsumerFetchHandled(0, 9, -1, ev.OFFSET_OUT_OF_RANGE, (), 2),
            "consumer_fetch_handled:OFFSET_OUT_OF_RANGE",
        ),
        (ev.ClockAdvanced(ev.CONTROLLER, 1_000), "clock_advanced"),
        (ev.BrokerCrashed(2), "broker_crashed"),
        (ev.FetchSent(1, 7, 0, 3, 1, 1, 1), "fetch_sent"),
    ],
)
def test_coverage_key(event: ev.Event, key: str) -> None:
    assert coverage_key(event) == key


def test_the_judge_counts_the_keys_of_accepted_events_only() -> None:
    cfg = ReplicationConfig()
    judge = Judge(cfg)
    for e in boot_events(cfg):
        assert not judge.observe(e)
    assert judge.covered == {
        "broker_unfenced": 3,
        "metadata_applied:become_leader": 1,
        "metadata_applied:become_follower": 2,
    }
    # broker 1 follows: a write there is NOT_LEADER_OR_FOLLOWER; claiming NONE is non-conformance
    assert judge.observe(ev.ProduceHandled(1, 1, 1, -1, ev.NONE, 0, 1, 0))
    assert "produce_handled:NONE" not in judge.covered
    assert not judge.observe(ev.ProduceHandled(1, 1, 1, -1, ev.NOT_LEADER_OR_FOLLOWER, -1, -1, 0))
    assert judge.covered["produce_handled:NOT_LEADER_OR_FOLLOWER"] == 1


def test_reachable_keys_are_computed_once_and_cached() -> None:
    """(How long the exploration takes is a benchmark's business, not a test's: the machine is shared.)"""
    cfg = ReplicationConfig(replicas=3, min_insync_replicas=2)
    keys = reachable_keys(cfg)
    for key in (
        "broker_unfenced",
        "broker_fenced",
        "metadata_applied:become_leader",
        "metadata_applied:become_follower",
        "metadata_applied:update_isr",
        "produce_handled:NONE",
        "produce_handled:NOT_LEADER_OR_FOLLOWER",
        "produce_handled:NOT_ENOUGH_REPLICAS",
        "produce_completed:NONE",
        "produce_completed:REQUEST_TIMED_OUT",
        "fetch_handled:NONE",
        "fetch_handled:diverging",
        "fetch_handled:FENCED_LEADER_EPOCH",
        "fetch_applied:appended",
        "fetch_applied:diverged",
        "alter_partition_handled:NONE",
        "clock_advanced",
        "broker_crashed",
        "consumer_fetch_handled:NONE",
    ):
        assert key in keys, key
    assert not any(k.startswith("epoch_query") for k in keys)  # the diverging-epoch rung has no such round trip
    assert reachable_keys(cfg) is keys


def test_static_keys_are_documented_and_well_formed() -> None:
    kinds = set(ev.EVENT_TYPES)
    for key, rungs, why in STATIC_REACHABLE:
        assert key.partition(":")[0] in kinds, key
        assert rungs and why


def test_the_gate_prints_coverage_and_writes_coverage_json(tmp_path: Path) -> None:
    console = _console()
    junit = tmp_path / "gate.xml"
    options = GateOptions(ReplicationConfig(), examples=3, steps=10, seed=3, junit=junit, out=tmp_path, progress=False)
    assert run_gate(options, console) == EXIT_PASS
    text = console.export_text()
    assert "reachable" in text and "metadata_applied:become_leader" in text
    assert "covered " in text and " reachable (" in text
    doc = json.loads((tmp_path / "coverage.json").read_text())
    assert doc["covered"]["broker_unfenced"] > 0
    assert set(doc["missing"]) == set(doc["reachable"]) - set(doc["covered"])
    assert doc["covered_reachable"] == len(doc["reachable"]) - len(doc["missing"])
    assert doc["min_coverage"] is None
    names = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase")]
    assert "coverage" in names


def test_min_coverage_fails_a_passing_run_below_the_threshold(tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    console = _console()
    code = run_gate(
        GateOptions(
            ReplicationConfig(),
            examples=3,
            steps=10,
            seed=3,
            junit=junit,
            out=tmp_path,
            progress=False,
            min_coverage=100,
        ),
        console,
    )
    text = console.export_text()
    assert code == EXIT_VIOLATION, text
    assert "below --min-coverage 100 %" in text
    missing = json.loads((tmp_path / "coverage.json").read_text())["missing"]
    assert missing and all(k in text for k in missing)
    case = next(c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "coverage")
    assert case.find("failure") is not None

    console = _console()
    code = run_gate(
        GateOptions(ReplicationConfig(), examples=3, steps=10, seed=3, out=tmp_path, progress=False, min_coverage=1),
        console,
    )
    assert code == EXIT_PASS, console.export_text()


@pytest.mark.parametrize("value", ["150", "-1", "nan", "lots"])
def test_cli_rejects_a_bad_min_coverage(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["gate", "--min-coverage", value]) == EXIT_ERROR
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kconform: error: "), lines
    assert "--min-coverage: expected a percentage between 0 and 100" in lines[0]


def test_cli_passes_min_coverage_to_the_gate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[GateOptions] = []

    def fake_run_gate(options: GateOptions, console: Console | None = None) -> int:
        seen.append(options)
        return EXIT_PASS

    from kconform.ci import gate

    monkeypatch.setattr(gate, "run_gate", fake_run_gate)
    assert cli.main(["gate", "--min-coverage", "42.5", "--out", str(tmp_path)]) == EXIT_PASS
    assert seen[0].min_coverage == 42.5


def test_kip_101_reaches_the_epoch_query_round_trip() -> None:
    keys = reachable_keys(ReplicationConfig(protocol=Protocol.KIP_101))
    assert "epoch_query_handled:NONE" in keys and "epoch_query_applied:truncated" in keys
