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


def page_title(cx: Counterexample) -> tuple[str, str]:
    """(verdict kind, title): ``"<kind> <name> at step <n>"``, without the step for a pass."""
    v = cx.verdict
    kind, name = str(v["kind"]), str(v["name"])
    where = "" if kind == "pass" else f" at step {v['step']}"
    return kind, f"{kind} {name}{where}".strip()


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
