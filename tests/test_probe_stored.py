"""Stored probe histories re-check to the verdict recorded when they were written (format or checker drift
shows here), and the anomaly table in docs/probe.md names every anomaly the checker reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform.ci.cli import main
from kconform.ci.exitcodes import EXIT_PASS, EXIT_VIOLATION
from kconform.conformance.probe.anomalies import ANOMALIES
from kconform.conformance.probe.checker import check_history

STORED = Path(__file__).parent / "probe_histories"
EXPECTED: dict[str, dict[str, object]] = json.loads((STORED / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_stored_history_rechecks_to_its_recorded_verdict(name: str, tmp_path: Path) -> None:
    result = check_history(STORED / f"{name}.jsonl")
    forbidden = sorted({n for (n, allowed), c in result.findings.counts.items() if c and not allowed})
    assert {"verdict": result.verdict, "forbidden": forbidden} == EXPECTED[name]
    code = main(["probe", "--check", str(STORED / f"{name}.jsonl"), "--out", str(tmp_path)])
    assert code == {"valid": EXIT_PASS, "invalid": EXIT_VIOLATION}[result.verdict]


def test_docs_table_names_every_anomaly() -> None:
    text = (Path(__file__).parents[1] / "docs" / "probe.md").read_text()
    for name in ANOMALIES:
        assert f"| `{name}` |" in text, name
