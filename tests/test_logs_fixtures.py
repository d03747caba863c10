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


# What the real fixtures added for the header layouts and the KRaft controller show: the lines are read as
# records of their logger (not counted as "(no log record)") and the facts they carry become observations.
LAYOUTS = {
    # the KRaft controller's own decisions (ReplicationControlManager 'Replayed PartitionRecord'): source in
    # fixtures.json / SOURCES.md (search index file id 67040933795)
    "state-change-3.6.2-kraft-controller-replayed-records.log": (
        {"partition_state": 19},
        "o.a.k.c.ReplicationControlManager",
    ),
    "server-0.11-spark-layout-embedded.log": ({"leader_start": 1}, "log.Log"),  # Spark's yy/MM/dd layout behind '>>>'
    "server-3.6-kraft-migration-driver-trace.log": ({}, "org.apache.kafka.metadata.migration.KRaftMigrationDriver"),
    "server-3.x-strimzi-kraft-quorum-class-line-layout.log": ({}, "NetworkClient"),  # %C{1}:%L - %m
    "client-2.x-spring-sleuth-incremental-fetch.log": ({"fetch_session": 1}, "o.a.k.c.consumer.internals.Fetcher"),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_real_layouts_are_read_as_records(name: str) -> None:
    observations, logger = LAYOUTS[name]
    run = check_paths([FIXTURES / name])
    assert dict(run.stats.observations) == observations
    assert logger in run.stats.unknown, dict(run.stats.unknown)
    assert not any(c.findings for c in run.checks)
