"""Helpers for the log-input tests: parse text as a file, run checks over it."""

from __future__ import annotations

from pathlib import Path

from kconform.traces.logs.checks import Check
from kconform.traces.logs.observations import Obs
from kconform.traces.logs.parse import ParseStats, parse_paths
from kconform.traces.logs.run import check_observations

FIXTURES = Path(__file__).parent / "fixtures" / "logs"


def parse_text(tmp_path: Path, text: str, name: str = "input.log") -> tuple[list[Obs], ParseStats]:
    """The observations of ``text`` written to ``tmp_path/name``."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stats = ParseStats()
    return list(parse_paths([path], stats)), stats


def check_text(tmp_path: Path, text: str, check: str, name: str = "input.log") -> Check:
    """The named check after running over ``text`` (the parse must have no problem)."""
    observations, stats = parse_text(tmp_path, text, name)
    assert not stats.problems, stats.problems
    (result,) = check_observations(observations, only=[check])
    return result
