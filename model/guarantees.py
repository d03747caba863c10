"""What every slice's invariants are made of, written once: a violation, a registered invariant, the
registry each slice's invariant module fills with two decorators, and the memoised checks.

A slice's module (model/invariants.py, model/txn_invariants.py) makes one ``Registry`` over its
state and config types and registers each guarantee with ``@REG.state(name, cite, inputs)`` or
``@REG.step(name, cite)``; the judge calls ``check_state`` / ``check_step`` through that module.

Guarantees: ``check_state`` with a memo re-runs an invariant only when its ``inputs`` differ from
those of its previous check in that memo under the same config (the registry's ``same`` says what
differ means: equal values, or the very same objects); a check is a function of its inputs and the
config, so the verdicts are those of running every check (tests/test_invariant_memo.py,
tests/test_txn_invariant_memo.py). A registry with ``Parts`` (the replication slice's) goes further
on the same guarantee: a state whose parts equal, as values, those of the previous state checked
through the memo gets that check's verdicts again without computing any input, and an invariant
whose parts (``over``) are the very same objects as then keeps its verdict without computing its
inputs (tests/test_guarantees_registry.py, tests/test_invariant_memo.py).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

S = TypeVar("S")
C = TypeVar("C")
P = TypeVar("P")

Inputs = tuple[object, ...]


@dataclass(frozen=True)
class Violation:
    """One broken guarantee with its evidence; ``allowed`` when the configuration permits it."""

    invariant: str
    message: str
    allowed: bool = False
    allowed_because: str = ""


@dataclass(frozen=True)
class Invariant(Generic[S, C]):
    """A registered guarantee: ``state_check`` sees one state, ``step_check`` a state and its
    successor. A state check is a function of its ``inputs`` (the parts of the state it reads) and
    the config only, so on a state whose inputs are the same as at a previous check its verdict is
    the same (``check_state``'s memo)."""

    name: str
    doc: str
    cite: str
    state_check: Callable[[S, C], Iterator[Violation]] | None = None
    step_check: Callable[[S, S, C], Iterator[Violation]] | None = None
    inputs: Callable[[S], Inputs] | None = None
    over: frozenset[str] | None = None
    """The registry's ``Parts`` (by name) the state check reads; None: not declared (its ``inputs``
    decide when it is re-run)."""

    @property
    def over_steps(self) -> bool:
        return self.step_check is not None


Memo = dict[str, tuple[object, Inputs, list[Violation]]]
"""Per state invariant: the config, the inputs and the verdict of its last run (check_state)."""


def equal_inputs(a: Inputs, b: Inputs) -> bool:
    """Inputs compared as values (replication: small tuples, cheap to compare)."""
    return a == b


def same_inputs(a: Inputs, b: Inputs) -> bool:
    """Inputs compared as objects (exactly-once: large persistent maps a step replaces, never edits).
    One C-level pass (``map(operator.is_)``): a third of the cost of a generator over ``zip``."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def per_state(part: Callable[[S], P]) -> Callable[[S], P]:
    """``part`` (a piece of a state that several invariants' inputs read, e.g. every replica's log)
    computed once per state: called again with the very same state object it returns the value it
    computed for it (states are immutable values; the last one is held, so its id is not reused).
    ``check_state`` then computes a shared part once, not once per invariant that reads it."""
    slot: list[tuple[object, P]] = []  # the last (state, value), replaced whole (one atomic store)

    def once(s: S) -> P:
        if slot:
            last = slot[0]
            if last[0] is s:
                return last[1]
        value = part(s)
        slot[:] = [(s, value)]
        return value

    once.__doc__ = part.__doc__
    once.__name__ = getattr(part, "__name__", "part")
    return once


_StateEntry = tuple[str, Callable[[S, C], Iterator[Violation]], Callable[[S], Inputs] | None, int | None]
"""(name, check, inputs, the bit mask of the ``Parts`` it reads, None where it declares none)."""

_WHOLE = ""
"""The memo's entry for the state checked last (a registry with ``Parts``): (config, (names, that
state, the registry's state entries then), the verdicts of that check). No invariant is named ''."""


@dataclass(frozen=True)
class Parts(Generic[S]):
    """The parts of a state that its invariants read, by name (a field of the state, or a field of
    every one of its replicas, say), and how to tell which of them differ between two states.

    Guarantees a registry relies on: ``changed(a, b)`` has the bit ``1 << i`` of every part
    ``names[i]`` whose value differs between states ``a`` and ``b`` (it may set more, never fewer),
    and every invariant that declares the parts it reads (``over``) is a function of their values
    and the config: on two states equal in those parts it gives the same verdicts
    (tests/test_invariant_memo.py records what each of the replication slice's checks reads)."""

    names: tuple[str, ...]
    changed: Callable[[S, S], int]

    def mask(self, over: frozenset[str] | None) -> int:
        """The bits of the parts named in ``over`` (all parts when None)."""
        if over is None:
            return (1 << len(self.names)) - 1
        unknown = over - set(self.names)
        if unknown:
            raise ValueError(f"unknown state part(s) {sorted(unknown)}; the parts are {self.names}")
        return sum(1 << i for i, n in enumerate(self.names) if n in over)


K = TypeVar("K")
V = TypeVar("V")


class VersionedDict(dict[K, V]):
    """A dict that counts its changes (``version``): a registry's invariants, so that what is built
    from them (``Registry.check_state``'s loop) is rebuilt after any registration, replacement or
    removal, including a test's ``INVARIANTS[name] = replace(...)``."""

    version = 0

    def _changed(self) -> None:
        self.version += 1

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key: K) -> None:
        super().__delitem__(key)
        self._changed()

    def update(self, *args: Any, **kwargs: V) -> None:
        super().update(*args, **kwargs)
        self._changed()

    def pop(self, *args: Any) -> Any:
        self._changed()
        return super().pop(*args)

    def popitem(self) -> tuple[K, V]:
        self._changed()
        return super().popitem()

    def setdefault(self, key: K, default: V = None) -> V:  # type: ignore[assignment]
        self._changed()
        return super().setdefault(key, default)

    def clear(self) -> None:
        super().clear()
        self._changed()


@dataclass
class Registry(Generic[S, C]):
    """One slice's invariants by name, in registration order."""

    same: Callable[[Inputs, Inputs], bool] = equal_inputs
    """When two checks' inputs count as the same (``equal_inputs`` or ``same_inputs``)."""
    parts: Parts[S] | None = None
    """The parts of a state its state invariants read: then a memoised check of a state equal in
    every part to the state checked before it through the memo returns that check's verdicts
    again, and an invariant that declares its parts (``over``) keeps its verdict while they are
    equal and is re-run, without computing its inputs, when one differs."""
    invariants: VersionedDict[str, Invariant[S, C]] = field(default_factory=VersionedDict)
    _state_entries: tuple[int, tuple[_StateEntry[S, C], ...]] = field(default=(-1, ()), init=False, repr=False)
    """(the invariants' version when built, the state invariants as (name, check, inputs, parts
    mask)): what ``check_state`` loops over, rebuilt when an invariant was registered, replaced or
    removed since."""
    _step_entries: tuple[int, tuple[tuple[str, Callable[[S, S, C], Iterator[Violation]]], ...]] = field(
        default=(-1, ()), init=False, repr=False
    )
    """Likewise the step invariants as (name, check): what ``check_step`` loops over."""

    def state(
        self, name: str, cite: str, inputs: Callable[[S], Inputs], over: frozenset[str] | None = None
    ) -> Callable[[Callable[[S, C], Iterator[Violation]]], Callable[[S, C], Iterator[Violation]]]:
        """Register a state invariant: its docstring is the guarantee, ``cite`` the KIP / Kafka class,
        ``inputs`` what it reads, ``over`` the registry's ``parts`` it reads (None: not declared)."""
        if over is not None and self.parts is not None:
            self.parts.mask(over)  # an unknown part's name is an error at registration

        def deco(fn: Callable[[S, C], Iterator[Violation]]) -> Callable[[S, C], Iterator[Violation]]:
            self._add(Invariant(name, (fn.__doc__ or "").strip(), cite, state_check=fn, inputs=inputs, over=over))
            return fn

        return deco

    def step(
        self, name: str, cite: str
    ) -> Callable[[Callable[[S, S, C], Iterator[Violation]]], Callable[[S, S, C], Iterator[Violation]]]:
        """Register a property of one step (``pre`` → ``post``)."""

        def deco(fn: Callable[[S, S, C], Iterator[Violation]]) -> Callable[[S, S, C], Iterator[Violation]]:
            self._add(Invariant(name, (fn.__doc__ or "").strip(), cite, step_check=fn))
            return fn

        return deco

    def _add(self, inv: Invariant[S, C]) -> None:
        if inv.name in self.invariants:
            raise ValueError(f"invariant {inv.name!r} registered twice")
        self.invariants[inv.name] = inv

    def _states(self) -> tuple[_StateEntry[S, C], ...]:
        built, entries = self._state_entries
        if built != self.invariants.version:
            parts = self.parts
            entries = tuple(
                (
                    inv.name,
                    inv.state_check,
                    inv.inputs,
                    None if parts is None or inv.over is None else parts.mask(inv.over),
                )
                for inv in self.invariants.values()
                if inv.state_check is not None
            )
            self._state_entries = (self.invariants.version, entries)
        return entries

    def _steps(self) -> tuple[tuple[str, Callable[[S, S, C], Iterator[Violation]]], ...]:
        built, entries = self._step_entries
        if built != self.invariants.version:
            entries = tuple(
                (inv.name, inv.step_check) for inv in self.invariants.values() if inv.step_check is not None
            )
            self._step_entries = (self.invariants.version, entries)
        return entries

    def check_state(
        self, s: S, cfg: C, names: frozenset[str] | None = None, memo: Memo | None = None
    ) -> list[Violation]:
        """Every state invariant (or the named ones) over ``s``. With a ``memo`` (one per sequence of
        states, e.g. one judge's), an invariant whose inputs are the same (``same``) as at its previous
        check in that memo under the same config is not re-run: its verdict then is returned again.
        With ``parts``, a state equal in every part to the state checked last through the memo (same
        config, names and invariants) gets that check's verdicts again, and an invariant that
        declares its parts is re-run when one of them differs from that state's, else keeps its
        verdict."""
        out: list[Violation] = []
        if memo is None:
            for name, check, _inputs, _mask in self._states():
                if names is None or name in names:
                    out.extend(check(s, cfg))
            return out
        if self.parts is not None:
            return self._check_parts(s, cfg, names, memo, self.parts)
        return self._memo_loop(s, cfg, names, memo, self._states(), -1, None)

    def _check_parts(self, s: S, cfg: C, names: frozenset[str] | None, memo: Memo, parts: Parts[S]) -> list[Violation]:
        """``check_state`` through a memo with ``parts``: the parts that differ from those of the
        state checked last through the memo (same config and names) decide what is re-run. An
        invariant registered or replaced since keeps the verdict it had then, if it was checked
        then (a replaced check is presumed to check the same thing, as with inputs)."""
        entries = self._states()
        changed = -1  # every part, when there is no previous check to compare with
        since: frozenset[str] | None = None  # the invariants checked then (None: every one of ``entries``)
        last = memo.get(_WHOLE)
        if last is not None and last[0] is cfg and last[1][0] == names:
            changed = parts.changed(last[1][1], s)  # type: ignore[arg-type]
            if last[1][2] is not entries:  # the registry changed since
                then = last[1][2]
                assert isinstance(then, tuple)
                since = frozenset(e[0] for e in then if names is None or e[0] in names)
            elif not changed:  # equal in every part: every verdict is the same as then
                memo[_WHOLE] = (cfg, (names, s, entries), last[2])
                return list(last[2])
        memo.pop(_WHOLE, None)  # set again below, once every verdict of this check is in the memo
        out = self._memo_loop(s, cfg, names, memo, entries, changed, since)
        memo[_WHOLE] = (cfg, (names, s, entries), list(out))
        return out

    def _memo_loop(
        self,
        s: S,
        cfg: C,
        names: frozenset[str] | None,
        memo: Memo,
        entries: tuple[_StateEntry[S, C], ...],
        changed: int,
        since: frozenset[str] | None,
    ) -> list[Violation]:
        """The memo loop of ``check_state``, with or without ``parts``: an invariant that declares its
        parts (a ``mask``; only with ``parts``) is re-run when one of them is in ``changed`` or it is
        not among the invariants checked then (``since``; None: every one of ``entries`` was), else
        keeps its verdict; any other invariant with ``inputs`` is re-run unless they are the same
        (the registry's ``same``) as at its previous check in ``memo`` under the same config."""
        out: list[Violation] = []
        by_value = self.same is equal_inputs  # compared inline: a call per invariant costs as much as ==
        same = self.same
        get = memo.get
        for name, check, inputs, mask in entries:
            if names is not None and name not in names:
                continue
            if mask is not None:
                if mask & changed or (since is not None and name not in since):
                    found = list(check(s, cfg))
                    memo[name] = (cfg, (), found)
                else:
                    found = memo[name][2]  # the parts it reads are equal to those it was checked on
                if found:
                    out.extend(found)
                continue
            if inputs is None:
                out.extend(check(s, cfg))
                continue
            now = inputs(s)
            last = get(name)
            if last is not None and last[0] is cfg and (last[1] == now if by_value else same(last[1], now)):
                if last[2]:
                    out.extend(last[2])
                continue
            found = list(check(s, cfg))
            memo[name] = (cfg, now, found)
            if found:
                out.extend(found)
        return out

    def check_step(self, pre: S, post: S, cfg: C, names: frozenset[str] | None = None) -> list[Violation]:
        """Every step invariant (or the named ones) over the step ``pre`` → ``post``."""
        out: list[Violation] = []
        for name, check in self._steps():
            if names is None or name in names:
                out.extend(check(pre, post, cfg))
        return out


__all__ = ["Invariant", "Memo", "Parts", "Registry", "Violation", "equal_inputs", "per_state", "same_inputs"]
