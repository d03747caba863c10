"""Delayed fetch and the purgatory (issue 15 §2): the model's parking and completion rules, the
invariants firing and their near misses, the reference conforming, and each delayed-fetch mutant
caught by the zoo's delayed-fetch scenario."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kconform.conformance.replication.lockstep import Judge
from kconform.conformance.replication.scenarios import DELAYED_FETCH, run_scenario, zoo
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.impl.replication import mutants as M
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model import invariants as I
from kconform.model import purgatory
from kconform.model import replication as R
from kconform.model.config import ConfigError, ReplicationConfig
from kconform.model.errors import FENCED_LEADER_EPOCH, NONE
from kconform.model.replication import NotEnabled
from kconform.model.state import DelayedFetch, State
from kconform.traces import events as ev
from tests.modelkit import booted, replicate

CFG = ReplicationConfig(replica_fetch_wait_max_ms=500, fetch_max_wait_ms=500, fetch_min_bytes=2)


def _tracked() -> State:
    """Leader 0, followers caught up, the judge's obligation tracking on."""
    return replace(booted(CFG), tracks_purgatory=True)


def _violations(s: State, name: str) -> list[I.Violation]:
    return [v for v in I.check_state(s, CFG, frozenset({name})) if not v.allowed]


def test_consumer_fetch_waits_at_the_hw_and_is_answered_at_once_with_enough_records() -> None:
    s = _tracked()
    parked, out, waits = R.consumer_fetch_wait(s, CFG, 0, 11, 0, 0, 1, 500)
    assert waits and out.entries == () and parked.replica(0).fetches[0].deadline_ms == s.now_ms + 500
    s2, _ = R.produce(s, CFG, 0, 12, 1, 1)
    for _ in range(2):
        s2 = replicate(replicate(s2, CFG, 1), CFG, 2)
    assert s2.replica(0).hw == 1
    _, out, waits = R.consumer_fetch_wait(s2, CFG, 0, 13, 0, 0, 1, 500)
    assert not waits and [e.rid for e in out.entries] == [1]
    _, out, waits = R.consumer_fetch_wait(s2, CFG, 0, 14, 0, 0, 1, 0)  # maxWaitMs 0: never waits
    assert not waits


def test_a_parked_fetch_completes_on_an_hw_advance_not_on_an_append_alone() -> None:
    s, _out, _ = R.consumer_fetch_wait(_tracked(), CFG, 0, 11, 0, 0, 1, 500)
    s, _ = R.produce(s, CFG, 0, 12, 1, 1)  # LEO 1, HW 0: the consumer's bound did not move
    assert s.replica(0).due == ()
    with pytest.raises(NotEnabled, match="0 of 1 records"):
        R.complete_fetch(s, CFG, 0, 11)  # early return (KAFKA-3159's symptom)
    for _ in range(2):
        s = replicate(replicate(s, CFG, 1), CFG, 2)
    assert s.replica(0).hw == 1 and 11 in s.replica(0).due  # the HW advance triggered it
    done, out = R.complete_fetch(s, CFG, 0, 11)
    assert isinstance(out, R.ConsumerFetchOutcome) and [e.rid for e in out.entries] == [1]
    assert done.replica(0).purgatory == () and done.replica(0).due == ()


def test_a_parked_fetch_reads_within_the_hw_at_completion_time() -> None:
    s, _out, _ = R.consumer_fetch_wait(_tracked(), CFG, 0, 11, 0, 0, 1, 500)
    s, _ = R.produce(s, CFG, 0, 12, 1, 1)
    s, _ = R.produce(s, CFG, 0, 13, 2, 1)  # LEO 2
    s = replicate(replicate(s, CFG, 1), CFG, 2)
    s = replicate(replicate(s, CFG, 1), CFG, 2)
    r = s.replica(0)
    assert r.leo == 2
    _, out = R.complete_fetch(s, CFG, 0, 11)
    assert isinstance(out, R.ConsumerFetchOutcome)
    assert all(e.offset < r.hw for e in out.entries) and len(out.entries) == r.hw


def test_leadership_loss_completes_a_parked_fetch_with_the_fencing_error() -> None:
    s, _out, _ = R.consumer_fetch_wait(_tracked(), CFG, 0, 11, 0, 0, 1, 5000)
    s, election = R.controller_move_leader(s, CFG, 1)
    s, outcome = R.apply_metadata(s, CFG, 0, election.record)
    assert outcome.outcome == "become_follower" and 11 in s.replica(0).due
    _, out = R.complete_fetch(s, CFG, 0, 11)
    assert isinstance(out, R.ConsumerFetchOutcome) and out.error == FENCED_LEADER_EPOCH


def test_a_parked_fetch_may_time_out_with_what_is_there() -> None:
    s, _out, _ = R.consumer_fetch_wait(_tracked(), CFG, 0, 11, 0, 0, 2, 500)
    with pytest.raises(NotEnabled):
        R.complete_fetch(R.advance_clock(s, 499), CFG, 0, 11)
    late = R.advance_clock(s, 500)
    assert 11 in late.replica(0).due
    _, out = R.complete_fetch(late, CFG, 0, 11)
    assert isinstance(out, R.ConsumerFetchOutcome) and out.error == NONE and out.entries == ()


def test_purgatory_deadlines_fires_past_the_deadline_and_not_at_it() -> None:
    s, _out, _ = R.consumer_fetch_wait(_tracked(), CFG, 0, 11, 0, 0, 1, 500)
    assert _violations(replace(s, now_ms=500), "PurgatoryDeadlines") == []
    assert _violations(replace(s, now_ms=501), "PurgatoryDeadlines")


def test_delayed_triggers_honoured_fires_when_time_moves_past_an_untaken_completion() -> None:
    s, _out, _ = R.consumer_fetch_wait(_tracked(), CFG, 0, 11, 0, 0, 1, 500)
    s, _ = R.produce(s, CFG, 0, 12, 1, 1)
    for _ in range(2):
        s = replicate(replicate(s, CFG, 1), CFG, 2)
    honoured, _ = R.complete_fetch(s, CFG, 0, 11)
    assert _violations(R.advance_clock(honoured, s.now_ms + 10), "DelayedTriggersHonoured") == []
    ignored = R.advance_clock(s, s.now_ms + 10)
    found = _violations(ignored, "DelayedTriggersHonoured")
    assert found and "delayed fetch 11" in found[0].message


def test_obligations_are_not_tracked_by_the_model_searches() -> None:
    s, _out, _ = R.consumer_fetch_wait(booted(CFG), CFG, 0, 11, 0, 0, 1, 500)
    s, _ = R.produce(s, CFG, 0, 12, 1, 1)
    for _ in range(2):
        s = replicate(replicate(s, CFG, 1), CFG, 2)
    assert s.replica(0).due == () and R.advance_clock(s, 10_000).ghost.overdue == ()


def test_fetch_ready_follows_delayed_fetch_try_complete() -> None:
    s = _tracked()
    s, _ = R.produce(s, CFG, 0, 12, 1, 1)  # LEO 1, HW 0
    follower = s.replica(0).fetches  # none yet
    assert follower == ()
    df = DelayedFetch(20, 1, 0, 0, -1, 0, 1, 500)
    assert purgatory.fetch_ready(s, CFG, 0, df)  # a follower counts to the LEO
    consumer = replace(df, replica=-1)
    assert not purgatory.fetch_ready(s, CFG, 0, consumer)  # a consumer only to the HW
    assert purgatory.fetch_ready(s, CFG, 0, replace(consumer, current_leader_epoch=-1, start_offset=5))  # case F


def test_follower_fetches_park_and_the_judge_wants_them_parked() -> None:
    cfg = replace(CFG, fetch_max_wait_ms=0)
    cluster = ReferenceCluster()
    judge = Judge(cfg)
    findings = judge.judge_all(cluster.reset(cfg, 1, frozenset()))
    from kconform.traces import operations as o

    for op in (o.Run(1000), o.Produce(1, 1), o.Run(1000)):
        findings += judge.judge_all(cluster.apply(op))
    cluster.close()
    assert [f for f in findings if f.failing] == []
    assert judge.covered["fetch_parked"] > 0 and judge.covered["fetch_completed:NONE"] > 0


def test_the_model_refuses_an_immediate_answer_that_should_have_waited() -> None:
    judge = Judge(CFG)
    judge.state = _tracked()
    q = R.fetch_request(judge.state, CFG, 1)
    judge.observe(ev.FetchSent(1, 50, q.leader, q.fetch_offset, q.last_fetched_epoch, q.current_leader_epoch, 0))
    r = judge.state.replica(0)
    found = judge.observe(ev.FetchHandled(0, 50, 1, NONE, (), r.hw, -1, -1, r.leo, r.hw))
    assert found and found[0].failing and "parks it" in found[0].message


def test_config_keys_are_written_only_when_set_and_validated() -> None:
    assert "replica_fetch_wait_max_ms" not in ReplicationConfig().to_json()
    assert ReplicationConfig.from_json(CFG.to_json()) == CFG
    with pytest.raises(ConfigError, match="replica_fetch_wait_max_ms"):
        ReplicationConfig(replica_fetch_wait_max_ms=30_000)
    with pytest.raises(ConfigError, match="fetch_min_bytes"):
        ReplicationConfig(fetch_min_bytes=0)


def test_the_zoo_runs_the_delayed_fetch_scenario_only_with_waiting_consumers() -> None:
    assert DELAYED_FETCH in zoo(GATE_CONFIG) and DELAYED_FETCH not in zoo(ReplicationConfig())


def test_the_reference_conforms_on_the_delayed_fetch_scenario() -> None:
    run = run_scenario(ReferenceCluster(), DELAYED_FETCH, GATE_CONFIG, frozenset())
    assert run.failure is None
    covered = run.judge.covered
    for key in ("consumer_fetch_wait_handled:parked", "consumer_fetch_completed:NONE", "fetch_parked"):
        assert covered[key] > 0, key
    assert covered["consumer_fetch_completed:FENCED_LEADER_EPOCH"] + covered["fetch_completed:FENCED_LEADER_EPOCH"] > 0


@pytest.mark.parametrize(
    ("mutant", "verdict", "name"),
    [
        (M.DELAYED_FETCH_MISSES_HW, "invariant-violation", "DelayedTriggersHonoured"),
        (M.DELAYED_FETCH_EARLY_RETURN, "non-conformance", "consumer_fetch_completed"),
        (M.DELAYED_FETCH_READS_LEO, "non-conformance", "consumer_fetch_completed"),
        (M.DELAYED_FETCH_SURVIVES_LEADER_CHANGE, "invariant-violation", "DelayedTriggersHonoured"),
    ],
)
def test_each_delayed_fetch_mutant_is_caught_by_the_scenario(mutant: str, verdict: str, name: str) -> None:
    cfg = replace(GATE_CONFIG, **M.MUTANT_CONFIG[mutant])  # type: ignore[arg-type]
    run = run_scenario(ReferenceCluster(), DELAYED_FETCH, cfg, frozenset({mutant}))
    assert run.failure is not None and (run.failure.verdict, run.failure.name) == (verdict, name)


def test_the_miner_refuses_a_corpus_with_waiting_fetches_and_the_oracle_judges_it(tmp_path: Path) -> None:
    from kconform.ci import cli
    from kconform.ci.exitcodes import EXIT_ERROR
    from kconform.traces.corpus import read_manifest
    from kconform.traces.generate import Plan, generate
    from kconform.traces.oracle import run_oracle

    root = tmp_path / "c"
    generate(root, Plan(events=200, seed=3, trace_events=100, config=GATE_CONFIG))
    assert cli.main(["mine", str(root), "--engine", "duckdb", "--out", str(tmp_path / "o")]) == EXIT_ERROR
    result = run_oracle(root, read_manifest(root))
    assert result.verdicts and result.flagged == frozenset() and not result.read.errors
