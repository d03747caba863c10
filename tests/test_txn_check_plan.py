"""model.txn_invariants.check_state through a memo compares the parts of the state its invariants
read once per check (``Reads``) and re-runs only the invariants reading a part that changed; the
clock step's deadline caches (model.txn_timeout, model.txn_answers) answer what the full
computation answers. Each shortcut gives the verdicts of doing the whole work."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.conformance.scenarios import run_scenario
from kconform.conformance.txn import scenarios as Z
from kconform.conformance.txn.lockstep import TxnJudge
from kconform.impl.txn.cluster import TxnCluster
from kconform.model import txn_answers as A
from kconform.model import txn_invariants as I
from kconform.model import txn_timeout
from kconform.model.txn_config import TxnConfig
from kconform.model.txn_state import TxnState
from tests.test_txn_invariants import BAD_STATES, CFG, good_state


@pytest.mark.parametrize("name", sorted(BAD_STATES))
def test_named_checks_through_a_memo_agree_with_checking_afresh(name: str) -> None:
    good = good_state()
    bad = BAD_STATES[name](good)
    for names in (frozenset({name}), frozenset({name, "ValidTxnTransitions"}), None):
        memo: I.Memo = {}
        for s in (good, bad, bad, good, bad):
            assert I.check_state(s, CFG, names, memo) == I.check_state(s, CFG, names), (name, names)


def test_an_unchanged_state_returns_the_last_verdicts_and_a_new_config_reruns() -> None:
    bad = BAD_STATES["TxnAtomicity"](good_state())
    memo: I.Memo = {}
    first = I.check_state(bad, CFG, None, memo)
    assert "TxnAtomicity" in {v.invariant for v in first} and first == I.check_state(bad, CFG)
    assert I.check_state(bad, CFG, None, memo) == first
    tv2 = TxnConfig(transaction_version=2)
    again = I.check_state(bad, tv2, None, memo)
    assert again == I.check_state(bad, tv2) and memo[I._LAST].cfg is tv2


def test_an_invariant_without_declared_parts_is_served_by_the_registrys_memo() -> None:
    """A replaced invariant whose inputs are a plain function: no plan, the registry's own memo."""
    name = "ValidTxnTransitions"
    original = I.INVARIANTS[name]
    I.INVARIANTS[name] = replace(original, inputs=lambda s: (s.ghost.transitions,))
    try:
        assert I._plan(None) is None
        good = good_state()
        memo: I.Memo = {}
        for s in (good, BAD_STATES[name](good), good):
            assert I.check_state(s, CFG, None, memo) == I.check_state(s, CFG)
    finally:
        I.INVARIANTS[name] = original
    assert I._plan(None) is not None


def test_every_state_invariant_declares_its_parts() -> None:
    plan = I._plan(None)
    assert plan is not None
    assert plan.names == tuple(n for n, inv in I.INVARIANTS.items() if inv.state_check is not None)


def _states(scenario: Z.Scenario) -> list[TxnState]:
    """Every state the lockstep judge goes through on ``scenario``'s events."""
    run = run_scenario(TxnCluster(), scenario, CFG, frozenset())
    assert not run.failed
    judge = TxnJudge(CFG)
    out = []
    for step in run.steps:
        judge.note_operation(step.op)
        for e in step.events:
            judge.observe(e)
            out.append(judge.state)
    return out


@pytest.mark.parametrize("scenario", [Z.PRODUCER_EXPIRY, Z.LATE_PRODUCE_AFTER_ABORT, Z.STALE_COORDINATOR_MARKER])
def test_the_deadline_caches_answer_what_the_full_computation_answers(scenario: Z.Scenario) -> None:
    """At every state of a scenario and at clocks around every deadline, the late messages are those
    of going through every transaction, producer and owed request."""
    states = _states(scenario)
    seen = 0
    for s in states:
        aborts = [d for _t, d in txn_timeout.abort_deadlines(s.txns, s.coordinators, CFG)]
        expiries = [d for _n, _p, d in txn_timeout.expiry_deadlines(s.partitions, CFG)]
        dues = [r.sent_ms + A.REQUEST_TIMEOUT_MS for r in s.ghost.owed.values()]
        for now in {s.now_ms, *(d + k for d in (*aborts, *expiries, *dues) for k in (0, 1))}:
            assert len(txn_timeout.late_aborts(s.txns, s.coordinators, CFG, now)) == sum(now > d for d in aborts)
            assert len(txn_timeout.late_expiries(s.partitions, CFG, now)) == sum(now > d for d in expiries)
            assert len(A.late(s.ghost.owed, now)) == sum(now > d for d in dues)
            seen += bool(aborts or expiries or dues)
    assert seen > 0, "the scenario has deadlines to compare around"
