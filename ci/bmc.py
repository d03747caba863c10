"""``kconform bmc``: z3 bounded model checking of the model, and inductive invariant checks.

Issue 5. Runs the bounded model checking of the config's slice (conformance.registry.search_of: for
replication conformance.replication.bmc.bmc) for lengths 0, 1, ..., --steps and prints each length's verdict
and solve time. The first length with a violation is the proven-minimal length of any violating
run within the bounds (all shorter ones were UNSAT): the run is printed, written as the suite's
ordinary counterexample file (the slice's ``ModelSearch.counterexample``, replayable with
``kconform replay FILE --model-only``) and the exit code is 1. UNSAT up to --steps exits 0 with
the time. With ``--inductive`` it prints, per invariant, whether it is inductive alone, inductive
with a strengthening (the other invariants it needs), or not, with the counterexample to induction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kconform.ci.exitcodes import EXIT_PASS
from kconform.ci.explore import write_violation
from kconform.ci.options import DEFAULT_OUT_DIR
from kconform.conformance.registry import for_config, search_of
from kconform.conformance.slice import ModelSearch
from kconform.model.actions import SearchBounds
from kconform.model.configs import AnyConfig

INDUCTION_SLOTS = 4
"""Partition epochs 0..3 in the induction checks (the bounded system they are proofs for)."""


@dataclass(frozen=True)
class BmcOptions:
    """Options of ``kconform bmc``: the configuration, the search bounds, the invariants (None:
    all), the longest run searched, where the counterexample goes, whether to run the inductive
    checks instead, and how each length is solved."""

    config: AnyConfig
    """A config of a slice with a model search (conformance.registry.search_of)."""
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
    """Where the counterexample goes: ``<out>/bmc-<label>.jsonl`` (replication: the protocol rung)."""
    return options.out / f"bmc-{_search(options.config).label(options.config)}.jsonl"


def _search(cfg: AnyConfig) -> ModelSearch[Any]:
    return search_of(for_config(cfg))


def _invariants(cfg: AnyConfig) -> Mapping[str, Any]:
    return for_config(cfg).invariants()


def run_bmc(options: BmcOptions, console: Console | None = None) -> int:
    """Bounded model checking (or the inductive table); EXIT_VIOLATION on a violating run,
    EXIT_PASS when every length up to --steps is UNSAT (or after the inductive table)."""
    console = console or Console()
    cfg, bounds, search = options.config, options.bounds, _search(options.config)
    checked = "all invariants" if options.invariants is None else ", ".join(sorted(options.invariants))
    console.print(
        f"{'induction' if options.inductive else 'bounded model checking'} of {search.header(cfg)} with z3: "
        f"{bounds.max_records} records, "
        f"leader epochs <= {bounds.max_leader_epoch}"
        + (f", partition epochs <= {bounds.max_partition_epoch}" if bounds.max_partition_epoch is not None else "")
        + f"; {checked}",
        soft_wrap=True,
    )
    if options.inductive:
        names = sorted(options.invariants) if options.invariants is not None else list(_invariants(cfg))
        console.print(induction_table(cfg, bounds, names))
        return EXIT_PASS
    console.print("length k: is there a violating run of exactly k actions? (each line as it is decided)")
    console.print(f"{'k':>4}  {'result':<16}  {'solve s':>9}")

    def report(k: int, found: bool, seconds: float) -> None:
        verdict = "[red]SAT (violation)[/red]" if found else "UNSAT" + " " * 11
        console.print(f"{k:>4}  {verdict}  {seconds:>9.2f}")

    result = search.bmc(cfg, bounds, options.invariants, options.steps, report, options.solving, options.reduce)
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
    return write_violation(
        console,
        "the run from the booted cluster (broker 0 leading epoch 0):",
        v.path,
        lambda: search.counterexample(cfg, bounds, v, options.invariants),
        counterexample_path(options),
    )


def strengthen(cfg: AnyConfig, bounds: SearchBounds, name: str) -> list[Any]:
    """The induction attempts for ``name`` (the slice's ``ModelSearch.inductive`` results): alone;
    then with each other state invariant; then with all of them. Stops at the first inductive
    conjunction (the last result)."""
    inductive, known = _search(cfg).inductive, _invariants(cfg)
    attempts = [inductive(cfg, bounds, name, (), INDUCTION_SLOTS)]
    if attempts[-1].inductive:
        return attempts
    others = [n for n in known if n != name and known[n].state_check is not None]
    for other in others:
        attempts.append(inductive(cfg, bounds, name, (other,), INDUCTION_SLOTS))
        if attempts[-1].inductive:
            return attempts
    attempts.append(inductive(cfg, bounds, name, tuple(others), INDUCTION_SLOTS))
    return attempts


def induction_table(cfg: AnyConfig, bounds: SearchBounds, names: Sequence[str]) -> Table:
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
