"""The replication slice's Hypothesis state machine: producers, consumers, crashes, isolation and
leader moves on top of the shared swarm machine (conformance.machine)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from kconform.conformance.adapter import Adapter
from kconform.conformance.machine import RunLog, Swarm, swarm_machine
from kconform.conformance.runner import ADAPTER_TIMEOUT_S, LockstepRun
from kconform.model.config import ReplicationConfig
from kconform.traces import operations as ops

LAG_MS = (5_000, 10_000, 31_000)
"""Jumps past session timeouts and replica.lag.time.max.ms: ISR shrinks, fencing, timeouts."""
FAMILIES = ("consume", "scheduling", "message-faults", "lag", "crash", "isolate", "leadership")
"""Rule families switched on or off per run (swarm testing, Groce et al. 2012): a run that only
moves leaders and delivers messages reaches fast-failover interleavings that a run diluted by
every fault rarely does. Produce, healthy runs, targeted delivery and small clock steps are always on;
"scheduling" adds fine-grained delivery (settle a few, deliver by queue position)."""


def _epoch_spread(run: LockstepRun) -> float:
    """How many (replica, leader epoch) pairs the logs hold: targeted search (Löscher & Sagonas)
    toward logs written across many leader epochs, where truncation and fencing bugs live."""
    return float(sum(len(r.epoch_cache) for r in run.judge.state.replicas))


def make_machine(
    adapter_factory: Callable[[], Adapter],
    cfg: ReplicationConfig,
    mutants: frozenset[str],
    log: RunLog,
    clock: Callable[[], float],
    adapter_timeout_s: float = ADAPTER_TIMEOUT_S,
) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class driving a fresh adapter per example."""
    brokers = st.integers(0, cfg.replicas - 1)
    swarm = Swarm(
        families=FAMILIES,
        nodes=st.integers(-1, cfg.replicas - 1),
        settle=(5, 50),
        jump_family="lag",
        jumps=LAG_MS,
        target_label="leader epochs held in replica logs",
        score=_epoch_spread,
    )
    base = swarm_machine(adapter_factory, cfg, mutants, log, clock, swarm, adapter_timeout_s)

    class ReplicationMachine(base):  # type: ignore[valid-type,misc]
        def __init__(self) -> None:
            super().__init__()
            self.next_rid = 0

        @rule(acks=st.sampled_from([-1, 1, 0]))
        def produce(self, acks: int) -> None:
            self.next_rid += 1
            self._do(ops.Produce(rid=self.next_rid, acks=acks))

        @precondition(lambda self: "consume" in self.families)
        @rule(offset=st.integers(0, 8))
        def consume(self, offset: int) -> None:
            self._do(ops.Consume(offset=offset))

        @precondition(lambda self: "crash" in self.families)
        @rule(broker=brokers)
        def crash(self, broker: int) -> None:
            self._do(ops.Crash(broker=broker))

        @precondition(lambda self: "crash" in self.families)
        @rule(broker=brokers)
        def restart(self, broker: int) -> None:
            self._do(ops.Restart(broker=broker))

        @precondition(lambda self: "isolate" in self.families)
        @rule(broker=brokers)
        def isolate(self, broker: int) -> None:
            self._do(ops.Isolate(broker=broker))

        @precondition(lambda self: "isolate" in self.families)
        @rule()
        def heal(self) -> None:
            self._do(ops.Heal())

        @precondition(lambda self: "leadership" in self.families)
        @rule(broker=brokers)
        def move_leader(self, broker: int) -> None:
            self._do(ops.MoveLeader(broker=broker))

    ReplicationMachine.__name__ = "ReplicationMachine"
    return ReplicationMachine
