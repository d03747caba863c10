"""Operations: the inputs a conformance run gives an implementation (client calls, faults, time).

An operation is what a user of the cluster or the world does; the events it causes are what the
implementation reports back. Counterexample files store one operation per step with its events.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from kconform.model.fast_init import fast_frozen_inits

_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    """The dataclass fields of ``cls`` in declaration order, looked up once per class (to_json runs
    once per generated step)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


@dataclass(frozen=True)
class Operation:
    """Base class of all operations."""

    kind: ClassVar[str] = "op"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.kind}
        for name in _field_names(type(self)):
            out[name] = getattr(self, name)
        return out

    def __str__(self) -> str:
        args = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))
        return f"{self.kind}({args})"


@dataclass(frozen=True)
class Boot(Operation):
    """The cluster starts: brokers register, the first leader is elected, metadata spreads.
    Always step 0 of a run; replay turns it into ``Adapter.reset``."""

    kind: ClassVar[str] = "boot"


@dataclass(frozen=True)
class Produce(Operation):
    """The producer sends record ``rid`` with ``acks`` to the broker it believes leads."""

    kind: ClassVar[str] = "produce"
    rid: int
    acks: int


@dataclass(frozen=True)
class Consume(Operation):
    """The read_uncommitted consumer fetches from ``offset`` at the broker it believes leads."""

    kind: ClassVar[str] = "consume"
    offset: int


@dataclass(frozen=True)
class RogueFetch(Operation):
    """An adversarial consumer (issue 17): a read_uncommitted Fetch from ``offset`` sent to
    ``broker`` whether or not it leads, with currentLeaderEpoch the controller's current leader
    epoch shifted by ``epoch_delta`` (stale: FENCED_LEADER_EPOCH, future: UNKNOWN_LEADER_EPOCH,
    KIP-320; below 0 it is -1, an old client sending none). The consumer ignores the answer beyond
    its usual metadata refresh; the judge checks the broker's (Partition / ReplicaManager
    checks, then the offset range: OFFSET_OUT_OF_RANGE past the LEO)."""

    kind: ClassVar[str] = "rogue_fetch"
    broker: int
    offset: int
    epoch_delta: int


@dataclass(frozen=True)
class ConsumeReplica(Operation):
    """The follower-fetching consumer (KIP-392, config ``follower_fetching``) fetches from its
    position at its preferred read replica, or at the leader when it has none; ignored when the
    config has no follower fetching."""

    kind: ClassVar[str] = "consume_replica"


@dataclass(frozen=True)
class ConsumeWait(Operation):
    """The read_uncommitted consumer fetches from ``offset`` with fetch.min.bytes ``min_bytes``
    (counted in records) and fetch.max.wait.ms ``max_wait_ms``: the broker may park the Fetch
    (DelayedFetch) until enough records are committed, something else completes it, or the wait ends."""

    kind: ClassVar[str] = "consume_wait"
    offset: int
    min_bytes: int
    max_wait_ms: int


@dataclass(frozen=True)
class Crash(Operation):
    """Broker ``broker`` crashes (loses what it did not flush)."""

    kind: ClassVar[str] = "crash"
    broker: int


@dataclass(frozen=True)
class Restart(Operation):
    """A crashed broker ``broker`` restarts and registers with the controller."""

    kind: ClassVar[str] = "restart"
    broker: int


@dataclass(frozen=True)
class Isolate(Operation):
    """Cut ``broker`` off from every other node, the controller included, until ``heal``."""

    kind: ClassVar[str] = "isolate"
    broker: int


@dataclass(frozen=True)
class Heal(Operation):
    """Remove every network partition."""

    kind: ClassVar[str] = "heal"


@dataclass(frozen=True)
class Deliver(Operation):
    """Deliver the in-flight message at position ``index`` (modulo the queue length) of the
    network queue ordered by send time; nothing if the queue is empty."""

    kind: ClassVar[str] = "deliver"
    index: int


@dataclass(frozen=True)
class DeliverTo(Operation):
    """Deliver the oldest in-flight message addressed to ``node`` (a broker id, or -1 for the
    controller); nothing if there is none."""

    kind: ClassVar[str] = "deliver_to"
    node: int


@dataclass(frozen=True)
class Drop(Operation):
    """Drop the in-flight message at ``index`` (modulo the queue length)."""

    kind: ClassVar[str] = "drop"
    index: int


@dataclass(frozen=True)
class Duplicate(Operation):
    """Deliver the in-flight message at ``index`` (modulo) twice: now and again later."""

    kind: ClassVar[str] = "duplicate"
    index: int


@dataclass(frozen=True)
class Advance(Operation):
    """Simulated time moves forward ``ms`` milliseconds; due timers fire in time order."""

    kind: ClassVar[str] = "advance"
    ms: int


@dataclass(frozen=True)
class Settle(Operation):
    """Deliver in-flight messages in send order until none is left or ``max_messages`` ran."""

    kind: ClassVar[str] = "settle"
    max_messages: int


@dataclass(frozen=True)
class Run(Operation):
    """A healthy network for ``ms`` milliseconds: deliver every in-flight message (bounded), then
    move the clock by at most 100 ms, until ``ms`` have passed. Cuts and crashes still apply."""

    kind: ClassVar[str] = "run"
    ms: int


@dataclass(frozen=True)
class MoveLeader(Operation):
    """An administrator asks the controller to make ``broker`` leader (preferred election);
    refused silently when ``broker`` is not in the ISR or not unfenced."""

    kind: ClassVar[str] = "move_leader"
    broker: int


@dataclass(frozen=True)
class DeleteRecordsAt(Operation):
    """The admin client's DeleteRecords (KIP-107) reaches broker ``broker`` at once: delete the
    partition's records below ``offset`` (-1: below the HW). Ignored when the broker is not running."""

    kind: ClassVar[str] = "delete_records_at"
    broker: int
    offset: int


@dataclass(frozen=True)
class Retention(Operation):
    """Broker ``broker``'s retention (log.retention.ms / log.retention.bytes) deletes its records
    below ``offset``: ignored unless that moves its log start forward and stays within its HW."""

    kind: ClassVar[str] = "retention"
    broker: int
    offset: int


@dataclass(frozen=True)
class ModelAction(Operation):
    """One atomic action of the model-level search (model.actions), e.g. ``replicate(1)``.

    Only steps of files written by ``kconform explore`` (implementation "model") carry it; their
    events are the handler calls of that action. No implementation can be driven by it: such a file
    is judged model-only."""

    kind: ClassVar[str] = "model_action"
    label: str


# --------------------------------------------------------------------------------------------
# The exactly-once slice (impl/txn/cluster.py). Producer clients, consumers and groups are named
# by small integers / names; record ids (rid) and client transaction numbers (ctxn) are chosen by
# the cluster (counters), so the same operations always give the same annotations.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InitProducer(Operation):
    """Producer client ``client`` calls initTransactions with transactional id ``txn_id`` ("" = an
    idempotent producer's InitProducerId). A client not seen before is a new producer instance: a
    second client with the same ``txn_id`` fences the first, which keeps running as a zombie.
    Refused silently while the client is mid-transaction."""

    kind: ClassVar[str] = "init_producer"
    client: int
    txn_id: str


@dataclass(frozen=True)
class BeginTxn(Operation):
    """``client`` begins a transaction (local: no request); it gets the next client transaction
    number ``ctxn``. Ignored unless the client is ready and transactional."""

    kind: ClassVar[str] = "begin_txn"
    client: int


@dataclass(frozen=True)
class Send(Operation):
    """``client`` sends one batch of ``count`` new records (fresh rids) to ``partition`` (a data
    partition): AddPartitionsToTxn first if the transaction lacks it, then Produce, at most 5
    batches in flight per partition. Ignored outside a transaction for a transactional client."""

    kind: ClassVar[str] = "send"
    client: int
    partition: str
    count: int


@dataclass(frozen=True)
class RogueProduce(Operation):
    """An adversarial client (issue 17): ``client``'s producer id sends one batch of ``count`` new
    records (fresh rids) that a buggy, old or malicious client may send: its base sequence is the
    client's next sequence on ``partition`` shifted by ``seq_delta`` (a gap, a replay of an older
    range, a new epoch starting at a non-zero sequence), its epoch the client's shifted by
    ``epoch_delta`` (stale or future), sent to ``broker`` (-1: the partition's leader; another
    broker: a request to a non-leader), transactional iff the client is, whether or not the
    partition was added to the transaction. The client ignores the answer; the judge checks the
    broker's (ProducerAppendInfo, ReplicaManager). Ignored when both shifts are 0 (a well-formed
    batch is a ``send``), before the client has a producer id, and for a transactional client
    with ``epoch_delta`` > 0 or without KIP-890 part 1 verification: Kafka has no broker check
    that refuses those (a future epoch inside a transaction, or a transactional batch on a
    partition the coordinator does not know, leaves a hanging transaction, the hole KIP-890
    closes), so no answer would tell a buggy broker from a correct one."""

    kind: ClassVar[str] = "rogue_produce"
    client: int
    partition: str
    broker: int
    seq_delta: int
    epoch_delta: int
    count: int


@dataclass(frozen=True)
class RogueEndTxn(Operation):
    """An adversarial client (issue 17): ``client``'s producer id sends an EndTxn out of order, at
    any moment of its transaction (none open, one open, one being committed or aborted, one just
    ended), with its epoch shifted by ``epoch_delta`` (stale or future), committing or aborting,
    to ``broker`` (-1: the coordinator; another broker: NOT_COORDINATOR unless it coordinates).
    TransactionCoordinator.handleEndTransaction answers by its own checks (producer id and epoch,
    then the state table: INVALID_TXN_STATE, CONCURRENT_TRANSACTIONS, PRODUCER_FENCED, or NONE for
    a retry of what is already complete); the client ignores the answer. Ignored before the client
    has a producer id and for a non-transactional client. A shift of one either way is always
    fenced while the client's own transaction is open (the coordinator holds the client's epoch
    then), so it never ends a transaction the client is still writing; a shift of 0 while one is
    open is the client's own commit or abort sent behind its back (the gate's machine draws -1
    and 1 only; the zoo sends 0 only when no transaction is open)."""

    kind: ClassVar[str] = "rogue_end_txn"
    client: int
    broker: int
    epoch_delta: int
    commit: bool


@dataclass(frozen=True)
class RogueAddPartitions(Operation):
    """An adversarial client (issue 17): ``client``'s producer id sends AddPartitionsToTxn for
    ``partition`` with its epoch shifted by ``epoch_delta``, at any moment (for instance while its
    EndTxn's markers are in flight), to ``broker`` (-1: the coordinator). Answered by
    TransactionCoordinator.handleAddPartitionsToTransaction's checks (producer id, epoch:
    PRODUCER_FENCED; Prepare*: CONCURRENT_TRANSACTIONS; else the partition is added); the client
    ignores the answer. Ignored before the client has a producer id, for a non-transactional
    client and for a partition that is not a data partition. An accepted request adds the
    partition to (or opens) a transaction behind the client's back, so the gate's machine never
    draws it; the zoo sends it when the coordinator refuses it."""

    kind: ClassVar[str] = "rogue_add_partitions"
    client: int
    partition: str
    broker: int
    epoch_delta: int


@dataclass(frozen=True)
class RogueInitProducer(Operation):
    """An adversarial client (issue 17): ``client`` sends InitProducerId for its transactional id
    with KIP-360's expected producer id and epoch set to its own shifted by ``pid_delta`` and
    ``epoch_delta`` (a client that lost track of its identity, or a malicious one), to ``broker``
    (-1: the coordinator). TransactionCoordinator.handleInitProducerId answers an expected id that
    is neither the current nor (at an exhausted epoch) the previous one PRODUCER_FENCED; the
    client ignores the answer. Ignored before the client has a producer id and for a
    non-transactional client. With ``pid_delta`` 0 an accepted request bumps the epoch and fences
    the client (and aborts its open transaction), so the zoo sends it only with a shifted id."""

    kind: ClassVar[str] = "rogue_init_producer"
    client: int
    broker: int
    pid_delta: int
    epoch_delta: int


@dataclass(frozen=True)
class CommitTxn(Operation):
    """``client`` commits: EndTxn(commit) once its batches and offset commits are answered."""

    kind: ClassVar[str] = "commit_txn"
    client: int


@dataclass(frozen=True)
class AbortTxn(Operation):
    """``client`` aborts: EndTxn(abort) once its batches and offset commits are answered."""

    kind: ClassVar[str] = "abort_txn"
    client: int


@dataclass(frozen=True)
class SendOffsets(Operation):
    """``client`` sends consumer offsets in its transaction (sendOffsetsToTransaction):
    AddOffsetsToTxn for ``group``, then TxnOffsetCommit of (``partition``, ``offset``)."""

    kind: ClassVar[str] = "send_offsets"
    client: int
    group: str
    partition: str
    offset: int


@dataclass(frozen=True)
class ConsumeTxn(Operation):
    """Consumer ``consumer`` fetches ``partition`` from its position (0 at first) at isolation
    read_committed or read_uncommitted; its position moves past what the answer returned."""

    kind: ClassVar[str] = "consume_txn"
    consumer: int
    partition: str
    read_committed: bool


@dataclass(frozen=True)
class CommitOffsets(Operation):
    """A plain OffsetCommit of (``partition``, ``offset``) for ``group``."""

    kind: ClassVar[str] = "commit_offsets"
    group: str
    partition: str
    offset: int


@dataclass(frozen=True)
class FetchOffsets(Operation):
    """OffsetFetch of ``group``'s committed offsets (``require_stable``: KIP-447)."""

    kind: ClassVar[str] = "fetch_offsets"
    group: str
    require_stable: bool


@dataclass(frozen=True)
class MoveCoordinator(Operation):
    """The ``__transaction_state`` partition of ``txn_id`` gets leader ``broker`` at the next
    coordinator epoch (coordinator failover; moving to the same broker is a reload). The new
    coordinator loads the log 10 ms later. Ignored for an unknown broker."""

    kind: ClassVar[str] = "move_coordinator"
    txn_id: str
    broker: int


@dataclass(frozen=True)
class AdvanceHw(Operation):
    """``partition``'s leader moves its HW to ``offset`` clamped to [HW, LEO] (-1: the LEO)."""

    kind: ClassVar[str] = "advance_hw"
    partition: str
    offset: int


@dataclass(frozen=True)
class Quiesce(Operation):
    """Deliver every in-flight message in send order and fire timers in time order until the
    cluster is quiet (nothing in flight, no client with work left, no coordinator loading, no
    transaction Ongoing at a coordinator (its timeout abort is still to fire), no marker
    unacknowledged) or ``max_ms`` of simulated time passed. The liveness check (every transaction
    ends within its timeout + a stated bound once the coordinator is available) is judged after
    it: a Prepare* transaction whose coordinator has no marker outstanding never ends."""

    kind: ClassVar[str] = "quiesce"
    max_ms: int


@dataclass(frozen=True)
class WireRequest(Operation):
    """A real Kafka client's request served by ``kconform serve``: ``request`` (the JSON text of one
    client request payload of the exactly-once slice, impl/txn/wire.py) arrives at ``broker`` from
    wire connection ``conn``; every message in flight is then delivered (a healthy network), so the
    request's verification and markers run to completion. The answer goes back to the client."""

    kind: ClassVar[str] = "wire_request"
    conn: int
    broker: int
    request: str


# --------------------------------------------------------------------------------------------
# The fetch-session slice (impl/fetch/cluster.py): clients 0.. fetch from broker 0, whose
# partitions are named t-0, t-1, ...; ``AdvanceHw`` above moves a partition's HW here too.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Poll(Operation):
    """Client ``client`` sends a fetch request of its assigned partitions from its positions, unless a
    request of it is in flight (one per broker, KAFKA-8052)."""

    kind: ClassVar[str] = "poll"
    client: int


@dataclass(frozen=True)
class Assign(Operation):
    """Client ``client`` is assigned ``partition`` (``assigned`` true, appended to its assignment) or
    loses it; ignored when nothing changes or the partition is unknown."""

    kind: ClassVar[str] = "assign"
    client: int
    partition: str
    assigned: bool


@dataclass(frozen=True)
class CloseSession(Operation):
    """Client ``client`` closes: notifyClose and the close request (epoch -1, no partitions) at once,
    then a new consumer instance resumes at its positions."""

    kind: ClassVar[str] = "close_session"
    client: int


@dataclass(frozen=True)
class AppendRecords(Operation):
    """The broker appends ``count`` new records to ``partition``: ``txn`` 0 a plain batch, 1 a
    committed transaction, 2 an aborted one (each with a fresh producer id and its marker)."""

    kind: ClassVar[str] = "append_records"
    partition: str
    count: int
    txn: int


@dataclass(frozen=True)
class DeleteRecords(Operation):
    """DeleteRecords (KIP-107): ``partition``'s log start moves to ``offset`` clamped to the HW;
    ignored unless that moves it forward."""

    kind: ClassVar[str] = "delete_records"
    partition: str
    offset: int


@dataclass(frozen=True)
class ToggleLeadership(Operation):
    """Leadership of ``partition`` moves away from the broker, or back to it."""

    kind: ClassVar[str] = "toggle_leadership"
    partition: str


@dataclass(frozen=True)
class Bounce(Operation):
    """Broker ``broker`` restarts at once: what it held in memory (the fetch session cache) and every
    message in flight to or from it are lost; its logs survive."""

    kind: ClassVar[str] = "bounce"
    broker: int


OPERATION_TYPES: dict[str, type[Operation]] = {
    cls.kind: cls
    for cls in (
        Boot,
        Produce,
        Consume,
        RogueFetch,
        ConsumeWait,
        ConsumeReplica,
        Crash,
        Restart,
        Isolate,
        Heal,
        Deliver,
        DeliverTo,
        Drop,
        Duplicate,
        Advance,
        Settle,
        Run,
        MoveLeader,
        DeleteRecordsAt,
        Retention,
        ModelAction,
        InitProducer,
        BeginTxn,
        Send,
        RogueProduce,
        RogueEndTxn,
        RogueAddPartitions,
        RogueInitProducer,
        CommitTxn,
        AbortTxn,
        SendOffsets,
        ConsumeTxn,
        CommitOffsets,
        FetchOffsets,
        MoveCoordinator,
        AdvanceHw,
        Quiesce,
        WireRequest,
        Poll,
        Assign,
        CloseSession,
        AppendRecords,
        DeleteRecords,
        ToggleLeadership,
        Bounce,
    )
}


class OperationDecodeError(ValueError):
    """A JSON object is not a valid operation."""


def operation_from_json(obj: Any) -> Operation:
    """Decode one operation; raise OperationDecodeError naming the problem (unknown op, a missing
    or ill-typed field: ``str`` fields take a JSON string, ``bool`` fields true/false, every other
    field an integer)."""
    if not isinstance(obj, dict):
        raise OperationDecodeError(f"an operation is a JSON object, got {type(obj).__name__}")
    kind = obj.get("op")
    cls = OPERATION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise OperationDecodeError(f"unknown operation {kind!r}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = obj.get(f.name)
        if f.type == "str":
            if not isinstance(value, str):
                raise OperationDecodeError(f"{kind}: field {f.name!r} should be a string, got {value!r}")
        elif f.type == "bool":
            if not isinstance(value, bool):
                raise OperationDecodeError(f"{kind}: field {f.name!r} should be true or false, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int):
            raise OperationDecodeError(f"{kind}: field {f.name!r} should be an integer, got {value!r}")
        kwargs[f.name] = value
    return cls(**kwargs)


fast_frozen_inits(vars(), __name__)  # each frozen dataclass here gets a cheaper, identical __init__ (model.fast_init)
