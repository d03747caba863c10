"""The state of one replicated partition as immutable, hashable values.

Everything the protocol keeps is here: each replica's log, HW, epoch cache, its own view of the
partition (leader, epochs, ISR), the leader's view of its followers, the purgatory (delayed
produces and delayed fetches, one structure as in Kafka's DelayedOperationPurgatory), the
durable state a crash leaves behind, the controller's partition record, and ghost variables that
only the invariants read (what leaders wrote, what was acknowledged, what consumers read).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.model.config import ReplicationConfig
from kconform.model.epochs import EpochCache
from kconform.model.evolve import evolve
from kconform.model.not_enabled import NotEnabled
from kconform.model.reader import Reader, ReaderGhost
from kconform.model.records import Entry

FETCHING = "fetching"
TRUNCATING = "truncating"
IDLE = "idle"
"""A replica's fetcher state: following and fetching, following but truncating first (KIP-101..320
OffsetsForLeaderEpoch round trip), or not following anyone (leader, leaderless, not registered)."""


NO_BROKER_EPOCH = -1
"""The broker epoch an AlterPartition carries for an ISR member the leader has not heard from since
it became leader (Partition.addBrokerEpochToIsr); the controller skips the KIP-903 check for it
(ReplicationControlManager: ``brokerEpoch != -1 && registration.epoch() != brokerEpoch``)."""


@dataclass(frozen=True)
class RemoteReplica:
    """The leader's view of one follower (Kafka's ReplicaState): unknown LEO is -1, never caught up
    is None."""

    leo: int = -1
    last_caught_up_ms: int | None = None
    last_fetch_leader_leo: int = -1
    last_fetch_ms: int = 0
    left_leo_ms: int | None = field(default=None, compare=False)
    """The last time this follower's LEO stopped being the leader's (the leader appended past it, or
    a fetch reported a lower one): ReplicaState.isCaughtUp's first clause held until then. Kept
    only where ISR expiration is judged (``State.tracks_isr_expiration``); judge bookkeeping, not part
    of the state's identity (equality, hashing), like the two fields below."""
    broker_epoch: int = NO_BROKER_EPOCH
    """The follower's broker epoch its last Fetch carried (KIP-903, Fetch v15 ReplicaEpoch);
    NO_BROKER_EPOCH before this leader heard from it (ReplicaState.brokerEpoch is None), and
    always unless the config's ``elr`` (the Kafka 4.x rung, which has KIP-903)."""


NOT_UNFENCED = 1 << 62
"""``Replica.unfenced_at`` of a broker the controller has not unfenced since it (re)started: no
partition record ever published follows its unfencing."""


NO_REQUEST = -1
"""``FetcherClock.latest`` before a fetcher's first request."""


@dataclass(frozen=True)
class FetcherClock:
    """One follower's fetch obligation (model.fetch_pacing): the time by which its next request must
    be sent (None: none yet), the id of its latest request, and whether an answer to it was applied."""

    due_ms: int | None = None
    latest: int = NO_REQUEST
    answered: bool = False
    not_before_ms: int | None = None
    """After an answer with an error: no request before this time unless the fetcher starts again
    (FollowerBacksOff); None: no lower bound."""


@dataclass(frozen=True)
class DelayedProduce:
    """An acks=-1 produce waiting in the leader's purgatory for the HW to pass ``offset``."""

    req: int
    rid: int
    offset: int
    deadline_ms: int


CONSUMER_REPLICA = -1
"""``DelayedFetch.replica`` of a consumer fetch (Kafka's FetchParams.replicaId = -1)."""


@dataclass(frozen=True)
class DelayedFetch:
    """A Fetch parked in the leader's purgatory (DelayedFetch.scala; ReplicaManager.fetchMessages).

    ``replica`` is the fetching follower's broker id, or CONSUMER_REPLICA for a read_uncommitted
    consumer. Bytes are counted in records (the model's records carry no payload: one record is
    one byte of ``min_bytes``). ``start_offset`` is where the byte count starts: the fetch offset,
    or the isolation bound when the fetch asked above it (LocalLog.read answers an offset above
    its bound with the bound's offset metadata, which DelayedFetch then counts from).
    """

    req: int
    replica: int
    fetch_offset: int
    start_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int
    min_bytes: int
    deadline_ms: int

    @property
    def from_follower(self) -> bool:
        return self.replica != CONSUMER_REPLICA


Delayed = DelayedProduce | DelayedFetch
"""One parked operation of a broker's purgatory (DelayedOperation)."""


@dataclass(frozen=True)
class PendingIsr:
    """An AlterPartition in flight from this leader (KIP-497)."""

    msg: int
    isr: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int
    broker_epochs: tuple[int, ...] = ()
    """KIP-903 (AlterPartition v3 NewIsrWithEpochs): each proposed member's broker epoch as the
    leader last saw it, aligned with ``isr``; empty unless the config's ``elr``."""


@dataclass(frozen=True)
class Replica:
    """One broker's replica of the partition."""

    log: tuple[Entry, ...] = ()
    hw: int = 0
    epoch_cache: EpochCache = ()
    alive: bool = True
    registered: bool = False
    leader: int = -1
    leader_epoch: int = -1
    partition_epoch: int = -1
    isr: tuple[int, ...] = ()
    fetch_state: str = IDLE
    remotes: tuple[RemoteReplica, ...] = ()
    pending_isr: PendingIsr | None = None
    purgatory: tuple[Delayed, ...] = ()
    due: tuple[int, ...] = ()
    """Requests (``req``) of parked operations that a completion trigger found completable
    (DelayedOperationPurgatory.checkAndComplete): each must complete before time moves on."""
    durable_leo: int = 0
    hw_checkpoint: int = 0
    broker_epoch: int = 0
    """This broker's incarnation: +1 at every restart when the config's ``elr`` (a registration
    after a crash gets a new broker epoch, KIP-631; KIP-903 fences the old one's fetches)."""
    crashed_ms: int | None = field(default=None, compare=False)
    """When this broker crashed, while it is down (None: running, or not tracked): the start of the
    controller's session bound (model.fencing). Kept only where fencing is judged
    (``State.tracks_fencing``); not part of the state's identity."""
    isr_since_ms: int = field(default=0, compare=False)
    """When this broker last became leader, applied a partition record, or saw its in-flight
    AlterPartition end: the start of the window in which its isr-expiration task must act
    (model.isr_expiration). Kept only where ISR expiration is judged; not part of the state's
    identity."""
    metadata_seen: int = field(default=-1, compare=False)
    """The latest partition epoch this broker received from the controller, applied or ignored
    (model.isr_expansion: its metadata cache is at least that new). Kept only where ISR expansion
    is judged (``State.tracks_isr_expansion``); not part of the state's identity."""
    unfenced_at: int = field(default=NOT_UNFENCED, compare=False)
    """The first partition epoch published after this broker's latest unfencing (model.isr_expansion:
    a leader that received it knows the broker unfenced); NOT_UNFENCED until the controller unfences
    it and again after a crash. Kept only where ISR expansion is judged; not part of the state's
    identity."""
    log_start: int = 0
    """The first offset the replica still serves (model.log_start): ``log`` holds the placeholder
    ``log_start.deleted(o)`` at every offset below it (DeleteRecords, retention, or a follower that
    started at its leader's log start)."""

    @property
    def produces(self) -> tuple[DelayedProduce, ...]:
        """The delayed produces of the purgatory, in creation order."""
        return tuple(d for d in self.purgatory if isinstance(d, DelayedProduce))

    @property
    def fetches(self) -> tuple[DelayedFetch, ...]:
        """The delayed fetches of the purgatory, in creation order."""
        return tuple(d for d in self.purgatory if isinstance(d, DelayedFetch))

    @property
    def leo(self) -> int:
        return len(self.log)


@dataclass(frozen=True)
class PartitionRecord:
    """The controller's record of the partition (KRaft PartitionRecord / ZK leader-and-isr znode)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int


@dataclass(frozen=True)
class Acked:
    """A record the broker acknowledged: ``guaranteed`` when acks=-1 answered NONE.

    ``epoch`` is the epoch that wrote the record; ``leader_epoch`` the acknowledging leader's
    epoch, which can be later (an acks=all write completes after a re-election); -1: unknown.
    """

    rid: int
    offset: int
    epoch: int
    acks: int
    guaranteed: bool
    leader_epoch: int = -1


@dataclass(frozen=True)
class Ghost:
    """Variables only invariants read; no protocol decision depends on them."""

    written: frozenset[Entry] = frozenset()
    """Every entry any leader ever appended (epoch, offset) → rid."""
    acked: tuple[Acked, ...] = ()
    consumed: tuple[tuple[Entry, int], ...] = ()
    """Records a consumer received, with the serving leader's HW at that moment."""
    unclean_epochs: tuple[int, ...] = ()
    """Leader epochs that began with an unclean election."""
    crash_lost_data: bool = False
    """A crash discarded unflushed entries (flush_interval_ms > 0)."""
    lossy_crashes: frozenset[int] = frozenset()
    """Brokers whose crash discarded unflushed entries (read by ElrDurability: KIP-966 promises
    acknowledged records survive fewer than min.insync.replicas such unclean shutdowns)."""
    overdue: tuple[str, ...] = ()
    """Parked operations a trigger made completable that were still parked when time moved on
    (read by DelayedTriggersHonoured)."""
    reader: ReaderGhost = field(default_factory=ReaderGhost)
    """The follower-fetching consumer's deliveries and resets (KIP-392; model.read_replica)."""
    hasty_fetches: tuple[str, ...] = field(default=(), compare=False)
    """Requests a follower sent sooner than replica.fetch.backoff.ms after an answer with an error
    (read by FollowerBacksOff; model.fetch_pacing). Not part of the state's identity."""
    stalled_fetchers: tuple[str, ...] = field(default=(), compare=False)
    """Followers whose fetcher let a request fall overdue (read by FollowerKeepsFetching;
    model.fetch_pacing). Not part of the state's identity, like ``late_shrinks``."""
    late_fences: tuple[str, ...] = field(default=(), compare=False)
    """Crashed brokers the controller left unfenced past the session bound (read by
    CrashedBrokerFenced; model.fencing). Not part of the state's identity, like ``late_shrinks``."""
    owed_expansions: tuple[tuple[int, int, int], ...] = field(default=(), compare=False)
    """(leader, follower, leader epoch) for each Fetch at this instant after which the leader owes
    an AlterPartition adding the follower (model.isr_expansion); cleared when time moves on. Not
    part of the state's identity, like ``late_shrinks``."""
    late_expansions: tuple[str, ...] = field(default=(), compare=False)
    """Expansions still owed when time moved on (read by IsrExpansionProposed; model.isr_expansion).
    Not part of the state's identity, like ``late_shrinks``."""
    late_shrinks: tuple[str, ...] = field(default=(), compare=False)
    """ISR members a running leader left in its ISR longer than its isr-expiration task allows
    (read by IsrShrinkBounded; model.isr_expiration). Not part of the state's identity: the
    lockstep judge's states equal the model searches' along one path."""
    deleted_to: int = 0
    """The furthest log start DeleteRecords or retention ever set on a replica: records below it
    may be gone from any log without a loss (NoCommittedDataLoss, ConsumedRecordsStay)."""


@dataclass(frozen=True)
class State:
    """The whole partition: replicas by broker id, the controller, time and the ghost."""

    replicas: tuple[Replica, ...]
    controller: PartitionRecord
    fenced: frozenset[int]
    published: tuple[PartitionRecord, ...]
    """Every partition record the controller ever published, by partition epoch."""
    now_ms: int = 0
    ghost: Ghost = field(default_factory=Ghost)
    elr: tuple[int, ...] = ()
    """The controller's Eligible Leader Replicas (KIP-966; PartitionRecord.EligibleLeaderReplicas):
    replicas out of the ISR that hold every committed record; empty unless the config's ``elr``."""
    last_known_elr: tuple[int, ...] = ()
    """PartitionRecord.LastKnownElr as Kafka 4.x fills it (useLastKnownLeaderInBalancedRecovery):
    the last leader, recorded when the ISR first becomes empty; model.elr."""
    unclean_shutdowns: frozenset[int] = frozenset()
    """Brokers that crashed since they last registered: their next registration is an unclean
    shutdown (KAFKA-15586: a broker not registering with its previous broker epoch); ELR only."""
    reader: Reader = field(default_factory=Reader)
    """The follower-fetching consumer (KIP-392; model.read_replica): unused unless the config's
    ``follower_fetching``."""
    tracks_purgatory: bool = field(default=False, compare=False)
    """Whether completion obligations and deadlines are judged (``Replica.due``, ``Ghost.overdue``;
    model.purgatory; PurgatoryDeadlines, DelayedTriggersHonoured): on for the lockstep judge of a
    configuration with delayed fetches, which sees a ClockAdvanced event at every time a timer
    fires; off for the model searches, whose atomic actions jump time and complete parked
    operations on their own terms. Not part of the state's identity (equality, hashing)."""
    tracks_isr_expiration: bool = field(default=False, compare=False)
    """Whether the isr-expiration task's bound is judged (model.isr_expiration, IsrShrinkBounded):
    on for the lockstep judge, which sees a ClockAdvanced event at every time a timer fires; off
    for the model searches, whose clock jumps and ISR shrinks are separate atomic actions. Not part
    of the state's identity."""

    tracks_isr_expansion: bool = field(default=False, compare=False)
    """Whether the leader's prompt ISR expansion is judged (model.isr_expansion, IsrExpansionProposed):
    on for the lockstep judge, which sees every Fetch, every partition record a broker receives and
    a ClockAdvanced event whenever time moves; off for the model searches, whose proposals are
    atomic actions of their own choosing. Not part of the state's identity."""

    tracks_fencing: bool = field(default=False, compare=False)
    """Whether the controller's session bound is judged (model.fencing, CrashedBrokerFenced): on for
    the lockstep judge, which sees every crash and a ClockAdvanced event at every time a timer
    fires; off for the model searches, whose fences are atomic actions of their own choosing. Not
    part of the state's identity."""

    tracks_fetchers: bool = field(default=False, compare=False)
    """Whether the followers' fetch pacing is judged (model.fetch_pacing, FollowerKeepsFetching): on
    for the lockstep judge, which sees every request a follower sends and a ClockAdvanced event at
    every time a timer fires; off for the model searches, whose fetches are atomic actions of their
    own choosing. Not part of the state's identity."""
    fetchers: tuple[FetcherClock, ...] = field(default=(), compare=False)
    """Each broker's fetch obligation, by broker id (model.fetch_pacing); empty until a follower
    starts fetching where ``tracks_fetchers``. Judge bookkeeping kept beside the replicas (a request
    sent changes no replica, so it re-runs no invariant); not part of the state's identity."""

    def replica(self, node: int) -> Replica:
        """Broker ``node``'s replica; NotEnabled for an id that is not one of the replicas."""
        if not 0 <= node < len(self.replicas):
            raise NotEnabled(f"broker {node} is not one of the {len(self.replicas)} replicas")
        return self.replicas[node]

    def with_replica(self, node: int, r: Replica) -> State:
        return evolve(self, replicas=(*self.replicas[:node], r, *self.replicas[node + 1 :]))

    def presumes_leadership(self, node: int) -> bool:
        r = self.replicas[node]
        return r.alive and r.registered and r.leader == node


def initial_state(cfg: ReplicationConfig) -> State:
    """A new partition: empty replicas, every broker fenced, ISR = all replicas, no leader."""
    everyone = tuple(cfg.brokers)
    replicas = tuple(Replica(remotes=tuple(RemoteReplica() for _ in everyone)) for _ in everyone)
    return State(
        replicas=replicas,
        controller=PartitionRecord(leader=-1, leader_epoch=-1, isr=everyone, partition_epoch=-1),
        fenced=frozenset(everyone),
        published=(),
    )
