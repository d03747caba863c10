"""Atomic search actions over one partition, composed from the handlers in model.replication.

A model checker explores every interleaving of these actions (conformance.replication.explore). Each action
runs one handler, or one request/handler/response round trip as a single atomic step, exactly as
model.replication defines them; nothing here changes a handler's semantics. An action is offered
only when its handlers allow it (``NotEnabled`` means "not enabled here") and only when it
changes the state.

The action set follows hachikuji/kafka-specification (KafkaReplication.tla): the controller
elects, fences and moves leaders at will; brokers pick *any* pending partition record (they may
lag and skip records, like a replica choosing any pending LeaderAndIsr request), so zombie leaders
arise naturally; leaders write, followers fetch and truncate. Our handlers are finer-grained than
the TLA+ actions: acks=all completions, min.insync.replicas, the KRaft controller's AlterPartition
checks and the lag-time rule for ISR shrinks are all part of the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kconform.model import replication as rp
from kconform.model.config import ReplicationConfig
from kconform.model.errors import NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND
from kconform.model.replication import NotEnabled
from kconform.model.state import FETCHING, TRUNCATING, PartitionRecord, State, initial_state

ISR_MSG = 0
"""The AlterPartition message id the search uses: requests are atomic, so one id suffices."""


@dataclass(frozen=True)
class SearchBounds:
    """What bounds the search (hachikuji's MaxRecords / MaxLeaderEpoch constants, plus ours).

    ``max_records``: produce requests, record ids 0..max_records-1. ``max_leader_epoch``: no
    controller action may publish a leader epoch above it. ``max_partition_epoch`` (None = no
    bound): no controller action may publish a partition epoch above it; it makes ISR churn
    finite so that a bounded state space can be exhausted. ``allow_crash``: crash, restart and
    checkpoint actions. ``allow_tick``: the clock may jump by replica.lag.time.max.ms + 1 (needed
    for any ISR shrink).
    """

    max_records: int = 2
    max_leader_epoch: int = 3
    max_partition_epoch: int | None = None
    allow_crash: bool = False
    allow_tick: bool = False

    def __post_init__(self) -> None:
        if self.max_records < 0 or self.max_leader_epoch < 0:
            raise ValueError(f"negative search bound in {self}")
        if self.max_partition_epoch is not None and self.max_partition_epoch < 0:
            raise ValueError(f"negative max_partition_epoch in {self}")


def booted_state(cfg: ReplicationConfig) -> State:
    """The cluster after boot: every broker registers (unfenced in id order, so broker 0 is
    elected), then every broker applies the latest published partition record."""
    s = initial_state(cfg)
    for b in cfg.brokers:
        s, _ = rp.controller_unfence(s, cfg, b)
    latest = s.published[-1]
    for b in cfg.brokers:
        s, _ = rp.apply_metadata(s, cfg, b, latest)
    return s


def _within(s: State, bounds: SearchBounds) -> bool:
    c = s.controller
    if c.leader_epoch > bounds.max_leader_epoch:
        return False
    return bounds.max_partition_epoch is None or c.partition_epoch <= bounds.max_partition_epoch


# ---------------------------------------------------------------------------------------------
# Composite (atomic) steps


def replicate(s: State, cfg: ReplicationConfig, follower: int) -> State:
    """One follower fetch round trip: request, leader handling, follower applying the answer."""
    q = rp.fetch_request(s, cfg, follower)
    s, resp = rp.handle_fetch(s, cfg, q.leader, follower, q)
    s, _ = rp.apply_fetch_response(s, cfg, follower, q, resp)
    return s


def truncate(s: State, cfg: ReplicationConfig, follower: int) -> State:
    """One OffsetsForLeaderEpoch round trip and the truncation it leads to."""
    q = rp.epoch_query_request(s, cfg, follower)
    answer = rp.handle_epoch_query(s, cfg, q.leader, q)
    s, _ = rp.apply_epoch_answer(s, cfg, follower, q, answer)
    return s


def alter_isr(s: State, cfg: ReplicationConfig, leader: int, *isr: int) -> State:
    """One accepted AlterPartition round trip: the leader proposes ``isr``, the controller commits
    it, the leader applies the answer. A proposal the controller would refuse is not a step here:
    in Kafka it stays pending until new metadata (Partition.handleAlterPartitionError), a state
    the explicit and symbolic explorations do not hold; the lockstep gate judges refusals."""
    s = rp.propose_isr(s, cfg, leader, ISR_MSG, tuple(isr))
    pending = s.replica(leader).pending_isr
    assert pending is not None
    s, error = rp.controller_alter_partition(s, cfg, leader, pending)
    if error != NONE:
        raise NotEnabled(f"the controller refuses AlterPartition {pending.isr} from {leader} ({error})")
    c = s.controller
    return rp.apply_alter_partition_response(s, cfg, leader, ISR_MSG, error, c.isr, c.partition_epoch)


# ---------------------------------------------------------------------------------------------
# Successors


def _metadata_candidates(s: State, node: int) -> tuple[PartitionRecord, ...]:
    """The records ``node`` may apply next: any published one newer than its partition epoch.

    A broker without partition state (it just restarted) first catches up: it applies only the
    latest record, as a KRaft broker replays the metadata log before publishing (and as a ZK
    controller sends the current LeaderAndIsr to a registering broker). Without this a restarted
    broker could resurrect an ancient leadership, which Kafka cannot do.
    """
    r = s.replica(node)
    if r.partition_epoch < 0:
        return s.published[-1:]
    return tuple(rec for rec in s.published if rec.partition_epoch > r.partition_epoch)


def successors(s: State, cfg: ReplicationConfig, bounds: SearchBounds) -> Iterator[tuple[str, State]]:
    """Every enabled action in ``s`` with its label and resulting state, in a fixed order.

    States equal to ``s`` are skipped (the action changed nothing), and so are states past the
    bounds. Labels are readable, e.g. ``write(0)``, ``replicate(1)``, ``move_leader(2)``,
    ``metadata(1, pe=3)``. Cheap pre-checks skip handler calls that would raise NotEnabled or
    change nothing; they never decide on their own what the handlers allow.
    """
    brokers = cfg.brokers
    replicas = s.replicas
    c = s.controller

    def attempt(label: str, step: Callable[..., State], *args: int) -> Iterator[tuple[str, State]]:
        try:
            post = step(s, cfg, *args)
        except NotEnabled:
            return
        if post != s and _within(post, bounds):
            yield label, post

    def elect(label: str, step: Callable[..., tuple[State, rp.Election]], *args: int) -> Iterator[tuple[str, State]]:
        try:
            post, _ = step(s, cfg, *args)
        except NotEnabled:
            return
        if post != s and _within(post, bounds):
            yield label, post

    # Controller: a leader change publishes epoch + 1, so none is possible at the bound.
    can_elect = c.leader_epoch < bounds.max_leader_epoch
    for b in brokers:
        if b not in s.fenced:
            if can_elect or b != c.leader:
                yield from elect(f"fence({b})", rp.controller_fence, b)
        elif replicas[b].alive:
            yield from elect(f"unfence({b})", rp.controller_unfence, b)
    if can_elect:
        for b in brokers:
            if b != c.leader and b in c.isr and b not in s.fenced:
                yield from elect(f"move_leader({b})", rp.controller_move_leader, b)

    # Metadata propagation (brokers may lag and skip records)
    for b in brokers:
        r = replicas[b]
        if not (r.alive and r.registered):
            continue
        for rec in _metadata_candidates(s, b):
            if rec.leader_epoch < r.leader_epoch:
                continue  # apply_metadata ignores it
            try:
                post, outcome = rp.apply_metadata(s, cfg, b, rec)
            except NotEnabled:
                continue
            if outcome.outcome != "ignored" and post != s:
                yield f"metadata({b}, pe={rec.partition_epoch})", post

    # Produce (acks=all) and its completion
    written = len(s.ghost.written)
    for b in brokers:
        r = replicas[b]
        if written < bounds.max_records and s.presumes_leadership(b):
            try:
                post, _out = rp.produce(s, cfg, b, written, written, -1)
            except NotEnabled:
                post = s
            if post != s:
                yield f"write({b})", post
        if r.purgatory and r.alive:
            for dp in r.produces:
                yield from attempt(f"ack({b}, {dp.req})", _complete, b, dp.req, NONE)
                yield from attempt(
                    f"ack({b}, {dp.req}, NOT_ENOUGH_REPLICAS_AFTER_APPEND)",
                    _complete,
                    b,
                    dp.req,
                    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                )

    # Followers
    for f in brokers:
        r = replicas[f]
        if not (r.alive and r.registered and r.leader >= 0 and replicas[r.leader].alive):
            continue
        if r.fetch_state == FETCHING:
            yield from attempt(f"replicate({f})", replicate, f)
        elif r.fetch_state == TRUNCATING:
            yield from attempt(f"truncate({f})", truncate, f)

    # ISR changes proposed by presumed leaders
    for b in brokers:
        if not s.presumes_leadership(b) or replicas[b].pending_isr is not None:
            continue
        isr = replicas[b].isr
        for f in brokers:
            if f == b:
                continue
            if f in isr:
                yield from attempt(f"shrink({b}, {f})", alter_isr, b, *(m for m in isr if m != f))
            else:
                yield from attempt(f"expand({b}, {f})", alter_isr, b, *sorted((*isr, f)))

    # Time and failures
    if bounds.allow_tick:
        yield from attempt("tick", _tick)
    if bounds.allow_crash:
        for b in brokers:
            if replicas[b].alive:
                yield from attempt(f"crash({b})", rp.crash, b)
                yield from attempt(f"checkpoint({b})", rp.checkpoint, b)
            else:
                yield from attempt(f"restart({b})", rp.restart, b)


def _complete(s: State, cfg: ReplicationConfig, node: int, req: int, error: int) -> State:
    return rp.complete_produce(s, cfg, node, req, error)


def _tick(s: State, cfg: ReplicationConfig) -> State:
    """Advance the clock past replica.lag.time.max.ms: every follower not at the LEO lags."""
    return rp.advance_clock(s, s.now_ms + cfg.replica_lag_time_max_ms + 1)
