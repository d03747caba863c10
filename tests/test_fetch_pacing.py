"""FollowerKeepsFetching (model.fetch_pacing): a running follower whose fetcher follows a leader asks
again at once when its fetcher starts or an answer moved its log, within replica.fetch.backoff.ms of
any other answer, and within request.timeout.ms + replica.fetch.backoff.ms of a request that found
no answer. Only the follower's own sending is demanded: a follower cut off from its leader keeps
its obligation and meets it (near miss), a fetcher that stops resending is caught (planted bugs),
and neither the model searches nor their files are judged by it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.conformance.replication import scenarios as rscen
from kconform.conformance.replication.explore import Found, canonical
from kconform.conformance.replication.lockstep import judge_events
from kconform.conformance.replication.pathevents import boot_events, path_counterexample, path_steps
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.runner import LockstepRun
from kconform.impl.replication import fetcher as rfetcher
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model import fetch_pacing as P
from kconform.model import invariants as I
from kconform.model import replication as R
from kconform.model.actions import SearchBounds
from kconform.model.config import ReplicationConfig
from kconform.model.state import State
from kconform.traces import events as ev
from kconform.traces import operations as o
from kconform.traces.replay import replay
from tests.modelkit import booted

CFG = ReplicationConfig()
BACKOFF = CFG.replica_fetch_backoff_ms
NO_ANSWER = CFG.request_timeout_ms + BACKOFF


def _tracked() -> State:
    """Broker 0 leads epoch 0; the fetchers of followers 1 and 2 started at 0 ms."""
    s = replace(booted(CFG), tracks_fetchers=True)
    return P.started(P.started(s, 1), 2)


def _stalled(s: State, now_ms: int) -> list[str]:
    """FollowerKeepsFetching's messages once the clock reads ``now_ms``."""
    return [
        v.message for v in I.check_state(R.advance_clock(s, now_ms, CFG), CFG, frozenset({"FollowerKeepsFetching"}))
    ]


def test_a_started_fetcher_asks_at_once() -> None:
    s = _tracked()
    assert _stalled(s, 0) == []
    late = _stalled(s, 1)
    assert len(late) == 2 and "broker 1 follows leader 0 (fetching) but sent no request by 0 ms" in late[0]
    assert "its fetcher started" in late[0]


def test_a_request_without_answer_allows_the_timeout_and_one_backoff() -> None:
    s = P.sent(P.sent(_tracked(), CFG, 1, 10), CFG, 2, 11)
    assert _stalled(s, NO_ANSWER) == []
    late = _stalled(s, NO_ANSWER + 1)
    assert len(late) == 2 and "request 10 found no answer" in late[0]
    # the follower's resend after the timeout renews the obligation
    resent = P.sent(P.sent(R.advance_clock(s, CFG.request_timeout_ms, CFG), CFG, 1, 12), CFG, 2, 13)
    assert _stalled(resent, NO_ANSWER + 1) == []


def test_an_answer_that_moved_the_log_demands_the_next_request_at_once_another_within_the_backoff() -> None:
    s = P.sent(P.sent(_tracked(), CFG, 1, 10), CFG, 2, 11)
    s = P.answered(s, 1, 10, P.after_fetch(CFG, "appended", -1, 1, False))
    s = P.answered(s, 2, 11, P.after_fetch(CFG, "appended", -1, 0, False))
    late = _stalled(s, 1)
    assert len(late) == 1 and late[0].startswith("broker 1 ") and "answer to request 10" in late[0]
    s = P.sent(s, CFG, 1, 12)
    assert _stalled(s, BACKOFF) == []
    assert [m[:8] for m in _stalled(s, BACKOFF + 1)] == ["broker 2"]


def test_an_older_or_second_answer_changes_nothing() -> None:
    s = P.sent(_tracked(), CFG, 1, 10)
    s = P.sent(s, CFG, 1, 12)  # 10 timed out, 12 replaced it
    assert P.answered(s, 1, 10, 0) is s
    once = P.answered(s, 1, 12, BACKOFF)
    assert P.answered(once, 1, 12, 0) is once
    erred = P.answered(s, 1, 12, BACKOFF, BACKOFF)
    assert P.answered(erred, 1, 12, 0).fetchers[1] == replace(erred.fetchers[1], not_before_ms=None)


@pytest.mark.parametrize(
    ("outcome", "truncated_to", "appended", "wait_ms", "pause"),
    [
        ("appended", -1, 2, 0, 0),
        ("diverged", 3, 0, 0, 0),
        ("out_of_range", 1, 0, 0, 0),
        ("appended", -1, 0, 500, 0),  # the leader waited replica.fetch.wait.max.ms
        ("appended", -1, 0, 0, BACKOFF),  # the reference's pause stands in for the leader's wait
        ("out_of_range", -1, 0, 0, BACKOFF),
        ("error", -1, 0, 500, BACKOFF),
        ("ignored", -1, 0, 500, BACKOFF),
        ("fenced", -1, 0, 0, None),  # FENCED_LEADER_EPOCH: Kafka awaits the new leader's metadata
    ],
)
def test_the_pause_after_a_fetch_answer(
    outcome: str, truncated_to: int, appended: int, wait_ms: int, pause: int | None
) -> None:
    cfg = replace(CFG, replica_fetch_wait_max_ms=wait_ms)
    fenced = outcome == "fenced"
    assert P.after_fetch(cfg, "error" if fenced else outcome, truncated_to, appended, fenced) == pause


def test_the_pause_after_an_epoch_answer() -> None:
    outcomes = ("truncated", "retry", "error", "ignored")
    assert [P.after_epoch_answer(CFG, o, False) for o in outcomes] == [0, 0, BACKOFF, BACKOFF]
    assert P.after_epoch_answer(CFG, "error", True) is None


def test_after_a_fenced_answer_nothing_is_due_until_the_fetcher_sends_or_starts_again() -> None:
    s = P.answered(P.sent(_tracked(), CFG, 1, 10), 1, 10, None)
    assert [m[:8] for m in _stalled(s, 10**6)] == ["broker 2"]
    assert len(_stalled(P.started(s, 1), 1)) == 2


def test_a_request_within_the_backoff_after_an_error_answer_fires_one_at_its_end_is_silent() -> None:
    s = P.sent(_tracked(), CFG, 1, 10)
    s = P.answered(s, 1, 10, BACKOFF, P.backoff_after(CFG, "error"))
    hasty = P.sent(R.advance_clock(s, BACKOFF - 1, CFG), CFG, 1, 11)
    found = I.check_state(hasty, CFG, frozenset({"FollowerBacksOff"}))
    assert len(found) == 1 and "broker 1 sent request 11 at 499 ms, before 500 ms" in found[0].message
    assert (
        I.check_state(P.sent(R.advance_clock(s, BACKOFF, CFG), CFG, 1, 11), CFG, frozenset({"FollowerBacksOff"})) == []
    )
    restarted = P.sent(P.started(R.advance_clock(s, 1, CFG), 1), CFG, 1, 11)  # new metadata: no delay
    assert I.check_state(restarted, CFG, frozenset({"FollowerBacksOff"})) == []
    # a second copy of the answer (a duplicated request) that truncated: the follower may ask at once
    again = P.answered(R.advance_clock(s, 1, CFG), 1, 10, 0, None)
    assert I.check_state(P.sent(again, CFG, 1, 11), CFG, frozenset({"FollowerBacksOff"})) == []
    assert [P.backoff_after(CFG, o) for o in ("error", "ignored", "appended", "out_of_range")] == [BACKOFF] + [None] * 3


def test_a_follower_that_crashed_leads_or_is_not_tracked_is_not_judged() -> None:
    s = _tracked()
    assert _stalled(R.crash(s, CFG, 1), 1) == [_stalled(s, 1)[1]]
    moved, _ = R.controller_move_leader(s, CFG, 1)
    led, _ = R.apply_metadata(moved, CFG, 1, moved.controller)
    assert [m[:8] for m in _stalled(led, 1)] == ["broker 2"]
    assert _stalled(replace(booted(CFG), tracks_fetchers=False), 10**6) == []
    assert P.started(booted(CFG), 1).fetchers == ()


# --------------------------------------------------------------------------------------------
# The reference cluster: a follower cut off from its leader keeps asking; one that stops is caught


PARTITIONED = rscen.Scenario(
    "partitioned-follower",
    "follower 2 is cut off for 70 s while the leader writes, then the network heals",
    3,
    (
        o.Run(1000),
        o.Produce(1, 1),
        o.Run(1000),
        o.Isolate(2),
        o.Produce(2, 1),
        *(o.Run(3000) for _ in range(23)),
        o.Heal(),
        o.Produce(3, 1),
        *(o.Run(3000) for _ in range(11)),
    ),
)


def _run() -> LockstepRun:
    return rscen.run_scenario(ReferenceCluster(), PARTITIONED, CFG, frozenset())


def _sent_by(run: LockstepRun, broker: int) -> list[int]:
    return [e.msg for step in run.steps for e in step.events if isinstance(e, ev.FetchSent) and e.node == broker]


def test_a_partitioned_follower_keeps_asking_and_catches_up_after_healing() -> None:
    """The near miss: every Fetch of follower 2 is lost for 70 s; it resends after each
    request.timeout.ms, so the property stays silent, and after healing it reaches the leader's LEO."""
    run = _run()
    assert run.failure is None, run.failure
    cluster = run.adapter.cluster  # type: ignore[attr-defined]
    leader = cluster.brokers[0].log
    assert cluster.brokers[2].log.leo == leader.leo == 3
    assert len(_sent_by(run, 2)) >= 4  # at least two timeouts while cut off


def test_a_fetcher_that_does_not_resend_after_a_timeout_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def give_up(self: rfetcher.ReplicaFetcher, msg: int) -> None:
        if self._outstanding is not None and self._outstanding.msg == msg:
            self._outstanding = None

    monkeypatch.setattr(rfetcher.ReplicaFetcher, "_on_timeout", give_up)
    run = _run()
    assert run.failure is not None and run.failure.name == "FollowerKeepsFetching", run.failure
    assert "broker 2" in run.failure.message and "found no answer" in run.failure.message


def test_a_fetcher_that_never_backs_off_to_ask_again_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rfetcher.ReplicaFetcher, "_on_backoff", lambda self: None)
    run = _run()
    assert run.failure is not None and run.failure.name == "FollowerKeepsFetching", run.failure


def test_the_unknown_leader_epoch_scenario_backs_off_and_a_hasty_fetcher_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Near miss: follower 2's Fetch answered UNKNOWN_LEADER_EPOCH is re-sent after the backoff and
    the follower catches up; planted: a fetcher that asks again at once after every answer."""
    cfg = GATE_CONFIG
    run = rscen.run_scenario(ReferenceCluster(), rscen.UNKNOWN_LEADER_EPOCH, cfg, frozenset())
    assert run.failure is None, run.failure
    applied = [e for step in run.steps for e in step.events if isinstance(e, ev.FetchApplied) and e.node == 2]
    assert "error" in [e.outcome for e in applied]
    cluster = run.adapter.cluster  # type: ignore[attr-defined]
    assert cluster.brokers[2].log.leo == cluster.brokers[1].log.leo == 1
    at_once = rfetcher.ReplicaFetcher._next_after
    monkeypatch.setattr(rfetcher.ReplicaFetcher, "_next_after", lambda self, req, progressed: at_once(self, req, True))
    run = rscen.run_scenario(ReferenceCluster(), rscen.UNKNOWN_LEADER_EPOCH, cfg, frozenset())
    assert run.failure is not None and run.failure.name == "FollowerBacksOff", run.failure


def test_a_model_search_file_is_replayed_without_the_timer_bounds() -> None:
    """A path with a clock jump after a fetch: the lockstep judge demands the follower's next Fetch
    within the backoff, which a model action never claims; the file's replay checks every invariant
    but the timer bounds, so nothing fires."""
    cfg = ReplicationConfig(replicas=2, min_insync_replicas=1)
    bounds = SearchBounds(max_records=2, allow_tick=True)
    path = ("write(0)", "replicate(1)", "tick")
    steps = path_steps(cfg, bounds, path)
    events = [e for e in boot_events(cfg)] + [e for step in steps for e in step.events]
    assert "FollowerKeepsFetching" in {f.name for f in judge_events(cfg, events)}
    cx = path_counterexample(cfg, bounds, Found("StrongIsr", "made up", 3, path, canonical(steps[-1].state, cfg)))
    assert cx.checked == frozenset(I.INVARIANTS) - I.TIMER_BOUNDS
    result = replay(cx, None)
    assert result.steps_replayed == 4 and result.failure is None and not result.findings
