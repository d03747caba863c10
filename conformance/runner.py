"""One lockstep run: operations go to an implementation, its events go to the judge.

The run records every step (operation, events, findings) so that a failure can be written as a
counterexample file and replayed. It stops judging at the first failing finding; allowed findings
(losses the configuration permits) are kept and reported but do not fail the run.
"""

from __future__ import annotations

import contextlib
import importlib
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
from kconform.traces.events import Event
from kconform.traces.operations import Boot, Operation

ADAPTER_TIMEOUT_S = 60.0
"""How long one reset or operation may take before the adapter counts as hung."""


@contextmanager
def alarm(seconds: float, error: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``error()`` inside the block if it runs longer than ``seconds`` (SIGALRM by
    ``setitimer``: no thread per block; main thread only, elsewhere and for ``seconds <= 0`` the block
    runs unguarded). The previous SIGALRM handler is restored and the timer cleared on every exit."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise error()

    previous = _install(_SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _install(_SIGALRM, previous)


_SIGALRM = int(signal.SIGALRM)
_install: Callable[[int, Any], Any] = importlib.import_module("_signal").signal
"""``signal.signal`` without its enum conversions: the wrapper converts a handler to ``int`` and the
previous one back to ``signal.Handlers``, and for a function handler both go through a raised and
caught exception (24 µs a call against 1.7 µs here; the gate arms the alarm for every operation and every boot).
The handler returned is the one installed (a function, or the int of SIG_DFL / SIG_IGN), which
installs back as it was."""


def _deadline(seconds: float, what: Callable[[], str]) -> contextlib.AbstractContextManager[None]:
    """Raise AdapterError naming ``what()`` if the block runs longer than ``seconds``."""
    return alarm(seconds, lambda: AdapterError(f"{what()} did not answer within {seconds:g} s (hung?)"))


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
        events = self._call(lambda: self.adapter.reset(self.cfg, self.seed, self.mutants), lambda: "reset")
        return self._judge(Boot(), events)

    def apply(self, op: Operation) -> StepRecord:
        """Run one operation; after a failure, operations are still recorded but not judged."""
        step = len(self.steps)
        events = self._call(lambda: self.adapter.apply(op), lambda: f"step {step} {op}")
        return self._judge(op, events)

    @property
    def failed(self) -> bool:
        return self.failure is not None

    def _call(self, fn: Callable[[], list[Event]], where: Callable[[], str]) -> list[Event]:
        """Run one adapter call; a crash, a hang or a malformed answer becomes an AdapterError
        naming the implementation and the step (``where``, formatted only then)."""
        name = self.adapter.name

        def what() -> str:
            return f"implementation {name!r} at {where()}"

        try:
            with _deadline(self.timeout_s, what):
                result = fn()
        except AdapterError:
            raise
        except Exception as exc:  # an implementation bug must not look like a model verdict
            raise AdapterError(f"{what()} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(result, list) or not all(isinstance(e, Event) for e in result):
            raise AdapterError(f"{what()} returned {type(result).__name__}, not a list of events")
        return result

    def _verdicts(self, op: Operation, events: list[Event]) -> Iterator[list[Finding]]:
        """The findings of each event in turn, then those of the operation as a whole
        (``operation_done``), asked for only while nothing before them failed."""
        observe = self.judge.observe
        for e in events:
            yield observe(e)
        yield self.judge.operation_done(op)

    def _judge(self, op: Operation, events: list[Event]) -> StepRecord:
        findings: list[Finding] = []
        if self.failure is None:
            self.judge.note_operation(op)
            for found in self._verdicts(op, events):
                if not found:
                    continue
                findings.extend(found)
                failing = next((f for f in found if f.failing), None)
                if failing is not None:
                    self.failure = failing
                    self.failing_step = len(self.steps)
                    break
        record = StepRecord(op, tuple(events), tuple(findings))
        self.steps.append(record)
        return record
