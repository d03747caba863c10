"""The ladder of Kafka's replication bugs, rediscovered by breadth-first search over the model.

Each rung of model.config.Protocol is explored from the booted cluster with the atomic actions of
model.actions (hachikuji/kafka-specification's search: any published partition record may be
applied by any broker at any time, so zombie leaders and lagging followers arise by themselves).
The buggy rungs must yield a violation, with a shortest path, the fixed rungs none within the
stated bound. min.insync.replicas is 1 everywhere, as hachikuji's spec has no min ISR.

Figures are printed (run with ``-s``). For comparison, TLC on hachikuji's spec: truncate-to-HW
depth 9 / 3,191 states; KIP-101 depth 12 / 10,542 states; KIP-279 (3 replicas) depth 11. Our
depths are shorter because the boot (first election and LeaderAndIsr) is one initial state and a
fetch advances the leader's HW in the same atomic step; our state counts are larger because the
model is finer-grained (acks=all completions, min ISR, KRaft partition epochs and fencing).

``KCONFORM_BUDGET=small`` shrinks the bounded searches that prove absence (not the searches
that must reach a bug's depth).
"""

from __future__ import annotations

import os

import networkx as nx
import pytest

from kconform.conformance.replication.explore import ExploreResult, canonical, explore, replay
from kconform.model import replication as R
from kconform.model.actions import SearchBounds, booted_state, successors
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.invariants import INVARIANTS, check_state
from kconform.model.state import FETCHING, TRUNCATING, State
from tests.modelkit import every_leader_new

SMALL = os.environ.get("KCONFORM_BUDGET", "") == "small"

BOUNDS = SearchBounds(max_records=2, max_leader_epoch=3)
"""hachikuji's constants (MaxRecords 2, MaxLeaderEpoch 3)."""

DATA_LOSS = frozenset({"NoCommittedDataLoss", "StrongIsr"})
DIVERGENCE = frozenset({"NoDivergenceBelowHw", "StrongIsr"})
STRONG = frozenset({"NoCommittedDataLoss", "NoDivergenceBelowHw", "StrongIsr"})


def _cfg(protocol: Protocol, replicas: int = 2) -> ReplicationConfig:
    return ReplicationConfig(replicas=replicas, min_insync_replicas=1, protocol=protocol)


def _report(rung: str, cfg: ReplicationConfig, bounds: SearchBounds, res: ExploreResult) -> None:
    where = f"{cfg.replicas} replicas, {bounds.max_records} records, max leader epoch {bounds.max_leader_epoch}" + (
        f", max partition epoch {bounds.max_partition_epoch}" if bounds.max_partition_epoch is not None else ""
    )
    print(f"\n[ladder] {rung} ({where}): {res.summary()}")
    print(f"[ladder]   states per depth: {res.states_per_depth}")


def _search(
    rung: str,
    protocol: Protocol,
    names: frozenset[str] | None,
    replicas: int = 2,
    bounds: SearchBounds = BOUNDS,
    max_depth: int = 30,
    max_states: int = 3_000_000,
) -> ExploreResult:
    cfg = _cfg(protocol, replicas)
    res = explore(cfg, bounds, names, max_depth=max_depth, max_states=max_states)
    _report(rung, cfg, bounds, res)
    return res


def _before_last_truncate(cfg: ReplicationConfig, bounds: SearchBounds, path: tuple[str, ...]) -> tuple[State, int]:
    """The state just before the last ``truncate(f)`` of ``path``, and ``f``."""
    k = max(i for i, label in enumerate(path) if label.startswith("truncate("))
    return replay(cfg, bounds, path)[k], int(path[k][len("truncate(") : -1])


# ---------------------------------------------------------------------------------------------
# The search machinery


def test_booted_state_has_broker_0_leading_epoch_0() -> None:
    for protocol in Protocol:
        cfg = _cfg(protocol, 3)
        s = booted_state(cfg)
        assert s.controller.leader == 0 and s.controller.leader_epoch == 0
        assert s.controller.isr == (0, 1, 2) and not s.fenced
        assert s.presumes_leadership(0)
        for f in (1, 2):
            r = s.replica(f)
            assert r.leader == 0 and r.leader_epoch == 0
            assert r.fetch_state == (TRUNCATING if protocol.uses_epoch_query else FETCHING)


def test_successors_are_labelled_distinct_and_bounded() -> None:
    cfg = _cfg(Protocol.DIVERGING_EPOCH)
    s = booted_state(cfg)
    labels = [label for label, _ in successors(s, cfg, BOUNDS)]
    assert labels == ["fence(0)", "fence(1)", "move_leader(1)", "write(0)", "replicate(1)"]
    for _label, post in successors(s, cfg, BOUNDS):
        assert post != s
    at_bound = SearchBounds(max_records=0, max_leader_epoch=0)
    assert [label for label, _ in successors(s, cfg, at_bound)] == ["fence(1)", "replicate(1)"]
    ticking = SearchBounds(allow_tick=True, allow_crash=True)
    labels = [label for label, _ in successors(s, cfg, ticking)]
    assert {"tick", "crash(0)", "crash(1)"} <= set(labels)


def test_canonical_forgets_absolute_time_and_caps_ages() -> None:
    cfg = _cfg(Protocol.DIVERGING_EPOCH)
    lag = cfg.replica_lag_time_max_ms
    s = canonical(booted_state(cfg), cfg)
    assert canonical(s, cfg) == s
    once = canonical(R.advance_clock(s, lag + 1), cfg)
    twice = canonical(R.advance_clock(once, 5 * lag), cfg)
    assert once == twice != s
    assert once.now_ms == 0
    rem = once.replica(0).remotes[1]
    assert rem.last_caught_up_ms == -(lag + 1)
    # Shifting every timestamp by the same amount changes nothing canonical.
    late = R.advance_clock(booted_state(cfg), 0)
    assert canonical(late, cfg) == s


def test_canonical_forgets_when_a_follower_that_never_fetched_was_reset() -> None:
    """A crash (or becoming leader) resets the leader's view of each follower; its last-fetch time
    is unread until a fetch sets it, so the time of the reset is not part of the state."""
    cfg = _cfg(Protocol.DIVERGING_EPOCH)
    late = R.advance_clock(booted_state(cfg), cfg.replica_lag_time_max_ms + 1)
    # Crashing then canonicalising is canonicalising, crashing, canonicalising (the search's way).
    assert canonical(R.crash(late, cfg, 1), cfg) == canonical(R.crash(canonical(late, cfg), cfg, 1), cfg)


def test_bfs_path_is_a_shortest_path_in_the_graph() -> None:
    cfg = _cfg(Protocol.TRUNCATE_TO_HW)
    res = explore(cfg, BOUNDS, DATA_LOSS, max_depth=20, max_states=100_000, keep_graph=True)
    assert res.violation is not None and res.graph is not None
    init = canonical(booted_state(cfg), cfg)
    assert nx.shortest_path_length(res.graph, init, res.violation.state) == res.violation.depth
    assert replay(cfg, BOUNDS, res.violation.path)[-1] == res.violation.state
    with pytest.raises(ValueError, match="not enabled"):
        replay(cfg, BOUNDS, ["truncate(1)"])


def test_invariant_names_exist() -> None:
    assert set(INVARIANTS) >= (DATA_LOSS | DIVERGENCE | STRONG)


def test_restarted_broker_catches_up_to_the_latest_record_first() -> None:
    """A broker without partition state (just restarted) applies only the latest record: it
    cannot resurrect an old leadership (KRaft replays the metadata log before publishing)."""
    cfg = _cfg(Protocol.DIVERGING_EPOCH)
    bounds = SearchBounds(allow_crash=True)
    path = ["move_leader(1)", "move_leader(0)", "crash(1)", "fence(1)", "restart(1)", "unfence(1)"]
    s = replay(cfg, bounds, path)[-1]
    applied = [label for label, _ in successors(s, cfg, bounds) if label.startswith("metadata(1")]
    assert applied == [f"metadata(1, pe={s.published[-1].partition_epoch})"]


# ---------------------------------------------------------------------------------------------
# Model fixes the search found (regressions)


def test_no_ack_for_a_record_truncated_away_while_the_produce_waited() -> None:
    """Leader 0 writes record 0, becomes a follower and truncates it (to its HW), becomes leader
    again and writes record 1 at the same offset: the delayed produce of record 0 must not be
    acknowledged (Kafka completes it with NOT_LEADER_OR_FOLLOWER on becoming a follower)."""
    cfg = _cfg(Protocol.TRUNCATE_TO_HW)
    path = ["move_leader(1)", "fence(1)", "write(0)", "metadata(0, pe=1)", "metadata(0, pe=2)", "write(0)"]
    s = replay(cfg, BOUNDS, path)[-1]
    assert [dp.rid for dp in s.replica(0).produces] == [0, 1] and s.replica(0).hw == 1
    labels = [label for label, _ in successors(s, cfg, BOUNDS)]
    assert "ack(0, 1)" in labels and "ack(0, 0)" not in labels
    with pytest.raises(R.NotEnabled, match="no longer at offset"):
        R.complete_produce(s, cfg, 0, 0, 0)


def test_a_superseded_zombie_leader_may_lack_a_record_acked_in_a_later_epoch() -> None:
    """Record 0 is written in epoch 0 and acknowledged by the same broker leading epoch 2; a
    zombie leader of epoch 1 (fenced, never followed) lacks it: no committed data was lost."""
    cfg = _cfg(Protocol.DIVERGING_EPOCH)
    path = ["move_leader(1)", "fence(1)", "metadata(1, pe=1)", "write(0)", "metadata(0, pe=2)", "ack(0, 0)"]
    s = replay(cfg, BOUNDS, path)[-1]
    (acked,) = s.ghost.acked
    assert (acked.epoch, acked.leader_epoch) == (0, 2)
    assert s.presumes_leadership(1) and s.replica(1).leader_epoch == 1 and s.replica(1).leo == 0
    assert not [v for v in check_state(s, cfg) if not v.allowed]


# ---------------------------------------------------------------------------------------------
# The ladder: rungs with bugs


def test_truncate_to_hw_breaks_strong_isr() -> None:
    """Pre-KIP-101 (< 0.11): a follower that becomes a follower again truncates to its HW, which
    lags the leader's; the committed record then lives only on the leader."""
    res = _search("truncate-to-hw", Protocol.TRUNCATE_TO_HW, DATA_LOSS)
    v = res.violation
    assert v is not None and v.invariant in DATA_LOSS
    assert len(v.path) == v.depth == 6
    assert v.path[-1].startswith("metadata(")  # the LeaderAndIsr that makes it truncate


def test_truncate_to_hw_loses_an_acknowledged_record() -> None:
    """The same bug carried to its end: the truncated follower is elected and an acks=all record
    is gone (the KIP-101 motivating scenario)."""
    res = _search("truncate-to-hw (acked loss)", Protocol.TRUNCATE_TO_HW, frozenset({"NoCommittedDataLoss"}))
    v = res.violation
    assert v is not None and v.invariant == "NoCommittedDataLoss"
    assert len(v.path) == v.depth == 9


def test_kip_101_diverges_on_fast_leader_failover() -> None:
    """KIP-101 (0.11): the epoch answer carries no epoch; a follower holding an epoch its leader
    never saw truncates on that leader's answer and keeps a record the leader does not have (the
    KIP-279 scenario). With the 0.11 epoch cache (before KAFKA-7415: a new leader caches its epoch
    only with its first write) the shortest run is 10 actions (9 with the 2.1 cache)."""
    cfg = _cfg(Protocol.KIP_101)
    res = _search("kip-101", Protocol.KIP_101, DIVERGENCE)
    v = res.violation
    assert v is not None and v.invariant in DIVERGENCE
    assert len(v.path) == v.depth == 10
    # The truncation was answered by a leader that never had the follower's latest epoch.
    before, f = _before_last_truncate(cfg, BOUNDS, v.path)
    follower = before.replica(f)
    leader = before.replica(follower.leader)
    assert follower.epoch_cache[-1][0] not in {e for e, _ in leader.epoch_cache}


def _assert_stale_answer(cfg: ReplicationConfig, bounds: SearchBounds, path: tuple[str, ...]) -> None:
    """The last truncation in ``path`` was answered by a leader of an older epoch than the
    follower's (no currentLeaderEpoch fencing before KIP-320)."""
    before, f = _before_last_truncate(cfg, bounds, path)
    follower = before.replica(f)
    leader = before.replica(follower.leader)
    assert leader.leader_epoch < follower.leader_epoch or leader.leader_epoch < before.controller.leader_epoch


def test_kip_279_two_replicas_stale_leader_answer_breaks_weak_isr() -> None:
    """KIP-279 (2.0) with 2 replicas: a follower asks a leader still in an older epoch, which does
    not know the follower's epoch (UNDEFINED); the follower falls back to its HW and drops a
    record below the leader's HW (WeakIsr). StrongIsr needs a third replica. 10 actions with the
    2.0 epoch cache (before KAFKA-7415), 9 with the 2.1 one."""
    cfg = _cfg(Protocol.KIP_279)
    res = _search("kip-279 (2 replicas)", Protocol.KIP_279, None)
    v = res.violation
    assert v is not None and v.invariant == "WeakIsr"
    assert len(v.path) == v.depth == 10
    assert v.path[-1].startswith("truncate(")
    _assert_stale_answer(cfg, BOUNDS, v.path)


KIP_279_BOUNDS = SearchBounds(max_records=1, max_leader_epoch=2)
"""The smallest bound for the 3-replica KIP-279 counterexample (with BOUNDS: also depth 10, but
1,731,491 states and ~210 s)."""


def _every_leader_new(monkeypatch: pytest.MonkeyPatch) -> None:
    """Search as if a re-elected leader forgot its followers' LEOs like a new one, so that a
    3-replica search reaches the bug it is about, not Kafka's re-election hole at depth 9
    (test_reelected_leader_keeps_the_leo_of_a_follower_that_truncated, below)."""
    every_leader_new(monkeypatch)


@pytest.mark.slow
def test_kip_279_three_replicas_stale_leader_answer_breaks_strong_isr(monkeypatch: pytest.MonkeyPatch) -> None:
    """KIP-279 with 3 replicas: a follower moves to a stale leader's epoch and truncates on its
    answer, dropping a record the true leader has committed with it in the ISR (hachikuji's
    Kip320.tla: "a follower uses a leader with stale state to find the truncation offset").
    Fixed by KIP-320's currentLeaderEpoch. The bug's depth cannot be shrunk: ~50 s. Searched with
    every leader new (``_every_leader_new``)."""
    _every_leader_new(monkeypatch)
    cfg = _cfg(Protocol.KIP_279, 3)
    res = _search("kip-279 (3 replicas)", Protocol.KIP_279, STRONG, 3, KIP_279_BOUNDS, max_depth=12)
    v = res.violation
    assert v is not None and v.invariant == "StrongIsr"
    assert len(v.path) == v.depth == 10
    assert v.path[-1].startswith("truncate(")
    _assert_stale_answer(cfg, KIP_279_BOUNDS, v.path)


# ---------------------------------------------------------------------------------------------
# The ladder: fixed rungs


FIXED_BOUNDS = SearchBounds(max_records=2, max_leader_epoch=3, max_partition_epoch=3)
"""The fixed rungs' exhaustive bound in the fast tier (and so in CI)."""
DOCS_BOUNDS = SearchBounds(max_records=2, max_leader_epoch=3, max_partition_epoch=4)
"""The bound docs/protocol.md states: one more partition epoch (the slow tier at full budget)."""


@pytest.mark.parametrize("protocol", [Protocol.KIP_320, Protocol.DIVERGING_EPOCH], ids=lambda p: p.value)
def test_fixed_rungs_exhaust_two_replicas_without_violation(protocol: Protocol) -> None:
    """KIP-320 and truncation on fetch: the whole state space of 2 replicas, 2 records, leader
    epochs ≤ 3 and partition epochs ≤ 3, every invariant, no violation."""
    res = _search(protocol.value, protocol, None, 2, FIXED_BOUNDS, max_depth=100)
    assert res.violation is None
    assert res.exhausted


@pytest.mark.slow
@pytest.mark.skipif(SMALL, reason="about a minute: not in CI's budget (the fast tier exhausts partition epochs <= 3)")
@pytest.mark.parametrize("protocol", [Protocol.KIP_320, Protocol.DIVERGING_EPOCH], ids=lambda p: p.value)
def test_fixed_rungs_exhaust_two_replicas_at_the_bound_of_docs(protocol: Protocol) -> None:
    """The same with partition epochs ≤ 4 (KIP-320 ~220k states ~30 s; diverging-epoch ~200k
    states ~26 s on a quiet machine)."""
    res = _search(protocol.value, protocol, None, 2, DOCS_BOUNDS, max_depth=100)
    assert res.violation is None
    assert res.exhausted


@pytest.mark.slow
@pytest.mark.parametrize("protocol", [Protocol.KIP_320, Protocol.DIVERGING_EPOCH], ids=lambda p: p.value)
def test_fixed_rungs_survive_the_kip_279_bound(protocol: Protocol, monkeypatch: pytest.MonkeyPatch) -> None:
    """With 3 replicas and the bound where KIP-279 breaks StrongIsr at depth 10 (1 record,
    leader epochs ≤ 2), the fenced rungs break no invariant up to depth 10 (depth 8 with
    KCONFORM_BUDGET=small) but through Kafka's re-election rule: searched with every leader new
    (``_every_leader_new``); with Kafka's rule a 9-action run breaks WeakIsr and StrongIsr
    (test_reelected_leader_keeps_the_leo_of_a_follower_that_truncated)."""
    _every_leader_new(monkeypatch)
    depth = 8 if SMALL else 10
    res = _search(f"{protocol.value} (3 replicas)", protocol, None, 3, KIP_279_BOUNDS, max_depth=depth)
    assert res.violation is None
    assert res.max_depth == depth


def _reelection_hole(protocol: Protocol) -> list[str]:
    """Broker 0 writes record 0, follower 1 copies it (and says so: two fetches), leadership moves
    to broker 2, which never had it; broker 1 follows broker 2 and truncates it away; broker 2 is
    fenced and broker 0, which never applied epoch 1, is elected again (epoch 2) and applies that
    record: re-elected, it keeps broker 1's LEO 1 (Replica.resetReplicaState, isNewLeader false),
    so its HW passes record 0, which broker 1 no longer has; the acks=all produce is answered,
    broker 0 is fenced, broker 1 leads without the record."""
    truncate = "truncate(1)" if protocol.uses_epoch_query else "replicate(1)"
    first = ["truncate(1)"] if protocol.uses_epoch_query else []
    return [
        "write(0)",
        *first,
        "replicate(1)",
        "replicate(1)",
        "move_leader(2)",
        "metadata(2, pe=1)",
        "metadata(1, pe=1)",
        truncate,
        "fence(2)",
        "metadata(0, pe=2)",
        "ack(0, 0)",
        "fence(0)",
        "metadata(1, pe=3)",
    ]


@pytest.mark.parametrize("protocol", [Protocol.KIP_320, Protocol.DIVERGING_EPOCH], ids=lambda p: p.value)
def test_reelected_leader_keeps_the_leo_of_a_follower_that_truncated(
    protocol: Protocol, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kafka's re-election rule (KAFKA-2721) breaks WeakIsr and StrongIsr on the fixed rungs, 3
    replicas, 1 record, from the re-elected leader's makeLeader on, and loses an acks=all record.
    The near miss: a leader forgetting its followers' LEOs (every leader new) breaks nothing there."""
    cfg = _cfg(protocol, 3)
    bounds = SearchBounds(max_records=1, max_leader_epoch=3)
    path = _reelection_hole(protocol)
    states = replay(cfg, bounds, path)
    broken = [sorted({v.invariant for v in check_state(s, cfg) if not v.allowed}) for s in states]
    k = path.index("metadata(0, pe=2)") + 1
    assert broken[:k] == [[]] * k
    assert broken[k] == ["StrongIsr", "WeakIsr"]
    assert broken[-1] == ["NoCommittedDataLoss", "StrongIsr", "WeakIsr"]
    assert states[k].replica(0).hw == 1 and states[k].replica(1).leo == 0
    _every_leader_new(monkeypatch)
    states = replay(cfg, bounds, path[:k])
    assert states[-1].replica(0).hw == 0
    assert not [v for s in states for v in check_state(s, cfg) if not v.allowed]
