"""Planted ground truth for the broker-log checks: the replication reference cluster prints its run
as Kafka 3.x prints server.log / state-change.log lines (impl.replication.serverlog); over the
slice's scenarios and fixed random seeds, for the clean cluster and every replication mutant,
``kconform logs check`` on that text raises nothing the structured oracle does not confirm
(traces.logs.groundtruth_replication), nothing on clean runs, and finds the mutant whose effect the
lines show (kip-101-truncation: the follower keeps records past its own epoch's start, KIP-279)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.conformance.replication.scenarios import SCENARIOS
from kconform.impl.mutants import mutants_of
from kconform.impl.replication import mutants as m
from kconform.model.config import ReplicationConfig
from kconform.traces.logs.groundtruth_replication import ORACLE_CHECKS, ReplicationRun, run, run_ops
from kconform.traces.logs.run import check_paths

SEEDS = range(2)
STEPS = 2000
VISIBLE = {m.KIP_101_TRUNCATION: ("fast-failover", "truncation-agrees-with-epoch-cache")}
"""The mutants whose effect the printed lines show: (the scenario that plants it, the check that finds it)."""


def _flagged(tmp_path: Path, planted: ReplicationRun, label: str) -> set[str]:
    root = tmp_path / label
    for name, text in planted.files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    result = check_paths([root])
    assert not result.stats.problems, result.stats.problems[:3]
    return {c.name for c in result.checks if c.fails}


@pytest.mark.parametrize("mutant", [None, *mutants_of("replication")])
def test_log_checks_raise_only_what_the_oracle_confirms(tmp_path: Path, mutant: str | None) -> None:
    mutants = (mutant,) if mutant else ()
    seen: set[str] = set()
    runs = [(f"seed-{s}", run(s, mutants, steps=STEPS)) for s in SEEDS]
    for name, scenario in SCENARIOS.items():
        cfg = ReplicationConfig(replicas=max(3, scenario.min_replicas))
        runs.append((name, run_ops(scenario.ops, mutants, cfg)))
    for label, planted in runs:
        flagged = _flagged(tmp_path, planted, label)
        assert flagged <= set(planted.expected), (mutant, label, flagged, planted.expected)  # no false alarm
        if mutant is None:
            assert not flagged and not planted.expected, label  # clean runs: nothing
        seen |= flagged
        if mutant in VISIBLE and label == VISIBLE[mutant][0]:
            assert VISIBLE[mutant][1] in flagged, label  # the planted anomaly reached the log and was found
    if mutant not in VISIBLE:
        assert not seen & set(ORACLE_CHECKS)


def test_printed_lines_are_kafka_3x_lines(tmp_path: Path) -> None:
    """The clean fast failover prints leader and follower starts, ISR changes and truncations that the
    parsers read as such (no unknown broker line of these kinds), and the checks judge them."""
    planted = run_ops(SCENARIOS["fast-failover"].ops, (), ReplicationConfig())
    text = "".join(planted.files.values())
    assert (
        "] Leader replicated-0 with topic id Some(" in text and "] Follower replicated-0 starts at leader epoch" in text
    )
    assert "Truncating partition replicated-0 with TruncationState(offset=" in text
    root = tmp_path / "clean"
    for name, body in planted.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
    result = check_paths([root])
    assert {"leader_start", "follower_start", "truncation"} <= set(result.stats.observations)
    judged = {c.name for c in result.checks if c.judged}
    assert {"one-leader-per-leader-epoch", "hw-le-leo", "truncation-agrees-with-epoch-cache"} <= judged
    assert not any(c.fails for c in result.checks)
