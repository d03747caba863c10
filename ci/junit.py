"""JUnit XML reports, so CI systems show each invariant, rule and mutant as its own test case.

The layout is the common denominator of Jenkins, GitLab and GitHub reporters: one ``<testsuites>``
root holding one ``<testsuite>``; a failed case carries ``<failure message="first line">full
text</failure>``, a skipped one ``<skipped/>``.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from kconform.traces.atomicfile import atomic_write_bytes

# Characters XML 1.0 cannot hold at all, not even escaped.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class JUnitCase:
    """One test case: ``failure_message`` None means it passed (or was skipped)."""

    name: str
    classname: str
    time_s: float
    failure_message: str | None = None
    skipped: bool = False

    def __post_init__(self) -> None:
        assert self.time_s >= 0, f"time_s must be >= 0, got {self.time_s}"
        assert not (self.skipped and self.failure_message is not None), "a case is skipped or failed, not both"


def junit_xml(suite_name: str, cases: Sequence[JUnitCase]) -> bytes:
    """The JUnit XML document (UTF-8, with declaration) for one suite of ``cases``."""
    failures = sum(1 for c in cases if c.failure_message is not None)
    skipped = sum(1 for c in cases if c.skipped)
    total_s = sum(c.time_s for c in cases)
    counts = {
        "name": _clean(suite_name),
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
        "time": _seconds(total_s),
    }
    root = ET.Element("testsuites", {k: v for k, v in counts.items() if k != "skipped"})
    suite = ET.SubElement(root, "testsuite", counts)
    for case in cases:
        element = ET.SubElement(
            suite,
            "testcase",
            {"name": _clean(case.name), "classname": _clean(case.classname), "time": _seconds(case.time_s)},
        )
        if case.failure_message is not None:
            text = _clean(case.failure_message)
            first_line = text.splitlines()[0] if text else ""
            failure = ET.SubElement(element, "failure", {"message": first_line, "type": "failure"})
            failure.text = text
        elif case.skipped:
            ET.SubElement(element, "skipped")
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def write_junit(path: str | os.PathLike[str], suite_name: str, cases: Sequence[JUnitCase]) -> None:
    """Write the report for ``cases`` to ``path`` atomically (the parent directory must exist)."""
    atomic_write_bytes(path, junit_xml(suite_name, cases))


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _clean(text: str) -> str:
    return _XML_ILLEGAL.sub("\ufffd", text)
