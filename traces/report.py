"""A counterexample's HTML report, whatever its slice: the slice's page, written next to the file.

Each slice draws its own page (its trace tools' ``report_html``, traces.tools: the per-replica log
timeline of traces.replication.report, the coordinator's transitions of traces.txn.report) over the
shared pieces of traces.pages. Guarantee: ``write_report`` replaces the report atomically.
"""

from __future__ import annotations

import os
from pathlib import Path

from kconform.traces.atomicfile import atomic_text_writer
from kconform.traces.counterexample import Counterexample
from kconform.traces.tools import tools_for


def render_html(cx: Counterexample) -> str:
    """A self-contained HTML page (inline CSS and SVG) for ``cx``, drawn by its slice's
    ``report_html`` (traces.tools)."""
    return tools_for(cx.config).report_html(cx)


def report_path(counterexample_path: str | os.PathLike[str]) -> Path:
    """Where the report of a counterexample file goes: same directory and stem, ``.html``."""
    return Path(counterexample_path).with_suffix(".html")


def write_report(cx: Counterexample, path: str | os.PathLike[str]) -> None:
    """Write the HTML report of ``cx`` to ``path`` atomically (see report_path for the usual
    name next to the counterexample file). The parent directory must exist."""
    page = render_html(cx)
    with atomic_text_writer(path) as f:
        f.write(page)
