"""The fetch-session slice's trace tools (traces.tools): its report and its workload."""

from __future__ import annotations

from kconform.model.fetch_config import FETCH
from kconform.traces.fetch.report import render_fetch_html
from kconform.traces.fetch.workload import FetchWorkload
from kconform.traces.tools import SliceTools

TOOLS = SliceTools(
    name=FETCH,
    report_html=render_fetch_html,
    make_workload=FetchWorkload,
    workload_module="kconform.traces.fetch.workload",
    miner="kconform.traces.mine.fetch",
)
