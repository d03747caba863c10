"""The exactly-once slice's trace tools (traces.tools): its report, its trace-generation workload
and the picture of the coordinator's state machine the gate draws beside coverage.json."""

from __future__ import annotations

from pathlib import Path

from kconform.model.configs import TXN
from kconform.model.txn_config import TxnConfig
from kconform.traces.atomicfile import atomic_write_bytes
from kconform.traces.tools import CoverageArtifact, SliceTools
from kconform.traces.txn.picture import txn_state_svg
from kconform.traces.txn.report import render_txn_html
from kconform.traces.txn.workload import TxnWorkload


def write_state_picture(out: Path, covered: dict[str, int], cfg: TxnConfig, summary: str) -> Path:
    """The coordinator's state machine with the campaign's covered / uncovered transitions, as an
    HTML page ``txn-states.html`` in ``out`` (beside coverage.json)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "txn-states.html"
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>kconform: coordinator states</title>"
        "</head><body style='font-family:sans-serif'><h1>Transaction coordinator states exercised</h1>"
        f"<p>{summary} (handler outcomes and transitions)</p>{txn_state_svg(covered, cfg.transaction_version)}"
        "</body></html>\n"
    )
    atomic_write_bytes(path, page.encode("utf-8"))
    return path


TOOLS = SliceTools(
    name=TXN,
    report_html=render_txn_html,
    make_workload=TxnWorkload,
    workload_module="kconform.traces.txn_workload",  # as manifests recorded it; seeded corpora stay byte-identical
    coverage_artifacts=(
        CoverageArtifact("coordinator state machine with the transitions exercised", write_state_picture),
    ),
    miner="kconform.traces.mine.txn",
)
