"""The event vocabulary: what an implementation reports, what the model judges, what trace files hold.

One event is one protocol handler run on one node (a broker, the controller, or the simulated
world), with the handler's inputs *and* the outcome the implementation claims. The model recomputes
the outcome from the inputs and its own state; a different outcome is non-conformance. The same
frozen dataclasses flow through the lockstep judge, counterexample files, replay and (later) corpora.

Conventions (Kafka's): offsets are int64, ``-1`` means "none/unknown" for leaders, epochs and
offsets; error codes are Kafka's numeric ones. The codes (``kconform.model.errors``) and the records
(``kconform.model.records``) are the model's vocabulary and are re-exported here. Handler semantics
are documented on each class and, in prose, in docs/protocol.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

# The model's vocabulary, re-exported (`X as X`): events carry these codes and records, the model
# defines them. isort would split each `as` import into its own statement.
# isort: off
from kconform.model.errors import (
    CONCURRENT_TRANSACTIONS as CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS as COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE as COORDINATOR_NOT_AVAILABLE,
    DUPLICATE_SEQUENCE_NUMBER as DUPLICATE_SEQUENCE_NUMBER,
    ERRORS as ERRORS,
    FENCED_LEADER_EPOCH as FENCED_LEADER_EPOCH,
    FETCH_SESSION_ID_NOT_FOUND as FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH as INVALID_FETCH_SESSION_EPOCH,
    INELIGIBLE_REPLICA as INELIGIBLE_REPLICA,
    INVALID_PRODUCER_EPOCH as INVALID_PRODUCER_EPOCH,
    INVALID_PRODUCER_ID_MAPPING as INVALID_PRODUCER_ID_MAPPING,
    INVALID_REQUEST as INVALID_REQUEST,
    INVALID_REQUIRED_ACKS as INVALID_REQUIRED_ACKS,
    INVALID_TRANSACTION_TIMEOUT as INVALID_TRANSACTION_TIMEOUT,
    INVALID_TXN_STATE as INVALID_TXN_STATE,
    INVALID_UPDATE_VERSION as INVALID_UPDATE_VERSION,
    NONE as NONE,
    NOT_COORDINATOR as NOT_COORDINATOR,
    NOT_ENOUGH_REPLICAS as NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND as NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    NOT_LEADER_OR_FOLLOWER as NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE as OFFSET_OUT_OF_RANGE,
    OUT_OF_ORDER_SEQUENCE_NUMBER as OUT_OF_ORDER_SEQUENCE_NUMBER,
    PRODUCER_FENCED as PRODUCER_FENCED,
    REQUEST_TIMED_OUT as REQUEST_TIMED_OUT,
    TRANSACTION_ABORTABLE as TRANSACTION_ABORTABLE,
    TRANSACTION_COORDINATOR_FENCED as TRANSACTION_COORDINATOR_FENCED,
    TRANSACTIONAL_ID_NOT_FOUND as TRANSACTIONAL_ID_NOT_FOUND,
    UNKNOWN_LEADER_EPOCH as UNKNOWN_LEADER_EPOCH,
    UNSTABLE_OFFSET_COMMIT as UNSTABLE_OFFSET_COMMIT,
)
from kconform.model.records import (
    ABORT_MARKER as ABORT_MARKER,
    COMMIT_MARKER as COMMIT_MARKER,
    NO_CONTROL as NO_CONTROL,
    AbortedTxn as AbortedTxn,
    Entry as Entry,
    Record as Record,
    TopicOffset as TopicOffset,
)
# isort: on

from kconform.model.fast_init import fast_frozen_inits

SCHEMA_VERSION = 2
"""Version of the event schema written into every trace/counterexample header.

Version 1: the replication slice. Version 2 adds the exactly-once slice (idempotent producer,
transactions, LSO, read_committed, offsets); every version-1 file is a valid version-2 file. The
fetch-session slice's event kinds were added within version 2 (no field of an existing kind
changed, so every earlier file reads as before; an older kconform refuses a fetch file naming the
unknown kind). So were the delayed-fetch kinds (fetch_parked, fetch_completed,
consumer_fetch_wait_handled, consumer_fetch_completed): new kinds only, so every file written
before reads back unchanged."""

SUPPORTED_SCHEMA_VERSIONS: tuple[int, ...] = (1, SCHEMA_VERSION)
"""Event schema versions this kconform reads."""


NO_LEADER = -1
CONTROLLER = -1
"""``node`` of events run by the controller."""


@dataclass(frozen=True)
class Event:
    """Base class: every event names the node that ran the handler."""

    kind: ClassVar[str] = "event"
    node: int

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"kind": ..., field: value, ...}`` with entries as ``[o, e, rid]``."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            out[f.name] = _encode(getattr(self, f.name))
        return out


def _encode(value: Any) -> Any:
    if isinstance(value, Entry | Record | AbortedTxn | TopicOffset):
        return value.to_list()
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------
# Controller handlers (node = CONTROLLER). Each carries the partition state it resulted in.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerFenced(Event):
    """The controller fenced ``broker`` (its session expired or it re-registered after a restart).

    KRaft semantics (kafka-facts §3.5): the broker leaves the ISR unless it is the last member; if
    it led, an ONLINE election picks the first replica in assignment order that is in the new ISR
    and unfenced, else (with unclean.leader.election.enable, KIP-106) the first unfenced replica
    with ISR forced to [it], else no leader. Leader epoch +1 iff the leader changed; partition
    epoch +1 iff anything changed. Fields after ``broker`` are the resulting partition state.
    """

    kind: ClassVar[str] = "broker_fenced"
    broker: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    unclean: bool


@dataclass(frozen=True)
class BrokerUnfenced(Event):
    """The controller unfenced a registered ``broker``; a leaderless partition elects (as above)."""

    kind: ClassVar[str] = "broker_unfenced"
    broker: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    unclean: bool


@dataclass(frozen=True)
class LeaderMoved(Event):
    """A voluntary clean election (preferred-leader / reassignment) of ``leader`` from ISR ∩ unfenced.

    Leader epoch +1, partition epoch +1, ISR unchanged (kafka-facts §3.5 PREFERRED election).
    """

    kind: ClassVar[str] = "leader_moved"
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int


@dataclass(frozen=True)
class AlterPartitionHandled(Event):
    """The controller handled an AlterPartition (KIP-497) sent as ``msg``.

    Accepted iff the sender is the current leader with the current leader epoch and partition
    epoch, and every added member is unfenced: ISR := proposal, partition epoch +1, leader epoch
    unchanged (KAFKA-15021). Else FENCED_LEADER_EPOCH (stale leader epoch or not leader),
    INVALID_UPDATE_VERSION (stale partition epoch) or INELIGIBLE_REPLICA (fenced member added).
    ``isr``/``partition_epoch`` are the controller's state after handling.
    """

    kind: ClassVar[str] = "alter_partition_handled"
    msg: int
    error: int
    isr: tuple[int, ...]
    partition_epoch: int


# --------------------------------------------------------------------------------------------
# Broker lifecycle and the simulated world
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClockAdvanced(Event):
    """Simulated time moved to ``now_ms`` (never backwards). node = CONTROLLER."""

    kind: ClassVar[str] = "clock_advanced"
    now_ms: int


@dataclass(frozen=True)
class BrokerCrashed(Event):
    """The broker process died: volatile state is gone, what was not flushed is lost.

    Durable state: the log up to the last flushed offset (every append when flush_interval_ms=0),
    the last HW checkpoint, the leader-epoch checkpoint (written on every change, as Kafka does).
    Messages in flight to or from it are lost.
    """

    kind: ClassVar[str] = "broker_crashed"


@dataclass(frozen=True)
class BrokerRestarted(Event):
    """The broker recovered from disk: LEO = durable log end, HW = min(checkpoint, LEO), epoch
    cache truncated to the LEO. It knows no leadership until the controller unfences it and
    metadata arrives. ``log_end``/``hw`` are what it recovered."""

    kind: ClassVar[str] = "broker_restarted"
    log_end: int
    hw: int


@dataclass(frozen=True)
class Checkpointed(Event):
    """The broker flushed its log to ``log_end`` (= its LEO) and checkpointed ``hw`` (= its HW)."""

    kind: ClassVar[str] = "checkpointed"
    log_end: int
    hw: int


@dataclass(frozen=True)
class MetadataApplied(Event):
    """The broker applied the partition state of ``partition_epoch`` (LeaderAndIsr / KRaft delta).

    Ignored (outcome "ignored") unless the broker is running, registered (unfenced since its
    last restart), and ``partition_epoch`` is newer than the one it holds. Otherwise, with a higher
    leader epoch: "become_leader" (epoch cache gets (epoch, LEO), follower states reset) or
    "become_follower" (pre-KIP-101: truncate to HW at once; KIP-101..320: truncate after an
    OffsetsForLeaderEpoch round trip; since 2.7: truncation on fetch); with the same leader epoch:
    "update_isr". ``truncated_to`` is -1 unless it truncated now; ``hw`` is its HW afterwards.
    """

    kind: ClassVar[str] = "metadata_applied"
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    outcome: str
    truncated_to: int
    hw: int


# --------------------------------------------------------------------------------------------
# Produce
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProduceHandled(Event):
    """The broker handled Produce request ``req`` for record ``rid`` with ``acks``.

    Order of checks (kafka-facts §3.4): acks ∉ {-1,0,1} → INVALID_REQUIRED_ACKS; not leader →
    NOT_LEADER_OR_FOLLOWER; acks=-1 with committed ISR < min(min.insync.replicas, replicas) →
    NOT_ENOUGH_REPLICAS. Else the record is appended at ``offset`` with the leader's ``epoch``,
    the HW may advance (``hw`` after), and acks=1 answers NONE now; acks=-1 waits (DelayedProduce).
    ``offset``/``epoch`` are -1 when nothing was appended.
    """

    kind: ClassVar[str] = "produce_handled"
    req: int
    rid: int
    acks: int
    error: int
    offset: int
    epoch: int
    hw: int


@dataclass(frozen=True)
class ProduceCompleted(Event):
    """A delayed acks=-1 produce ``req`` completed on the broker with ``error``.

    NONE iff the leader's HW > the record's offset and the maximal ISR ≥ min ISR;
    NOT_ENOUGH_REPLICAS_AFTER_APPEND iff the HW passed but the maximal ISR < min ISR;
    REQUEST_TIMED_OUT once now ≥ deadline; NOT_LEADER_OR_FOLLOWER when it stopped leading.
    """

    kind: ClassVar[str] = "produce_completed"
    req: int
    error: int


# --------------------------------------------------------------------------------------------
# Follower replication: Fetch (KIP-320 currentLeaderEpoch, KIP-595-style lastFetchedEpoch) and
# OffsetsForLeaderEpoch (KIP-101, KIP-279). Requests are sent events; msg ids are unique per send.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchSent(Event):
    """Follower ``node`` sent Fetch ``msg`` to ``leader`` from ``fetch_offset`` (= its LEO).

    ``last_fetched_epoch`` is its latest cached epoch (diverging-epoch protocol only, else -1);
    ``current_leader_epoch`` is its leader epoch (KIP-320 and later, else -1); ``follower_epoch``
    is the epoch it is following (for discarding stale responses). Only a follower in the
    fetching state sends.
    """

    kind: ClassVar[str] = "fetch_sent"
    msg: int
    leader: int
    fetch_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int
    follower_epoch: int


@dataclass(frozen=True)
class FetchHandled(Event):
    """Leader ``node`` answered Fetch ``msg`` from ``follower``.

    Checks in order: currentLeaderEpoch (≥0) vs local epoch → FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH;
    not leader → NOT_LEADER_OR_FOLLOWER; fetchOffset below the log start → OFFSET_OUT_OF_RANGE
    (KIP-107); diverging-epoch check on lastFetchedEpoch (≥0):
    endOffsetFor undefined → OFFSET_OUT_OF_RANGE, else if endEpoch < lastFetchedEpoch or
    endOffset < fetchOffset → ``diverging_epoch``/``diverging_end_offset`` set, no records, follower
    state untouched; fetchOffset > LEO → OFFSET_OUT_OF_RANGE. Else ``entries`` = log[fetchOffset:LEO],
    ``hw`` = HW *before* this fetch updates the follower's state; then follower LEO := fetchOffset,
    lastCaughtUp per kafka-facts §3.1 and the HW may advance (``leader_hw`` after).
    ``leader_leo`` is the leader's LEO (used with OFFSET_OUT_OF_RANGE).
    """

    kind: ClassVar[str] = "fetch_handled"
    msg: int
    follower: int
    error: int
    entries: tuple[Entry, ...]
    hw: int
    diverging_epoch: int
    diverging_end_offset: int
    leader_leo: int
    leader_hw: int


@dataclass(frozen=True)
class FetchApplied(Event):
    """Follower ``node`` processed the response to its Fetch ``msg``.

    "ignored" if it no longer follows that leader in that epoch or its LEO moved; with a diverging
    epoch it truncates (kafka-facts §3.8) without appending; with records it appends them and sets
    HW = min(leader HW, LEO) and its log start to the leader's when later (within its HW);
    OFFSET_OUT_OF_RANGE ("out_of_range") with leader LEO < own LEO truncates to the leader LEO,
    with own LEO below the leader's log start restarts the log there (truncateFullyAndStartAt:
    ``truncated_to`` and ``hw`` are that log start, KAFKA-9491), else fetches again; other errors
    change nothing. ``truncated_to`` is -1 when it did not truncate. The leader's log start in
    the answer is not an event field: the judge takes the model leader's, which DeleteRecordsHandled
    and RetentionApplied keep equal to the implementation's (docs/protocol.md).
    """

    kind: ClassVar[str] = "fetch_applied"
    msg: int
    outcome: str
    truncated_to: int
    appended: int
    hw: int


@dataclass(frozen=True)
class EpochQuerySent(Event):
    """Follower ``node`` (truncating state) sent OffsetsForLeaderEpoch ``msg`` to ``leader`` for
    ``requested_epoch`` (its latest cached epoch, -1 if none), with ``current_leader_epoch`` (KIP-320
    and later, else -1) while following ``follower_epoch``."""

    kind: ClassVar[str] = "epoch_query_sent"
    msg: int
    leader: int
    requested_epoch: int
    current_leader_epoch: int
    follower_epoch: int


@dataclass(frozen=True)
class EpochQueryHandled(Event):
    """Leader ``node`` answered OffsetsForLeaderEpoch ``msg``: (``epoch``, ``end_offset``) =
    endOffsetFor(requested) (kafka-facts §3.6); KIP-101 answers carry epoch -1 (no epoch in v0)."""

    kind: ClassVar[str] = "epoch_query_handled"
    msg: int
    follower: int
    error: int
    epoch: int
    end_offset: int


@dataclass(frozen=True)
class EpochQueryApplied(Event):
    """Follower ``node`` truncated per the answer to ``msg`` (kafka-facts §3.8) and, when the
    truncation is complete, moved to the fetching state ("truncated" / "retry" / "ignored")."""

    kind: ClassVar[str] = "epoch_query_applied"
    msg: int
    outcome: str
    truncated_to: int
    hw: int


# --------------------------------------------------------------------------------------------
# ISR changes (KIP-497 AlterPartition)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IsrChangeProposed(Event):
    """Leader ``node`` sent AlterPartition ``msg`` proposing ``isr``.

    Shrink: every removed follower is out of sync (not caught up within replica.lag.time.max.ms).
    Expand (one follower): its LEO ≥ leader HW and (KIP-320 and later) ≥ the start offset of the
    leader's epoch. At most one proposal in flight; a pending expansion joins the maximal ISR at
    once; ``hw`` is the leader's HW afterwards.
    """

    kind: ClassVar[str] = "isr_change_proposed"
    msg: int
    isr: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int
    hw: int


@dataclass(frozen=True)
class AlterPartitionApplied(Event):
    """Leader ``node`` received the AlterPartition response for ``msg``: if that proposal is still
    in flight, on NONE it adopts ``isr`` and ``partition_epoch`` (if not older), on
    INELIGIBLE_REPLICA / OPERATION_NOT_ATTEMPTED it returns to the committed ISR, on any other
    error the proposal stays pending until new metadata (Partition.handleAlterPartitionError);
    ``hw`` afterwards."""

    kind: ClassVar[str] = "alter_partition_applied"
    msg: int
    error: int
    isr: tuple[int, ...]
    partition_epoch: int
    hw: int


@dataclass(frozen=True)
class DeleteRecordsHandled(Event):
    """Broker ``node`` answered DeleteRecords for ``offset`` (-1: the HW) (Partition.deleteRecordsOnLeader,
    KIP-107): NOT_LEADER_OR_FOLLOWER (``log_start`` -1) unless it leads; OFFSET_OUT_OF_RANGE for
    an offset below 0 or past the HW (UnifiedLog.maybeIncrementLogStartOffset, KAFKA-5634);
    else NONE, the log start moved to the offset when that is later. ``log_start`` is its log
    start after (the answer's low watermark on the leader)."""

    kind: ClassVar[str] = "delete_records_handled"
    offset: int
    error: int
    log_start: int


@dataclass(frozen=True)
class RetentionApplied(Event):
    """Broker ``node``'s retention moved its log start offset forward to ``log_start``, at most its
    HW (UnifiedLog.deleteOldSegments; KAFKA-5634: never past the HW)."""

    kind: ClassVar[str] = "retention_applied"
    log_start: int


@dataclass(frozen=True)
class FetchParked(Event):
    """Leader ``node`` handled Fetch ``msg`` from ``follower`` and parked it (DelayedFetch;
    ReplicaManager.fetchMessages): replica.fetch.wait.max.ms > 0 and the read found no error, no
    diverging epoch and fewer than replica.fetch.min.bytes records. The follower's fetch state is
    updated as for FetchHandled (``leader_hw`` is the HW after); nothing is sent until
    FetchCompleted."""

    kind: ClassVar[str] = "fetch_parked"
    msg: int
    follower: int
    leader_hw: int


@dataclass(frozen=True)
class FetchCompleted(Event):
    """Leader ``node`` answered the parked Fetch ``msg`` from ``follower`` (DelayedFetch.onComplete):
    when tryComplete found it completable (fenced epoch, leadership lost, enough records, a
    diverging epoch) or at its deadline. The answer is a fresh read as FetchHandled's, without
    updating the follower's state again: ``hw`` = ``leader_hw`` = the HW now."""

    kind: ClassVar[str] = "fetch_completed"
    msg: int
    follower: int
    error: int
    entries: tuple[Entry, ...]
    hw: int
    diverging_epoch: int
    diverging_end_offset: int
    leader_leo: int
    leader_hw: int


# --------------------------------------------------------------------------------------------
# Consumer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerFetchHandled(Event):
    """Broker ``node`` answered a read_uncommitted consumer Fetch from ``fetch_offset``.

    KIP-320 epoch check (if ``current_leader_epoch`` ≥ 0), then not leader → NOT_LEADER_OR_FOLLOWER,
    fetchOffset > LEO → OFFSET_OUT_OF_RANGE, else ``entries`` = log[fetchOffset:HW] (empty at or
    above the HW) and ``hw``.
    """

    kind: ClassVar[str] = "consumer_fetch_handled"
    fetch_offset: int
    current_leader_epoch: int
    error: int
    entries: tuple[Entry, ...]
    hw: int


@dataclass(frozen=True)
class ReplicaFetchSent(Event):
    """The follower-fetching consumer (KIP-392; ``node`` is the broker it sends to) asks for
    ``fetch_offset``, its position, with its cached leader epoch ``current_leader_epoch``: to its
    preferred read replica while one is set and unexpired (``from_preferred``), else to the broker
    its metadata names as leader (AbstractFetch.selectReadReplica)."""

    kind: ClassVar[str] = "replica_fetch_sent"
    msg: int
    fetch_offset: int
    current_leader_epoch: int
    from_preferred: bool


@dataclass(frozen=True)
class ReplicaFetchHandled(Event):
    """Broker ``node``, leader or follower, answered the follower-fetching consumer's Fetch
    ``msg`` (Fetch v11+ with client metadata; model.read_replica.replica_fetch): KIP-320 epoch
    check, then NOT_LEADER_OR_FOLLOWER if the broker does not know the partition; a leader whose
    replica selector names a follower answers no records, its HW and ``preferred``; else
    OFFSET_OUT_OF_RANGE outside [log start, LEO], or ``entries`` = log[fetchOffset:HW] of this
    broker and its ``hw`` (-1 with an error other than OFFSET_OUT_OF_RANGE)."""

    kind: ClassVar[str] = "replica_fetch_handled"
    msg: int
    fetch_offset: int
    current_leader_epoch: int
    error: int
    entries: tuple[Entry, ...]
    hw: int
    preferred: int


@dataclass(frozen=True)
class ReplicaFetchApplied(Event):
    """The follower-fetching consumer handled broker ``node``'s answer to its Fetch ``msg``
    (FetchCollector; model.read_replica.apply_answer): its ``position`` and ``preferred`` read
    replica after it, and ``reset_to``, the earliest offset an OFFSET_OUT_OF_RANGE reset would
    go to (auto.offset.reset=earliest; ListOffsets is not modelled)."""

    kind: ClassVar[str] = "replica_fetch_applied"
    msg: int
    position: int
    preferred: int
    reset_to: int


@dataclass(frozen=True)
class ConsumerFetchWaitHandled(Event):
    """Broker ``node`` handled consumer Fetch ``req`` with fetch.min.bytes ``min_bytes`` (counted in
    records) and fetch.max.wait.ms ``max_wait_ms`` (ReplicaManager.fetchMessages).

    As ConsumerFetchHandled, except that when ``max_wait_ms`` > 0, there is no error and fewer than
    ``min_bytes`` records lie below the HW, the request is ``parked`` (DelayedFetch): no records
    (``entries`` empty, ``hw`` the HW now) until ConsumerFetchCompleted."""

    kind: ClassVar[str] = "consumer_fetch_wait_handled"
    req: int
    fetch_offset: int
    current_leader_epoch: int
    min_bytes: int
    max_wait_ms: int
    parked: bool
    error: int
    entries: tuple[Entry, ...]
    hw: int


@dataclass(frozen=True)
class ConsumerFetchCompleted(Event):
    """Broker ``node`` answered the parked consumer Fetch ``req`` (DelayedFetch.onComplete): a
    fresh read as ConsumerFetchHandled's at completion time (records below the HW *now*; the
    KIP-320 epoch check and leadership first, so a leader change answers FENCED_LEADER_EPOCH or
    NOT_LEADER_OR_FOLLOWER)."""

    kind: ClassVar[str] = "consumer_fetch_completed"
    req: int
    error: int
    entries: tuple[Entry, ...]
    hw: int


# ============================================================================================
# The exactly-once slice (schema version 2): idempotent producer, transactions, LSO,
# read_committed and consumer offsets. Partitions are named "topic-N" (model.txn_config);
# transaction states are Kafka's names ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
# "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"; "" = no metadata). ``req`` is the
# client's request id (unique per send; a retry is a new send with a new req), ``msg`` a
# broker-to-broker message id. Semantics: kafka-facts §1, §2, §4, §7 and docs/transactions.md.
# ============================================================================================


@dataclass(frozen=True)
class CoordinatorMoved(Event):
    """The controller moved the leadership of ``state_partition`` (a ``__transaction_state``
    partition) to ``leader``; ``coordinator_epoch`` is the partition's new leader epoch.

    From here the old coordinator answers NOT_COORDINATOR and drops its in-memory work (pending
    transitions, marker sends in flight); the new one answers COORDINATOR_LOAD_IN_PROGRESS until
    CoordinatorLoaded. The durable transaction log is what survives (KAFKA design: the coordinator
    "finishes what the log says").
    """

    kind: ClassVar[str] = "coordinator_moved"
    state_partition: str
    leader: int
    coordinator_epoch: int


@dataclass(frozen=True)
class CoordinatorLoaded(Event):
    """Broker ``node`` finished loading ``state_partition`` at ``coordinator_epoch``: it now owns the
    transactional ids of that partition with the state their last log record says, and re-sends
    markers (MarkerSent) for every transaction found in PrepareCommit/PrepareAbort
    (TransactionStateManager.loadTransactionsForTxnTopicPartition)."""

    kind: ClassVar[str] = "coordinator_loaded"
    state_partition: str
    coordinator_epoch: int


@dataclass(frozen=True)
class InitProducerIdHandled(Event):
    """Coordinator ``node`` answered InitProducerId ``req`` (kafka-facts §1.3).

    ``transactional`` false: an idempotent producer (null transactional id; ``txn_id`` is ""), which
    gets a fresh producer id with epoch 0 from any broker. Otherwise the rules of §1.3 in order;
    the expected pid/epoch are -1 when not supplied (KIP-360). ``pid``/``epoch`` are the answer (-1
    on error); ``state`` is the transactional id's state after the handler ("" if none). Fencing an
    Ongoing transaction answers CONCURRENT_TRANSACTIONS with ``state`` PrepareAbort and the bumped
    epoch recorded in the coordinator (not returned). A fresh producer id is any id never handed out
    before in this run (the model checks freshness, not the allocator).
    """

    kind: ClassVar[str] = "init_producer_id_handled"
    req: int
    txn_id: str
    transactional: bool
    timeout_ms: int
    expected_pid: int
    expected_epoch: int
    error: int
    pid: int
    epoch: int
    state: str


@dataclass(frozen=True)
class AddPartitionsHandled(Event):
    """Coordinator ``node`` answered AddPartitionsToTxn ``req`` (client versions, kafka-facts §1.4).

    Errors in order: NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS; no metadata or pid mismatch →
    INVALID_PRODUCER_ID_MAPPING; epoch ≠ current → PRODUCER_FENCED; pending transition or
    Prepare* → CONCURRENT_TRANSACTIONS. Else Ongoing with the union of partitions (start time set
    when coming from Empty/Complete*). ``state`` is the state after the handler.
    """

    kind: ClassVar[str] = "add_partitions_handled"
    req: int
    txn_id: str
    pid: int
    epoch: int
    partitions: tuple[str, ...]
    error: int
    state: str


@dataclass(frozen=True)
class AddOffsetsHandled(Event):
    """Coordinator ``node`` answered AddOffsetsToTxn ``req``: AddPartitionsToTxn of the group's
    ``__consumer_offsets`` partition (abs(hashCode(group)) % 50; kafka-facts §1.4, §7)."""

    kind: ClassVar[str] = "add_offsets_handled"
    req: int
    txn_id: str
    pid: int
    epoch: int
    group: str
    error: int
    state: str


@dataclass(frozen=True)
class EndTxnHandled(Event):
    """Coordinator ``node`` answered EndTxn ``req`` (commit or abort; kafka-facts §1.5).

    The TV0 table of §1.5 (idempotent retries answer NONE from Complete*; wrong pid →
    INVALID_PRODUCER_ID_MAPPING; wrong epoch → PRODUCER_FENCED), or with transaction version 2 the
    KIP-890 rules (every EndTxn bumps the epoch; ``result_pid``/``result_epoch`` carry the producer's
    identity for the next transaction, rotated on overflow). A successful Prepare is durable before
    the answer; markers follow as MarkerSent events. ``state`` is the state after the handler;
    ``result_pid``/``result_epoch`` are -1 on error and equal the request's in TV0. ``ctxn`` is the
    harness's number of the client transaction the client meant to end (not a Kafka field): with
    TV0 a late EndTxn can end a later transaction (KAFKA-17754), which the invariants classify.
    """

    kind: ClassVar[str] = "end_txn_handled"
    req: int
    txn_id: str
    pid: int
    epoch: int
    ctxn: int
    commit: bool
    error: int
    state: str
    result_pid: int
    result_epoch: int


@dataclass(frozen=True)
class TxnTimedOut(Event):
    """Coordinator ``node`` aborted ``txn_id`` because it was Ongoing longer than its timeout
    (txnStartTimestamp + txnTimeoutMs < now, strict; kafka-facts §1.6): the epoch is bumped to
    ``epoch`` (fencing the producer; KAFKA-6119) and the state becomes PrepareAbort."""

    kind: ClassVar[str] = "txn_timed_out"
    txn_id: str
    pid: int
    epoch: int
    state: str


@dataclass(frozen=True)
class TxnIdExpired(Event):
    """Coordinator ``node`` expired ``txn_id`` (Empty/Complete*, no pending transition, last update
    ≤ now - transactional.id.expiration.ms; kafka-facts §1.7): a tombstone; the id is unknown after."""

    kind: ClassVar[str] = "txn_id_expired"
    txn_id: str


@dataclass(frozen=True)
class MarkerSent(Event):
    """Coordinator ``node`` sent WriteTxnMarkers ``msg`` for ``txn_id`` to ``leader``, the leader it
    believes ``partition`` has: (pid, epoch, commit, coordinator_epoch) of the transaction being
    completed. Only for a transaction in PrepareCommit/PrepareAbort whose ``partition`` has not
    acknowledged yet (one message per partition; Kafka batches them per broker)."""

    kind: ClassVar[str] = "marker_sent"
    msg: int
    txn_id: str
    partition: str
    leader: int
    pid: int
    epoch: int
    commit: bool
    coordinator_epoch: int


@dataclass(frozen=True)
class MarkerHandled(Event):
    """Partition leader ``node`` handled marker ``msg`` on ``partition`` (kafka-facts §1.8, §2.4, §4).

    Not leader → NOT_LEADER_OR_FOLLOWER; marker epoch < stored producer epoch →
    INVALID_PRODUCER_EPOCH; coordinator epoch < stored → TRANSACTION_COORDINATOR_FENCED. Else a
    control record is appended at ``offset`` (-1 on error): the producer's open transaction on the
    partition ends (an aborted non-empty one enters the aborted index), the stored epoch becomes the
    marker's, and on a ``__consumer_offsets`` partition the producer's pending offsets become
    committed (COMMIT) or are dropped (ABORT).
    """

    kind: ClassVar[str] = "marker_handled"
    msg: int
    partition: str
    pid: int
    epoch: int
    commit: bool
    coordinator_epoch: int
    error: int
    offset: int


@dataclass(frozen=True)
class MarkerResponseHandled(Event):
    """Coordinator ``node`` processed the answer to its marker ``msg``: NONE removes the partition
    from the transaction's pending set, and when it empties the coordinator writes CompleteCommit/
    CompleteAbort (``state`` after); retriable errors leave it pending for a re-send;
    INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED give up on the partition (kafka-facts
    §1.8). A stale answer (coordinator moved, transaction no longer in Prepare*) changes nothing."""

    kind: ClassVar[str] = "marker_response_handled"
    msg: int
    error: int
    state: str


@dataclass(frozen=True)
class TxnProduceHandled(Event):
    """Partition leader ``node`` handled Produce ``req``: one batch of records ``rids`` (sequences
    ``base_seq``.. wrapping at 2^31-1) from producer (``pid``, ``epoch``) with ``txn_id`` ("" if not
    transactional). ``ctxn`` is the harness's number of the client transaction the batch belongs to
    (-1 outside transactions): not a Kafka field, carried for the atomicity invariants only.

    ``outcome`` is one of: "appended" (at ``base_offset``), "duplicate" (the same epoch and exact
    sequence range is one of the producer's last 5 batches: NONE with the original ``base_offset``,
    nothing appended), "rejected" (``error``), or "verifying" (KIP-890 part 1: a transactional batch
    with no ongoing transaction for the producer; the leader asked the coordinator with message
    ``verify_msg`` and decides in VerifyApplied). Validation order: kafka-facts §2.2.
    """

    kind: ClassVar[str] = "txn_produce_handled"
    req: int
    partition: str
    txn_id: str
    pid: int
    epoch: int
    base_seq: int
    rids: tuple[int, ...]
    transactional: bool
    ctxn: int
    outcome: str
    error: int
    base_offset: int
    verify_msg: int


@dataclass(frozen=True)
class VerifyHandled(Event):
    """Coordinator ``node`` answered the verification ``msg`` (AddPartitionsToTxn v4 verifyOnly,
    KIP-890 part 1; kafka-facts §1.9): no metadata / pid mismatch → INVALID_PRODUCER_ID_MAPPING;
    epoch mismatch → PRODUCER_FENCED; Prepare* → CONCURRENT_TRANSACTIONS; partition in the Ongoing
    transaction → NONE, else TRANSACTION_ABORTABLE."""

    kind: ClassVar[str] = "verify_handled"
    msg: int
    txn_id: str
    pid: int
    epoch: int
    partition: str
    error: int


@dataclass(frozen=True)
class VerifyApplied(Event):
    """Partition leader ``node`` got the answer to verification ``msg`` for Produce ``req``.

    NONE and either the producer has an open transaction by now or the verification entry is still
    current (no transactional batch or marker of the producer came in between) → the batch is
    validated as in TxnProduceHandled ("appended", "duplicate" or "rejected"); no open transaction
    and a stale entry → "rejected" INVALID_TXN_STATE (an exact duplicate stays "duplicate"; Kafka's
    UnifiedLog.analyzeAndValidateProducerState); an error maps to the produce error of kafka-facts
    §1.9 (PRODUCER_FENCED → INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE → INVALID_TXN_STATE,
    coordinator errors and CONCURRENT_TRANSACTIONS → NOT_ENOUGH_REPLICAS).
    """

    kind: ClassVar[str] = "verify_applied"
    msg: int
    req: int
    outcome: str
    error: int
    base_offset: int


@dataclass(frozen=True)
class HwAdvanced(Event):
    """Partition leader ``node`` advanced ``partition``'s high watermark to ``hw`` (≤ LEO): the
    replication slice's business, abstracted; completed transactions whose marker is now below the
    HW stop holding the LSO back (kafka-facts §2.4)."""

    kind: ClassVar[str] = "hw_advanced"
    partition: str
    hw: int


@dataclass(frozen=True)
class TxnConsumerFetchHandled(Event):
    """Partition leader ``node`` answered consumer Fetch ``req`` on ``partition`` (kafka-facts §4).

    ``records`` = the log from ``fetch_offset`` up to the HW (read_uncommitted) or the LSO
    (read_committed), ``hw``/``lso`` the partition's; for read_committed ``aborted`` lists the aborted
    transactions overlapping the returned range (lastOffset ≥ fetch_offset and firstOffset < upper
    bound). fetch_offset > LEO → OFFSET_OUT_OF_RANGE.
    """

    kind: ClassVar[str] = "txn_consumer_fetch_handled"
    req: int
    partition: str
    fetch_offset: int
    read_committed: bool
    error: int
    records: tuple[Record, ...]
    hw: int
    lso: int
    aborted: tuple[AbortedTxn, ...]


@dataclass(frozen=True)
class TxnFetchWaitHandled(Event):
    """Partition leader ``node`` handled consumer Fetch ``req`` on ``partition`` with
    fetch.min.bytes ``min_bytes`` (counted in records) and fetch.max.wait.ms ``max_wait_ms``
    (ReplicaManager.fetchMessages; a configuration with ``fetch_max_wait_ms`` > 0).

    As TxnConsumerFetchHandled, except that when ``max_wait_ms`` > 0, there is no error and fewer
    than ``min_bytes`` records lie below the isolation bound (the LSO for read_committed, the HW
    otherwise) the request is ``parked`` (DelayedFetch): no records and no aborted list (``hw`` and
    ``lso`` the partition's now) until TxnFetchCompleted."""

    kind: ClassVar[str] = "txn_fetch_wait_handled"
    req: int
    partition: str
    fetch_offset: int
    read_committed: bool
    min_bytes: int
    max_wait_ms: int
    parked: bool
    error: int
    records: tuple[Record, ...]
    hw: int
    lso: int
    aborted: tuple[AbortedTxn, ...]


@dataclass(frozen=True)
class TxnFetchCompleted(Event):
    """Partition leader ``node`` answered the parked consumer Fetch ``req`` (DelayedFetch.onComplete)
    on ``partition``: when an HW advance (moving the LSO for read_committed) brought minBytes below
    its bound, or at its deadline with what is there. The answer is a fresh read at completion
    time at the request's own isolation level, fields as TxnConsumerFetchHandled's."""

    kind: ClassVar[str] = "txn_fetch_completed"
    req: int
    partition: str
    fetch_offset: int
    read_committed: bool
    error: int
    records: tuple[Record, ...]
    hw: int
    lso: int
    aborted: tuple[AbortedTxn, ...]


@dataclass(frozen=True)
class ConsumerPolled(Event):
    """Consumer client ``node`` turned the response to its fetch ``req`` into what the application
    sees: ``rids`` (data records only, in offset order) and the ``next_offset`` to fetch. read_committed
    skips the batches of aborted transactions using the aborted list (CompletedFetch's rule,
    kafka-facts §4); control records are never returned."""

    kind: ClassVar[str] = "consumer_polled"
    req: int
    partition: str
    read_committed: bool
    rids: tuple[int, ...]
    next_offset: int


@dataclass(frozen=True)
class TxnOffsetCommitHandled(Event):
    """Group coordinator ``node`` (leader of the group's ``__consumer_offsets`` partition) handled
    TxnOffsetCommit ``req`` (kafka-facts §1.10): producer-epoch check only (origin COORDINATOR:
    epoch < stored → INVALID_PRODUCER_EPOCH); the offsets are written as a transactional batch at
    ``base_offset`` and stay pending until the COMMIT marker (dropped on ABORT)."""

    kind: ClassVar[str] = "txn_offset_commit_handled"
    req: int
    group: str
    txn_id: str
    pid: int
    epoch: int
    ctxn: int
    offsets: tuple[TopicOffset, ...]
    error: int
    base_offset: int


@dataclass(frozen=True)
class OffsetCommitHandled(Event):
    """Group coordinator ``node`` handled a plain OffsetCommit ``req``: the offsets are committed at
    once (a non-transactional batch at ``base_offset``)."""

    kind: ClassVar[str] = "offset_commit_handled"
    req: int
    group: str
    offsets: tuple[TopicOffset, ...]
    error: int
    base_offset: int


@dataclass(frozen=True)
class OffsetFetchHandled(Event):
    """Group coordinator ``node`` answered OffsetFetch ``req`` for all of ``group``'s partitions:
    ``error`` is the request's error (NOT_COORDINATOR, ...); ``offsets`` the committed offsets
    (pending transactional offsets are invisible); with ``require_stable``, each partition with a
    pending transactional offset is answered UNSTABLE_OFFSET_COMMIT on its own and listed in
    ``unstable`` instead of ``offsets``, the other partitions keep their committed offsets (KIP-447;
    OffsetMetadataManager.fetchAllOffsets, GroupMetadataManager.getOffsets). ``unstable`` is
    absent from files written before it existed (read as empty)."""

    kind: ClassVar[str] = "offset_fetch_handled"
    req: int
    group: str
    require_stable: bool
    error: int
    offsets: tuple[TopicOffset, ...]
    unstable: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProducerExpired(Event):
    """Partition leader ``node`` dropped producer ``pid``'s state on ``partition``: no ongoing
    transaction and now - lastTimestamp ≥ producer.id.expiration.ms (KIP-854; kafka-facts §2.3)."""

    kind: ClassVar[str] = "producer_expired"
    partition: str
    pid: int


@dataclass(frozen=True)
class Quiesced(Event):
    """The world (``node`` = CONTROLLER) delivered every message in flight and fired every timer
    until nothing was left to do, with every coordinator loaded: from here no transaction may stay
    open (Ongoing or Prepare* at its coordinator, or open on a partition). ``quiet`` is false when
    the bounded quiescence ran out of time first; then nothing is concluded."""

    kind: ClassVar[str] = "quiesced"
    quiet: bool


# --------------------------------------------------------------------------------------------
# The fetch-session slice (KIP-227; impl/fetch/). ``node`` is the broker (0) or a client
# (model.fetch_config.client_node). A request's partitions are (name, fetch offset) pairs.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchAssigned(Event):
    """Client ``node``'s assignment became ``partitions`` (in order); a newly assigned partition
    starts at the broker's log start (auto.offset.reset=earliest)."""

    kind: ClassVar[str] = "fetch_assigned"
    partitions: tuple[str, ...]


@dataclass(frozen=True)
class SessionClosing(Event):
    """Client ``node`` closed: it sent request ``msg`` with FetchMetadata (``session_id``, -1) and no
    partitions (notifyClose, then the close request at once), and starts over as a new consumer
    instance at its positions."""

    kind: ClassVar[str] = "session_closing"
    msg: int
    session_id: int


@dataclass(frozen=True)
class SessionFetchSent(Event):
    """Client ``node`` sent fetch request ``msg`` with FetchMetadata (``session_id``, ``epoch``), the
    partitions it carries (``partitions``: toSend, with fetch offsets) and ``forgotten`` ones."""

    kind: ClassVar[str] = "session_fetch_sent"
    msg: int
    session_id: int
    epoch: int
    fetches: tuple[TopicOffset, ...]
    forgotten: tuple[str, ...]


@dataclass(frozen=True)
class SessionFetchHandled(Event):
    """Broker ``node`` answered request ``msg`` of ``client``: ``outcome`` (model.fetch_session
    OUTCOMES), top-level ``error``, the answer's ``session_id`` and the session ``evicted`` for room
    (0: none). The answer's partitions in order: ``partitions`` with their ``errors``, ``hws``,
    ``lsos``, ``log_starts``, how many ``records`` each returned (``counts``, the records
    concatenated in ``records``) and how many aborted transactions each lists (``aborted_counts``,
    concatenated in ``aborted``)."""

    kind: ClassVar[str] = "session_fetch_handled"
    msg: int
    client: int
    outcome: str
    error: int
    session_id: int
    evicted: int
    partitions: tuple[str, ...]
    errors: tuple[int, ...]
    hws: tuple[int, ...]
    lsos: tuple[int, ...]
    log_starts: tuple[int, ...]
    counts: tuple[int, ...]
    records: tuple[Record, ...]
    aborted_counts: tuple[int, ...]
    aborted: tuple[AbortedTxn, ...]


@dataclass(frozen=True)
class SessionFetchApplied(Event):
    """Client ``node`` handled the answer to (or the timeout of) request ``msg``: ``outcome``
    (model.fetch_state APPLIED_OUTCOMES), its next FetchMetadata (``session_id``, ``epoch``), the
    positions of its assigned partitions after it and the record ids the application got."""

    kind: ClassVar[str] = "session_fetch_applied"
    msg: int
    outcome: str
    session_id: int
    epoch: int
    positions: tuple[TopicOffset, ...]
    rids: tuple[int, ...]


@dataclass(frozen=True)
class RecordsAppended(Event):
    """Broker ``node`` appended ``rids`` to ``partition``: a plain batch (``txn`` false, ``pid`` -1) or
    a whole transaction of producer ``pid`` and its COMMIT (``commit``) or ABORT marker."""

    kind: ClassVar[str] = "records_appended"
    partition: str
    rids: tuple[int, ...]
    pid: int
    txn: bool
    commit: bool


@dataclass(frozen=True)
class LogStartAdvanced(Event):
    """Broker ``node`` moved ``partition``'s log start offset to ``log_start`` (DeleteRecords, KIP-107)."""

    kind: ClassVar[str] = "log_start_advanced"
    partition: str
    log_start: int


@dataclass(frozen=True)
class LeadershipChanged(Event):
    """Broker ``node`` stopped (``leads`` false) or started leading ``partition``."""

    kind: ClassVar[str] = "leadership_changed"
    partition: str
    leads: bool


@dataclass(frozen=True)
class SessionCacheLost(Event):
    """Broker ``node`` restarted: its FetchSessionCache (memory only) is empty; its logs survive and
    every message in flight to or from it is lost."""

    kind: ClassVar[str] = "session_cache_lost"


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        BrokerFenced,
        BrokerUnfenced,
        LeaderMoved,
        AlterPartitionHandled,
        ClockAdvanced,
        BrokerCrashed,
        BrokerRestarted,
        Checkpointed,
        MetadataApplied,
        ProduceHandled,
        ProduceCompleted,
        FetchSent,
        FetchHandled,
        FetchApplied,
        FetchParked,
        FetchCompleted,
        EpochQuerySent,
        EpochQueryHandled,
        EpochQueryApplied,
        IsrChangeProposed,
        AlterPartitionApplied,
        ConsumerFetchHandled,
        ConsumerFetchWaitHandled,
        ConsumerFetchCompleted,
        ReplicaFetchSent,
        ReplicaFetchHandled,
        ReplicaFetchApplied,
        CoordinatorMoved,
        CoordinatorLoaded,
        InitProducerIdHandled,
        AddPartitionsHandled,
        AddOffsetsHandled,
        EndTxnHandled,
        TxnTimedOut,
        TxnIdExpired,
        MarkerSent,
        MarkerHandled,
        MarkerResponseHandled,
        TxnProduceHandled,
        VerifyHandled,
        VerifyApplied,
        HwAdvanced,
        TxnConsumerFetchHandled,
        TxnFetchWaitHandled,
        TxnFetchCompleted,
        ConsumerPolled,
        TxnOffsetCommitHandled,
        OffsetCommitHandled,
        OffsetFetchHandled,
        ProducerExpired,
        Quiesced,
        FetchAssigned,
        SessionClosing,
        SessionFetchSent,
        SessionFetchHandled,
        SessionFetchApplied,
        RecordsAppended,
        LogStartAdvanced,
        LeadershipChanged,
        SessionCacheLost,
        DeleteRecordsHandled,
        RetentionApplied,
    )
}


_STRUCT_TUPLES: dict[str, Callable[[Any], Any]] = {
    "tuple[Record, ...]": Record.from_list,
    "tuple[AbortedTxn, ...]": AbortedTxn.from_list,
    "tuple[TopicOffset, ...]": TopicOffset.from_list,
}


class EventDecodeError(ValueError):
    """A JSON object is not a valid event of this schema version."""


def event_from_json(obj: Any) -> Event:
    """Decode one event; raise EventDecodeError naming the problem (unknown kind, missing or
    ill-typed field)."""
    if not isinstance(obj, dict):
        raise EventDecodeError(f"an event is a JSON object, got {type(obj).__name__}")
    kind = obj.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise EventDecodeError(f"unknown event kind {kind!r}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in obj:
            if f.default is not dataclasses.MISSING:
                continue  # a field added after files were written: its default
            raise EventDecodeError(f"{kind}: missing field {f.name!r}")
        kwargs[f.name] = _decode_field(str(kind), f.name, str(f.type), obj[f.name])
    extra = set(obj) - {f.name for f in dataclasses.fields(cls)} - {"kind"}
    if extra:
        raise EventDecodeError(f"{kind}: unknown field(s) {sorted(extra)}")
    return cls(**kwargs)


def _decode_field(kind: str, name: str, typ: str, value: Any) -> Any:
    try:
        if typ == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError
            return value
        if typ == "bool":
            if not isinstance(value, bool):
                raise TypeError
            return value
        if typ == "str":
            if not isinstance(value, str):
                raise TypeError
            return value
        if typ == "tuple[int, ...]":
            if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
                raise TypeError
            return tuple(value)
        if typ == "tuple[Entry, ...]":
            if not isinstance(value, list):
                raise TypeError
            return tuple(Entry.from_list(v) for v in value)
        if typ == "tuple[str, ...]":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise TypeError
            return tuple(value)
        if typ in _STRUCT_TUPLES:
            if not isinstance(value, list):
                raise TypeError
            return tuple(_STRUCT_TUPLES[typ](v) for v in value)
    except (TypeError, ValueError):
        raise EventDecodeError(f"{kind}: field {name!r} should be {typ}, got {value!r}") from None
    raise EventDecodeError(f"{kind}: field {name!r} has unsupported type {typ}")


fast_frozen_inits(vars(), __name__)  # each frozen dataclass here gets a cheaper, identical __init__ (model.fast_init)
