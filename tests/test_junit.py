"""JUnit XML: one suite, one case per invariant/rule/mutant, failures with their message."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kconform.ci.junit import JUnitCase, junit_xml, write_junit

CASES = [
    JUnitCase("LeaderCompleteness", "invariant", 1.25),
    JUnitCase("StrongIsr", "invariant", 0.5, failure_message="ISR lost acked offset 3\nsee cx-1.jsonl"),
    JUnitCase("produce_handled", "rule", 0.0),
    JUnitCase("skip_truncation", "mutant", 3.0, skipped=True),
]


def _suite(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite


def test_write_junit(tmp_path: Path) -> None:
    path = tmp_path / "report.xml"
    write_junit(path, "kconform-gate", CASES)
    suite = _suite(path)
    assert suite.attrib == {
        "name": "kconform-gate",
        "tests": "4",
        "failures": "1",
        "errors": "0",
        "skipped": "1",
        "time": "4.750",
    }
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name"), c.get("time")) for c in cases] == [
        ("invariant", "LeaderCompleteness", "1.250"),
        ("invariant", "StrongIsr", "0.500"),
        ("rule", "produce_handled", "0.000"),
        ("mutant", "skip_truncation", "3.000"),
    ]
    assert [len(c) for c in cases] == [0, 1, 0, 1]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == "ISR lost acked offset 3"
    assert failure.text == "ISR lost acked offset 3\nsee cx-1.jsonl"
    assert cases[3].find("skipped") is not None


def test_empty_suite(tmp_path: Path) -> None:
    path = tmp_path / "report.xml"
    write_junit(path, "kconform-gate", [])
    suite = _suite(path)
    assert (suite.get("tests"), suite.get("failures")) == ("0", "0")


def test_characters_xml_cannot_hold_are_replaced() -> None:
    document = junit_xml("kconform-gate", [JUnitCase("bad\x00name", "rule", 0.1, failure_message="a\x1bb")])
    suite = ET.fromstring(document).find("testsuite")
    assert suite is not None
    case = suite.find("testcase")
    assert case is not None
    assert case.get("name") == "bad\ufffdname"


def test_document_has_a_declaration() -> None:
    assert junit_xml("kconform-gate", CASES).startswith(b"<?xml version='1.0' encoding='utf-8'?>")


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "report.xml"
    write_junit(path, "kconform-gate", CASES[:1])
    before = path.read_bytes()

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("kconform.traces.atomicfile.os.replace", failing_replace)
    with pytest.raises(OSError):
        write_junit(path, "kconform-gate", CASES)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["report.xml"]


def test_a_case_cannot_be_both_skipped_and_failed() -> None:
    with pytest.raises(AssertionError):
        JUnitCase("x", "rule", 0.0, failure_message="boom", skipped=True)
