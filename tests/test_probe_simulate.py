"""The simulated correct cluster gives no forbidden anomaly; every planted bug is found by the checker."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.conformance.probe.checker import INVALID, VALID, check_history
from kconform.conformance.probe.simulate import PLANTS, simulate


def _forbidden(path: Path) -> set[str]:
    result = check_history(path)
    return {name for (name, allowed), n in result.findings.counts.items() if n and not allowed}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_correct_simulation_has_no_forbidden_anomaly(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "h.jsonl"
    simulate(path, 1500, seed=seed)
    result = check_history(path)
    assert result.verdict == VALID, [f for f in result.findings.findings() if not f.allowed]
    assert result.stats.acked_judged > 1000
    # the simulation exercises the allowed kinds too: aborted data under read_uncommitted, rebalances
    assert result.findings.count("G1a", allowed=True) > 0
    assert result.findings.count("nonmonotonic-poll", allowed=True) > 0


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_each_planted_bug_is_found(tmp_path: Path, plant: str) -> None:
    path = tmp_path / "h.jsonl"
    simulate(path, 1500, seed=1, plant=plant)
    assert plant in _forbidden(path)
    assert check_history(path).verdict == INVALID


def test_simulation_is_deterministic(tmp_path: Path) -> None:
    simulate(tmp_path / "a.jsonl", 300, seed=5)
    simulate(tmp_path / "b.jsonl", 300, seed=5)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_unvalidated_writer_writes_what_the_reader_accepts(tmp_path: Path) -> None:
    simulate(tmp_path / "a.jsonl", 300, seed=5, validate=False)
    simulate(tmp_path / "b.jsonl", 300, seed=5)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
