"""The conformance gate: a budgeted lockstep campaign with a verdict, files and tables.

``kconform gate`` runs campaigns (the zoo, then random search by the seeded walk, or by Hypothesis
with ``--engine hypothesis``: conformance.hunt) against an implementation and exits 0 (pass),
1 (non-conformance or invariant violation found) or 2 (harness or input error). A failure is
shrunk, printed as a program and written as a counterexample file. ``--self-check`` runs one
campaign per mutant of the reference implementation and fails unless every mutant is caught and
its counterexample replays to the same verdict: the suite checks its own power.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.ci.junit import JUnitCase, write_junit
from kconform.ci.options import GateOptions
from kconform.ci.summary import InvariantRow, MutantRow, render
from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.coverage import Coverage
from kconform.conformance.hunt import CampaignResult, run_campaign
from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.registry import for_config
from kconform.conformance.runner import LockstepRun
from kconform.impl.mutants import config_for
from kconform.model.configs import AnyConfig
from kconform.traces.atomicfile import atomic_write_bytes
from kconform.traces.counterexample import (
    Counterexample,
    Step,
    format_program,
    make_verdict,
    write_counterexample,
)
from kconform.traces.replay import make_adapter, replay
from kconform.traces.report import report_path, write_report
from kconform.traces.tools import tools_for

DEFAULT_EXAMPLES = 200
DEFAULT_STEPS = 50
SELF_CHECK_SECONDS = 120.0
"""Time cap per mutant in --self-check (the acceptance target is a median under 60 s)."""


def counterexample_of(run: LockstepRun, implementation: str) -> Counterexample:
    """The run as a counterexample file: its steps up to and including the failing one."""
    assert run.failure is not None and run.failing_step is not None
    f = run.failure
    steps = tuple(Step(r.op, r.events) for r in run.steps[: run.failing_step + 1])
    return Counterexample(
        config=run.cfg,
        seed=run.seed,
        mutants=tuple(sorted(run.mutants)),
        implementation=implementation,
        verdict=make_verdict(f.verdict, f.name, f.message, run.failing_step),
        steps=steps,
    )


@dataclass(frozen=True)
class MutantOutcome:
    row: MutantRow
    path: Path | None
    replayed: bool


def _factory(name: str, cfg: AnyConfig) -> Callable[[], Adapter]:
    make_adapter(name, cfg).close()  # fail early on an unknown implementation
    return lambda: make_adapter(name, cfg)


def _campaign(
    options: GateOptions,
    cfg: AnyConfig,
    mutants: frozenset[str],
    seed: int,
    console: Console,
    label: str,
    examples: int | None,
    seconds: float | None,
) -> CampaignResult:
    factory = _factory(options.implementation, cfg)
    steps = options.steps or DEFAULT_STEPS
    if not options.progress:
        return run_campaign(
            factory, cfg, mutants, seed=seed, examples=examples, seconds=seconds, steps=steps, engine=options.engine
        )
    total = examples if examples is not None else None
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} runs"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(label, total=total)
        return run_campaign(
            factory,
            cfg,
            mutants,
            seed=seed,
            examples=examples,
            seconds=seconds,
            steps=steps,
            progress=lambda done, _runs: progress.update(task, completed=done),
            engine=options.engine,
        )


def _invariant_rows(result: CampaignResult, cfg: AnyConfig) -> list[InvariantRow]:
    log = result.log
    rows = [
        InvariantRow(name, log.all_runs_checks.get(name, 0), log.violations.get(name, 0), log.allowed.get(name, 0))
        for name in for_config(cfg).invariants()
    ]
    nonconf = (
        1
        if result.failure is not None
        and result.failure.failure is not None
        and (result.failure.failure.verdict == NON_CONFORMANCE)
        else 0
    )
    rows.append(InvariantRow("HandlerConformance", sum(log.actions.values()), nonconf, 0))
    return rows


def _coverage_table(cov: Coverage) -> Table:
    table = Table(title="handler outcomes exercised (events judged conformant)")
    table.add_column("event:outcome")
    table.add_column("count", justify="right")
    table.add_column("reachable")
    for key in sorted(set(cov.covered) | cov.reachable):
        table.add_row(key, str(cov.covered.get(key, 0)), "yes" if key in cov.reachable else "no")
    return table


def _write_coverage(options: GateOptions, cov: Coverage) -> Path:
    options.out.mkdir(parents=True, exist_ok=True)
    path = options.out / "coverage.json"
    doc = {**cov.to_json(), "min_coverage": options.min_coverage}
    atomic_write_bytes(path, (json.dumps(doc, indent=2) + "\n").encode("utf-8"))
    return path


PROGRAM_HEAD_LINES = 40
PROGRAM_TAIL_LINES = 80
"""A counterexample program longer than head + tail lines is printed with its middle elided (the
epoch-exhaustion scenario of the exactly-once zoo is 65,000 steps); the file holds every step."""


def _shown_program(program: str, path: Path) -> str:
    """``program`` as printed on the console: whole, or its first and last lines around a note
    naming the file that holds the elided steps."""
    lines = program.splitlines()
    if len(lines) <= PROGRAM_HEAD_LINES + PROGRAM_TAIL_LINES:
        return program
    elided = len(lines) - PROGRAM_HEAD_LINES - PROGRAM_TAIL_LINES
    note = f"# ... {elided} lines not shown: every step is in {path}"
    return "\n".join([*lines[:PROGRAM_HEAD_LINES], note, *lines[-PROGRAM_TAIL_LINES:]]) + "\n"


def _report_failure(run: LockstepRun, options: GateOptions, console: Console, name: str) -> Path:
    cx = counterexample_of(run, options.implementation)
    options.out.mkdir(parents=True, exist_ok=True)
    path = options.out / f"{name}.jsonl"
    write_counterexample(path, cx)
    write_report(cx, report_path(path))
    console.print(_shown_program(format_program(cx), path))
    console.print(f"report with the per-replica log timeline: {report_path(path)}")
    return path


def _self_check(options: GateOptions, seed: int, console: Console) -> list[MutantOutcome]:
    budget = options.seconds if options.seconds is not None else SELF_CHECK_SECONDS
    outcomes = []
    for name in sorted(for_config(options.config).mutants()):
        cfg = config_for(name, options.config)  # a mutant observable only under some config (MUTANT_CONFIG)
        if cfg != options.config:
            console.print(f"mutant {name} runs with {_describe(cfg)} (impl/mutants.py MUTANT_CONFIG)")
        started = time.perf_counter()
        result = _campaign(options, cfg, frozenset({name}), seed, console, f"mutant {name}", None, budget)
        seconds = time.perf_counter() - started
        if result.error is not None:
            raise result.error
        run = result.failure
        if run is None or run.failure is None:
            outcomes.append(MutantOutcome(MutantRow(name, False, "survived", None, None, seconds), None, False))
            console.print(f"[red]mutant {name} SURVIVED {seconds:.1f} s[/red]")
            continue
        path = _report_failure(run, options, console, f"mutant-{name}")
        cx = counterexample_of(run, options.implementation)
        adapter = make_adapter(options.implementation, cx.config)
        try:
            replayed = replay(cx, adapter).reproduces(cx)
        finally:
            adapter.close()
        verdict = f"{run.failure.verdict}: {run.failure.name}" + ("" if replayed else " (REPLAY DIFFERS)")
        row = MutantRow(name, replayed, verdict, run.failing_step, len(cx.steps), seconds)
        console.print(f"mutant {name}: caught in {seconds:.1f} s ({verdict}) -> {path}")
        outcomes.append(MutantOutcome(row, path, replayed))
    return outcomes


def _describe(cfg: AnyConfig) -> str:
    return for_config(cfg).describe(cfg)


def run_gate(options: GateOptions, console: Console | None = None) -> int:
    """Run the gate; return EXIT_PASS, EXIT_VIOLATION or EXIT_ERROR."""
    console = console or Console()
    seed = options.seed if options.seed is not None else random.randrange(2**31)
    cfg = options.config
    for name in options.mutants:  # run a planted mutant where it is observable, as --self-check does
        cfg = config_for(name, cfg)
    console.print(
        f"kconform gate: implementation={options.implementation} {_describe(cfg)} seed={seed}"
        + (f" mutants={','.join(options.mutants)}" if options.mutants else "")
    )
    if cfg != options.config:
        console.print(f"mutants {', '.join(options.mutants)} run with their impl/mutants.py MUTANT_CONFIG")
    cases: list[JUnitCase] = []
    try:
        if options.self_check:
            outcomes = _self_check(options, seed, console)
            rows = [o.row for o in outcomes]
            render(console, mutants=rows)
            cases = [
                JUnitCase(
                    o.row.mutant,
                    "kconform.mutants",
                    o.row.seconds,
                    None if o.row.caught else f"mutant survived or did not replay: {o.row.verdict}",
                )
                for o in outcomes
            ]
            code = EXIT_PASS if all(o.row.caught for o in outcomes) else EXIT_VIOLATION
        else:
            examples = options.examples
            if examples is None and options.seconds is None:
                examples = DEFAULT_EXAMPLES
            result = _campaign(
                options, cfg, frozenset(options.mutants), seed, console, "lockstep runs", examples, options.seconds
            )
            inv_rows = _invariant_rows(result, cfg)
            cov = Coverage(dict(result.log.covered), for_config(cfg).reachable_keys(cfg))
            console.print(_coverage_table(cov))
            console.print(cov.line())
            cov_path = _write_coverage(options, cov)
            for artifact in tools_for(cfg).coverage_artifacts:
                written = artifact.write(options.out, cov.covered, cfg, cov.line())
                console.print(f"{artifact.label}: {written}")
            render(console, invariants=inv_rows)
            console.print(
                f"{result.log.runs} state-machine runs, {result.log.steps} steps, "
                f"{sum(result.log.actions.values())} events judged in {result.seconds:.1f} s"
            )
            cases = [
                JUnitCase(
                    r.invariant,
                    "kconform.invariants",
                    result.seconds,
                    None if r.violations == 0 else f"{r.violations} violation(s)",
                )
                for r in inv_rows
            ]
            if result.error is not None:
                console.print(f"[red]kconform: error: {result.error}[/red]")
                console.print("the tables above count what was checked before the harness error")
                cases.append(JUnitCase("harness", "kconform", result.seconds, str(result.error)))
                code = EXIT_ERROR
            elif result.failure is not None and result.failure.failure is not None:
                f = result.failure.failure
                path = _report_failure(result.failure, options, console, f"counterexample-{seed}")
                console.print(f"[bold red]{f.verdict}[/bold red] {f.name}: {f.message}")
                if result.failure.cfg != cfg:  # a zoo scenario pinned to a configuration of its own
                    console.print(f"found on {_describe(result.failure.cfg)} (the zoo scenario's own configuration)")
                console.print(f"counterexample written to {path}; replay with: kconform replay {path}")
                code = EXIT_VIOLATION
            elif options.min_coverage is not None and cov.percent < options.min_coverage:
                message = (
                    f"coverage {cov.percent:.1f} % is below --min-coverage {options.min_coverage:g} %: "
                    f"missing {', '.join(cov.missing)}"
                )
                console.print(f"[bold red]FAIL[/bold red]: no non-conformance, but {message} (see {cov_path})")
                cases.append(JUnitCase("coverage", "kconform", result.seconds, message))
                code = EXIT_VIOLATION
            else:
                console.print(f"[green]PASS[/green]: no non-conformance and no invariant violation (seed {seed})")
                code = EXIT_PASS
            if not any(c.name == "coverage" for c in cases):
                cases.append(JUnitCase("coverage", "kconform", result.seconds))
    except AdapterError as exc:
        console.print(f"[red]kconform: error: the implementation failed: {exc}[/red]")
        cases.append(JUnitCase("harness", "kconform", 0.0, str(exc)))
        code = EXIT_ERROR
    if options.junit is not None:
        write_junit(options.junit, "kconform-gate", cases)
    return code


def run_all_gates(
    parts: list[tuple[str, GateOptions]],
    console: Console | None = None,
    jobs: int = 1,
    gate: Callable[[GateOptions, Console], int] | None = None,
) -> int:
    """Run the gate once per slice configuration (``kconform gate --slice all``) and end with one
    table: EXIT_ERROR if any part hit a harness error, else EXIT_VIOLATION if any failed, else
    EXIT_PASS. Every part runs even after one failed, so nothing already checkable is skipped.

    With ``jobs`` > 1 the parts run in that many worker processes at once (ci.gate_jobs): each
    part's output is printed whole, in the parts' order, and the table, files and exit code are
    those of the sequential run; a part whose worker raised or died is an ERROR naming it, and the
    others keep their verdicts. ``gate`` runs one part (default ``run_gate``; with workers, a
    module-level function a spawned process can import)."""
    console = console or Console()
    gate = gate or run_gate
    started = time.perf_counter()
    codes: list[tuple[str, int, float]] = []
    if jobs <= 1 or len(parts) <= 1:
        for name, options in parts:
            console.rule(f"[bold]{name}")
            part_started = time.perf_counter()
            codes.append((name, gate(options, console), time.perf_counter() - part_started))
    else:
        codes = _run_parts_in_workers(parts, console, jobs, gate)
    table = Table(title="kconform gate: every slice")
    table.add_column("slice")
    table.add_column("verdict")
    table.add_column("seconds", justify="right")
    table.add_column("files")
    words = {EXIT_PASS: "[green]PASS[/green]", EXIT_VIOLATION: "[red]FAIL[/red]", EXIT_ERROR: "[red]ERROR[/red]"}
    for (name, code, seconds), (_n, options) in zip(codes, parts, strict=True):
        table.add_row(name, words[code], f"{seconds:.1f}", str(options.out))
    console.print(table)
    if jobs > 1 and len(parts) > 1:
        console.print(
            f"{len(parts)} configurations in {min(jobs, len(parts))} worker processes: "
            f"{time.perf_counter() - started:.1f} s wall"
        )
    all_codes = {code for _name, code, _s in codes}
    return EXIT_ERROR if EXIT_ERROR in all_codes else EXIT_VIOLATION if EXIT_VIOLATION in all_codes else EXIT_PASS


def _run_parts_in_workers(
    parts: list[tuple[str, GateOptions]], console: Console, jobs: int, gate: Callable[[GateOptions, Console], int]
) -> list[tuple[str, int, float]]:
    """``run_all_gates``' parts in worker processes; each part's output printed in order, whole."""
    from kconform.ci import gate_jobs

    show_progress = any(options.progress for _n, options in parts) and console.is_terminal
    quiet = [(name, replace(options, progress=False)) for name, options in parts]  # a worker has no terminal
    finished: list[str] = []

    def status_line() -> str:
        return f"kconform gate: {len(finished)} of {len(parts)} configurations done ({min(jobs, len(parts))} workers)"

    def on_done(_index: int, name: str, result: gate_jobs.PartResult) -> None:
        console.rule(f"[bold]{name}")
        console.print(gate_jobs.shown_output(result), end="", soft_wrap=True)
        if result.error is not None:
            console.print(f"[red]kconform: error: the {name} gate failed: {result.error}[/red]")
            console.print("no verdict for this configuration; the others ran on")
        finished.append(name)
        if status is not None:
            status.update(status_line())

    with contextlib.ExitStack() as stack:
        status = stack.enter_context(console.status(status_line())) if show_progress else None
        results = gate_jobs.run_parallel(quiet, console, jobs, gate, on_done)
    return [(name, r.code, r.seconds) for (name, _o), r in zip(parts, results, strict=True)]
