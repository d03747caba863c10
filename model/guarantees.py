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
from typing import Generic, TypeVar

S = TypeVar("S")
C = TypeVar("C")

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


@dataclass
class Registry(Generic[S, C]):
    """One slice's invariants by name, in registration order."""

    same: Callable[[Inputs, Inputs], bool] = equal_inputs
    """When two checks' inputs count as the same (``equal_inputs`` or ``same_inputs``)."""
    invariants: dict[str, Invariant[S, C]] = field(default_factory=dict)

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

    def check_state(
        self, s: S, cfg: C, names: frozenset[str] | None = None, memo: Memo | None = None
    ) -> list[Violation]:
        """Every state invariant (or the named ones) over ``s``. With a ``memo`` (one per sequence of
        states, e.g. one judge's), an invariant whose inputs are the same (``same``) as at its previous
        check in that memo under the same config is not re-run: its verdict then is returned again."""
        out: list[Violation] = []
        same = self.same
        for inv in self.invariants.values():
            if inv.state_check is None or (names is not None and inv.name not in names):
                continue
            if memo is None or inv.inputs is None:
                out.extend(inv.state_check(s, cfg))
                continue
            inputs = inv.inputs(s)
            last = memo.get(inv.name)
            if last is not None and last[0] is cfg and same(last[1], inputs):
                out.extend(last[2])
                continue
            found = list(inv.state_check(s, cfg))
            memo[inv.name] = (cfg, inputs, found)
            out.extend(found)
        return out

    def check_step(self, pre: S, post: S, cfg: C, names: frozenset[str] | None = None) -> list[Violation]:
        """Every step invariant (or the named ones) over the step ``pre`` → ``post``."""
        out: list[Violation] = []
        for inv in self.invariants.values():
            if inv.step_check is not None and (names is None or inv.name in names):
                out.extend(inv.step_check(pre, post, cfg))
        return out


__all__ = ["Invariant", "Memo", "Registry", "Violation", "equal_inputs", "same_inputs"]
