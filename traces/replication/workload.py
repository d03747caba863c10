"""The replication slice's random workload for corpus generation (traces.generate): what the gate's
state machine (conformance.replication.machine) does, drawn from one ``random.Random`` instead of
Hypothesis. The same seed gives the same operations.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from kconform.model.config import ReplicationConfig
from kconform.traces import operations as ops
from kconform.traces.workload import SwarmWorkload

FAMILIES = ("consume", "scheduling", "message-faults", "lag", "crash", "isolate", "leadership")
"""Fault / operation families switched on or off per trace (swarm testing, as conformance.machine)."""


class Workload(SwarmWorkload[ops.Operation]):
    """Seeded random operations for one replication trace: what the gate's state machine does,
    without Hypothesis (no shrinking, no database; a plain weighted choice per step)."""

    def __init__(self, rng: random.Random, config: ReplicationConfig) -> None:
        super().__init__(rng, FAMILIES)
        self.replicas = config.replicas
        self.next_rid = 0
        self.crashed: set[int] = set()
        self.isolated = False
        self._choices: dict[tuple[bool, bool], tuple[list[tuple[float, Callable[[], ops.Operation]]], float]] = {}
        """``choices()`` and the sum of its weights, by the two conditions it depends on (the
        families are fixed per trace; the rules read the workload's state when they run)."""

    def next(self) -> ops.Operation:
        key = (bool(self.crashed), self.isolated)
        cached = self._choices.get(key)
        if cached is None:
            choices = self.choices()
            # The sum choose() would compute, in the same order: the same float, the same pick.
            cached = self._choices[key] = (choices, sum(w for w, _ in choices))
        return self.choose(*cached)

    def choices(self) -> list[tuple[float, Callable[[], ops.Operation]]]:
        """The rules enabled now (what crashed and whether a broker is cut off), with their weights."""
        rng = self.rng
        choices: list[tuple[float, Callable[[], ops.Operation]]] = [
            (8.0, self._produce),
            (4.0, lambda: ops.Run(ms=rng.choice((300, 1_000, 3_000)))),
            (3.0, lambda: ops.Advance(ms=rng.choice((100, 500, 1_000)))),
            (2.0, lambda: ops.DeliverTo(node=rng.randrange(-1, self.replicas))),
        ]
        f = self.families
        if "consume" in f:
            choices.append((2.0, lambda: ops.Consume(offset=max(0, self.next_rid - rng.randrange(0, 12)))))
        if "scheduling" in f:
            choices.append((1.0, lambda: ops.Settle(max_messages=rng.choice((5, 50)))))
            choices.append((1.0, lambda: ops.Deliver(index=rng.randrange(0, 17))))
        if "message-faults" in f:
            choices.append((1.0, lambda: ops.Drop(index=rng.randrange(0, 17))))
            choices.append((1.0, lambda: ops.Duplicate(index=rng.randrange(0, 17))))
        if "lag" in f:
            choices.append((1.0, lambda: ops.Advance(ms=rng.choice((5_000, 10_000, 31_000)))))
        if "crash" in f:
            choices.append((0.5, self._crash))
            if self.crashed:
                choices.append((1.5, self._restart))
        if "isolate" in f:
            choices.append((1.0, self._heal) if self.isolated else (0.5, self._isolate))
        if "leadership" in f:
            choices.append((1.0, lambda: ops.MoveLeader(broker=rng.randrange(0, self.replicas))))
        return choices

    def _produce(self) -> ops.Operation:
        self.next_rid += 1
        return ops.Produce(rid=self.next_rid, acks=self.rng.choice((-1, -1, -1, 1, 0)))

    def _crash(self) -> ops.Operation:
        broker = self.rng.randrange(0, self.replicas)
        self.crashed.add(broker)
        return ops.Crash(broker=broker)

    def _restart(self) -> ops.Operation:
        broker = self.rng.choice(sorted(self.crashed))
        self.crashed.discard(broker)
        return ops.Restart(broker=broker)

    def _isolate(self) -> ops.Operation:
        self.isolated = True
        return ops.Isolate(broker=self.rng.randrange(0, self.replicas))

    def _heal(self) -> ops.Operation:
        self.isolated = False
        return ops.Heal()
