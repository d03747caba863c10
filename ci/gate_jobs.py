"""``kconform gate --slice all --jobs N``: the slice configurations' gates in worker processes.

Each configuration's gate (``ci.gate.run_gate``) runs in a spawned worker process whose console
output is captured; the parent prints each configuration's output whole, in the configurations'
order (never interleaved), as soon as it and every configuration before it are done. What a worker
sends back is its exit code, its wall-clock seconds and its output; its files (counterexamples,
reports, coverage, JUnit) are written by the worker to its configuration's own directory, as in the
sequential run.

Guarantees:

- At most ``jobs`` workers run at once; the configurations start in their order.
- A worker that raises, or dies without an answer (killed, out of memory), counts as a harness
  error of its configuration (EXIT_ERROR), reported with the configuration's name; the other
  configurations run on and keep their verdicts.
- Every worker is torn down when the parent stops early: an exception, Ctrl-C (SIGINT) or
  SIGTERM (an outer timeout such as CI's or ``timeout(1)``): SIGTERM to each, a bounded wait
  (``TERM_GRACE_S``), then SIGKILL. A worker ignores SIGINT (the terminal sends it to the whole
  process group; the parent decides) and exits by itself if its parent disappears.
- Every wait is bounded: the parent wakes at least every ``POLL_S`` seconds.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import FrameType

from rich.console import Console
from rich.text import Text

from kconform.ci.exitcodes import EXIT_ERROR
from kconform.ci.options import GateOptions

GateRun = Callable[[GateOptions, Console], int]
"""What a worker runs for one configuration: ``ci.gate.run_gate`` (a module-level function, so a
spawned worker can import it by name)."""

TERM_GRACE_S = 3.0
"""How long a worker gets between SIGTERM and SIGKILL on teardown."""
POLL_S = 1.0
"""The longest the parent waits before looking at its workers again."""
ORPHAN_POLL_S = 1.0
"""How often a worker checks that its parent is still there."""


def default_jobs(parts: int) -> int:
    """``--jobs``'s default: one worker per core, at most one per configuration."""
    return max(1, min(os.cpu_count() or 1, parts))


@dataclass(frozen=True)
class ConsoleSpec:
    """How the parent's console renders (a Console cannot be sent to a worker)."""

    width: int
    color_system: str | None
    force_terminal: bool

    @staticmethod
    def of(console: Console) -> ConsoleSpec:
        return ConsoleSpec(console.width, console.color_system, console.is_terminal)


@dataclass(frozen=True)
class PartResult:
    """One configuration's outcome: its exit code, wall seconds, captured output and, when the
    worker failed (raised or died), the reason, naming what happened."""

    code: int
    seconds: float
    output: str
    error: str | None = None


class Stopped(KeyboardInterrupt):
    """The parent received SIGTERM while its workers ran (raised in the parent's main thread): handled
    like Ctrl-C, the workers torn down and no verdict (the command line's exit 2, "interrupted")."""


def run_parallel(
    parts: Sequence[tuple[str, GateOptions]],
    console: Console,
    jobs: int,
    run: GateRun,
    on_done: Callable[[int, str, PartResult], None],
) -> list[PartResult]:
    """Run ``run(options, console)`` for every part in at most ``jobs`` worker processes; call
    ``on_done(index, name, result)`` for each part in the parts' order (part ``i`` once parts
    ``0..i`` are done) and return the results in that order. Workers are torn down on every exit."""
    spec = ConsoleSpec.of(console)
    ctx = multiprocessing.get_context("spawn")  # no fork: the parent may hold threads
    results: dict[int, PartResult] = {}
    running: dict[int, tuple[BaseProcess, Connection, float]] = {}
    waiting = list(range(len(parts)))
    shown = 0
    with _workers_torn_down(running), _sigterm_raises():
        while waiting or running:
            while waiting and len(running) < jobs:
                i = waiting.pop(0)
                name, options = parts[i]
                receive, send = ctx.Pipe(duplex=False)
                worker = ctx.Process(
                    target=_work, args=(run, options, spec, send, os.getpid()), name=f"kconform-gate-{name}"
                )
                worker.start()
                send.close()  # the worker holds the sending end; EOF here means it is gone
                running[i] = (worker, receive, time.perf_counter())
            ready = set(wait([w for p, c, _t in running.values() for w in (c, p.sentinel)], POLL_S))
            for i, (proc, conn, started) in list(running.items()):
                if conn not in ready and proc.sentinel not in ready:
                    continue
                results[i] = _collect(parts[i][0], proc, conn, started)
                del running[i]
            while shown in results:
                on_done(shown, parts[shown][0], results[shown])
                shown += 1
    return [results[i] for i in range(len(parts))]


def _collect(name: str, proc: BaseProcess, conn: Connection, started: float) -> PartResult:
    """The result a finished (or dead) worker sent, or an error result naming how it ended."""
    answer: object = None
    with contextlib.suppress(EOFError, OSError):
        if conn.poll(0):
            answer = conn.recv()
    conn.close()
    proc.join(TERM_GRACE_S)
    if proc.is_alive():  # answered but did not exit: it has nothing more to say
        _stop([proc])
    if isinstance(answer, PartResult):
        return answer
    code = proc.exitcode
    how = "no exit code" if code is None else f"exit code {code}" if code >= 0 else f"killed by signal {-code}"
    message = f"the {name} gate's worker ended without a verdict ({how})"
    return PartResult(EXIT_ERROR, time.perf_counter() - started, "", message)


@contextlib.contextmanager
def _workers_torn_down(running: dict[int, tuple[BaseProcess, Connection, float]]) -> Iterator[None]:
    try:
        yield
    finally:
        _stop([p for p, _c, _t in running.values()])
        for _p, conn, _t in running.values():
            conn.close()


def _stop(procs: Sequence[BaseProcess]) -> None:
    """SIGTERM to every live worker at once, one bounded wait, then SIGKILL and a bounded reap."""
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + TERM_GRACE_S
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
    for proc in procs:
        if proc.is_alive():
            proc.kill()
            proc.join(TERM_GRACE_S)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises ``Stopped`` in the parent while workers run (so the teardown above runs);
    the previous handler is back on exit. Outside the main thread nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Stopped(f"stopped by signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# ------------------------------------------------------------------------------------------------
# The worker


def _work(run: GateRun, options: GateOptions, spec: ConsoleSpec, send: Connection, parent: int) -> None:
    """A worker's body: run one configuration's gate on a console that records into a buffer
    (standard output too), and send back a PartResult; an exception is sent back as an error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=spec.width,
        color_system=spec.color_system,  # type: ignore[arg-type]
        force_terminal=spec.force_terminal,
    )
    started = time.perf_counter()
    error: str | None = None
    try:
        with contextlib.redirect_stdout(buffer):
            code = run(options, console)
    except BaseException as exc:  # reported to the parent by the configuration's name
        code = EXIT_ERROR
        error = f"{type(exc).__name__}: {exc}"
        traceback.print_exc()  # to the shared standard error, for the bug report
    send.send(PartResult(code, time.perf_counter() - started, buffer.getvalue(), error))
    send.close()


def _exit_when_orphaned(parent: int) -> None:
    """End the worker at once if its parent is gone (killed with SIGKILL, so it tore nothing down)."""
    while os.getppid() == parent:
        time.sleep(ORPHAN_POLL_S)
    os._exit(EXIT_ERROR)


def shown_output(result: PartResult) -> Text:
    """A worker's captured output as styled text for the parent's console (its ANSI codes parsed)."""
    return Text.from_ansi(result.output, end="")
