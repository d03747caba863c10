"""IsrExpansionProposed (model.isr_expansion): a leader proposes a follower back into its ISR at the
Fetch that finds it in sync (Partition.updateFollowerFetchState → maybeExpandIsr), before time moves
on; never demanded while an AlterPartition is in flight, while the follower is fenced or may still
be fenced in the leader's metadata cache (KIP-841), or when the follower is not in sync.

Firing: the census survivor ``LeaderEpochCache.start_offset_of`` returning nothing (the leader
never finds its epoch's start, so never expands on the KIP-320 rungs) and a leader that never
proposes an expansion, both caught in the zoo's ``isr-expiration``. Near misses: the clean
reference in every zoo scenario of the gate, and each condition of the rule one at a time.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.conformance.replication.scenarios import ISR_EXPIRATION, run_scenario, zoo
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.impl.replication.log import LeaderEpochCache
from kconform.impl.replication.partition import Partition
from kconform.model import invariants, isr_expansion, replication
from kconform.model.config import ReplicationConfig
from kconform.model.evolve import evolve
from kconform.model.records import Entry
from kconform.model.state import NOT_UNFENCED, PartitionRecord, PendingIsr, RemoteReplica, State, initial_state
from kconform.traces import events as ev
from tests.test_census_power import mutated_function

CFG = ReplicationConfig()


def _leading(follower_leo: int = 2, hw: int = 2) -> State:
    """Broker 0 leads epoch 1 (started at offset 1) with ISR [0, 1] and HW ``hw``; broker 2, out of
    the ISR, has just fetched from ``follower_leo``; every broker unfenced before record 3, which
    broker 0 received."""
    s = replace(initial_state(CFG), tracks_isr_expansion=True, fenced=frozenset(), now_ms=5_000)
    log = (Entry(0, 0, 1), Entry(1, 1, 2))
    leader = evolve(
        s.replicas[0],
        log=log,
        hw=hw,
        epoch_cache=((0, 0), (1, 1)),
        registered=True,
        leader=0,
        leader_epoch=1,
        partition_epoch=3,
        isr=(0, 1),
        remotes=(RemoteReplica(), RemoteReplica(leo=2), RemoteReplica(leo=follower_leo)),
        metadata_seen=3,
        unfenced_at=0,
    )
    s = s.with_replica(0, leader)
    for b in (1, 2):
        s = s.with_replica(b, evolve(s.replicas[b], registered=True, leader=0, leader_epoch=1, unfenced_at=0))
    return replace(s, controller=PartitionRecord(0, 1, (0, 1), 3))


def _violations(s: State) -> list[invariants.Violation]:
    return list(invariants.isr_expansion_proposed(s, CFG))


def test_an_in_sync_follower_left_out_when_time_moves_on_is_reported() -> None:
    s = isr_expansion.after_fetch(_leading(), CFG, 0, 2)
    assert s.ghost.owed_expansions == ((0, 2, 1),)
    assert not _violations(s)  # the same instant: the leader may still propose
    later = replication.advance_clock(s, s.now_ms + 1, CFG)
    assert later.ghost.owed_expansions == ()
    [v] = _violations(later)
    assert "leader 0 (epoch 1) did not propose follower 2" in v.message


def test_a_proposal_in_the_same_instant_meets_it() -> None:
    s = isr_expansion.after_fetch(_leading(), CFG, 0, 2)
    s = replication.propose_isr(s, CFG, 0, 99, (0, 1, 2))
    later = replication.advance_clock(s, s.now_ms + 1, CFG)
    assert later.ghost.late_expansions == () and not _violations(later)


@pytest.mark.parametrize(
    "why",
    ["below-hw", "below-epoch-start", "in-flight", "in-isr", "fenced", "unfenced-after-metadata", "not-leading"],
)
def test_no_expansion_is_owed(why: str) -> None:
    s = _leading()
    if why == "below-hw":
        s = _leading(follower_leo=1, hw=2)
    elif why == "below-epoch-start":
        s = _leading(follower_leo=0, hw=0)
    elif why == "in-flight":
        s = s.with_replica(0, evolve(s.replicas[0], pending_isr=PendingIsr(7, (0,), 1, 3)))
    elif why == "in-isr":
        s = s.with_replica(0, evolve(s.replicas[0], isr=(0, 1, 2)))
    elif why == "fenced":
        s = replace(s, fenced=frozenset({2}))
    elif why == "unfenced-after-metadata":
        s = s.with_replica(2, evolve(s.replicas[2], unfenced_at=4))  # KIP-841: the cache may hold it fenced
    else:
        s = s.with_replica(0, evolve(s.replicas[0], leader=1))
    s = isr_expansion.after_fetch(s, CFG, 0, 2)
    assert s.ghost.owed_expansions == ()
    assert not _violations(replication.advance_clock(s, s.now_ms + 1, CFG))


def test_an_obligation_lapses_when_leadership_or_the_isr_changes_first() -> None:
    owed = isr_expansion.after_fetch(_leading(), CFG, 0, 2)
    demoted = owed.with_replica(0, evolve(owed.replicas[0], leader=1, leader_epoch=2))
    joined = owed.with_replica(0, evolve(owed.replicas[0], isr=(0, 1, 2)))
    for s in (demoted, joined):
        assert not _violations(replication.advance_clock(s, s.now_ms + 1, CFG))


def test_unfencing_and_received_records_are_tracked() -> None:
    s = _leading()
    s = s.with_replica(2, evolve(s.replicas[2], unfenced_at=NOT_UNFENCED))
    assert isr_expansion.after_fetch(s, CFG, 0, 2).ghost.owed_expansions == ()  # crashed since: not unfenced
    pre = replace(s, fenced=frozenset({2}))
    s = isr_expansion.unfenced(pre, s, CFG, 2)
    assert s.replicas[2].unfenced_at == 4  # the first record after the controller's epoch 3
    assert isr_expansion.after_fetch(s, CFG, 0, 2).ghost.owed_expansions == ()
    s = isr_expansion.saw_metadata(s, 0, 4)
    assert isr_expansion.saw_metadata(s, 0, 2).replicas[0].metadata_seen == 4  # never back
    assert isr_expansion.after_fetch(s, CFG, 0, 2).ghost.owed_expansions == ((0, 2, 1),)


def test_the_clean_reference_expands_in_time_in_every_zoo_scenario() -> None:
    """The near miss in lockstep: every scenario of the gate passes, and in ``isr-expiration`` the
    followers the leader shrank out after the stall are proposed back in."""
    for scenario in zoo(GATE_CONFIG):
        run = run_scenario(ReferenceCluster(), scenario, GATE_CONFIG, frozenset())
        assert not run.failed, (scenario.name, run.failure)
    run = run_scenario(ReferenceCluster(), ISR_EXPIRATION, GATE_CONFIG, frozenset())
    proposed = [e.isr for step in run.steps for e in step.events if isinstance(e, ev.IsrChangeProposed)]
    assert (1,) in proposed and proposed[-1] == (0, 1, 2)


PLANTED = {
    "never-expands": (Partition, "isr_expand_proposal", lambda self, follower: None),
    "census-start-offset-of": (
        LeaderEpochCache,
        "start_offset_of",
        mutated_function(
            "kconform.impl.replication.log",
            "kconform.impl.replication.log:LeaderEpochCache.start_offset_of:drop:5460ae6f",
            "LeaderEpochCache",
            "start_offset_of",
        ),
    ),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_leader_that_does_not_expand_is_caught(bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    owner, name, planted = PLANTED[bug]
    monkeypatch.setattr(owner, name, planted)
    run = run_scenario(ReferenceCluster(), ISR_EXPIRATION, GATE_CONFIG, frozenset())
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == ("invariant-violation", "IsrExpansionProposed")
