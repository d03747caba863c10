"""``kconform probe --check``: verdicts as exit codes, reports written, bad input named by file:line (exit 2)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kconform.ci.cli import main
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_UNKNOWN, EXIT_VIOLATION
from tests.probekit import H

A = "t:0"


def _valid(path: Path) -> Path:
    h = H(path)
    h.send(1, [(A, 0, "v0")])
    h.txn(2, "tx", [(A, 1, "v1")])
    h.send(1, [(A, 3, "v2")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v1"), (A, 3, "v2")])
    h.w.close()
    return path


def _invalid(path: Path) -> Path:
    h = H(path)
    h.txn(2, "tx", [(A, 0, "v0")], end="abort")
    h.send(1, [(A, 2, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 2, "v1")])
    h.w.close()
    return path


def _run(tmp_path: Path, history: Path, *extra: str) -> int:
    return main(["probe", "--check", str(history), "--out", str(tmp_path / "out"), *extra])


def test_valid_history_exits_0_and_writes_reports(tmp_path: Path) -> None:
    assert _run(tmp_path, _valid(tmp_path / "h.jsonl"), "--junit", str(tmp_path / "j.xml")) == EXIT_PASS
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "valid" and report["figures"]["acknowledged_judged"] == 3
    assert (tmp_path / "out" / "report.html").read_text().startswith("<!doctype html>")
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.attrib["failures"] == "0" and int(suite.attrib["tests"]) > 10


def test_invalid_history_exits_1_with_witnesses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, _invalid(tmp_path / "h.jsonl"), "--junit", str(tmp_path / "j.xml")) == EXIT_VIOLATION
    out = capsys.readouterr().out
    assert "G1a" in out and "INVALID" in out
    html = (tmp_path / "out" / "report.html").read_text()
    assert "G1a" in html and "<svg" in html and "v0 @ 0" in html
    failures = [c for c in ET.parse(tmp_path / "j.xml").getroot().iter("testcase") if c.find("failure") is not None]
    assert [c.attrib["name"] for c in failures] == ["G1a"]


def test_unknown_exits_3(tmp_path: Path) -> None:
    h = H(tmp_path / "h.jsonl")
    h.send(1, [(A, 0, "v0")])
    h.w.close()
    assert _run(tmp_path, tmp_path / "h.jsonl") == EXIT_UNKNOWN


def test_stored_history_rechecks_to_the_same_verdict(tmp_path: Path) -> None:
    path = _invalid(tmp_path / "h.jsonl")
    first = _run(tmp_path, path)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())
    assert _run(tmp_path, copy) == first == EXIT_VIOLATION


def test_truncated_history_is_judged_up_to_last_full_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _invalid(tmp_path / "h.jsonl")
    data = path.read_bytes()
    path.write_bytes(data[:-15])  # a kill tore the last line (the poll's completion)
    assert _run(tmp_path, path) == EXIT_UNKNOWN  # the read is gone: nothing judged, and the abort alone is no anomaly
    assert "truncated last line" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("corrupt", "where"),
    [
        (lambda ls: ls.__setitem__(3, ls[3][:10]), ":4: not JSON"),
        (lambda ls: ls.__setitem__(0, ls[0].replace('"version":1', '"version":3')), ":1: version: unsupported"),
        (lambda ls: ls.__setitem__(2, ls[2].replace('"acks":"all"', '"acks":"most"')), ":3: value.acks:"),
    ],
)
def test_corrupt_history_exits_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], corrupt: object, where: str
) -> None:
    path = _valid(tmp_path / "h.jsonl")
    lines = path.read_text().splitlines()
    corrupt(lines)  # type: ignore[operator]
    path.write_text("\n".join(lines) + "\n")
    assert _run(tmp_path, path) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{path}{where}" in err and "Traceback" not in err


def test_duplicate_value_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    h = H(tmp_path / "h.jsonl")
    h.send(1, [(A, 0, "v0")])
    h.send(1, [(A, 1, "v0")])
    h.w.close()
    assert _run(tmp_path, tmp_path / "h.jsonl") == EXIT_ERROR
    assert "written a second time" in capsys.readouterr().err


def test_missing_file_and_no_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, tmp_path / "absent.jsonl") == EXIT_ERROR
    assert main(["probe"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "absent.jsonl: cannot read" in err and "--check HISTORY" in err
