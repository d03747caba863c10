"""The HTML report of a fetch-session counterexample: verdict, the per-session timeline (every
request and answer, per client, with the partitions each carried, the session id and epoch), the
program and the steps as judged (traces.pages)."""

from __future__ import annotations

from html import escape

from kconform.traces import events as ev
from kconform.traces.counterexample import Counterexample
from kconform.traces.pages import judged_rows, page_start, program_and_steps


def _error_suffix(error: int) -> str:
    return "" if error == ev.NONE else ", " + ev.ERRORS.get(error, str(error))


def session_timeline(cx: Counterexample) -> str:
    """One table row per request, answer and client handling, in step order, grouped by column per
    client: what each carried (partitions with fetch offsets, forgotten ones; the answer's
    partitions with HW, log start and records), the session id and epoch."""
    out = ["<table><tr><th>step</th><th>who</th><th>what</th><th>session / epoch</th><th>partitions</th></tr>"]
    for i, step in enumerate(cx.steps):
        for e in step.events:
            if isinstance(e, ev.SessionFetchSent):
                parts = ", ".join(f"{p.partition}@{p.offset}" for p in e.fetches) or "(none)"
                forgot = f"; forgotten {', '.join(e.forgotten)}" if e.forgotten else ""
                row = (f"client {e.node - 100}", f"request {e.msg}", f"{e.session_id} / {e.epoch}", parts + forgot)
            elif isinstance(e, ev.SessionFetchHandled):
                carried = (
                    ", ".join(
                        f"{n} (hw {hw}, start {ls}, {c} rec{_error_suffix(err)})"
                        for n, err, hw, ls, c in zip(e.partitions, e.errors, e.hws, e.log_starts, e.counts, strict=True)
                    )
                    or "(none)"
                )
                what = f"answer {e.msg}: {e.outcome}" + (f" {ev.ERRORS.get(e.error, e.error)}" if e.error else "")
                if e.evicted:
                    what += f", evicted {e.evicted}"
                row = ("broker", what, str(e.session_id), carried)
            elif isinstance(e, ev.SessionFetchApplied):
                pos = ", ".join(f"{p.partition}@{p.offset}" for p in e.positions)
                row = (f"client {e.node - 100}", f"handled {e.msg}: {e.outcome}", f"{e.session_id} / {e.epoch}", pos)
            elif isinstance(e, ev.SessionClosing):
                row = (f"client {e.node - 100}", f"close request {e.msg}", f"{e.session_id} / -1", "(none)")
            elif isinstance(e, ev.SessionCacheLost):
                row = ("broker", "restarted: session cache lost", "", "")
            else:
                continue
            out.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in (i, *row)) + "</tr>")
    out.append("</table>")
    return "".join(out)


def render_fetch_html(cx: Counterexample) -> str:
    """A self-contained HTML page for a fetch-session counterexample."""
    return "\n".join(
        [
            *page_start(cx),
            "<h2>Fetch sessions: requests and answers</h2>",
            session_timeline(cx),
            *program_and_steps(cx, judged_rows(cx)[0]),
        ]
    )
