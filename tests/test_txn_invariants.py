"""Every exactly-once invariant fires on a hand-built bad state and stays quiet on a good one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from kconform.conformance.txn.lockstep import TxnJudge
from kconform.model import txn_delayed_fetch as D
from kconform.model import txn_invariants as I
from kconform.model import txn_state as S
from kconform.model.invariants import Violation
from kconform.model.txn_config import TxnConfig
from kconform.model.txn_state import TxnState
from kconform.traces.events import Record
from tests import memokit
from tests.test_txn_lockstep import PID, TXN, committed_txn

CFG = TxnConfig()


def good_state(cfg: TxnConfig = CFG) -> TxnState:
    """After one committed transaction over t-0 and t-1 and a read_committed read of t-0."""
    judge = TxnJudge(cfg)
    for e in committed_txn():
        assert judge.observe(e) == []
    return judge.state


def _ghost(s: TxnState, **changes: object) -> TxnState:
    return replace(s, ghost=replace(s.ghost, **changes))  # type: ignore[arg-type]


def _part(s: TxnState, name: str, **changes: object) -> TxnState:
    return s.with_partition(replace(s.partition(name), **changes))  # type: ignore[arg-type]


def _append(s: TxnState, name: str, record: Record) -> TxnState:
    return _part(s, name, log=(*s.partition(name).log, replace(record, offset=s.partition(name).leo)))


def _fate(s: TxnState, key: tuple[str, int], commit: bool) -> TxnState:
    fate = s.ghost.fates[key]
    return _ghost(s, fates=s.ghost.fates.set(key, replace(fate, commit=commit)))


def _names(vs: list[Violation], allowed: bool = False) -> set[str]:
    return {v.invariant for v in vs if v.allowed == allowed}


def test_good_state_has_no_violation() -> None:
    s = good_state()
    assert I.check_state(s, CFG) == []
    assert s.ghost.reads and s.ghost.fates and s.ghost.owners, "the good state exercises the ghost"


def test_every_invariant_has_a_doc_and_a_citation() -> None:
    for inv in I.INVARIANTS.values():
        assert inv.doc.endswith("."), inv.name
        assert inv.cite, inv.name


BAD_STATES: dict[str, Callable[[TxnState], TxnState]] = {
    "NoDuplicateAppends": lambda s: _append(s, "t-0", Record(0, PID, 0, 2, 1, 1, -1)),
    "PerProducerOrder": lambda s: _append(s, "t-0", Record(0, PID, 0, 5, 9, 0, -1)),
    "TxnAtomicity": lambda s: _fate(s, ("t-1", 0), False),
    "NoAbortedRead": lambda s: _fate(s, ("t-0", 0), False),
    "NoUncommittedRead": lambda s: _ghost(s, reads=s.ghost.reads | {S.Read("t-0", 0, True, False)}),
    "LsoBounds": lambda s: _ghost(s, served=s.ghost.served | {S.ServedLso("t-0", 3, 2, 3, -1)}),
    "NoZombieCommit": lambda s: _ghost(
        s, owners=s.ghost.owners.set(("t-0", 0), replace(s.ghost.owners[("t-0", 0)], zombie=True))
    ),
    "ProducerExpiryBounded": lambda s: _ghost(s, late_expiries=("t-0: producer 1000's state outlived 87000000 ms",)),
    "TxnTimeoutAbortBounded": lambda s: _ghost(s, late_aborts=("'txn-1' stayed Ongoing past 70000 ms",)),
    "BrokerAnswersBounded": lambda s: _ghost(s, late_answers=("WriteTxnMarkers request 7 unanswered at 30001 ms",)),
    "ValidTxnTransitions": lambda s: _ghost(s, transitions=s.ghost.transitions | {("Empty", "PrepareCommit")}),
    "NoHangingTransaction": lambda s: _part(
        s,
        "t-0",
        producers=s.partition("t-0").producers.set(PID, replace(s.partition("t-0").producer(PID), txn_first_offset=0)),
    ),
    "OneOutcomePerTransaction": lambda s: _ghost(s, end_answers=s.ghost.end_answers | {S.EndAnswer(TXN, 1, False)}),
    "NoUncommittedOffsetRead": lambda s: _ghost(
        s, offset_reads=s.ghost.offset_reads | {S.OffsetRead("__consumer_offsets-12", "my-group", "t-0", 5, 0)}
    ),
    "DelayedFetchDeadlines": lambda s: replace(
        s, parked=(D.TxnDelayedFetch(9, 0, "t-0", 5, 5, True, 1, s.now_ms - 1),)
    ),
    "DelayedFetchTriggersHonoured": lambda s: _ghost(s, overdue=("broker 0: delayed fetch 9 was completable",)),
    "DelayedFetchIsolation": lambda s: _ghost(s, delayed_reads=frozenset({D.DelayedRead(9, "t-0", True, 3, 2)})),
}


@pytest.mark.parametrize("name", sorted(BAD_STATES))
def test_state_invariant_fires_on_a_bad_state(name: str) -> None:
    good = good_state()
    assert name not in _names(I.check_state(good, CFG, frozenset({name})))
    bad = BAD_STATES[name](good)
    assert name in _names(I.check_state(bad, CFG, frozenset({name})))


class _Recorder:
    """Stands for a TxnState (or its ghost) and records which of its fields are read."""

    def __init__(self, obj: Any, path: tuple[str, ...], seen: set[tuple[str, ...]]) -> None:
        self._obj, self._path, self._seen = obj, path, seen

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._obj, name)
        path = (*self._path, name)
        if path == ("ghost",):
            return _Recorder(value, path, self._seen)
        self._seen.add(path)
        return value


def record(state: Any, seen: set[tuple[str, ...]]) -> _Recorder:
    """The recorder standing for ``state`` (tests.memokit.reads)."""
    return _Recorder(state, (), seen)


def reads(fn: Any, state: Any, *args: Any) -> set[tuple[str, ...]]:
    return memokit.reads(record, fn, state, *args)


@pytest.mark.parametrize("name", sorted(BAD_STATES))
def test_a_memo_recomputes_what_changed_and_declares_what_it_reads(name: str) -> None:
    """Judged through one memo (as the judge does), good → bad → good gives the verdicts of checking
    each state afresh; the invariant reads, on the bad state too, only the inputs it declares."""
    good = good_state()
    bad = BAD_STATES[name](good)
    memokit.memo_agrees(I.check_state, (good, bad, good, bad), CFG, {})
    inv = I.INVARIANTS[name]
    assert inv.state_check is not None and inv.inputs is not None
    assert reads(inv.state_check, bad, CFG) <= reads(inv.inputs, bad)


def test_all_state_invariants_are_covered_by_a_bad_state() -> None:
    state_invs = {n for n, inv in I.INVARIANTS.items() if inv.state_check is not None}
    assert state_invs == set(BAD_STATES)


def test_producer_epoch_monotonic_fires_when_an_epoch_goes_back() -> None:
    pre = good_state()
    meta = pre.txns[TXN]
    post = replace(pre, txns=pre.txns.set(TXN, replace(meta, epoch=-1)))
    assert "ProducerEpochMonotonic" in _names(I.check_step(pre, post, CFG))
    entry = pre.partition("t-0").producer(PID)
    post2 = _part(pre, "t-0", producers=pre.partition("t-0").producers.set(PID, replace(entry, epoch=-1)))
    assert "ProducerEpochMonotonic" in _names(I.check_step(pre, post2, CFG))
    assert I.check_step(pre, pre, CFG) == []


def test_all_step_invariants_have_a_test() -> None:
    assert {n for n, inv in I.INVARIANTS.items() if inv.step_check is not None} == {"ProducerEpochMonotonic"}


def test_split_outcome_caused_by_another_client_transaction_is_allowed_in_tv0_only() -> None:
    s = good_state()
    key = ("t-1", 0)
    split = _ghost(s, fates=s.ghost.fates.set(key, replace(s.ghost.fates[key], commit=False, by_ctxn=2)))
    vs = I.check_state(split, CFG, frozenset({"TxnAtomicity"}))
    assert vs and all(v.allowed and "KAFKA-17754" in v.allowed_because for v in vs)
    tv2 = TxnConfig(transaction_version=2)
    assert "TxnAtomicity" in _names(I.check_state(split, tv2, frozenset({"TxnAtomicity"})))


def test_order_gap_across_producer_expiry_is_allowed() -> None:
    s = _append(good_state(), "t-0", Record(0, PID, 0, 7, 9, 0, -1))
    gap = I.check_state(s, CFG, frozenset({"PerProducerOrder"}))
    assert gap and not gap[0].allowed
    expired = _ghost(s, expired=frozenset({("t-0", PID, 3)}))
    vs = I.check_state(expired, CFG, frozenset({"PerProducerOrder"}))
    assert vs and all(v.allowed for v in vs)
