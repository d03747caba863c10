"""A broker becoming leader in a new leader epoch resets its followers' state by Kafka's
Replica.resetReplicaState(now, leaderEndOffset, isNewLeader, isFollowerInSync) (Partition.makeLeader):
a new leader forgets their LEOs, a leader re-elected without having left leadership keeps them
(KAFKA-2721) and its HW moves at once. The model accepts Kafka's answer; the model that reset every
follower on every leader epoch flagged it; a new leader that keeps stale LEOs is caught."""

from __future__ import annotations

import pytest

from kconform.conformance.judge import Finding
from kconform.conformance.replication.scenarios import (
    NEW_LEADER_FORGETS_FOLLOWER_LEO,
    REELECTED_LEADER_KEEPS_FOLLOWER_LEO,
    Scenario,
    run_scenario,
    zoo,
)
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.runner import LockstepRun
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.impl.replication.messages import FetchRequest, FetchResponse, MetadataUpdate, ProduceRequest
from kconform.impl.replication.mutants import NEW_LEADER_KEEPS_FOLLOWER_LEO
from kconform.model import replication
from kconform.model.config import ReplicationConfig
from kconform.model.records import Entry
from kconform.model.state import RemoteReplica, Replica
from kconform.traces import events as ev
from kconform.traces import operations as o
from tests.modelkit import every_leader_new

CFG = ReplicationConfig(replicas=2)
NOW = 100_000


def _leader_knowing(leo: int, caught_up_ms: int) -> Replica:
    """Broker 0 leading with LEO 11, having seen follower 1 fetch at ``leo`` (ReplicaTest's
    updateFetchState(followerFetchOffset = 10, leaderEndOffset = 10), then the leader appends)."""
    seen = RemoteReplica(leo=leo, last_caught_up_ms=caught_up_ms, last_fetch_leader_leo=leo, last_fetch_ms=caught_up_ms)
    log = tuple(Entry(o, 0, o) for o in range(11))
    return Replica(log=log, leader=0, leader_epoch=0, remotes=(RemoteReplica(), seen))


@pytest.mark.parametrize("in_sync", [True, False])
def test_a_reelected_leader_keeps_the_follower_leo_and_resets_its_times(in_sync: bool) -> None:
    """ReplicaTest.testResetReplicaStateWhenLeaderIsReelectedAndReplicaIs(Not)InSync: LEO 10 kept;
    caught up and last fetch now (in sync) or never (Kafka's 0); last fetch leader LEO 11 in sync."""
    r = _leader_knowing(10, NOW - 5_000)
    rem = replication.reset_remotes(CFG, r, (0, 1) if in_sync else (0,), NOW, is_new_leader=False)[1]
    assert rem.leo == 10
    if in_sync:
        assert (rem.last_caught_up_ms, rem.last_fetch_ms, rem.last_fetch_leader_leo) == (NOW, NOW, 11)
    else:
        assert rem.last_caught_up_ms is None and rem.last_fetch_leader_leo == -1


@pytest.mark.parametrize("in_sync", [True, False])
def test_a_new_leader_forgets_the_follower_leo(in_sync: bool) -> None:
    """ReplicaTest.testResetReplicaStateWhenNewLeaderIsElectedAndReplicaIs(Not)InSync: LEO unknown,
    no fetch seen, caught up now only in sync."""
    r = _leader_knowing(10, NOW - 5_000)
    rem = replication.reset_remotes(CFG, r, (0, 1) if in_sync else (0,), NOW, is_new_leader=True)[1]
    assert rem == RemoteReplica(last_caught_up_ms=NOW if in_sync else None)


def _run(
    scenario: Scenario, mutants: frozenset[str] = frozenset(), cfg: ReplicationConfig = GATE_CONFIG
) -> LockstepRun:
    return run_scenario(ReferenceCluster(), scenario, cfg, mutants)


def _becomes_leader(run: LockstepRun) -> list[tuple[int, int]]:
    """(leader epoch, HW) of every become_leader of broker 0 after epoch 0."""
    return [
        (e.leader_epoch, e.hw)
        for step in run.steps
        for e in step.events
        if isinstance(e, ev.MetadataApplied) and e.node == 0 and e.outcome == "become_leader" and e.leader_epoch > 0
    ]


def _failure(run: LockstepRun) -> Finding:
    assert run.failure is not None
    return run.failure


@pytest.mark.parametrize("cfg", [ReplicationConfig(), GATE_CONFIG], ids=["default", "gate"])
def test_the_reelected_leader_moves_its_hw_at_once_and_conforms(cfg: ReplicationConfig) -> None:
    run = _run(REELECTED_LEADER_KEEPS_FOLLOWER_LEO, cfg=cfg)
    assert not run.failed, run.failure
    assert _becomes_leader(run) == [(2, 1)]  # follower 1's LEO 1 kept: HW 1 as it becomes leader


def test_the_model_that_reset_every_follower_flags_kafkas_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model before: every leader epoch forgot the followers' LEOs, so the HW stayed 0 and
    Kafka's (and the reference's) HW 1 was non-conformance: a false alarm."""
    every_leader_new(monkeypatch)
    finding = _failure(_run(REELECTED_LEADER_KEEPS_FOLLOWER_LEO))
    assert (finding.verdict, finding.name) == ("non-conformance", "metadata_applied")
    assert "hw: implementation says 1, model says 0" in finding.message


def test_a_new_leader_waits_for_its_followers_fetches() -> None:
    """The near miss: broker 0 follows epoch 1 before leading epoch 2, so it is a new leader
    (isNewLeader) and its HW stays 0 until follower 1 fetches."""
    run = _run(NEW_LEADER_FORGETS_FOLLOWER_LEO)
    assert not run.failed, run.failure
    assert _becomes_leader(run) == [(2, 0)]


def test_a_new_leader_keeping_stale_follower_leos_is_caught() -> None:
    run = _run(NEW_LEADER_FORGETS_FOLLOWER_LEO, frozenset({NEW_LEADER_KEEPS_FOLLOWER_LEO}))
    finding = _failure(run)
    assert (finding.verdict, finding.name) == ("non-conformance", "metadata_applied")
    assert "hw: implementation says 1, model says 0" in finding.message
    # the mutant changes nothing for a leader re-elected without having left leadership
    assert not _run(REELECTED_LEADER_KEEPS_FOLLOWER_LEO, frozenset({NEW_LEADER_KEEPS_FOLLOWER_LEO})).failed


def test_both_scenarios_are_in_the_zoo_of_every_three_replica_gate() -> None:
    for cfg in (ReplicationConfig(), GATE_CONFIG):
        names = [s.name for s in zoo(cfg)]
        assert names[-2:] == [REELECTED_LEADER_KEEPS_FOLLOWER_LEO.name, NEW_LEADER_FORGETS_FOLLOWER_LEO.name]


def test_the_reference_walks_into_kafkas_reelection_hole() -> None:
    """Kafka's rule is not free (docs/protocol.md, model-level search): follower 1 copies record 1
    and tells leader 0 so; leadership moves to broker 2, which never had it, and broker 1 truncates
    it away under broker 2; broker 0 hears of none of it (every epoch-1 record to it is dropped)
    until broker 2 is fenced and broker 0 is elected again (epoch 2). Re-elected, it keeps broker
    1's LEO 1, its HW becomes 1 and it answers the acks=all produce: the reference, being Kafka's,
    breaks WeakIsr in lockstep with the model, and the judge says so."""
    rc = ReferenceCluster()
    run = LockstepRun(rc, ReplicationConfig(), 0, frozenset())
    run.boot()
    network = rc.cluster.world.network  # its queue list is replaced when a broker crashes

    def at(payload: type, src: int | None = None, dst: int | None = None, pe: int | None = None) -> int | None:
        for i, m in enumerate(network.queue):
            kind = isinstance(m.payload, payload) and src in (None, m.src) and dst in (None, m.dst)
            if kind and (pe is None or (isinstance(m.payload, MetadataUpdate) and m.payload.partition_epoch == pe)):
                return i
        return None

    def deliver(payload: type, src: int | None = None, dst: int | None = None, pe: int | None = None) -> None:
        i = at(payload, src, dst, pe)
        assert i is not None, (payload, src, dst, pe)
        run.apply(o.Deliver(i))

    def fetch(src: int, dst: int) -> None:
        """Follower ``src``'s next Fetch to ``dst`` (after its backoff, at most a second) and the answer."""
        for _ in range(10):
            if at(FetchRequest, src, dst) is not None:
                break
            run.apply(o.Advance(100))
        deliver(FetchRequest, src, dst)
        deliver(FetchResponse, dst=src)

    def drop_metadata_to_0() -> None:
        while (i := at(MetadataUpdate, dst=0)) is not None:
            run.apply(o.Drop(i))

    run.apply(o.Run(1000))
    run.apply(o.Produce(1, -1))
    deliver(ProduceRequest, dst=0)
    for _ in range(3):  # broker 1 fetches record 1, then fetches at 1: leader 0 knows its LEO is 1
        fetch(1, 0)
    assert rc.cluster.brokers[0].log.hw == 0  # broker 2, in the ISR, has not fetched it
    run.apply(o.MoveLeader(2))
    drop_metadata_to_0()
    deliver(MetadataUpdate, dst=2, pe=1)
    deliver(MetadataUpdate, dst=1, pe=1)
    fetch(1, 2)  # diverging epoch: broker 1 truncates record 1 away
    assert rc.cluster.brokers[1].log.leo == 0
    run.apply(o.Crash(2))
    for _ in range(12):
        run.apply(o.Advance(1000))
        if rc.cluster.controller.record.leader_epoch == 2:
            break
        drop_metadata_to_0()
    record = rc.cluster.controller.record
    assert (record.leader, record.leader_epoch, record.isr) == (0, 2, (0, 1))
    assert not run.failed, run.failure
    deliver(MetadataUpdate, dst=0, pe=2)
    finding = _failure(run)
    assert (finding.verdict, finding.name) == ("invariant-violation", "WeakIsr")
    assert finding.event == ev.MetadataApplied(0, 0, 2, (0, 1), 2, "become_leader", -1, 1)
    answered = [(e.node, e.error) for e in run.steps[-1].events if isinstance(e, ev.ProduceCompleted)]
    assert answered == [(0, ev.NONE)]  # the acks=all produce of record 1 is acknowledged
