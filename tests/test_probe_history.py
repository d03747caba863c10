"""The probe history format (docs/probe.md): writer and reader agree, and bad input is named by file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform.conformance.probe.history import (
    ErrorInfo,
    HistoryError,
    HistoryHeader,
    HistoryWriter,
    PollResult,
    ProbeConfig,
    Record,
    SendValue,
    open_history,
    read_history,
)

HEADER = HistoryHeader(
    seed=7,
    target="test",
    client="confluent-kafka",
    client_version="2.16.1",
    started="2026-11-25T16:00:00Z",
    topics={"kc-0": 2},
    capabilities={"transactions": True},
    config=ProbeConfig(acks="all"),
)


def _write_sample(path: Path) -> None:
    with HistoryWriter(path, HEADER, durable=False) as w:
        w.invoke(
            1,
            "send",
            {"acks": "all", "idempotent": True, "records": [{"topic": "kc-0", "partition": 1, "value": "p1.t-.s0"}]},
        )
        w.complete(1, "ok", "send", SendValue("all", True, (Record("kc-0:1", "p1.t-.s0", 0),)))
        w.invoke(2, "poll", {"isolation": "read_committed", "group": None, "mode": "assign"})
        w.complete(2, "ok", "poll", PollResult((Record("kc-0:1", "p1.t-.s0", 0),), {"kc-0:1": 1}))
        w.invoke(3, "init", {"transactional_id": "tx-1"})
        w.complete(3, "fail", "init", None, ErrorInfo(90, "PRODUCER_FENCED", "fenced"))


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _rewrite(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines))


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    _write_sample(path)
    header, events, warnings = read_history(path)
    assert header == HEADER
    assert warnings == []
    assert [e.i for e in events] == [1, 2, 3, 4, 5, 6]
    assert [e.type for e in events] == ["invoke", "ok", "invoke", "ok", "invoke", "fail"]
    assert events[1].value == SendValue("all", True, (Record("kc-0:1", "p1.t-.s0", 0),))
    assert events[1].invoke is events[0]
    assert events[5].error == ErrorInfo(90, "PRODUCER_FENCED", "fenced")
    # re-serialising the events gives the file's lines back (modulo float formatting of time)
    for event, line in zip(events, _lines(path)[1:], strict=True):
        assert event.to_json() == line


def test_every_line_is_whole_and_ends_with_newline(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    _write_sample(path)
    data = path.read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 7


def test_killed_run_open_invocations_are_pending(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    w = HistoryWriter(path, HEADER)
    w.invoke(1, "poll", {"isolation": "read_uncommitted", "group": None, "mode": "assign"})
    w.invoke(2, "assign", {"partitions": ["kc-0:0"]})
    w.complete(2, "ok", "assign", {"partitions": ["kc-0:0"]})
    w.close()
    with open_history(path) as r:
        events = list(r.events())
        assert len(events) == 3
        assert [e.i for e in r.pending()] == [1]


def test_truncated_last_line_is_judged_up_to_last_full_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    _write_sample(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])  # cut inside the last line
    _, events, warnings = read_history(path)
    assert len(events) == 5
    assert len(warnings) == 1 and f"{path}:7: truncated last line" in warnings[0]


def test_last_line_without_newline_but_whole_is_read(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    _write_sample(path)
    path.write_bytes(path.read_bytes()[:-1])
    _, events, warnings = read_history(path)
    assert len(events) == 6 and warnings == []


@pytest.mark.parametrize(
    ("edit", "line", "field", "message"),
    [
        (lambda ls: ls.__setitem__(2, ls[2][:-3]), 3, None, "not JSON"),
        # JSON Python reads but kconform refuses everywhere (issue 20; found by the fuzz harness: the deep
        # nesting was a RecursionError traceback, a duplicate key silently kept its last value)
        (lambda ls: ls.__setitem__(2, "[" * 100_000 + "]" * 100_000), 3, None, "nested deeper than"),
        (lambda ls: ls.__setitem__(2, ls[2].replace('"i":2', '"i":2,"i":2')), 3, None, "duplicate key 'i'"),
        (lambda ls: ls.__setitem__(2, ls[2].replace('"i":2', '"i":' + "9" * 5_000)), 3, None, "more than 20 digits"),
        (lambda ls: ls.__setitem__(0, ls[0].replace('"version":1', '"version":9')), 1, "version", "unsupported"),
        (lambda ls: ls.__setitem__(0, ls[0].replace('"kconform-probe"', '"other"')), 1, "history", "not a kconform"),
        (lambda ls: ls.__setitem__(0, ls[0].replace('"seed":7', '"seed":"7"')), 1, "seed", "expected an integer"),
        (lambda ls: ls.__setitem__(2, ls[2].replace('"i":2', '"i":5')), 3, "i", "expected 2"),
        (lambda ls: ls.__setitem__(2, ls[2].replace('"type":"ok"', '"type":"done"')), 3, "type", "expected one of"),
        (
            lambda ls: ls.__setitem__(2, ls[2].replace('"partition":1', '"partition":9')),
            3,
            "value.records[0].partition",
            "2 partitions",
        ),
        (
            lambda ls: ls.__setitem__(2, ls[2].replace('"topic":"kc-0"', '"topic":"nope"')),
            3,
            "value.records[0].topic",
            "not in the header",
        ),
        (
            lambda ls: ls.__setitem__(2, ls[2].replace('"offset":0', '"offset":-1')),
            3,
            "value.records[0].offset",
            ">= 0",
        ),
        (lambda ls: ls.__setitem__(2, ls[2].replace('"process":1', '"process":4')), 3, "type", "no open invocation"),
        (lambda ls: ls.__setitem__(2, ls[2].replace('"f":"send"', '"f":"poll"')), 3, "f", "open invocation"),
        (
            lambda ls: ls.__setitem__(3, ls[3].replace('"isolation":"read_committed"', '"isolation":"x"')),
            4,
            "value.isolation",
            "expected one of",
        ),
        (lambda ls: ls.__setitem__(4, ls[4].replace('"mono_ns":', '"mono":')), 5, "mono_ns", "missing"),
        (
            lambda ls: ls.__setitem__(4, ls[4].replace('"kc-0:1":1', '"kc-9:1":1')),
            5,
            "value.positions.kc-9:1",
            "not a 'topic:partition'",
        ),
    ],
)
def test_bad_lines_are_named(tmp_path: Path, edit: object, line: int, field: str | None, message: str) -> None:
    path = tmp_path / "h.jsonl"
    _write_sample(path)
    lines = path.read_text().splitlines()
    edit(lines)  # type: ignore[operator]
    _rewrite(path, lines)
    with pytest.raises(HistoryError) as info:
        read_history(path)
    assert info.value.line == line
    assert info.value.field == field
    assert message in info.value.message
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="cannot read"):
        open_history(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(HistoryError, match="empty file"):
        open_history(tmp_path / "empty.jsonl")
    (tmp_path / "cut.jsonl").write_text('{"history": "kconform-pro')
    with pytest.raises(HistoryError) as info:
        open_history(tmp_path / "cut.jsonl")
    assert info.value.line == 1


def test_crashed_process_cannot_invoke_again(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    with HistoryWriter(path, HEADER, durable=False) as w:
        w.invoke(1, "crash", None)
        w.complete(1, "info", "crash", None)
        with pytest.raises(HistoryError, match="crashed earlier") as info:
            w.invoke(1, "assign", {"partitions": ["kc-0:0"]})
        assert info.value.line == 4


def test_writer_refuses_bad_values_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    with HistoryWriter(path, HEADER, durable=False) as w:
        with pytest.raises(HistoryError) as info:
            w.invoke(1, "send", {"acks": "2", "records": []})
        assert info.value.field == "value.acks" and info.value.line == 2
        with pytest.raises(HistoryError, match="no open invocation"):
            w.complete(1, "ok", "send", {"acks": "all", "records": []})
        with pytest.raises(HistoryError, match="offset"):
            w.invoke(
                1, "send", {"acks": "all", "records": [{"topic": "kc-0", "partition": 0, "value": "v", "offset": 3}]}
            )
        with pytest.raises(HistoryError, match="not JSON-serialisable"):
            w.invoke(1, "seek", {"partition": "kc-0:0", "offset": object()})
        w.invoke(1, "seek", {"partition": "kc-0:0", "offset": 3})
        w.invoke("nemesis", "kill", {"node": "b1"})
    assert len(path.read_text().splitlines()) == 3


def test_writer_refuses_a_bad_header(tmp_path: Path) -> None:
    bad = HistoryHeader(seed=1, target="t", client="c", client_version="1", started="s", topics={})
    with pytest.raises(HistoryError, match="no topics"):
        HistoryWriter(tmp_path / "h.jsonl", bad)
    assert not (tmp_path / "h.jsonl").exists()


def test_completion_must_list_the_invocations_records(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    with HistoryWriter(path, HEADER, durable=False) as w:
        w.invoke(1, "send", {"acks": "all", "records": [{"topic": "kc-0", "partition": 0, "value": "a"}]})
        with pytest.raises(HistoryError) as info:
            w.complete(1, "ok", "send", {"acks": "all", "records": [{"topic": "kc-0", "partition": 0, "value": "b"}]})
        assert info.value.field == "value.records[0]" and info.value.line == 3
        with pytest.raises(HistoryError, match="lists 0 records"):
            w.complete(1, "ok", "send", {"acks": "all", "records": []})
        w.complete(1, "info", "send", None)
