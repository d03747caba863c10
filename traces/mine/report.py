"""What mining a corpus found: per invariant and trace, the JSON report, the summary table, and
counterexample excerpts that ``kconform replay --model-only`` judges against the model.

Exit codes follow the gate (kconform.ci.exitcodes): 1 when any violation was found (a decided
verdict, even if part of the corpus was unreadable), else 2 when part of the corpus could not be
read (those traces are listed as unchecked), else 0.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.traces.corpus import Manifest, ReadReport, read_traces
from kconform.traces.counterexample import Counterexample, make_verdict, write_counterexample
from kconform.traces.mine.invariants import INVARIANTS


@dataclass
class MineReport:
    """The outcome of one mining run over one corpus."""

    corpus: str
    engine: str
    events: int
    traces: int
    seconds: float
    counts: list[tuple[str, int, int, int]] = field(default_factory=list)
    """(invariant, trace, violations, first position), one per flagged (invariant, trace)."""
    errors: list[str] = field(default_factory=list)
    """Files or rows that could not be read, each naming the file and the row or trace position."""
    unchecked: list[int] = field(default_factory=list)
    """Traces not mined because their file or one of their rows could not be read."""
    planted: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def flagged(self) -> dict[int, dict[str, tuple[int, int]]]:
        """Trace → invariant → (violations, first position)."""
        out: dict[int, dict[str, tuple[int, int]]] = {}
        for inv, trace, n, first in self.counts:
            out.setdefault(trace, {})[inv] = (n, first)
        return out

    def first_position(self, trace: int) -> int:
        """The earliest position at which any invariant failed in ``trace`` (it must be flagged)."""
        return min(first for _n, first in self.flagged[trace].values())

    @property
    def violations(self) -> int:
        return sum(n for _i, _t, n, _f in self.counts)

    def exit_code(self) -> int:
        if self.counts:
            return EXIT_VIOLATION
        return EXIT_ERROR if self.errors else EXIT_PASS

    def to_json(self) -> dict[str, Any]:
        flagged = self.flagged
        return {
            "corpus": self.corpus,
            "engine": self.engine,
            "events": self.events,
            "traces": self.traces,
            "seconds": round(self.seconds, 3),
            "events_per_second": round(self.events / self.seconds) if self.seconds > 0 else None,
            "violations": self.violations,
            "exit_code": self.exit_code(),
            "invariants": {
                name: {
                    "doc": inv.doc,
                    "cite": inv.cite,
                    "mirrors": inv.mirrors,
                    "violations": sum(n for i, _t, n, _f in self.counts if i == name),
                    "traces": sorted(t for i, t, _n, _f in self.counts if i == name),
                }
                for name, inv in INVARIANTS.items()
            },
            "flagged_traces": [
                {
                    "trace": trace,
                    "first_position": self.first_position(trace),
                    "invariants": {i: {"violations": n, "first_position": f} for i, (n, f) in sorted(found.items())},
                    "planted": list(self.planted.get(trace, ())),
                }
                for trace, found in sorted(flagged.items())
            ],
            "planted_traces_not_flagged": sorted(set(self.planted) - set(flagged)),
            "errors": self.errors,
            "unchecked_traces": self.unchecked,
        }

    def table(self) -> Table:
        """One row per invariant: violations, traces flagged, the first flagged trace and position."""
        table = Table(
            title=f"mined {self.events:,} events in {self.traces:,} traces ({self.engine}, {self.seconds:.1f} s)"
        )
        for column, justify in (
            ("invariant", "left"),
            ("violations", "right"),
            ("traces", "right"),
            ("first (trace @ position)", "left"),
        ):
            table.add_column(column, justify=justify)  # type: ignore[arg-type]
        for name in INVARIANTS:
            rows = [(t, n, f) for i, t, n, f in self.counts if i == name]
            first = f"{min(rows)[0]} @ {min(rows, key=lambda r: r[0])[2]}" if rows else "-"
            style = "bold red" if rows else "green"
            table.add_row(f"[{style}]{name}[/{style}]", str(sum(n for _t, n, _f in rows)), str(len(rows)), first)
        if self.errors:
            table.caption = (
                f"[yellow]{len(self.errors)} unreadable part(s); {len(self.unchecked)} trace(s) unchecked[/yellow]"
            )
        return table


def excerpt(cx: Counterexample, position: int, mined: dict[str, Any]) -> Counterexample:
    """The prefix of ``cx`` up to the step holding event ``position`` (0-based over the whole
    trace), with the verdict the lockstep model reaches on it (the model judges from the start, so
    an excerpt always starts at boot) and the miner's finding kept as ``verdict["mined"]``."""
    from kconform.traces.replay import replay

    pos = 0
    end = len(cx.steps)
    for index, step in enumerate(cx.steps):
        pos += len(step.events)
        if pos > position:
            end = index + 1
            break
    prefix = Counterexample(
        cx.config,
        cx.seed,
        cx.mutants,
        cx.implementation,
        make_verdict("pass", "", "excerpt being judged", -1),
        cx.steps[:end],
    )
    result = replay(prefix, None)
    if result.failure is None:
        verdict = make_verdict("pass", "", "the lockstep model accepts every event of this excerpt", -1)
    else:
        f = result.failure
        verdict = make_verdict(f.verdict, f.name, f.message, result.failing_step or 0)
    verdict["mined"] = mined
    return Counterexample(cx.config, cx.seed, cx.mutants, cx.implementation, verdict, prefix.steps)


def write_excerpts(
    root: str | os.PathLike[str], manifest: Manifest, report: MineReport, out: Path, limit: int
) -> tuple[list[Path], list[str]]:
    """Write an excerpt for each of the first ``limit`` flagged traces (trace id order) as
    ``out/excerpt-trace-T.jsonl``; returns the paths and the read errors met."""
    chosen: Sequence[int] = sorted(report.flagged)[:limit]
    if not chosen:
        return [], []
    read = ReadReport()
    paths = []
    out.mkdir(parents=True, exist_ok=True)
    for meta, cx in read_traces(root, manifest, read, chosen):
        found = report.flagged[meta.trace]
        position = report.first_position(meta.trace)
        first = min(found, key=lambda name: found[name][1])
        mined = {"trace": meta.trace, "invariant": first, "position": position, "invariants": sorted(found)}
        path = out / f"excerpt-trace-{meta.trace}.jsonl"
        write_counterexample(path, excerpt(cx, position, mined))
        paths.append(path)
    return paths, [str(e) for e in read.errors]
