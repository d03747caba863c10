"""The exactly-once judge re-runs a state invariant only when the parts of the state it reads
changed (model.txn_invariants.check_state with a memo): its findings are those of re-running every
invariant after every event, and each invariant's declared inputs cover everything it reads."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.txn.lockstep import TxnJudge
from kconform.impl.mutants import mutants_of
from kconform.model import guarantees
from kconform.model import txn_graph as G
from kconform.model import txn_invariants as I
from kconform.model.txn_config import TxnConfig
from kconform.model.txn_state import initial_state
from kconform.traces.generate import Plan
from tests.memokit import Trace, clock_readers, findings_agree, generated_traces
from tests.test_txn_invariants import reads, record

PLANTED = tuple((m, 1) for m in mutants_of("txn") if m != "epoch-overflow")
"""Every txn mutant a generated trace can carry (epoch-overflow needs 32,768 producer inits)."""


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Trace]:
    plan = Plan(events=16_000, seed=11, trace_events=1_200, config=TxnConfig(), plant=PLANTED)
    return generated_traces(tmp_path_factory.mktemp("memo") / "c", plan, TxnConfig)


def _no_memo(judge: Any) -> None:
    judge._memo = None  # every invariant re-run after every event


def _no_skip(judge: Any) -> None:
    judge.unchanged = lambda pre, post: post is pre  # a clock tick is checked like any step


def test_memoised_judging_finds_what_rechecking_everything_finds(traces: list[Trace]) -> None:
    verdicts = findings_agree(traces, TxnJudge, _no_memo)
    assert verdicts[NON_CONFORMANCE] > 0, verdicts  # (firing invariants: test_txn_invariants, memoised)


def test_each_invariant_declares_every_part_of_the_state_it_reads(
    traces: list[Trace],
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


def test_a_clock_tick_skips_the_checks_and_finds_what_checking_finds(traces: list[Trace]) -> None:
    """TxnJudge.unchanged: a step that moves only the clock (no invariant reads it) is not
    re-checked (issue 17); judging with and without that shortcut gives the same findings."""
    findings_agree(traces, TxnJudge, _no_skip)
    assert sum(e.kind == "clock_advanced" for _cfg, events in traces for e in events) > 1_000


def test_no_invariant_reads_the_clock(traces: list[Trace]) -> None:
    cfg, events = traces[0]
    judge = TxnJudge(cfg)
    for event in events:
        judge.observe(event)
    assert clock_readers(record, I.INVARIANTS.values(), judge.state, cfg) == []


def test_same_inputs_means_the_very_same_objects() -> None:
    """guarantees.same_inputs: identity, element by element; an equal but distinct object is a change."""
    a, b = frozenset({1}), (2, 3)
    assert guarantees.same_inputs((a, b), (a, b))
    assert not guarantees.same_inputs((a, b), (a, tuple([2, 3])))
    assert not guarantees.same_inputs((a, b), (a,))
