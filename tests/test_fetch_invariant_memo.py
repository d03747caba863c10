"""The fetch-session judge skips re-running its invariants after a step that moved only the clock
(conformance.fetch.lockstep.FetchJudge.unchanged, issue 17): no invariant reads ``now_ms``, so its
findings are those of re-checking every invariant after every event, with and without mutants."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from kconform.conformance.fetch.lockstep import FetchJudge
from kconform.impl.mutants import FETCH, mutants_of
from kconform.model import fetch_invariants as I
from kconform.model import fetch_session as FS
from kconform.model.fetch_config import FetchConfig
from kconform.model.fetch_state import advance_clock, cache_lost, initial_state
from kconform.traces.generate import Plan
from tests.memokit import Trace, findings_agree, generated_traces
from tests.memokit import reads as memokit_reads

PLANTED = tuple((m, 1) for m in mutants_of(FETCH))
"""Every fetch mutant, each carried by one trace."""


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Trace]:
    plan = Plan(events=6_000, seed=5, trace_events=600, config=FetchConfig(), plant=PLANTED)
    return generated_traces(tmp_path_factory.mktemp("fetch-memo") / "c", plan, FetchConfig)


class _Recorder:
    """Stands for a FetchState and records which of its fields are read."""

    def __init__(self, obj: Any, seen: set[tuple[str, ...]]) -> None:
        self._obj, self._seen = obj, seen

    def __getattr__(self, name: str) -> Any:
        self._seen.add((name,))
        return getattr(self._obj, name)


def _record(state: Any, seen: set[tuple[str, ...]]) -> _Recorder:
    return _Recorder(state, seen)


def _no_skip(judge: Any) -> None:
    judge.unchanged = lambda pre, post: post is pre  # a clock tick is checked like any step


def test_a_clock_tick_skips_the_checks_and_finds_what_checking_finds(traces: list[Trace]) -> None:
    verdicts = findings_agree(traces, FetchJudge, _no_skip)
    assert verdicts["non-conformance"] > 0, verdicts  # the planted mutants are found either way
    ticks = Counter(e.kind for _cfg, events in traces for e in events)["clock_advanced"]
    assert ticks > 1_000, ticks


def test_a_tick_is_skipped_only_when_nothing_else_changed() -> None:
    """The near miss: a tick is skipped, a tick that also settles an answer (``last_answer`` goes)
    or any other change is checked."""
    cfg = FetchConfig()
    judge = FetchJudge(cfg)
    s = initial_state(cfg)
    assert judge.unchanged(s, advance_clock(s, 100))
    answered = replace(s, last_answer=(1, 0, FS.Answer("sessionless", 0, 0, ())))
    assert not judge.unchanged(answered, advance_clock(s, 100))
    assert not judge.unchanged(s, advance_clock(answered, 200))
    assert not judge.unchanged(s, advance_clock(cache_lost(s), 100))


def test_no_invariant_reads_the_clock(traces: list[Trace]) -> None:
    for cfg, events in traces[:1]:
        judge = FetchJudge(cfg)
        for event in events:
            judge.observe(event)
            for inv in I.INVARIANTS.values():
                assert ("now_ms",) not in memokit_reads(_record, inv.check, judge.state, cfg), inv.name
