"""The replication slice's Hypothesis state machine: producers, consumers, crashes, isolation and
leader moves on top of the shared swarm machine (conformance.machine)."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from kconform.conformance.machine import Jumps, SliceMachine, Swarm, Target, family_on
from kconform.conformance.runner import LockstepRun
from kconform.model.config import ReplicationConfig
from kconform.traces import operations as ops

FAMILIES = ("consume", "scheduling", "message-faults", "lag", "crash", "isolate", "leadership", "adversarial")
"""Rule families switched on or off per run (swarm testing, Groce et al. 2012): a run that only
moves leaders and delivers messages reaches fast-failover interleavings that a run diluted by
every fault rarely does. Produce, healthy runs, targeted delivery and small clock steps are always on;
"scheduling" adds fine-grained delivery (settle a few, deliver by queue position); "adversarial"
adds the fetches a buggy, old or malicious consumer sends (``rogue_fetch``: any broker, a stale,
future or missing leader epoch, offsets past the LEO)."""
ROGUE_EPOCH_DELTAS = (-2, -1, 0, 0, 1)
"""Leader-epoch shifts of a rogue fetch: stale (FENCED_LEADER_EPOCH), current, future
(UNKNOWN_LEADER_EPOCH); below epoch 0 the fetch carries none (-1, a pre-KIP-320 client)."""


def _epoch_spread(run: LockstepRun) -> float:
    """How many (replica, leader epoch) pairs the logs hold: targeted search (Löscher & Sagonas)
    toward logs written across many leader epochs, where truncation and fencing bugs live."""
    return float(sum(len(r.epoch_cache) for r in run.judge.state.replicas))


LAG = Jumps("lag", (5_000, 10_000, 31_000))
"""Jumps past session timeouts and replica.lag.time.max.ms: ISR shrinks, fencing, timeouts."""
SETTLE = (5, 50)
"""Messages a ``settle`` delivers at most."""
TARGET = Target("leader epochs held in replica logs", _epoch_spread)


def swarm(cfg: ReplicationConfig) -> Swarm:
    """The shared rules' shape for ``cfg``: ``deliver_to`` addresses a broker or the controller (-1)."""
    return Swarm(FAMILIES, st.integers(-1, cfg.replicas - 1), SETTLE, LAG, TARGET)


def rules(base: type[SliceMachine], cfg: ReplicationConfig) -> type[SliceMachine]:
    """The replication machine: the shared swarm machine ``base`` plus producers, consumers,
    crashes, isolation and leader moves."""
    brokers = st.integers(0, cfg.replicas - 1)

    class ReplicationMachine(base):  # type: ignore[valid-type,misc]
        def __init__(self) -> None:
            super().__init__()
            self.next_rid = 0

        @rule(acks=st.sampled_from([-1, 1, 0]))
        def produce(self, acks: int) -> None:
            self.next_rid += 1
            self._do(ops.Produce(rid=self.next_rid, acks=acks))

        @precondition(family_on("consume"))
        @rule(offset=st.integers(0, 8))
        def consume(self, offset: int) -> None:
            self._do(ops.Consume(offset=offset))

        @precondition(family_on("adversarial"))
        @rule(broker=brokers, offset=st.integers(0, 12), epoch_delta=st.sampled_from(ROGUE_EPOCH_DELTAS))
        def rogue_fetch(self, broker: int, offset: int, epoch_delta: int) -> None:
            """A fetch a buggy, old or malicious consumer sends (issue 17)."""
            self._do(ops.RogueFetch(broker, offset, epoch_delta))

        if cfg.fetch_max_wait_ms > 0:  # drawn only then: seeded runs of other configs stay identical

            @precondition(family_on("consume"))
            @rule(
                offset=st.integers(0, 8),
                min_bytes=st.integers(1, cfg.fetch_min_bytes),
                max_wait_ms=st.sampled_from(sorted({0, 100, cfg.fetch_max_wait_ms})),
            )
            def consume_wait(self, offset: int, min_bytes: int, max_wait_ms: int) -> None:
                """A consumer Fetch with fetch.min.bytes / fetch.max.wait.ms (DelayedFetch)."""
                self._do(ops.ConsumeWait(offset=offset, min_bytes=min_bytes, max_wait_ms=max_wait_ms))

        if cfg.follower_fetching:  # drawn only then: seeded runs of other configs stay identical

            @precondition(family_on("consume"))
            @rule()
            def consume_replica(self) -> None:
                """The follower-fetching consumer fetches from its position (KIP-392)."""
                self._do(ops.ConsumeReplica())

        if cfg.log_start_moves:  # drawn only then: seeded runs of other configs stay identical

            @rule(broker=brokers, offset=st.integers(-1, 6))
            def delete_records(self, broker: int, offset: int) -> None:
                """The admin client's DeleteRecords (KIP-107) to any broker; -1 is the HW, past the HW
                is refused (issue 14 §2)."""
                self._do(ops.DeleteRecordsAt(broker, offset))

            @rule(broker=brokers, offset=st.integers(1, 6))
            def retention(self, broker: int, offset: int) -> None:
                """Retention on one replica up to ``offset``: applied within its HW (KAFKA-5634)."""
                self._do(ops.Retention(broker, offset))

        @precondition(family_on("crash"))
        @rule(broker=brokers)
        def crash(self, broker: int) -> None:
            self._do(ops.Crash(broker=broker))

        @precondition(family_on("crash"))
        @rule(broker=brokers)
        def restart(self, broker: int) -> None:
            self._do(ops.Restart(broker=broker))

        @precondition(family_on("isolate"))
        @rule(broker=brokers)
        def isolate(self, broker: int) -> None:
            self._do(ops.Isolate(broker=broker))

        @precondition(family_on("isolate"))
        @rule()
        def heal(self) -> None:
            self._do(ops.Heal())

        @precondition(family_on("leadership"))
        @rule(broker=brokers)
        def move_leader(self, broker: int) -> None:
            self._do(ops.MoveLeader(broker=broker))

    ReplicationMachine.__name__ = "ReplicationMachine"
    return ReplicationMachine
