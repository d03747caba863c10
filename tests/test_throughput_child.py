"""The throughput benchmark's child measures what it is asked or refuses (ci/benchmarks/throughput.py).

A revision whose ``run_campaign`` lacks an argument asked for (the walk engine before 2026-11-27) must
fail naming it, never measure a different campaign; ``--random-only`` runs no zoo on every side."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.ci.benchmarks import throughput
from kconform.ci.benchmarks.child import ChildFailed

_OLD_HUNT = """
import json
def run_campaign(adapter_factory, cfg, mutants, *, seed, examples=None, steps=50, zoo=True):
    from kconform.conformance.judge import LockstepJudge
    for _ in range(7 if zoo else 0):  # a zoo scenario's events: judged, not in the machine's log
        LockstepJudge().observe(None)
    operations = examples * steps
    class Log:
        runs, steps, actions = examples, operations, {"tick": 3 * examples if zoo else examples}
    class Result:
        log, seconds, passed = Log(), 0.5, True
    return Result()
"""


def _old_tree(root: Path) -> Path:
    """A package tree whose run_campaign has ``zoo`` but no ``engine`` (like c2114f8's)."""
    for folder, name, text in (
        ("conformance", "hunt.py", _OLD_HUNT),
        ("model", "configs.py", "def config_from_json(x):\n    return x\n"),
        ("traces", "replay.py", "def make_adapter(kind, cfg):\n    return None\n"),
        ("conformance", "judge.py", "class LockstepJudge:\n    def observe(self, event):\n        return []\n"),
    ):
        (root / "kconform" / folder).mkdir(parents=True, exist_ok=True)
        (root / "kconform" / folder / "__init__.py").write_text("")  # a regular package shadows the installed one
        (root / "kconform" / folder / name).write_text(text)
    return root


def test_an_engine_the_revision_lacks_is_refused_by_name(tmp_path: Path) -> None:
    tree = _old_tree(tmp_path)
    asked = "so it cannot run what was asked: the walk engine"
    with pytest.raises(ChildFailed, match=f"takes no 'engine' argument, {asked}, with its zoo"):
        throughput._child(tree, "replication", 2, 5, "walk", zoo=True)


def test_every_argument_the_revision_lacks_is_named(tmp_path: Path) -> None:
    tree = _old_tree(tmp_path)
    hunt = tree / "kconform" / "conformance" / "hunt.py"
    hunt.write_text(hunt.read_text().replace("steps=50, zoo=True):", "steps=50):\n    zoo = True"))  # no zoo argument
    asked = "so it cannot run what was asked: the walk engine, random search only \\(no zoo\\)"
    with pytest.raises(ChildFailed, match=f"takes no 'engine' or 'zoo' argument, {asked}"):
        throughput._child(tree, "replication", 2, 5, "walk", zoo=False)
    with_zoo = throughput._child(tree, "replication", 4, 5, "hypothesis", zoo=True)  # the near miss: none lacking
    assert with_zoo["judged"] == 7


def test_random_only_asks_every_side_for_no_zoo(tmp_path: Path) -> None:
    tree = _old_tree(tmp_path)
    with_zoo = throughput._child(tree, "replication", 4, 5, "hypothesis", zoo=True)
    without = throughput._child(tree, "replication", 4, 5, "hypothesis", zoo=False)
    assert (with_zoo["events"], without["events"]) == (12, 4)
    assert (with_zoo["judged"], without["judged"]) == (7, 0)  # the zoo's judged events, counted apart
    assert with_zoo["steps"] == without["steps"] == 20
