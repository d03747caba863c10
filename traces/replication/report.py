"""A replication counterexample as pictures: the per-replica log timeline, in a self-contained HTML report.

``timeline`` re-judges a file model-only (the recorded events, as ``kconform replay --model-only``)
and keeps the model's view of every replica after every step. ``timeline_svg`` draws it by hand
(no dependency): for each shown step a block of one lane per replica, each log entry a box
``offset:epoch:rid`` coloured by the epoch that wrote it, the HW and LEO marked on the lane, the
leader starred, the failing step highlighted and offsets where two running replicas disagree below
both HWs outlined in red. ``render_replication_html`` wraps it with the header, the program and a
step table (traces.pages); traces.report picks this page for a replication counterexample (the
slice's trace tools, traces.replication.tools) and writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from kconform.conformance.judge import Finding
from kconform.model.config import ReplicationConfig
from kconform.model.state import State
from kconform.traces.counterexample import Counterexample
from kconform.traces.events import Entry
from kconform.traces.operations import ModelAction, Operation
from kconform.traces.pages import (
    START_UP,
    config_text,
    not_judged_row,
    page_title,
    program_and_steps,
    rejudge,
    step_row,
)


@dataclass(frozen=True)
class ReplicaView:
    """The model's view of one replica after a step."""

    broker: int
    log: tuple[Entry, ...]
    hw: int
    leo: int
    leader_epoch: int
    leader: bool
    """The replica presumes leadership (alive, registered, leader = itself)."""
    alive: bool


@dataclass(frozen=True)
class Frame:
    """One step: the operation, how many events it reported, the judge's findings, every
    replica's state after it, whether it is the failing step, and the (broker, offset) pairs where
    running replicas disagree below both HWs."""

    step: int
    op: str
    events: int
    findings: tuple[Finding, ...]
    replicas: tuple[ReplicaView, ...]
    failing: bool = False
    diverging: frozenset[tuple[int, int]] = frozenset()

    def same_picture(self, other: Frame) -> bool:
        """Nothing drawn in the lanes changed between ``other`` and this frame."""
        return self.replicas == other.replicas and self.diverging == other.diverging


def _views(state: State) -> tuple[ReplicaView, ...]:
    return tuple(
        ReplicaView(
            broker=b,
            log=r.log,
            hw=r.hw,
            leo=r.leo,
            leader_epoch=r.leader_epoch,
            leader=state.presumes_leadership(b),
            alive=r.alive,
        )
        for b, r in enumerate(state.replicas)
    )


def diverging_offsets(replicas: tuple[ReplicaView, ...]) -> frozenset[tuple[int, int]]:
    """(broker, offset) for every offset where two running replicas hold different records below
    both of their HWs (the NoDivergenceBelowHw invariant's condition)."""
    running = [r for r in replicas if r.alive]
    marked: set[tuple[int, int]] = set()
    for i, a in enumerate(running):
        for b in running[i + 1 :]:
            for o in range(min(a.hw, b.hw, a.leo, b.leo)):
                if a.log[o] != b.log[o]:
                    marked.update({(a.broker, o), (b.broker, o)})
    return frozenset(marked)


def _frame(step: int, op: str, events: int, findings: tuple[Finding, ...], state: State, failing: bool) -> Frame:
    views = _views(state)
    return Frame(step, op, events, findings, views, failing, diverging_offsets(views))


def _op_text(op: Operation) -> str:
    """The operation as a short line: a model action by its label, others as in the program."""
    return op.label if isinstance(op, ModelAction) else str(op)


def timeline(cx: Counterexample) -> list[Frame]:
    """Re-judge ``cx`` model-only and capture the model state after every step, up to and including
    the first failing one (the judge stops there). A file without a ``boot`` step gets a start-up
    frame (step -1) first."""
    frames: list[Frame] = []
    for i, op, record, run in rejudge(cx):
        text = "start-up" if op is None else _op_text(op)
        frames.append(_frame(i, text, len(record.events), record.findings, run.judge.state, run.failed))
    return frames


# --------------------------------------------------------------------------------------------
# SVG
# --------------------------------------------------------------------------------------------

_EPOCH_COLOURS = (
    "#a6cee3",
    "#b2df8a",
    "#fdbf6f",
    "#cab2d6",
    "#ffff99",
    "#fb9a99",
    "#8dd3c7",
    "#d9d9d9",
)
"""Fill per leader epoch (cycled): light colours, so the dark labels stay readable."""

_BOX_W = 58
_BOX_H = 20
_LANE_H = 26
_LABEL_W = 300
_LANE_LABEL_W = 116
_BLOCK_GAP = 10
_HEAD_H = 18
_FONT = "font-family='DejaVu Sans Mono, Menlo, Consolas, monospace'"


def epoch_colour(epoch: int) -> str:
    return "#eeeeee" if epoch < 0 else _EPOCH_COLOURS[epoch % len(_EPOCH_COLOURS)]


def shown_frames(frames: list[Frame]) -> list[Frame]:
    """The frames worth drawing: the first, every one whose lanes differ from the previous frame,
    and the failing one."""
    shown: list[Frame] = []
    for i, f in enumerate(frames):
        if i == 0 or f.failing or not f.same_picture(frames[i - 1]):
            shown.append(f)
    return shown


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def timeline_svg(frames: list[Frame], cfg: ReplicationConfig, *, all_steps: bool = False) -> str:
    """The timeline as an SVG document: for each shown step (all of them with ``all_steps``,
    otherwise those that changed a lane, plus the first and the failing one) a block with one
    lane per replica (``cfg.replicas``)."""
    shown = frames if all_steps else shown_frames(frames)
    width_offsets = max([1, *(r.leo for f in shown for r in f.replicas), *(r.hw for f in shown for r in f.replicas)])
    lanes_x = _LABEL_W + _LANE_LABEL_W
    width = lanes_x + (width_offsets + 1) * _BOX_W + 20
    block_h = _HEAD_H + cfg.replicas * _LANE_H + _BLOCK_GAP
    legend_h = 48
    height = legend_h + len(shown) * block_h + 10
    out: list[str] = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' {_FONT} font-size='11'>",
        f"<rect x='0' y='0' width='{width}' height='{height}' fill='#ffffff'/>",
    ]
    out.extend(_legend(shown))
    hidden = len(frames) - len(shown)
    if hidden:
        out.append(f"<text x='8' y='32' fill='#666'>{hidden} step(s) that changed no lane are not drawn</text>")
    y = legend_h
    for f in shown:
        out.extend(_block(f, y, width, lanes_x, cfg.replicas))
        y += block_h
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _legend(shown: list[Frame]) -> list[str]:
    epochs = sorted({e.epoch for f in shown for r in f.replicas for e in r.log})
    parts = ["<g class='legend'>", "<text x='8' y='14' font-weight='bold'>epoch:</text>"]
    x = 64
    for epoch in epochs:
        parts.append(
            f"<rect x='{x}' y='3' width='26' height='14' fill='{epoch_colour(epoch)}' stroke='#555'/>"
            f"<text x='{x + 13}' y='14' text-anchor='middle'>{epoch}</text>"
        )
        x += 32
    x += 12
    parts.append(
        f"<line x1='{x}' y1='2' x2='{x}' y2='18' stroke='#1f4fd1' stroke-width='3'/>"
        f"<text x='{x + 5}' y='14' fill='#1f4fd1'>HW</text>"
        f"<line x1='{x + 34}' y1='2' x2='{x + 34}' y2='18' stroke='#333' stroke-width='2' stroke-dasharray='3,2'/>"
        f"<text x='{x + 39}' y='14'>LEO</text>"
        f"<text x='{x + 76}' y='14' fill='#b8860b'>★ leader</text>"
        f"<rect x='{x + 150}' y='3' width='26' height='14' fill='none' stroke='#d00000' stroke-width='3'/>"
        f"<text x='{x + 182}' y='14' fill='#d00000'>diverges below both HWs</text>"
    )
    parts.append("</g>")
    return parts


def _block(f: Frame, y: int, width: int, lanes_x: int, replicas: int) -> list[str]:
    step = "start-up" if f.step == START_UP else f"step {f.step}"
    cls = "step failing-step" if f.failing else "step"
    h = _HEAD_H + replicas * _LANE_H
    parts = [f"<g class='{cls}' data-step='{f.step}'>"]
    if f.failing:
        parts.append(
            f"<rect class='failing-highlight' x='2' y='{y - 2}' width='{width - 4}' height='{h + 4}' "
            "fill='#fff0f0' stroke='#d00000' stroke-width='2' rx='4'/>"
        )
    else:
        parts.append(f"<line x1='0' y1='{y - 4}' x2='{width}' y2='{y - 4}' stroke='#dddddd'/>")
    failing = [x for x in f.findings if x.failing]
    verdict = f" — {failing[0].verdict}: {failing[0].name}" if failing else ""
    colour = "#d00000" if f.failing else "#000000"
    parts.append(f"<text x='8' y='{y + 13}' font-weight='bold' fill='{colour}'>{escape(step)}{escape(verdict)}</text>")
    parts.append(f"<text x='8' y='{y + 30}' fill='#333'>{escape(_clip(f.op, 40))}</text>")
    parts.append(f"<text x='8' y='{y + 45}' fill='#777'>{f.events} event(s)</text>")
    for i in range(replicas):
        ly = y + _HEAD_H + i * _LANE_H
        r = f.replicas[i] if i < len(f.replicas) else None
        parts.extend(_lane(r, i, ly, width, lanes_x, f.diverging))
    parts.append("</g>")
    return parts


def _lane(
    r: ReplicaView | None, broker: int, y: int, width: int, lanes_x: int, diverging: frozenset[tuple[int, int]]
) -> list[str]:
    alive = r is not None and r.alive
    parts = [
        f"<g class='lane' data-replica='{broker}'>",
        f"<rect x='{_LABEL_W}' y='{y}' width='{width - _LABEL_W - 8}' height='{_LANE_H - 2}' "
        f"fill='{'#fafafa' if alive else '#e4e4e4'}'/>",
    ]
    if r is None:
        parts.append("</g>")
        return parts
    star = "★" if r.leader else ""
    state = "" if r.alive else " down"
    parts.append(
        f"<text x='{_LABEL_W + 6}' y='{y + 16}' font-weight='bold'>b{broker}</text>"
        f"<text x='{_LABEL_W + 30}' y='{y + 16}' fill='#555'>e{r.leader_epoch}{state}</text>"
    )
    if r.leader:
        parts.append(
            f"<text class='leader' x='{_LABEL_W + 96}' y='{y + 17}' fill='#b8860b' font-size='15'>{star}</text>"
        )
    for e in r.log:
        x = lanes_x + e.offset * _BOX_W
        bad = (broker, e.offset) in diverging
        stroke = "stroke='#d00000' stroke-width='3'" if bad else "stroke='#555' stroke-width='1'"
        cls = "entry diverging" if bad else "entry"
        opacity = "" if r.alive else " fill-opacity='0.45'"
        parts.append(
            f"<rect class='{cls}' data-offset='{e.offset}' x='{x + 2}' y='{y + 2}' width='{_BOX_W - 4}' "
            f"height='{_BOX_H}' rx='3' fill='{epoch_colour(e.epoch)}'{opacity} {stroke}/>"
            f"<text x='{x + _BOX_W // 2}' y='{y + 16}' text-anchor='middle' font-size='10'>"
            f"{e.offset}:{e.epoch}:{e.rid}</text>"
        )
    hx = lanes_x + r.hw * _BOX_W
    parts.append(
        f"<line class='hw' x1='{hx}' y1='{y}' x2='{hx}' y2='{y + _LANE_H - 2}' stroke='#1f4fd1' stroke-width='3'/>"
    )
    lx = lanes_x + r.leo * _BOX_W + 4  # beside the HW mark when HW = LEO
    parts.append(
        f"<line class='leo' x1='{lx}' y1='{y + 1}' x2='{lx}' y2='{y + _LANE_H - 3}' stroke='#333' "
        "stroke-width='2' stroke-dasharray='3,2'/>"
        f"<text x='{lx + 4}' y='{y + 16}' fill='#555' font-size='9'>HW {r.hw} LEO {r.leo}</text>"
    )
    parts.append("</g>")
    return parts


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 1.5em; color: #111; }
h1 { font-size: 1.4em; margin: 0 0 .4em 0; }
h1 .kind { color: #c00000; }
h1 .pass { color: #11772d; }
h2 { font-size: 1.1em; margin-top: 1.4em; }
dl { display: grid; grid-template-columns: max-content auto; gap: .15em 1em; margin: 0; }
dt { font-weight: bold; } dd { margin: 0; font-family: monospace; }
.message { background: #fff0f0; border-left: 4px solid #c00000; padding: .5em .8em; white-space: pre-wrap; }
pre { background: #f6f6f6; padding: .6em; white-space: pre-wrap; font-size: 12px; }
.svg { overflow-x: auto; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
td.op { font-family: monospace; }
tr.failing { background: #ffe0e0; }
"""


def render_replication_html(cx: Counterexample) -> str:
    """The replication slice's report of ``cx``: verdict, header, the failing step's message, the
    program, the per-replica log timeline and a table of the steps."""
    assert isinstance(cx.config, ReplicationConfig)
    frames = timeline(cx)
    v = cx.verdict
    kind, title = page_title(cx)
    kind_cls = "pass" if kind == "pass" else "kind"
    mutants = ", ".join(cx.mutants) or "none"
    rows = [
        step_row("start-up" if f.step == START_UP else str(f.step), f.op, f.events, f.findings, f.failing)
        for f in frames
    ]
    judged = frames[-1].step + 1 if frames else 0
    if judged < len(cx.steps):
        rows.append(not_judged_row(len(cx.steps) - judged))
    return "\n".join(
        [
            "<!DOCTYPE html>",
            "<html lang='en'><head><meta charset='utf-8'>",
            f"<title>kconform: {escape(title)}</title>",
            f"<style>{_CSS}</style></head><body>",
            f"<h1>kconform counterexample: <span class='{kind_cls}'>{escape(title)}</span></h1>",
            "<dl>",
            f"<dt>implementation</dt><dd>{escape(cx.implementation)}</dd>",
            f"<dt>config</dt><dd>{escape(config_text(cx))}</dd>",
            f"<dt>seed</dt><dd>{cx.seed}</dd>",
            f"<dt>mutants</dt><dd>{escape(mutants)}</dd>",
            f"<dt>steps</dt><dd>{len(cx.steps)}</dd>",
            "</dl>",
            f"<h2>Verdict</h2><div class='message'>{escape(str(v['message']))}</div>",
            "<h2>Replica logs, step by step</h2>",
            f"<div class='svg'>{timeline_svg(frames, cx.config)}</div>",
            *program_and_steps(cx, rows),
        ]
    )
