"""The exactly-once slice as one immutable value, and its handlers over that value.

``TxnState`` holds the coordinator metadata per transactional id, who coordinates each
``__transaction_state`` partition (leader, coordinator epoch, loaded), every data and
``__consumer_offsets`` partition (model.txn_partition), the producer ids handed out, the clock,
the broker-to-broker messages and answers the judge matches by id (markers, verifications,
consumer fetch answers), and the ghost the invariants read: which client transaction
(txn_id, ctxn) each record belongs to, how each transactional record ended, the coordinator's
decisions, what consumers and OffsetFetch returned, the transitions taken. No protocol decision
reads the ghost.

Each handler function below is the whole-state step of one event of traces/events.py's
exactly-once section: it runs model.coordinator / model.txn_partition and records the ghost. It
raises ``NotEnabled`` when Kafka would not run the handler (a message never sent, a broker that is
not the coordinator sending markers, a transaction that has not timed out, ...).
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass, field, fields

from kconform.model import coordinator as C
from kconform.model import delayed, txn_timeout
from kconform.model import producer_state as P
from kconform.model import txn_answers as A
from kconform.model import txn_delayed_fetch as D
from kconform.model import txn_graph as G
from kconform.model import txn_partition as T
from kconform.model.coordinator import Answer, NotEnabled, StatePartition, TxnMetadata
from kconform.model.errors import NONE
from kconform.model.evolve import evolve
from kconform.model.frozen_map import FrozenMap
from kconform.model.records import TopicOffset
from kconform.model.timer_bounds import record_late
from kconform.model.txn_config import TxnConfig

__all__ = ["NotEnabled"]


# =============================================================================================
# Ghost


@dataclass(frozen=True)
class Owner:
    """The client transaction a transactional record belongs to (harness annotation), and whether
    its producer epoch was already fenced at the coordinator when it was appended (a zombie)."""

    txn_id: str
    ctxn: int
    zombie: bool


@dataclass(frozen=True)
class Fate:
    """How a transactional record ended: the marker's outcome, the coordinator transaction
    (txn_id, number) that decided it and the client transaction whose EndTxn decided it (-1: the
    coordinator's own abort, a timeout or a fence)."""

    commit: bool
    txn_id: str
    number: int
    by_ctxn: int


@dataclass(frozen=True, order=True)
class Read:
    """A record a consumer's application received: read_committed or not, and whether it was a
    committed (or non-transactional) record when the fetch was served."""

    partition: str
    offset: int
    read_committed: bool
    stable_when_served: bool


@dataclass(frozen=True, order=True)
class ServedLso:
    """An LSO a read_committed fetch returned, with the HW, LEO and first unstable offset (-1: none)
    of the partition at that moment."""

    partition: str
    lso: int
    hw: int
    leo: int
    first_unstable: int


@dataclass(frozen=True, order=True)
class OffsetRead:
    """A group offset OffsetFetch returned and the ``__consumer_offsets`` record that held it."""

    offsets_partition: str
    group: str
    partition: str
    offset: int
    record_offset: int


@dataclass(frozen=True, order=True)
class EndAnswer:
    """An EndTxn answered NONE: the client was told its transaction ``ctxn`` ended so."""

    txn_id: str
    ctxn: int
    commit: bool


@dataclass(frozen=True)
class Decision:
    """The coordinator's decision for its transaction ``number`` of ``txn_id``."""

    number: int
    commit: bool
    ctxn: int


@dataclass(frozen=True)
class TxnGhost:
    """Variables only the invariants read."""

    owners: FrozenMap[tuple[str, int], Owner] = field(default_factory=FrozenMap)
    fates: FrozenMap[tuple[str, int], Fate] = field(default_factory=FrozenMap)
    reads: frozenset[Read] = frozenset()
    served: frozenset[ServedLso] = frozenset()
    offset_reads: frozenset[OffsetRead] = frozenset()
    end_answers: frozenset[EndAnswer] = frozenset()
    numbers: FrozenMap[str, int] = field(default_factory=FrozenMap)
    """The coordinator's current transaction number per transactional id."""
    decisions: FrozenMap[str, Decision] = field(default_factory=FrozenMap)
    """The decision of each transactional id's current Prepare*/Complete* transaction."""
    transitions: frozenset[tuple[str, str]] = frozenset()
    """Every coordinator state transition taken (the graph coverage)."""
    writes: int = 0
    """How many transaction-log writes (and expiries) happened: the judge counts ``last_path``'s
    edges whenever this moves."""
    last_path: tuple[str, ...] = ()
    """The states the last write moved its transactional id through (two or three)."""
    expired: frozenset[tuple[str, int, int]] = frozenset()
    """(partition, pid, LEO at the time): a producer's state expired there."""
    open_at_quiescence: frozenset[str] = frozenset()
    """What was still open when the world quiesced (Quiesced with quiet=True): a liveness failure."""
    overdue: tuple[str, ...] = ()
    """Parked fetches a trigger made completable that were still parked when time moved on
    (read by DelayedFetchTriggersHonoured; model.delayed)."""
    delayed_reads: frozenset[D.DelayedRead] = frozenset()
    """What each completed delayed fetch returned and its isolation bound then (DelayedFetchIsolation)."""
    late_aborts: tuple[str, ...] = ()
    """Transactions a loaded coordinator left Ongoing past the timeout rollback's bound when time
    moved on (read by TxnTimeoutAbortBounded; model.txn_timeout)."""
    late_expiries: tuple[str, ...] = ()
    """Producers whose state a leader kept past the expiration check's bound when time moved on
    (read by ProducerExpiryBounded; model.txn_timeout)."""
    network_healthy: bool = False
    """Whether the harness's current operation lets the network deliver (told by the lockstep judge,
    ``network``; False until it is told: then no answer is ever owed)."""
    owed: FrozenMap[int, A.Owed] = field(default_factory=FrozenMap)
    """Inter-broker requests sent on a healthy network whose answer their sender has not handled
    (model.txn_answers)."""
    late_answers: tuple[str, ...] = ()
    """Those still owed past request.timeout.ms when time moved on (read by BrokerAnswersBounded)."""


# =============================================================================================
# Messages the judge matches by id


@dataclass(frozen=True)
class MarkerMsg:
    """A WriteTxnMarkers message: sender, destination and content, plus the ghost decision."""

    sender: int
    txn_id: str
    partition: str
    leader: int
    pid: int
    epoch: int
    commit: bool
    coordinator_epoch: int
    decision: Decision


@dataclass(frozen=True)
class VerifyMsg:
    """A KIP-890 verification a leader sent for a produce request, and that produce."""

    leader: int
    req: int
    partition: str
    txn_id: str
    pid: int
    epoch: int
    base_seq: int
    rids: tuple[int, ...]
    ctxn: int


@dataclass(frozen=True)
class ServedFetch:
    """A consumer fetch answer, with the offsets that were not committed when it was served."""

    node: int
    partition: str
    fetch_offset: int
    read_committed: bool
    answer: T.FetchAnswer
    unstable: frozenset[int]


# =============================================================================================
# The state


@dataclass(frozen=True)
class TxnState:
    """The whole exactly-once slice."""

    txns: FrozenMap[str, TxnMetadata]
    coordinators: FrozenMap[str, StatePartition]
    partitions: FrozenMap[str, T.Partition]
    issued_pids: frozenset[int] = frozenset()
    now_ms: int = 0
    markers: FrozenMap[int, MarkerMsg] = field(default_factory=FrozenMap)
    marker_answers: FrozenMap[int, tuple[int, ...]] = field(default_factory=FrozenMap)
    latest_marker: FrozenMap[tuple[str, str], int] = field(default_factory=FrozenMap)
    """(transactional id, partition) → the marker message the coordinator sent last: a re-send
    replaces the one before (Kafka re-sends only after the earlier request failed on its
    connection, so an earlier request's answer never completes a partition)."""
    verifications: FrozenMap[int, VerifyMsg] = field(default_factory=FrozenMap)
    verify_answers: FrozenMap[int, tuple[int, ...]] = field(default_factory=FrozenMap)
    fetches: FrozenMap[int, tuple[ServedFetch, ...]] = field(default_factory=FrozenMap)
    parked: tuple[D.TxnDelayedFetch, ...] = ()
    """The purgatory of delayed consumer fetches (model.txn_delayed_fetch), every broker's, in
    creation order."""
    due: tuple[int, ...] = ()
    """Requests of parked fetches a completion trigger found completable: each must complete
    before time moves on (model.delayed)."""
    ghost: TxnGhost = field(default_factory=TxnGhost)
    tracks_timeouts: bool = False
    """Whether the periodic tasks' bounds are judged (model.txn_timeout: TxnTimeoutAbortBounded,
    ProducerExpiryBounded):
    on for the lockstep judge, which sees a ClockAdvanced event at every time a timer fires; off
    for hand-built states and the yardstick's ports of Kafka's unit tests, whose clocks jump."""

    def partition(self, name: str) -> T.Partition:
        p = self.partitions.get(name)
        if p is None:
            raise NotEnabled(f"no partition {name!r} in this configuration")
        return p

    def with_partition(self, p: T.Partition) -> TxnState:
        return evolve(self, partitions=self.partitions.set(p.name, p))


NO_COORDINATOR = StatePartition(leader=-1, coordinator_epoch=-1, loaded=False)
"""A ``__transaction_state`` partition before its first leader: boot moves it to its initial
leader at coordinator epoch 0 (CoordinatorMoved), which then loads it (CoordinatorLoaded)."""


def initial_state(cfg: TxnConfig) -> TxnState:
    """Before boot: every partition empty on its initial leader; no coordinator elected yet."""
    return TxnState(
        txns=FrozenMap(),
        coordinators=FrozenMap({sp: NO_COORDINATOR for sp in cfg.state_partitions}),
        partitions=FrozenMap({name: T.Partition(name, cfg.initial_leader(name)) for name in cfg.log_partitions}),
    )


def advance_clock(s: TxnState, now_ms: int, cfg: TxnConfig | None = None) -> TxnState:
    """Time moves forward; parked fetches a trigger made due earlier and still parked are overdue
    (reported once), then those whose deadline came are due (model.delayed). When the state tracks
    timeouts (and ``cfg`` is given), transactions a loaded coordinator left Ongoing past the
    timeout rollback's bound, and producers whose state outlived the expiration check's bound, are
    recorded (``TxnGhost.late_aborts`` / ``late_expiries``, model.txn_timeout), and so are
    inter-broker requests owed an answer past request.timeout.ms (``late_answers``,
    model.txn_answers): a new ghost value, so the judge re-checks on that tick."""
    if now_ms < s.now_ms:
        raise NotEnabled(f"time goes forward: {s.now_ms} → {now_ms}")
    s = evolve(s, now_ms=now_ms)
    if cfg is not None and s.tracks_timeouts:
        s = record_late(s, "late_aborts", txn_timeout.late_aborts(s.txns, s.coordinators, cfg, now_ms))
        s = record_late(s, "late_expiries", txn_timeout.late_expiries(s.partitions, cfg, now_ms))
        if s.ghost.owed:
            s = record_late(s, "late_answers", A.late(s.ghost.owed, now_ms))
    if not s.parked:
        return s
    late = delayed.overdue(s.parked, s.due)
    if late:
        messages = tuple(delayed.late_message(f"broker {df.node}", D.describe(df), now_ms) for df in late)
        s = evolve(s, due=(), ghost=evolve(s.ghost, overdue=s.ghost.overdue + messages))
    due = delayed.expire(s.parked, s.due, now_ms)
    return s if len(due) == len(s.due) else evolve(s, due=due)


def network(s: TxnState, healthy: bool) -> TxnState:
    """The harness says whether its next operation lets the network deliver (model.txn_answers): an
    unhealthy one forgets every answer owed, since a lost or held message is the network's doing."""
    g = s.ghost
    if healthy == g.network_healthy and (healthy or not g.owed):
        return s
    return evolve(s, ghost=evolve(g, network_healthy=healthy, owed=g.owed if healthy else FrozenMap()))


def _owe(s: TxnState, msg: int, request: A.Owed) -> TxnState:
    if not s.ghost.network_healthy:
        return s
    return evolve(s, ghost=evolve(s.ghost, owed=A.owe(s.ghost.owed, True, msg, request)))


def _paid(s: TxnState, msg: int) -> TxnState:
    if msg not in s.ghost.owed:
        return s
    return evolve(s, ghost=evolve(s.ghost, owed=A.paid(s.ghost.owed, msg)))


# ---------------------------------------------------------------------------------------------
# Helpers


def _txn_partition_name(cfg: TxnConfig, txn_id: str) -> str:
    if txn_id not in cfg.transactional_ids:
        raise NotEnabled(f"transactional id {txn_id!r} is not in this configuration")
    return cfg.state_partition(txn_id)


def _lookup(s: TxnState, cfg: TxnConfig, node: int, txn_id: str) -> int:
    """The coordinator lookup error for ``txn_id`` at ``node`` (kafka-facts §1.2)."""
    return C.coordinator_error(s.coordinators[_txn_partition_name(cfg, txn_id)], node)


def fresh_pid(s: TxnState, claimed: int) -> int:
    """``claimed`` if it was never handed out (the model checks freshness, not the allocator),
    else an id that was not: the comparison with the claim then fails."""
    if claimed >= 0 and claimed not in s.issued_pids:
        return claimed
    return max(s.issued_pids, default=999) + 1


_RECORDED = operator.attrgetter(
    *(f.name for f in fields(TxnMetadata) if f.name not in ("pending", "markers_abandoned"))
)
"""The fields of TxnMetadata a transaction-log record holds (all but the in-memory ``pending`` and
``markers_abandoned``): ``_store`` counts a write when one of them changed."""


def _store(s: TxnState, txn_id: str, old: TxnMetadata | None, new: TxnMetadata | None, ctxn: int) -> TxnState:
    """Keep ``new`` metadata and record the ghost: the transition, pids handed out, the
    coordinator transaction number and its decision."""
    if new is old or new is None:
        return s
    g = s.ghost
    issued = s.issued_pids
    if new.pid not in issued or (new.next_pid >= 0 and new.next_pid not in issued):
        issued = issued | {new.pid} | ({new.next_pid} if new.next_pid >= 0 else set())
    before = G.NO_STATE if old is None else old.state
    written = old is None or _RECORDED(old) != _RECORDED(new)
    path = [before, new.state]
    if new.state in G.COMPLETED and before not in G.PREPARED and written:
        path = [before, G.PREPARE_ABORT, new.state]  # TV2's empty abort: Prepare and Complete in one handler
    if before != G.NO_STATE and written:
        edges = set(itertools.pairwise(path))
        transitions = g.transitions if edges <= g.transitions else g.transitions | edges  # kept when no new edge
        g = evolve(g, transitions=transitions, writes=g.writes + 1, last_path=tuple(path))
    number = g.numbers.get(txn_id) or 0
    if written and (
        (new.state == G.ONGOING and before != G.ONGOING) or (path[1] in G.PREPARED and before != G.ONGOING)
    ):
        number += 1
        g = evolve(g, numbers=g.numbers.set(txn_id, number))
    if path[1] in G.PREPARED and before not in G.PREPARED:
        commit = path[1] == G.PREPARE_COMMIT
        g = evolve(g, decisions=g.decisions.set(txn_id, Decision(number, commit, ctxn)))
    return evolve(s, txns=s.txns.set(txn_id, new), issued_pids=issued, ghost=g)


# ---------------------------------------------------------------------------------------------
# Coordinator location (kafka-facts §1.2, §1.5 failover)


def coordinator_moved(s: TxnState, cfg: TxnConfig, state_partition: str, leader: int, epoch: int) -> TxnState:
    """The state partition gets a new leader (at boot its first one, at epoch 0): the coordinator
    epoch is the old + 1 and the leader loads before answering; in-memory work of the old
    coordinator is dropped. A re-election of the same broker also bumps the epoch."""
    cur = s.coordinators.get(state_partition)
    if cur is None:
        raise NotEnabled(f"{state_partition} holds no transactional id of this configuration")
    if not 0 <= leader < cfg.brokers:
        raise NotEnabled(f"{state_partition} cannot move to broker {leader}")
    if epoch != cur.coordinator_epoch + 1:
        raise NotEnabled(f"a new leader of {state_partition} has epoch {cur.coordinator_epoch + 1}, not {epoch}")
    return evolve(s, coordinators=s.coordinators.set(state_partition, StatePartition(leader, epoch, False)))


def coordinator_loaded(s: TxnState, cfg: TxnConfig, node: int, state_partition: str, epoch: int) -> TxnState:
    """The new leader finished loading: it owns the ids with the state their last record says and
    will re-send markers for every Prepare* transaction."""
    cur = s.coordinators.get(state_partition)
    if cur is None or cur.leader != node or cur.coordinator_epoch != epoch or cur.loaded:
        raise NotEnabled(f"broker {node} is not loading {state_partition} at coordinator epoch {epoch}")
    txns = s.txns
    for txn_id, meta in s.txns.items():
        if cfg.state_partition(txn_id) == state_partition:
            txns = txns.set(txn_id, C.loaded(meta))
    loaded = evolve(cur, loaded=True, loaded_ms=s.now_ms)
    return evolve(s, txns=txns, coordinators=s.coordinators.set(state_partition, loaded))


# ---------------------------------------------------------------------------------------------
# Client requests to the coordinator (kafka-facts §1.3-§1.5)


def init_producer_id(
    s: TxnState,
    cfg: TxnConfig,
    node: int,
    txn_id: str,
    transactional: bool,
    timeout_ms: int,
    expected_pid: int,
    expected_epoch: int,
    claimed_pid: int,
) -> tuple[TxnState, Answer]:
    """InitProducerId: an idempotent producer gets a fresh pid at epoch 0 from any broker; a
    transactional one goes through the coordinator lookup and model.coordinator.init_producer_id."""
    pid = fresh_pid(s, claimed_pid)
    if not transactional:
        return evolve(s, issued_pids=s.issued_pids | {pid}), Answer(NONE, pid, 0, G.NO_STATE)
    old = s.txns.get(txn_id)
    error = _lookup(s, cfg, node, txn_id)
    if error != NONE:
        return s, Answer(error)  # a broker that does not (yet) coordinate the id knows no state
    new, answer = C.init_producer_id(old, cfg, s.now_ms, timeout_ms, expected_pid, expected_epoch, pid)
    if old is None and answer.error != NONE:
        new = None  # Kafka keeps the created metadata in memory only; nothing was written
    return _store(s, txn_id, old, new, -1), answer


def add_partitions(
    s: TxnState, cfg: TxnConfig, node: int, txn_id: str, pid: int, epoch: int, partitions: frozenset[str]
) -> tuple[TxnState, Answer]:
    """AddPartitionsToTxn / AddOffsetsToTxn (the group's offsets partition)."""
    for p in partitions:
        s.partition(p)
    old = s.txns.get(txn_id)
    error = _lookup(s, cfg, node, txn_id)
    if error != NONE:
        return s, Answer(error)  # a broker that does not (yet) coordinate the id knows no state
    new, answer = C.add_partitions(old, cfg, s.now_ms, pid, epoch, partitions)
    return _store(s, txn_id, old, new, -1), answer


def end_txn(
    s: TxnState,
    cfg: TxnConfig,
    node: int,
    txn_id: str,
    pid: int,
    epoch: int,
    ctxn: int,
    commit: bool,
    claimed_pid: int,
) -> tuple[TxnState, Answer]:
    """EndTxn; a NONE answer is remembered as what the client was told about ``ctxn``."""
    old = s.txns.get(txn_id)
    error = _lookup(s, cfg, node, txn_id)
    if error != NONE:
        return s, Answer(error)  # a broker that does not (yet) coordinate the id knows no state
    new, answer = C.end_txn(old, cfg, s.now_ms, pid, epoch, commit, fresh_pid(s, claimed_pid))
    s = _store(s, txn_id, old, new, ctxn)
    if answer.error == NONE and ctxn >= 0:
        s = evolve(s, ghost=evolve(s.ghost, end_answers=s.ghost.end_answers | {EndAnswer(txn_id, ctxn, commit)}))
    return s, answer


def txn_timed_out(s: TxnState, cfg: TxnConfig, node: int, txn_id: str) -> tuple[TxnState, TxnMetadata]:
    """The coordinator's timeout rollback of an Ongoing transaction (kafka-facts §1.6)."""
    old = s.txns.get(txn_id)
    if _lookup(s, cfg, node, txn_id) != NONE or old is None:
        raise NotEnabled(f"broker {node} does not coordinate {txn_id!r} (or it has no metadata)")
    new = C.abort_timed_out(old, cfg, s.now_ms)
    return _store(s, txn_id, old, new, -1), new


def txn_id_expired(s: TxnState, cfg: TxnConfig, node: int, txn_id: str) -> TxnState:
    """Transactional-id expiration: a tombstone, the id is unknown after (kafka-facts §1.7)."""
    old = s.txns.get(txn_id)
    if _lookup(s, cfg, node, txn_id) != NONE or old is None or not C.may_expire(old, cfg, s.now_ms):
        raise NotEnabled(f"{txn_id!r} may not expire at {s.now_ms} on broker {node}")
    g = s.ghost
    g = evolve(g, transitions=g.transitions | {(old.state, G.DEAD)}, writes=g.writes + 1, last_path=(old.state, G.DEAD))
    return evolve(s, txns=s.txns.remove(txn_id), ghost=g)


# ---------------------------------------------------------------------------------------------
# Markers (kafka-facts §1.5, §1.8)


def marker_sent(
    s: TxnState, cfg: TxnConfig, node: int, msg: int, txn_id: str, partition: str
) -> tuple[TxnState, MarkerMsg]:
    """The coordinator sends the marker of a Prepare* transaction to a partition still pending,
    at its coordinator epoch, to the partition's leader."""
    meta = s.txns.get(txn_id)
    if _lookup(s, cfg, node, txn_id) != NONE or meta is None:
        raise NotEnabled(f"broker {node} is not the loaded coordinator of {txn_id!r}")
    if meta.state not in G.PREPARED or partition not in meta.pending or meta.markers_abandoned:
        raise NotEnabled(f"{txn_id!r} ({meta.state}) has no marker pending for {partition}")
    if msg in s.markers:
        raise NotEnabled(f"marker message id {msg} was already used")
    decision = s.ghost.decisions.get(txn_id) or Decision(0, meta.state == G.PREPARE_COMMIT, -1)
    m = MarkerMsg(
        sender=node,
        txn_id=txn_id,
        partition=partition,
        leader=s.partition(partition).leader,
        pid=meta.pid,
        epoch=meta.epoch,
        commit=meta.state == G.PREPARE_COMMIT,
        coordinator_epoch=s.coordinators[cfg.state_partition(txn_id)].coordinator_epoch,
        decision=decision,
    )
    latest = s.latest_marker.set((txn_id, partition), msg)
    s = _owe(s, msg, A.Owed(A.MARKER, node, m.leader, s.now_ms, f"{txn_id!r} on {partition}"))
    return evolve(s, markers=s.markers.set(msg, m), latest_marker=latest), m


def marker_handled(s: TxnState, cfg: TxnConfig, node: int, msg: int) -> tuple[TxnState, T.MarkerResult]:
    """A partition leader handles marker ``msg`` (each delivery, duplicates included)."""
    m = s.markers.get(msg)
    if m is None or m.leader != node:
        raise NotEnabled(f"no marker {msg} was sent to broker {node}")
    p = s.partition(m.partition)
    p2, result = T.append_marker(p, node, s.now_ms, m.pid, m.epoch, m.commit, m.coordinator_epoch)
    g = s.ghost
    if result.ended is not None:
        first, end = result.ended
        fates = g.fates
        for r in p.log[first:end]:
            if r.pid == m.pid and r.txn and r.control < 0:
                fates = fates.set((p.name, r.offset), Fate(m.commit, m.txn_id, m.decision.number, m.decision.ctxn))
        g = evolve(g, fates=fates)
    answers = (*(s.marker_answers.get(msg) or ()), result.error)
    s = evolve(s, ghost=g, marker_answers=s.marker_answers.set(msg, answers))
    return s.with_partition(p2), result


def marker_response(s: TxnState, cfg: TxnConfig, node: int, msg: int, error: int) -> tuple[TxnState, str]:
    """The coordinator processes an answer ``error`` to its marker ``msg``; a stale answer (the
    coordinator moved or reloaded, the transaction moved on) changes nothing. Returns the state of
    the transactional id after, "" when the sender no longer owns it (as for lookup errors)."""
    m = s.markers.get(msg)
    if m is None or m.sender != node or error not in (s.marker_answers.get(msg) or ()):
        raise NotEnabled(f"broker {node} got no answer {error} to a marker {msg} of its own")
    s = _paid(s, msg)
    meta = s.txns.get(m.txn_id)
    owner = s.coordinators[cfg.state_partition(m.txn_id)]
    if not (owner.leader == node and owner.loaded and owner.coordinator_epoch == m.coordinator_epoch):
        return s, G.NO_STATE  # the sender no longer owns the id (moved, reloading): it holds no state
    current = (
        meta is not None
        and s.latest_marker.get((m.txn_id, m.partition)) == msg
        and meta.state in G.PREPARED
        and (meta.pid, meta.epoch) == (m.pid, m.epoch)
        and m.partition in meta.pending
    )
    if not current or meta is None:
        return s, C.state_of(meta)
    new = C.marker_answered(meta, cfg, s.now_ms, m.partition, error)
    s = _store(s, m.txn_id, meta, new, -1)
    return s, new.state


# ---------------------------------------------------------------------------------------------
# Produce and verification (kafka-facts §2.2, §1.9)


def _record_owners(
    s: TxnState, partition: str, result: T.ProduceResult, n: int, txn_id: str, pid: int, epoch: int, ctxn: int
) -> TxnState:
    if result.outcome != P.APPENDED:
        return s
    meta = s.txns.get(txn_id)
    zombie = meta is not None and (
        (meta.pid == pid and meta.epoch > epoch) or (meta.previous_pid == pid and meta.pid != pid)
    )
    owners = s.ghost.owners
    for i in range(n):
        owners = owners.set((partition, result.base_offset + i), Owner(txn_id, ctxn, zombie))
    return evolve(s, ghost=evolve(s.ghost, owners=owners))


def produce(
    s: TxnState,
    cfg: TxnConfig,
    node: int,
    req: int,
    partition: str,
    txn_id: str,
    pid: int,
    epoch: int,
    base_seq: int,
    rids: tuple[int, ...],
    transactional: bool,
    ctxn: int,
    verify_msg: int,
) -> tuple[TxnState, T.ProduceResult]:
    """A produce of one batch at the partition leader; a batch needing verification sends
    ``verify_msg`` to the coordinator of ``txn_id``."""
    if partition not in cfg.data:
        raise NotEnabled(f"clients produce to data partitions only, not {partition!r}")
    if transactional and txn_id not in cfg.transactional_ids:
        raise NotEnabled(f"transactional id {txn_id!r} is not in this configuration")
    p, result = T.produce(
        s.partition(partition), node, s.now_ms, cfg.verification, pid, epoch, base_seq, rids, transactional, verify_msg
    )
    s = s.with_partition(p)
    if result.outcome == P.VERIFYING:
        if verify_msg in s.verifications:
            raise NotEnabled(f"verification message id {verify_msg} was already used")
        v = VerifyMsg(node, req, partition, txn_id, pid, epoch, base_seq, rids, ctxn)
        coordinator = s.coordinators[_txn_partition_name(cfg, txn_id)].leader
        s = _owe(s, verify_msg, A.Owed(A.VERIFICATION, node, coordinator, s.now_ms, f"{txn_id!r} on {partition}"))
        return evolve(s, verifications=s.verifications.set(verify_msg, v)), result
    if transactional:
        s = _record_owners(s, partition, result, len(rids), txn_id, pid, epoch, ctxn)
    return s, result


def verify_handled(s: TxnState, cfg: TxnConfig, node: int, msg: int) -> tuple[TxnState, int]:
    """The coordinator answers verification ``msg`` (coordinator lookup first)."""
    v = s.verifications.get(msg)
    if v is None:
        raise NotEnabled(f"no verification {msg} was sent")
    error = _lookup(s, cfg, node, v.txn_id)
    if error == NONE:
        error = C.verify(s.txns.get(v.txn_id), v.pid, v.epoch, v.partition)
    answers = (*(s.verify_answers.get(msg) or ()), error)
    return evolve(s, verify_answers=s.verify_answers.set(msg, answers)), error


def verify_applied(
    s: TxnState, cfg: TxnConfig, node: int, msg: int, req: int, answer: int
) -> tuple[TxnState, T.ProduceResult]:
    """The leader applies the coordinator's ``answer`` to verification ``msg`` of produce ``req``."""
    v = s.verifications.get(msg)
    if v is None or v.leader != node or v.req != req or answer not in (s.verify_answers.get(msg) or ()):
        raise NotEnabled(f"broker {node} got no answer {answer} to verification {msg} for produce {req}")
    s = _paid(s, msg)
    p, result = T.apply_verification(
        s.partition(v.partition), s.now_ms, answer, msg, v.pid, v.epoch, v.base_seq, v.rids
    )
    s = s.with_partition(p)
    return _record_owners(s, v.partition, result, len(v.rids), v.txn_id, v.pid, v.epoch, v.ctxn), result


def verify_answers(s: TxnState, msg: int) -> tuple[int, ...]:
    """The distinct answers the coordinator gave to verification ``msg`` (duplicates may differ)."""
    return tuple(dict.fromkeys(s.verify_answers.get(msg) or ()))


# ---------------------------------------------------------------------------------------------
# HW, consumers, expiry (kafka-facts §2.3, §2.4, §4)


def hw_advanced(s: TxnState, cfg: TxnConfig, node: int, partition: str, hw: int) -> TxnState:
    """The HW moves (and with it the LSO once it passes a marker): the partition's parked fetches
    are re-checked (Partition.tryCompleteDelayedRequests on LeaderHwChange.INCREASED)."""
    p = s.partition(partition)
    if node != p.leader or not p.hw <= hw <= p.leo:
        raise NotEnabled(f"{partition}: broker {node} cannot move the HW {p.hw} → {hw} (LEO {p.leo})")
    return _recheck(s.with_partition(T.advance_hw(p, hw)), partition)


def _recheck(s: TxnState, partition: str) -> TxnState:
    """checkAndComplete on ``partition``'s key: its parked fetches that are ready now become due."""
    if not s.parked:
        return s
    p = s.partition(partition)
    due = delayed.recheck(s.parked, s.due, lambda df: df.partition == partition and D.ready(p, df))
    return s if len(due) == len(s.due) else evolve(s, due=due)


def _unstable_offsets(s: TxnState, p: T.Partition) -> frozenset[int]:
    """Offsets of transactional data records not committed (yet) on ``p``."""
    out: set[int] = set()
    for r in p.log:
        if r.txn and r.control < 0:
            fate = s.ghost.fates.get((p.name, r.offset))
            if fate is None or not fate.commit:
                out.add(r.offset)
    return frozenset(out)


def consumer_fetch(
    s: TxnState, cfg: TxnConfig, node: int, req: int, partition: str, fetch_offset: int, read_committed: bool
) -> tuple[TxnState, T.FetchAnswer]:
    """A consumer fetch; the answer is kept for ConsumerPolled, and a read_committed LSO for LsoBounds."""
    p = s.partition(partition)
    answer = T.consumer_fetch(p, node, fetch_offset, read_committed)
    return _served(s, p, node, req, fetch_offset, read_committed, answer), answer


def _served(
    s: TxnState, p: T.Partition, node: int, req: int, fetch_offset: int, read_committed: bool, answer: T.FetchAnswer
) -> TxnState:
    """An answer to consumer fetch ``req`` was given: kept for ConsumerPolled (with the offsets not
    committed then), and a read_committed LSO for LsoBounds."""
    partition = p.name
    g = s.ghost
    if read_committed and answer.error == NONE:
        fus = T.first_unstable_offset(p)
        g = evolve(
            g, served=g.served | {ServedLso(partition, answer.lso, answer.hw, p.leo, -1 if fus is None else fus)}
        )
    served = ServedFetch(node, partition, fetch_offset, read_committed, answer, _unstable_offsets(s, p))
    fetches = s.fetches.set(req, (*(s.fetches.get(req) or ()), served))
    return evolve(s, fetches=fetches, ghost=g)


def consumer_fetch_wait(
    s: TxnState,
    cfg: TxnConfig,
    node: int,
    req: int,
    partition: str,
    fetch_offset: int,
    read_committed: bool,
    min_bytes: int,
    max_wait_ms: int,
) -> tuple[TxnState, T.FetchAnswer, bool]:
    """A consumer Fetch with fetch.min.bytes / fetch.max.wait.ms (ReplicaManager.fetchMessages):
    answered at once as ``consumer_fetch`` when model.txn_delayed_fetch.answers_at_once says so;
    else no records now and a DelayedFetch of ``max_wait_ms`` is parked (the third result)."""
    p = s.partition(partition)
    answer = T.consumer_fetch(p, node, fetch_offset, read_committed)
    if D.answers_at_once(answer, min_bytes, max_wait_ms):
        return _served(s, p, node, req, fetch_offset, read_committed, answer), answer, False
    if min_bytes < 1:
        raise NotEnabled(f"fetch.min.bytes {min_bytes} < 1 never waits")
    df = D.park(p, node, req, fetch_offset, read_committed, min_bytes, s.now_ms + max_wait_ms)
    return evolve(s, parked=(*s.parked, df)), T.FetchAnswer(NONE, (), answer.hw, answer.lso, ()), True


def parked_fetch(s: TxnState, node: int, req: int) -> D.TxnDelayedFetch:
    """The fetch ``req`` parked at ``node``; NotEnabled if there is none."""
    df = next((d for d in s.parked if d.req == req and d.node == node), None)
    if df is None:
        raise NotEnabled(f"broker {node} has no delayed fetch {req}")
    return df


def complete_delayed_fetch(s: TxnState, cfg: TxnConfig, node: int, req: int) -> tuple[TxnState, T.FetchAnswer]:
    """A parked fetch completes (DelayedFetch.onComplete): allowed once tryComplete says so
    (model.txn_delayed_fetch.ready) or its deadline came; the answer is a fresh read at completion
    time at the request's isolation level, kept for ConsumerPolled like any answer."""
    df = parked_fetch(s, node, req)
    p = s.partition(df.partition)
    if not D.ready(p, df) and s.now_ms < df.deadline_ms:
        have = max(D.bound(p, df.read_committed) - df.start_offset, 0)
        raise NotEnabled(
            f"{D.describe(df)} completed at {s.now_ms} ms with {have} of {df.min_bytes} records below its "
            f"bound, before its deadline {df.deadline_ms} ms and without a completing condition"
        )
    parked, due = delayed.remove(s.parked, s.due, df)
    answer, what = D.read(p, df)
    s = evolve(s, parked=parked, due=due, ghost=evolve(s.ghost, delayed_reads=s.ghost.delayed_reads | {what}))
    return _served(s, p, node, req, df.fetch_offset, df.read_committed, answer), answer


def consumer_polled(
    s: TxnState, node: int, req: int, partition: str, read_committed: bool, served: ServedFetch
) -> tuple[TxnState, T.Polled]:
    """The consumer turns one answer to its fetch ``req`` into what the application sees."""
    if served.partition != partition or served.read_committed != read_committed:
        raise NotEnabled(f"fetch {req} was for {served.partition} (read_committed={served.read_committed})")
    polled = T.poll(served.answer, served.fetch_offset, read_committed)
    reads = frozenset(
        Read(partition, r.offset, read_committed, r.offset not in served.unstable) for r in polled.records
    )
    return evolve(s, ghost=evolve(s.ghost, reads=s.ghost.reads | reads)), polled


def served_fetches(s: TxnState, req: int) -> tuple[ServedFetch, ...]:
    return s.fetches.get(req) or ()


def open_transactions(s: TxnState) -> frozenset[str]:
    """Every transaction still open: Ongoing or Prepare* at its coordinator, or open on a partition."""
    out = {f"{txn_id!r} is {meta.state}" for txn_id, meta in s.txns.items() if meta.state in (G.ONGOING, *G.PREPARED)}
    for name, p in s.partitions.items():
        out |= {f"{name}: producer {pid}'s transaction from offset {first} is open" for first, pid in p.open_txns()}
    return frozenset(out)


def quiesced(s: TxnState, quiet: bool) -> TxnState:
    """The world delivered everything and fired every timer with every coordinator loaded: a
    quiet world has no open transaction left (nothing is concluded when ``quiet`` is false)."""
    if not quiet:
        return s
    if not all(c.loaded for c in s.coordinators.values()):
        raise NotEnabled("a quiet world has every coordinator loaded")
    g = evolve(s.ghost, open_at_quiescence=s.ghost.open_at_quiescence | open_transactions(s))
    return evolve(s, ghost=g)


def producer_expired(s: TxnState, cfg: TxnConfig, node: int, partition: str, pid: int) -> TxnState:
    p = s.partition(partition)
    p2 = T.expire_producer(p, pid, s.now_ms, cfg.producer_id_expiration_ms) if node == p.leader else None
    if p2 is None:
        raise NotEnabled(f"producer {pid} may not expire on {partition} at {s.now_ms}")
    g = evolve(s.ghost, expired=s.ghost.expired | {(partition, pid, p.leo)})
    return evolve(s.with_partition(p2), ghost=g)


# ---------------------------------------------------------------------------------------------
# Group offsets (kafka-facts §1.10)


def _offsets_partition(s: TxnState, cfg: TxnConfig, group: str) -> T.Partition:
    if group not in cfg.groups:
        raise NotEnabled(f"group {group!r} is not in this configuration")
    return s.partition(cfg.offsets_partition(group))


def txn_offset_commit(
    s: TxnState,
    cfg: TxnConfig,
    node: int,
    group: str,
    txn_id: str,
    pid: int,
    epoch: int,
    ctxn: int,
    offsets: tuple[TopicOffset, ...],
) -> tuple[TxnState, T.OffsetsResult]:
    p, result = T.txn_offset_commit(_offsets_partition(s, cfg, group), node, s.now_ms, group, pid, epoch, offsets)
    s = s.with_partition(p)
    if result.error == NONE and offsets:
        applied = T.ProduceResult(P.APPENDED, NONE, result.base_offset)
        s = _record_owners(s, p.name, applied, len(offsets), txn_id, pid, epoch, ctxn)
    return s, result


def offset_commit(
    s: TxnState, cfg: TxnConfig, node: int, group: str, offsets: tuple[TopicOffset, ...]
) -> tuple[TxnState, T.OffsetsResult]:
    p, result = T.offset_commit(_offsets_partition(s, cfg, group), node, group, offsets)
    return s.with_partition(p), result


def offset_fetch(
    s: TxnState, cfg: TxnConfig, node: int, group: str, require_stable: bool
) -> tuple[TxnState, T.OffsetsResult]:
    p = _offsets_partition(s, cfg, group)
    result = T.offset_fetch(p, node, group, require_stable)
    if result.error != NONE:
        return s, result
    reads = frozenset(
        OffsetRead(p.name, group, o.partition, o.offset, T.committed_source(p, group, o.partition))
        for o in result.offsets
    )
    return evolve(s, ghost=evolve(s.ghost, offset_reads=s.ghost.offset_reads | reads)), result
