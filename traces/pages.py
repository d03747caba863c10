"""What every slice's HTML counterexample report shares: the model-only re-judging of a file step
by step, the page title, the step table's rows and the program-and-steps section.

Guarantees: ``rejudge`` judges the recorded events as ``kconform replay --model-only`` does and
stops after the first failing step; the helpers return HTML with every text escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from html import escape

from kconform.conformance.judge import Finding
from kconform.conformance.runner import LockstepRun, StepRecord
from kconform.traces.counterexample import Counterexample, format_program
from kconform.traces.operations import Boot, Operation
from kconform.traces.replay import RecordedEvents

START_UP = -1
"""The step index of the start-up frame (files whose steps do not begin with ``boot``)."""


def rejudge(cx: Counterexample) -> Iterator[tuple[int, Operation | None, StepRecord, LockstepRun]]:
    """Re-judge ``cx`` model-only: (step index, operation, the step's record, the run after it) for
    every step up to and including the first failing one. A file without a ``boot`` step yields a
    start-up step (START_UP, None) first."""
    run = LockstepRun(RecordedEvents(cx), cx.config, cx.seed, frozenset(cx.mutants), checked=cx.checked)
    if not cx.steps or not isinstance(cx.steps[0].op, Boot):
        yield START_UP, None, run.boot(), run
    for i, step in enumerate(cx.steps):
        if run.failed:
            return
        yield i, step.op, run.boot() if isinstance(step.op, Boot) else run.apply(step.op), run


def judged_rows(cx: Counterexample) -> tuple[list[str], LockstepRun]:
    """One step-table row per step, re-judged model-only up to the first failing step (then one
    row for the steps never judged), and the run after the last judged step (its judge holds what
    was accepted: coverage keys, the model state)."""
    rows = []
    last: LockstepRun | None = None
    judged = 0
    for i, op, record, run in rejudge(cx):
        last = run
        if op is None:
            continue
        judged = i + 1
        rows.append(step_row(str(i), str(op), len(record.events), record.findings, run.failed))
    if judged < len(cx.steps):
        rows.append(not_judged_row(len(cx.steps) - judged))
    assert last is not None  # rejudge yields the start-up or the first step at least
    return rows, last


def page_title(cx: Counterexample) -> tuple[str, str]:
    """(verdict kind, title): ``"<kind> <name> at step <n>"``, without the step for a pass."""
    v = cx.verdict
    kind, name = str(v["kind"]), str(v["name"])
    where = "" if kind == "pass" else f" at step {v['step']}"
    return kind, f"{kind} {name}{where}".strip()


def page_start(cx: Counterexample) -> list[str]:
    """The start of a page: the head with the title and the style, the heading, the file's
    implementation, configuration, seed and mutants, and the verdict."""
    _, title = page_title(cx)
    return [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>kconform: {escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:1.5em}pre{background:#f6f6f6;padding:.6em}"
        "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}"
        "tr.failing{background:#ffe0e0}</style></head><body>",
        f"<h1>kconform counterexample: {escape(title)}</h1>",
        f"<p><b>implementation</b> {escape(cx.implementation)}; <b>config</b> {escape(config_text(cx))}; "
        f"<b>seed</b> {cx.seed}; <b>mutants</b> {escape(', '.join(cx.mutants) or 'none')}</p>",
        f"<h2>Verdict</h2><pre>{escape(str(cx.verdict['message']))}</pre>",
    ]


def config_text(cx: Counterexample) -> str:
    """The file's configuration as ``key=value, ...``."""
    return ", ".join(f"{k}={val}" for k, val in cx.config.to_json().items())


def step_row(step: str, op: str, events: int, findings: Iterable[Finding], failing: bool) -> str:
    """One row of the step table: index, operation, how many events, the judge's findings."""
    text = "<br>".join(escape(f"{x.verdict} {x.name}: {x.message}") for x in findings)
    cls = " class='failing'" if failing else ""
    return f"<tr{cls}><td>{step}</td><td class='op'>{escape(op)}</td><td>{events}</td><td>{text}</td></tr>"


def not_judged_row(steps: int) -> str:
    """The row that stands for the ``steps`` steps after the failure, which the judge never reached."""
    return f"<tr><td colspan='4'>{steps} step(s) after the failure, not judged</td></tr>"


def program_and_steps(cx: Counterexample, rows: list[str]) -> list[str]:
    """The end of a page: the program, the step table with ``rows``, and the closing tags."""
    return [
        "<h2>Program</h2>",
        f"<pre>{escape(format_program(cx))}</pre>",
        "<h2>Steps</h2>",
        "<table><tr><th>step</th><th>operation</th><th>events</th><th>findings</th></tr>",
        *rows,
        "</table>",
        "</body></html>",
        "",
    ]
