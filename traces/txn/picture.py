"""The transaction coordinator's state machine as an SVG picture, edges marked covered or not.

The states and edges come from model.txn_graph (the single source of Kafka's valid-previous
table); the counts come from a campaign's coverage keys ``txn_edge:From->To`` (what the judge saw
the coordinator do). A covered edge is drawn solid with its count, an uncovered one dashed grey;
an observed transition outside the table (which the judge also reports as a ValidTxnTransitions
violation) is drawn red. Self-loops (Empty → Empty on a new epoch, Ongoing → Ongoing when a
partition joins) are drawn as loops above their state.
"""

from __future__ import annotations

import math
from html import escape

from kconform.conformance.txn.coverage import edge_counts
from kconform.model import txn_graph as tg

_POS: dict[str, tuple[float, float]] = {
    tg.EMPTY: (90.0, 210.0),
    tg.ONGOING: (320.0, 210.0),
    tg.PREPARE_COMMIT: (540.0, 80.0),
    tg.PREPARE_ABORT: (540.0, 340.0),
    tg.COMPLETE_COMMIT: (770.0, 80.0),
    tg.COMPLETE_ABORT: (770.0, 340.0),
    tg.PREPARE_EPOCH_FENCE: (320.0, 410.0),
    tg.DEAD: (90.0, 410.0),
}
_W, _H = 72.0, 30.0
_WIDTH, _HEIGHT = 860, 470


def _border_point(center: tuple[float, float], toward: tuple[float, float]) -> tuple[float, float]:
    """Where the segment from ``center`` to ``toward`` leaves the state's box."""
    (x, y), (tx, ty) = center, toward
    dx, dy = tx - x, ty - y
    if dx == 0 and dy == 0:
        return center
    half_h = _H / 2 + 4
    scale = min((_W + 4) / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
    return x + dx * scale, y + dy * scale


def _edge_svg(src: str, dst: str, count: int, valid: bool, bidirectional: bool) -> str:
    cls = "covered" if count and valid else "invalid" if not valid else "uncovered"
    colour = {"covered": "#1b7837", "uncovered": "#9a9a9a", "invalid": "#c00000"}[cls]
    dash = " stroke-dasharray='5,4'" if cls == "uncovered" else ""
    label = str(count) if count else ""
    sx, sy = _POS[src]
    if src == dst:
        top = sy - _H / 2 - 2
        path = f"M {sx - 18} {top} C {sx - 40} {top - 50}, {sx + 40} {top - 50}, {sx + 18} {top}"
        lx, ly = sx, top - 40
    else:
        tx, ty = _POS[dst]
        ax, ay = _border_point((sx, sy), (tx, ty))
        bx, by = _border_point((tx, ty), (sx, sy))
        # bend opposite-direction pairs apart so both arrows stay visible
        bend = 26.0 if bidirectional else 10.0
        nx_, ny_ = -(by - ay), bx - ax
        norm = math.hypot(nx_, ny_) or 1.0
        cx, cy = (ax + bx) / 2 + bend * nx_ / norm, (ay + by) / 2 + bend * ny_ / norm
        path = f"M {ax:.1f} {ay:.1f} Q {cx:.1f} {cy:.1f} {bx:.1f} {by:.1f}"
        lx, ly = cx, cy - 4
    title = f"{src} → {dst}: " + (f"{count} time(s)" if count else "not exercised")
    if not valid:
        title += " (NOT in Kafka's valid-previous table)"
    return (
        f"<g class='edge {cls}'><title>{escape(title)}</title>"
        f"<path d='{path}' fill='none' stroke='{colour}' stroke-width='{2.2 if count else 1.2}'{dash} "
        f"marker-end='url(#arrow-{cls})'/>"
        f"<text x='{lx:.1f}' y='{ly:.1f}' font-size='11' text-anchor='middle' fill='{colour}'>{label}</text></g>"
    )


def txn_state_svg(covered: dict[str, int], transaction_version: int = 0) -> str:
    """An SVG of the coordinator's state machine for ``transaction_version`` with each valid edge
    marked covered (solid, with its count) or not (dashed), plus any observed invalid edge (red)."""
    valid = set(tg.edges(transaction_version))
    counts = edge_counts(covered)
    shown = sorted(valid | set(counts))
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' height='{_HEIGHT}' "
        f"viewBox='0 0 {_WIDTH} {_HEIGHT}' font-family='sans-serif'>",
        "<defs>",
    ]
    for cls, colour in (("covered", "#1b7837"), ("uncovered", "#9a9a9a"), ("invalid", "#c00000")):
        parts.append(
            f"<marker id='arrow-{cls}' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' markerHeight='7' "
            f"orient='auto-start-reverse'><path d='M 0 0 L 10 5 L 0 10 z' fill='{colour}'/></marker>"
        )
    parts.append("</defs>")
    parts.append(f"<rect width='{_WIDTH}' height='{_HEIGHT}' fill='white'/>")
    for src, dst in shown:
        if src in _POS and dst in _POS:
            parts.append(_edge_svg(src, dst, counts.get((src, dst), 0), (src, dst) in valid, (dst, src) in shown))
    hit = sum(1 for e in valid if counts.get(e, 0))
    for state, (x, y) in _POS.items():
        pending_only = state in (tg.DEAD, tg.PREPARE_EPOCH_FENCE)
        fill = "#f4f4f4" if pending_only else "#deebf7"
        parts.append(
            f"<g class='state'><rect x='{x - _W}' y='{y - _H / 2 - 2}' width='{2 * _W}' height='{_H + 4}' rx='8' "
            f"fill='{fill}' stroke='#2166ac'/><text x='{x}' y='{y + 5}' font-size='13' "
            f"text-anchor='middle'>{escape(state)}</text></g>"
        )
    parts.append(
        f"<text x='10' y='{_HEIGHT - 10}' font-size='12'>transaction version {transaction_version}: "
        f"{hit} of {len(valid)} valid transitions exercised</text>"
    )
    parts.append("</svg>")
    return "".join(parts)
