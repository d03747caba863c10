"""The shape every timer bound shares, written once: a clock step records late messages in the ghost,
and the bound's invariant reports each recorded message.

A timer bound (model.invariants.TIMER_BOUNDS, model.txn_invariants' TxnTimeoutAbortBounded and
ProducerExpiryBounded) demands that an implementation's timer fires within a bound. Its module
(model.isr_expiration, model.fencing, model.fetch_pacing, model.txn_timeout) computes, on a state, one
message per thing that is late; the slice's ``advance_clock`` stores those messages in a ghost field
with ``record_late``, and the invariant, registered with ``reports``, yields one Violation per message.

Guarantees: ``record_late`` returns a state whose ghost field holds the new messages whenever they
are non-empty and differ from those held (a new ghost value, so a memoised judge re-checks on that
tick), and the very same state otherwise (nothing recorded is ever dropped by a tick that finds
nothing late). An invariant registered with ``reports`` has the decorated function's docstring as its
guarantee, reads only the messages the function returns (its memo inputs), and yields exactly
``Violation(name, message)`` for each, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar

from kconform.model.evolve import evolve
from kconform.model.guarantees import Registry, Violation

S = TypeVar("S")
C = TypeVar("C")


class _HasGhost(Protocol):
    @property
    def ghost(self) -> Any: ...


G = TypeVar("G", bound=_HasGhost)


NEVER = 1 << 62
"""A time no clock reaches: what a module's ``quiet_until`` gives when nothing it bounds can be late."""


def record_late(s: G, field: str, messages: tuple[str, ...]) -> G:
    """``s`` with ``s.ghost.<field>`` set to ``messages`` when they are non-empty and differ from the
    field's value; ``s`` itself otherwise."""
    if messages and messages != getattr(s.ghost, field):
        return evolve(s, ghost=evolve(s.ghost, **{field: messages}))
    return s


def reports(
    registry: Registry[S, C], name: str, cite: str, over: frozenset[str] | None = None
) -> Callable[[Callable[[S], tuple[str, ...]]], Callable[[S, C], Iterator[Violation]]]:
    """Register, in ``registry``, the state invariant ``name`` (citing ``cite``) that reports each
    message the decorated function reads from a state (a ghost field a clock step filled with
    ``record_late``). The decorated function's docstring is the invariant's guarantee; the decorator
    returns the invariant's check. ``over`` names the registry's state parts the messages are
    read from (model.guarantees.Parts; None: any)."""

    def deco(messages: Callable[[S], tuple[str, ...]]) -> Callable[[S, C], Iterator[Violation]]:
        def check(s: S, cfg: C) -> Iterator[Violation]:
            for message in messages(s):
                yield Violation(name, message)

        check.__doc__ = messages.__doc__
        check.__name__ = check.__qualname__ = messages.__name__
        check.__module__ = messages.__module__
        registry.state(name, cite, lambda s: (messages(s),), over)(check)
        return check

    return deco


__all__ = ["NEVER", "record_late", "reports"]
