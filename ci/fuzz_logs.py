"""The ``logs`` kind of the fuzz harness at 10^5 cases: every damaged log through the library pass
of ``kconform logs check``, a sample through the whole command line in this process and a smaller
sample through a real ``python -m kconform.ci.cli`` subprocess, exit codes compared.

Each case of :func:`fuzz_logs` damages a real fixture (kconform.ci.fuzzing.mutate_log: lines cut
where they stand, binary garbage blocks, mixed encodings, enormous lines, byte-wise damage) and runs
:func:`library_case` on it: everything ``kconform logs check PATH --out DIR`` computes from its input
(parse, every check, the excerpts written for findings, the bytes of ``report.json`` and
``report.html``, the exit code), without rendering the console tables and without writing (fsyncing)
the two reports, which cost most of a case's time and whose content does not depend on the damage
beyond what their bytes hold. An exception escaping it is a traceback (a failure), a case running
past ``hang_s`` a hang. Every ``cli_every``-th case also runs the whole command in this process
(kconform.ci.fuzzing.run_case: argument parsing, the rich tables, the written reports) and every
``subprocess_every``-th case a real subprocess; an exit code that differs from the library pass's
is a failure too (``disagreements``).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kconform.ci.fuzzing import Hang, Outcome, Tally, mutate_log, run_case
from kconform.conformance.runner import alarm


def _alarm(seconds: float) -> contextlib.AbstractContextManager[None]:
    """Raise :class:`Hang` after ``seconds`` (kconform.conformance.runner.alarm: SIGALRM, no thread per
    case, unlike kconform.ci.fuzzing's watchdog, which leaves SIGALRM to replay's own budget; the
    library pass of ``logs check`` sets no alarm of its own)."""
    return alarm(seconds, Hang)


def library_case(path: Path, work: Path) -> int:
    """The exit code ``kconform logs check path --out work`` gives, computed in this process as the
    command computes it (kconform.ci.logs.cmd_check) minus its console output and report files:
    parse and check, write the excerpts of the findings under ``work/excerpts``, build the bytes of
    both reports. Exceptions propagate (a crash of the command)."""
    from kconform.ci.logs import exit_code
    from kconform.traces.logs.excerpt import write_excerpts
    from kconform.traces.logs.report import html_bytes, json_bytes
    from kconform.traces.logs.run import check_paths

    run = check_paths([path])
    excerpts = write_excerpts(run.checks, work / "excerpts")
    json_bytes(run, excerpts)
    html_bytes(run)
    return exit_code(run)


@dataclass
class LogsTally(Tally):
    """A :class:`Tally` of library-pass cases, plus the sampled command-line runs."""

    cli_cases: int = 0
    subprocess_cases: int = 0
    cli_exits: dict[int, int] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)
    """Cases whose command line (in process or subprocess) answered another exit code, crashed or hung."""
    subprocess_cpu_seconds: float = 0.0


def _subprocess_case(path: Path, out: Path, hang_s: float) -> tuple[int | None, bool, str]:
    """(exit code or None on a hang, traceback seen, stderr tail) of a real ``kconform logs check``."""
    argv = [sys.executable, "-m", "kconform.ci.cli", "logs", "check", str(path), "--out", str(out)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=hang_s, check=False)
    except subprocess.TimeoutExpired:
        return None, False, "timed out"
    err = done.stderr
    return done.returncode, "Traceback (most recent call last)" in err or "internal error" in err, err[-300:]


def fuzz_logs(
    samples: list[Path],
    cases: int,
    seed: int,
    scratch: Path,
    hang_s: float = 60.0,
    deadline: float | None = None,
    cli_every: int = 50,
    subprocess_every: int = 2000,
    progress: Callable[[int], None] | None = None,
) -> LogsTally:
    """Run ``cases`` damaged copies of ``samples`` (round robin) through :func:`library_case`, every
    ``cli_every``-th also through the command line in this process and every ``subprocess_every``-th
    through a subprocess (0: never); with a ``deadline`` (``time.monotonic()``) stop after the first
    case ending past it."""
    rng = random.Random(seed)
    tally = LogsTally()
    scratch.mkdir(parents=True, exist_ok=True)
    before = os.times()
    try:
        for case in range(cases):
            sample = samples[case % len(samples)]
            work = scratch / "case"
            if case == 0:
                work.mkdir()
            elif (work / "excerpts").exists():
                shutil.rmtree(work / "excerpts")  # the previous case's findings
            dst = work / ("input" + sample.suffix)
            mutation = mutate_log(rng, sample, dst)
            label = f"case {case}: {mutation.what} of {sample.name}"
            started = time.perf_counter()
            code: int | None = None
            crash = hang = False
            stderr = ""
            try:
                with _alarm(hang_s):
                    code = library_case(dst, work)
            except Hang:
                hang = True
            except Exception as e:  # an exception escaping the command's work: a traceback
                crash, stderr = True, f"{type(e).__name__}: {e}"
            outcome = Outcome(code, crash, hang, time.perf_counter() - started, stderr)
            tally.add(outcome, mutation, ["logs", "check", f"<{sample.name} damaged, case {case}>"], None)
            if code is not None and cli_every and case % cli_every == 0:
                _compare_cli(tally, dst, work, code, hang_s, label)
            if code is not None and subprocess_every and case % subprocess_every == 0:
                _compare_subprocess(tally, dst, work, code, hang_s, label)
            if progress is not None:
                progress(case)
            if deadline is not None and time.monotonic() >= deadline:
                break
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    after = os.times()
    tally.subprocess_cpu_seconds = (
        after.children_user + after.children_system - before.children_user - before.children_system
    )
    return tally


def _compare_cli(tally: LogsTally, path: Path, work: Path, code: int, hang_s: float, label: str) -> None:
    outcome = run_case(["logs", "check", str(path), "--out", str(work / "cli")], hang_s)
    tally.cli_cases += 1
    if outcome.code is not None:
        tally.cli_exits[outcome.code] = tally.cli_exits.get(outcome.code, 0) + 1
    if outcome.hang or outcome.traceback or outcome.code != code:
        tail = outcome.stderr.strip().splitlines()[-1][:200] if outcome.stderr.strip() else ""
        tally.disagreements.append(f"{label}: command line exit {outcome.code} (library {code}) {tail}")


def _compare_subprocess(tally: LogsTally, path: Path, work: Path, code: int, hang_s: float, label: str) -> None:
    got, traceback, tail = _subprocess_case(path, work / "sub", hang_s)
    tally.subprocess_cases += 1
    if got is None or traceback or got != code:
        tally.disagreements.append(f"{label}: subprocess exit {got} (library {code}) {tail}")
