"""Zoo scenarios from issue 17's hand-planted bugs in the replication and fetch-session slices
(docs/benchmarks.md, "Hand-planted bugs"): small, realistic bugs a Kafka developer makes, planted
one at a time in the reference, that the default gate at the README budget did not find. Each
scenario below kills one with a Kafka-real situation; the clean reference passes it (the near
miss), and a planted copy of the bug (the reference's own function compiled from its source with
the one change, put in place of the real one) is caught with the finding named here.
"""

from __future__ import annotations

from typing import Any

import pytest

from kconform.ci.benchmarks.hand_planted import BY_NAME, PLANTS
from kconform.ci.mutation.planted import owner_of, planted_function
from kconform.ci.mutation.planted import plant as plant_bug
from kconform.conformance.fetch.scenarios import SCENARIOS as FETCH_SCENARIOS
from kconform.conformance.fetch.scenarios import Scenario as FetchScenario
from kconform.conformance.fetch.scenarios import zoo as fetch_zoo
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
from kconform.impl.fetch.cluster import FetchCluster
from kconform.impl.replication.broker import Broker
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model.config import ReplicationConfig
from kconform.model.fetch_config import FetchConfig
from kconform.traces import events as ev
from kconform.traces import operations as o

SCENARIO_OF: dict[str, tuple[Scenario | FetchScenario, str, str]] = {
    "undefined-epoch-answer-keeps-leo": (UNDEFINED_EPOCH_ANSWER_KIP_279, "epoch_query_applied", "truncated_to"),
    "delete-records-answers-requested-offset": (DELETE_RECORDS_BELOW_LOG_START, "delete_records_handled", "log_start"),
    "reelected-leader-keeps-follower-state": (REELECTED_LEADER_RESETS_FOLLOWERS, "alter_partition_applied", "hw"),
    "old-privileged-session-never-evictable": (
        FETCH_SCENARIOS["evict-an-old-privileged-session"],
        "session_fetch_handled",
        "session id",
    ),
}
"""Plant (ci.benchmarks.hand_planted) -> the zoo scenario that catches it, its failing finding and a
word of its message."""


def _run(scenario: Scenario, cfg: ReplicationConfig = GATE_CONFIG) -> LockstepRun:
    return run_scenario(ReferenceCluster(), scenario, cfg, frozenset())


def _events(run: LockstepRun, kind: type[ev.Event]) -> list[Any]:
    return [e for step in run.steps for e in step.events if isinstance(e, kind)]


def _run_any(scenario: Scenario | FetchScenario) -> LockstepRun:
    if isinstance(scenario, FetchScenario):
        assert scenario in fetch_zoo(FetchConfig())
        return run_scenario(FetchCluster(), scenario, FetchConfig(), frozenset())
    assert scenario in zoo(GATE_CONFIG)
    return _run(scenario)


@pytest.mark.parametrize("name", sorted(SCENARIO_OF))
def test_a_planted_bug_is_caught_by_its_scenario(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    plant = BY_NAME[name]
    scenario, finding, word = SCENARIO_OF[name]
    clean = _run_any(scenario)
    assert not clean.failed, clean.failure
    owner = owner_of(plant.owner)
    monkeypatch.setattr(owner, plant.function, planted_function(owner, plant.function, plant.old, plant.new))
    buggy = _run_any(scenario)
    assert buggy.failure is not None
    assert (buggy.failure.verdict, buggy.failure.name) == ("non-conformance", finding)
    assert word in buggy.failure.message


def test_every_plant_applies_once_and_compiles() -> None:
    """Each plant's text is in its function exactly once (else the benchmark would measure nothing)."""
    for plant in PLANTS:
        owner = owner_of(plant.owner)
        assert callable(planted_function(owner, plant.function, plant.old, plant.new)), plant.name
    with pytest.raises(ValueError, match="not once"):
        planted_function(owner_of(PLANTS[0].owner), PLANTS[0].function, "no such text", "")


def test_plant_puts_the_real_function_back() -> None:
    plant = BY_NAME["undefined-epoch-answer-keeps-leo"]
    module = owner_of(plant.owner)
    real = module.epoch_answer_truncation
    unplant = plant_bug(plant)
    try:
        assert module.epoch_answer_truncation is not real
    finally:
        unplant()
    assert module.epoch_answer_truncation is real


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
    sessions = _run_any(FETCH_SCENARIOS["evict-an-old-privileged-session"])
    created = [e for e in _events(sessions, ev.SessionFetchHandled) if e.outcome == "full-new"]
    assert [e.evicted for e in created] == [0, 0, created[0].session_id]  # the old privileged one goes


def test_the_scenarios_run_where_their_configuration_does() -> None:
    plain = ReplicationConfig()
    assert DELETE_RECORDS_BELOW_LOG_START not in zoo(plain)  # no log start moves
    assert UNDEFINED_EPOCH_ANSWER_KIP_279.configure(GATE_CONFIG).protocol.value == "kip-279"
    assert REELECTED_LEADER_RESETS_FOLLOWERS.configure(GATE_CONFIG).unclean_leader_election


RETENTION_AT_HW = Scenario(
    "retention-at-hw",
    "three records committed, retention on leader 0 to 4 (past its HW: nothing), to 3 (its HW), "
    "on follower 1 to 2, and DeleteRecords to 3 on broker 1 (not the leader: answered with an error)",
    3,
    (
        o.Run(1000),
        o.Produce(1, -1),
        o.Produce(2, -1),
        o.Produce(3, -1),
        o.Run(1000),
        o.Retention(0, 4),
        o.Retention(0, 3),
        o.Retention(1, 2),
        o.DeleteRecordsAt(1, 3),
    ),
)


def test_retention_and_delete_records_are_done_as_asked() -> None:
    """Near miss: retention past the HW deletes nothing and reports nothing, and that is no finding;
    retention to the HW and below it moves the log start; DeleteRecords to a follower is answered."""
    run = _run(RETENTION_AT_HW)
    assert not run.failed, run.failure
    assert [(e.node, e.log_start) for e in _events(run, ev.RetentionApplied)] == [(0, 3), (1, 2)]
    assert [(e.node, e.error) for e in _events(run, ev.DeleteRecordsHandled)] == [(1, ev.NOT_LEADER_OR_FOLLOWER)]


@pytest.mark.parametrize(
    ("function", "old", "new", "kind", "word"),
    [
        ("retention", "log.log_start < offset <= bound", "log.log_start < offset < bound", "retention", "log start"),
        (
            "delete_records",
            "if not self.partition.is_leader:\n",
            "if not self.partition.is_leader:\n        return\n",
            "delete_records_at",
            "answered 0 times",
        ),
    ],
    ids=["retention-stops-below-hw", "delete-records-unanswered"],
)
def test_an_operation_skipped_silently_is_caught(
    function: str, old: str, new: str, kind: str, word: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Broker, function, planted_function(Broker, function, old, new))
    run = _run(RETENTION_AT_HW)
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == ("non-conformance", kind)
    assert word in run.failure.message
