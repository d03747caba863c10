"""The HTML report of an exactly-once counterexample: verdict, the coordinator transitions the run
took (traces.txn.picture), program and the steps as judged (traces.pages); traces.report picks this
page for an exactly-once counterexample (the slice's trace tools, traces.txn.tools) and writes it."""

from __future__ import annotations

from html import escape

from kconform.conformance.runner import LockstepRun
from kconform.model.txn_config import TxnConfig
from kconform.traces.counterexample import Counterexample
from kconform.traces.pages import config_text, not_judged_row, page_title, program_and_steps, rejudge, step_row
from kconform.traces.txn.picture import txn_state_svg


def _rows(cx: Counterexample) -> tuple[list[str], dict[str, int]]:
    """One table row per step, re-judged model-only up to the first failing step, and the
    coverage keys of what the judge accepted (for the state-machine picture)."""
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
    return rows, dict(last.judge.covered)


def render_txn_html(cx: Counterexample) -> str:
    """A self-contained HTML page for an exactly-once counterexample."""
    v = cx.verdict
    _, title = page_title(cx)
    config = config_text(cx)
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
            *program_and_steps(cx, rows),
        ]
    )
