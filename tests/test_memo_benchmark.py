"""The memo benchmark (ci/benchmarks/memo.py) replays a campaign's memoised checks through a
revision's ``model/guarantees.py`` and this tree's, and prints figures only when both sides give
the same verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.ci.benchmarks import memo
from kconform.model import guarantees

_SOURCE = Path(guarantees.__file__).read_text(encoding="utf-8")

_DOCTORED = """

def _doctored(self, s, cfg, names=None, memo=None):
    return [Violation("Doctored", "every state")]


Registry.check_state = _doctored
"""


@pytest.fixture(scope="module")
def calls() -> list[memo.Call]:
    return memo.record(3)


def test_the_same_source_on_both_sides_gives_figures_and_puts_the_tree_back(calls: list[memo.Call]) -> None:
    here = {name: vars(guarantees.Registry).get(name) for name in memo.METHODS}
    figures = memo.compare(calls, memo.load_before(_SOURCE), rounds=2)
    assert figures.calls == len(calls) > 0 and len(figures.before) == len(figures.after) == 2
    assert {name: vars(guarantees.Registry).get(name) for name in memo.METHODS} == here


def test_sides_whose_verdicts_differ_give_no_figure(calls: list[memo.Call]) -> None:
    here = vars(guarantees.Registry)["check_state"]
    with pytest.raises(ValueError, match="verdicts differ"):
        memo.compare(calls, memo.load_before(_SOURCE + _DOCTORED), rounds=1)
    assert vars(guarantees.Registry)["check_state"] is here


def test_the_command_compares_with_a_git_revision(capsys: pytest.CaptureFixture[str]) -> None:
    assert memo.main(["--against", "HEAD", "--examples", "2", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "alternated replays per side" in out and "this tree / HEAD " in out and "cores, load average" in out
    assert memo.main(["--against", "no-such-revision", "--examples", "2"]) == 2
