"""Each mutant changes the reference brokers' behaviour in a scenario aimed at its bug."""

from __future__ import annotations

import pytest

from kconform.impl import MUTANTS, ReferenceCluster
from kconform.impl.mutants import REPLICATION, mutants_of
from kconform.impl.replication.messages import (
    AlterPartitionRequest,
    EpochQueryRequest,
    EpochQueryResponse,
    FetchRequest,
    FetchResponse,
    MetadataUpdate,
    ProduceRequest,
)
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops
from tests.implkit import deliver, of, replicate
from tests.test_impl_protocols import fast_failover


def _boot(mutants: frozenset[str], **cfg: object) -> ReferenceCluster:
    rc = ReferenceCluster()
    rc.reset(ReplicationConfig(**cfg), 0, mutants)  # type: ignore[arg-type]
    return rc


def test_every_mutant_names_its_issue_and_symptom() -> None:
    assert sorted(mutants_of(REPLICATION)) == sorted(
        [
            "truncate-to-hw",
            "kip-101-truncation",
            "no-epoch-fencing",
            "hw-below-min-isr",
            "early-isr-expand",
            "hw-ignores-pending-isr",
            "acks-all-no-wait",
            "delayed-fetch-misses-hw",
            "delayed-fetch-early-return",
            "delayed-fetch-reads-leo",
            "delayed-fetch-survives-leader-change",
            "elect-fenced-last-known-leader",
            "unclean-shutdown-keeps-elr",
            "read-replica-out-of-isr",
            "reset-on-follower-out-of-range",
            "no-broker-epoch-check",
            "kafka-5634-retention-past-hw",
            "kafka-9491-start-at-keeps-hw",
            "new-leader-keeps-follower-leo",
            "follower-ignores-new-leader",
            "fetch-with-records-unanswered",
        ]
    )
    for name, doc in MUTANTS.items():
        assert "KIP-" in doc or "KAFKA-" in doc, name
        assert "Symptom" in doc, name


# ---------------------------------------------------------------------------- truncate-to-hw


def _follower_with_records_above_its_hw(mutants: frozenset[str]) -> list[ev.Event]:
    """Broker 2 fetched a record but not yet the HW that covers it; leadership then moves."""
    rc = _boot(mutants)
    replicate(rc)
    rc.apply(ops.Produce(rid=1, acks=1))
    deliver(rc, ProduceRequest, dst=0)
    rc.apply(ops.Advance(500))
    deliver(rc, FetchRequest, src=2)
    deliver(rc, FetchResponse, dst=2)
    assert (rc.cluster.brokers[2].log.leo, rc.cluster.brokers[2].log.hw) == (1, 0)
    rc.apply(ops.MoveLeader(1))
    return deliver(rc, MetadataUpdate, dst=2)


def test_truncate_to_hw_drops_records_above_the_local_hw() -> None:
    normal = of(_follower_with_records_above_its_hw(frozenset()), ev.MetadataApplied)
    mutant = of(_follower_with_records_above_its_hw(frozenset({"truncate-to-hw"})), ev.MetadataApplied)
    assert [(e.outcome, e.truncated_to) for e in normal] == [("become_follower", -1)]
    assert [(e.outcome, e.truncated_to) for e in mutant] == [("become_follower", 0)]


# ------------------------------------------------------------------------ kip-101-truncation


@pytest.mark.parametrize("protocol", [Protocol.KIP_320, Protocol.DIVERGING_EPOCH])
def test_kip_101_truncation_keeps_a_record_of_an_epoch_the_leader_never_had(protocol: Protocol) -> None:
    """From 2.1 on (KAFKA-7415) the new leader cached its epoch and answers (0, 2), which the mutant
    takes as is. (At 2.0, kip-279, that leader has not written, answers undefined, and the follower
    falls back to its HW with or without the mutant.)"""
    rc, events = fast_failover(protocol)
    assert rc.cluster.brokers[1].log.leo == 1
    rc, events = fast_failover(protocol, frozenset({"kip-101-truncation"}))
    applied = [e for e in events if isinstance(e, ev.EpochQueryApplied | ev.FetchApplied)]
    assert [e.truncated_to for e in applied] == [2]
    assert rc.cluster.brokers[1].log.entries[1] != rc.cluster.brokers[2].log.entries[1]


# -------------------------------------------------------------------------- no-epoch-fencing


def _consumer_with_a_stale_epoch(mutants: frozenset[str], protocol: Protocol) -> list[ev.Event]:
    """The consumer caches (leader 1, epoch 1); broker 1 leads again in epoch 3."""
    rc = _boot(mutants, protocol=protocol)
    rc.apply(ops.Produce(rid=1, acks=-1))
    replicate(rc)
    rc.apply(ops.MoveLeader(1))
    replicate(rc)
    rc.apply(ops.Advance(5_000))
    rc.apply(ops.MoveLeader(2))
    rc.apply(ops.MoveLeader(1))
    rc.apply(ops.Settle(10_000))
    assert (rc.cluster.consumer.leader, rc.cluster.consumer.leader_epoch) == (1, 1)
    assert rc.cluster.brokers[1].partition.view.leader_epoch == 3
    rc.apply(ops.Consume(0))
    return rc.apply(ops.Settle(10_000))


def test_no_epoch_fencing_serves_a_consumer_with_a_stale_leader_epoch() -> None:
    normal = of(_consumer_with_a_stale_epoch(frozenset(), Protocol.KIP_320), ev.ConsumerFetchHandled)
    assert [(e.current_leader_epoch, e.error) for e in normal] == [(1, ev.FENCED_LEADER_EPOCH)]
    mutant = of(
        _consumer_with_a_stale_epoch(frozenset({"no-epoch-fencing"}), Protocol.KIP_320), ev.ConsumerFetchHandled
    )
    assert [(e.current_leader_epoch, e.error, e.entries) for e in mutant] == [(1, ev.NONE, (ev.Entry(0, 0, 1),))]


def test_no_epoch_fencing_answers_a_follower_that_is_ahead_of_the_broker() -> None:
    def run(mutants: frozenset[str]) -> list[ev.Event]:
        rc = _boot(mutants, protocol=Protocol.KIP_320)
        replicate(rc)
        rc.apply(ops.MoveLeader(1))
        deliver(rc, MetadataUpdate, dst=0)
        return deliver(rc, EpochQueryRequest, src=0, dst=1)

    assert of(run(frozenset()), ev.EpochQueryHandled)[0].error == ev.UNKNOWN_LEADER_EPOCH
    assert of(run(frozenset({"no-epoch-fencing"})), ev.EpochQueryHandled)[0].error == ev.NOT_LEADER_OR_FOLLOWER


# -------------------------------------------------------------------------- hw-below-min-isr


def _produce_with_the_isr_below_min(mutants: frozenset[str]) -> list[ev.Event]:
    rc = _boot(mutants, replica_lag_time_max_ms=5_000)
    rc.apply(ops.Crash(1))
    rc.apply(ops.Crash(2))
    rc.apply(ops.Advance(10_000))
    rc.apply(ops.Settle(10_000))
    assert rc.cluster.brokers[0].partition.view.isr == (0,)
    rc.apply(ops.Produce(rid=1, acks=1))
    return rc.apply(ops.Settle(10_000))


def test_hw_below_min_isr_commits_with_fewer_copies_than_min_isr() -> None:
    assert of(_produce_with_the_isr_below_min(frozenset()), ev.ProduceHandled)[0].hw == 0
    mutant = of(_produce_with_the_isr_below_min(frozenset({"hw-below-min-isr"})), ev.ProduceHandled)
    assert mutant[0].hw == 1


# -------------------------------------------- early-isr-expand and hw-ignores-pending-isr


def _new_leader_meets_a_lagging_follower(
    mutants: frozenset[str], protocol: Protocol
) -> tuple[ReferenceCluster, list[ev.Event]]:
    """Record x is everywhere (HW 1); broker 2 is cut off long enough to be fenced out of the ISR;
    record a then reaches broker 1 only; broker 1 leads epoch 1, which starts at offset 2 while its
    HW is 1. Returns the events of broker 2's first fetch from broker 1, at offset 1 (≥ HW, < the
    epoch start)."""
    rc = _boot(mutants, protocol=protocol)
    rc.apply(ops.Produce(rid=1, acks=1))
    replicate(rc)
    rc.apply(ops.Isolate(2))
    for _ in range(10):
        rc.apply(ops.Advance(1_000))
        rc.apply(ops.Settle(10_000))
    rc.apply(ops.Heal())
    rc.apply(ops.Settle(10_000))
    assert rc.cluster.controller.record.isr == (0, 1)
    rc.apply(ops.Produce(rid=2, acks=1))
    rc.apply(ops.Settle(10_000))
    rc.apply(ops.Advance(500))
    deliver(rc, FetchRequest, src=1)
    deliver(rc, FetchResponse, dst=1)
    index = rc.cluster.index_of(FetchRequest, src=1)
    assert index is not None
    rc.apply(ops.Drop(index))
    rc.apply(ops.Settle(10_000))
    assert [b.log.leo for b in rc.cluster.brokers] == [2, 2, 1]
    assert rc.cluster.brokers[1].log.hw == 1
    rc.apply(ops.MoveLeader(1))
    deliver(rc, MetadataUpdate, dst=1)
    deliver(rc, MetadataUpdate, dst=2)
    if protocol.uses_epoch_query:
        deliver(rc, EpochQueryRequest, src=2, dst=1)
        deliver(rc, EpochQueryResponse, dst=2)
    # since KAFKA-7415 (2.1) the new leader caches its epoch at once; at 2.0 only with a write
    assert rc.cluster.brokers[1].log.epochs.start_offset_of(1) == (2 if protocol.kafka_7415 else None)
    assert rc.cluster.brokers[1].log.hw == 1
    return rc, deliver(rc, FetchRequest, src=2, dst=1)


def test_early_isr_expand_admits_a_follower_below_the_epoch_start() -> None:
    _, normal = _new_leader_meets_a_lagging_follower(frozenset(), Protocol.DIVERGING_EPOCH)
    assert [type(e) for e in normal] == [ev.FetchHandled]
    _, mutant = _new_leader_meets_a_lagging_follower(frozenset({"early-isr-expand"}), Protocol.DIVERGING_EPOCH)
    assert [type(e) for e in mutant] == [ev.FetchHandled, ev.IsrChangeProposed]
    assert [e.isr for e in of(mutant, ev.IsrChangeProposed)] == [(0, 1, 2)]


def _hw_after_the_old_leader_catches_up(mutants: frozenset[str]) -> int:
    """KIP-279 has no epoch-start rule: broker 2 joins the maximal ISR with LEO 1 < leader LEO 2;
    then broker 0 (the old leader) fetches up to the leader's LEO."""
    rc, events = _new_leader_meets_a_lagging_follower(mutants, Protocol.KIP_279)
    assert [type(e) for e in events] == [ev.FetchHandled, ev.IsrChangeProposed]
    assert rc.cluster.index_of(AlterPartitionRequest) is not None  # still pending at the controller
    deliver(rc, MetadataUpdate, dst=0)
    deliver(rc, EpochQueryRequest, src=0, dst=1)
    deliver(rc, EpochQueryResponse, dst=0)
    handled = of(deliver(rc, FetchRequest, src=0, dst=1), ev.FetchHandled)
    assert [(e.follower, e.entries) for e in handled] == [(0, ())]
    return handled[0].leader_hw


def test_hw_ignores_pending_isr_passes_an_offset_the_joining_member_lacks() -> None:
    assert _hw_after_the_old_leader_catches_up(frozenset()) == 1
    assert _hw_after_the_old_leader_catches_up(frozenset({"hw-ignores-pending-isr"})) == 2


# -------------------------------------------------------------------------- acks-all-no-wait


def test_acks_all_no_wait_acknowledges_before_replication() -> None:
    for mutants, expected in ((frozenset(), []), (frozenset({"acks-all-no-wait"}), [ev.NONE])):
        rc = _boot(mutants)
        rc.apply(ops.Produce(rid=1, acks=-1))
        events = deliver(rc, ProduceRequest, dst=0)
        assert of(events, ev.ProduceHandled)[0].hw == 0
        assert [e.error for e in of(events, ev.ProduceCompleted)] == expected
