"""``kconform bmc``: z3 bounded model checking of the model, and inductive invariant checks.

Issue 5. Runs conformance.replication.bmc.bmc for lengths 0, 1, ..., --steps and prints each length's verdict
and solve time. The first length with a violation is the proven-minimal length of any violating
run within the bounds (all shorter ones were UNSAT): the run is printed, written as the suite's
ordinary counterexample file (conformance.replication.pathevents.path_counterexample, replayable with
``kconform replay FILE --model-only``) and the exit code is 1. UNSAT up to --steps exits 0 with
the time. With ``--inductive`` it prints, per invariant, whether it is inductive alone, inductive
with a strengthening (the other invariants it needs), or not, with the counterexample to induction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kconform.ci.exitcodes import EXIT_PASS, EXIT_VIOLATION
from kconform.ci.options import DEFAULT_OUT_DIR
from kconform.conformance.replication.bmc import InductionResult, bmc, inductive
from kconform.conformance.replication.pathevents import path_counterexample
from kconform.model.actions import SearchBounds
from kconform.model.config import ReplicationConfig
from kconform.model.invariants import INVARIANTS
from kconform.traces.counterexample import write_counterexample

INDUCTION_SLOTS = 4
"""Partition epochs 0..3 in the induction checks (the bounded system they are proofs for)."""


@dataclass(frozen=True)
class BmcOptions:
    """Options of ``kconform bmc``: the configuration, the search bounds, the invariants (None:
    all), the longest run searched, where the counterexample goes, whether to run the inductive
    checks instead, and how each length is solved."""

    config: ReplicationConfig
    bounds: SearchBounds = field(default_factory=SearchBounds)
    invariants: frozenset[str] | None = None
    steps: int = 12
    out: Path = DEFAULT_OUT_DIR
    inductive: bool = False
    solving: str = "fresh"
    """conformance.replication.bmc.SOLVING: how each length is solved (same verdicts, different times)."""
    reduce: bool = True
    """Search only runs in partial-order normal form (conformance.replication.bmc.bmc; same verdicts)."""


def counterexample_path(options: BmcOptions) -> Path:
    """Where the counterexample goes: ``<out>/bmc-<protocol>.jsonl``."""
    return options.out / f"bmc-{options.config.protocol.value}.jsonl"


def run_bmc(options: BmcOptions, console: Console | None = None) -> int:
    """Bounded model checking (or the inductive table); EXIT_VIOLATION on a violating run,
    EXIT_PASS when every length up to --steps is UNSAT (or after the inductive table)."""
    console = console or Console()
    cfg, bounds = options.config, options.bounds
    checked = "all invariants" if options.invariants is None else ", ".join(sorted(options.invariants))
    console.print(
        f"{'induction' if options.inductive else 'bounded model checking'} of {cfg.protocol.value} with z3: "
        f"{cfg.replicas} replicas, min.insync.replicas {cfg.min_insync_replicas}, {bounds.max_records} records, "
        f"leader epochs <= {bounds.max_leader_epoch}"
        + (f", partition epochs <= {bounds.max_partition_epoch}" if bounds.max_partition_epoch is not None else "")
        + f"; {checked}",
        soft_wrap=True,
    )
    if options.inductive:
        names = sorted(options.invariants) if options.invariants is not None else list(INVARIANTS)
        console.print(induction_table(cfg, bounds, names))
        return EXIT_PASS
    console.print("length k: is there a violating run of exactly k actions? (each line as it is decided)")
    console.print(f"{'k':>4}  {'result':<16}  {'solve s':>9}")

    def report(k: int, found: bool, seconds: float) -> None:
        verdict = "[red]SAT (violation)[/red]" if found else "UNSAT" + " " * 11
        console.print(f"{k:>4}  {verdict}  {seconds:>9.2f}")

    result = bmc(cfg, bounds, options.invariants, options.steps, report, options.solving, options.reduce)
    v = result.found
    if v is None:
        console.print(
            f"[green]no violation up to {result.checked_steps} steps[/green] (UNSAT for every length), "
            f"{result.seconds:.2f} s in all",
            soft_wrap=True,
        )
        return EXIT_PASS
    console.print(
        f"[bold red]invariant-violation[/bold red] {v.invariant} at minimal length {v.depth} "
        f"(every shorter length UNSAT), {result.seconds:.2f} s in all: {escape(v.message)}",
        soft_wrap=True,
    )
    console.print("the run from the booted cluster (broker 0 leading epoch 0):")
    for i, label in enumerate(v.path, start=1):
        console.print(f"  {i:>3}. {escape(label)}")
    cx = path_counterexample(cfg, bounds, v, options.invariants)
    path = counterexample_path(options)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_counterexample(path, cx)
    console.print(
        f"counterexample written to {escape(str(path))}; replay with: kconform replay {escape(str(path))} --model-only",
        soft_wrap=True,
    )
    return EXIT_VIOLATION


def strengthen(cfg: ReplicationConfig, bounds: SearchBounds, name: str) -> list[InductionResult]:
    """The induction attempts for ``name``: alone; then with each other state invariant; then with
    all of them. Stops at the first inductive conjunction (the last result)."""
    attempts = [inductive(cfg, bounds, name, (), INDUCTION_SLOTS)]
    if attempts[-1].inductive:
        return attempts
    others = [n for n in INVARIANTS if n != name and INVARIANTS[n].state_check is not None]
    for other in others:
        attempts.append(inductive(cfg, bounds, name, (other,), INDUCTION_SLOTS))
        if attempts[-1].inductive:
            return attempts
    attempts.append(inductive(cfg, bounds, name, tuple(others), INDUCTION_SLOTS))
    return attempts


def induction_table(cfg: ReplicationConfig, bounds: SearchBounds, names: Sequence[str]) -> Table:
    """One row per invariant: inductive alone, with a strengthening, or not (with the CTI)."""
    table = Table(title=f"one step from any well-formed bounded state (partition epochs < {INDUCTION_SLOTS})")
    table.add_column("invariant")
    table.add_column("verdict")
    table.add_column("strengthening")
    table.add_column("counterexample to induction (alone)")
    table.add_column("s", justify="right")
    for name in names:
        attempts = strengthen(cfg, bounds, name)
        last = attempts[-1]
        seconds = sum(a.seconds for a in attempts)
        first = attempts[0]
        cti = "" if first.inductive else f"{first.cti_label} breaks {', '.join(first.broken)}"
        if last.inductive and not last.strengthening:
            verdict, strengthening = "[green]inductive[/green]", "none"
        elif last.inductive:
            verdict, strengthening = "[yellow]needs strengthening[/yellow]", " ∧ ".join(last.strengthening)
        else:
            verdict, strengthening = "[red]not inductive[/red]", "none of the invariants suffices"
        if not last.initial:
            verdict += " (fails in the booted state)"
        table.add_row(name, verdict, strengthening, escape(cti), f"{seconds:.1f}")
    return table
