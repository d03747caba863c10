"""The exactly-once slice's random workload for corpus generation (traces.generate).

Guarantees: the rules, their arguments and the swarm families are those of the gate's Hypothesis
state machine (conformance.txn.machine, whose constants this module reads), drawn from one
``random.Random`` instead of Hypothesis: transactional producer instances with one transactional
id, each new one fencing the older ones, which with "zombie" keep acting; an idempotent producer;
sends, commits, aborts, SendOffsets and plain offset commits; read_committed and read_uncommitted
consumers; offset fetches; HW advances; coordinator failover; drops, duplicates, reordering
(``overtake``); clock jumps past transaction.timeout.ms; Quiesce. The same seed gives the same
operations. A rule that is one client action of several operations (begin, then send) gives them on
consecutive steps. Two differences from the machine, for traces a hundred times longer than its
runs: up to MAX_INSTANCES producer instances instead of six, and BASE_RATE. Like the machine, it
draws the "consume" family but consumes in every trace. It has no "adversarial" family: corpora
hold well-behaved clients only (WORKLOAD_FAMILIES).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

from kconform.conformance.step_sizes import RUN_MS, STEP_MS
from kconform.conformance.txn.rule_constants import (
    CONSUMERS,
    FAMILIES,
    IDEMPOTENT_CLIENT,
    OVERTAKE,
    QUIESCE_MS,
    TIMEOUT_MS,
)
from kconform.model.txn_config import TxnConfig
from kconform.traces import operations as ops
from kconform.traces.workload import SwarmWorkload

MAX_INSTANCES = IDEMPOTENT_CLIENT
"""Transactional producer instances 0..14 (every client number but the idempotent producer's): a
trace of thousands of steps outlives the gate machine's six, and a fenced instance never recovers."""

BACK = (0, 0, 0, 1, 2)
"""Which instance acts, as in the gate machine: 0 the newest, 1 the one before (a zombie once fenced)."""

WORKLOAD_FAMILIES = (*(f for f in FAMILIES if f != "adversarial"), "delays")
"""The gate machine's families but "adversarial" (the rogue requests of issue 17 are the gate's:
corpora hold well-behaved clients), and "delays": episodes in which the network holds one message back
while later traffic overtakes it (a late EndTxn, a deposed coordinator's marker, a zombie's batch),
a coordinator failover in PrepareCommit/PrepareAbort, duplicates at the edge of the dedup window,
offsets fetched while their transaction is open."""

ZOMBIE_EPISODES = 2
"""How many zombie episodes (TxnWorkload._zombie_batch, two new instances each) a trace has at most:
more would start all MAX_INSTANCES early, and a trace whose newest instance is fenced (by a timeout's
abort, say) with no instance left to start has no transactions any more. Their weight is that of a
family (1, BASE_RATE when "delays" is off), not HOLD_RATE's: with it one trace in 16 had none."""

HOLD_RATE = 0.3
"""Weight of each "delays" episode (TxnWorkload._held_end_txn and the others) when the family is on."""

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
        super().__init__(rng, WORKLOAD_FAMILIES)
        self.data = config.data
        self.group = config.groups[0]
        self.txn_id = config.transactional_ids[0]
        self.brokers = config.brokers
        self.instances = 1
        self.coordinator = config.initial_leader(config.state_partition(self.txn_id))
        """The broker the workload last made the transactional id's coordinator (it moves it itself)."""
        self.idempotent_started = False
        self.zombie_episodes = 0
        self.position = 6
        """The consume-transform-produce episodes' consumer position (TxnWorkload._offsets_before_end):
        past the offsets 0..6 of the other offset commits."""
        self.pending: deque[ops.Operation] = deque(
            (ops.InitProducer(client=0, txn_id=self.txn_id), ops.Run(ms=RUN_MS[0]))
        )
        self._rules: dict[tuple[bool, bool], tuple[list[tuple[float, Rule]], float]] = {}
        """``rules()`` and the sum of its weights, by the two conditions it depends on (the families
        are fixed per trace; the rules read the workload's state when they run, not when listed)."""

    def next(self) -> ops.Operation:
        if not self.pending:
            key = (self.instances < MAX_INSTANCES, self._zombies_left())
            cached = self._rules.get(key)
            if cached is None:
                rules = self.rules()
                cached = self._rules[key] = (rules, sum(w for w, _ in rules))
            self.pending.extend(self.choose(*cached))
        return self.pending.popleft()

    def _zombies_left(self) -> bool:
        return self.instances <= MAX_INSTANCES - 2 and self.zombie_episodes < ZOMBIE_EPISODES

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
            out.append((0.5, lambda: (self._move_coordinator(rng.randrange(self.brokers)),)))
        if "timeouts" in f:
            out.append((0.5, lambda: (ops.Advance(ms=rng.choice(TIMEOUT_MS)),)))
        if "scheduling" in f:
            out.append((1.0, lambda: (ops.Deliver(index=rng.randrange(0, 17)),)))
            out.append((1.0, lambda: (ops.Deliver(index=1),) * rng.choice(OVERTAKE)))
            out.append((1.0, lambda: (ops.Settle(max_messages=rng.choice((3, 30))),)))
        if "message-faults" in f:
            out.append((1.0, lambda: (ops.Drop(index=rng.randrange(0, 17)),)))
        out.append((0.2 * self._rate("liveness"), lambda: (ops.Quiesce(max_ms=QUIESCE_MS),)))
        delays = HOLD_RATE * self._rate("delays")
        out.append((delays, self._held_end_txn))
        out.append((delays, self._deposed_marker))
        out.append((delays, self._failover_in_prepare))
        out.append((delays, self._window_duplicates))
        out.append((delays, self._offsets_before_end))
        if self._zombies_left():
            out.append((self._rate("delays"), self._zombie_batch))
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
        return *self._start_idempotent(), send

    def _start_idempotent(self) -> tuple[ops.Operation, ...]:
        """The idempotent producer's InitProducerId, the first time it is used (else nothing)."""
        if self.idempotent_started:
            return ()
        self.idempotent_started = True
        return (ops.InitProducer(client=IDEMPOTENT_CLIENT, txn_id=""),)

    def _move_coordinator(self, broker: int) -> ops.Operation:
        self.coordinator = broker
        return ops.MoveCoordinator(txn_id=self.txn_id, broker=broker)

    def _other_broker(self) -> int:
        return self.rng.choice([b for b in range(self.brokers) if b != self.coordinator])

    # ------------------------------------------------------------------ the "delays" episodes
    # Each is one client action on a healthy network (Run drains what is in flight first) whose
    # request, or the coordinator's marker it causes, the network then holds at the head of the
    # queue while later traffic overtakes it (Deliver(1), as the zoo's _behind); the counts are
    # drawn around those of the reference, so some episodes release the held message early.

    def _drain(self) -> ops.Operation:
        return ops.Run(ms=RUN_MS[0])

    def _fresh_txn(self, client: int, partition: str) -> tuple[ops.Operation, ...]:
        """End what ``client`` has open (commit, or abort if it cannot commit), then a new
        transaction with one batch to ``partition``, answered."""
        send = ops.Send(client, partition, self.rng.randint(1, 3))
        return ops.CommitTxn(client), ops.AbortTxn(client), self._drain(), ops.BeginTxn(client), send, self._drain()

    def _end(self, client: int) -> ops.Operation:
        return ops.CommitTxn(client) if self.rng.random() < 0.7 else ops.AbortTxn(client)

    def _overtake(self, *counts: int) -> tuple[ops.Operation, ...]:
        return (ops.Deliver(1),) * self.rng.choice(counts)

    def _next_txn(
        self, client: int, partition: str, counts: tuple[int, ...] = (4, 5, 6, 7)
    ) -> tuple[ops.Operation, ...]:
        """``client``'s next transaction: a batch to ``partition``, overtaking the held message
        (``counts``: how many messages may overtake it)."""
        send = ops.Send(client, partition, self.rng.randint(1, 3))
        return ops.BeginTxn(client), send, *self._overtake(*counts)

    def _held_end_txn(self) -> tuple[ops.Operation, ...]:
        """An EndTxn retried (one copy delivered) whose first copy the network holds until the
        producer's next transaction is Ongoing (KAFKA-17754, KIP-890 part 2)."""
        client, partition = self.instances - 1, self._partition()
        held = (self._end(client), ops.Duplicate(0), *self._overtake(2, 3, 4))
        return *self._fresh_txn(client, partition), *held, *self._next_txn(client, partition), ops.Deliver(0)

    def _deposed_marker(self) -> tuple[ops.Operation, ...]:
        """A commit's marker held in the network while the coordinator fails over, the new one
        completes the transaction and the producer's next one is Ongoing on the same partition
        (KIP-98 coordinator epochs: TRANSACTION_COORDINATOR_FENCED)."""
        client, partition = self.instances - 1, self._partition()
        prepare = (ops.CommitTxn(client), ops.DeliverTo(self.coordinator), ops.Deliver(0))
        failover = (self._move_coordinator(self._other_broker()), ops.Advance(10), *self._overtake(1, 2, 3))
        return (
            *self._fresh_txn(client, partition),
            *prepare,
            *failover,
            *self._next_txn(client, partition),
            ops.Deliver(0),
        )

    def _failover_in_prepare(self) -> tuple[ops.Operation, ...]:
        """A coordinator failover right after it wrote PrepareCommit/PrepareAbort, its markers in
        flight or lost (KIP-98: the new coordinator completes what its log says), then the cluster
        left alone until quiet (a transaction still Prepare* then hangs)."""
        client = self.instances - 1
        prepare = (self._end(client), ops.DeliverTo(self.coordinator))
        lost = (ops.Drop(1),) if self.rng.random() < 0.5 else ()
        move = self._move_coordinator(self._other_broker())
        return *self._fresh_txn(client, self._partition()), *prepare, *lost, move, ops.Quiesce(QUIESCE_MS)

    def _window_duplicates(self) -> tuple[ops.Operation, ...]:
        """Two to five batches of one producer in flight to one partition, the oldest delivered
        twice: once first, once after the others (a retry whose first copy arrived; KIP-98
        idempotence, KAFKA-5494's window of five). The idempotent producer or the newest
        transactional one."""
        partition = self._partition()
        if self.rng.random() < 0.5:
            client = IDEMPOTENT_CLIENT
            start: tuple[ops.Operation, ...] = (*self._start_idempotent(), self._drain())
        else:
            client = self.instances - 1
            start = self._fresh_txn(client, partition)
        n = self.rng.randint(2, 5)
        sends = tuple(ops.Send(client, partition, self.rng.randint(1, 3)) for _ in range(n))
        return *start, *sends, ops.Duplicate(0), *self._overtake(*range(1, n)), ops.Deliver(0)

    def _offsets_before_end(self) -> tuple[ops.Operation, ...]:
        """Consume-transform-produce: a transaction's consumer offsets sent, fetched by another
        client (a lag monitor, requireStable off as AdminClient's listConsumerGroupOffsets
        defaults) while it is open, and again after it ended (KIP-98, KIP-447). The offsets
        are the consumer's position, past every offset committed before."""
        client = self.instances - 1
        self.position += self.rng.randint(1, 3)
        offsets = ops.SendOffsets(client, self.group, self._partition(), self.position)
        early = ops.FetchOffsets(group=self.group, require_stable=False)
        late = ops.FetchOffsets(group=self.group, require_stable=self.rng.random() < 0.5)
        close = (ops.CommitTxn(client), ops.AbortTxn(client), self._drain())
        txn = (ops.BeginTxn(client), offsets, self._drain(), early, self._drain(), self._end(client), self._drain())
        return *close, *txn, late, self._drain()

    def _zombie_batch(self) -> tuple[ops.Operation, ...]:
        """A fresh producer instance's batch held in the network while a newer instance with the
        same transactional id starts (fencing it) and writes to the same partition in its own
        transaction; then the zombie's batch arrives (KIP-98 fencing, INVALID_PRODUCER_EPOCH). The
        zombie is a fresh instance so that it is ready and not already fenced (by a timeout's abort,
        say) when it sends."""
        self.zombie_episodes += 1
        start = (*self._new_instance(), self._drain())
        old, partition = self.instances - 1, self._partition()
        batch = (ops.BeginTxn(old), ops.Send(old, partition, 1), ops.DeliverTo(self.coordinator), ops.Deliver(0))
        new = self._new_instance()
        fence = (*self._overtake(4), ops.Advance(100), *self._overtake(2))
        successor = self._next_txn(self.instances - 1, partition, (6, 7))
        return *start, *batch, *new, *fence, *successor, ops.Deliver(0)

    def _consume(self) -> tuple[ops.Operation, ...]:
        consumer = self.rng.choice(CONSUMERS)
        return (ops.ConsumeTxn(consumer=consumer, partition=self._partition(), read_committed=self.rng.random() < 0.5),)


PLANTABLE = (
    "lso-ignores-ongoing",
    "lso-off-by-one",
    "no-aborted-filter",
    "no-produce-epoch-fencing",
    "no-sequence-dedup",
    "no-verification",
    "small-dedup-window",
    "stale-coordinator-epoch-marker",
    "txn-offsets-visible-early",
)
"""The txn mutants this workload makes misbehave in every trace of default size (5,000 events;
measured with ci/benchmarks/plant_txn.py on 16 traces at seeds 3 and 4, TV0 and TV2: 16 of 16 in
each, docs/traces.md): a corpus planted with them has the oracle flag exactly the planted traces."""

UNPLANTABLE: dict[str, str] = {
    "late-endtxn-next-txn": (
        "needs a copy of an EndTxn held in the network while its transaction completes and the next one is "
        "Ongoing (KAFKA-17754); the held-EndTxn episode gets there in 16 of 16 traces at seed 3 and 15 of 16 at "
        "seed 4 (TV2, which the mutant forces): in the other the newest instance is fenced (a Quiesce timed its "
        "transaction out) for the rest of the trace's episodes, and the workload cannot tell"
    ),
    "failover-forgets-prepare": (
        "needs a coordinator move while a transaction is PrepareCommit/PrepareAbort, then a quiet Quiesce to "
        "show the hanging transaction; the failover episode always quiesces, yet 7, 8, 10 and 10 of 16 traces "
        "show it (seeds 3 and 4, TV0 and TV2): a hang left by an earlier move in Prepare* (the deposed-marker "
        "episode, the coordinator family) keeps a producer retrying CONCURRENT_TRANSACTIONS for ever, so no later "
        "Quiesce is quiet and the judge concludes nothing from it; other traces have no failover episode"
    ),
    "epoch-overflow": (
        "needs the producer epoch at 32,766: 32,766 InitProducerId round trips (or, under TV2, as many "
        "EndTxn) on one transactional id; a trace of default size has at most 15 instances and ~100 EndTxn"
    ),
    "delayed-fetch-drops-isolation": (
        "needs consumers whose fetches wait (fetch_max_wait_ms > 0, the mutant's MUTANT_CONFIG); a corpus's "
        "configuration is the generator's, whose consumers are answered at once (the seeded corpora stay as "
        "recorded), so no fetch is ever parked there"
    ),
}
"""The txn mutants a random trace of default size does not reliably show, and why (measured rates in
docs/traces.md). They stay the gate's: its zoo (conformance.txn.scenarios) has a scenario for each."""
