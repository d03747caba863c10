"""model.timer_bounds: ``record_late`` stores new late messages in the ghost (a new ghost value) and
leaves a state alone when nothing is late or nothing changed; ``reports`` registers an invariant
that yields one violation per recorded message (silent on none), keeps the decorated function's
docstring as its guarantee and reads only those messages (its memo inputs). Each timer bound that
uses them keeps its own docstring and citation."""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model import guarantees, timer_bounds
from kconform.model import invariants as I
from kconform.model import txn_invariants as TI

TXN_BOUNDS = ("TxnTimeoutAbortBounded", "ProducerExpiryBounded")


@dataclass(frozen=True)
class _Ghost:
    late: tuple[str, ...] = ()
    other: int = 0


@dataclass(frozen=True)
class _State:
    ghost: _Ghost = _Ghost()
    clock: int = 0


def test_record_late_stores_new_messages_and_leaves_a_state_alone_otherwise() -> None:
    s = _State(_Ghost(late=(), other=3), clock=7)
    assert timer_bounds.record_late(s, "late", ()) is s  # nothing late: the very same state
    late = timer_bounds.record_late(s, "late", ("x is late",))
    assert late == _State(_Ghost(late=("x is late",), other=3), clock=7)
    assert timer_bounds.record_late(late, "late", ("x is late",)) is late  # unchanged: no new ghost
    assert timer_bounds.record_late(late, "late", ()) is late  # a quiet tick drops nothing recorded
    later = timer_bounds.record_late(late, "late", ("x is late", "y is late"))
    assert later.ghost.late == ("x is late", "y is late") and later.ghost.other == 3


def test_reports_yields_each_recorded_message_and_is_silent_on_none() -> None:
    reg = guarantees.Registry[_State, None]()

    @timer_bounds.reports(reg, "SomethingBounded", "a citation")
    def something_bounded(s: _State) -> tuple[str, ...]:
        """Something happens within its bound."""
        return s.ghost.late

    inv = reg.invariants["SomethingBounded"]
    assert (inv.doc, inv.cite, inv.over_steps) == ("Something happens within its bound.", "a citation", False)
    assert something_bounded.__doc__ == "Something happens within its bound."
    quiet = _State(_Ghost(late=(), other=1))
    assert reg.check_state(quiet, None) == []
    loud = _State(_Ghost(late=("a", "b"), other=1))
    assert reg.check_state(loud, None) == [
        guarantees.Violation("SomethingBounded", "a"),
        guarantees.Violation("SomethingBounded", "b"),
    ]
    assert inv.inputs is not None and inv.inputs(loud) == (("a", "b"),)
    memo: guarantees.Memo = {}
    assert len(reg.check_state(loud, None, memo=memo)) == 2
    assert reg.check_state(_State(_Ghost(late=("a", "b"), other=9)), None, memo=memo) == [
        guarantees.Violation("SomethingBounded", "a"),
        guarantees.Violation("SomethingBounded", "b"),
    ]


def test_every_timer_bound_keeps_its_own_guarantee_and_citation() -> None:
    found: list[tuple[str, str, str]] = []
    for n, inv in I.INVARIANTS.items():
        if n in I.TIMER_BOUNDS and inv.state_check is not None:
            found.append((inv.doc, inv.cite, inv.state_check.__name__))
    for n in TXN_BOUNDS:
        check = TI.INVARIANTS[n].state_check
        if check is not None:
            found.append((TI.INVARIANTS[n].doc, TI.INVARIANTS[n].cite, check.__name__))
    assert len(found) == len(I.TIMER_BOUNDS) + len(TXN_BOUNDS)
    for doc, cite, fn in found:
        assert doc and cite and fn != "check", doc
    assert len({doc for doc, _, _ in found}) == len(found)
