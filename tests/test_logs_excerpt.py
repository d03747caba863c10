"""Replayable excerpts: every finding the checks raise on their bad inputs (tests/test_logs_checks.py)
and on the real fixture that shows an anomaly is written as an excerpt, and ``kconform logs check``
on the excerpt alone raises the same finding (same check, same message)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform.traces.logs.excerpt import write_excerpts
from kconform.traces.logs.run import check_paths
from tests.logskit import FIXTURES
from tests.test_logs_checks import CASES

MANIFEST = json.loads((FIXTURES / "fixtures.json").read_text())


def _replays(tmp_path: Path, inputs: list[Path]) -> None:
    run = check_paths(inputs)
    findings = [(c.name, i, f) for c in run.checks for i, f in enumerate(c.findings)]
    assert findings
    written = write_excerpts(run.checks, tmp_path / "excerpts")
    assert set(written) == {(name, i) for name, i, _ in findings}
    for name, i, finding in findings:
        again = check_paths([written[(name, i)]], only=[name])
        assert not again.stats.problems, again.stats.problems
        messages = [f.message for c in again.checks for f in c.findings]
        assert finding.message in messages, (name, finding.message, messages)


@pytest.mark.parametrize(("check", "bad"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_every_planted_finding_replays_from_its_excerpt(tmp_path: Path, check: str, bad: str) -> None:
    source = tmp_path / "input" / "broker-1.log"
    source.parent.mkdir()
    source.write_text(bad)
    _replays(tmp_path, [source])


@pytest.mark.parametrize("name", sorted(n for n, e in MANIFEST.items() if e["expect"]))
def test_real_fixture_findings_replay_from_their_excerpts(tmp_path: Path, name: str) -> None:
    _replays(tmp_path, [FIXTURES / name])


def test_excerpt_keeps_whole_metadata_payloads_and_the_dump_header(tmp_path: Path) -> None:
    from tests.test_logs_checks import meta, metadata_dump, registered

    long_dirs = ["x" * 22] * 30  # a payload longer than the report's cut witness text
    text = metadata_dump(
        registered([1, 2, 3], [1, 2, 3], 1, directories=long_dirs), meta(2, "PARTITION_CHANGE_RECORD", isr=[2, 3])
    )
    source = tmp_path / "m.txt"
    source.write_text(text)
    run = check_paths([source], only=["kraft-leader-in-isr"])
    (excerpt,) = write_excerpts(run.checks, tmp_path / "x").values()
    (written,) = [p for p in excerpt.rglob("*") if p.is_file()]
    body = written.read_text().splitlines()
    assert body[0].startswith("Dumping ") and len(body) == 4  # header, topic, registration, change
    assert any(len(line) > 600 for line in body)
