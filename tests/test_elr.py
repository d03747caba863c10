"""Eligible Leader Replicas (KIP-966), the ``eligible.leader.replicas.version=1`` rung: the
controller's rules (model.elr), KIP-903's stale-incarnation fence it relies on, the invariants
(ElrDisjointFromIsr, ElrOnlyBelowMinIsr, ElrDurability, LeaderUnfenced) and the last replica
standing: a reachable loss of an acks=all record without ELR, none with it (docs/elr.md)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from kconform.conformance.replication.explore import explore, replay
from kconform.model import elr
from kconform.model import invariants as I
from kconform.model import replication as R
from kconform.model.actions import SearchBounds
from kconform.model.config import ConfigError, ReplicationConfig
from kconform.model.errors import INELIGIBLE_REPLICA, NONE
from kconform.model.state import NO_BROKER_EPOCH, PendingIsr, State
from kconform.traces.events import BrokerFenced, BrokerUnfenced
from tests.modelkit import booted, replicate

if TYPE_CHECKING:
    from kconform.conformance.runner import LockstepRun
    from kconform.impl.replication.controller import Controller

PLAIN = ReplicationConfig(replicas=2, flush_interval_ms=1_000)
ELR = replace(PLAIN, eligible_leader_replicas_version=1)
BUDGET_SMALL = os.environ.get("KCONFORM_BUDGET") == "small"
BOUNDS = SearchBounds(max_records=1, max_leader_epoch=2, max_partition_epoch=6, allow_crash=True)

LAST_REPLICA_STANDING = (
    "fence(1)",  # the controller shrinks the ISR to [0] (ELR: [1]); broker 0 has not seen it yet
    "fence(0)",  # the last ISR member is fenced: without ELR it stays in the ISR, leaderless
    "write(0)",  # broker 0 still presumes leadership with ISR [0, 1]
    "replicate(1)",
    "replicate(1)",
    "ack(0, 0)",  # acks=all answered: both replicas hold record 0
    "crash(0)",  # unflushed (log.flush.interval.ms): record 0 is gone from broker 0
    "restart(0)",
    "unfence(0)",  # without ELR: re-elected from the ISR [0]; with ELR: an unclean shutdown
    "metadata(0, pe=3)",
)
"""The shortest path explore's graph holds to an ElrDurability violation without ELR (depth 10)."""


def _elr_names(s: State, cfg: ReplicationConfig, allowed: bool) -> set[str]:
    return {v.invariant for v in I.check_state(s, cfg) if v.allowed == allowed}


def test_the_setting_is_optional_and_bounded() -> None:
    assert "eligible_leader_replicas_version" not in PLAIN.to_json()
    assert ReplicationConfig.from_json(ELR.to_json()) == ELR and ELR.elr and not PLAIN.elr
    with pytest.raises(ConfigError, match=r"eligible_leader_replicas_version must be 0\.\.1"):
        ReplicationConfig(eligible_leader_replicas_version=2)


def test_target_elr_follows_partition_change_builder() -> None:
    cfg = ReplicationConfig()  # 3 replicas, min ISR 2
    assert elr.target_elr(cfg, (0, 1, 2), (0, 1), ()) == ()  # still at min ISR: no ELR
    assert elr.target_elr(cfg, (0, 1), (0,), ()) == (1,)  # below min ISR: the leaver enters
    assert elr.target_elr(cfg, (0,), (), (1,)) == (0, 1)  # the ISR may become empty
    assert elr.target_elr(cfg, (0,), (), (1,), frozenset({1})) == (0,)  # unclean shutdown: out
    assert elr.target_elr(cfg, (0,), (0, 2), (1,)) == ()  # back at min ISR: cleared


def test_election_order_isr_elr_last_known_unclean() -> None:
    cfg = ReplicationConfig()
    fenced = frozenset({0})
    assert elr.elect(cfg, (0, 2), (1,), (), fenced) == (2, (0, 2), (1,), False)
    assert elr.elect(cfg, (), (0, 1), (0,), fenced) == (1, (1,), (0,), False)  # clean, from the ELR
    assert elr.elect(cfg, (), (), (2,), fenced) == (2, (2,), (), True)  # last known leader: unclean
    assert elr.elect(cfg, (), (), (0,), fenced) == (-1, (), (), False)  # fenced: KAFKA-19522 fix
    assert elr.elect(cfg, (), (0,), (1,), fenced) == (-1, (), (0,), False)  # ELR not empty: wait
    unclean = replace(cfg, unclean_leader_election=True)
    assert elr.elect(unclean, (), (), (), fenced) == (1, (1,), (), True)


def test_kafka_19522_fenced_last_known_leader_is_caught() -> None:
    """The bug (canElectLastKnownLeader returning true for a fenced broker, fixed by KAFKA-19522
    in 4.1) elects a fenced broker; LeaderUnfenced fires on its result, the fixed rule is silent."""
    s = booted(ELR)
    s, _ = R.controller_fence(s, ELR, 1)
    s, _ = R.controller_fence(s, ELR, 0)
    assert (s.controller.leader, s.controller.isr, s.elr, s.last_known_elr) == (-1, (), (0, 1), (0,))
    s = replace(s, elr=())  # both had unclean shutdowns
    leader, isr, _, _ = elr.elect(ELR, (), (), s.last_known_elr, s.fenced, fenced_last_known=True)
    buggy = replace(s, controller=replace(s.controller, leader=leader, isr=isr))
    assert "LeaderUnfenced" in _elr_names(buggy, ELR, allowed=False)
    fixed = elr.elect(ELR, (), (), s.last_known_elr, s.fenced)
    assert fixed[0] == -1 and "LeaderUnfenced" not in _elr_names(s, ELR, allowed=False)


def test_last_replica_standing_loses_an_acked_record_without_elr() -> None:
    states = replay(PLAIN, BOUNDS, LAST_REPLICA_STANDING)
    end = states[-1]
    vs = {v.invariant: v for v in I.check_state(end, PLAIN)}
    assert vs["ElrDurability"].allowed and "last replica standing" in vs["ElrDurability"].allowed_because
    assert vs["NoCommittedDataLoss"].allowed  # the old rung's contract permits it (a crash lost data)
    assert not [v for v in vs.values() if not v.allowed]


def test_with_elr_the_crashed_last_member_is_not_elected() -> None:
    path = list(LAST_REPLICA_STANDING[:-1])
    states = replay(ELR, BOUNDS, path)
    s = states[-1]
    assert s.controller.leader == -1 and s.controller.isr == () and s.elr == (1,)  # 0 left ISR and ELR
    s, election = R.controller_unfence(s, ELR, 1)
    assert (election.record.leader, election.record.isr, election.unclean) == (1, (1,), False)
    s, _ = R.apply_metadata(s, ELR, 1, s.controller)
    assert s.replica(1).log[0].rid == 0 and not _elr_names(s, ELR, allowed=False)


def test_elr_durability_near_miss_two_lossy_crashes_are_permitted() -> None:
    s = replay(ELR, BOUNDS, LAST_REPLICA_STANDING[:-1])[-1]
    lost = replace(s, ghost=replace(s.ghost, lossy_crashes=frozenset({0, 1})))
    lost = lost.with_replica(0, replace(lost.replica(0), leader=0, leader_epoch=5, registered=True))
    vs = [v for v in I.check_state(lost, ELR, frozenset({"ElrDurability"}))]
    assert vs and all(v.allowed for v in vs) and ">= min.insync.replicas" in vs[0].allowed_because
    one = replace(lost, ghost=replace(lost.ghost, lossy_crashes=frozenset({0})))
    assert not I.check_state(one, ELR, frozenset({"ElrDurability"}))[0].allowed


def test_kip_903_fences_an_expansion_with_a_stale_incarnation() -> None:
    """A restarted follower's old fetches must not put it back in the ISR (KAFKA-14139, KIP-903):
    explore found the ELR rung losing a record through that hole before the check existed."""
    cfg = replace(ELR, replicas=3)
    s = booted(cfg)
    s = replicate(replicate(s, cfg, 1), cfg, 2)
    s, _ = R.controller_fence(s, cfg, 2)
    s = R.restart(R.crash(s, cfg, 2), cfg, 2)
    s, _ = R.controller_unfence(s, cfg, 2)
    s = R.apply_alter_partition_response(s, cfg, 0, 0, NONE, s.controller.isr, s.controller.partition_epoch)
    stale = PendingIsr(0, (0, 1, 2), s.controller.leader_epoch, s.controller.partition_epoch, (0, 0, 0))
    assert R.controller_alter_partition(s, cfg, 0, stale)[1] == INELIGIBLE_REPLICA
    fresh = replace(stale, broker_epochs=(0, 0, 1))
    assert R.controller_alter_partition(s, cfg, 0, fresh)[1] == NONE
    old_rung = replace(cfg, eligible_leader_replicas_version=0)
    assert R.controller_alter_partition(s, old_rung, 0, stale)[1] == NONE
    # a member the leader has not heard from is sent as -1 and not checked (Partition.addBrokerEpochToIsr,
    # ReplicationControlManager.ineligibleReplicasForIsr): Kafka accepts, so must the model
    unheard = replace(stale, broker_epochs=(0, 0, NO_BROKER_EPOCH))
    assert R.controller_alter_partition(s, cfg, 0, unheard)[1] == NONE


def test_a_new_leader_has_heard_from_no_follower() -> None:
    """ReplicaState.brokerEpoch starts empty and resets when the broker becomes leader: its first
    AlterPartition names every follower it has not heard from with -1 (KIP-903)."""
    cfg = replace(ELR, replicas=3)
    s = booted(cfg)
    assert all(rem.broker_epoch == NO_BROKER_EPOCH for rem in s.replica(s.controller.leader).remotes)
    s = replicate(s, cfg, 1)
    leader = s.replica(s.controller.leader)
    assert [leader.remotes[f].broker_epoch for f in (1, 2)] == [0, NO_BROKER_EPOCH]


@pytest.mark.slow
def test_explore_finds_no_loss_with_elr_as_deep_as_the_loss_without() -> None:
    """Breadth-first to the depth of the last-replica-standing loss (10; 12 at the full budget):
    no violation of any invariant on the ELR rung (explore's own search, every invariant)."""
    depth = 10 if BUDGET_SMALL else 12
    result = explore(ELR, BOUNDS, max_depth=depth, max_states=400_000)
    assert not result.found, result.summary()
    assert result.states_per_depth[-1] > 0 and len(result.states_per_depth) == depth + 1


REF_ELR = ReplicationConfig(eligible_leader_replicas_version=1)  # 3 replicas, min ISR 2


def _run(scenario: str, cfg: ReplicationConfig, mutants: frozenset[str] = frozenset()) -> LockstepRun:
    from kconform.conformance.replication.scenarios import SCENARIOS, run_scenario
    from kconform.impl.replication.cluster import ReferenceCluster

    return run_scenario(ReferenceCluster(), SCENARIOS[scenario], cfg, mutants)


def _controller(run: LockstepRun) -> Controller:
    from kconform.impl.replication.cluster import ReferenceCluster

    assert isinstance(run.adapter, ReferenceCluster)
    return run.adapter.cluster.controller


def test_the_elr_scenarios_run_only_on_the_elr_rung() -> None:
    from kconform.conformance.replication.scenarios import zoo

    names = {s.name for s in zoo(REF_ELR)}
    assert {"elr-last-known-leader", "elr-unclean-shutdown"} <= names
    assert "elr-last-known-leader" not in {s.name for s in zoo(ReplicationConfig())}


@pytest.mark.parametrize("scenario", ["elr-last-known-leader", "elr-unclean-shutdown", "elr-stale-incarnation"])
def test_the_reference_controller_conforms_on_the_elr_rung(scenario: str) -> None:
    run = _run(scenario, REF_ELR)
    assert run.failure is None
    controller = _controller(run)
    assert controller.record.leader == 0 and controller.elr == ()  # broker 0 leads again at the end


def test_the_reference_empties_the_isr_and_elects_the_last_known_leader() -> None:
    """elr-last-known-leader end to end: after the three crashes the ISR was empty with broker 0
    in the ELR; it re-registers after an unclean shutdown and is elected uncleanly as the last
    known leader (KAFKA-19522's fixed rule)."""
    run = _run("elr-last-known-leader", REF_ELR)
    assert run.failure is None
    events = [e for step in run.steps for e in step.events]
    fenced = [e for e in events if isinstance(e, BrokerFenced) and e.broker == 0]
    assert fenced and fenced[-1].isr == () and fenced[-1].leader == -1
    unfenced = [e for e in events if isinstance(e, BrokerUnfenced) and e.broker == 0]
    assert unfenced[-1].leader == 0 and unfenced[-1].unclean


@pytest.mark.parametrize(
    ("mutant", "scenario"),
    [
        ("elect-fenced-last-known-leader", "elr-last-known-leader"),
        ("unclean-shutdown-keeps-elr", "elr-unclean-shutdown"),
        ("no-broker-epoch-check", "elr-stale-incarnation"),
    ],
)
def test_each_elr_mutant_is_caught_by_its_scenario(mutant: str, scenario: str) -> None:
    from kconform.impl.replication import mutants as M

    assert M.MUTANT_CONFIG[mutant] == {"eligible_leader_replicas_version": 1}
    run = _run(scenario, REF_ELR, frozenset({mutant}))
    assert run.failure is not None and run.failure.verdict == "non-conformance"
    expected = "alter_partition_handled" if mutant == "no-broker-epoch-check" else "broker_unfenced"
    assert run.failure.name.startswith(expected)


def test_the_stale_incarnation_scenario_reaches_the_kip_903_refusal() -> None:
    """The clean run of elr-stale-incarnation: the expansion carrying broker 1's previous
    incarnation is refused with INELIGIBLE_REPLICA (and judged conformant)."""
    from kconform.traces.events import AlterPartitionHandled

    run = _run("elr-stale-incarnation", REF_ELR)
    assert run.failure is None
    answers = [e for step in run.steps for e in step.events if isinstance(e, AlterPartitionHandled)]
    assert any(e.error == INELIGIBLE_REPLICA for e in answers)


def test_kip_903_the_reference_controller_refuses_a_stale_incarnation() -> None:
    """The reference controller's AlterPartition check: a member whose broker epoch (as the leader
    last saw it) is not its current one is INELIGIBLE_REPLICA; without ELR the epochs are not sent."""
    from kconform.impl.replication.cluster import ReferenceCluster
    from kconform.impl.replication.messages import AlterPartitionRequest

    adapter = ReferenceCluster()
    adapter.reset(REF_ELR, 0, frozenset())
    controller = adapter.cluster.controller
    record = controller.record
    controller.new_incarnation(1)
    stale = AlterPartitionRequest(record.leader, record.leader_epoch, record.partition_epoch, (0, 1), (0, 0))
    current = AlterPartitionRequest(record.leader, record.leader_epoch, record.partition_epoch, (0, 1), (0, 1))
    assert controller.alter_partition_error(record.leader, stale) == INELIGIBLE_REPLICA
    assert controller.alter_partition_error(record.leader, current) == NONE
