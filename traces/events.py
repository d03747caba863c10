"""The event vocabulary: what an implementation reports, what the model judges, what trace files hold.

One event is one protocol handler run on one node (a broker, the controller, or the simulated
world), with the handler's inputs *and* the outcome the implementation claims. The model recomputes
the outcome from the inputs and its own state; a different outcome is non-conformance. The same
frozen dataclasses flow through the lockstep judge, counterexample files, replay and (later) corpora.

Conventions (Kafka's): offsets are int64, ``-1`` means "none/unknown" for leaders, epochs and
offsets; error codes are Kafka's numeric ones (``ERRORS`` below). Handler semantics are documented
on each class and, in prose, in docs/protocol.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

SCHEMA_VERSION = 1
"""Version of the event schema written into every trace/counterexample header."""

NONE = 0
OFFSET_OUT_OF_RANGE = 1
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
NOT_ENOUGH_REPLICAS = 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
INVALID_REQUIRED_ACKS = 21
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
INVALID_UPDATE_VERSION = 108
INELIGIBLE_REPLICA = 107

ERRORS: dict[int, str] = {
    NONE: "NONE",
    OFFSET_OUT_OF_RANGE: "OFFSET_OUT_OF_RANGE",
    NOT_LEADER_OR_FOLLOWER: "NOT_LEADER_OR_FOLLOWER",
    REQUEST_TIMED_OUT: "REQUEST_TIMED_OUT",
    NOT_ENOUGH_REPLICAS: "NOT_ENOUGH_REPLICAS",
    NOT_ENOUGH_REPLICAS_AFTER_APPEND: "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    INVALID_REQUIRED_ACKS: "INVALID_REQUIRED_ACKS",
    FENCED_LEADER_EPOCH: "FENCED_LEADER_EPOCH",
    UNKNOWN_LEADER_EPOCH: "UNKNOWN_LEADER_EPOCH",
    INELIGIBLE_REPLICA: "INELIGIBLE_REPLICA",
    INVALID_UPDATE_VERSION: "INVALID_UPDATE_VERSION",
}

NO_LEADER = -1
CONTROLLER = -1
"""``node`` of events run by the controller."""


@dataclass(frozen=True, order=True)
class Entry:
    """One record in a replica's log: its offset, the leader epoch that wrote it, and its record id.

    Record ids are unique per produce *request* chosen by the client; a duplicated request appends
    the same id twice (no idempotence in the replication slice).
    """

    offset: int
    epoch: int
    rid: int

    def to_list(self) -> list[int]:
        return [self.offset, self.epoch, self.rid]

    @staticmethod
    def from_list(value: Any) -> Entry:
        if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, int) for v in value)):
            raise ValueError(f"an entry is [offset, epoch, rid] of integers, got {value!r}")
        return Entry(value[0], value[1], value[2])


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
    if isinstance(value, Entry):
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
    not leader → NOT_LEADER_OR_FOLLOWER; diverging-epoch check on lastFetchedEpoch (≥0):
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
    HW = min(leader HW, LEO); OFFSET_OUT_OF_RANGE with leader LEO < own LEO truncates to the leader
    LEO; other errors change nothing. ``truncated_to`` is -1 when it did not truncate.
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
    """Leader ``node`` received the AlterPartition response for ``msg``: on NONE it adopts ``isr``
    and ``partition_epoch`` (if newer), on error it drops the proposal; ``hw`` afterwards."""

    kind: ClassVar[str] = "alter_partition_applied"
    msg: int
    error: int
    isr: tuple[int, ...]
    partition_epoch: int
    hw: int


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
        EpochQuerySent,
        EpochQueryHandled,
        EpochQueryApplied,
        IsrChangeProposed,
        AlterPartitionApplied,
        ConsumerFetchHandled,
    )
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
    except (TypeError, ValueError):
        raise EventDecodeError(f"{kind}: field {name!r} should be {typ}, got {value!r}") from None
    raise EventDecodeError(f"{kind}: field {name!r} has unsupported type {typ}")
