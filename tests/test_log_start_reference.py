"""The replication reference moves log start offsets (issue 14 §2): DeleteRecords (KIP-107) on the
leader, retention on any replica within its HW (KAFKA-5634), fetches below a log start answered
OFFSET_OUT_OF_RANGE, a follower below its leader's log start restarting there with its HW
(KAFKA-9491); each judged in lockstep by model.replication, and the two mutants after those bugs
caught while the clean reference passes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kconform.conformance.replication import coverage
from kconform.conformance.replication.scenarios import RESTART_BELOW_LOG_START, run_scenario, zoo
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.runner import LockstepRun
from kconform.impl.replication import mutants as M
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model.config import ReplicationConfig
from kconform.traces import events as ev
from kconform.traces import operations as o

CFG = ReplicationConfig(log_start_moves=True)


@dataclass(frozen=True)
class _Ops:
    ops: tuple[o.Operation, ...]


def _run(ops: tuple[o.Operation, ...], mutants: frozenset[str] = frozenset()) -> LockstepRun:
    return run_scenario(ReferenceCluster(), _Ops(ops), CFG, mutants)


def _events(run: LockstepRun, kind: type[ev.Event]) -> list[ev.Event]:
    return [e for step in run.steps for e in step.events if isinstance(e, kind)]


def _committed(n: int) -> tuple[o.Operation, ...]:
    """``n`` acks=all records replicated to every broker and committed (HW n everywhere)."""
    return (o.Run(1000), *(o.Produce(i + 1, -1) for i in range(n)), o.Run(3000))


def test_delete_records_moves_the_leader_log_start_and_followers_learn_it() -> None:
    run = _run((*_committed(3), o.DeleteRecordsAt(1, 2), o.DeleteRecordsAt(0, 9), o.DeleteRecordsAt(0, 2), o.Run(3000)))
    assert not run.failed, run.steps[-1].findings
    answers = [(e.node, e.error, e.log_start) for e in _events(run, ev.DeleteRecordsHandled)]  # type: ignore[attr-defined]
    assert answers == [(1, ev.NOT_LEADER_OR_FOLLOWER, -1), (0, ev.OFFSET_OUT_OF_RANGE, 0), (0, ev.NONE, 2)]
    assert [b.log.log_start for b in run.adapter.cluster.brokers] == [2, 2, 2]  # type: ignore[attr-defined]
    assert [r.log_start for r in run.judge.state.replicas] == [2, 2, 2]


def test_a_consumer_below_the_log_start_is_out_of_range_and_at_it_is_served() -> None:
    run = _run((*_committed(3), o.DeleteRecordsAt(0, -1), o.Consume(1), o.Run(100), o.Consume(3), o.Run(100)))
    assert not run.failed, run.steps[-1].findings
    fetches = _events(run, ev.ConsumerFetchHandled)
    assert [(e.fetch_offset, e.error) for e in fetches] == [(1, ev.OFFSET_OUT_OF_RANGE), (3, ev.NONE)]  # type: ignore[attr-defined]


def test_retention_stays_within_the_replica_hw_and_past_it_does_nothing() -> None:
    ops = (o.Run(1000), o.Produce(1, 1), o.DeliverTo(0), o.Retention(0, 1), o.Run(3000), o.Retention(2, 1))
    run = _run(ops)
    assert not run.failed, run.steps[-1].findings
    assert [(e.node, e.log_start) for e in _events(run, ev.RetentionApplied)] == [(2, 1)]  # type: ignore[attr-defined]


def test_kafka_5634_mutant_retention_past_the_hw_is_caught() -> None:
    run = _run((o.Run(1000), o.Produce(1, 1), o.DeliverTo(0), o.Retention(0, 1)), frozenset({M.RETENTION_PAST_HW}))
    assert run.failed
    finding = run.steps[-1].findings[0]
    assert (finding.verdict, finding.name) == ("non-conformance", "retention_applied")


def test_restart_below_the_leader_log_start_clean_passes_and_kafka_9491_is_caught() -> None:
    assert RESTART_BELOW_LOG_START in zoo(CFG) and RESTART_BELOW_LOG_START not in zoo(ReplicationConfig())
    clean = run_scenario(ReferenceCluster(), RESTART_BELOW_LOG_START, CFG, frozenset())
    assert not clean.failed, clean.steps[-1].findings
    applied = [e for e in _events(clean, ev.FetchApplied) if e.outcome == "out_of_range"]  # type: ignore[attr-defined]
    assert [(e.node, e.truncated_to, e.hw) for e in applied] == [(2, 2, 2)]  # type: ignore[attr-defined]
    past_hw = run_scenario(ReferenceCluster(), RESTART_BELOW_LOG_START, CFG, frozenset({M.RETENTION_PAST_HW}))
    assert past_hw.failed and past_hw.steps[-1].findings[0].name == "retention_applied"
    buggy = run_scenario(ReferenceCluster(), RESTART_BELOW_LOG_START, CFG, frozenset({M.START_AT_KEEPS_HW}))
    assert buggy.failed
    finding = buggy.steps[-1].findings[0]
    assert (finding.verdict, finding.name) == ("non-conformance", "fetch_applied")
    assert "hw" in finding.message


def test_log_start_outcomes_are_reachable_only_where_log_starts_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """The static rows are added only where the machine draws DeleteRecords and retention (the
    bounded search, seconds per configuration, is stubbed out: it has neither action)."""
    monkeypatch.setattr(coverage, "searched_keys", lambda cfg: frozenset())
    monkeypatch.setattr(coverage, "_cache", {})
    keys = {k for k, _rungs, _why in coverage.LOG_START_REACHABLE}
    assert GATE_CONFIG.log_start_moves and not ReplicationConfig().log_start_moves
    assert keys <= coverage.reachable_keys(CFG)
    assert not {"delete_records_handled:NONE", "retention_applied"} & coverage.reachable_keys(ReplicationConfig())
    assert M.MUTANT_CONFIG[M.RETENTION_PAST_HW] == M.MUTANT_CONFIG[M.START_AT_KEEPS_HW] == {"log_start_moves": True}
