"""Real Kafka output found in public material (tests/fixtures/logs, sources in SOURCES.md and
fixtures.json): every file parses with no problem, healthy ones raise no finding, and the ones
from incidents flag exactly the checks their lines show."""

from __future__ import annotations

import json

import pytest

from kconform.traces.logs.run import check_paths
from tests.logskit import FIXTURES

MANIFEST = json.loads((FIXTURES / "fixtures.json").read_text())


def test_fixture_manifest_covers_every_file_and_enough_versions() -> None:
    files = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*") if p.is_file()} - {
        "fixtures.json",
        "SOURCES.md",
    }
    assert files == set(MANIFEST)
    assert len(MANIFEST) >= 30
    sources = (FIXTURES / "SOURCES.md").read_text()
    assert all(name in sources for name in MANIFEST)
    versions = {entry["kafka"].split()[0].split("-")[0] for entry in MANIFEST.values()}
    assert len(versions) >= 5, versions


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_fixture(name: str) -> None:
    run = check_paths([FIXTURES / name])
    assert not run.stats.problems, [str(p) for p in run.stats.problems]
    flagged = sorted(c.name for c in run.checks if c.fails)
    assert flagged == sorted(MANIFEST[name]["expect"]), [f.message for c in run.checks for f in c.findings]
