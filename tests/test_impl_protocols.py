"""Each protocol rung's truncation path in the reference brokers (kafka-facts §3.7, §3.8)."""

from __future__ import annotations

import pytest

from kconform.impl import ReferenceCluster
from kconform.impl.replication.disk import Disk
from kconform.impl.replication.fetcher import diverging_epoch_truncation, epoch_answer_truncation
from kconform.impl.replication.log import ReplicaLog
from kconform.impl.replication.messages import (
    EpochQueryRequest,
    EpochQueryResponse,
    FetchRequest,
    FetchResponse,
    MetadataUpdate,
    ProduceRequest,
    ProduceResponse,
)
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops
from tests.implkit import deliver, of, replicate


def _boot(protocol: Protocol, mutants: frozenset[str] = frozenset()) -> ReferenceCluster:
    rc = ReferenceCluster()
    rc.reset(ReplicationConfig(protocol=protocol), 0, mutants)
    return rc


def _drop_all(rc: ReferenceCluster, payload: type, src: int | None = None, dst: int | None = None) -> None:
    for _ in range(100):
        index = rc.cluster.index_of(payload, src, dst)
        if index is None:
            return
        rc.apply(ops.Drop(index))


def _replica_request(protocol: Protocol) -> type:
    return EpochQueryRequest if protocol.uses_epoch_query else FetchRequest


def _unreplicated_record_then_move_leader(protocol: Protocol) -> tuple[ReferenceCluster, list[ev.Event]]:
    """Broker 0 leads and appends record 1 that no follower fetched; broker 1 then leads (epoch 1)."""
    rc = _boot(protocol)
    replicate(rc)
    rc.apply(ops.Produce(rid=1, acks=1))
    deliver(rc, ProduceRequest, dst=0)
    assert rc.apply(ops.MoveLeader(1)) == [ev.LeaderMoved(-1, 1, 1, (0, 1, 2), 1)]
    return rc, rc.apply(ops.Settle(10_000))


# --------------------------------------------------------------- divergence of an old leader


def test_pre_kip_101_follower_truncates_to_its_hw_on_becoming_follower() -> None:
    rc, events = _unreplicated_record_then_move_leader(Protocol.TRUNCATE_TO_HW)
    applied = [e for e in of(events, ev.MetadataApplied) if e.node == 0]
    assert applied[0] == ev.MetadataApplied(0, 1, 1, (0, 1, 2), 1, "become_follower", 0, 0)
    assert rc.cluster.brokers[0].log.entries == []


def test_kip_101_truncates_to_the_leader_end_offset_without_an_epoch() -> None:
    rc, events = _unreplicated_record_then_move_leader(Protocol.KIP_101)
    sent = [e for e in of(events, ev.EpochQuerySent) if e.node == 0]
    assert [(e.requested_epoch, e.current_leader_epoch, e.follower_epoch) for e in sent] == [(0, -1, 1)]
    handled = [e for e in of(events, ev.EpochQueryHandled) if e.follower == 0]
    # before KAFKA-7415 the new leader has not cached its epoch: undefined, the follower uses its HW
    assert [(e.error, e.epoch, e.end_offset) for e in handled] == [(ev.NONE, -1, -1)]
    applied = [e for e in of(events, ev.EpochQueryApplied) if e.node == 0]
    assert [(e.outcome, e.truncated_to) for e in applied] == [("truncated", 0)]
    assert rc.cluster.brokers[0].log.entries == []


@pytest.mark.parametrize("protocol", [Protocol.KIP_279, Protocol.KIP_320])
def test_kip_279_answer_carries_the_epoch(protocol: Protocol) -> None:
    """From 2.1 (KAFKA-7415, the kip-320 rung) the new leader cached (1, 0) on becoming leader and
    answers (0, 0); at 2.0 (kip-279) its cache is still empty: undefined, truncation to the HW."""
    rc, events = _unreplicated_record_then_move_leader(protocol)
    handled = [e for e in of(events, ev.EpochQueryHandled) if e.follower == 0]
    answer = (0, 0) if protocol.kafka_7415 else (-1, -1)
    assert [(e.error, e.epoch, e.end_offset) for e in handled] == [(ev.NONE, *answer)]
    applied = [e for e in of(events, ev.EpochQueryApplied) if e.node == 0]
    assert [(e.outcome, e.truncated_to) for e in applied] == [("truncated", 0)]
    sent = [e for e in of(events, ev.EpochQuerySent) if e.node == 0]
    assert sent[0].current_leader_epoch == (1 if protocol is Protocol.KIP_320 else -1)
    assert rc.cluster.brokers[0].log.entries == []


def test_diverging_epoch_truncates_on_fetch() -> None:
    rc, events = _unreplicated_record_then_move_leader(Protocol.DIVERGING_EPOCH)
    sent = [e for e in of(events, ev.FetchSent) if e.node == 0]
    assert sent[0] == ev.FetchSent(0, sent[0].msg, 1, 1, 0, 1, 1)
    handled = [e for e in of(events, ev.FetchHandled) if e.follower == 0]
    assert handled[0] == ev.FetchHandled(1, sent[0].msg, 0, ev.NONE, (), 0, 0, 0, 0, 0)
    applied = [e for e in of(events, ev.FetchApplied) if e.node == 0]
    assert applied[0] == ev.FetchApplied(0, sent[0].msg, "diverged", 0, 0, 0)
    assert rc.cluster.brokers[0].log.entries == []


# ------------------------------------------------- fast leader failover: the hole KIP-279 closed


def fast_failover(protocol: Protocol, mutants: frozenset[str] = frozenset()) -> tuple[ReferenceCluster, list[ev.Event]]:
    """a@0 everywhere; b@1 (epoch 0) on brokers 0 and 2 only; broker 1 leads epoch 1 and writes
    c@1; broker 2 leads epoch 2 without ever seeing c. Returns the events of broker 1 following
    broker 2 (its truncation decides whether c@1 survives)."""
    rc = _boot(protocol, mutants)
    rc.apply(ops.Produce(rid=1, acks=1))
    replicate(rc)
    rc.apply(ops.Produce(rid=2, acks=1))
    deliver(rc, ProduceRequest, dst=0)
    deliver(rc, ProduceResponse)
    rc.apply(ops.Advance(500))
    deliver(rc, FetchRequest, src=2)
    deliver(rc, FetchResponse, dst=2)
    _drop_all(rc, FetchRequest)
    assert [b.log.leo for b in rc.cluster.brokers] == [2, 1, 2]

    rc.apply(ops.MoveLeader(1))
    deliver(rc, MetadataUpdate, dst=1)
    deliver(rc, MetadataUpdate, dst=0)
    deliver(rc, MetadataUpdate, dst=2)
    _drop_all(rc, _replica_request(protocol))
    rc.apply(ops.Produce(rid=3, acks=1))  # goes to broker 0, refused: the producer refreshes
    deliver(rc, ProduceRequest, dst=0)
    deliver(rc, ProduceResponse)
    rc.apply(ops.Produce(rid=4, acks=1))
    deliver(rc, ProduceRequest, dst=1)
    assert rc.cluster.brokers[1].log.entries[1] == ev.Entry(1, 1, 4)

    rc.apply(ops.MoveLeader(2))
    deliver(rc, MetadataUpdate, dst=2)
    events = deliver(rc, MetadataUpdate, dst=1)
    events += deliver(rc, _replica_request(protocol), src=1, dst=2)
    answer = FetchResponse if protocol is Protocol.DIVERGING_EPOCH else EpochQueryResponse
    events += deliver(rc, answer, src=2, dst=1)
    return rc, events


def _truncation_of_broker_1(events: list[ev.Event]) -> tuple[str, int]:
    for e in events:
        if isinstance(e, ev.EpochQueryApplied | ev.FetchApplied) and e.node == 1:
            return e.outcome, e.truncated_to
    raise AssertionError("broker 1 applied no answer")


def test_kip_101_falls_back_to_the_hw_when_the_new_leader_has_not_written() -> None:
    """At 0.11 (before KAFKA-7415) broker 2 becomes leader without caching its epoch; broker 1's
    query for its epoch 1 is answered undefined (broker 2 never had epoch 1 and has nothing later)
    and broker 1 truncates to its HW, 1: here the fallback happens to drop c@1 (with the 2.1 cache
    the epoch-less KIP-101 answer would be 2 and keep it: the KIP-279 hole)."""
    rc, events = fast_failover(Protocol.KIP_101)
    assert _truncation_of_broker_1(events) == ("truncated", 1)
    assert rc.cluster.brokers[1].log.leo == 1


@pytest.mark.parametrize("protocol", [Protocol.KIP_279, Protocol.KIP_320])
def test_kip_279_finds_the_true_divergence_point(protocol: Protocol) -> None:
    rc, events = fast_failover(protocol)
    assert _truncation_of_broker_1(events) == ("truncated", 1)
    assert rc.cluster.brokers[1].log.leo == 1


def test_diverging_epoch_finds_the_true_divergence_point() -> None:
    rc, events = fast_failover(Protocol.DIVERGING_EPOCH)
    handled = of(events, ev.FetchHandled)
    assert [(e.diverging_epoch, e.diverging_end_offset) for e in handled] == [(0, 2)]
    assert _truncation_of_broker_1(events) == ("diverged", 1)
    assert rc.cluster.brokers[1].log.leo == 1


# ------------------------------------------------------------------------ KIP-320 fencing


@pytest.mark.parametrize(
    ("protocol", "error"),
    [(Protocol.KIP_279, ev.NOT_LEADER_OR_FOLLOWER), (Protocol.KIP_320, ev.UNKNOWN_LEADER_EPOCH)],
)
def test_epoch_query_to_a_broker_that_has_not_learned_the_epoch(protocol: Protocol, error: int) -> None:
    rc = _boot(protocol)
    replicate(rc)
    rc.apply(ops.MoveLeader(1))
    deliver(rc, MetadataUpdate, dst=0)
    events = deliver(rc, EpochQueryRequest, src=0, dst=1)
    assert [(e.error, e.epoch, e.end_offset) for e in of(events, ev.EpochQueryHandled)] == [(error, -1, -1)]
    events = deliver(rc, EpochQueryResponse, src=1, dst=0)
    assert [(e.outcome, e.truncated_to) for e in of(events, ev.EpochQueryApplied)] == [("error", -1)]
    events = rc.apply(ops.Settle(10_000)) + rc.apply(ops.Advance(500)) + rc.apply(ops.Settle(10_000))
    assert ("truncated", 0) in [(e.outcome, e.truncated_to) for e in of(events, ev.EpochQueryApplied)]


# ------------------------------------------------------------ truncation rules in isolation


def _log(*epochs_and_rids: tuple[int, int]) -> ReplicaLog:
    log = ReplicaLog(Disk(), sync_appends=True)
    for offset, (epoch, rid) in enumerate(epochs_and_rids):
        log.append(ev.Entry(offset, epoch, rid))
    return log


def test_epoch_answer_with_a_smaller_own_epoch_truncates_and_asks_again() -> None:
    log = _log((0, 1), (0, 2), (0, 3), (2, 4), (2, 5))
    assert epoch_answer_truncation(log, 1, 5) == (3, False)
    assert epoch_answer_truncation(log, -1, 4) == (4, True)
    log.hw = 2
    assert epoch_answer_truncation(log, 0, -1) == (2, True)
    assert epoch_answer_truncation(log, 3, 4) == (4, True)


def test_diverging_epoch_rules() -> None:
    log = _log((0, 1), (0, 2), (2, 3), (2, 4))
    assert diverging_epoch_truncation(log, 2, 3) == 3
    assert diverging_epoch_truncation(log, 1, 4) == 2
    assert diverging_epoch_truncation(ReplicaLog(Disk(), True), 1, 4) == 0
