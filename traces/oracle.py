"""The oracle: the lockstep model (conformance.replication.lockstep.Judge) run over every trace of a corpus.

Single process, one trace at a time, every event judged from a fresh model: the reference the Spark
miner is compared with. Per trace it reports the first failing finding (its position in the trace,
``non-conformance`` or ``invariant-violation``, and the rule or invariant name) and every
invariant the model saw broken.

How it relates to the miner (docs/traces.md, "Miner and oracle"): the comparable unit is the
**trace**, flagged or not. The judge flags a trace at the first event the model forbids (a
non-conformance, named after the event kind) or after which a model invariant breaks; the miner
flags a trace when one of its stream invariants fails on the implementation's own claims. On a
corpus of the reference implementation with plantable mutants (``PLANTABLE``) the two agree
exactly, and the miner never flags a trace at a position before the oracle's first failure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kconform.conformance.registry import for_config
from kconform.traces.corpus import Manifest, ReadReport, read_traces
from kconform.traces.counterexample import Counterexample


@dataclass(frozen=True)
class TraceVerdict:
    """The judge's verdict on one trace: ``flagged`` iff some event failed; then the ``position``
    (0-based event index in the trace), ``verdict`` kind and ``name`` of the first failure, and
    ``invariants``: every model invariant that broke (not allowed) anywhere in the trace."""

    trace: int
    events: int
    flagged: bool
    position: int | None = None
    verdict: str | None = None
    name: str | None = None
    message: str | None = None
    invariants: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "events": self.events,
            "flagged": self.flagged,
            "position": self.position,
            "verdict": self.verdict,
            "name": self.name,
            "message": self.message,
            "invariants": list(self.invariants),
        }


def judge_trace(trace: int, cx: Counterexample) -> TraceVerdict:
    """Run a fresh judge of the trace's slice over every event of ``cx`` in order (all of them, past the first failure:
    a later invariant breach is still recorded)."""
    judge = for_config(cx.config).make_judge(cx.config, None)
    first: tuple[int, str, str, str] | None = None
    broken: set[str] = set()
    pos = 0
    for step in cx.steps:
        for event in step.events:
            for finding in judge.observe(event):
                if not finding.failing:
                    continue
                if finding.verdict == "invariant-violation":
                    broken.add(finding.name)
                if first is None:
                    first = (pos, finding.verdict, finding.name, finding.message)
            pos += 1
    if first is None:
        return TraceVerdict(trace, pos, False)
    return TraceVerdict(trace, pos, True, first[0], first[1], first[2], first[3], tuple(sorted(broken)))


@dataclass
class OracleResult:
    """Verdicts per trace (only the traces read), the read report, and the wall-clock seconds."""

    verdicts: dict[int, TraceVerdict] = field(default_factory=dict)
    read: ReadReport = field(default_factory=ReadReport)
    seconds: float = 0.0

    @property
    def flagged(self) -> frozenset[int]:
        return frozenset(t for t, v in self.verdicts.items() if v.flagged)

    @property
    def events(self) -> int:
        return sum(v.events for v in self.verdicts.values())


def run_oracle(
    root: str | os.PathLike[str],
    manifest: Manifest,
    traces: Iterable[int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> OracleResult:
    """Judge every trace of the corpus (or the listed ids); unreadable files are reported in
    ``result.read.errors`` and their traces skipped, the rest is judged."""
    result = OracleResult()
    started = time.perf_counter()
    ids = [t.trace for t in manifest.traces] if traces is None else list(traces)
    for meta, cx in read_traces(root, manifest, result.read, ids):
        verdict = judge_trace(meta.trace, cx)
        result.verdicts[meta.trace] = verdict
        if progress is not None:
            progress(verdict.events)
    result.seconds = time.perf_counter() - started
    return result
