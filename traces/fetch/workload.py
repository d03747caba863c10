"""The fetch-session slice's random workload for corpus generation (traces.generate).

Guarantees: the rules, arguments and swarm families of the gate's Hypothesis machine
(conformance.fetch.machine, whose constants this module reads), drawn from one ``random.Random``;
the same seed gives the same operations. Every client starts assigned one partition.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

from kconform.conformance.fetch.rule_constants import EVICTION_MS, FAMILIES, SETTLE
from kconform.conformance.step_sizes import RUN_MS, STEP_MS
from kconform.model.fetch_config import BROKER, CLIENT_NODE_BASE, FetchConfig
from kconform.traces import operations as ops
from kconform.traces.workload import SwarmWorkload


class FetchWorkload(SwarmWorkload[ops.Operation]):
    """Seeded random operations for one fetch-session trace."""

    def __init__(self, rng: random.Random, config: FetchConfig) -> None:
        super().__init__(rng, FAMILIES)
        self.names = config.names
        self.clients = config.client_ids
        self.pending: deque[ops.Operation] = deque(
            ops.Assign(client=c, partition=self.names[c % len(self.names)], assigned=True) for c in self.clients
        )
        self._rules: tuple[list[tuple[float, Callable[[], ops.Operation]]], float] | None = None

    def next(self) -> ops.Operation:
        if self.pending:
            return self.pending.popleft()
        if self._rules is None:
            # The rules depend on the trace's families only: listed, and their weights summed (the
            # same float, in the same order, as ``choose`` would), once per trace.
            rules = self.rules()
            self._rules = (rules, sum(w for w, _ in rules))
        return self.choose(*self._rules)

    def rules(self) -> list[tuple[float, Callable[[], ops.Operation]]]:
        """The rules of the trace's families, with their weights."""
        rng, f = self.rng, self.families
        choices = [
            (6.0, lambda: ops.Poll(client=rng.choice(self.clients))),
            (4.0, lambda: ops.Run(ms=rng.choice(RUN_MS))),
            (2.0, lambda: ops.Advance(ms=rng.choice(STEP_MS))),
            (
                1.0,
                lambda: ops.Assign(
                    client=rng.choice(self.clients), partition=rng.choice(self.names), assigned=rng.random() < 0.6
                ),
            ),
            (
                3.0,
                lambda: ops.AppendRecords(
                    partition=rng.choice(self.names), count=rng.randint(1, 3), txn=rng.choice((0, 0, 1, 2))
                ),
            ),
            (2.0, lambda: ops.AdvanceHw(partition=rng.choice(self.names), offset=rng.choice((-1, -1, 1, 3)))),
            (1.0, lambda: ops.DeliverTo(node=rng.choice((BROKER, *(CLIENT_NODE_BASE + c for c in self.clients))))),
        ]
        if "deletes" in f:
            choices.append((0.5, lambda: ops.DeleteRecords(partition=rng.choice(self.names), offset=rng.randint(1, 8))))
        if "leaders" in f:
            choices.append((0.5, lambda: ops.ToggleLeadership(partition=rng.choice(self.names))))
        if "restarts" in f:
            choices.append((0.2, lambda: ops.Bounce(broker=BROKER)))
        if "closes" in f:
            choices.append((0.3, lambda: ops.CloseSession(client=rng.choice(self.clients))))
        if "eviction" in f:
            choices.append((0.3, lambda: ops.Advance(ms=rng.choice(EVICTION_MS))))
        if "scheduling" in f:
            choices.append((1.0, lambda: ops.Deliver(index=rng.randrange(0, 17))))
            choices.append((1.0, lambda: ops.Settle(max_messages=rng.choice(SETTLE))))
        if "message-faults" in f:
            choices.append((1.0, lambda: ops.Drop(index=rng.randrange(0, 17))))
            choices.append((1.0, lambda: ops.Duplicate(index=rng.randrange(0, 17))))
        return choices
