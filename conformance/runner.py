"""One lockstep run: operations go to an implementation, its events go to the judge.

The run records every step (operation, events, findings) so that a failure can be written as a
counterexample file and replayed. It stops judging at the first failing finding; allowed findings
(losses the configuration permits) are kept and reported but do not fail the run.
"""

from __future__ import annotations

import importlib
import itertools
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.judge import Finding
from kconform.conformance.registry import for_config
from kconform.conformance.slice import SliceJudge
from kconform.model.configs import AnyConfig
from kconform.model.fast_init import fast_frozen_init
from kconform.traces.events import Event
from kconform.traces.operations import Boot, Operation

ADAPTER_TIMEOUT_S = 60.0
"""How long one reset or operation may take before the adapter counts as hung."""


@contextmanager
def alarm(seconds: float, error: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``error()`` inside the block if it runs longer than ``seconds`` (SIGALRM by
    ``setitimer``: no thread per block; main thread only, elsewhere and for ``seconds <= 0`` the block
    runs unguarded). The previous SIGALRM handler and interval timer (a ``watched`` block's, or none)
    are restored on every exit."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise error()

    previous = _install(_SIGALRM, expired)
    timer = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _install(_SIGALRM, previous)
        if timer != (0.0, 0.0):
            signal.setitimer(signal.ITIMER_REAL, *timer)


WATCH_TICK_S = 0.5
"""How often a ``watched`` block's timer looks at the adapter call in progress: a call is interrupted
at most this much after its deadline."""


class _Watch:
    """The adapter call a ``watched`` block guards now: its deadline (``time.perf_counter``; None
    between calls) and the call, (run, operation, step), whose ``_hung`` error is raised past it."""

    __slots__ = ("call", "deadline", "tick_s")

    def __init__(self, tick_s: float) -> None:
        self.tick_s = tick_s
        self.deadline: float | None = None
        self.call: tuple[LockstepRun, Operation, int | None] | None = None


_watch: _Watch | None = None
"""The innermost open ``watched`` block's watch (None: each adapter call arms an ``alarm`` of its own)."""


@contextmanager
def watched(tick_s: float = WATCH_TICK_S) -> Iterator[None]:
    """For the block, adapter calls of every LockstepRun (``timeout_s`` >= ``tick_s``) are guarded by
    one SIGALRM handler and one interval timer firing every ``tick_s``, installed here once, instead
    of a handler and a timer installed and cleared around each call (``alarm``: about 12 µs a call,
    most of a small operation's cost outside the judge and the implementation). A call that overruns
    its ``timeout_s`` gets the same AdapterError, raised inside it at the first tick past its
    deadline. Main thread only (elsewhere the block runs as if not watched); the previous handler and
    interval timer are back on every exit."""
    global _watch
    if tick_s <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    watch = _Watch(tick_s)

    def tick(signum: int, frame: object) -> None:
        deadline = watch.deadline
        if deadline is not None and time.perf_counter() >= deadline and watch.call is not None:
            watch.deadline = None
            run, op, step = watch.call
            raise run._hung(op, step)

    outer = _watch
    previous = _install(_SIGALRM, tick)
    timer = signal.setitimer(signal.ITIMER_REAL, tick_s, tick_s)
    _watch = watch
    try:
        yield
    finally:
        _watch = outer
        signal.setitimer(signal.ITIMER_REAL, 0)
        _install(_SIGALRM, previous)
        if timer != (0.0, 0.0):
            signal.setitimer(signal.ITIMER_REAL, *timer)


_SIGALRM = int(signal.SIGALRM)
_install: Callable[[int, Any], Any] = importlib.import_module("_signal").signal
"""``signal.signal`` without its enum conversions: the wrapper converts a handler to ``int`` and the
previous one back to ``signal.Handlers``, and for a function handler both go through a raised and
caught exception (24 µs a call against 1.7 µs here; the gate arms the alarm for every operation and every boot).
The handler returned is the one installed (a function, or the int of SIG_DFL / SIG_IGN), which
installs back as it was."""


@fast_frozen_init
@dataclass(frozen=True)
class StepRecord:
    """What one operation did: the events the implementation reported and the judge's findings."""

    op: Operation
    events: tuple[Event, ...]
    findings: tuple[Finding, ...]


@dataclass
class LockstepRun:
    """Drives ``adapter`` with operations and judges each event against the model."""

    adapter: Adapter
    cfg: AnyConfig
    seed: int
    mutants: frozenset[str]
    steps: list[StepRecord] = field(default_factory=list)
    failure: Finding | None = None
    failing_step: int | None = None
    judge: SliceJudge = field(init=False)
    started: float = field(default_factory=time.perf_counter)
    timeout_s: float = ADAPTER_TIMEOUT_S
    checked: frozenset[str] | None = None
    """The invariants the judge checks (None: all)."""

    def __post_init__(self) -> None:
        self.judge = for_config(self.cfg).make_judge(self.cfg, self.checked)

    def boot(self) -> StepRecord:
        """Step 0: reset the implementation and judge the bring-up events."""
        boot = Boot()
        return self._judge(boot, self._call(self._reset, boot, None))

    def apply(self, op: Operation) -> StepRecord:
        """Run one operation; after a failure, operations are still recorded but not judged."""
        return self._judge(op, self._call(self.adapter.apply, op, len(self.steps)))

    @property
    def failed(self) -> bool:
        return self.failure is not None

    def _reset(self, op: Operation) -> list[Event]:
        return self.adapter.reset(self.cfg, self.seed, self.mutants)

    def _what(self, op: Operation, step: int | None) -> str:
        """The implementation and the call an error names: ``reset`` (``step`` None) or step ``step``."""
        where = "reset" if step is None else f"step {step} {op}"
        return f"implementation {self.adapter.name!r} at {where}"

    def _hung(self, op: Operation, step: int | None) -> AdapterError:
        return AdapterError(f"{self._what(op, step)} did not answer within {self.timeout_s:g} s (hung?)")

    def _call(self, fn: Callable[[Operation], list[Event]], op: Operation, step: int | None) -> list[Event]:
        """Run one adapter call, ``fn(op)`` (``step`` None: the reset); a crash, a hang or a malformed
        answer becomes an AdapterError naming the implementation and the step (formatted only
        then). Inside a ``watched`` block the open watch guards the call; elsewhere an ``alarm``."""
        seconds = self.timeout_s
        watch = _watch
        try:
            if watch is not None and seconds >= watch.tick_s:
                watch.call = (self, op, step)
                watch.deadline = time.perf_counter() + seconds
                try:
                    result = fn(op)
                finally:
                    watch.deadline = None
            else:
                with alarm(seconds, lambda: self._hung(op, step)):
                    result = fn(op)
        except AdapterError:
            raise
        except Exception as exc:  # an implementation bug must not look like a model verdict
            raise AdapterError(f"{self._what(op, step)} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(result, list) or not all(map(isinstance, result, _EVENT)):
            raise AdapterError(f"{self._what(op, step)} returned {type(result).__name__}, not a list of events")
        return result

    def _judge(self, op: Operation, events: list[Event]) -> StepRecord:
        """Judge each event in turn, then the operation as a whole (``operation_done``), asking for
        each only while nothing before it failed; record the step."""
        findings: list[Finding] = []
        if self.failure is None:
            judge = self.judge
            judge.note_operation(op)
            observe = judge.observe
            for e in events:
                found = observe(e)
                if found and self._failed_by(found, findings):
                    break
            else:
                found = judge.operation_done(op)
                if found:
                    self._failed_by(found, findings)
        record = StepRecord(op, tuple(events), tuple(findings))
        self.steps.append(record)
        return record

    def _failed_by(self, found: list[Finding], findings: list[Finding]) -> bool:
        """Add ``found`` to ``findings``; whether one of them fails the run (then it is the failure)."""
        findings.extend(found)
        failing = next((f for f in found if f.failing), None)
        if failing is None:
            return False
        self.failure = failing
        self.failing_step = len(self.steps)
        return True


_EVENT = itertools.repeat(Event)
"""``Event`` for ever: ``map(isinstance, events, _EVENT)`` checks a list of events in C."""
