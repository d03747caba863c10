"""What every slice's corpus workload derives from: a seeded random source of operations for one
trace, with swarm-tested operation families (traces.generate drives it through the slice's trace
tools, traces.tools; each slice's is in traces/<slice>/workload.py).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, TypeVar

from kconform.traces import operations as ops

T = TypeVar("T")


class SwarmWorkload(ABC, Generic[T]):
    """A seeded random source of operations for one trace, of either slice: per trace a random half
    of the slice's operation families is switched on (swarm testing, Groce et al. 2012), then every
    step is one weighted choice among the rules enabled. What a rule gives (``T``) is the subclass's
    business: one operation, or a few that are one client action."""

    def __init__(self, rng: random.Random, families: tuple[str, ...]) -> None:
        self.rng = rng
        self.families = frozenset(f for f in families if rng.random() < 0.5)

    def choose(self, choices: list[tuple[float, Callable[[], T]]], total: float | None = None) -> T:
        """Run one of ``choices`` (weight, rule), picked with probability proportional to its weight.
        ``total`` is the sum of the weights in their order, when the caller has it already (the
        same float: one random draw, the same pick)."""
        if total is None:
            total = sum(w for w, _ in choices)
        pick = self.rng.random() * total
        for weight, make in choices:
            pick -= weight
            if pick < 0:
                return make()
        return choices[-1][1]()

    @abstractmethod
    def next(self) -> ops.Operation:
        """The trace's next operation."""
