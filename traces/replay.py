"""Deterministic replay of counterexample files.

``replay`` re-drives an implementation with the recorded operations (or, model-only, takes the
recorded events as they are), judges every event against a fresh model, and reports the first
failing step, whether the implementation reproduced the recorded events, and the model's and the
implementation's state at that point, side by side.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from rich.console import Console
from rich.table import Table

from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.judge import Finding
from kconform.conformance.registry import for_config
from kconform.conformance.runner import LockstepRun, StepRecord
from kconform.model.config import ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.model.state import State
from kconform.traces.counterexample import Counterexample
from kconform.traces.events import Event
from kconform.traces.operations import Boot, Operation
from kconform.traces.tools import tools_for


class ReplayOptions(Protocol):
    """What ``run_replay`` needs of the command line's options (kconform.ci.options.ReplayOptions;
    named by shape, so that replay does not depend on the command-line layer)."""

    @property
    def implementation(self) -> str: ...

    @property
    def model_only(self) -> bool: ...

    @property
    def step_timeout_s(self) -> float: ...

    @property
    def run_timeout_s(self) -> float: ...


@dataclass
class ReplayResult:
    """What a replay found."""

    failure: Finding | None = None
    failing_step: int | None = None
    steps_replayed: int = 0
    divergence: str | None = None
    """First step where the live implementation's events differ from the recorded ones."""
    model_state: Any = None
    """The judge's model state after the last judged step (model.state.State for replication)."""
    impl_snapshot: dict[int, dict[str, Any]] | None = None
    findings: list[tuple[int, Finding]] = field(default_factory=list)

    def reproduces(self, cx: Counterexample) -> bool:
        """The replay ends in the recorded verdict (same kind and name) at the recorded step."""
        v = cx.verdict
        if v.get("kind") == "pass":
            return self.failure is None
        return (
            self.failure is not None
            and self.failure.verdict == v.get("kind")
            and self.failure.name == v.get("name")
            and self.failing_step == v.get("step")
        )


def _first_difference(live: tuple[Event, ...], recorded: tuple[Event, ...]) -> str | None:
    for i, (a, b) in enumerate(zip(live, recorded, strict=False)):
        if a != b:
            return f"event {i}: implementation now reports {a.to_json()}, the file has {b.to_json()}"
    if len(live) != len(recorded):
        return f"implementation now reports {len(live)} events, the file has {len(recorded)}"
    return None


class RecordedEvents:
    """An adapter that plays back a file's recorded events: model-only replay (and the checker
    for traces recorded from any implementation that writes the schema). The start-up events are
    the header's ``init_events`` then those of the ``boot`` step (step 0), if any."""

    name = "recorded"

    def __init__(self, cx: Counterexample) -> None:
        boot = list(cx.steps[0].events) if cx.steps and isinstance(cx.steps[0].op, Boot) else []
        self._boot = [*cx.init_events, *boot]
        self._steps = iter([s for s in cx.steps if not isinstance(s.op, Boot)])

    def reset(self, config: AnyConfig, seed: int, mutants: frozenset[str]) -> list[Event]:
        return list(self._boot)

    def apply(self, op: Operation) -> list[Event]:
        step = next(self._steps, None)
        if step is None:
            raise AdapterError(f"replay asked for {op} past the recorded steps")
        if step.op != op:
            raise AdapterError(f"recorded step is {step.op}, replay asked for {op}")
        return list(step.events)

    def close(self) -> None:
        pass


DEFAULT_STEP_TIMEOUT_S = 60.0
"""``kconform replay --timeout``: the longest one step (operation and judging) may take."""
DEFAULT_RUN_TIMEOUT_S = 1800.0
"""``kconform replay --run-timeout``: the longest a whole replay may take."""


class ReplayTimeout(AdapterError):
    """A replay step, or the whole replay, ran past its budget; the message names the step."""


@contextmanager
def _alarm(seconds: float, message: str) -> Iterator[None]:
    """Raise ReplayTimeout(message) after ``seconds`` (SIGALRM; main thread only, elsewhere the
    block runs unguarded and only the whole-run check between steps applies)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise ReplayTimeout(message)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def replay(
    cx: Counterexample,
    adapter: Adapter | None,
    step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
    run_timeout_s: float = DEFAULT_RUN_TIMEOUT_S,
) -> ReplayResult:
    """Judge ``cx`` step by step; with an adapter, its live events are judged (and compared with
    the recorded ones), without one the recorded events are judged. The invariants checked are
    the file's (Counterexample.checked: all unless the verdict names some). Each step (running the
    operation and judging its events) may take ``step_timeout_s``, the whole replay
    ``run_timeout_s``; past either, ReplayTimeout names the step. ``failing_step`` counts the
    file's steps (-1: the start-up, when the file has no ``boot`` step)."""
    live = adapter is not None
    run = LockstepRun(adapter or RecordedEvents(cx), cx.config, cx.seed, frozenset(cx.mutants), checked=cx.checked)
    run.timeout_s = 0  # the budget below covers the adapter call and the judging together
    deadline = time.monotonic() + run_timeout_s
    result = ReplayResult()

    def budgeted(what: str, action: Callable[[], StepRecord]) -> StepRecord:
        remaining = deadline - time.monotonic()
        over = f"the whole replay ran past its budget of {run_timeout_s:g} s (--run-timeout) at {what}"
        if remaining <= 0:
            raise ReplayTimeout(over)
        if remaining < step_timeout_s:
            message = over
        else:
            message = f"{what} took longer than {step_timeout_s:g} s (--timeout; hung?)"
        with _alarm(min(step_timeout_s, remaining), message):
            return action()

    implicit_boot = not cx.steps or not isinstance(cx.steps[0].op, Boot)
    if implicit_boot:
        budgeted("the start-up (reset)", run.boot)
    for i, step in enumerate(cx.steps):
        what = f"step {i} {step.op}"
        record = budgeted(what, run.boot if isinstance(step.op, Boot) else partial(run.apply, step.op))
        if live and result.divergence is None:
            diff = _first_difference(record.events, step.events)
            if diff is not None:
                result.divergence = f"step {i}: {diff}"
        result.steps_replayed = i + 1
        result.findings.extend((i, f) for f in record.findings)
        if run.failed:
            break
    result.failure = run.failure
    if run.failing_step is not None:
        result.failing_step = run.failing_step - (1 if implicit_boot else 0)
    result.model_state = run.judge.state
    snapshot = getattr(adapter, "snapshot", None)
    if callable(snapshot):
        result.impl_snapshot = snapshot()
    return result


def state_table(model: State, impl: dict[int, dict[str, Any]] | None) -> Table:
    """Model and implementation state per broker, side by side: each cell is ``model / impl``,
    in red where they disagree."""
    title = "state at the failing step" + (" (model / implementation)" if impl is not None else " (model)")
    table = Table(title=title)
    columns = (
        ("running", "running"),
        ("leader", "leader"),
        ("epoch", "leader_epoch"),
        ("LEO", "leo"),
        ("HW", "hw"),
        ("log start", "log_start"),
        ("ISR", "isr"),
    )
    table.add_column("broker", justify="right")
    for header, _key in columns:
        table.add_column(header)
    table.add_column("model log tail (offset:epoch:rid)")
    for b, r in enumerate(model.replicas):
        ours = {
            "running": r.alive,
            "leader": r.leader,
            "leader_epoch": r.leader_epoch,
            "leo": r.leo,
            "hw": r.hw,
            "log_start": r.log_start,
            "isr": list(r.isr),
        }
        cells = [str(b)]
        for _header, key in columns:
            if impl is None:
                cells.append(str(ours[key]))
                continue
            theirs = impl.get(b, {}).get(key, "?")
            cell = f"{ours[key]} / {theirs}"
            cells.append(cell if theirs == ours[key] else f"[bold red]{cell}[/bold red]")
        cells.append(" ".join(f"{e.offset}:{e.epoch}:{e.rid}" for e in r.log[-6:]))
        table.add_row(*cells)
    c = model.controller
    table.caption = (
        f"controller: leader {c.leader}, leader epoch {c.leader_epoch}, ISR {list(c.isr)}, "
        f"partition epoch {c.partition_epoch}, fenced {sorted(model.fenced)}; now {model.now_ms} ms"
    )
    return table


def make_adapter(name: str, cfg: AnyConfig | None = None) -> Adapter:
    """The implementation registered under ``name`` for ``cfg``'s slice (replication if None)."""
    if name == "reference":
        config = cfg if cfg is not None else ReplicationConfig()
        return for_config(config).make_reference()
    raise AdapterError(f"unknown implementation {name!r}")


def run_replay(cx: Counterexample, options: ReplayOptions, console: Console | None = None) -> int:
    """Replay ``cx`` and print the verdict. Exit codes (kconform.ci.exitcodes):

    - 1: the replay fails (a non-conformance or invariant violation), whether or not it is the
      recorded one (the output says which);
    - 0: every event conforms and every invariant holds; for a file that records a failure this
      means the failure is no longer reproduced (the bug is fixed: as a regression check it
      passes), and the output says "NOT reproduced";
    - 2: the replay could not decide: the implementation crashed or hung, or a step or the whole
      replay ran past its budget (the message names the step). A damaged file never gets here: the
      reader refuses it with exit 2 first.
    """
    console = console or Console()
    adapter = None if options.model_only else make_adapter(options.implementation, cx.config)
    try:
        result = replay(cx, adapter, options.step_timeout_s, options.run_timeout_s)
    except ReplayTimeout as exc:
        console.print(f"[red]kconform: error: replay stopped: {exc}[/red]")
        return 2
    except AdapterError as exc:
        console.print(f"[red]kconform: error: the implementation failed during replay: {exc}[/red]")
        return 2
    finally:
        if adapter is not None:
            adapter.close()
    mode = "recorded events (model only)" if adapter is None else f"implementation {options.implementation!r}"
    console.print(f"replayed {result.steps_replayed} of {len(cx.steps)} steps against {mode}")
    if cx.verdict.get("invariants") is not None:
        console.print(f"invariants checked (as recorded in the file): {', '.join(sorted(cx.checked or ()))}")
    if result.divergence:
        console.print(f"[yellow]the implementation did not reproduce the recorded events: {result.divergence}[/yellow]")
    for index, finding in result.findings:
        if not finding.failing:
            console.print(f"step {index}: [dim]{finding.verdict}[/dim] {finding.name}: {finding.message}")
    if result.failure is None:
        console.print("[green]no failure: every event conforms and every invariant holds[/green]")
        if cx.verdict.get("kind") != "pass":
            console.print(
                f"[yellow]the file records {cx.verdict.get('kind')} {cx.verdict.get('name')}: NOT reproduced[/yellow]"
            )
        return 0
    f = result.failure
    index = result.failing_step if result.failing_step is not None else -1
    where = f"step {index}: {cx.steps[index].op}" if 0 <= index < len(cx.steps) else "start-up"
    console.print(f"[bold red]{f.verdict}[/bold red] {f.name} at {where}")
    if f.event is not None:
        console.print(f"  event: {f.event.to_json()}")
    console.print(f"  {f.message}")
    view = tools_for(cx.config).state_table
    if view is not None and result.model_state is not None:
        console.print(view(result.model_state, result.impl_snapshot))
    elif result.model_state is not None:
        console.print(f"model state at the failing step: {result.model_state}")
    console.print(
        "[green]reproduces the recorded verdict[/green]"
        if result.reproduces(cx)
        else f"[yellow]differs from the recorded verdict {cx.verdict}[/yellow]"
    )
    return 1
