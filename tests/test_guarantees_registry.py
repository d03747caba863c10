"""model.guarantees' hot path (issue 17, speed): a shared input part computed once per state, and a
registry whose check loop sees invariants registered after its first check (as a helper adding an
invariant in the existing style does, at import time of any module)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import pytest

from kconform.model import guarantees
from kconform.model.guarantees import Memo, Registry, Violation


@dataclass(frozen=True)
class _S:
    x: int
    y: int


def test_a_per_state_part_is_computed_once_per_state_object() -> None:
    calls: list[_S] = []

    @guarantees.per_state
    def part(s: _S) -> tuple[int, int]:
        """Both fields."""
        calls.append(s)
        return (s.x, s.y)

    a, b = _S(1, 2), _S(1, 2)
    assert part(a) == (1, 2) and part(a) == (1, 2)
    assert calls == [a]
    assert part(b) == (1, 2) and len(calls) == 2  # an equal state that is another object: computed again
    assert part(_S(3, 4)) == (3, 4) and part(a) == (1, 2) and len(calls) == 4  # only the last state is held
    assert part.__doc__ == "Both fields." and part.__name__ == "part"


def _registry() -> Registry[_S, object]:
    reg: Registry[_S, object] = Registry()

    @guarantees.per_state
    def shared(s: _S) -> tuple[int, ...]:
        return (s.x,)

    @reg.state("XSmall", "test", lambda s: (shared(s),))
    def x_small(s: _S, cfg: object) -> Iterator[Violation]:
        if s.x > 5:
            yield Violation("XSmall", f"x {s.x}")

    @reg.state("XEven", "test", lambda s: (shared(s),))
    def x_even(s: _S, cfg: object) -> Iterator[Violation]:
        if s.x % 2:
            yield Violation("XEven", f"x {s.x}")

    return reg


def test_an_invariant_registered_after_a_check_is_checked_memo_or_not() -> None:
    reg, cfg = _registry(), object()
    memo: Memo = {}
    assert [v.invariant for v in reg.check_state(_S(7, 0), cfg, memo=memo)] == ["XSmall", "XEven"]

    @reg.state("YZero", "test", lambda s: (s.y,))
    def y_zero(s: _S, cfg: object) -> Iterator[Violation]:
        if s.y:
            yield Violation("YZero", f"y {s.y}")

    state = _S(7, 1)
    assert [v.invariant for v in reg.check_state(state, cfg, memo=memo)] == ["XSmall", "XEven", "YZero"]
    assert [v.invariant for v in reg.check_state(state, cfg)] == ["XSmall", "XEven", "YZero"]
    assert [v.invariant for v in reg.check_state(state, cfg, frozenset({"YZero"}), memo)] == ["YZero"]
    assert reg.check_state(_S(2, 0), cfg, memo=memo) == []  # the memo re-ran what changed: nothing fires


def test_the_memo_returns_the_verdict_of_equal_inputs_and_reruns_on_a_change() -> None:
    reg, cfg = _registry(), object()
    memo: Memo = {}
    first = reg.check_state(_S(9, 0), cfg, memo=memo)
    again = reg.check_state(_S(9, 5), cfg, memo=memo)  # y is read by none: the same verdicts, not re-run
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))
    assert [v.message for v in reg.check_state(_S(11, 0), cfg, memo=memo)] == ["x 11", "x 11"]
    assert reg.check_state(_S(9, 0), object(), memo=memo) == first  # another config: re-run, same values


def test_a_replaced_invariant_is_the_one_checked() -> None:
    reg, cfg = _registry(), object()
    memo: Memo = {}
    assert [v.invariant for v in reg.check_state(_S(7, 0), cfg, memo=memo)] == ["XSmall", "XEven"]
    original = reg.invariants["XEven"]
    reg.invariants["XEven"] = replace(original, state_check=lambda s, c: iter(()))
    assert [v.invariant for v in reg.check_state(_S(9, 0), cfg, memo=memo)] == ["XSmall"]
    del reg.invariants["XSmall"]
    assert reg.check_state(_S(9, 0), cfg) == []
    reg.invariants["XEven"] = original
    assert [v.invariant for v in reg.check_state(_S(9, 0), cfg)] == ["XEven"]


# A registry with Parts (the replication slice's kind): the parts that differ from the state checked
# last through the memo decide what is re-run; a state equal in every part keeps every verdict.


def _changed(a: _S, b: _S) -> int:
    return (1 if a.x != b.x else 0) | (2 if a.y != b.y else 0)


def _parts_registry(ran: list[str]) -> Registry[_S, object]:
    reg: Registry[_S, object] = Registry(parts=guarantees.Parts(("x", "y"), _changed))

    @reg.state("XSmall", "test", lambda s: (s.x,), frozenset({"x"}))
    def x_small(s: _S, cfg: object) -> Iterator[Violation]:
        ran.append("XSmall")
        if s.x > 5:
            yield Violation("XSmall", f"x {s.x}")

    @reg.state("YZero", "test", lambda s: (s.y,), frozenset({"y"}))
    def y_zero(s: _S, cfg: object) -> Iterator[Violation]:
        ran.append("YZero")
        if s.y:
            yield Violation("YZero", f"y {s.y}")

    @reg.state("XYEqual", "test", lambda s: (s.x, s.y))  # no parts declared: its inputs decide
    def xy_equal(s: _S, cfg: object) -> Iterator[Violation]:
        ran.append("XYEqual")
        if s.x != s.y:
            yield Violation("XYEqual", f"{s.x} != {s.y}")

    return reg


def test_parts_rerun_only_the_invariants_whose_parts_differ() -> None:
    ran: list[str] = []
    reg, cfg = _parts_registry(ran), object()
    memo: Memo = {}
    first = reg.check_state(_S(7, 1), cfg, memo=memo)
    assert [v.invariant for v in first] == ["XSmall", "YZero", "XYEqual"] and ran == ["XSmall", "YZero", "XYEqual"]
    ran.clear()
    again = reg.check_state(_S(7, 1), cfg, memo=memo)  # another object, equal in every part
    assert again == first and all(a is b for a, b in zip(again, first, strict=True)) and ran == []
    assert [v.message for v in reg.check_state(_S(7, 0), cfg, memo=memo)] == ["x 7", "7 != 0"]
    assert ran == ["YZero", "XYEqual"]  # x did not change: XSmall kept its verdict
    ran.clear()
    assert [v.message for v in reg.check_state(_S(2, 0), cfg, memo=memo)] == ["2 != 0"]
    assert ran == ["XSmall", "XYEqual"]
    for s in (_S(2, 0), _S(9, 9), _S(9, 3), _S(1, 3)):  # through the memo as checked afresh
        assert reg.check_state(s, cfg, memo=memo) == reg.check_state(s, cfg)


def test_parts_rerun_everything_under_another_config_or_other_names() -> None:
    ran: list[str] = []
    reg, cfg = _parts_registry(ran), object()
    memo: Memo = {}
    reg.check_state(_S(7, 1), cfg, memo=memo)
    ran.clear()
    reg.check_state(_S(7, 1), object(), memo=memo)
    assert ran == ["XSmall", "YZero", "XYEqual"]
    ran.clear()
    only_y = frozenset({"YZero"})
    assert [v.invariant for v in reg.check_state(_S(7, 1), cfg, only_y, memo)] == ["YZero"] and ran == ["YZero"]
    ran.clear()
    assert [v.invariant for v in reg.check_state(_S(7, 1), cfg, memo=memo)] == ["XSmall", "YZero", "XYEqual"]
    assert ran == ["XSmall", "YZero", "XYEqual"]


def test_parts_see_an_invariant_registered_or_replaced_later() -> None:
    ran: list[str] = []
    reg, cfg = _parts_registry(ran), object()
    memo: Memo = {}
    reg.check_state(_S(7, 1), cfg, memo=memo)

    @reg.state("XOdd", "test", lambda s: (s.x,), frozenset({"x"}))
    def x_odd(s: _S, cfg: object) -> Iterator[Violation]:
        if s.x % 2:
            yield Violation("XOdd", f"x {s.x}")

    ran.clear()
    names = [v.invariant for v in reg.check_state(_S(7, 1), cfg, memo=memo)]
    assert names == ["XSmall", "YZero", "XYEqual", "XOdd"] and ran == []  # the new one ran, the others kept
    original = reg.invariants["YZero"]
    reg.invariants["YZero"] = replace(original, state_check=lambda s, c: iter(()))
    assert [v.invariant for v in reg.check_state(_S(7, 2), cfg, memo=memo)] == ["XSmall", "XYEqual", "XOdd"]
    with pytest.raises(ValueError, match="unknown state part"):
        reg.state("Z", "test", lambda s: (), frozenset({"z"}))


@pytest.mark.parametrize("parts", [None, guarantees.Parts(("x", "y"), _changed)])
def test_the_memo_honours_a_custom_same_with_or_without_parts(parts: guarantees.Parts[_S] | None) -> None:
    """Both memo paths compare inputs with the registry's ``same``: under ``same_inputs`` an input
    that is equal as a value but another object (a fresh list here) is not the same, so its
    invariant is re-run; compared as values it would keep its verdict."""
    ran: list[str] = []
    reg: Registry[_S, object] = Registry(same=guarantees.same_inputs, parts=parts)

    @reg.state("XSmall", "test", lambda s: ([s.x],))  # no parts declared: its inputs decide
    def x_small(s: _S, cfg: object) -> Iterator[Violation]:
        ran.append("XSmall")
        if s.x > 5:
            yield Violation("XSmall", f"x {s.x}")

    cfg, memo = object(), Memo()
    assert [v.message for v in reg.check_state(_S(7, 0), cfg, memo=memo)] == ["x 7"]
    assert [v.message for v in reg.check_state(_S(7, 1), cfg, memo=memo)] == ["x 7"]  # y changed, x's list is new
    assert ran == ["XSmall", "XSmall"]
    reg.same = guarantees.equal_inputs  # the control: compared as values, the equal list keeps the verdict
    assert [v.message for v in reg.check_state(_S(7, 2), cfg, memo=memo)] == ["x 7"] and ran == ["XSmall"] * 2
