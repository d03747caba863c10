"""IsrShrinkBounded (model.isr_expiration): a running leader proposes an out-of-sync ISR member out
within one isr-expiration period (ReplicaManager: replica.lag.time.max.ms / 2) of it falling out of
sync, and nothing else is demanded: a proposal in flight, a crashed leader, a fresh leadership, a
follower that was at the leader's LEO until recently, or a task that runs more often stay silent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from kconform.conformance.replication import scenarios as rscen
from kconform.conformance.runner import LockstepRun
from kconform.impl.replication import broker as rbroker
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model import invariants as I
from kconform.model import isr_expiration
from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.errors import INELIGIBLE_REPLICA
from kconform.model.state import State
from kconform.traces import events as ev
from tests.modelkit import booted, replicate

CFG = ReplicationConfig()
LAG = CFG.replica_lag_time_max_ms
PERIOD = LAG // 2


def _leader_with_stalled_followers() -> State:
    """Leader 0 of epoch 0 (ISR 0, 1, 2) became leader at 0 ms, appended one record at 0 ms that
    no follower fetched: both followers are out of sync from LAG + 1 ms on."""
    s = replace(booted(CFG), tracks_isr_expiration=True)
    s, _ = R.produce(s, CFG, 0, 1, 7, 1)
    return s


def _late(s: State) -> list[str]:
    return [v.message for v in I.check_state(s, CFG, frozenset({"IsrShrinkBounded"}))]


def test_a_member_kept_past_lag_plus_one_period_fires_and_one_ms_earlier_is_silent() -> None:
    s = _leader_with_stalled_followers()
    deadline = LAG + 1 + PERIOD
    assert sorted((b, f, d) for b, f, d in isr_expiration.shrink_deadlines(R.advance_clock(s, LAG + 1, CFG), CFG)) == [
        (0, 1, deadline),
        (0, 2, deadline),
    ]
    assert _late(R.advance_clock(s, deadline, CFG)) == []
    late = _late(R.advance_clock(s, deadline + 1, CFG))
    assert len(late) == 2 and "leader 0 kept follower 1" in late[0]


def test_a_proposal_in_flight_a_crashed_leader_and_the_model_searches_are_not_judged() -> None:
    s = _leader_with_stalled_followers()
    later = LAG + 1 + PERIOD + 1
    proposed = R.propose_isr(R.advance_clock(s, LAG + 1, CFG), CFG, 0, 99, (0,))
    assert _late(R.advance_clock(proposed, later, CFG)) == []
    assert _late(R.advance_clock(R.crash(s, CFG, 0), later, CFG)) == []
    untracked = replace(s, tracks_isr_expiration=False)
    assert _late(R.advance_clock(untracked, later, CFG)) == []


def test_the_window_starts_when_the_proposal_ends() -> None:
    s = _leader_with_stalled_followers()
    t = LAG + 1
    proposed = R.propose_isr(R.advance_clock(s, t, CFG), CFG, 0, 99, (0,))
    answer = R.advance_clock(proposed, t + 100, CFG)
    refused = R.apply_alter_partition_response(answer, CFG, 0, 99, INELIGIBLE_REPLICA, (), -1)
    assert refused.replica(0).pending_isr is None
    assert _late(R.advance_clock(refused, t + 100 + PERIOD, CFG)) == []
    assert _late(R.advance_clock(refused, t + 100 + PERIOD + 1, CFG)) != []


def test_a_follower_at_the_leaders_leo_falls_out_of_sync_at_the_next_append_only() -> None:
    """isCaughtUp holds while the follower's LEO is the leader's, however old its last caught-up
    time: after 100 s at the LEO, an append starts a fresh window (no alarm at once)."""
    s, _ = R.produce(replace(booted(CFG), tracks_isr_expiration=True), CFG, 0, 1, 7, 1)
    for _ in range(2):
        s = replicate(replicate(s, CFG, 1), CFG, 2)
    t = 100_000
    s, _ = R.produce(R.advance_clock(s, t, CFG), CFG, 0, 2, 8, 1)
    assert [r.left_leo_ms for r in s.replica(0).remotes[1:]] == [t, t]
    assert _late(R.advance_clock(s, t + PERIOD, CFG)) == []
    assert len(_late(R.advance_clock(s, t + PERIOD + 1, CFG))) == 2


def _run() -> LockstepRun:
    return rscen.run_scenario(ReferenceCluster(), rscen.ISR_EXPIRATION, CFG, frozenset())


def _proposals(run: LockstepRun) -> list[tuple[int, tuple[int, ...]]]:
    return [(e.node, e.isr) for step in run.steps for e in step.events if isinstance(e, ev.IsrChangeProposed)]


def _no_timers_after_restart(original: Callable[[Any], None]) -> Callable[[Any], None]:
    def restart(self: Any) -> None:
        self.start_timers = lambda: None
        original(self)
        del self.start_timers

    return restart


def test_the_isr_expiration_scenario_passes_and_the_restarted_leader_shrinks() -> None:
    run = _run()
    assert run.failure is None, run.failure
    assert (1, (1,)) in _proposals(run)


def test_a_leader_whose_timers_did_not_restart_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rbroker.Broker, "restart", _no_timers_after_restart(rbroker.Broker.restart))
    run = _run()
    assert run.failure is not None and run.failure.name == "IsrShrinkBounded", run.failure


def test_a_check_period_shorter_than_kafkas_stays_permitted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rbroker.Broker, "_isr_check_interval_ms", property(lambda self: LAG // 3))
    run = _run()
    assert run.failure is None, run.failure
    assert (1, (1,)) in _proposals(run)
