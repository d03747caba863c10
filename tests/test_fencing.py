"""CrashedBrokerFenced (model.fencing): a crashed broker is fenced within broker.session.timeout.ms
plus the slack of a periodic check; the bound firing one millisecond late and silent at it, after
a restart, once fenced and where it is not tracked; a reference controller that never expires
sessions is caught by the gate's zoo."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.conformance.replication import scenarios as rscen
from kconform.impl import ReferenceCluster
from kconform.impl.replication import controller as rcontroller
from kconform.model import fencing
from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.state import State
from kconform.traces import events as ev
from tests.modelkit import booted

CFG = ReplicationConfig()
BOUND = fencing.BROKER_SESSION_TIMEOUT_MS + fencing.FENCE_SLACK_MS


def _crashed_at(t: int, tracked: bool = True) -> State:
    s = replace(booted(CFG), tracks_fencing=tracked)
    s = R.advance_clock(s, t, CFG)
    return R.crash(s, CFG, 2)


def _late(s: State) -> tuple[str, ...]:
    return fencing.late_fences(s)


def test_a_crashed_broker_unfenced_past_the_session_bound_fires_and_at_it_is_silent() -> None:
    s = _crashed_at(500)
    assert s.replica(2).crashed_ms == 500
    assert _late(R.advance_clock(s, 500 + BOUND, CFG)) == ()
    late = R.advance_clock(s, 500 + BOUND + 1, CFG)
    assert len(late.ghost.late_fences) == 1 and "broker 2" in late.ghost.late_fences[0]


def test_a_restart_a_fence_or_an_untracked_state_owe_nothing() -> None:
    s = _crashed_at(500)
    restarted = R.restart(s, CFG, 2)
    assert restarted.replica(2).crashed_ms is None
    assert _late(R.advance_clock(restarted, 500 + BOUND + 1, CFG)) == ()
    fenced, _ = R.controller_fence(s, CFG, 2)
    assert _late(R.advance_clock(fenced, 500 + BOUND + 1, CFG)) == ()
    untracked = _crashed_at(500, tracked=False)
    assert _late(R.advance_clock(untracked, 500 + BOUND + 1, CFG)) == ()


def test_the_reference_fences_in_time_and_a_controller_that_never_expires_sessions_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clean = rscen.run_scenario(ReferenceCluster(), rscen.LEADER_CRASH_FENCED, CFG, frozenset())
    assert clean.failure is None, clean.failure
    fences = [e for step in clean.steps for e in step.events if isinstance(e, ev.BrokerFenced)]
    assert [e.broker for e in fences][-1:] == [0]
    monkeypatch.setattr(rcontroller.Controller, "expire_sessions", lambda self: None)
    planted = rscen.run_scenario(ReferenceCluster(), rscen.LEADER_CRASH_FENCED, CFG, frozenset())
    assert planted.failure is not None and planted.failure.name == "CrashedBrokerFenced", planted.failure
