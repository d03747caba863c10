"""The part both hand-planted censuses share (ci/mutation/census.py): the score lines they print,
a child's exit code as a verdict, and a plant that cannot be put in place reported as a crash of
the child, never as the gate's verdict."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from kconform.ci.mutation import census
from kconform.ci.mutation.planted import Plant


def _plant(name: str, old: str = "if fetch_offset >= leader_leo:") -> Plant:
    return Plant(
        name, "replication", "kconform.impl.replication.partition:RemoteReplica", "record_fetch", old, old, name
    )


def test_the_score_names_every_counted_plant_not_killed() -> None:
    a, b, c = _plant("a"), _plant("b"), _plant("c")
    out = io.StringIO()
    console = Console(file=out, width=200)
    census.print_score(console, [a, b, c], [b], before="gate fetch: ")
    census.print_score(console, [a], [a], after=" (2 argued)")
    assert out.getvalue().splitlines() == [
        "gate fetch: killed 1 / 3 non-equivalent plants",
        "  not killed: a: a",
        "  not killed: c: c",
        "killed 1 / 1 non-equivalent plants (2 argued)",
    ]
    assert " UTC, " in census.machine() and " cores, load (" in census.machine()


def test_a_plant_that_cannot_be_planted_is_a_crash_not_a_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    broken = _plant("nowhere", old="this text is not in the function")
    assert census.gate_child("hand_planted", broken, ["gate"], "unused") == census.CHILD_CRASHED
    assert capsys.readouterr().err.startswith("hand_planted: nowhere: ValueError: record_fetch:")
    assert census.CHILD_CRASHED not in census.VERDICTS  # shown as "error (exit 3)"
