"""The HTML report of an exactly-once counterexample: verdict, the coordinator transitions the run
took (traces.txn.picture), program and the steps as judged (traces.pages); traces.report picks this
page for an exactly-once counterexample (the slice's trace tools, traces.txn.tools) and writes it."""

from __future__ import annotations

from kconform.model.txn_config import TxnConfig
from kconform.traces.counterexample import Counterexample
from kconform.traces.pages import judged_rows, page_start, program_and_steps
from kconform.traces.txn.picture import txn_state_svg


def _rows(cx: Counterexample) -> tuple[list[str], dict[str, int]]:
    """The step table's rows and the coverage keys of what the judge accepted (for the
    state-machine picture)."""
    rows, last = judged_rows(cx)
    return rows, dict(last.judge.covered)


def render_txn_html(cx: Counterexample) -> str:
    """A self-contained HTML page for an exactly-once counterexample."""
    rows, covered = _rows(cx)
    tv = cx.config.transaction_version if isinstance(cx.config, TxnConfig) else 0
    return "\n".join(
        [
            *page_start(cx),
            "<h2>Coordinator transitions this run took</h2>",
            f"<div class='svg'>{txn_state_svg(covered, tv)}</div>",
            *program_and_steps(cx, rows),
        ]
    )
