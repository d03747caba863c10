"""Replication progress conditioned on delivery (conformance.replication.liveness): RequestAnswered and
FollowerStartsFetching fire on a planted bug that stops progress on a healthy network, and stay
silent whenever the network, a crash, a cut, a drop or a leader change could explain the silence.

The bookkeeping is tested on model states (every way an obligation is forgotten or never opened);
the reference cluster then runs each planted bug (ci.benchmarks.hand_planted) into the check, and the
clean reference through the same operations, and the bug through near misses: too little healthy
time, time under Advance, a cut, a drop, a crash, a leader change.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kconform.ci.benchmarks.hand_planted import BY_NAME
from kconform.ci.gate import counterexample_of
from kconform.ci.mutation.planted import owner_of, planted_function
from kconform.conformance.replication.liveness import CONSUMER, DELIVERY_SLACK_MS, METADATA_BOUND_MS, Progress
from kconform.conformance.replication.lockstep import judge_events
from kconform.conformance.replication.scenarios import RESTART_BELOW_LOG_START, Scenario, run_scenario
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.runner import LockstepRun
from kconform.impl.mutants import config_for
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.errors import OFFSET_OUT_OF_RANGE
from kconform.model.state import State
from kconform.traces import events as ev
from kconform.traces import operations as o
from kconform.traces.counterexample import read_counterexample, write_counterexample
from kconform.traces.replay import replay
from tests.modelkit import booted

CFG = ReplicationConfig()
BOUND = DELIVERY_SLACK_MS  # the default configuration waits nowhere


def _at(s: State, ms: int) -> State:
    return replace(s, now_ms=ms)


def _healthy(p: Progress, s: State, ms: int) -> list[tuple[str, str]]:
    """A Run from ``s``'s clock for ``ms``: what ``late`` reports at its end."""
    p.operation(o.Run(ms), s.now_ms)
    return p.late(s.now_ms + ms)


def _owed_fetch(s: State | None = None) -> tuple[Progress, State]:
    s = s or booted(CFG)
    p = Progress(CFG)
    p.controller_changed(s)  # boot's record, which every broker applied: nothing owed
    p.operation(o.Produce(1, 1), s.now_ms)
    p.request_sent(s, "Fetch", 7, 1, 0, 0)
    return p, s


# --------------------------------------------------------------------------------------------
# RequestAnswered on model states


def test_an_unanswered_request_is_reported_once_past_its_bound_of_healthy_time() -> None:
    p, s = _owed_fetch()
    assert p.follows == {} and set(p.answers) == {7}
    assert _healthy(p, s, BOUND) == []  # at the bound: still within it
    late = _healthy(p, _at(s, BOUND), 1)
    assert [name for name, _ in late] == ["RequestAnswered"]
    assert "Fetch 7 that broker 1 sent to running broker 0" in late[0][1]
    assert _healthy(p, _at(s, BOUND + 1), 10_000) == []  # reported once


def test_the_bound_is_the_longest_fetch_wait_plus_the_slack() -> None:
    assert Progress(GATE_CONFIG).answer_bound_ms == 500 + DELIVERY_SLACK_MS
    assert Progress(CFG).answer_bound_ms == DELIVERY_SLACK_MS


def test_an_answer_applied_discharges_it() -> None:
    p, s = _owed_fetch()
    p.answered(7)
    assert _healthy(p, s, 10 * BOUND) == []


def test_time_under_advance_or_outside_a_run_never_counts() -> None:
    p, s = _owed_fetch()
    for op in (o.Advance(60_000), o.Settle(5), o.DeliverTo(0), o.Duplicate(0), o.Deliver(0)):
        p.operation(op, s.now_ms)
        s = _at(s, s.now_ms + (60_000 if isinstance(op, o.Advance) else 0))
        assert p.late(s.now_ms) == []
    assert _healthy(p, s, BOUND) == []  # only the Run's time counts: BOUND, not past it
    assert set(p.answers) == {7}


def test_a_request_sent_during_a_run_counts_from_its_send() -> None:
    s = booted(CFG)
    p = Progress(CFG)
    p.operation(o.Run(3_000), 0)
    p.request_sent(_at(s, 1_500), "Fetch", 7, 1, 0, 0)
    assert p.late(3_000) == []  # 1.5 s of it healthy
    assert _healthy(p, _at(s, 3_000), 501) != []


@pytest.mark.parametrize(
    "op", [o.Crash(2), o.Restart(2), o.Isolate(2), o.Drop(0), o.MoveLeader(1), o.ModelAction("x")], ids=str
)
def test_an_operation_that_may_lose_a_message_or_move_leadership_forgets_what_is_owed(op: o.Operation) -> None:
    p, s = _owed_fetch()
    p.operation(op, s.now_ms)
    assert p.answers == {}
    assert _healthy(p, s, 10 * BOUND) == []


def test_nothing_is_owed_while_a_cut_is_in_place_until_the_heal() -> None:
    p, s = _owed_fetch()
    p.operation(o.Isolate(2), s.now_ms)
    p.request_sent(s, "Fetch", 8, 1, 0, 0)
    assert p.answers == {}
    assert _healthy(p, s, 10 * BOUND) == []  # a Run under a cut is not healthy either
    p.operation(o.Heal(), s.now_ms)
    p.request_sent(s, "Fetch", 9, 1, 0, 0)
    assert set(p.answers) == {9}


def test_a_newer_request_of_the_same_sender_supersedes_the_older() -> None:
    p, s = _owed_fetch()
    p.request_sent(s, "Fetch", 8, 2, 0, 0)
    p.request_sent(s, "OffsetsForLeaderEpoch", 9, 1, 0, 0)
    assert set(p.answers) == {8, 9}
    p.request_sent(s, "the follower-fetching consumer's Fetch", 10, CONSUMER, 2, -1)
    p.request_sent(s, "the follower-fetching consumer's Fetch", 11, CONSUMER, 1, -1)
    assert set(p.answers) == {8, 9, 11}


def test_new_leadership_at_either_end_or_a_fenced_end_forgets_its_requests() -> None:
    p, s = _owed_fetch()
    p.request_sent(s, "Fetch", 8, 2, 0, 0)
    p.leadership_applied(2)
    assert set(p.answers) == {7}
    p.controller_changed(s, fenced=1)
    assert p.answers == {}


def test_a_request_to_or_from_a_broker_down_or_to_itself_is_owed_nothing() -> None:
    s = R.crash(booted(CFG), CFG, 0)
    p = Progress(CFG)
    p.request_sent(s, "Fetch", 7, 1, 0, 0)
    p.request_sent(s, "Fetch", 8, 0, 1, 0)
    p.request_sent(s, "the follower-fetching consumer's Fetch", 9, CONSUMER, 0, -1)
    p.request_sent(booted(CFG), "Fetch", 10, 1, 1, 0)
    assert p.answers == {}


# --------------------------------------------------------------------------------------------
# FollowerStartsFetching on model states


def _moved(s: State | None = None) -> tuple[Progress, State]:
    """Broker 1 is elected in epoch 1 over a booted cluster: who owes it a first request."""
    s = s or booted(CFG)
    p = Progress(CFG)
    p.controller_changed(s)
    moved, _ = R.controller_move_leader(s, CFG, 1)
    p.controller_changed(moved)
    return p, moved


def test_every_running_registered_broker_but_the_leader_owes_the_new_leader_a_first_request() -> None:
    p, s = _moved()
    assert {b: (f.dst, f.epoch) for b, f in p.follows.items()} == {0: (1, 1), 2: (1, 1)}
    p.request_sent(s, "Fetch", 20, 2, 1, 1)
    p.request_sent(s, "Fetch", 21, 0, 0, 0)  # to the old leader in the old epoch: not the one owed
    p.answered(20)
    p.answered(21)
    assert _healthy(p, s, METADATA_BOUND_MS) == []
    late = _healthy(p, _at(s, METADATA_BOUND_MS), 1)
    assert [name for name, _ in late] == ["FollowerStartsFetching"]
    assert "broker 0, running and registered, made a follower of running broker 1 in leader epoch 1" in late[0][1]


def test_a_broker_down_unregistered_or_fenced_or_a_leader_down_owes_no_first_request() -> None:
    s = booted(CFG)
    p, _ = _moved(R.crash(s, CFG, 2))
    assert set(p.follows) == {0}
    p, _ = _moved(replace(s, fenced=frozenset({0})))
    assert set(p.follows) == {2}
    p, moved = _moved()
    p.controller_changed(R.crash(moved, CFG, 1))  # same record, its leader down: nothing new
    p2 = Progress(CFG)
    p2.controller_changed(R.crash(moved, CFG, 1))
    assert p2.follows == {}


def test_a_broker_registering_owes_a_first_request_only_when_its_view_is_older() -> None:
    s = booted(CFG)
    p = Progress(CFG)
    p.controller_changed(s)
    p.controller_changed(s, unfenced=2)  # it applied epoch 0 already
    assert p.follows == {}
    restarted = R.restart(R.crash(s, CFG, 2), CFG, 2)
    fenced, _ = R.controller_fence(restarted, CFG, 2)
    registered, _ = R.controller_unfence(fenced, CFG, 2)
    p.controller_changed(registered, unfenced=2)
    assert {b: (f.dst, f.epoch) for b, f in p.follows.items()} == {2: (0, 0)}


def test_a_later_leader_change_or_a_fence_forgets_the_first_requests_owed() -> None:
    p, s = _moved()
    p.controller_changed(s, fenced=0)
    assert set(p.follows) == {2}
    again, _ = R.controller_move_leader(s, CFG, 2)
    p.controller_changed(again)
    assert {b: f.epoch for b, f in p.follows.items()} == {0: 2, 1: 2}


# --------------------------------------------------------------------------------------------
# The reference cluster: each planted bug is caught; the clean reference and the near misses are silent

READ = (o.Run(1_000), o.Produce(1, -1), o.Run(1_000), o.ConsumeReplica())
"""A record written and replicated, then the follower-fetching consumer's Fetch."""


def _run(ops: tuple[o.Operation, ...], cfg: ReplicationConfig) -> LockstepRun:
    return run_scenario(ReferenceCluster(), Scenario("liveness", "", 3, ops), cfg, frozenset())


def _plant(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    p = BY_NAME[name]
    owner = owner_of(p.owner)
    monkeypatch.setattr(owner, p.function, planted_function(owner, p.function, p.old, p.new))


def _applied(run: LockstepRun) -> list[ev.ReplicaFetchApplied]:
    return [e for step in run.steps for e in step.events if isinstance(e, ev.ReplicaFetchApplied)]


def test_the_clean_reference_answers_the_follower_fetching_consumer_within_the_bound() -> None:
    run = _run((*READ, o.Run(3_000)), GATE_CONFIG)
    assert run.failure is None, run.failure
    assert len(_applied(run)) == 1


def test_an_answer_never_sent_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    _plant("replica-fetch-answer-not-sent", monkeypatch)
    run = _run((*READ, o.Run(3_000)), GATE_CONFIG)
    assert run.failure is not None and run.failure.name == "run", run.failure
    assert run.failure.message.startswith("RequestAnswered: ")
    assert "the follower-fetching consumer's Fetch" in run.failure.message
    assert run.failing_step == len(READ) + 1


@pytest.mark.parametrize(
    "after",
    [
        (o.Run(2_000),),  # within the bound (2.5 s)
        (o.Advance(5_000), o.Run(2_000)),  # the Advance's time does not count
        (o.Isolate(0), o.Run(3_000)),
        (o.Drop(0), o.Run(3_000)),
        (o.Crash(0), o.Run(3_000)),
        (o.MoveLeader(1), o.Run(3_000)),
    ],
    ids=["short", "advance", "isolate", "drop", "crash", "move-leader"],
)
def test_an_answer_never_sent_is_not_reported_where_the_network_could_explain_it(
    after: tuple[o.Operation, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    _plant("replica-fetch-answer-not-sent", monkeypatch)
    run = _run((*READ, *after), GATE_CONFIG)
    assert run.failure is None, run.failure
    assert _applied(run) == []  # the bug is there: no answer ever came


def test_the_clean_reference_makes_its_followers_fetch() -> None:
    run = _run(tuple(o.Run(3_000) for _ in range(4)), CFG)
    assert run.failure is None, run.failure


def test_a_broker_that_never_becomes_follower_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    _plant("metadata-without-become-follower", monkeypatch)
    run = _run(tuple(o.Run(3_000) for _ in range(4)), CFG)
    assert run.failure is not None and run.failure.name == "run", run.failure
    assert run.failure.message.startswith("FollowerStartsFetching: ")
    assert "made a follower of running broker 0 in leader epoch 0" in run.failure.message
    assert run.failing_step == 4  # past 10 s of healthy time since boot


@pytest.mark.parametrize(
    "ops",
    [
        tuple(o.Run(3_000) for _ in range(3)),  # 9 s: within the bound
        (o.Isolate(1), *(o.Run(3_000) for _ in range(5))),  # a cut
        (o.Run(3_000), o.Run(3_000), o.MoveLeader(1), *(o.Run(3_000) for _ in range(3))),  # counted anew
        (o.Run(3_000), o.Crash(2), o.Restart(2), *(o.Advance(1_000) for _ in range(12))),  # no healthy time
    ],
    ids=["short", "isolate", "move-leader", "restart-then-advance"],
)
def test_a_broker_that_never_becomes_follower_is_not_reported_without_enough_healthy_time(
    ops: tuple[o.Operation, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    _plant("metadata-without-become-follower", monkeypatch)
    run = _run(ops, CFG)
    assert run.failure is None, run.failure


@pytest.mark.parametrize("mutant", ["follower-ignores-new-leader", "fetch-with-records-unanswered"])
def test_each_named_mutant_is_caught_and_its_file_replays(mutant: str, tmp_path: Path) -> None:
    """The registry's mutants for these checks: caught on the reference with their configuration; the
    counterexample file, written and read back, reproduces the verdict live and from its events alone."""
    cfg = config_for(mutant, CFG)
    # the leader first names broker 1 (client.rack) as read replica; the answer with records is broker 1's
    again = (*READ, o.Run(1_000), o.ConsumeReplica(), o.Run(3_000))
    ops = again if cfg.follower_fetching else tuple(o.Run(3_000) for _ in range(4))
    run = run_scenario(ReferenceCluster(), Scenario("liveness", "", 3, ops), cfg, frozenset({mutant}))
    assert run.failure is not None and run.failure.name == "run", run.failure
    path = tmp_path / "cx.jsonl"
    write_counterexample(path, counterexample_of(run, "reference"))
    cx = read_counterexample(path)
    assert replay(cx, None).reproduces(cx)
    live = replay(cx, ReferenceCluster())
    assert live.divergence is None and live.reproduces(cx)


def test_a_fetch_error_never_answered_is_caught_and_the_clean_reference_answers_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The zoo's restart-below-log-start (its shrunk run by the gate, --slice all --examples 200 --seed
    1, with the plant): restarted broker 2 fetches below the leader's log start and is refused."""
    cfg = GATE_CONFIG  # log start moves; the followers' Fetches wait in the purgatory
    clean = _run(RESTART_BELOW_LOG_START.ops, cfg)
    assert clean.failure is None, clean.failure
    refused = [e for step in clean.steps for e in step.events if isinstance(e, ev.FetchHandled) and e.error]
    assert [(e.follower, e.error) for e in refused] == [(2, OFFSET_OUT_OF_RANGE)]
    _plant("fetch-error-not-answered", monkeypatch)
    run = _run(RESTART_BELOW_LOG_START.ops, cfg)
    assert run.failure is not None and run.failure.message.startswith("RequestAnswered: "), run.failure
    assert "sent to running broker 0" in run.failure.message


@pytest.mark.parametrize(
    "faults",
    [
        (o.Duplicate(0), o.Run(3_000)),  # the request delivered twice: answered twice, applied once
        (o.DeliverTo(0), o.Settle(5), o.Run(3_000)),  # delivered out of turn, then in order
        (o.Deliver(-1), o.Advance(1_000), o.Run(3_000)),
        (o.RogueFetch(2, 9, 1), o.Retention(0, 1), o.DeleteRecordsAt(1, -1), o.Run(3_000)),
    ],
    ids=["duplicate", "deliver-to-settle", "deliver-advance", "rogue-retention-delete"],
)
def test_the_clean_reference_stays_silent_under_reordering_duplicates_and_the_admin_operations(
    faults: tuple[o.Operation, ...],
) -> None:
    run = _run((*READ, *faults), GATE_CONFIG)
    assert run.failure is None, run.failure
    assert len(_applied(run)) == 1


def test_events_judged_without_their_operations_never_owe_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus or a hand-built list has no operations, so no healthy time: the planted run's events,
    judged alone, raise no progress finding."""
    _plant("metadata-without-become-follower", monkeypatch)
    run = _run(tuple(o.Run(3_000) for _ in range(4)), CFG)
    assert run.failure is not None
    events = [e for step in run.steps for e in step.events]
    assert [f for f in judge_events(CFG, events) if f.failing] == []
