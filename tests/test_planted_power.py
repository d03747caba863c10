"""Zoo scenarios from issue 17's hand-planted bugs in the replication and fetch-session slices
(docs/benchmarks.md, "Hand-planted bugs"): small, realistic bugs a Kafka developer makes, planted
one at a time in the reference, that the default gate at the README budget did not find. Each
scenario below kills one with a Kafka-real situation; the clean reference passes it (the near
miss), and a planted copy of the bug (the reference's own function compiled from its source with
the one change, put in place of the real one) is caught with the finding named here.
"""

from __future__ import annotations

import importlib
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kconform.conformance.replication.scenarios import (
    DELETE_RECORDS_BELOW_LOG_START,
    REELECTED_LEADER_RESETS_FOLLOWERS,
    UNDEFINED_EPOCH_ANSWER_KIP_279,
    Scenario,
    run_scenario,
    zoo,
)
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.runner import LockstepRun
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model.config import ReplicationConfig
from kconform.traces import events as ev


def planted(owner: Any, name: str, old: str, new: str) -> Callable[..., Any]:
    """``owner.name`` (a function of a module or a method of a class) with ``old`` replaced by
    ``new`` once in its source, compiled in its module's namespace: a planted copy of a bug."""
    module = importlib.import_module(owner.__module__ if inspect.isclass(owner) else owner.__name__)
    function = getattr(owner, name)
    source = textwrap.dedent(inspect.getsource(function))
    assert source.count(old) == 1, f"{name}: {old!r} is not in its source exactly once"
    namespace: dict[str, Any] = {}
    exec(compile(source.replace(old, new), inspect.getsourcefile(function) or name, "exec"), vars(module), namespace)
    replaced: Callable[..., Any] = namespace[name]
    return replaced


@dataclass(frozen=True)
class Plant:
    """A hand-planted bug, the scenario that catches it and the finding it fails with."""

    scenario: Scenario
    owner: str
    function: str
    old: str
    new: str
    finding: str
    field: str


def _owner(path: str) -> Any:
    module, _, attr = path.partition(":")
    target = importlib.import_module(module)
    return getattr(target, attr) if attr else target


PLANTS: dict[str, Plant] = {
    "undefined-epoch-answer-keeps-leo": Plant(
        UNDEFINED_EPOCH_ANSWER_KIP_279,
        "kconform.impl.replication.fetcher",
        "epoch_answer_truncation",
        "return log.hw, True",
        "return log.leo, True",
        "epoch_query_applied",
        "truncated_to",
    ),
    "delete-records-answers-requested-offset": Plant(
        DELETE_RECORDS_BELOW_LOG_START,
        "kconform.impl.replication.broker:Broker",
        "delete_records",
        "DeleteRecordsHandled(self.broker_id, offset, NONE, log.log_start)",
        "DeleteRecordsHandled(self.broker_id, offset, NONE, target)",
        "delete_records_handled",
        "log_start",
    ),
    "reelected-leader-keeps-follower-state": Plant(
        REELECTED_LEADER_RESETS_FOLLOWERS,
        "kconform.impl.replication.partition:Partition",
        "make_leader",
        "now = self.rt.now_ms\n",
        "now = self.rt.now_ms\n    if self.leading is not None:\n        return\n",
        "alter_partition_applied",
        "hw",
    ),
}


def _run(scenario: Scenario, cfg: ReplicationConfig = GATE_CONFIG) -> LockstepRun:
    return run_scenario(ReferenceCluster(), scenario, cfg, frozenset())


def _events(run: LockstepRun, kind: type[ev.Event]) -> list[Any]:
    return [e for step in run.steps for e in step.events if isinstance(e, kind)]


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_a_planted_bug_is_caught_by_its_scenario(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    plant = PLANTS[name]
    assert plant.scenario in zoo(GATE_CONFIG)
    clean = _run(plant.scenario)
    assert not clean.failed, clean.failure
    owner = _owner(plant.owner)
    monkeypatch.setattr(owner, plant.function, planted(owner, plant.function, plant.old, plant.new))
    buggy = _run(plant.scenario)
    assert buggy.failure is not None
    assert (buggy.failure.verdict, buggy.failure.name) == ("non-conformance", plant.finding)
    assert plant.field in buggy.failure.message


def test_the_clean_runs_do_what_the_scenarios_say() -> None:
    """The undefined answer reaches both followers, which truncate to their HW 1 (dropping record 2
    of epoch 1); DeleteRecords below the log start answers the log start 2; the re-elected leader's
    HW reaches 2 as soon as broker 1 is in the ISR."""
    undefined = _run(UNDEFINED_EPOCH_ANSWER_KIP_279)
    answers = [(e.follower, e.epoch, e.end_offset) for e in _events(undefined, ev.EpochQueryHandled) if e.node == 0]
    assert (1, -1, -1) in answers and (2, -1, -1) in answers
    truncated = [(e.node, e.truncated_to) for e in _events(undefined, ev.EpochQueryApplied) if e.outcome == "truncated"]
    assert (1, 1) in truncated and (2, 1) in truncated
    deleted = _run(DELETE_RECORDS_BELOW_LOG_START)
    assert [(e.offset, e.error, e.log_start) for e in _events(deleted, ev.DeleteRecordsHandled)] == [
        (2, ev.NONE, 2),
        (1, ev.NONE, 2),
        (2, ev.NONE, 2),
        (-1, ev.NONE, 3),
        (0, ev.NONE, 3),
    ]
    reelected = _run(REELECTED_LEADER_RESETS_FOLLOWERS)
    assert [e.broker for e in _events(reelected, ev.BrokerUnfenced) if e.unclean] == [0]
    applied = [(e.isr, e.hw) for e in _events(reelected, ev.AlterPartitionApplied) if e.node == 0]
    assert ((0, 1), 2) in applied


def test_the_scenarios_run_where_their_configuration_does() -> None:
    plain = ReplicationConfig()
    assert DELETE_RECORDS_BELOW_LOG_START not in zoo(plain)  # no log start moves
    assert UNDEFINED_EPOCH_ANSWER_KIP_279.configure(GATE_CONFIG).protocol.value == "kip-279"
    assert REELECTED_LEADER_RESETS_FOLLOWERS.configure(GATE_CONFIG).unclean_leader_election
