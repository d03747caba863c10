"""The exactly-once judge re-runs a state invariant only when the parts of the state it reads
changed (model.txn_invariants.check_state with a memo): its findings are those of re-running every
invariant after every event, and each invariant's declared inputs cover everything it reads."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.txn.lockstep import TxnJudge
from kconform.impl.mutants import mutants_of
from kconform.model import txn_graph as G
from kconform.model import txn_invariants as I
from kconform.model.configs import config_from_json
from kconform.model.txn_config import TxnConfig
from kconform.model.txn_state import initial_state
from kconform.traces.corpus import ReadReport, read_manifest, read_traces
from kconform.traces.generate import Plan, generate
from tests.test_txn_invariants import _Recorder, reads

PLANTED = tuple((m, 1) for m in mutants_of("txn") if m != "epoch-overflow")
"""Every txn mutant a generated trace can carry (epoch-overflow needs 32,768 producer inits)."""


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[TxnConfig, list[Any]]]:
    root = tmp_path_factory.mktemp("memo") / "c"
    generate(root, Plan(events=16_000, seed=11, trace_events=1_200, config=TxnConfig(), plant=PLANTED))
    manifest = read_manifest(root)
    report = ReadReport()
    out = []
    for meta, cx in read_traces(root, manifest, report):
        cfg = config_from_json(meta.config)
        assert isinstance(cfg, TxnConfig)
        out.append((cfg, [e for step in cx.steps for e in step.events]))
    assert not report.errors
    return out


def test_memoised_judging_finds_what_rechecking_everything_finds(
    traces: list[tuple[TxnConfig, list[Any]]],
) -> None:
    verdicts: Counter[str] = Counter()
    for cfg, events in traces:
        fast, full = TxnJudge(cfg), TxnJudge(cfg)
        full._memo = None  # type: ignore[assignment]  # every invariant re-run after every event
        for i, event in enumerate(events):
            a = [(f.verdict, f.name, f.message) for f in fast.observe(event)]
            b = [(f.verdict, f.name, f.message) for f in full.observe(event)]
            assert a == b, f"event {i} ({event.kind}) of a {cfg.transaction_version=} trace"
            verdicts.update(v for v, _, _ in a)
    assert verdicts[NON_CONFORMANCE] > 0, verdicts  # (firing invariants: test_txn_invariants, memoised)


def test_each_invariant_declares_every_part_of_the_state_it_reads(
    traces: list[tuple[TxnConfig, list[Any]]],
) -> None:
    checked = 0
    for cfg, events in traces:
        judge = TxnJudge(cfg)
        for event in events:
            judge.observe(event)
        for inv in I.INVARIANTS.values():
            if inv.state_check is None:
                continue
            assert inv.inputs is not None, f"{inv.name} declares no inputs"
            declared = reads(inv.inputs, judge.state)
            assert reads(inv.state_check, judge.state, cfg) <= declared, inv.name
            checked += 1
    assert checked >= 11 * len(traces)


def test_a_changed_input_reruns_the_invariant() -> None:
    """The memo is keyed on identity: a state whose inputs are other objects is checked afresh."""
    cfg = TxnConfig()
    s = initial_state(cfg)
    memo: I.Memo = {}
    assert I.check_state(s, cfg, memo=memo) == []
    bad = replace(s, ghost=replace(s.ghost, transitions=frozenset({(G.EMPTY, G.COMPLETE_COMMIT)})))
    assert [v.invariant for v in I.check_state(bad, cfg, memo=memo)] == ["ValidTxnTransitions"]
    assert I.check_state(s, cfg, memo=memo) == []


def test_a_clock_tick_skips_the_checks_and_finds_what_checking_finds(
    traces: list[tuple[TxnConfig, list[Any]]],
) -> None:
    """TxnJudge.unchanged: a step that moves only the clock (no invariant reads it) is not
    re-checked (issue 17); judging with and without that shortcut gives the same findings."""
    ticks = 0
    for cfg, events in traces:
        fast, full = TxnJudge(cfg), TxnJudge(cfg)
        full.unchanged = lambda pre, post: post is pre  # type: ignore[method-assign]
        for i, event in enumerate(events):
            ticks += event.kind == "clock_advanced"
            a = [(f.verdict, f.name, f.message) for f in fast.observe(event)]
            b = [(f.verdict, f.name, f.message) for f in full.observe(event)]
            assert a == b, f"event {i} ({event.kind})"
    assert ticks > 1_000


def test_no_invariant_reads_the_clock(traces: list[tuple[TxnConfig, list[Any]]]) -> None:
    cfg, events = traces[0]
    judge = TxnJudge(cfg)
    for event in events:
        judge.observe(event)
    for inv in I.INVARIANTS.values():
        if inv.state_check is not None:
            assert ("now_ms",) not in reads(inv.state_check, judge.state, cfg), inv.name
        else:
            assert inv.step_check is not None
            seen: set[tuple[str, ...]] = set()
            list(inv.step_check(_Recorder(judge.state, (), seen), _Recorder(judge.state, (), seen), cfg))  # type: ignore[arg-type]
            assert ("now_ms",) not in seen, inv.name
