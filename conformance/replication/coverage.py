"""Handler-outcome coverage of the replication slice: which keys (conformance.coverage) the model can
produce for a configuration (the denominator of the gate's coverage figure).

Keys are conformance.coverage's ``kind:outcome`` / ``kind:ERROR`` / ``kind``, plus
``fetch_handled:diverging`` for a Fetch answered with a diverging epoch (error NONE, no records).
The judge counts the keys of the events it accepted (conformance.replication.lockstep.Judge). What is
**reachable** is computed from the model: a bounded breadth-first search (conformance.replication.explore)
from the booted cluster; in every explored state every handler call worth trying (the search's
enabled actions, and the calls it skips because they change nothing, such as a Fetch answered
with an error or a metadata record ignored) is re-run as the events an implementation would
report (conformance.replication.pathevents.action_events). Added to it is ``STATIC_REACHABLE``: keys the
search's atomic actions cannot produce but the model judges and Kafka does (late responses,
consumers). The result is a lower bound of what the model allows: a key a campaign covers outside
it is shown as not reachable, which says the bounded search missed it.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Iterable

from kconform.conformance.coverage import outcome_key
from kconform.model.actions import SearchBounds, successors
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.replication import NotEnabled
from kconform.model.state import State
from kconform.traces import events as ev

REACH_BOUNDS = SearchBounds(max_records=1, max_leader_epoch=2, max_partition_epoch=4, allow_crash=True, allow_tick=True)
"""The bounds of the reachability search: one record, two leader changes, four partition epochs,
crashes and clock jumps. Small bounds reach deeper within the state cap, and depth (a stale leader,
a lagging follower) matters more for outcomes than many records."""
REACH_MAX_REPLICAS = 2
"""Configurations with more replicas are searched with this many (min.insync.replicas capped to it):
two replicas already have a leader and a follower that can each lag, crash, be fenced or be
stale; a third replica multiplies the interleavings (the search gets shallower) without adding an
outcome (measured: with three replicas and the same state cap it finds fewer keys)."""
REACH_MAX_STATES = 3_000
"""State cap of the reachability search (about three seconds)."""


def coverage_key(event: ev.Event) -> str:
    """The coverage key of ``event`` (conformance.coverage.outcome_key), except that a Fetch
    answered with a diverging epoch (error NONE, no records) is ``fetch_handled:diverging``."""
    if isinstance(event, ev.FetchHandled | ev.FetchCompleted) and event.error == ev.NONE and event.diverging_epoch >= 0:
        return f"{event.kind}:diverging"
    if isinstance(event, ev.ConsumerFetchWaitHandled) and event.parked:
        return f"{event.kind}:parked"
    if isinstance(event, ev.ReplicaFetchHandled) and event.preferred >= 0:
        return f"{event.kind}:preferred"
    if isinstance(event, ev.ReplicaFetchSent):
        return f"{event.kind}:{'preferred' if event.from_preferred else 'leader'}"
    return outcome_key(event)


_ANY_PROTOCOL = tuple(Protocol)
_EPOCH_QUERY = tuple(p for p in Protocol if p.uses_epoch_query)
_FENCED = tuple(p for p in Protocol if p.fenced)

STATIC_REACHABLE: tuple[tuple[str, tuple[Protocol, ...], str], ...] = (
    (
        "fetch_applied:ignored",
        _ANY_PROTOCOL,
        "a Fetch response arriving after the follower moved on (delayed or duplicated message); "
        "the search's round trips are atomic",
    ),
    (
        "epoch_query_applied:ignored",
        _EPOCH_QUERY,
        "an OffsetsForLeaderEpoch response arriving after the follower moved on (delayed message)",
    ),
    ("consumer_fetch_handled:NONE", _ANY_PROTOCOL, "consumers are not search actions"),
    (
        "consumer_fetch_handled:OFFSET_OUT_OF_RANGE",
        _ANY_PROTOCOL,
        "a consumer fetching past the leader's LEO (not a search action)",
    ),
    (
        "consumer_fetch_handled:NOT_LEADER_OR_FOLLOWER",
        _ANY_PROTOCOL,
        "a consumer fetching from a broker that does not lead (not a search action)",
    ),
    (
        "consumer_fetch_handled:FENCED_LEADER_EPOCH",
        _FENCED,
        "a consumer's KIP-320 currentLeaderEpoch behind the broker's (not a search action)",
    ),
)
"""(key, protocol rungs on which the model can produce it, why the bounded search misses it).
A follower's outcomes need a follower: they are left out for a single replica."""

_UNFENCED = tuple(p for p in Protocol if not p.fenced)

DELAYED_REACHABLE: tuple[tuple[str, tuple[Protocol, ...], str], ...] = (
    ("fetch_parked", _ANY_PROTOCOL, "a follower at the leader's LEO waits (replica.fetch.wait.max.ms > 0)"),
    ("fetch_completed:NONE", _ANY_PROTOCOL, "a parked follower Fetch answered on an append or at its deadline"),
    ("fetch_completed:FENCED_LEADER_EPOCH", _FENCED, "a parked follower Fetch when its leader became a follower"),
    ("fetch_completed:NOT_LEADER_OR_FOLLOWER", _UNFENCED, "the same without KIP-320's epoch in the request"),
    ("consumer_fetch_wait_handled:NONE", _ANY_PROTOCOL, "a waiting consumer Fetch with enough records"),
    ("consumer_fetch_wait_handled:parked", _ANY_PROTOCOL, "a waiting consumer Fetch at the HW"),
    ("consumer_fetch_wait_handled:OFFSET_OUT_OF_RANGE", _ANY_PROTOCOL, "a waiting consumer Fetch past the LEO"),
    ("consumer_fetch_wait_handled:FENCED_LEADER_EPOCH", _FENCED, "a waiting consumer Fetch with a stale epoch"),
    ("consumer_fetch_completed:NONE", _ANY_PROTOCOL, "a parked consumer Fetch answered on an HW advance or deadline"),
    ("consumer_fetch_completed:FENCED_LEADER_EPOCH", _FENCED, "a parked consumer Fetch when its broker lost the lead"),
    ("consumer_fetch_completed:NOT_LEADER_OR_FOLLOWER", _UNFENCED, "the same without KIP-320's epoch"),
)
"""Keys reachable only with delayed fetches (``ReplicationConfig.delayed_fetch``): the bounded
search has no delayed fetches (its Fetch round trips are atomic). The follower's need
replica.fetch.wait.max.ms > 0, the consumer's fetch.max.wait.ms > 0."""

LOG_START_REACHABLE: tuple[tuple[str, tuple[Protocol, ...], str], ...] = (
    ("delete_records_handled:NONE", _ANY_PROTOCOL, "DeleteRecords on the leader up to its HW (KIP-107)"),
    ("delete_records_handled:OFFSET_OUT_OF_RANGE", _ANY_PROTOCOL, "DeleteRecords past the leader's HW"),
    ("delete_records_handled:NOT_LEADER_OR_FOLLOWER", _ANY_PROTOCOL, "DeleteRecords sent to a follower"),
    ("retention_applied", _ANY_PROTOCOL, "retention on any replica up to its own HW (KAFKA-5634)"),
    ("fetch_handled:OFFSET_OUT_OF_RANGE", _ANY_PROTOCOL, "a follower fetching below the leader's log start"),
    ("fetch_applied:out_of_range", _ANY_PROTOCOL, "a follower restarting at its leader's log start (KAFKA-9491)"),
    ("consumer_fetch_handled:OFFSET_OUT_OF_RANGE", _ANY_PROTOCOL, "a consumer fetching below the log start"),
)
"""Keys reachable when log starts move (``ReplicationConfig.log_start_moves``): DeleteRecords and
retention are not actions of the bounded search (model.actions), so their outcomes and the
out-of-range fetches below a log start are listed here."""

FOLLOWER_FETCHING_REACHABLE: tuple[tuple[str, tuple[Protocol, ...], str], ...] = (
    ("replica_fetch_sent:leader", _ANY_PROTOCOL, "the follower-fetching consumer asks the leader"),
    ("replica_fetch_sent:preferred", _ANY_PROTOCOL, "it asks the preferred read replica the leader named"),
    ("replica_fetch_handled:preferred", _ANY_PROTOCOL, "the leader names the follower of the consumer's rack"),
    ("replica_fetch_handled:NONE", _ANY_PROTOCOL, "a leader or a follower serves records up to its own HW"),
    ("replica_fetch_handled:OFFSET_OUT_OF_RANGE", _ANY_PROTOCOL, "a follower whose log is behind the position"),
    ("replica_fetch_handled:NOT_LEADER_OR_FOLLOWER", _ANY_PROTOCOL, "a restarted broker before its metadata"),
    ("replica_fetch_handled:FENCED_LEADER_EPOCH", _FENCED, "a broker in a newer epoch than the consumer's metadata"),
    ("replica_fetch_handled:UNKNOWN_LEADER_EPOCH", _FENCED, "a follower behind the consumer's metadata"),
    ("replica_fetch_applied", _ANY_PROTOCOL, "the consumer handles an answer"),
)
"""Keys reachable only with KIP-392 follower fetching (``ReplicationConfig.follower_fetching``)
and a follower: the follower-fetching consumer is not a search action."""

_FOLLOWER_KINDS = ("fetch_", "epoch_query_", "replica_fetch_")

_cache: dict[ReplicationConfig, frozenset[str]] = {}


def search_config(cfg: ReplicationConfig) -> ReplicationConfig:
    """The configuration the reachability search runs: ``cfg`` with at most REACH_MAX_REPLICAS and
    without fetch waits (the search's Fetch round trips are atomic; DELAYED_REACHABLE adds the
    delayed-fetch keys)."""
    replicas = min(cfg.replicas, REACH_MAX_REPLICAS)
    return dataclasses.replace(
        cfg,
        replicas=replicas,
        min_insync_replicas=min(cfg.min_insync_replicas, replicas),
        replica_fetch_wait_max_ms=0,
        fetch_max_wait_ms=0,
    )


def searched_keys(
    cfg: ReplicationConfig, bounds: SearchBounds = REACH_BOUNDS, max_states: int = REACH_MAX_STATES
) -> frozenset[str]:
    """The keys of every event the bounded search produces: the boot events, then every handler
    call worth trying (``_probes``) in every state the breadth-first search explores."""
    from kconform.conformance.replication.explore import explore  # here: the judge imports this module
    from kconform.conformance.replication.pathevents import action_events, boot_events

    result = explore(cfg, bounds, stop_at_first=False, max_states=max_states, keep_graph=True)
    assert result.graph is not None
    keys = set(_keys(boot_events(cfg)))
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for state in result.graph.nodes:
            for label in _probes(state, cfg, bounds):
                try:
                    _s, events = action_events(cfg, state, label)
                except (NotEnabled, ValueError):
                    continue
                keys.update(_keys(events))
    finally:
        if was_enabled:
            gc.enable()
    return frozenset(keys)


def reachable_keys(cfg: ReplicationConfig) -> frozenset[str]:
    """The keys the model can produce for ``cfg``: the bounded search's, plus STATIC_REACHABLE's
    for its protocol rung (and DELAYED_REACHABLE's, LOG_START_REACHABLE's when ``cfg`` has them).
    Cached per configuration (in memory)."""
    key = search_config(cfg)
    found = _cache.get(cfg)
    if found is None:
        table = (
            STATIC_REACHABLE
            + tuple(
                row
                for row in DELAYED_REACHABLE
                if (cfg.fetch_max_wait_ms > 0 if row[0].startswith("consumer") else cfg.replica_fetch_wait_max_ms > 0)
            )
            + (LOG_START_REACHABLE if cfg.log_start_moves else ())
        )
        if cfg.follower_fetching:
            table += FOLLOWER_FETCHING_REACHABLE
        static = {
            k
            for k, rungs, _why in table
            if key.protocol in rungs and (key.replicas > 1 or not k.startswith(_FOLLOWER_KINDS))
        }
        found = searched_keys(key) | static
        _cache[cfg] = found
    return found


_ACK_ERRORS = (ev.NONE, ev.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ev.REQUEST_TIMED_OUT, ev.NOT_LEADER_OR_FOLLOWER)


def _probes(s: State, cfg: ReplicationConfig, bounds: SearchBounds) -> list[str]:
    """Every action label worth trying in ``s``: the search's enabled actions, and the handler
    calls it skips because they change nothing (error answers: a Fetch to a stale leader, a write
    to a follower, a rejected AlterPartition, a metadata record ignored) or that it never makes
    (delayed produces completed with an error)."""
    labels = dict.fromkeys(label for label, _post in successors(s, cfg, bounds))
    for b in cfg.brokers:
        labels.update(dict.fromkeys((f"write({b})", f"replicate({b})", f"truncate({b})")))
        labels.update(dict.fromkeys(f"metadata({b}, pe={rec.partition_epoch})" for rec in s.published))
        for dp in s.replica(b).produces:
            labels.update(dict.fromkeys(f"ack({b}, {dp.req}, {ev.ERRORS[e]})" for e in _ACK_ERRORS))
        for f in cfg.brokers:
            if f != b:
                labels.update(dict.fromkeys((f"shrink({b}, {f})", f"expand({b}, {f})")))
    return list(labels)


def _keys(events: Iterable[ev.Event]) -> Iterable[str]:
    return (coverage_key(e) for e in events)


__all__ = [
    "LOG_START_REACHABLE",
    "REACH_BOUNDS",
    "STATIC_REACHABLE",
    "coverage_key",
    "reachable_keys",
    "search_config",
    "searched_keys",
]
