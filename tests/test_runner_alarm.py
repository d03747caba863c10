"""conformance.runner.alarm: the block is interrupted by its error when it overruns, not when it
finishes in time, and the SIGALRM handler in place before is back on every exit (the default one or
a function), with the timer cleared."""

from __future__ import annotations

import signal
import time
from types import FrameType

import pytest

from kconform.conformance.runner import alarm


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
