"""The HTML report of an exactly-once counterexample: verdict, program and the steps as judged."""

from __future__ import annotations

from html import escape

from kconform.conformance.runner import LockstepRun
from kconform.model.txn_config import TxnConfig
from kconform.traces.counterexample import Counterexample, format_program
from kconform.traces.operations import Boot
from kconform.traces.txn_picture import txn_state_svg


def _rows(cx: Counterexample) -> tuple[list[str], dict[str, int]]:
    """One table row per step, re-judged model-only up to the first failing step, and the
    coverage keys of what the judge accepted (for the state-machine picture)."""
    from kconform.traces.replay import RecordedEvents

    run = LockstepRun(RecordedEvents(cx), cx.config, cx.seed, frozenset(cx.mutants), checked=cx.checked)
    if not cx.steps or not isinstance(cx.steps[0].op, Boot):
        run.boot()
    rows = []
    for i, step in enumerate(cx.steps):
        if run.failed:
            rows.append(f"<tr><td colspan='4'>{len(cx.steps) - i} step(s) after the failure, not judged</td></tr>")
            break
        record = run.boot() if isinstance(step.op, Boot) else run.apply(step.op)
        findings = "<br>".join(escape(f"{x.verdict} {x.name}: {x.message}") for x in record.findings)
        cls = " class='failing'" if run.failed else ""
        rows.append(
            f"<tr{cls}><td>{i}</td><td class='op'>{escape(str(step.op))}</td>"
            f"<td>{len(record.events)}</td><td>{findings}</td></tr>"
        )
    return rows, dict(run.judge.covered)


def render_txn_html(cx: Counterexample) -> str:
    """A self-contained HTML page for an exactly-once counterexample."""
    v = cx.verdict
    kind, name = str(v["kind"]), str(v["name"])
    where = "" if kind == "pass" else f" at step {v['step']}"
    title = f"{kind} {name}{where}".strip()
    config = ", ".join(f"{k}={val}" for k, val in cx.config.to_json().items())
    rows, covered = _rows(cx)
    tv = cx.config.transaction_version if isinstance(cx.config, TxnConfig) else 0
    return "\n".join(
        [
            "<!DOCTYPE html>",
            "<html lang='en'><head><meta charset='utf-8'>",
            f"<title>kconform: {escape(title)}</title>",
            "<style>body{font-family:sans-serif;margin:1.5em}pre{background:#f6f6f6;padding:.6em}"
            "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}"
            "tr.failing{background:#ffe0e0}</style></head><body>",
            f"<h1>kconform counterexample: {escape(title)}</h1>",
            f"<p><b>implementation</b> {escape(cx.implementation)}; <b>config</b> {escape(config)}; "
            f"<b>seed</b> {cx.seed}; <b>mutants</b> {escape(', '.join(cx.mutants) or 'none')}</p>",
            f"<h2>Verdict</h2><pre>{escape(str(v['message']))}</pre>",
            "<h2>Coordinator transitions this run took</h2>",
            f"<div class='svg'>{txn_state_svg(covered, tv)}</div>",
            "<h2>Program</h2>",
            f"<pre>{escape(format_program(cx))}</pre>",
            "<h2>Steps</h2>",
            "<table><tr><th>step</th><th>operation</th><th>events</th><th>findings</th></tr>",
            *rows,
            "</table>",
            "</body></html>",
            "",
        ]
    )
