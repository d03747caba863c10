"""conformance.runner.alarm and watched: the block is interrupted by its error when it overruns, not when it
finishes in time, and the SIGALRM handler in place before is back on every exit (the default one or
a function), with the timer cleared."""

from __future__ import annotations

import signal
import time
from types import FrameType

import pytest

from kconform.conformance.adapter import AdapterError
from kconform.conformance.runner import LockstepRun, alarm, watched
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.model.config import ReplicationConfig
from kconform.traces.events import Event
from kconform.traces.operations import Advance, Operation


class Overran(Exception):
    pass


def test_an_overrun_raises_and_the_default_handler_is_back() -> None:
    before = signal.getsignal(signal.SIGALRM)
    with pytest.raises(Overran), alarm(0.05, Overran):
        time.sleep(2)
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_block_in_time_restores_a_function_handler() -> None:
    def mine(signum: int, frame: FrameType | None) -> None:
        raise AssertionError("the timer was not cleared")

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        with alarm(5.0, Overran):
            pass
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, previous)


class _Slow(ReferenceCluster):
    """A reference cluster whose Advance sleeps ``pause`` seconds before answering."""

    pause = 0.0

    def apply(self, op: Operation) -> list[Event]:
        if isinstance(op, Advance):
            time.sleep(self.pause)
        return super().apply(op)


def _run(pause: float, timeout_s: float) -> LockstepRun:
    adapter = _Slow()
    adapter.pause = pause
    run = LockstepRun(adapter, ReplicationConfig(), 0, frozenset(), timeout_s=timeout_s)
    run.boot()
    return run


def test_a_watched_call_that_overruns_is_interrupted_by_the_watch_and_all_is_back() -> None:
    before = signal.getsignal(signal.SIGALRM)
    run = _run(5.0, 0.2)
    started = time.perf_counter()
    hung = r"'reference' at step 1 advance\(ms=100\) did not answer within 0\.2 s"
    with watched(0.05), pytest.raises(AdapterError, match=hung):
        run.apply(Advance(ms=100))
    assert 0.2 <= time.perf_counter() - started < 2.0
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_watched_calls_in_time_pass_and_the_watch_outlives_an_alarm_inside_it() -> None:
    """Calls in time are judged as outside a watch (no error between calls either, where the ticks
    find no deadline); an ``alarm`` inside the block puts the watch's interval timer back."""
    run = _run(0.03, 0.2)
    adapter = run.adapter
    assert isinstance(adapter, _Slow)
    with watched(0.01):
        for _ in range(5):
            run.apply(Advance(ms=100))
        with alarm(5.0, Overran):
            pass
        assert signal.getitimer(signal.ITIMER_REAL)[1] == pytest.approx(0.01)
        time.sleep(0.05)  # ticks between calls: no deadline, nothing raised
        with pytest.raises(AdapterError, match=r"did not answer within 0\.2 s"):
            adapter.pause = 1.0
            run.apply(Advance(ms=100))
    assert run.failure is None and len(run.steps) == 6
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_timeout_shorter_than_the_tick_keeps_its_own_alarm() -> None:
    run = _run(5.0, 0.1)
    started = time.perf_counter()
    with watched(10.0), pytest.raises(AdapterError, match=r"did not answer within 0\.1 s"):
        run.apply(Advance(ms=100))
    assert time.perf_counter() - started < 2.0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
