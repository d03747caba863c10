"""The gate's verdicts, files and exit codes; counterexamples replay to the same failure."""

from __future__ import annotations

import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from kconform.ci import cli, gate
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.ci.gate import run_gate
from kconform.ci.options import GateOptions, ReplayOptions
from kconform.conformance.hunt import run_campaign
from kconform.conformance.machine import RunLog
from kconform.conformance.runner import LockstepRun
from kconform.impl import ReferenceCluster
from kconform.impl.mutants import config_for
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces.counterexample import read_counterexample
from kconform.traces.events import Event
from kconform.traces.operations import Operation, Produce, Retention
from kconform.traces.replay import replay, run_replay

SMALL = os.environ.get("KCONFORM_BUDGET") == "small"


def _console() -> Console:
    return Console(record=True, width=160)


def test_gate_passes_on_the_reference(tmp_path: Path) -> None:
    console = _console()
    junit = tmp_path / "gate.xml"
    code = run_gate(
        GateOptions(ReplicationConfig(), examples=40, seed=3, junit=junit, out=tmp_path, progress=False), console
    )
    text = console.export_text()
    assert code == EXIT_PASS, text
    assert "PASS" in text and "NoCommittedDataLoss" in text
    suite = ET.parse(junit).getroot()
    assert int(suite.get("failures", "0")) == 0 and int(suite.get("tests", "0")) >= 12


def test_gate_finds_the_mutant_and_the_file_replays(tmp_path: Path) -> None:
    console = _console()
    code = run_gate(
        GateOptions(
            ReplicationConfig(), seconds=60, seed=1, mutants=("acks-all-no-wait",), out=tmp_path, progress=False
        ),
        console,
    )
    assert code == EXIT_VIOLATION, console.export_text()
    (path,) = tmp_path.glob("counterexample-*.jsonl")
    assert path.with_suffix(".html").read_text().count("<svg") == 1  # the report beside the file
    cx = read_counterexample(path)
    assert cx.mutants == ("acks-all-no-wait",)
    assert cx.verdict["kind"] == "non-conformance"
    live = replay(cx, ReferenceCluster())
    assert live.divergence is None and live.reproduces(cx)
    assert replay(cx, None).reproduces(cx)  # the recorded events alone, model only
    out = _console()
    assert run_replay(cx, ReplayOptions("reference"), out) == EXIT_VIOLATION
    assert "reproduces the recorded verdict" in out.export_text()


def test_a_planted_mutant_runs_where_it_is_observable(tmp_path: Path) -> None:
    """``gate --mutant NAME`` applies NAME's MUTANT_CONFIG, as ``--self-check`` does: a log-start
    mutant planted in the default configuration (log starts never move) would pass unseen."""
    console = _console()
    name = "kafka-5634-retention-past-hw"
    code = run_gate(
        GateOptions(ReplicationConfig(), examples=20, seed=1, mutants=(name,), out=tmp_path, progress=False), console
    )
    assert code == EXIT_VIOLATION, console.export_text()
    assert "run with their impl/mutants.py MUTANT_CONFIG" in console.export_text()
    (path,) = tmp_path.glob("counterexample-*.jsonl")
    cx = read_counterexample(path)
    assert cx.mutants == (name,) and any(isinstance(step.op, Retention) for step in cx.steps)
    # the clean reference under the same (mutant's) configuration passes
    clean = _console()
    assert (
        run_gate(
            GateOptions(config_for(name, ReplicationConfig()), examples=5, seed=1, out=tmp_path / "c", progress=False),
            clean,
        )
        == EXIT_PASS
    ), clean.export_text()


def test_buggy_protocol_rung_is_an_invariant_violation(tmp_path: Path) -> None:
    console = _console()
    cfg = ReplicationConfig(protocol=Protocol.KIP_101)
    code = run_gate(GateOptions(cfg, seconds=60, seed=1, out=tmp_path, progress=False), console)
    assert code == EXIT_VIOLATION
    (path,) = tmp_path.glob("counterexample-*.jsonl")
    assert read_counterexample(path).verdict["kind"] == "invariant-violation"


def test_cli_gate_with_invalid_config_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["gate", "--set", "min_insync_replicas=4", "--examples", "1"]) == EXIT_ERROR
    assert "min.insync.replicas" in capsys.readouterr().err


@pytest.mark.slow
def test_gate_at_full_budget_passes(tmp_path: Path) -> None:
    """The acceptance budget: 2,000 state-machine runs (200 in CI's small budget)."""
    examples = 200 if SMALL else 2000
    console = _console()
    code = run_gate(GateOptions(ReplicationConfig(), examples=examples, seed=11, out=tmp_path, progress=False), console)
    assert code == EXIT_PASS, console.export_text()


@pytest.mark.slow
def test_self_check_catches_every_mutant(tmp_path: Path) -> None:
    console = _console()
    seconds = 60.0 if SMALL else 120.0
    code = run_gate(
        GateOptions(ReplicationConfig(), seconds=seconds, seed=5, self_check=True, out=tmp_path, progress=False),
        console,
    )
    assert code == EXIT_PASS, console.export_text()
    from kconform.impl.mutants import REPLICATION, mutants_of

    assert len(list(tmp_path.glob("mutant-*.jsonl"))) == len(mutants_of(REPLICATION))


def test_gate_passes_on_the_kip_320_rung(tmp_path: Path) -> None:
    """The OffsetsForLeaderEpoch path (KIP-101/279/320 rungs) conforms in lockstep too."""
    console = _console()
    cfg = ReplicationConfig(protocol=Protocol.KIP_320)
    code = run_gate(GateOptions(cfg, examples=60, seed=5, out=tmp_path, progress=False), console)
    text = console.export_text()
    assert code == EXIT_PASS, text
    assert "epoch_query_applied" in text


class _Crashing(ReferenceCluster):
    """A reference cluster that raises on every operation after its fifth (over all instances);
    ``failures`` counts the operations it failed."""

    calls = 0
    failures = 0

    def apply(self, op: Operation) -> list[Event]:
        type(self).calls += 1
        if type(self).calls > 5:
            type(self).failures += 1
            raise RuntimeError("segfault in the broker")
        return super().apply(op)


class _Hanging(ReferenceCluster):
    """A reference cluster that never answers a produce; ``failures`` counts the produces it got."""

    calls = 0
    failures = 0

    def apply(self, op: Operation) -> list[Event]:
        if isinstance(op, Produce):
            type(self).failures += 1
            while True:
                time.sleep(0.01)
        return super().apply(op)


@pytest.mark.parametrize("adapter", [_Crashing, _Hanging])
def test_a_crashing_or_hanging_adapter_is_a_harness_error(
    adapter: type[_Crashing | _Hanging],
) -> None:
    """The first operation the implementation fails ends the campaign: Hypothesis neither shrinks
    nor retries it (the adapter sees exactly one failing operation), and the runs before it are
    kept."""
    adapter.calls = adapter.failures = 0
    result = run_campaign(
        adapter, ReplicationConfig(), frozenset(), seed=1, examples=50, zoo=False, adapter_timeout_s=0.3
    )
    assert result.error is not None and result.failure is None
    assert "implementation 'reference' at step" in str(result.error)
    assert ("segfault" in str(result.error)) or ("did not answer within 0.3 s" in str(result.error))
    assert adapter.failures == 1, f"{adapter.failures} failing operations: the campaign went on after the first"
    assert result.log.runs >= 1 and sum(result.log.all_runs_checks.values()) > 0, "what ran before is kept"


def test_gate_exits_2_on_a_harness_error_and_keeps_the_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gate, "make_adapter", lambda name, cfg=None: _Crashing())
    console = _console()
    code = run_gate(GateOptions(ReplicationConfig(), examples=20, seed=1, out=tmp_path, progress=False), console)
    text = console.export_text()
    assert code == EXIT_ERROR
    assert "segfault" in text and "Invariants" in text


def test_random_search_keeps_broad_handler_coverage(tmp_path: Path) -> None:
    """Guard against the machine decaying into vacuous passes: a modest budget must still reach
    most of the handler outcomes the model can produce (67.5-80 % measured at 150 examples)."""
    console = _console()
    options = GateOptions(ReplicationConfig(), examples=150, seed=1, out=tmp_path, progress=False, min_coverage=60.0)
    assert run_gate(options, console) == EXIT_PASS, console.export_text()


@pytest.mark.parametrize("shrink", [False, True])
def test_an_unshrunk_campaign_ends_at_its_first_failing_run(shrink: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without shrinking (mutation testing), the Hypothesis campaign ends with the first failing
    run: exactly one failing run is judged (Hypothesis would otherwise finish its target phase's
    hill climb and replay the failure once more). Near miss: with shrinking, the shrinker's runs
    fail too."""
    failing = [0]
    absorb = RunLog.absorb

    def counting(log: RunLog, run: LockstepRun) -> None:
        failing[0] += run.failure is not None
        absorb(log, run)

    monkeypatch.setattr(RunLog, "absorb", counting)
    cfg = ReplicationConfig()
    result = run_campaign(
        lambda: ReferenceCluster(), cfg, frozenset({"no-epoch-fencing"}), seed=1, examples=50, zoo=False, shrink=shrink
    )
    assert result.failure is not None and result.failure.failure is not None
    assert (failing[0] == 1) is not shrink, f"{failing[0]} failing runs judged"
    if not shrink:
        assert result.examples == result.log.runs, "the campaign ended with the failing run"
