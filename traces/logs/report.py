"""The outputs of ``kconform logs check``: the summary table, ``report.json``, ``report.html`` (every
finding with its witness lines, file:line and text) (the JUnit cases are built by
kconform.ci.logs)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from kconform.traces.atomicfile import atomic_write_bytes
from kconform.traces.logs.checks import ADVISORY, NOT_OBSERVED, PASSED, VIOLATED, Check
from kconform.traces.logs.observations import SCHEMA_VERSION
from kconform.traces.logs.run import LogRun

_STYLE = {VIOLATED: "bold red", PASSED: "green", NOT_OBSERVED: "dim", ADVISORY: "yellow"}


def summary_table(run: LogRun) -> Table:
    """One row per check: verdict, judgements, findings, allowed."""
    table = Table(title="Kafka log checks", caption="not observed: the input never exercised the check (not a pass)")
    table.add_column("check", style="bold", no_wrap=True, min_width=44)
    table.add_column("verdict")
    table.add_column("judged", justify="right")
    table.add_column("findings", justify="right")
    table.add_column("allowed", justify="right")
    for check in run.checks:
        table.add_row(
            check.name,
            Text(check.status, style=_STYLE.get(check.status, "")),
            f"{check.judged:,}",
            Text(str(check.finding_count), style="bold red" if check.fails else ""),
            str(check.allowed) if check.allowed else "",
        )
    return table


def input_table(run: LogRun, top: int = 15) -> Table:
    """What was read: lines, observations per kind, and lines the suite does not know per logger."""
    s = run.stats
    table = Table(title="Input", show_header=True)
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("files", f"{s.read.files:,}")
    table.add_row("lines", f"{s.read.lines:,}")
    for name in s.read.binary_files[:5]:
        table.add_row(Text(f"skipped binary file {name}"), "")
    if s.read.cut_lines:
        table.add_row("over-long lines cut", f"{s.read.cut_lines:,}")
    for kind, n in sorted(s.observations.items()):
        table.add_row(Text(f"observations: {kind}"), f"{n:,}")
    for logger, n in s.unknown.most_common(top):
        table.add_row(Text(f"not known: {logger}"), f"{n:,}")
    if len(s.unknown) > top:
        table.add_row(
            f"not known: {len(s.unknown) - top} more loggers", f"{sum(n for _, n in s.unknown.most_common()[top:]):,}"
        )
    if s.problem_count:
        table.add_row(Text("known lines that did not parse", style="bold red"), f"{s.problem_count:,}")
    return table


def to_json(run: LogRun, excerpts: dict[tuple[str, int], Path] | None = None) -> dict[str, Any]:
    """The report as plain data (``report.json``); ``excerpts``: each shown finding's excerpt directory."""
    s = run.stats
    return {
        "schema_version": SCHEMA_VERSION,
        "inputs": run.paths,
        "seconds": round(run.seconds, 3),
        "lenient": run.lenient,
        "lines": s.read.lines,
        "files": s.read.files,
        "binary_files_skipped": s.read.binary_files,
        "cut_lines": s.read.cut_lines,
        "unreadable": s.unreadable,
        "observations": dict(sorted(s.observations.items())),
        "unknown_lines_per_logger": dict(s.unknown.most_common()),
        "problems": {
            "count": s.problem_count,
            "shown": [{"file": p.file, "line": p.line, "message": p.message, "text": p.text} for p in s.problems],
        },
        "checks": [_check_json(c, excerpts or {}) for c in run.checks],
    }


def _check_json(check: Check, excerpts: dict[tuple[str, int], Path]) -> dict[str, Any]:
    return {
        "name": check.name,
        "guarantee": check.guarantee,
        "cite": check.cite,
        "status": check.status,
        "advisory": check.advisory,
        "judged": check.judged,
        "findings": check.finding_count,
        "allowed": check.allowed,
        "notes": check.notes,
        "shown": [
            {
                "message": f.message,
                "partition": f.partition,
                "witnesses": [{"file": w.file, "line": w.line, "text": w.text} for w in f.witnesses],
                "excerpt": str(excerpts[(check.name, i)]) if (check.name, i) in excerpts else None,
            }
            for i, f in enumerate(check.findings)
        ],
    }


def json_bytes(run: LogRun, excerpts: dict[tuple[str, int], Path] | None = None) -> bytes:
    """``report.json``'s content."""
    return (json.dumps(to_json(run, excerpts), indent=1) + "\n").encode()


def write_json(run: LogRun, path: Path, excerpts: dict[tuple[str, int], Path] | None = None) -> None:
    atomic_write_bytes(path, json_bytes(run, excerpts))


def write_html(run: LogRun, path: Path) -> None:
    atomic_write_bytes(path, html_bytes(run))


def html_bytes(run: LogRun) -> bytes:
    """``report.html``'s content: a self-contained page, the verdict table, then each finding with its
    witness lines."""
    esc = html.escape
    rows = []
    for c in run.checks:
        rows.append(
            f"<tr class='{esc(c.status.replace(' ', '-'))}'><td>{esc(c.name)}</td><td>{esc(c.status)}</td>"
            f"<td>{c.judged:,}</td><td>{c.finding_count}</td><td>{c.allowed or ''}</td><td>{esc(c.guarantee)}</td></tr>"
        )
    sections = []
    for c in run.checks:
        if not c.findings:
            continue
        items = []
        for f in c.findings:
            wit = "".join(
                f"<div class='w'><span class='loc'>{esc(w.file)}:{w.line}</span><code>{esc(w.text)}</code></div>"
                for w in f.witnesses
            )
            items.append(f"<li><p>{esc(f.message)}</p>{wit}</li>")
        more = f"<p>{c.finding_count - len(c.findings)} more not shown</p>" if c.finding_count > len(c.findings) else ""
        sections.append(
            f"<h2 id='{esc(c.name)}'>{esc(c.name)}</h2><p class='cite'>{esc(c.guarantee)} — {esc(c.cite)}</p>"
            f"<ol>{''.join(items)}</ol>{more}"
        )
    unknown = "".join(f"<tr><td>{esc(k)}</td><td>{n:,}</td></tr>" for k, n in run.stats.unknown.most_common(50))
    problems = "".join(f"<li>{esc(str(p))}</li>" for p in run.stats.problems)
    observed = sum(run.stats.observations.values())
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.2em .5em}"
        "tr.violated td:nth-child(2){color:#b00;font-weight:bold}tr.passed td:nth-child(2){color:#070}"
        "tr.not-observed td:nth-child(2){color:#888}tr.advisory td:nth-child(2){color:#a60}"
        ".w{margin:.2em 0}.loc{color:#555;margin-right:.6em}code{white-space:pre-wrap}.cite{color:#555}"
    )
    head = "<tr><th>check</th><th>verdict</th><th>judged</th><th>findings</th><th>allowed</th><th>guarantee</th></tr>"
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>kconform logs check</title><style>{style}</style>"
        f"</head><body><h1>kconform logs check</h1><p>{run.stats.read.lines:,} lines in {run.stats.read.files:,} "
        f"files, {observed:,} observations, {run.seconds:.1f} s</p><table>{head}{''.join(rows)}</table>"
        f"{''.join(sections)}<h2>Known lines that did not parse ({run.stats.problem_count})</h2><ol>{problems}</ol>"
        f"<h2>Lines not known, per logger</h2><table>{unknown}</table></body></html>\n"
    )
    return page.encode()
