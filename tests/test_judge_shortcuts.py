"""Shortcuts of the replication judge (issue 17, speed), each exact: a clock tick skips the timer
bounds while nothing can be late (model.replication.advance_clock: each bound's ``quiet_until`` is
exactly the last time up to which it finds nothing late on a state, and a tick with the shortcut
leaves the state a tick without it leaves); an event type whose coverage key is its kind is looked
up (the key of every event is conformance.replication.coverage's)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kconform.conformance.replication import coverage
from kconform.conformance.replication.lockstep import Judge
from kconform.model import fencing, fetch_pacing, isr_expiration
from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.evolve import evolve
from kconform.model.state import State
from kconform.model.timer_bounds import NEVER
from kconform.traces import events as ev
from kconform.traces.generate import Plan
from tests.memokit import Trace, generated_traces

CFG = ReplicationConfig()


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Trace]:
    plan = Plan(events=6_000, seed=3, trace_events=600, config=CFG)
    return generated_traces(tmp_path_factory.mktemp("shortcuts"), plan, ReplicationConfig)


@pytest.fixture(scope="module")
def states(traces: list[Trace]) -> list[State]:
    """Every fifth state the judge holds before a clock tick, along generated traces."""
    out: list[State] = []
    for cfg, events in traces:
        judge = Judge(cfg)
        for i, event in enumerate(events):
            if isinstance(event, ev.ClockAdvanced) and i % 5 == 0:
                out.append(judge.state)
            judge.observe(event)
    return out


BOUNDS: dict[str, tuple[Callable[[State], int], Callable[[State], tuple[str, ...]]]] = {
    "isr_expiration": (lambda s: isr_expiration.quiet_until(s, CFG), lambda s: isr_expiration.late_members(s, CFG)),
    "fencing": (fencing.quiet_until, fencing.late_fences),
    "fetch_pacing": (fetch_pacing.quiet_until, lambda s: fetch_pacing.stalled(s, CFG)),
}


@pytest.mark.parametrize("bound", sorted(BOUNDS))
def test_quiet_until_is_the_last_time_nothing_is_late(states: list[State], bound: str) -> None:
    quiet_until, late = BOUNDS[bound]
    finite = 0
    for s in states:
        q = quiet_until(s)
        if q == NEVER:
            assert late(evolve(s, now_ms=s.now_ms + 10**9)) == ()
            continue
        finite += 1
        for t in (q - 1, q):
            assert late(evolve(s, now_ms=t)) == (), (bound, t, q)
        for t in (q + 1, q + 10_000):
            assert late(evolve(s, now_ms=t)) != (), (bound, t, q)
    assert finite > 20, bound  # the traces reach states where each bound has a deadline


def test_a_tick_with_the_shortcut_leaves_the_state_a_full_tick_leaves(
    states: list[State], monkeypatch: pytest.MonkeyPatch
) -> None:
    times = [
        (s, t) for s in states for t in (s.now_ms, s.now_ms + 1, s.now_ms + 5_000, s.now_ms + 20_000, s.now_ms + 60_000)
    ]
    fast = [R.advance_clock(s, t, CFG) for s, t in times]
    monkeypatch.setattr(R, "_quiet_until", lambda s, cfg: -1)  # every bound computed at every tick
    full = [R.advance_clock(s, t, CFG) for s, t in times]
    assert fast == full
    for a, b in zip(fast, full, strict=True):  # also the ghost's fields its equality ignores
        assert (a.ghost.late_shrinks, a.ghost.late_fences, a.ghost.stalled_fetchers) == (
            b.ghost.late_shrinks,
            b.ghost.late_fences,
            b.ghost.stalled_fetchers,
        )
    assert any(b.ghost.late_shrinks or b.ghost.late_fences or b.ghost.stalled_fetchers for b in full)


def test_the_coverage_key_of_every_event_is_the_slices(traces: list[Trace]) -> None:
    judge = Judge(CFG)
    kinds: set[str] = set()
    for _cfg, events in traces:
        for event in events:
            assert judge.coverage_key(event) == coverage.coverage_key(event)
            kinds.add(event.kind)
    assert {"clock_advanced", "fetch_sent", "fetch_handled", "metadata_applied"} <= kinds
    refined = ev.FetchHandled(
        node=0,
        msg=1,
        follower=9,
        error=ev.NONE,
        entries=(),
        hw=3,
        diverging_epoch=2,
        diverging_end_offset=5,
        leader_leo=5,
        leader_hw=3,
    )  # refined, not looked up
    assert judge.coverage_key(refined) == coverage.coverage_key(refined) == "fetch_handled:diverging"
