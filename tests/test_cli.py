"""The command line's plumbing: options reach the engines, user errors are one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from kconform.ci import cli, gate
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.ci.options import GateOptions, ReplayOptions
from kconform.conformance import registry
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces import replay
from kconform.traces.counterexample import Counterexample, Step, make_verdict, write_counterexample
from kconform.traces.events import ProduceHandled
from kconform.traces.operations import Produce

FAKE_MUTANTS = {
    "skip_truncation": "The follower never truncates on becoming follower.\n\nMore text.",
    "hw_from_any_replica": "The leader advances the HW past followers outside the ISR.",
}


@pytest.fixture
def fake_impl(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's mutants come from the slice registry: a stand-in registry whose one
    slice has FAKE_MUTANTS."""
    part = types.SimpleNamespace(mutants=lambda: FAKE_MUTANTS)
    monkeypatch.setattr(registry, "all_slices", lambda: (part,))


@pytest.fixture
def gate_calls(monkeypatch: pytest.MonkeyPatch) -> list[GateOptions]:
    """Replace run_gate with a recorder that passes."""
    calls: list[GateOptions] = []

    def fake_run_gate(options: GateOptions) -> int:
        calls.append(options)
        return EXIT_PASS

    monkeypatch.setattr(gate, "run_gate", fake_run_gate)
    return calls


@pytest.fixture
def replay_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Counterexample, ReplayOptions]]:
    calls: list[tuple[Counterexample, ReplayOptions]] = []

    def fake_run_replay(cx: Counterexample, options: ReplayOptions) -> int:
        calls.append((cx, options))
        return EXIT_VIOLATION

    monkeypatch.setattr(replay, "run_replay", fake_run_replay)
    return calls


def _user_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``argv``, expect exit 2 with exactly one 'kconform: error:' line; return that line."""
    assert cli.main(argv) == EXIT_ERROR
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kconform: error: "), err
    return lines[0]


def _counterexample(mutants: tuple[str, ...] = (), implementation: str = "reference") -> Counterexample:
    return Counterexample(
        config=ReplicationConfig(),
        seed=5,
        mutants=mutants,
        implementation=implementation,
        verdict=make_verdict("non-conformance", "produce_handled", "wrong hw", 0),
        steps=(
            Step(
                Produce(rid=1, acks=1),
                (ProduceHandled(node=0, req=1, rid=1, acks=1, error=0, offset=0, epoch=1, hw=1),),
            ),
        ),
    )


# --------------------------------------------------------------------------------------------
# --version and usage errors
# --------------------------------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == EXIT_PASS
    assert capsys.readouterr().out.startswith("kconform ")


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["gate", "--help"]) == EXIT_PASS
    assert "--examples" in capsys.readouterr().out


def test_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert "required" in _user_error(capsys, [])


def test_unknown_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--frobnicate" in _user_error(capsys, ["gate", "--frobnicate"])


@pytest.mark.parametrize(
    "argv",
    [
        ["gate", "--examples", "0"],
        ["gate", "--examples", "many"],
        ["gate", "--seconds", "-1"],
        ["gate", "--seconds", "nan"],
        ["gate", "--seed", "-3"],
        ["gate", "--steps", "0"],
        ["gate", "--examples", "3", "--seconds", "2"],
        ["gate", "--implementation", "kafka-4.0"],
        ["gate", "--set", "replicas"],
    ],
)
def test_bad_flag_values(capsys: pytest.CaptureFixture[str], argv: list[str], gate_calls: list[GateOptions]) -> None:
    line = _user_error(capsys, argv)
    assert "kconform gate --help" in line
    assert gate_calls == []


# --------------------------------------------------------------------------------------------
# gate: config, --set, mutants, options
# --------------------------------------------------------------------------------------------


def test_gate_defaults(gate_calls: list[GateOptions]) -> None:
    assert cli.main(["gate"]) == EXIT_PASS
    (options,) = gate_calls
    assert options == GateOptions(config=ReplicationConfig())


def test_gate_options_reach_run_gate(tmp_path: Path, gate_calls: list[GateOptions], fake_impl: None) -> None:
    argv = ["gate", "--seconds", "2.5", "--seed", "9", "--mutant", "skip_truncation", "--mutant", "skip_truncation"]
    argv += ["--self-check", "--junit", str(tmp_path / "r.xml"), "--out", str(tmp_path), "--steps", "40"]
    argv += ["--no-progress"]
    assert cli.main(argv) == EXIT_PASS
    (options,) = gate_calls
    assert options == GateOptions(
        config=ReplicationConfig(),
        seconds=2.5,
        seed=9,
        mutants=("skip_truncation",),
        self_check=True,
        junit=tmp_path / "r.xml",
        out=tmp_path,
        steps=40,
        progress=False,
    )


def test_set_values_are_json_and_merge_over_the_config_file(tmp_path: Path, gate_calls: list[GateOptions]) -> None:
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps({"replicas": 5, "min_insync_replicas": 2, "protocol": "kip-279"}))
    argv = ["gate", "--examples", "10", "--config", str(config_file), "--set", "min_insync_replicas=4"]
    argv += ["--set", "protocol=kip-101", "--set", "unclean.leader.election.enable=true"]
    argv += ["--set", "replica.lag.time.max.ms=100"]
    assert cli.main(argv) == EXIT_PASS
    (options,) = gate_calls
    assert options.examples == 10
    assert options.config == ReplicationConfig(
        replicas=5,
        min_insync_replicas=4,
        protocol=Protocol.KIP_101,
        unclean_leader_election=True,
        replica_lag_time_max_ms=100,
    )


def test_min_isr_above_replicas(capsys: pytest.CaptureFixture[str], gate_calls: list[GateOptions]) -> None:
    line = _user_error(capsys, ["gate", "--set", "min.insync.replicas=4"])
    assert line == "kconform: error: invalid config: min.insync.replicas=4 must be between 1 and replicas=3"
    assert gate_calls == []


def test_min_isr_above_replicas_in_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps({"replicas": 2, "min_insync_replicas": 3}))
    line = _user_error(capsys, ["gate", "--config", str(config_file)])
    assert line.startswith(f"kconform: error: invalid config (from {config_file}): min.insync.replicas=3")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"replicas": 3, "colour": "blue"}', "unknown config key(s): ['colour']"),
        ('{"replicas": "three"}', "replicas must be an integer"),
        ('{"protocol": "kip-999"}', "unknown protocol 'kip-999'"),
    ],
)
def test_bad_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, expected: str) -> None:
    config_file = tmp_path / "config.json"
    config_file.write_text(content)
    line = _user_error(capsys, ["gate", "--config", str(config_file)])
    assert str(config_file) in line
    assert expected in line


def test_missing_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = _user_error(capsys, ["gate", "--config", str(tmp_path / "absent.json")])
    assert line == f"kconform: error: cannot read config file {tmp_path / 'absent.json'}: No such file or directory"


def test_unknown_set_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unknown config key(s): ['colour']" in _user_error(capsys, ["gate", "--set", "colour=1"])


def test_unknown_mutant(capsys: pytest.CaptureFixture[str], fake_impl: None, gate_calls: list[GateOptions]) -> None:
    line = _user_error(capsys, ["gate", "--mutant", "skip_truncaton"])
    assert "unknown mutant 'skip_truncaton'" in line
    assert "did you mean 'skip_truncation'?" in line
    assert "hw_from_any_replica, skip_truncation" in line
    assert gate_calls == []


def test_mutant_registry_unloadable(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> dict[str, str]:
        raise ImportError("no module named kconform.impl")

    monkeypatch.setattr(registry, "all_slices", lambda: (types.SimpleNamespace(mutants=broken),))
    line = _user_error(capsys, ["gate", "--mutant", "x"])
    assert "cannot load the mutant list: ImportError: no module named kconform.impl" in line


def test_junit_directory_must_exist(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = _user_error(capsys, ["gate", "--junit", str(tmp_path / "no" / "such" / "r.xml")])
    assert "does not exist" in line


def test_out_must_be_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert "not a directory" in _user_error(capsys, ["gate", "--out", str(tmp_path / "file")])


# --------------------------------------------------------------------------------------------
# gate: what the engine returns or raises
# --------------------------------------------------------------------------------------------


def test_gate_exit_code_is_passed_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gate, "run_gate", lambda options: EXIT_VIOLATION)
    assert cli.main(["gate"]) == EXIT_VIOLATION


def test_internal_error_is_exit_2_with_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(options: GateOptions) -> int:
        raise KeyError("oops")

    monkeypatch.setattr(gate, "run_gate", crash)
    assert cli.main(["gate"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "Traceback" in err
    assert err.strip().splitlines()[-1].startswith("kconform: internal error")


def test_engine_returning_a_non_exit_code_is_an_internal_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gate, "run_gate", lambda options: None)
    assert cli.main(["gate"]) == EXIT_ERROR
    assert "internal error" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# replay
# --------------------------------------------------------------------------------------------


def test_replay_reads_the_file_and_calls_run_replay(
    tmp_path: Path, replay_calls: list[tuple[Counterexample, ReplayOptions]]
) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _counterexample())
    assert cli.main(["replay", str(path)]) == EXIT_VIOLATION
    assert replay_calls == [(_counterexample(), ReplayOptions(implementation="reference"))]


def test_replay_model_only_accepts_any_implementation(
    tmp_path: Path, replay_calls: list[tuple[Counterexample, ReplayOptions]]
) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _counterexample(mutants=("gone",), implementation="kafka-3.7"))
    assert cli.main(["replay", "--model-only", str(path)]) == EXIT_VIOLATION
    assert replay_calls[0][1] == ReplayOptions(implementation="kafka-3.7", model_only=True)


def test_replay_corrupt_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _counterexample())
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    line = _user_error(capsys, ["replay", str(path)])
    assert line.startswith(f"kconform: error: {path}:2: the last line is cut off")


def test_replay_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = _user_error(capsys, ["replay", str(tmp_path / "absent.jsonl")])
    assert line == f"kconform: error: {tmp_path / 'absent.jsonl'}: cannot read the file: No such file or directory"


def test_replay_unknown_mutant_in_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_impl: None) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _counterexample(mutants=("renamed_long_ago",)))
    line = _user_error(capsys, ["replay", str(path)])
    assert line.startswith(f"kconform: error: {path}: unknown mutant 'renamed_long_ago'")


def test_replay_unknown_implementation_in_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _counterexample(implementation="kafka-3.7"))
    line = _user_error(capsys, ["replay", str(path)])
    assert "unknown implementation 'kafka-3.7'" in line
    assert "--model-only" in line


# --------------------------------------------------------------------------------------------
# mutants
# --------------------------------------------------------------------------------------------


def test_mutants_lists_names_and_first_doc_line(capsys: pytest.CaptureFixture[str], fake_impl: None) -> None:
    assert cli.main(["mutants"]) == EXIT_PASS
    assert capsys.readouterr().out.splitlines() == [
        "hw_from_any_replica  The leader advances the HW past followers outside the ISR.",
        "skip_truncation      The follower never truncates on becoming follower.",
    ]


def test_mutants_without_a_loadable_slice(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def unloadable() -> tuple[object, ...]:
        raise ImportError("kconform.impl is missing")

    monkeypatch.setattr(registry, "all_slices", unloadable)
    assert "cannot load the mutant list: ImportError: kconform.impl is missing" in _user_error(capsys, ["mutants"])


# --------------------------------------------------------------------------------------------
# A real process: no traceback for user errors, exit codes as documented
# --------------------------------------------------------------------------------------------


def test_subprocess_user_error_has_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{")
    result = subprocess.run(
        [sys.executable, "-m", "kconform.ci.cli", "gate", "--config", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == EXIT_ERROR
    assert result.stderr.startswith("kconform: error: config file")
    assert "Traceback" not in result.stderr
