"""The exactly-once slice's random workload for corpus generation (traces.generate).

Guarantees: the rules, their arguments and the swarm families are those of the gate's Hypothesis
state machine (conformance.txn_machine, whose constants this module reads), drawn from one
``random.Random`` instead of Hypothesis: transactional producer instances with one transactional
id, each new one fencing the older ones, which with "zombie" keep acting; an idempotent producer;
sends, commits, aborts, SendOffsets and plain offset commits; read_committed and read_uncommitted
consumers; offset fetches; HW advances; coordinator failover; drops, duplicates, reordering
(``overtake``); clock jumps past transaction.timeout.ms; Quiesce. The same seed gives the same
operations. A rule that is one client action of several operations (begin, then send) gives them on
consecutive steps. Two differences from the machine, for traces a hundred times longer than its
runs: up to MAX_INSTANCES producer instances instead of six, and BASE_RATE. Like the machine, it
draws the "consume" family but consumes in every trace.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

from kconform.conformance.txn_machine import (
    CONSUMERS,
    FAMILIES,
    IDEMPOTENT_CLIENT,
    OVERTAKE,
    QUIESCE_MS,
    RUN_MS,
    STEP_MS,
    TIMEOUT_MS,
)
from kconform.model.txn_config import TxnConfig
from kconform.traces import operations as ops
from kconform.traces.generate import SwarmWorkload

MAX_INSTANCES = IDEMPOTENT_CLIENT
"""Transactional producer instances 0..14 (every client number but the idempotent producer's): a
trace of thousands of steps outlives the gate machine's six, and a fenced instance never recovers."""

BACK = (0, 0, 0, 1, 2)
"""Which instance acts, as in the gate machine: 0 the newest, 1 the one before (a zombie once fenced)."""

BASE_RATE = 0.5
"""How much of "offsets" and of the duplicates of "message-faults" every trace has when the family
is off, relative to when it is on. Consume-transform-produce (SendOffsets, offset fetches) and a
request that arrives twice are what exactly-once exists for; a trace of thousands of events without
them is not a Kafka workload: without the base rate txn-offsets-visible-early showed only in the
traces whose "offsets" family was on (4 of 6), no-sequence-dedup in 3 of 6 (docs/traces.md)."""

Rule = Callable[[], tuple[ops.Operation, ...]]


class TxnWorkload(SwarmWorkload[tuple[ops.Operation, ...]]):
    """Seeded random operations for one exactly-once trace (see the module docstring)."""

    def __init__(self, rng: random.Random, config: TxnConfig) -> None:
        super().__init__(rng, FAMILIES)
        self.data = config.data
        self.group = config.groups[0]
        self.txn_id = config.transactional_ids[0]
        self.brokers = config.brokers
        self.instances = 1
        self.idempotent_started = False
        self.pending: deque[ops.Operation] = deque(
            (ops.InitProducer(client=0, txn_id=self.txn_id), ops.Run(ms=RUN_MS[0]))
        )

    def next(self) -> ops.Operation:
        if not self.pending:
            self.pending.extend(self.choose(self.rules()))
        return self.pending.popleft()

    def rules(self) -> list[tuple[float, Rule]]:
        """The rules enabled now, with their weights."""
        rng = self.rng
        f = self.families
        out: list[tuple[float, Rule]] = [
            (6.0, self._send),
            (2.0, lambda: (ops.CommitTxn(client=self._client()),)),
            (1.0, lambda: (ops.AbortTxn(client=self._client()),)),
            (3.0, self._consume),
            (2.0, lambda: (ops.AdvanceHw(partition=self._partition(), offset=rng.choice((-1, -1, 0, 1, 2, 4))),)),
            (3.0, lambda: (ops.Run(ms=rng.choice(RUN_MS)),)),
            (2.0, lambda: (ops.Advance(ms=rng.choice(STEP_MS)),)),
            (2.0, lambda: (ops.DeliverTo(node=rng.randrange(0, self.brokers)),)),
        ]
        if self.instances < MAX_INSTANCES:
            out.append((0.3, self._new_instance))
        if "idempotent" in f:
            out.append((2.0, self._idempotent_send))
        offsets = self._rate("offsets")
        out.append((offsets, self._send_offsets))
        out.append((offsets, lambda: (ops.CommitOffsets(self.group, self._partition(), rng.randrange(0, 7)),)))
        out.append((offsets, lambda: (ops.FetchOffsets(group=self.group, require_stable=rng.random() < 0.5),)))
        out.append((self._rate("message-faults"), lambda: (ops.Duplicate(index=rng.randrange(0, 17)),)))
        if "coordinator" in f:
            out.append((0.5, lambda: (ops.MoveCoordinator(txn_id=self.txn_id, broker=rng.randrange(self.brokers)),)))
        if "timeouts" in f:
            out.append((0.5, lambda: (ops.Advance(ms=rng.choice(TIMEOUT_MS)),)))
        if "scheduling" in f:
            out.append((1.0, lambda: (ops.Deliver(index=rng.randrange(0, 17)),)))
            out.append((1.0, lambda: (ops.Deliver(index=1),) * rng.choice(OVERTAKE)))
            out.append((1.0, lambda: (ops.Settle(max_messages=rng.choice((3, 30))),)))
        if "message-faults" in f:
            out.append((1.0, lambda: (ops.Drop(index=rng.randrange(0, 17)),)))
        if "liveness" in f:
            out.append((0.2, lambda: (ops.Quiesce(max_ms=QUIESCE_MS),)))
        return out

    def _rate(self, family: str) -> float:
        """The weight of a rule of ``family``: 1 when the family is on, BASE_RATE when it is off."""
        return 1.0 if family in self.families else BASE_RATE

    def _client(self) -> int:
        """The newest instance, or with "zombie" on an older one (BACK)."""
        back = self.rng.choice(BACK) if "zombie" in self.families else 0
        return max(0, self.instances - 1 - back)

    def _partition(self) -> str:
        return self.rng.choice(self.data)

    def _send(self) -> tuple[ops.Operation, ...]:
        """Begin a transaction unless one is open (BeginTxn is ignored then), then send."""
        client = self._client()
        send = ops.Send(client=client, partition=self._partition(), count=self.rng.randint(1, 3))
        return ops.BeginTxn(client=client), send

    def _send_offsets(self) -> tuple[ops.Operation, ...]:
        client = self._client()
        offsets = ops.SendOffsets(client, self.group, self._partition(), self.rng.randrange(0, 7))
        return ops.BeginTxn(client=client), offsets

    def _new_instance(self) -> tuple[ops.Operation, ...]:
        """A new producer instance with the same transactional id (a restart, or a zombie's successor)."""
        self.instances += 1
        return (ops.InitProducer(client=self.instances - 1, txn_id=self.txn_id),)

    def _idempotent_send(self) -> tuple[ops.Operation, ...]:
        send = ops.Send(client=IDEMPOTENT_CLIENT, partition=self._partition(), count=self.rng.randint(1, 3))
        if self.idempotent_started:
            return (send,)
        self.idempotent_started = True
        return ops.InitProducer(client=IDEMPOTENT_CLIENT, txn_id=""), send

    def _consume(self) -> tuple[ops.Operation, ...]:
        consumer = self.rng.choice(CONSUMERS)
        return (ops.ConsumeTxn(consumer=consumer, partition=self._partition(), read_committed=self.rng.random() < 0.5),)


PLANTABLE = ("lso-ignores-ongoing", "lso-off-by-one", "no-aborted-filter", "no-verification")
"""The txn mutants this workload makes misbehave in every trace of default size (5,000 events;
measured on 30 traces of three seeds, TV0 and TV2, docs/traces.md): a corpus planted with them has the
oracle flag exactly the planted traces."""

UNPLANTABLE: dict[str, str] = {
    "txn-offsets-visible-early": (
        "needs an OffsetFetch while a TxnOffsetCommit's transaction is open, or after it aborted, of an offset "
        "other than the committed one; a trace has only 2 to 20 TxnOffsetCommits that reach the coordinator "
        "(SendOffsets is a no-op for a producer not in a transaction, fenced or failed): 13 of 16 traces"
    ),
    "no-sequence-dedup": (
        "needs a produce request that reaches the leader twice (a Duplicate, or a retry after a drop or a "
        "timeout) while its first copy was appended; 15 of 16 traces of default size do"
    ),
    "small-dedup-window": (
        "needs a duplicate of an older batch while two or more batches of the producer are in flight on one "
        "partition; 3 of 16 traces of default size have one"
    ),
    "no-produce-epoch-fencing": (
        "needs a zombie's batch held in the network (or retried) until a newer instance has an open transaction "
        "on the same partition (the zoo's zombie-delayed-produce); the swarm's zombie family is on in half the "
        "traces, and 1 of 16 traces of default size gets there"
    ),
    "late-endtxn-next-txn": (
        "needs a copy of an EndTxn held in the network while its transaction completes and the next one is "
        "Ongoing (KAFKA-17754: Duplicate of the EndTxn, then about ten messages overtaking it): no healthy Run "
        "may deliver it in between; 0 of 8 traces of default size under TV2"
    ),
    "stale-coordinator-epoch-marker": (
        "needs a marker of a deposed coordinator held in the network across a coordinator move, the new "
        "coordinator's completion and the producer's next transaction on that partition; 0 of 8 traces"
    ),
    "failover-forgets-prepare": (
        "needs a coordinator move while a transaction is PrepareCommit/PrepareAbort with markers unanswered, "
        "then a Quiesce to show the hanging transaction; a healthy Run completes a Prepare* within one step, "
        "so the move must fall between a targeted delivery of the EndTxn and the marker answers; 0 of 8 traces"
    ),
    "epoch-overflow": (
        "needs the producer epoch at 32,766: 32,766 InitProducerId round trips (or, under TV2, as many "
        "EndTxn) on one transactional id; a trace of default size has at most 15 instances and ~100 EndTxn"
    ),
}
"""The txn mutants a random trace of default size does not reliably show, and why (measured rates in
docs/traces.md). They stay the gate's: its zoo (conformance.txn_scenarios) has a scenario for each."""
