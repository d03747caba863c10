"""The gate's end-of-run tables: what each invariant checked and which mutants the suite caught.

Rows are plain data; the gate fills them, these functions only lay them out with rich.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text


@dataclass(frozen=True)
class InvariantRow:
    """One invariant or rule: how many steps it judged, how many violations it found, and how many
    of its failures the configuration permits (acks=1 loss, unclean election) and were not counted."""

    invariant: str
    steps_checked: int
    violations: int
    allowed: int = 0


@dataclass(frozen=True)
class MutantRow:
    """One mutant run: whether the suite caught it, the verdict that did (e.g. the invariant name),
    after how many steps the first failure appeared, the shrunk counterexample's length and the
    wall-clock seconds spent. Steps and length are None when the mutant was not caught."""

    mutant: str
    caught: bool
    verdict: str = ""
    steps_to_first_failure: int | None = None
    counterexample_length: int | None = None
    seconds: float = 0.0


def invariant_table(rows: Sequence[InvariantRow]) -> Table:
    """A table with columns invariant, steps checked, violations, allowed."""
    table = Table(title="Invariants", caption="allowed: failures the configuration permits (not violations)")
    table.add_column("invariant", style="bold")
    table.add_column("steps checked", justify="right")
    table.add_column("violations", justify="right")
    table.add_column("allowed", justify="right")
    for row in rows:
        table.add_row(
            row.invariant,
            f"{row.steps_checked:,}",
            Text(str(row.violations), style="bold red" if row.violations else "green"),
            Text(str(row.allowed), style="yellow" if row.allowed else ""),
        )
    return table


def mutant_table(rows: Sequence[MutantRow]) -> Table:
    """A table with columns mutant, caught (yes/NO), verdict, steps to first failure,
    counterexample length, seconds."""
    table = Table(title="Mutants")
    table.add_column("mutant", style="bold")
    table.add_column("caught")
    table.add_column("verdict")
    table.add_column("steps to first failure", justify="right")
    table.add_column("counterexample length", justify="right")
    table.add_column("seconds", justify="right")
    for row in rows:
        table.add_row(
            row.mutant,
            Text("yes", style="green") if row.caught else Text("NO", style="bold red"),
            row.verdict or "-",
            _optional(row.steps_to_first_failure),
            _optional(row.counterexample_length),
            f"{row.seconds:.1f}",
        )
    return table


def render(
    console: Console,
    invariants: Sequence[InvariantRow] = (),
    mutants: Sequence[MutantRow] = (),
) -> None:
    """Print the invariant table and the mutant table to ``console``; an empty list prints nothing."""
    if invariants:
        console.print(invariant_table(invariants))
    if mutants:
        console.print(mutant_table(mutants))


def _optional(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
