"""The end-of-run tables, rendered to a recording console."""

from __future__ import annotations

from rich.console import Console

from kconform.ci.summary import InvariantRow, MutantRow, invariant_table, mutant_table, render


def _console() -> Console:
    return Console(record=True, width=160, color_system=None)


INVARIANTS = [
    InvariantRow("LeaderCompleteness", steps_checked=12_345, violations=0, allowed=2),
    InvariantRow("StrongIsr", steps_checked=800, violations=3),
]
MUTANTS = [
    MutantRow(
        "skip_truncation",
        caught=True,
        verdict="LeaderCompleteness",
        steps_to_first_failure=17,
        counterexample_length=6,
        seconds=1.234,
    ),
    MutantRow("hw_from_any_replica", caught=False, seconds=30.0),
]


def _lines(text: str) -> list[list[str]]:
    """Each table row's cells, splitting rich's box-drawing separators."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").split("│")]
        rows.append([c for c in cells if c])
    return rows


def test_invariant_table() -> None:
    console = _console()
    console.print(invariant_table(INVARIANTS))
    rows = _lines(console.export_text())
    assert ["invariant", "steps checked", "violations", "allowed"] in rows
    assert ["LeaderCompleteness", "12,345", "0", "2"] in rows
    assert ["StrongIsr", "800", "3", "0"] in rows


def test_mutant_table() -> None:
    console = _console()
    console.print(mutant_table(MUTANTS))
    rows = _lines(console.export_text())
    header = ["mutant", "caught", "verdict", "steps to first failure", "counterexample length", "seconds"]
    assert header in rows
    assert ["skip_truncation", "yes", "LeaderCompleteness", "17", "6", "1.2"] in rows
    assert ["hw_from_any_replica", "NO", "-", "-", "-", "30.0"] in rows


def test_render_prints_both_tables_with_titles() -> None:
    console = _console()
    render(console, invariants=INVARIANTS, mutants=MUTANTS)
    text = console.export_text()
    assert text.index("Invariants") < text.index("LeaderCompleteness") < text.index("Mutants")
    assert "allowed: failures the configuration permits" in text


def test_render_skips_empty_tables() -> None:
    console = _console()
    render(console, invariants=INVARIANTS)
    text = console.export_text()
    assert "Invariants" in text
    assert "Mutants" not in text
    console = _console()
    render(console)
    assert console.export_text() == ""


def test_missed_mutant_is_red() -> None:
    console = Console(record=True, width=160, force_terminal=True, color_system="truecolor")
    console.print(mutant_table(MUTANTS[1:]))
    html = console.export_html(inline_styles=True)
    assert "NO" in html
    assert "color: #800000" in html or "color: #ff0000" in html
