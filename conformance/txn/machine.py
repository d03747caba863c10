"""The Hypothesis stateful test of the exactly-once slice: producers, zombies, consumers, offsets,
coordinator failover, network faults and time, judged in lockstep.

The shared swarm machine (conformance.machine: boot, families, network and clock rules, teardown)
plus the exactly-once slice's rules: each rule is one operation; after each operation every event
it caused has been judged; the first failing finding fails the example and Hypothesis shrinks the
operation list; a crashed or hung implementation aborts the campaign (HarnessAbort) instead of
being shrunk.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from kconform.conformance.machine import RUN_MS, Jumps, SliceMachine, Swarm, Target, family_on
from kconform.conformance.runner import LockstepRun
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

MAX_INSTANCES = 6
"""Transactional producer instances 0..5, all with the same transactional id: instance 0 starts at
boot; each new instance fences the previous ones (a fenced producer stops for good, as Kafka's
does after ProducerFencedException; one fenced by a newer instance keeps running as a zombie)."""
ROGUE_SEQ_DELTAS = (-3, -1, 0, 1, 2)
"""Sequence shifts of a rogue batch: a replay of an older range (a duplicate when it matches one
of the last 5 batches exactly, else OUT_OF_ORDER_SEQUENCE_NUMBER), a gap, and 0 (with an epoch
shift: a new epoch starting at the next sequence, non-zero once the client has sent)."""
ROGUE_EPOCH_DELTAS = (0, 0, -1, 1)
"""Epoch shifts: the client's own epoch, a stale one (INVALID_PRODUCER_EPOCH once the partition
holds the newer one), a future one (accepted only at sequence 0: ProducerAppendInfo.checkSequence)."""
ROGUE_BROKERS = (-1, -1, -1, 0, 1)
"""Where a rogue batch goes: mostly the leader (-1), sometimes a fixed broker (a non-leader:
NOT_LEADER_OR_FOLLOWER, ReplicaManager)."""
ROGUE_PID_DELTAS = (1, 1_000)
"""Shifts of a rogue InitProducerId's KIP-360 expected producer id: never 0 (an accepted request
would bump the epoch and fence the client behind its back) and never negative (under epoch
exhaustion the previous producer id, which the coordinator accepts, is lower than the current
one: TransactionMetadata.prevProducerId). The producer ids the gate allocates are the handful of
its clients', so current + 1_000 names no producer id the coordinator knows."""
ROGUE_INIT_EPOCHS = (0, -1, 1)
"""Epoch shifts of a rogue InitProducerId: the expected epoch does not matter once the expected
producer id is wrong (TransactionCoordinator.prepareInitProducerIdTransit: PRODUCER_FENCED)."""


def _room_for_an_instance(machine: Any) -> bool:
    """A precondition: fewer than MAX_INSTANCES producer instances so far (a named function, as
    conformance.machine.family_on says why)."""
    return bool(machine.instances < MAX_INSTANCES)


def _distinct_outcomes(run: LockstepRun) -> float:
    """How many distinct handler outcomes (and coordinator transitions) one run covered: targeted
    search toward runs that exercise much of the coordinator's state machine."""
    return float(len(run.judge.covered))


TIMEOUTS = Jumps("timeouts", TIMEOUT_MS)
SETTLE = (3, 30)
"""Messages a ``settle`` delivers at most."""
TARGET = Target("distinct handler outcomes in one run", _distinct_outcomes)


def swarm(cfg: TxnConfig) -> Swarm:
    """The shared rules' shape for ``cfg``: ``deliver_to`` addresses any broker."""
    return Swarm(FAMILIES, st.integers(0, cfg.brokers - 1), SETTLE, TIMEOUTS, TARGET)


def rules(base: type[SliceMachine], cfg: TxnConfig) -> type[SliceMachine]:
    """The exactly-once machine: the shared swarm machine ``base`` plus producers, zombies,
    consumers, offsets and coordinator failover."""
    partitions = st.sampled_from(cfg.data)
    which = st.sampled_from([0, 0, 0, 1, 2])
    """Which instance acts: 0 the newest, 1 the one before (a zombie once fenced), ..."""
    txn_id = cfg.transactional_ids[0]
    brokers = st.integers(0, cfg.brokers - 1)

    class TxnMachine(base):  # type: ignore[valid-type,misc]
        def __init__(self) -> None:
            super().__init__()
            self.started: set[int] = set()
            self.instances = 1

        def after_boot(self) -> None:
            self._do(ops.InitProducer(client=0, txn_id=txn_id))
            self._do(ops.Run(ms=RUN_MS[0]))

        # Producers --------------------------------------------------------------------------

        def _client(self, back: int) -> int:
            """The newest instance, or with "zombie" on the one ``back`` instances older."""
            back = back if "zombie" in self.families else 0
            return max(0, self.instances - 1 - back)

        @rule(back=which, partition=partitions, count=st.integers(1, 3))
        def send(self, back: int, partition: str, count: int) -> None:
            """Begin a transaction unless one is open (BeginTxn is ignored then), then send."""
            client = self._client(back)
            self._do(ops.BeginTxn(client=client))
            self._do(ops.Send(client=client, partition=partition, count=count))

        @rule(back=which)
        def commit(self, back: int) -> None:
            self._do(ops.CommitTxn(client=self._client(back)))

        @rule(back=which)
        def abort(self, back: int) -> None:
            self._do(ops.AbortTxn(client=self._client(back)))

        @precondition(_room_for_an_instance)
        @rule()
        def new_instance(self) -> None:
            """A new producer instance with the same transactional id (a restart, or a zombie's successor)."""
            self.instances += 1
            self._do(ops.InitProducer(client=self.instances - 1, txn_id=txn_id))

        @precondition(family_on("idempotent"))
        @rule(partition=partitions, count=st.integers(1, 3))
        def idempotent_send(self, partition: str, count: int) -> None:
            if IDEMPOTENT_CLIENT not in self.started:
                self.started.add(IDEMPOTENT_CLIENT)
                self._do(ops.InitProducer(client=IDEMPOTENT_CLIENT, txn_id=""))
            self._do(ops.Send(client=IDEMPOTENT_CLIENT, partition=partition, count=count))

        @precondition(family_on("adversarial"))
        @rule(
            back=which,
            idempotent=st.booleans(),
            partition=partitions,
            broker=st.sampled_from(ROGUE_BROKERS),
            seq_delta=st.sampled_from(ROGUE_SEQ_DELTAS),
            epoch_delta=st.sampled_from(ROGUE_EPOCH_DELTAS),
            count=st.integers(1, 2),
        )
        def rogue_produce(
            self, back: int, idempotent: bool, partition: str, broker: int, seq_delta: int, epoch_delta: int, count: int
        ) -> None:
            """A batch a buggy, old or malicious client sends under a real producer id (issue 17)."""
            use_idempotent = idempotent and IDEMPOTENT_CLIENT in self.started
            client = IDEMPOTENT_CLIENT if use_idempotent else self._client(back)
            broker = broker if broker < cfg.brokers else -1
            self._do(ops.RogueProduce(client, partition, broker, seq_delta, epoch_delta, count))

        @precondition(family_on("adversarial"))
        @rule(broker=st.sampled_from(ROGUE_BROKERS), epoch_delta=st.sampled_from((-1, 1)), commit=st.booleans())
        def rogue_end_txn(self, broker: int, epoch_delta: int, commit: bool) -> None:
            """An EndTxn out of order, of a stale or future epoch, from the newest instance (issue 17;
            TransactionCoordinator.handleEndTransaction's checks answer it). Never from an older
            instance: its epoch + 1 may be the newest one's, and Kafka's coordinator would then end
            the newest instance's open transaction behind its back, which is Kafka's behaviour but
            not a client bug the slice's client-transaction invariants describe."""
            broker = broker if broker < cfg.brokers else -1
            self._do(ops.RogueEndTxn(self._client(0), broker, epoch_delta, commit))

        @precondition(family_on("adversarial"))
        @rule(back=which, partition=partitions, broker=st.sampled_from(ROGUE_BROKERS))
        def rogue_add_partitions(self, back: int, partition: str, broker: int) -> None:
            """AddPartitionsToTxn with a stale epoch (the client's own - 1; a zombie's own is stale
            already): TransactionCoordinator.handleAddPartitionsToTransaction answers
            PRODUCER_FENCED (or NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS before it looks),
            never adds (issue 17). The coordinator's epoch is never below a client's (it only
            grows, and a client learns its epoch from the coordinator), so the request is
            refused and no transaction opens behind the client's back. Never a current or
            future epoch (ops.RogueAddPartitions: those may be accepted)."""
            broker = broker if broker < cfg.brokers else -1
            self._do(ops.RogueAddPartitions(self._client(back), partition, broker, -1))

        @precondition(family_on("adversarial"))
        @rule(
            back=which,
            broker=st.sampled_from(ROGUE_BROKERS),
            pid_delta=st.sampled_from(ROGUE_PID_DELTAS),
            epoch_delta=st.sampled_from(ROGUE_INIT_EPOCHS),
        )
        def rogue_init_producer(self, back: int, broker: int, pid_delta: int, epoch_delta: int) -> None:
            """InitProducerId whose KIP-360 expected producer id is not the transactional id's
            (issue 17): TransactionCoordinator.handleInitProducerId answers PRODUCER_FENCED (or
            CONCURRENT_TRANSACTIONS while a transition is pending, NOT_COORDINATOR /
            COORDINATOR_LOAD_IN_PROGRESS before it looks) and changes nothing: the expected-id
            check precedes the Ongoing abort in prepareInitProducerIdTransit."""
            broker = broker if broker < cfg.brokers else -1
            self._do(ops.RogueInitProducer(self._client(back), broker, pid_delta, epoch_delta))

        # Consumers and offsets ----------------------------------------------------------------

        @rule(consumer=st.sampled_from(CONSUMERS), partition=partitions, read_committed=st.booleans())
        def consume(self, consumer: int, partition: str, read_committed: bool) -> None:
            self._do(ops.ConsumeTxn(consumer=consumer, partition=partition, read_committed=read_committed))

        @precondition(family_on("offsets"))
        @rule(back=which, partition=partitions, offset=st.integers(0, 6))
        def send_offsets(self, back: int, partition: str, offset: int) -> None:
            client = self._client(back)
            self._do(ops.BeginTxn(client=client))
            self._do(ops.SendOffsets(client=client, group=cfg.groups[0], partition=partition, offset=offset))

        @precondition(family_on("offsets"))
        @rule(partition=partitions, offset=st.integers(0, 6))
        def commit_offsets(self, partition: str, offset: int) -> None:
            self._do(ops.CommitOffsets(group=cfg.groups[0], partition=partition, offset=offset))

        @precondition(family_on("offsets"))
        @rule(require_stable=st.booleans())
        def fetch_offsets(self, require_stable: bool) -> None:
            self._do(ops.FetchOffsets(group=cfg.groups[0], require_stable=require_stable))

        # The world ------------------------------------------------------------------------------

        @rule(partition=partitions, offset=st.sampled_from([-1, -1, 0, 1, 2, 4]))
        def advance_hw(self, partition: str, offset: int) -> None:
            self._do(ops.AdvanceHw(partition=partition, offset=offset))

        @precondition(family_on("coordinator"))
        @rule(broker=brokers)
        def move_coordinator(self, broker: int) -> None:
            self._do(ops.MoveCoordinator(txn_id=txn_id, broker=broker))

        @precondition(family_on("scheduling"))
        @rule(count=st.sampled_from(OVERTAKE))
        def overtake(self, count: int) -> None:
            """Deliver ``count`` messages while the oldest one in flight waits: ``Deliver(1)`` taken
            ``count`` times (modulo the queue, so a short queue delivers the head too)."""
            for _ in range(count):
                self._do(ops.Deliver(index=1))

        @precondition(family_on("liveness"))
        @rule()
        def quiesce(self) -> None:
            self._do(ops.Quiesce(max_ms=QUIESCE_MS))

    TxnMachine.__name__ = "TxnMachine"
    return TxnMachine
