"""The validation boundary of JSON Lines files (traces/inputs): every crash site and every silently
accepted input of issue 20, reproduced, each answered with exit 2 and ``file:line: field: message``
(or, where the model cannot run an event, with a finding), never a traceback."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.conformance.adapter import AdapterError
from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.replication.lockstep import Judge
from kconform.model.config import ReplicationConfig
from kconform.model.not_enabled import NotEnabled
from kconform.model.state import initial_state
from kconform.traces import events as ev
from kconform.traces.counterexample import TraceFileError, read_counterexample
from kconform.traces.inputs import jsontext
from kconform.traces.operations import Boot, Operation
from kconform.traces.replay import ReplayTimeout, replay


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A replication and an exactly-once counterexample written by the gate, and a passing trace."""
    root = tmp_path_factory.mktemp("inputs")
    runs = {
        "repl": ["gate", "--examples", "20", "--seed", "1", "--mutant", "acks-all-no-wait"],
        "txn": ["gate", "--examples", "20", "--seed", "1", "--slice", "txn", "--mutant", "no-sequence-dedup"],
    }
    out: dict[str, Path] = {}
    for name, argv in runs.items():
        assert cli.main([*argv, "--no-progress", "--out", str(root / name)]) == EXIT_VIOLATION
        out[name] = next((root / name).glob("*.jsonl"))
    from kconform.traces.generate import Plan, generate

    generate(root / "corpus", Plan(events=300, seed=2, trace_events=300))
    assert cli.main(["convert", str(root / "corpus"), str(root / "jsonl")]) == EXIT_PASS
    out["pass"] = root / "jsonl" / "trace-0.jsonl"
    return out


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def _refused(path: Path, capsys: pytest.CaptureFixture[str], *modes: list[str]) -> str:
    """Replay ``path`` in both modes: exit 2, one ``kconform: error: FILE:LINE: ...`` line, no traceback."""
    errs = []
    for mode in modes or ([], ["--model-only"]):
        assert cli.main(["replay", str(path), *mode]) == EXIT_ERROR
        err = capsys.readouterr().err
        assert err.startswith(f"kconform: error: {path}:") and "Traceback" not in err and "internal error" not in err
        errs.append(err)
    return errs[0]


def _first_event(lines: list[dict[str, Any]], kind: str) -> tuple[int, int]:
    return next(
        (i, j) for i, line in enumerate(lines[1:], 1) for j, e in enumerate(line["events"]) if e["kind"] == kind
    )


# --------------------------------------------------------------------------------------------
# Crash sites of issue 20
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["header", "step"])
def test_deep_nesting_is_refused_not_a_recursion_error(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    lines = _lines(files["repl"])
    deep = "[" * 100_000 + "]" * 100_000
    text = [json.dumps(x) for x in lines]
    index = 0 if where == "header" else 2
    text[index] = text[index][:-1] + f', "junk": {deep}' + "}"
    err = _refused(_write(tmp_path / "deep.jsonl", text), capsys)
    assert f":{index + 1}: nested deeper than {jsontext.MAX_DEPTH} levels" in err


def test_a_huge_integer_is_refused_not_a_value_error(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = [json.dumps(x) for x in _lines(files["repl"])]
    text[1] = text[1].replace('"step": 0', '"step": ' + "9" * 5000)
    err = _refused(_write(tmp_path / "big.jsonl", text), capsys)
    assert ":2: an integer of more than 20 digits" in err


def test_a_replication_invariant_in_an_exactly_once_file_is_refused(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(files["txn"])
    lines[0]["verdict"]["invariants"] = ["StrongIsr"]
    err = _refused(_write(tmp_path / "inv.jsonl", lines), capsys)
    assert ":1: verdict.invariants: unknown invariant(s) ['StrongIsr'] in this slice (known: NoDuplicateAppends," in err


def test_a_node_outside_the_replicas_is_refused(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(files["repl"])
    i, j = _first_event(lines, "fetch_sent")
    lines[i]["events"][j]["node"] = 9
    err = _refused(_write(tmp_path / "node.jsonl", lines), capsys)
    assert f":{i + 1}: events[{j}].node: fetch_sent is run by a broker: node 9 is not one of the brokers 0..2" in err


def test_the_model_itself_answers_an_unknown_replica_with_not_enabled() -> None:
    """Behind the boundary, the model never raises IndexError: an unknown broker is NotEnabled,
    which the judge reports as a finding."""
    cfg = ReplicationConfig()
    with pytest.raises(NotEnabled, match="broker 9 is not one of the 3 replicas"):
        initial_state(cfg).replica(9)
    finding = Judge(cfg).observe(ev.BrokerCrashed(node=9))
    assert [f.verdict for f in finding] == [NON_CONFORMANCE] and "not one of the 3 replicas" in finding[0].message


def test_boot_off_step_zero_is_refused(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(files["repl"])
    lines[1]["op"], lines[3]["op"] = lines[3]["op"], lines[1]["op"]
    err = _refused(_write(tmp_path / "boot.jsonl", lines), capsys)
    assert ":4: op: boot is step 0 only" in err


def test_a_file_without_a_boot_step_replays_with_steps_counted_from_the_file(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The live replay boots implicitly; a failure names the file's own step (no IndexError)."""
    header, boot, *steps = _lines(files["repl"])
    for n, step in enumerate(steps):
        step["step"] = n
    header["verdict"]["step"] -= 1
    header["init_events"] = boot["events"]
    path = _write(tmp_path / "noboot.jsonl", [header, *steps])
    assert cli.main(["replay", str(path), "--model-only"]) == EXIT_VIOLATION
    out = capsys.readouterr().out
    assert f"at step {header['verdict']['step']}:" in out and "reproduces the recorded verdict" in out


def test_an_empty_batch_is_a_finding_not_a_value_error(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(files["txn"])
    i, j = _first_event(lines, "txn_produce_handled")
    lines[i]["events"][j]["rids"] = []
    path = _write(tmp_path / "empty.jsonl", lines)
    assert cli.main(["replay", str(path), "--model-only"]) == EXIT_VIOLATION
    captured = capsys.readouterr()
    assert "a batch holds at least one record" in captured.out and "Traceback" not in captured.err


def test_a_run_of_2_pow_31_ms_is_refused_before_it_runs(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(files["repl"])
    lines[2]["op"] = {"op": "run", "ms": 2147483648}
    err = _refused(_write(tmp_path / "run.jsonl", lines), capsys)
    assert ":3: op.ms: 2147483648 is outside 0..3600000" in err


# --------------------------------------------------------------------------------------------
# Inputs issue 20 saw accepted
# --------------------------------------------------------------------------------------------


def test_an_empty_invariants_selection_is_refused(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(files["repl"])
    lines[0]["verdict"]["invariants"] = []
    assert ":1: verdict.invariants: should have at least 1 element(s), got 0" in _refused(
        _write(tmp_path / "vac.jsonl", lines), capsys
    )


@pytest.mark.parametrize(
    ("op", "field", "message"),
    [
        ({"op": "crash", "broker": 10**12}, "op.broker", "1000000000000 is outside -2147483648..2147483647"),
        ({"op": "crash", "broker": 5}, "op.broker", "broker 5 is not one of the brokers 0..2"),
        ({"op": "settle", "max_messages": -5}, "op.max_messages", "-5 is outside 0..100000"),
        ({"op": "produce", "rid": 1, "acks": -1, "extra": 1}, "op", "unknown key(s) ['extra']"),
        ({"op": "teleport"}, "op.op", "unknown operation 'teleport' (known: abort_txn,"),
        ({"op": "send", "client": 0, "partition": "t-0", "count": 1}, "op.op", "'send' is an operation of the exactly"),
    ],
)
def test_operation_arguments_are_checked(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    op: dict[str, Any],
    field: str,
    message: str,
) -> None:
    lines = _lines(files["repl"])
    lines[2]["op"] = op
    assert f":3: {field}: {message}" in _refused(_write(tmp_path / "op.jsonl", lines), capsys)


def test_unknown_partitions_of_the_exactly_once_slice_are_refused(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(files["txn"])
    lines[2]["op"] = {"op": "send", "client": 0, "partition": "t-9", "count": 1}
    assert ":3: op.partition: 't-9' is not a data partition of the configuration" in _refused(
        _write(tmp_path / "part.jsonl", lines), capsys
    )


def test_a_float_step_number_is_refused(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = [json.dumps(x) for x in _lines(files["repl"])]
    text[3] = text[3].replace('"step": 2,', '"step": 2.0,')
    assert ":4: step: should be an integer, got the number 2.0 (write it as an integer)" in _refused(
        _write(tmp_path / "float.jsonl", text), capsys
    )


def test_duplicate_keys_are_refused(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = [json.dumps(x) for x in _lines(files["repl"])]
    text[2] = text[2][:-1] + ', "step": 1}'
    assert ":3: duplicate key 'step' in one object" in _refused(_write(tmp_path / "dup.jsonl", text), capsys)


@pytest.mark.parametrize(("kind", "node"), [("clock_advanced", 5), ("broker_unfenced", 0)])
def test_the_node_of_controller_and_clock_events_is_checked(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, node: int
) -> None:
    lines = _lines(files["repl"])
    i, j = _first_event(lines, kind)
    lines[i]["events"][j]["node"] = node
    err = _refused(_write(tmp_path / "clock.jsonl", lines), capsys)
    assert f"events[{j}].node: {kind} is run by the controller / the simulated world: node must be -1" in err


def test_the_node_of_coordinator_events_is_checked(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(files["txn"])
    i, j = _first_event(lines, "init_producer_id_handled")
    lines[i]["events"][j]["node"] = 7
    assert f"events[{j}].node: init_producer_id_handled is run by a broker: node 7" in _refused(
        _write(tmp_path / "coord.jsonl", lines), capsys
    )


@pytest.mark.parametrize(
    ("kind", "field", "value", "message"),
    [
        ("init_producer_id_handled", "epoch", 2**15, "32768 is outside -1..32767"),
        ("txn_produce_handled", "base_seq", 2**31, "2147483648 is outside -1..2147483647"),
        ("txn_produce_handled", "pid", 2**63, "9223372036854775808 is outside -1..9223372036854775807"),
        ("txn_produce_handled", "outcome", "maybe", "'maybe' is not one of 'appended', 'duplicate'"),
    ],
)
def test_kafka_limits_are_checked(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    field: str,
    value: Any,
    message: str,
) -> None:
    lines = _lines(files["txn"])
    i, j = _first_event(lines, kind)
    lines[i]["events"][j][field] = value
    assert message in _refused(_write(tmp_path / "limits.jsonl", lines), capsys)


def test_a_file_without_events_is_never_a_pass(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    header = _lines(files["pass"])[0]
    header["init_events"] = []
    assert "no events at all: nothing to judge" in _refused(_write(tmp_path / "none.jsonl", [header]), capsys)


def test_the_error_names_file_line_and_field() -> None:
    error = TraceFileError("x.jsonl", 7, "should be an integer", "events[2].hw")
    assert str(error) == "x.jsonl:7: events[2].hw: should be an integer"


# --------------------------------------------------------------------------------------------
# Replay budgets and what the exit codes mean
# --------------------------------------------------------------------------------------------


class _Slow:
    """An adapter whose third operation hangs."""

    name = "slow"

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0
        self.woke = False
        """Whether the hanging operation ever finished its sleep (the budget interrupts it first)."""

    def reset(self, config: Any, seed: int, mutants: frozenset[str]) -> list[ev.Event]:
        result: list[ev.Event] = self.inner.reset(config, seed, mutants)
        return result

    def apply(self, op: Operation) -> list[ev.Event]:
        self.calls += 1
        if self.calls == 2:
            time.sleep(30)
            self.woke = True
        result: list[ev.Event] = self.inner.apply(op)
        return result

    def close(self) -> None:
        self.inner.close()


def test_a_hanging_step_is_stopped_and_named(files: dict[str, Path]) -> None:
    from kconform.traces.replay import make_adapter

    cx = read_counterexample(files["repl"])
    adapter = _Slow(make_adapter("reference", cx.config))
    with pytest.raises(ReplayTimeout, match=r"step 2 .* took longer than 0.5 s \(--timeout; hung\?\)"):
        replay(cx, adapter, step_timeout_s=0.5)
    assert not adapter.woke, "the step budget interrupted the hanging operation, it did not wait it out"
    adapter.close()


def test_the_whole_run_budget_names_the_step(files: dict[str, Path]) -> None:
    cx = read_counterexample(files["repl"])
    with pytest.raises(ReplayTimeout, match=r"whole replay ran past its budget of 1e-06 s \(--run-timeout\) at"):
        replay(cx, None, run_timeout_s=0.000001)
    assert issubclass(ReplayTimeout, AdapterError)


def test_replay_timeout_is_exit_2_naming_the_step(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kconform.traces import replay as replay_module

    real = replay_module.make_adapter
    monkeypatch.setattr(replay_module, "make_adapter", lambda name, cfg=None: _Slow(real(name, cfg)))
    assert cli.main(["replay", str(files["repl"]), "--timeout", "0.5"]) == EXIT_ERROR
    assert "replay stopped: step 2" in capsys.readouterr().out


def test_exit_codes_fixed_bug_versus_damaged_file(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A counterexample kept as a regression test: once the bug is fixed (here: the mutant is
    switched off) the replay passes, exit 0, and says the recorded failure is NOT reproduced; a
    damaged copy of the same file is exit 2 naming the place."""
    assert cli.main(["replay", str(files["repl"])]) == EXIT_VIOLATION
    assert "reproduces the recorded verdict" in capsys.readouterr().out
    lines = _lines(files["repl"])
    lines[0]["mutants"] = []
    fixed = _write(tmp_path / "fixed.jsonl", lines)
    assert cli.main(["replay", str(fixed)]) == EXIT_PASS
    assert "NOT reproduced" in capsys.readouterr().out
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(files["repl"].read_bytes()[:-40])
    assert cli.main(["replay", str(damaged)]) == EXIT_ERROR
    assert f"{damaged}:" in capsys.readouterr().err


def test_boot_is_a_known_operation() -> None:
    assert Boot().to_json() == {"op": "boot"}
