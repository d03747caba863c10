"""What every slice's invariants are made of, written once: a violation, a registered invariant, the
registry each slice's invariant module fills with two decorators, and the memoised checks.

A slice's module (model/invariants.py, model/txn_invariants.py) makes one ``Registry`` over its
state and config types and registers each guarantee with ``@REG.state(name, cite, inputs)`` or
``@REG.step(name, cite)``; the judge calls ``check_state`` / ``check_step`` through that module.

Guarantees: ``check_state`` with a memo re-runs an invariant only when its ``inputs`` differ from
those of its previous check in that memo under the same config (the registry's ``same`` says what
differ means: equal values, or the very same objects); a check is a function of its inputs and the
config, so the verdicts are those of running every check (tests/test_invariant_memo.py,
tests/test_txn_invariant_memo.py).
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


_StateEntry = tuple[str, Callable[[S, C], Iterator[Violation]], Callable[[S], Inputs] | None]

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
    invariants: VersionedDict[str, Invariant[S, C]] = field(default_factory=VersionedDict)
    _state_entries: tuple[int, tuple[_StateEntry[S, C], ...]] = field(default=(-1, ()), init=False, repr=False)
    """(the invariants' version when built, the state invariants as (name, check, inputs)): what
    ``check_state`` loops over, rebuilt when an invariant was registered, replaced or removed since."""

    def state(
        self, name: str, cite: str, inputs: Callable[[S], Inputs]
    ) -> Callable[[Callable[[S, C], Iterator[Violation]]], Callable[[S, C], Iterator[Violation]]]:
        """Register a state invariant: its docstring is the guarantee, ``cite`` the KIP / Kafka class."""

        def deco(fn: Callable[[S, C], Iterator[Violation]]) -> Callable[[S, C], Iterator[Violation]]:
            self._add(Invariant(name, (fn.__doc__ or "").strip(), cite, state_check=fn, inputs=inputs))
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
            entries = tuple(
                (inv.name, inv.state_check, inv.inputs)
                for inv in self.invariants.values()
                if inv.state_check is not None
            )
            self._state_entries = (self.invariants.version, entries)
        return entries

    def check_state(
        self, s: S, cfg: C, names: frozenset[str] | None = None, memo: Memo | None = None
    ) -> list[Violation]:
        """Every state invariant (or the named ones) over ``s``. With a ``memo`` (one per sequence of
        states, e.g. one judge's), an invariant whose inputs are the same (``same``) as at its previous
        check in that memo under the same config is not re-run: its verdict then is returned again."""
        out: list[Violation] = []
        if memo is None:
            for name, check, _inputs in self._states():
                if names is None or name in names:
                    out.extend(check(s, cfg))
            return out
        by_value = self.same is equal_inputs  # compared inline: a call per invariant costs as much as ==
        same = self.same
        get = memo.get
        for name, check, inputs in self._states():
            if names is not None and name not in names:
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
        for inv in self.invariants.values():
            if inv.step_check is not None and (names is None or inv.name in names):
                out.extend(inv.step_check(pre, post, cfg))
        return out


__all__ = ["Invariant", "Memo", "Registry", "Violation", "equal_inputs", "per_state", "same_inputs"]
