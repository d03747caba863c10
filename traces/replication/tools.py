"""The replication slice's trace tools (traces.tools): the report with the per-replica log
timeline, the replay state table and the trace-generation workload."""

from __future__ import annotations

from kconform.model.configs import REPLICATION
from kconform.traces.replay import state_table
from kconform.traces.replication.report import render_replication_html
from kconform.traces.replication.workload import Workload
from kconform.traces.tools import SliceTools

TOOLS = SliceTools(
    name=REPLICATION,
    report_html=render_replication_html,
    make_workload=Workload,
    workload_module="kconform.traces.generate",  # as manifests recorded it; seeded corpora stay byte-identical
    state_table=state_table,
    miner="kconform.traces.mine.replication",
)
