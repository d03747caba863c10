"""The exactly-once known-bug zoo: fixed operation sequences that steer the cluster into the
interleavings behind historic exactly-once bugs, each named after the bug it reproduces.

Same contract as the replication zoo (conformance/replication/scenarios.py): a scenario encodes a situation,
never an expected verdict. It runs as an ordinary lockstep run judged by the model, so it passes
on a correct implementation (the reference, TV0 and TV2, verification on and off) and fails
wherever the implementation breaks the rule the situation exercises. The gate runs every
scenario before its random campaign (conformance/hunt.py), cheapest first.

Message-level control uses only the shared network operations: ``Deliver(i)`` / ``Drop(i)`` /
``Duplicate(i)`` address the i-th message in flight, in send order, modulo the queue length.
"Hold the oldest message" is ``_behind(n)``: ``Deliver(1)`` exactly ``n`` times, which delivers in
send order the ``n`` next messages and the ones they cause while the head of the queue stays in
the network until a later ``Deliver(0)``. The counts are those of an implementation that sends one
request per client call and answers each request once (the Kafka client and broker shapes, the
reference); another implementation is driven through a different interleaving, which the judge
still judges, so a scenario can lose its aim but never give a wrong verdict.

Cluster shape: the scenarios are written for TxnConfig's defaults (Kafka's partition choice:
``txn-1``'s coordinator is broker 1 on ``__transaction_state-10``, ``t-0`` is led by broker 0,
``t-1`` by broker 1, ``my-group``'s offsets by broker 0 on ``__consumer_offsets-12``; a 60 s
transaction timeout checked every 10 s) with any transaction version and verification setting;
under another shape the zoo is skipped (``applies``), as the replication zoo skips scenarios
needing more replicas.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from kconform.conformance.scenarios import declare
from kconform.conformance.scenarios import run_scenario as run_scenario  # one run loop for every slice
from kconform.model.txn_config import SHORT_MAX, TxnConfig
from kconform.traces import operations as o

WIRE_CONN = 0
"""The wire connection (impl/txn/wire.py) the zoo's hand-made requests come from: a client outside
the simulation, free to send what no reference client does."""
FIRST_PID = 1000
"""The first producer id the reference hands out (impl/txn/runtime.Metadata.next_pid); ids follow in
order. A hand-made request names a producer id, so its aim assumes this numbering: another
implementation's ids make it an unknown producer's request, still judged."""
TXN_PID = FIRST_PID + 1
"""``txn-1``'s producer id in ``adversarial-producer`` (the idempotent producer's InitProducerId came
first)."""
ROGUE_RID = 1_000_000
"""Record id of a hand-made batch: above every id the harness hands out in a scenario."""


def _wire(broker: int, payload: str, **fields: object) -> o.WireRequest:
    """A hand-made client request from ``WIRE_CONN`` to ``broker``: ``payload`` names the request
    type of the slice's wire format (impl/txn/wire.py), ``fields`` are its fields."""
    return o.WireRequest(WIRE_CONN, broker, json.dumps({"type": payload, **fields}, sort_keys=True))


TXN_ID = "txn-1"
GROUP = "my-group"
PRODUCER = 0
"""The transactional producer instance every scenario starts."""
SUCCESSOR = 1
"""A second instance with the same transactional id: it fences ``PRODUCER`` (a zombie from then on)."""
IDEMPOTENT = 15
"""An idempotent (non-transactional) producer."""
CONSUMER = 0
COORDINATOR = 1
"""Broker leading ``txn-1``'s ``__transaction_state`` partition at boot."""
FAILOVER_TO = 2
"""The broker a coordinator failover moves ``txn-1`` to."""
OFFSETS_PARTITION = "__consumer_offsets-12"
"""``my-group``'s ``__consumer_offsets`` partition, led by broker 0."""
MARKER_RESEND_MS = 30_000
"""request.timeout.ms of the coordinator's marker channel: an unanswered marker is re-sent after it."""
DAY_MS = 86_400_000
"""producer.id.expiration.ms (Kafka's default, a day)."""
PRODUCER_EXPIRY_CHECK_MS = 600_000
"""producer.id.expiration.check.interval.ms (Kafka's default)."""
QUIESCE_MS = 200_000
"""Bound of a scenario's final Quiesce: the transaction timeout (60 s) + the abort-check interval
+ a marker re-send timeout, with room to spare."""


@dataclass(frozen=True)
class Scenario:
    """A named operation sequence and the historic bug it is about. ``mutants`` names the reference
    mutants (impl/mutants.py) the scenario exposes, for the tests and the reader; the run itself
    never looks at it."""

    name: str
    doc: str
    mutants: tuple[str, ...]
    ops: tuple[o.Operation, ...]


def _behind(deliveries: int) -> tuple[o.Operation, ...]:
    """``deliveries`` deliveries of the second message in flight: with one message held at the
    head of the queue, the others are delivered in send order (the count is exact: ``Deliver``
    takes its index modulo the queue length, so one more would deliver the held message)."""
    return (o.Deliver(1),) * deliveries


_INIT = (o.InitProducer(PRODUCER, TXN_ID), o.Settle(100))
_HW = (o.AdvanceHw("t-0", -1), o.AdvanceHw("t-1", -1))


def _open(records: int) -> tuple[o.Operation, ...]:
    """``PRODUCER`` is initialised and opens a transaction with ``records`` records on ``t-0``."""
    return (*_INIT, o.BeginTxn(PRODUCER), o.Send(PRODUCER, "t-0", records))


def _commit(producer: int) -> tuple[o.Operation, ...]:
    """``producer`` commits and the markers land (EndTxn, WriteTxnMarkers, the HW)."""
    return (o.CommitTxn(producer), o.Settle(1000))


def _read(partition: str = "t-0", read_committed: bool = True) -> tuple[o.Operation, ...]:
    """``CONSUMER`` reads ``partition`` once both data partitions' HWs caught up (read_committed by
    default: the isolation level every LSO and aborted-filter scenario checks)."""
    return (*_HW, o.ConsumeTxn(CONSUMER, partition, read_committed), o.Settle(10))


def _txn(sends: tuple[tuple[str, int], ...], commit: bool) -> tuple[o.Operation, ...]:
    """One whole transaction of ``PRODUCER`` on a healthy network."""
    out: list[o.Operation] = [o.BeginTxn(PRODUCER)]
    out += [o.Send(PRODUCER, p, n) for p, n in sends]
    out += [o.Settle(1000), o.CommitTxn(PRODUCER) if commit else o.AbortTxn(PRODUCER), o.Settle(1000)]
    return tuple(out)


@declare(Scenario, "duplicated-produce-retry", mutants=("no-sequence-dedup",))
def DUPLICATED_PRODUCE() -> tuple[o.Operation, ...]:
    """KIP-98 idempotence (the duplicates of every broker before 0.11): an idempotent producer's batch
    is delivered twice (a retry whose first copy was appended but whose answer was lost). The second
    copy must be answered as a duplicate with the original offset, never appended again
    (NoDuplicateAppends); then a transactional batch gets the same treatment."""
    return (
        o.InitProducer(IDEMPOTENT, ""),
        o.Settle(100),
        o.Send(IDEMPOTENT, "t-0", 2),
        o.Duplicate(0),
        o.Settle(100),
        *_INIT,
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-1", 2),
        o.Settle(100),
        o.Send(PRODUCER, "t-1", 1),
        o.Duplicate(0),
        o.Settle(100),
        *_commit(PRODUCER),
        *_read("t-1"),
    )


@declare(Scenario, "older-in-flight-duplicate", mutants=("small-dedup-window",))
def OLDER_IN_FLIGHT_DUPLICATE() -> tuple[o.Operation, ...]:
    """KAFKA-5494 (1.0): with up to 5 requests in flight the broker must recognise a duplicate of any
    of the last 5 batches, not only the last one. Two batches are in flight; a copy of the first is
    appended, then the second, then the first's original arrives: it is a duplicate of an older
    batch and must be answered with its offset, not rejected with OUT_OF_ORDER_SEQUENCE_NUMBER (the
    0.11 one-batch cache)."""
    return (
        o.InitProducer(IDEMPOTENT, ""),
        o.Settle(100),
        o.Send(IDEMPOTENT, "t-0", 1),
        o.Send(IDEMPOTENT, "t-0", 1),
        o.Duplicate(0),
        o.Deliver(1),
        o.Deliver(0),
        o.Settle(100),
    )


@declare(Scenario, "adversarial-producer", mutants=())
def ADVERSARIAL_PRODUCER() -> tuple[o.Operation, ...]:
    """Issue 17 (adversarial clients): what a buggy, old or malicious client sends under a real
    producer id, each answered by Kafka's own checks (ProducerAppendInfo.checkProducerEpoch /
    checkSequence, ProducerStateManager's 5-batch cache, ReplicaManager's leadership and KIP-890
    verification): a gapped sequence and a partial replay (OUT_OF_ORDER_SEQUENCE_NUMBER), an exact
    replay (a duplicate with the original offset), a new epoch starting at a non-zero sequence
    (OUT_OF_ORDER_SEQUENCE_NUMBER), the same batch to a non-leader (NOT_LEADER_OR_FOLLOWER), a new
    epoch at sequence 0 (appended: it fences the old epoch), a stale epoch inside a transaction
    (INVALID_PRODUCER_EPOCH) and a transactional batch on a partition the transaction never added
    (verification refuses it), and a batch without the transactional flag under the producer id and
    epoch of an open transaction, at its next sequence, sent by hand (ProducerAppendInfo
    .updateCurrentTxnFirstOffset: InvalidTxnStateException "Expected transactional write",
    INVALID_TXN_STATE; an accepted one would slip a non-transactional record into the transaction)."""
    return (
        o.InitProducer(IDEMPOTENT, ""),
        o.Settle(100),
        o.Send(IDEMPOTENT, "t-0", 2),
        o.Settle(100),
        o.RogueProduce(IDEMPOTENT, "t-0", -1, 1, 0, 1),
        o.Settle(100),
        o.RogueProduce(IDEMPOTENT, "t-0", -1, -2, 0, 2),
        o.Settle(100),
        o.RogueProduce(IDEMPOTENT, "t-0", -1, -1, 0, 1),
        o.Settle(100),
        o.RogueProduce(IDEMPOTENT, "t-0", -1, 0, 1, 1),
        o.Settle(100),
        o.RogueProduce(IDEMPOTENT, "t-0", 1, -2, 0, 2),
        o.Settle(100),
        o.RogueProduce(IDEMPOTENT, "t-0", -1, -2, 1, 1),
        o.Settle(100),
        o.Send(IDEMPOTENT, "t-0", 1),
        o.Settle(100),
        *_INIT,
        o.InitProducer(SUCCESSOR, TXN_ID),
        o.Settle(100),
        o.BeginTxn(SUCCESSOR),
        o.Send(SUCCESSOR, "t-0", 1),
        o.Settle(100),
        o.RogueProduce(SUCCESSOR, "t-0", -1, 1, -1, 1),
        o.Settle(100),
        o.RogueProduce(SUCCESSOR, "t-1", -1, 1, 0, 1),
        o.Settle(100),
        _wire(
            0,
            "TxnProduceRequest",
            partition="t-0",
            txn_id="",
            pid=TXN_PID,
            epoch=1,
            base_seq=1,
            rids=[ROGUE_RID],
            transactional=False,
            ctxn=-1,
        ),
        *_commit(SUCCESSOR),
        *_read(),
    )


@declare(Scenario, "adversarial-end-txn", mutants=())
def ADVERSARIAL_END_TXN() -> tuple[o.Operation, ...]:
    """Issue 17 (adversarial clients): EndTxn requests out of order, answered by
    TransactionCoordinator.handleEndTransaction's checks (producer id and epoch, then the state
    table of kafka-facts section 1.5): a commit with nothing open (INVALID_TXN_STATE), a future
    and a stale epoch (PRODUCER_FENCED; under TV2 the stale one on a completed transaction is a
    retry, NONE or INVALID_TXN_STATE by its commit flag), one to a broker that does not coordinate
    the id (NOT_COORDINATOR), a second commit while the first one's markers are in flight
    (CONCURRENT_TRANSACTIONS) and a commit of an aborted transaction (INVALID_TXN_STATE); and
    AddPartitionsToTxn while those markers are in flight (handleAddPartitionsToTransaction:
    CONCURRENT_TRANSACTIONS at the coordinator's epoch, PRODUCER_FENCED at another). The client's
    own transactions go on and commit. Before them, an InitProducerId whose KIP-360 expected
    producer id is not the transactional id's (handleInitProducerId: PRODUCER_FENCED)."""
    return (
        *_INIT,
        o.RogueEndTxn(PRODUCER, -1, 0, True),
        o.RogueEndTxn(PRODUCER, -1, 1, False),
        o.RogueInitProducer(PRODUCER, -1, 1, 0),
        o.Settle(100),
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-0", 1),
        o.Settle(100),
        o.RogueEndTxn(PRODUCER, -1, -1, True),
        o.RogueEndTxn(PRODUCER, 0, 1, False),
        o.Settle(100),
        o.CommitTxn(PRODUCER),
        o.Settle(1),
        o.RogueEndTxn(PRODUCER, -1, 0, True),
        o.RogueEndTxn(PRODUCER, -1, -1, False),
        o.RogueAddPartitions(PRODUCER, "t-1", -1, 0),
        o.RogueAddPartitions(PRODUCER, "t-1", -1, 1),
        o.Settle(1000),
        o.RogueEndTxn(PRODUCER, -1, 0, True),
        o.RogueEndTxn(PRODUCER, -1, -1, True),
        o.RogueEndTxn(PRODUCER, -1, -1, False),
        o.Settle(100),
        *_txn((("t-0", 1),), commit=False),
        o.RogueEndTxn(PRODUCER, -1, 0, True),
        o.Settle(100),
        *_txn((("t-1", 1),), commit=True),
        *_read(),
    )


@declare(Scenario, "unknown-transactional-id", mutants=())
def UNKNOWN_TXN_ID() -> tuple[o.Operation, ...]:
    """Issue 17 (adversarial clients): requests for a transactional id the coordinator holds no
    metadata for, sent by hand before any InitProducerId. An EndTxn: TransactionCoordinator
    .handleEndTransaction finds no metadata (TransactionStateManager.getTransactionState: None) and
    answers INVALID_PRODUCER_ID_MAPPING. Then an InitProducerId carrying a KIP-360 expected producer
    id and epoch (a client whose id's metadata is gone): handleInitProducerId creates the metadata
    at epoch -1 (RecordBatch.NO_PRODUCER_EPOCH), which isValidProducerId accepts whatever the
    expected id, and prepareIncrementProducerEpoch bumps it to 0: a fresh producer id at epoch 0. A
    coordinator that fences it (PRODUCER_FENCED) strands every such client. Then the application's
    producer initialises (a bump to epoch 1, fencing the first) and commits a transaction."""
    return (
        _wire(COORDINATOR, "EndTxnRequest", txn_id=TXN_ID, pid=FIRST_PID, epoch=0, commit=True, ctxn=-1),
        _wire(
            COORDINATOR,
            "InitPidRequest",
            txn_id=TXN_ID,
            timeout_ms=60_000,
            expected_pid=FIRST_PID + 500,
            expected_epoch=3,
        ),
        *_INIT,
        *_txn((("t-0", 1),), commit=True),
        *_read(),
    )


@declare(Scenario, "reordered-verification", mutants=())
def REORDERED_VERIFICATION() -> tuple[o.Operation, ...]:
    """Issue 17 (reordered retries): two pipelined transactional batches of a fresh producer on t-1
    (sequences 0 and 1) both wait for KIP-890 verification, and the second one's verification is
    answered first. VerificationStateEntry keeps the lowest sequence seen at the epoch
    (maybeUpdateLowestSequenceAndEpoch), and ProducerAppendInfo.checkSequence refuses a batch
    above it: sequence 1 is OUT_OF_ORDER_SEQUENCE_NUMBER (a later batch must not open the
    transaction before an earlier one), then sequence 0 is appended. A broker that moves the
    lowest sequence up (or resets it at the same epoch) appends sequence 1 first, on a partition
    where the producer has no state (any first sequence is accepted then). The client's
    transaction then fails (the out-of-order answer); a successor instance aborts it and commits
    its own, which a read_committed consumer reads."""
    return (
        *_INIT,
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-1", 1),
        o.Send(PRODUCER, "t-1", 1),
        o.Settle(1),
        o.Settle(1),
        o.Settle(1),
        o.Settle(1),
        o.Deliver(1),
        o.Deliver(1),
        o.Settle(1000),
        o.InitProducer(SUCCESSOR, TXN_ID),
        o.Settle(1000),
        o.Run(1000),
        o.BeginTxn(SUCCESSOR),
        o.Send(SUCCESSOR, "t-1", 1),
        o.Settle(1000),
        *_commit(SUCCESSOR),
        *_read("t-1"),
    )


@declare(Scenario, "read-committed-during-open-txn", mutants=("lso-ignores-ongoing", "lso-off-by-one"))
def READ_COMMITTED_DURING_OPEN_TXN() -> tuple[o.Operation, ...]:
    """Redpanda #3036 (KIP-98 last stable offset): a transaction has records on t-0 below the HW and is
    still open. A read_committed fetch must stop at the LSO = the transaction's first offset
    (NoUncommittedRead, LsoBounds); then the commit makes them readable."""
    return (
        *_open(2),
        o.Settle(100),
        *_read(),
        *_commit(PRODUCER),
        *_read(),
    )


@declare(Scenario, "lso-two-unstable", mutants=())
def LSO_TWO_UNSTABLE() -> tuple[o.Operation, ...]:
    """The LSO with two unstable transactions on one partition (KIP-98; UnifiedLog.lastStableOffset is
    the HW capped by the *earliest* first offset among ProducerStateManager's ongoing transactions and
    its completed ones whose marker is not yet below the HW): transaction 1 commits on t-0 (record 0,
    COMMIT marker 1) and transaction 2 writes record 2; the HW moves to 1, so the marker is not
    replicated yet and the LSO stays 0: a read_committed fetch returns nothing. A leader taking the
    latest first-unstable offset answers record 0 before its commit is stable. Then the HW passes
    everything: the LSO is transaction 2's first offset, 2; its commit makes all readable."""
    return (
        *_INIT,
        *_txn((("t-0", 1),), commit=True),
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-0", 1),
        o.Settle(1000),
        o.AdvanceHw("t-0", 1),
        o.ConsumeTxn(CONSUMER, "t-0", True),
        o.Settle(10),
        o.AdvanceHw("t-0", -1),
        o.ConsumeTxn(CONSUMER, "t-0", True),
        o.Settle(10),
        *_commit(PRODUCER),
        *_read(),
    )


@declare(Scenario, "abort-then-read-committed", mutants=("no-aborted-filter",))
def ABORT_THEN_READ_COMMITTED() -> tuple[o.Operation, ...]:
    """G1a aborted read (librdkafka #3020 class, Tansu; KIP-98 consumer filter): a transaction aborts,
    the next commits, and a read_committed consumer reads t-0 from the start. The fetch answers the
    aborted transaction in its aborted list; the consumer must drop its batches (NoAbortedRead),
    while a read_uncommitted consumer sees them."""
    return (
        *_INIT,
        *_txn((("t-0", 2), ("t-1", 1)), commit=False),
        *_txn((("t-0", 1),), commit=True),
        *_read(),
        o.ConsumeTxn(1, "t-0", False),
        o.Settle(10),
    )


@declare(Scenario, "txn-offsets-before-commit", mutants=("txn-offsets-visible-early",))
def TXN_OFFSETS_BEFORE_COMMIT() -> tuple[o.Operation, ...]:
    """KIP-98 transactional offsets, KIP-447 require_stable: a consume-transform-produce transaction
    sends its consumer offsets (TxnOffsetCommit); before the COMMIT marker an OffsetFetch must not
    return them (NoUncommittedOffsetRead) and with require_stable must answer
    UNSTABLE_OFFSET_COMMIT; after an abort they are gone, after a commit visible. The pending
    offsets are a transactional batch of the producer on ``__consumer_offsets`` (its first write
    there): the partition's LSO stays below it until the marker, so a read_committed Fetch of the
    partition past the HW returns nothing (UnifiedLog.lastStableOffset over the producer state
    the append opened, ProducerStateManager.update). Last, two plain OffsetCommits of another
    partition (GroupCoordinator.handleCommitOffsets: visible at once, each a non-transactional
    record of ``__consumer_offsets``) beside the committed transactional offsets, and a
    read_committed Fetch of the partition's records."""
    return (
        *_INIT,
        o.BeginTxn(PRODUCER),
        o.SendOffsets(PRODUCER, GROUP, "t-0", 7),
        o.Settle(100),
        o.AdvanceHw(OFFSETS_PARTITION, -1),
        o.ConsumeTxn(CONSUMER, OFFSETS_PARTITION, True),
        o.Settle(10),
        o.FetchOffsets(GROUP, False),
        o.Settle(10),
        o.FetchOffsets(GROUP, True),
        o.Settle(10),
        o.AbortTxn(PRODUCER),
        o.Settle(1000),
        o.FetchOffsets(GROUP, False),
        o.Settle(10),
        o.BeginTxn(PRODUCER),
        o.SendOffsets(PRODUCER, GROUP, "t-0", 9),
        o.Settle(100),
        *_commit(PRODUCER),
        o.FetchOffsets(GROUP, True),
        o.Settle(10),
        o.CommitOffsets(GROUP, "t-1", 3),
        o.Settle(10),
        o.CommitOffsets(GROUP, "t-1", 5),
        o.Settle(10),
        o.FetchOffsets(GROUP, False),
        o.Settle(10),
        o.AdvanceHw(OFFSETS_PARTITION, -1),
        o.ConsumeTxn(CONSUMER, OFFSETS_PARTITION, True),
        o.Settle(10),
    )


@declare(Scenario, "zombie-delayed-produce", mutants=("no-produce-epoch-fencing",))
def ZOMBIE_DELAYED_PRODUCE() -> tuple[o.Operation, ...]:
    """KIP-98 producer fencing (INVALID_PRODUCER_EPOCH; the zombie of KAFKA-5793 / KIP-588): instance
    0's first batch to t-0 is held in the network; instance 1 starts with the same transactional id
    (the open transaction is aborted with a bumped epoch) and writes to t-0 in its own transaction.
    Then the zombie's batch arrives: sequence 0, an older epoch, and the partition has an open
    transaction of the producer id, so no verification is asked. The leader must reject it on the
    epoch; appended, it would be committed inside the new instance's transaction (NoZombieCommit)."""
    return (
        *_open(1),
        o.DeliverTo(COORDINATOR),  # AddPartitionsToTxn
        o.Deliver(0),  # its answer: the client sends the batch, which stays at the head of the queue
        o.InitProducer(SUCCESSOR, TXN_ID),
        *_behind(4),  # fencing: PrepareAbort at epoch 1, abort marker, CompleteAbort
        o.Advance(100),  # the successor's retry backoff after CONCURRENT_TRANSACTIONS
        *_behind(2),  # InitProducerId: epoch 2
        o.BeginTxn(SUCCESSOR),
        o.Send(SUCCESSOR, "t-0", 1),
        *_behind(6),  # AddPartitionsToTxn, the batch, its verification: appended at epoch 2
        o.Deliver(0),  # the zombie's batch
        o.Settle(100),
        *_commit(SUCCESSOR),
        *_read(),
    )


@declare(Scenario, "late-produce-after-abort", mutants=("no-verification",))
def LATE_PRODUCE_AFTER_ABORT() -> tuple[o.Operation, ...]:
    """KAFKA-14402, the hanging-transaction shape KIP-890 part 1 (3.6) closes: the producer's first
    batch to t-0 is held in the network (with its two request-timeout retries) while the transaction
    times out at the coordinator and its abort marker reaches t-0; then the batches arrive. The
    partition has no open transaction of the producer, so the leader must ask the coordinator
    (verification) before appending: a transactional batch appended there would open a transaction
    nobody ends (NoHangingTransaction, the LSO stuck). Here the timeout's epoch bump also fences
    them; a leader that never verifies shows at the first late batch."""
    return (
        *_open(1),
        o.DeliverTo(COORDINATOR),  # AddPartitionsToTxn
        o.Deliver(0),  # its answer: the batch is sent
        o.Advance(71_000),  # two re-sends of the batch; the timeout abort sends its marker (4th in flight)
        o.Deliver(3),  # the abort marker reaches t-0 first
        o.Deliver(3),  # its answer: CompleteAbort
        o.Settle(100),  # the three copies of the batch, late
        *_read(),
        o.Quiesce(QUIESCE_MS),
    )


@declare(Scenario, "late-endtxn-next-txn", mutants=("late-endtxn-next-txn",))
def LATE_END_TXN() -> tuple[o.Operation, ...]:
    """KAFKA-17754 (found by Jepsen; closed by KIP-890 part 2): the EndTxn(commit) of transaction 1 is
    duplicated by the network; one copy ends it, the other arrives while transaction 2 of the same
    producer is Ongoing; the application then aborts transaction 2. Under TV2 the first EndTxn
    bumped the epoch, so the late copy is PRODUCER_FENCED and transaction 2 aborts; under TV0 (same
    epoch) the late copy commits transaction 2 and the abort gets INVALID_TXN_STATE: Kafka's TV0
    behaviour, which the model follows."""
    return (
        *_open(1),
        o.Settle(100),
        o.CommitTxn(PRODUCER),
        o.Duplicate(0),  # one copy of the EndTxn is handled now; the original stays at the head
        *_behind(3),  # its answer, the COMMIT marker, the marker's answer: CompleteCommit
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-0", 1),
        *_behind(6),  # AddPartitionsToTxn, the batch, its verification: transaction 2 is Ongoing
        o.Deliver(0),  # the late EndTxn of transaction 1
        o.Settle(100),
        o.AbortTxn(PRODUCER),  # the application aborts transaction 2
        o.Settle(1000),
        *_read(),
    )


@declare(Scenario, "stale-coordinator-marker", mutants=("stale-coordinator-epoch-marker",))
def STALE_COORDINATOR_MARKER() -> tuple[o.Operation, ...]:
    """KIP-98 coordinator fencing (TRANSACTION_COORDINATOR_FENCED): the first coordinator writes
    PrepareCommit and sends its marker to t-0, which the network holds; the coordinator fails over
    to broker 2, which re-sends the markers at coordinator epoch 1 and completes; the producer runs
    its next transaction on t-0. The deposed coordinator's marker then arrives: it must be fenced,
    not end the next transaction."""
    return (
        *_open(1),
        o.Settle(100),
        o.CommitTxn(PRODUCER),
        o.DeliverTo(COORDINATOR),  # EndTxn: PrepareCommit; queue = [answer, marker]
        o.Deliver(0),  # the answer; the marker (epoch 0) is now the head
        o.MoveCoordinator(TXN_ID, FAILOVER_TO),
        o.Advance(10),  # the new coordinator loads and re-sends the marker at coordinator epoch 1
        *_behind(2),  # that marker and its answer: CompleteCommit
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-0", 1),
        *_behind(6),  # AddPartitionsToTxn, the batch, its verification: transaction 2 is Ongoing
        o.Deliver(0),  # the deposed coordinator's marker
        o.Settle(100),
        o.AbortTxn(PRODUCER),
        o.Settle(1000),
        *_read(),
    )


@declare(Scenario, "stale-coordinator-abort-marker", mutants=())
def STALE_COORDINATOR_ABORT_MARKER() -> tuple[o.Operation, ...]:
    """``stale-coordinator-marker`` with an abort: the deposed coordinator's ABORT marker arrives while
    the producer's next transaction is Ongoing on t-0. Every marker, COMMIT or ABORT, stores its
    coordinator epoch in the producer state (ProducerAppendInfo.appendEndTxnMarker:
    updatedEntry.setCoordinatorEpoch), and one from an older coordinator epoch is refused
    (TRANSACTION_COORDINATOR_FENCED, kafka-facts section 1.8); a leader that stores it only for
    COMMIT markers lets the stale abort end the next transaction."""
    return (
        *_open(1),
        o.Settle(100),
        o.AbortTxn(PRODUCER),
        o.DeliverTo(COORDINATOR),  # EndTxn: PrepareAbort; queue = [answer, marker]
        o.Deliver(0),  # the answer; the marker (epoch 0) is now the head
        o.MoveCoordinator(TXN_ID, FAILOVER_TO),
        o.Advance(10),  # the new coordinator loads and re-sends the marker at coordinator epoch 1
        *_behind(2),  # that marker and its answer: CompleteAbort
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-0", 1),
        *_behind(6),  # AddPartitionsToTxn, the batch, its verification: transaction 2 is Ongoing
        o.Deliver(0),  # the deposed coordinator's ABORT marker
        o.Settle(100),
        *_commit(PRODUCER),
        *_read(),
    )


@declare(Scenario, "failover-after-prepare", mutants=("failover-forgets-prepare",))
def FAILOVER_AFTER_PREPARE() -> tuple[o.Operation, ...]:
    """KIP-98 coordinator failover, the Kafka design's 'after PREPARE, before the markers': the
    coordinator writes PrepareCommit and its marker to t-0 is lost; it fails over to broker 2. The
    new coordinator must finish what its log says (TransactionStateManager
    loadTransactionsForTxnTopicPartition re-sends the markers); a coordinator that forgets leaves
    the transaction in PrepareCommit for ever (NoHangingTransaction at quiescence). The deposed
    coordinator then stays silent past its lost marker's re-send timeout: on resignation Kafka
    drops its cached transactions and pending markers (TransactionCoordinator.onResignation:
    TransactionStateManager.removeTransactionsForTxnTopicPartition,
    TransactionMarkerChannelManager.removeMarkersForTxnTopicPartition), so a marker re-sent by it
    (not the coordinator any more) is non-conformance."""
    return (
        *_open(1),
        o.Settle(100),
        o.CommitTxn(PRODUCER),
        o.DeliverTo(COORDINATOR),  # EndTxn: PrepareCommit; queue = [answer, marker]
        o.Drop(1),  # the marker is lost
        o.MoveCoordinator(TXN_ID, FAILOVER_TO),
        o.Quiesce(QUIESCE_MS),
        o.Advance(MARKER_RESEND_MS + 1_000),  # past the lost marker's re-send timeout
        *_read(),
    )


@declare(Scenario, "failover-after-prepare-abort", mutants=())
def FAILOVER_AFTER_PREPARE_ABORT() -> tuple[o.Operation, ...]:
    """KIP-98 coordinator failover after PrepareAbort: ``failover-after-prepare``'s shape with an abort.
    The coordinator writes PrepareAbort and its marker to t-0 is lost; it fails over to broker 2.
    TransactionStateManager.loadTransactionsForTxnTopicPartition hands every transaction it finds in
    PrepareCommit *or* PrepareAbort to the marker channel (TransactionResult.COMMIT / ABORT), so the
    new coordinator must write the ABORT marker and CompleteAbort; one that completes only
    PrepareCommit leaves the transaction open for ever (NoHangingTransaction at quiescence), its
    records holding the LSO of t-0."""
    return (
        *_open(1),
        o.Settle(100),
        o.AbortTxn(PRODUCER),
        o.DeliverTo(COORDINATOR),  # EndTxn: PrepareAbort; queue = [answer, marker]
        o.Drop(1),  # the marker is lost
        o.MoveCoordinator(TXN_ID, FAILOVER_TO),
        o.Quiesce(QUIESCE_MS),
        *_read(),
    )


@declare(Scenario, "aborted-list-at-marker", mutants=())
def ABORTED_LIST_AT_MARKER() -> tuple[o.Operation, ...]:
    """The aborted-transaction list at a fetch boundary (KIP-98; TransactionIndex.collectAbortedTxns
    keeps an entry with ``lastOffset >= fetchOffset && firstOffset < upperBoundOffset``, both ends
    inclusive of the marker): a transaction of two records on t-0 aborts (its ABORT marker at offset
    2); the HW stops exactly at the marker, so a read_uncommitted consumer reads the two records and
    its position lands on the marker; once the HW passes the marker the same consumer fetches
    read_committed from offset 2. The answer starts at the ABORT marker and must still list the
    aborted transaction (its marker is the fetch's first offset); a leader that compares
    ``lastOffset > fetchOffset`` leaves it out. Then a read_committed consumer from 0 and one from 1
    (inside the aborted transaction) must list it too and see no aborted record (NoAbortedRead)."""
    return (
        *_INIT,
        *_txn((("t-0", 2),), commit=False),
        o.AdvanceHw("t-0", 2),
        o.ConsumeTxn(CONSUMER, "t-0", False),
        o.Settle(10),
        o.AdvanceHw("t-0", -1),
        o.ConsumeTxn(CONSUMER, "t-0", True),
        o.Settle(10),
        o.ConsumeTxn(1, "t-0", True),
        o.Settle(10),
    )


@declare(Scenario, "expiry-keeps-open-txn", mutants=())
def EXPIRY_KEEPS_OPEN_TXN() -> tuple[o.Operation, ...]:
    """KIP-854 producer-state expiry spares an open transaction (ProducerStateManager.isProducerExpired:
    ``!currentTxnFirstOffset.isPresent() && now - lastTimestamp >= producerIdExpirationMs``; a hanging
    transaction of KAFKA-14402 keeps its producer entry until an abort marker or the
    kafka-transactions.sh abort ends it, else the LSO would move past records that are still
    undecided). A transaction writes one record to t-0; then the network holds every message for a
    day and one expiration-check interval: the coordinator's timeout abort sends its marker (and
    re-sends it every request.timeout.ms) into the held network, so the transaction stays open on
    t-0 while its producer is idle past producer.id.expiration.ms. The leader must keep the entry
    (a ProducerExpired of it is non-conformance); once the network delivers, the ABORT marker ends
    the transaction. About 8,700 timer times and 2,900 marker re-sends, so it runs late in the zoo."""
    return (
        *_open(1),
        o.Settle(100),
        o.Advance(DAY_MS + PRODUCER_EXPIRY_CHECK_MS + 1_000),
    )


@declare(Scenario, "marker-before-verification-answer", mutants=())
def MARKER_BEFORE_VERIFICATION_ANSWER() -> tuple[o.Operation, ...]:
    """KIP-890 part 1's verification guard (kafka-facts section 1.9; UnifiedLog
    .maybeStartTransactionVerification, VerificationGuard, analyzeAndValidateProducerState): the
    producer's first batch to t-0 waits for its verification; the coordinator answers NONE (the
    partition is in the Ongoing transaction), but before that answer reaches the leader an adversarial
    client's EndTxn(abort) at the producer's own epoch (sent while its batch is in flight, which
    Kafka's TransactionManager never does: EndTxn waits for incomplete batches) ends the transaction
    and its ABORT marker lands on t-0. Any transactional batch, the marker included, clears the
    verification entry, so the late NONE no longer matches a guard: the batch must be refused
    (INVALID_TXN_STATE, "Record was not part of an ongoing transaction"), not opened as a transaction
    nobody will end (NoHangingTransaction). The guard is checked before the epoch
    (UnifiedLog.analyzeAndValidateProducerState precedes ProducerAppendInfo.append), so under TV2,
    whose abort bumped the epoch, the answer is INVALID_TXN_STATE too."""
    return (
        *_INIT,
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-0", 1),
        o.DeliverTo(COORDINATOR),  # AddPartitionsToTxn: Ongoing
        o.Deliver(0),  # its answer: the batch is sent
        o.DeliverTo(0),  # the batch: the leader asks the coordinator
        o.DeliverTo(COORDINATOR),  # the verification: NONE, its answer in flight
        o.RogueEndTxn(PRODUCER, -1, 0, False),
        o.DeliverTo(COORDINATOR),  # EndTxn(abort): PrepareAbort, the marker to t-0
        o.Deliver(2),  # in flight: the verification's answer, the EndTxn's, the ABORT marker: the marker first
        o.Settle(100),  # the late NONE, the marker's answer: CompleteAbort
        o.AbortTxn(PRODUCER),
        o.Settle(1000),
        *_read(),
        o.Quiesce(QUIESCE_MS),
    )


@declare(Scenario, "fetch-offsets-by-hand", mutants=())
def FETCH_OFFSETS_BY_HAND() -> tuple[o.Operation, ...]:
    """Issue 17 (adversarial clients: out-of-range offsets, requests to non-leaders): consumer Fetches
    sent by hand while t-0 holds two records of an open transaction with the HW between them. A
    fetch offset up to the log end offset is in range (LocalLog.read: an offset above the HW or the
    LSO reads nothing), past it or negative OFFSET_OUT_OF_RANGE (UnifiedLog.read,
    OffsetOutOfRangeException: below the log start offset or above the log end offset); a Fetch to
    a broker that does not lead t-0 NOT_LEADER_OR_FOLLOWER (ReplicaManager.readFromLocalLog). Each at
    both isolation levels where it matters. Last, two of the errors with fetch.max.wait.ms: a read
    that failed is answered at once, never parked (ReplicaManager.fetchMessages responds when
    ``errorReadingData``)."""
    hand = [
        _wire(
            broker,
            "TxnFetchRequest",
            partition="t-0",
            fetch_offset=offset,
            read_committed=committed,
            min_bytes=1,
            max_wait_ms=0,
        )
        for broker, offset, committed in (
            (0, 2, False),
            (0, 2, True),
            (0, 1, True),
            (0, 3, False),
            (0, 3, True),
            (0, -1, False),
            (1, 0, False),
            (2, 0, True),
        )
    ]
    waiting = [  # fetch.max.wait.ms: an error is answered at once, never parked
        _wire(0, "TxnFetchRequest", partition="t-0", fetch_offset=3, read_committed=True, min_bytes=1, max_wait_ms=500),
        _wire(
            1, "TxnFetchRequest", partition="t-0", fetch_offset=0, read_committed=False, min_bytes=1, max_wait_ms=500
        ),
    ]
    return (
        *_open(2),
        o.Settle(1000),
        o.AdvanceHw("t-0", 1),
        *hand,
        *waiting,
        *_commit(PRODUCER),
        *_read(),
    )


@declare(Scenario, "init-producer-id-by-hand", mutants=())
def INIT_PRODUCER_ID_BY_HAND() -> tuple[o.Operation, ...]:
    """Issue 17 (adversarial clients): InitProducerId requests with arguments Kafka validates before it
    looks at the metadata, sent by hand after a committed transaction (TransactionCoordinator
    .handleInitProducerId): a transaction timeout of 0 and one past transaction.max.timeout.ms
    (900,000 ms; validateTransactionTimeoutMs: INVALID_TRANSACTION_TIMEOUT), a KIP-360 expected
    producer id without an expected epoch and an epoch without an id (InitProducerIdRequest: both or
    neither, INVALID_REQUEST), none of which changes the metadata, then one at exactly
    transaction.max.timeout.ms, which is valid: NONE with the epoch bumped (it fences the producer,
    whose later commit is PRODUCER_FENCED)."""
    hand = [
        _wire(COORDINATOR, "InitPidRequest", txn_id=TXN_ID, timeout_ms=timeout, expected_pid=pid, expected_epoch=epoch)
        for timeout, pid, epoch in (
            (0, -1, -1),
            (900_001, -1, -1),
            (60_000, FIRST_PID, -1),
            (60_000, -1, 0),
            (900_000, -1, -1),
        )
    ]
    return (
        *_INIT,
        *_txn((("t-0", 1),), commit=True),
        *hand,
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-0", 1),
        o.Settle(1000),
        o.CommitTxn(PRODUCER),
        o.Settle(1000),
        *_read(),
    )


@declare(Scenario, "verification-during-prepare", mutants=())
def VERIFICATION_DURING_PREPARE() -> tuple[o.Operation, ...]:
    """KIP-890 part 1 verification while the transaction is being committed (kafka-facts section 1.9;
    TransactionCoordinator.handleVerifyPartitionsInTransaction: a transaction in PrepareCommit or
    PrepareAbort answers CONCURRENT_TRANSACTIONS, which AddPartitionsToTxnManager maps to the
    retriable NOT_ENOUGH_REPLICAS): the producer commits and, with the COMMIT marker still in
    flight, an adversarial copy of its client sends a batch at its own epoch to t-1, which the
    transaction never added. The leader of t-1 asks the coordinator, which must answer
    CONCURRENT_TRANSACTIONS (the transaction may be retried once complete), not TRANSACTION_ABORTABLE
    (INVALID_TXN_STATE: an abortable error for a transaction that is committing). Only with
    verification (the rogue batch is not sent without it)."""
    return (
        *_open(1),
        o.Settle(100),
        o.CommitTxn(PRODUCER),
        o.DeliverTo(COORDINATOR),  # EndTxn: PrepareCommit; queue = [answer, marker]
        o.RogueProduce(PRODUCER, "t-1", -1, 1, 0, 1),
        o.DeliverTo(1),  # the rogue batch at t-1's leader (broker 1): it asks the coordinator
        o.DeliverTo(COORDINATOR),  # the verification, the transaction still PrepareCommit
        o.Settle(100),
        *_read(),
    )


@declare(Scenario, "failover-before-load", mutants=())
def FAILOVER_BEFORE_LOAD() -> tuple[o.Operation, ...]:
    """KIP-98 coordinator failover twice in quick succession: ``txn-1``'s ``__transaction_state``
    partition moves to broker 2 and, before broker 2 has loaded it, on to broker 0. A load completes
    only for a partition its broker still leads at the same coordinator epoch
    (TransactionStateManager.loadTransactionsForTxnTopicPartition checks loadingPartitions, from which
    removeTransactionsForTxnTopicPartition, run on resignation, removed it): broker 2 never becomes a
    loaded coordinator (a CoordinatorLoaded from it is non-conformance), broker 0 loads at
    coordinator epoch 2, and the open transaction commits through it."""
    return (
        *_open(1),
        o.Settle(100),
        o.MoveCoordinator(TXN_ID, FAILOVER_TO),
        o.MoveCoordinator(TXN_ID, 0),
        o.Run(100),
        *_commit(PRODUCER),
        *_read(),
    )


@declare(Scenario, "delayed-fetch-beyond-lso", mutants=("delayed-fetch-drops-isolation",))
def DELAYED_FETCH_BEYOND_LSO() -> tuple[o.Operation, ...]:
    """KAFKA-5355 (0.11.0, Blocker): the broker returned messages beyond the last stable offset to a
    read_committed consumer because a parked fetch lost its isolation level. A read_committed Fetch
    waits (fetch.max.wait.ms) at an LSO held back by an open transaction; more records of that
    transaction arrive and the HW passes them, which completes a fetch counting to the HW but must
    leave this one parked (DelayedFetch TXN_COMMITTED counts to the LSO); the commit's marker and
    the HW passing it move the LSO, which must complete it with the committed records
    (Partition.tryCompleteDelayedRequests). Only with waiting consumer fetches
    (``fetch_max_wait_ms`` > 0)."""
    return (
        *_open(1),
        o.Settle(1000),
        o.AdvanceHw("t-0", -1),
        o.ConsumeTxn(CONSUMER, "t-0", True),
        o.Settle(10),
        o.Send(PRODUCER, "t-0", 2),
        o.Settle(100),
        o.AdvanceHw("t-0", -1),
        o.Settle(10),
        *_commit(PRODUCER),
        o.AdvanceHw("t-0", -1),
        o.Settle(10),
    )


@declare(Scenario, "delayed-fetch-past-lso", mutants=())
def DELAYED_FETCH_PAST_LSO() -> tuple[o.Operation, ...]:
    """A read_committed Fetch parked from a position past the LSO (the consumer read the open
    transaction's record read_uncommitted first, so its position is above the LSO). DelayedFetch
    .tryComplete at TXN_COMMITTED counts from the start offset of its read (the LSO, where the read
    found nothing) to the LSO now: an HW advance that leaves the LSO where it was (more records of the
    same open transaction) must leave the fetch parked (Partition.tryCompleteDelayedRequests runs,
    nothing is ready); a leader that counts from the fetch offset, or takes a fetch offset above the
    LSO for a truncated log (DelayedFetch's Case F), answers at once with nothing. The commit's
    marker and the HW passing it move the LSO, which completes the fetch with the committed records.
    Only with waiting consumer fetches (``fetch_max_wait_ms`` > 0)."""
    return (
        *_open(1),
        o.Settle(1000),
        o.AdvanceHw("t-0", -1),
        o.ConsumeTxn(CONSUMER, "t-0", False),
        o.Settle(10),
        o.ConsumeTxn(CONSUMER, "t-0", True),
        o.Settle(10),
        o.Send(PRODUCER, "t-0", 1),
        o.Settle(100),
        o.AdvanceHw("t-0", -1),
        o.Settle(10),
        *_commit(PRODUCER),
        o.AdvanceHw("t-0", -1),
        o.Settle(10),
    )


@declare(Scenario, "producer-expiry", mutants=())
def PRODUCER_EXPIRY() -> tuple[o.Operation, ...]:
    """KIP-854 producer-state expiry: an idempotent producer writes one batch to t-0, then idles
    for producer.id.expiration.ms (a day) and one expiration-check interval (10 min,
    UnifiedLog's PeriodicProducerExpirationCheck). The leader must have dropped its state by then
    (ProducerExpiryBounded); the producer's next batch, at its next sequence, is then an unknown
    producer's and is appended (KIP-360). A leader whose check never runs keeps the state for ever.
    About 9,000 timer times pass (the coordinator's 10 s abort check), so it runs late in the zoo.
    A transactional producer initialised before the wait lets the coordinator's hourly
    transactional-id expiration check (transaction.remove.expired.transaction.cleanup.interval.ms;
    TransactionStateManager.enableTransactionalIdExpiration, removeExpiredTransactionalIds) run 24
    times over an id idle far less than transactional.id.expiration.ms (7 days): it must not expire."""
    return (
        o.InitProducer(IDEMPOTENT, ""),
        o.Settle(100),
        o.Send(IDEMPOTENT, "t-0", 2),
        o.Settle(100),
        *_INIT,
        o.Advance(DAY_MS + PRODUCER_EXPIRY_CHECK_MS + 1_000),
        o.Send(IDEMPOTENT, "t-0", 1),
        o.Settle(100),
    )


@declare(Scenario, "epoch-exhaustion", mutants=("epoch-overflow",))
def EPOCH_EXHAUSTION() -> tuple[o.Operation, ...]:
    """KIP-360 producer-id rotation (kafka-facts §1.3): an application re-initialises its transactional
    producer 32766 times (each initTransactions of a live instance bumps the epoch by one, the only
    way epochs grow), so the epoch reaches 32766. The next InitProducerId must rotate to a fresh
    producer id at epoch 0: 32767 is reserved for fencing. Then KIP-360's previous-producer-id rule
    (TransactionCoordinator.handleInitProducerId, isValidProducerId: an expected producer id equal to
    the previous one is valid only with an exhausted expected epoch, TransactionMetadata
    .isEpochExhausted, epoch >= 32766): a retry of the rotating InitProducerId (the previous id at
    32766: the current identity, NONE), then, while the new id's transaction is Ongoing, the previous
    id at 32765 (PRODUCER_FENCED: a broker that took it for a retry would fence the transaction and
    answer CONCURRENT_TRANSACTIONS). Costly (one round trip per epoch, about 10 s judged), so it runs
    last."""
    return (
        *((o.InitProducer(PRODUCER, TXN_ID), o.Settle(10)) * (SHORT_MAX + 1)),
        o.RogueInitProducer(PRODUCER, -1, -1, SHORT_MAX - 1),
        o.Settle(100),
        o.BeginTxn(PRODUCER),
        o.Send(PRODUCER, "t-0", 1),
        o.Settle(1000),
        o.RogueInitProducer(PRODUCER, -1, -1, SHORT_MAX - 2),
        o.Settle(100),
        o.CommitTxn(PRODUCER),
        o.Settle(1000),
    )


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        DUPLICATED_PRODUCE,
        OLDER_IN_FLIGHT_DUPLICATE,
        READ_COMMITTED_DURING_OPEN_TXN,
        LSO_TWO_UNSTABLE,
        ABORT_THEN_READ_COMMITTED,
        TXN_OFFSETS_BEFORE_COMMIT,
        ZOMBIE_DELAYED_PRODUCE,
        LATE_PRODUCE_AFTER_ABORT,
        LATE_END_TXN,
        STALE_COORDINATOR_MARKER,
        STALE_COORDINATOR_ABORT_MARKER,
        FAILOVER_AFTER_PREPARE,
        FAILOVER_BEFORE_LOAD,
        DELAYED_FETCH_BEYOND_LSO,
        DELAYED_FETCH_PAST_LSO,
        ABORTED_LIST_AT_MARKER,
        FAILOVER_AFTER_PREPARE_ABORT,
        MARKER_BEFORE_VERIFICATION_ANSWER,
        FETCH_OFFSETS_BY_HAND,
        INIT_PRODUCER_ID_BY_HAND,
        VERIFICATION_DURING_PREPARE,
        ADVERSARIAL_PRODUCER,
        ADVERSARIAL_END_TXN,
        UNKNOWN_TXN_ID,
        REORDERED_VERIFICATION,
        PRODUCER_EXPIRY,
        EXPIRY_KEEPS_OPEN_TXN,
        EPOCH_EXHAUSTION,
    )
}
"""Every scenario, cheapest first (the order the gate runs them)."""


NEEDS_DELAYED_FETCH = frozenset({DELAYED_FETCH_BEYOND_LSO.name, DELAYED_FETCH_PAST_LSO.name})
"""Scenarios about parked fetches: run only when consumer fetches wait (``fetch_max_wait_ms`` > 0)."""


def applies(cfg: TxnConfig) -> bool:
    """Whether ``cfg`` has the cluster shape the scenarios are written for: the defaults, except
    the transaction version, verification and the consumers' fetch wait, which every scenario
    runs under."""
    return cfg == TxnConfig(
        transaction_version=cfg.transaction_version,
        verification=cfg.verification,
        fetch_max_wait_ms=cfg.fetch_max_wait_ms,
        fetch_min_bytes=cfg.fetch_min_bytes,
    )


def zoo(cfg: TxnConfig) -> list[Scenario]:
    """Every scenario, cheapest first, if ``applies(cfg)`` (those about parked fetches only when
    fetches wait); none otherwise."""
    if not applies(cfg):
        return []
    return [s for s in SCENARIOS.values() if cfg.delayed_fetch or s.name not in NEEDS_DELAYED_FETCH]
