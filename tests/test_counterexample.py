"""Counterexample files: round trip, atomic writes, and a clear file:line error for each corruption."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces.counterexample import (
    FORMAT,
    SUPPORTED_SCHEMA_VERSIONS,
    Counterexample,
    Step,
    TraceFileError,
    format_program,
    make_verdict,
    read_counterexample,
    write_counterexample,
)
from kconform.traces.events import (
    CONTROLLER,
    NONE,
    SCHEMA_VERSION,
    BrokerCrashed,
    BrokerUnfenced,
    ClockAdvanced,
    Entry,
    FetchHandled,
    ProduceHandled,
)
from kconform.traces.operations import Advance, Crash, Heal, Operation, Produce


def _sample(steps: int = 3) -> Counterexample:
    ops: list[Step] = [
        Step(
            Produce(rid=3, acks=-1),
            (ProduceHandled(node=0, req=1, rid=3, acks=-1, error=NONE, offset=0, epoch=1, hw=0),),
        ),
        Step(
            Advance(ms=500),
            (
                ClockAdvanced(node=CONTROLLER, now_ms=500),
                FetchHandled(
                    node=0,
                    msg=7,
                    follower=1,
                    error=NONE,
                    entries=(Entry(0, 1, 3),),
                    hw=0,
                    diverging_epoch=-1,
                    diverging_end_offset=-1,
                    leader_leo=1,
                    leader_hw=1,
                ),
            ),
        ),
        Step(Crash(broker=0), (BrokerCrashed(node=0),)),
        Step(Heal(), ()),
    ]
    return Counterexample(
        config=ReplicationConfig(replicas=3, min_insync_replicas=2, protocol=Protocol.KIP_101),
        seed=42,
        mutants=("skip_truncation",),
        implementation="reference",
        verdict=make_verdict("invariant-violation", "NoCommittedDataLoss", "offset 0 lost\nacked at step 0", 2),
        steps=tuple(ops[:steps]),
        init_events=(
            BrokerUnfenced(
                node=CONTROLLER, broker=0, leader=0, leader_epoch=1, isr=(0,), partition_epoch=1, unclean=False
            ),
        ),
    )


def _write_lines(path: Path, lines: list[Any], trailing_newline: bool = True) -> None:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + ("\n" if trailing_newline else ""), encoding="utf-8")


def _file_lines(cx: Counterexample, tmp_path: Path) -> list[Any]:
    """The JSON objects of ``cx``'s file, one per line, for corrupting."""
    path = tmp_path / "source.jsonl"
    write_counterexample(path, cx)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _error(path: Path) -> TraceFileError:
    with pytest.raises(TraceFileError) as info:
        read_counterexample(path)
    return info.value


# --------------------------------------------------------------------------------------------
# Round trip and format
# --------------------------------------------------------------------------------------------


def test_round_trip(tmp_path: Path) -> None:
    cx = _sample()
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, cx)
    assert read_counterexample(path) == cx


def test_an_empty_run_is_written_but_refused_as_nothing_to_judge(tmp_path: Path) -> None:
    cx = Counterexample(
        config=ReplicationConfig(),
        seed=0,
        mutants=(),
        implementation="reference",
        verdict=make_verdict("pass", "", "", -1),
        steps=(),
    )
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, cx)
    assert "nothing to judge" in _error(path).message


def test_file_layout_is_a_header_then_one_line_per_step(tmp_path: Path) -> None:
    cx = _sample()
    header, *steps = _file_lines(cx, tmp_path)
    assert header["format"] == FORMAT
    assert header["schema_version"] == SCHEMA_VERSION
    assert header["config"] == cx.config.to_json()
    assert (header["seed"], header["mutants"], header["implementation"]) == (42, ["skip_truncation"], "reference")
    assert header["verdict"] == {
        "kind": "invariant-violation",
        "name": "NoCommittedDataLoss",
        "message": "offset 0 lost\nacked at step 0",
        "step": 2,
    }
    assert [s["step"] for s in steps] == [0, 1, 2]
    assert steps[0]["op"] == {"op": "produce", "rid": 3, "acks": -1}
    assert steps[1]["events"][1]["entries"] == [[0, 1, 3]]


def test_header_without_init_events_reads_as_none(tmp_path: Path) -> None:
    header, *steps = _file_lines(_sample(), tmp_path)
    del header["init_events"]
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [header, *steps])
    assert read_counterexample(path).init_events == ()


def test_extra_verdict_keys_are_kept(tmp_path: Path) -> None:
    verdict = {**make_verdict("invariant-violation", "StrongIsr", "isr lost a member", 0), "reference": "KIP-101"}
    cx = Counterexample(ReplicationConfig(), 1, (), "reference", verdict, _sample(1).steps)
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, cx)
    assert read_counterexample(path).verdict["reference"] == "KIP-101"


def test_a_bad_verdict_is_refused_before_writing() -> None:
    with pytest.raises(ValueError, match="verdict kind"):
        make_verdict("broken", "x", "y", 0)
    with pytest.raises(ValueError, match="'step'"):
        Counterexample(ReplicationConfig(), 1, (), "reference", {"kind": "pass", "name": "", "message": ""}, ())


# --------------------------------------------------------------------------------------------
# Atomic writes
# --------------------------------------------------------------------------------------------


class _Exploding(Operation):
    """An operation whose encoding fails, to interrupt a write half way through."""

    def to_json(self) -> dict[str, Any]:
        raise RuntimeError("disk on fire")


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != "cx.jsonl")


def test_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    write_counterexample(tmp_path / "cx.jsonl", _sample())
    assert _leftovers(tmp_path) == []


def test_write_failing_midway_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _sample())
    before = path.read_bytes()
    broken = _sample()
    broken = Counterexample(
        broken.config,
        broken.seed,
        broken.mutants,
        broken.implementation,
        broken.verdict,
        (*broken.steps, Step(_Exploding(), ())),  # header and three steps are written first
    )
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_counterexample(path, broken)
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_write_failing_at_fsync_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _sample(1))
    before = path.read_bytes()

    def failing_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="Input/output error"):
        write_counterexample(path, _sample(3))
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_write_failing_without_an_old_file_creates_nothing(tmp_path: Path) -> None:
    broken = Counterexample(
        ReplicationConfig(), 1, (), "reference", make_verdict("pass", "", "", -1), (Step(_Exploding()),)
    )
    with pytest.raises(RuntimeError):
        write_counterexample(tmp_path / "cx.jsonl", broken)
    assert list(tmp_path.iterdir()) == []


def test_written_file_is_readable_by_others(tmp_path: Path) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _sample())
    assert os.stat(path).st_mode & 0o044 == 0o044


# --------------------------------------------------------------------------------------------
# Corruption: each case names the file and the 1-based line
# --------------------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    error = _error(tmp_path / "absent.jsonl")
    assert error.line is None
    assert str(error).startswith(f"{tmp_path / 'absent.jsonl'}: cannot read the file")


@pytest.mark.parametrize("content", ["", "\n", "  \n\n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "cx.jsonl"
    path.write_text(content)
    error = _error(path)
    assert (error.line, str(error)) == (1, f"{path}:1: empty file; expected a {FORMAT} header on line 1")


def test_truncated_last_line(tmp_path: Path) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _sample())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])  # cut inside step 2 (line 4)
    error = _error(path)
    assert error.line == 4
    assert "cut off" in error.message
    assert str(error).startswith(f"{path}:4: ")


def test_garbage_line(tmp_path: Path) -> None:
    lines = _file_lines(_sample(), tmp_path)
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [lines[0], lines[1], "this is not json", lines[3]])
    error = _error(path)
    assert error.line == 3
    assert "not valid JSON" in error.message


def test_blank_line_between_steps(tmp_path: Path) -> None:
    lines = _file_lines(_sample(), tmp_path)
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [lines[0], lines[1], "", lines[2]])
    assert _error(path).line == 3


def test_header_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [[1, 2, 3]])
    error = _error(path)
    assert (error.line, error.message) == (1, "the header should be a JSON object, got list")


def test_wrong_format_marker(tmp_path: Path) -> None:
    header, *steps = _file_lines(_sample(), tmp_path)
    header["format"] = "something-else"
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [header, *steps])
    error = _error(path)
    assert error.line == 1
    assert f"not a {FORMAT} file" in error.message


def test_unknown_schema_version(tmp_path: Path) -> None:
    header, *steps = _file_lines(_sample(), tmp_path)
    header["schema_version"] = SCHEMA_VERSION + 1
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [header, *steps])
    error = _error(path)
    assert error.line == 1
    assert f"unsupported schema_version {SCHEMA_VERSION + 1}" in error.message
    assert "newer kconform" in error.message
    assert error.field == "schema_version"
    assert error.message.endswith(f"reads {', '.join(map(str, SUPPORTED_SCHEMA_VERSIONS))}")


def test_bad_config(tmp_path: Path) -> None:
    header, *steps = _file_lines(_sample(), tmp_path)
    header["config"]["min_insync_replicas"] = 4
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [header, *steps])
    error = _error(path)
    assert error.line == 1
    assert error.message.startswith("bad config: min.insync.replicas=4")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("seed", "42", "seed: should be an integer"),
        ("mutants", "skip_truncation", "mutants: should be an array"),
        ("implementation", 7, "implementation: should be a string"),
        ("verdict", {"kind": "pass"}, "verdict: missing 'name'"),
    ],
)
def test_bad_header_field(tmp_path: Path, key: str, value: Any, expected: str) -> None:
    header, *steps = _file_lines(_sample(), tmp_path)
    header[key] = value
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [header, *steps])
    error = _error(path)
    assert error.line == 1
    assert expected in f"{error.field}: {error.message}"


def test_bad_init_event(tmp_path: Path) -> None:
    header, *steps = _file_lines(_sample(), tmp_path)
    header["init_events"][0]["kind"] = "broker_teleported"
    path = tmp_path / "cx.jsonl"
    _write_lines(path, [header, *steps])
    error = _error(path)
    assert error.line == 1
    assert error.field == "init_events[0].kind"
    assert error.message.startswith("unknown event kind 'broker_teleported' (known: add_offsets_handled,")


def test_unknown_event_kind(tmp_path: Path) -> None:
    lines = _file_lines(_sample(), tmp_path)
    lines[2]["events"][1]["kind"] = "fetch_teleported"
    path = tmp_path / "cx.jsonl"
    _write_lines(path, lines)
    error = _error(path)
    assert error.line == 3
    assert error.field == "events[1].kind"
    assert error.message.startswith("unknown event kind 'fetch_teleported' (known: ")


def test_wrong_event_field_type(tmp_path: Path) -> None:
    lines = _file_lines(_sample(), tmp_path)
    lines[1]["events"][0]["offset"] = "zero"
    path = tmp_path / "cx.jsonl"
    _write_lines(path, lines)
    error = _error(path)
    assert error.line == 2
    assert (error.field, error.message) == ("events[0].offset", "should be an integer, got a string 'zero'")


def test_wrong_operation_field_type(tmp_path: Path) -> None:
    lines = _file_lines(_sample(), tmp_path)
    lines[3]["op"]["broker"] = True
    path = tmp_path / "cx.jsonl"
    _write_lines(path, lines)
    error = _error(path)
    assert error.line == 4
    assert (error.field, error.message) == ("op.broker", "should be an integer, got a boolean True")


def test_events_not_a_list(tmp_path: Path) -> None:
    lines = _file_lines(_sample(), tmp_path)
    lines[1]["events"] = {"kind": "broker_crashed", "node": 0}
    path = tmp_path / "cx.jsonl"
    _write_lines(path, lines)
    error = _error(path)
    assert (error.line, error.field) == (2, "events")
    assert error.message.startswith("should be an array, got an object")


@pytest.mark.parametrize("numbers", [[1, 2, 3], [0, 2, 3], [0, 1, 1], [0, True, 2], [0, 1.0, 2]])
def test_step_numbers_must_count_from_zero(tmp_path: Path, numbers: list[Any]) -> None:
    lines = _file_lines(_sample(), tmp_path)
    for line, number in zip(lines[1:], numbers, strict=True):
        line["step"] = number
    path = tmp_path / "cx.jsonl"
    _write_lines(path, lines)
    expected_line = 2 + next(i for i, n in enumerate(numbers) if type(n) is not int or n != i)
    error = _error(path)
    assert (error.line, error.field) == (expected_line, "step")
    if isinstance(numbers[expected_line - 2], int) and not isinstance(numbers[expected_line - 2], bool):
        assert "steps are numbered 0, 1, 2" in error.message
    else:
        assert error.message.startswith("should be an integer, got")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, _sample())
    data = path.read_bytes().splitlines(keepends=True)
    data[2] = b"\xff\xfe" + data[2]
    path.write_bytes(b"".join(data))
    error = _error(path)
    assert error.line == 3
    assert "not UTF-8" in error.message


def test_trace_file_error_is_a_value_error() -> None:
    error = TraceFileError("x.jsonl", 7, "broken")
    assert isinstance(error, ValueError)
    assert str(error) == "x.jsonl:7: broken"


# --------------------------------------------------------------------------------------------
# The readable program
# --------------------------------------------------------------------------------------------


def test_format_program() -> None:
    program = format_program(_sample())
    lines = program.splitlines()
    assert lines[0].startswith("config = ReplicationConfig.from_json({'replicas': 3, 'min_insync_replicas': 2")
    assert lines[1] == "cluster = Cluster('reference', config, seed=42, mutants=['skip_truncation'])"
    assert lines[2:5] == [
        "cluster.produce(rid=3, acks=-1)",
        "cluster.advance(ms=500)",
        "cluster.crash(broker=0)  # <- step 2: invariant-violation",
    ]
    assert lines[5:] == [
        "# verdict: invariant-violation NoCommittedDataLoss at step 2",
        "#   offset 0 lost",
        "#   acked at step 0",
    ]


def test_format_program_of_an_op_without_arguments_and_a_start_up_verdict() -> None:
    cx = _sample(4)
    cx = Counterexample(
        cx.config, cx.seed, (), cx.implementation, make_verdict("non-conformance", "broker_unfenced", "x", -1), cx.steps
    )
    lines = format_program(cx).splitlines()
    assert "cluster.heal()" in lines
    assert lines[-2:] == ["# verdict: non-conformance broker_unfenced during start-up", "#   x"]
