"""What the memo tests of every slice share (tests/test_invariant_memo.py, tests/test_txn_invariant_memo.py):
generated traces judged twice, once through the memo and once re-checking everything, and the
probe that records which parts of a state a check reads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from kconform.conformance.judge import LockstepJudge
from kconform.model.configs import AnyConfig, config_from_json
from kconform.traces.corpus import ReadReport, read_manifest, read_traces
from kconform.traces.events import Event
from kconform.traces.generate import Plan, generate

Trace = tuple[Any, list[Event]]
"""A generated trace: its configuration and its events in order."""


def generated_traces(root: Path, plan: Plan, config_type: type) -> list[Trace]:
    """The traces ``plan`` generates under ``root``, read back (no read error), each with its config."""
    generate(root, plan)
    report = ReadReport()
    out: list[Trace] = []
    for meta, cx in read_traces(root, read_manifest(root), report):
        cfg: AnyConfig = config_from_json(meta.config)
        assert isinstance(cfg, config_type)
        out.append((cfg, [e for step in cx.steps for e in step.events]))
    assert not report.errors
    return out


def findings_agree(
    traces: Sequence[Trace],
    make_judge: Callable[[Any], LockstepJudge[Any, Any]],
    unshortcut: Callable[[LockstepJudge[Any, Any]], None],
) -> Counter[str]:
    """Judge every trace twice, with the judge as it is and with one ``unshortcut`` (its memo or its
    skip turned off), asserting the same findings event by event and the same counters; the verdicts seen."""
    verdicts: Counter[str] = Counter()
    for cfg, events in traces:
        fast, full = make_judge(cfg), make_judge(cfg)
        unshortcut(full)
        for i, event in enumerate(events):
            a = [(f.verdict, f.name, f.message) for f in fast.observe(event)]
            b = [(f.verdict, f.name, f.message) for f in full.observe(event)]
            assert a == b, f"event {i} ({event.kind}) of a trace under {cfg}"
            verdicts.update(v for v, _, _ in a)
        assert fast.checks == full.checks and fast.violations == full.violations
    return verdicts


def memo_agrees(check_state: Callable[..., list[Any]], states: Sequence[Any], cfg: Any, memo: dict[str, Any]) -> None:
    """Checked in turn through one memo, each state gets the verdicts of checking it afresh."""
    for s in states:
        assert check_state(s, cfg, memo=memo) == check_state(s, cfg)


Recorder = Callable[[Any, set[tuple[str, ...]]], Any]
"""``recorder(state, seen)``: a stand-in for ``state`` adding the path of each field read to ``seen``."""


def reads(recorder: Recorder, fn: Any, state: Any, *args: Any) -> set[tuple[str, ...]]:
    """The paths of the fields ``fn`` reads of ``state`` (``recorder(state, seen)`` stands for it)."""
    seen: set[tuple[str, ...]] = set()
    result = fn(recorder(state, seen), *args)
    if not isinstance(result, tuple):
        list(result)
    return seen


def clock_readers(
    recorder: Recorder,
    invariants: Iterable[Any],
    state: Any,
    cfg: Any,
) -> list[str]:
    """The invariants (state or step ones) that read ``now_ms`` on ``state``."""
    out = []
    for inv in invariants:
        if inv.state_check is not None:
            seen = reads(recorder, inv.state_check, state, cfg)
        else:
            assert inv.step_check is not None
            seen = set()
            list(inv.step_check(recorder(state, seen), recorder(state, seen), cfg))
        if ("now_ms",) in seen:
            out.append(inv.name)
    return out
