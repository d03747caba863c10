"""What the probe checker shows: the summary table, report.json, and an HTML timeline of the witness
operations per partition (what was written at which offset, what each consumer saw).

The HTML page is self-contained (inline SVG and CSS, no script): one section per partition named
by a finding, one lane per witness operation, a mark at every offset the operation wrote or read
there (hover for the value), the offsets a finding is about outlined in red.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable
from typing import Any

from rich.table import Table
from rich.text import Text

from kconform.conformance.probe.anomalies import ANOMALIES, Finding
from kconform.conformance.probe.checker import CheckResult
from kconform.conformance.probe.history import OpEvent, PollResult, Record, SendValue, TxnValue, open_history
from kconform.traces.atomicfile import atomic_write_bytes


def summary_table(result: CheckResult) -> Table:
    """One row per anomaly class: instances the configuration forbids, instances it allows, meaning."""
    table = Table(
        title=f"Probe history of {result.header.target} ({result.header.client} {result.header.client_version})",
        caption="allowed: anomalies the history's configuration permits (reported, not failures)",
    )
    table.add_column("anomaly", style="bold")
    table.add_column("violations", justify="right")
    table.add_column("allowed", justify="right")
    table.add_column("means")
    for name, anomaly in ANOMALIES.items():
        bad = result.findings.count(name, allowed=False)
        ok = result.findings.count(name, allowed=True)
        table.add_row(
            name,
            Text(f"{bad:,}", style="bold red" if bad else "green"),
            Text(f"{ok:,}", style="yellow" if ok else ""),
            anomaly.means,
        )
    return table


def figures(result: CheckResult) -> dict[str, Any]:
    """The checker's counts as plain data (report.json, the command's closing lines)."""
    st = result.stats
    return {
        "lines": st.lines,
        "operations": dict(sorted(st.ops.items())),
        "completions": dict(sorted(st.outcomes.items())),
        "values_written": st.values_written,
        "values_acknowledged": st.values_acked,
        "values_read": st.values_read,
        "polls": st.reads,
        "records_read": st.records_read,
        "acknowledged_judged": st.acked_judged,
        "unseen": st.unseen,
        "open_at_end": st.pending,
        "transactions": st.transactions,
        "gap_claims": st.gap_claims,
    }


def finding_json(f: Finding) -> dict[str, Any]:
    return {
        "name": f.name,
        "allowed": f.allowed,
        "why_allowed": f.why or None,
        "partition": f.partition,
        "explanation": f.explanation,
        "witnesses": list(f.witnesses),
    }


def report_json(result: CheckResult) -> dict[str, Any]:
    """report.json: verdict, reason, per-anomaly counts, the kept findings, figures, warnings."""
    counts = {
        name: {"violations": result.findings.count(name, False), "allowed": result.findings.count(name, True)}
        for name in ANOMALIES
    }
    return {
        "verdict": result.verdict,
        "reason": result.reason,
        "header": result.header.to_json(),
        "counts": counts,
        "findings": [finding_json(f) for f in result.findings.findings()],
        "figures": figures(result),
        "warnings": result.warnings,
    }


def witness_events(path: str | os.PathLike[str], lines: Iterable[int]) -> dict[int, OpEvent]:
    """The events at the given ``i`` (re-read from the history; completions carry their invocation)."""
    wanted = set(lines)
    out: dict[int, OpEvent] = {}
    if not wanted:
        return out
    last = max(wanted)
    with open_history(path) as reader:
        for event in reader.events():
            if event.i in wanted:
                out[event.i] = event
            if event.i >= last:
                break
    return out


def _records(event: OpEvent) -> tuple[Record, ...]:
    v = event.value
    if isinstance(v, PollResult | SendValue | TxnValue):
        return v.records
    inv = event.invoke.value if event.invoke is not None else None
    if isinstance(inv, SendValue | TxnValue):
        return inv.records
    return ()


_COLOURS = {"send": "#2e7d32", "txn": "#1565c0", "poll": "#616161"}


def timeline_html(result: CheckResult, events: dict[int, OpEvent]) -> str:
    """The HTML report: verdict, summary, and per partition the witness operations' lanes."""
    findings = list(result.findings.findings())
    by_tp: dict[str, list[Finding]] = {}
    for f in findings:
        by_tp.setdefault(f.partition or "(all partitions)", []).append(f)
    e = html.escape
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>kconform probe report</title><style>",
        "body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}.bad{color:#b71c1c;font-weight:bold}"
        ".ok{color:#1b5e20}.allowed{color:#8d6e00}svg{border:1px solid #eee;margin:4px 0}",
        "</style></head><body>",
        f"<h1>kconform probe: {e(result.header.target)} — "
        f"<span class='{'bad' if result.verdict == 'invalid' else 'ok'}'>"
        f"{e(result.verdict)}</span></h1><p>{e(result.reason)}</p>",
        "<table><tr><th>anomaly</th><th>violations</th><th>allowed</th><th>means</th></tr>",
    ]
    for name, anomaly in ANOMALIES.items():
        bad, ok = result.findings.count(name, False), result.findings.count(name, True)
        if bad or ok:
            out.append(
                f"<tr><td>{e(name)}</td><td class='{'bad' if bad else ''}'>{bad}</td>"
                f"<td class='{'allowed' if ok else ''}'>{ok}</td><td>{e(anomaly.means)}</td></tr>"
            )
    out.append("</table>")
    for tp, tp_findings in sorted(by_tp.items()):
        out.append(f"<h2>{e(tp)}</h2><ul>")
        for f in tp_findings:
            cls = "allowed" if f.allowed else "bad"
            why = f" (allowed: {e(f.why)})" if f.allowed else ""
            out.append(
                f"<li><span class='{cls}'>{e(f.name)}</span>{why}: {e(f.explanation)} — operations "
                f"{', '.join(str(w) for w in f.witnesses)}</li>"
            )
        out.append("</ul>")
        if tp.startswith("("):
            continue
        out.append(_lanes_svg(tp, tp_findings, events))
    out.append("</body></html>")
    return "\n".join(out)


def _lanes_svg(tp: str, tp_findings: list[Finding], events: dict[int, OpEvent]) -> str:
    ops = sorted({w for f in tp_findings for w in f.witnesses if w in events}, key=lambda i: events[i].mono_ns)
    marks: list[tuple[int, int, str, str]] = []  # lane, offset, colour, title
    for lane, i in enumerate(ops):
        ev = events[i]
        for rec in _records(ev):
            if rec.tp == tp and rec.offset is not None:
                marks.append((lane, rec.offset, _COLOURS.get(ev.f, "#000"), f"{rec.value} @ {rec.offset}"))
    if not marks:
        return "<p>(no offsets known for these operations on this partition)</p>"
    lo = min(m[1] for m in marks)
    hi = max(m[1] for m in marks)
    span = max(hi - lo + 1, 1)
    width = min(max(span * 14, 200), 1400)
    cell = width / span
    label_w = 260
    height = 20 * len(ops) + 30
    hot = {o for f in tp_findings for o in _offsets_in(f.explanation)}
    e = html.escape
    parts = [f"<svg width='{label_w + width + 20}' height='{height}' xmlns='http://www.w3.org/2000/svg'>"]
    for lane, i in enumerate(ops):
        ev = events[i]
        inv = ev.invoke.value if ev.invoke is not None else None
        detail = getattr(inv, "isolation", "") or getattr(inv, "transactional_id", "")
        y = 20 * lane + 14
        parts.append(f"<text x='2' y='{y}' font-size='11'>{e(f'i={i} p{ev.process} {ev.f} {ev.type} {detail}')}</text>")
    for lane, off, colour, title in marks:
        x = label_w + (off - lo) * cell
        y = 20 * lane + 4
        stroke = " stroke='#d50000' stroke-width='2'" if off in hot else ""
        parts.append(
            f"<rect x='{x:.1f}' y='{y}' width='{max(cell - 2, 2):.1f}' height='14' fill='{colour}'{stroke}>"
            f"<title>{e(title)}</title></rect>"
        )
    parts.append(f"<text x='{label_w}' y='{height - 4}' font-size='11'>offsets {lo}..{hi}</text></svg>")
    return "".join(parts)


def _offsets_in(text: str) -> set[int]:
    """Offsets named in an explanation ("offset 7", "offsets 3..5")."""
    out: set[int] = set()
    words = text.replace(",", " ").split()
    for n, w in enumerate(words[:-1]):
        if w in ("offset", "offsets"):
            nxt = words[n + 1]
            if ".." in nxt:
                a, _, b = nxt.partition("..")
                if a.isdigit() and b.isdigit() and int(b) - int(a) < 10_000:
                    out.update(range(int(a), int(b) + 1))
            elif nxt.isdigit():
                out.add(int(nxt))
    return out


def write_reports(result: CheckResult, history: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> list[str]:
    """Write report.json and report.html into ``out_dir`` (created); return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    witnesses = {w for f in result.findings.findings() for w in f.witnesses}
    events = witness_events(history, witnesses)
    json_path = os.path.join(out_dir, "report.json")
    html_path = os.path.join(out_dir, "report.html")
    atomic_write_bytes(json_path, (json.dumps(report_json(result), indent=1) + "\n").encode())
    atomic_write_bytes(html_path, timeline_html(result, events).encode())
    return [json_path, html_path]
