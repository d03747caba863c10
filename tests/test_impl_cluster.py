"""The reference cluster end to end: bring-up, determinism, produce/replicate, faults, failover."""

from __future__ import annotations

import random
from typing import TypeVar

import pytest

from kconform.impl import MUTANTS, ReferenceCluster
from kconform.impl.network import CONTROLLER_NODE
from kconform.impl.replication.messages import AlterPartitionResponse, FetchRequest, MetadataUpdate, ProduceRequest
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

E = TypeVar("E", bound=ev.Event)


def _boot(**cfg: object) -> tuple[ReferenceCluster, list[ev.Event]]:
    rc = ReferenceCluster()
    events = rc.reset(ReplicationConfig(**cfg), 0, frozenset())  # type: ignore[arg-type]
    return rc, events


def _of(events: list[ev.Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def _replicate(rc: ReferenceCluster, rounds: int = 4) -> list[ev.Event]:
    """Let fetches flow: deliver everything, then let fetch backoffs expire, a few times."""
    out: list[ev.Event] = []
    for _ in range(rounds):
        out += rc.apply(ops.Settle(10_000))
        out += rc.apply(ops.Advance(500))
    out += rc.apply(ops.Settle(10_000))
    return out


def _deliver(rc: ReferenceCluster, payload: type, src: int | None = None, dst: int | None = None) -> list[ev.Event]:
    index = rc.cluster.index_of(payload, src, dst)
    assert index is not None, f"no {payload.__name__} in flight from {src} to {dst}"
    return rc.apply(ops.Deliver(index))


def _random_ops(seed: int, n: int) -> list[ops.Operation]:
    rng = random.Random(seed)
    out: list[ops.Operation] = []
    for rid in range(n):
        roll = rng.randrange(12)
        b = rng.randrange(3)
        out.append(
            [
                ops.Produce(rid, rng.choice([-1, 0, 1])),
                ops.Consume(rng.randrange(5)),
                ops.Settle(rng.choice([5, 50])),
                ops.Deliver(rng.randrange(20)),
                ops.Drop(rng.randrange(20)),
                ops.Duplicate(rng.randrange(20)),
                ops.Advance(rng.choice([50, 500, 5_000, 31_000])),
                ops.Crash(b),
                ops.Restart(b),
                ops.Isolate(b),
                ops.Heal(),
                ops.MoveLeader(b),
            ][roll]
        )
    return out


# -------------------------------------------------------------------------------- bring-up


def test_bring_up_registers_brokers_elects_broker_0_and_delivers_metadata() -> None:
    rc, events = _boot()
    assert events == [
        ev.BrokerUnfenced(-1, 0, 0, 0, (0, 1, 2), 0, False),
        ev.BrokerUnfenced(-1, 1, 0, 0, (0, 1, 2), 0, False),
        ev.BrokerUnfenced(-1, 2, 0, 0, (0, 1, 2), 0, False),
        ev.MetadataApplied(0, 0, 0, (0, 1, 2), 0, "become_leader", -1, 0),
        ev.MetadataApplied(1, 0, 0, (0, 1, 2), 0, "become_follower", -1, 0),
        ev.FetchSent(1, 3, 0, 0, -1, 0, 0),
        ev.MetadataApplied(2, 0, 0, (0, 1, 2), 0, "become_follower", -1, 0),
        ev.FetchSent(2, 4, 0, 0, -1, 0, 0),
    ]
    assert rc.cluster.rt.now_ms == 0


def test_bring_up_under_epoch_query_rungs_sends_offsets_for_leader_epoch() -> None:
    _, events = _boot(protocol=Protocol.KIP_101)
    assert [e.node for e in _of(events, ev.EpochQuerySent)] == [1, 2]
    assert all(e.current_leader_epoch == -1 for e in _of(events, ev.EpochQuerySent))
    _, events = _boot(protocol=Protocol.KIP_320)
    assert all(e.current_leader_epoch == 0 for e in _of(events, ev.EpochQuerySent))


def test_bring_up_before_kip_101_truncates_to_hw() -> None:
    _, events = _boot(protocol=Protocol.TRUNCATE_TO_HW)
    followers = [e for e in _of(events, ev.MetadataApplied) if e.outcome == "become_follower"]
    assert [e.truncated_to for e in followers] == [0, 0]
    assert all(e.last_fetched_epoch == -1 and e.current_leader_epoch == -1 for e in _of(events, ev.FetchSent))


def test_unknown_mutant_is_refused_with_the_known_names() -> None:
    with pytest.raises(ValueError, match="known mutants") as info:
        ReferenceCluster().reset(ReplicationConfig(), 0, frozenset({"no-such-bug"}))
    for name in MUTANTS:
        assert name in str(info.value)


def test_apply_before_reset_fails_clearly() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        ReferenceCluster().apply(ops.Heal())


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("protocol", list(Protocol))
def test_same_operations_give_identical_events(protocol: Protocol) -> None:
    cfg = ReplicationConfig(protocol=protocol, flush_interval_ms=2_000, unclean_leader_election=True)
    runs = []
    for seed in (1, 1, 99):
        rc = ReferenceCluster()
        events = rc.reset(cfg, seed, frozenset())
        for op in _random_ops(7, 250):
            events += rc.apply(op)
        runs.append(events)
    assert runs[0] == runs[1]
    assert runs[0] == runs[2], "no choice in the reference cluster depends on the seed"
    assert len(runs[0]) > 250


def test_msg_ids_are_unique_across_message_kinds() -> None:
    rc, events = _boot()
    for op in _random_ops(3, 200):
        events += rc.apply(op)
    sent = [e.msg for e in events if isinstance(e, ev.FetchSent | ev.EpochQuerySent | ev.IsrChangeProposed)]
    produced = {e.req for e in events if isinstance(e, ev.ProduceHandled)}
    assert len(sent) == len(set(sent))
    assert not produced & set(sent)


# ------------------------------------------------------------------------ produce, replicate


def test_acks_all_completes_once_the_followers_advance_the_hw() -> None:
    rc, _ = _boot()
    events = rc.apply(ops.Produce(rid=7, acks=-1))
    assert events == []
    events = _replicate(rc)
    handled = _of(events, ev.ProduceHandled)
    assert handled == [ev.ProduceHandled(0, handled[0].req, 7, -1, ev.NONE, 0, 0, 0)]
    assert _of(events, ev.ProduceCompleted) == [ev.ProduceCompleted(0, handled[0].req, ev.NONE)]
    fetches = _of(events, ev.FetchHandled)
    assert max(e.leader_hw for e in fetches) == 1
    for broker in rc.cluster.brokers:
        assert broker.log.entries == [ev.Entry(0, 0, 7)]
        assert broker.log.hw == 1
    consumed = rc.apply(ops.Consume(0)) + rc.apply(ops.Settle(10))
    assert _of(consumed, ev.ConsumerFetchHandled) == [
        ev.ConsumerFetchHandled(0, 0, 0, ev.NONE, (ev.Entry(0, 0, 7),), 1)
    ]


def test_acks_all_is_refused_below_min_isr_and_times_out_when_the_isr_shrinks_late() -> None:
    rc, _ = _boot()
    rc.apply(ops.Crash(1))
    rc.apply(ops.Crash(2))
    rc.apply(ops.Produce(rid=1, acks=-1))
    events = rc.apply(ops.Settle(100))
    assert _of(events, ev.ProduceHandled)[0].error == ev.NONE
    events = rc.apply(ops.Advance(10_000)) + rc.apply(ops.Settle(100))
    assert [e.broker for e in _of(events, ev.BrokerFenced)] == [1, 2]
    assert rc.cluster.controller.record.isr == (0,)
    events = rc.apply(ops.Advance(20_000))
    assert [e.error for e in _of(events, ev.ProduceCompleted)] == [ev.REQUEST_TIMED_OUT]
    rc.apply(ops.Produce(rid=2, acks=-1))
    events = rc.apply(ops.Settle(100))
    assert _of(events, ev.ProduceHandled)[0].error == ev.NOT_ENOUGH_REPLICAS


def test_losing_leadership_fails_delayed_produces() -> None:
    rc, _ = _boot()
    rc.apply(ops.Produce(rid=1, acks=-1))
    _deliver(rc, ProduceRequest, dst=0)
    rc.apply(ops.MoveLeader(1))
    events = _deliver(rc, MetadataUpdate, dst=0)
    assert [type(e) for e in events[:2]] == [ev.MetadataApplied, ev.ProduceCompleted]
    assert [e.error for e in _of(events, ev.ProduceCompleted)] == [ev.NOT_LEADER_OR_FOLLOWER]


# ---------------------------------------------------------------------- crash, restart, disks


def test_restart_with_periodic_flush_loses_what_was_not_checkpointed() -> None:
    rc, _ = _boot(flush_interval_ms=1_000, hw_checkpoint_interval_ms=5_000)
    rc.apply(ops.Produce(rid=1, acks=1))
    _replicate(rc)
    events = rc.apply(ops.Advance(3_000))
    assert [(e.node, e.log_end, e.hw) for e in _of(events, ev.Checkpointed)] == [(0, 1, 1), (1, 1, 1), (2, 1, 1)]
    rc.apply(ops.Produce(rid=2, acks=1))
    _replicate(rc)
    assert [b.log.leo for b in rc.cluster.brokers] == [2, 2, 2]
    assert rc.apply(ops.Crash(1)) == [ev.BrokerCrashed(1)]
    assert rc.apply(ops.Crash(1)) == []
    events = rc.apply(ops.Restart(1))
    assert events[0] == ev.BrokerRestarted(1, 1, 1)
    assert [type(e) for e in events[1:]] == [ev.BrokerFenced, ev.BrokerUnfenced]
    assert rc.apply(ops.Restart(1)) == []
    events = _replicate(rc) + rc.apply(ops.Advance(1_000)) + _replicate(rc)
    assert rc.cluster.brokers[1].log.entries == [ev.Entry(0, 0, 1), ev.Entry(1, 0, 2)]


def test_restart_with_fsync_per_append_keeps_the_log() -> None:
    rc, _ = _boot()
    rc.apply(ops.Produce(rid=1, acks=1))
    _replicate(rc)
    rc.apply(ops.Crash(2))
    assert rc.apply(ops.Restart(2))[0] == ev.BrokerRestarted(2, 1, 0)


def test_restarted_broker_ignores_metadata_until_registered() -> None:
    rc, _ = _boot()
    rc.apply(ops.Crash(2))
    rc.apply(ops.Isolate(2))
    events = rc.apply(ops.Restart(2))
    assert [type(e) for e in events] == [ev.BrokerRestarted], "isolated: registration waits for heal"
    assert not rc.cluster.brokers[2].registered
    events = rc.apply(ops.Heal())
    assert [type(e) for e in events] == [ev.BrokerFenced, ev.BrokerUnfenced]
    events = rc.apply(ops.Advance(1_000)) + rc.apply(ops.Settle(10))
    applied = [e for e in _of(events, ev.MetadataApplied) if e.node == 2]
    assert applied[0].outcome == "become_follower"


# ------------------------------------------------------------------------- fencing, failover


def test_crashed_leader_is_fenced_after_the_session_timeout_and_a_follower_takes_over() -> None:
    rc, _ = _boot()
    rc.apply(ops.Produce(rid=1, acks=-1))
    _replicate(rc)
    rc.apply(ops.Crash(0))
    events = rc.apply(ops.Advance(9_000))
    assert _of(events, ev.BrokerFenced) == []
    events = rc.apply(ops.Advance(1_000))
    assert _of(events, ev.BrokerFenced) == [ev.BrokerFenced(-1, 0, 1, 1, (1, 2), 1, False)]
    events = rc.apply(ops.Settle(100))
    applied = [e for e in _of(events, ev.MetadataApplied) if e.outcome != "ignored"]
    assert [(e.node, e.outcome) for e in applied] == [(1, "become_leader"), (2, "become_follower")]
    rc.apply(ops.Advance(5_000))
    rc.apply(ops.Produce(rid=2, acks=-1))
    events = _replicate(rc)
    assert [e.node for e in _of(events, ev.ProduceHandled)] == [1]
    assert _of(events, ev.ProduceCompleted)[0].error == ev.NONE
    assert rc.cluster.brokers[2].log.entries == [ev.Entry(0, 0, 1), ev.Entry(1, 1, 2)]


def test_isolated_leader_is_fenced_and_unfenced_again_after_heal() -> None:
    rc, _ = _boot()
    rc.apply(ops.Isolate(0))
    events = rc.apply(ops.Advance(10_000))
    assert _of(events, ev.BrokerFenced) == [ev.BrokerFenced(-1, 0, 1, 1, (1, 2), 1, False)]
    events = rc.apply(ops.Heal())
    assert events == [ev.BrokerUnfenced(-1, 0, 1, 1, (1, 2), 1, False)]


def test_unclean_election_when_the_last_isr_member_is_fenced() -> None:
    rc, _ = _boot(unclean_leader_election=True)
    rc.apply(ops.Crash(1))
    rc.apply(ops.Crash(2))
    rc.apply(ops.Advance(10_000))
    rc.apply(ops.Restart(1))
    rc.apply(ops.Crash(0))
    events = rc.apply(ops.Advance(10_000))
    assert _of(events, ev.BrokerFenced) == [ev.BrokerFenced(-1, 0, 1, 1, (1,), 3, True)]


def test_move_leader_is_refused_for_fenced_or_non_isr_brokers() -> None:
    rc, _ = _boot()
    assert rc.apply(ops.MoveLeader(0)) == []
    rc.apply(ops.Crash(2))
    rc.apply(ops.Advance(10_000))
    assert rc.apply(ops.MoveLeader(2)) == []
    assert rc.apply(ops.MoveLeader(1)) == [ev.LeaderMoved(-1, 1, 1, (0, 1), 2)]


def test_lagging_follower_leaves_the_isr_through_alter_partition() -> None:
    rc, _ = _boot(replica_lag_time_max_ms=10_000)
    rc.apply(ops.Produce(rid=1, acks=1))
    _replicate(rc)
    rc.apply(ops.Advance(500))
    index = rc.cluster.index_of(FetchRequest, src=2)
    assert index is not None
    rc.apply(ops.Drop(index))  # broker 2 now waits request_timeout_ms before fetching again
    rc.apply(ops.Produce(rid=2, acks=1))
    events = _replicate(rc)
    for _ in range(12):
        events += rc.apply(ops.Advance(1_000)) + rc.apply(ops.Settle(1_000))
    assert rc.cluster.brokers[2].log.leo == 1
    proposed = _of(events, ev.IsrChangeProposed)
    assert [(e.node, e.isr) for e in proposed] == [(0, (0, 1))]
    handled = _of(events, ev.AlterPartitionHandled)
    assert [(e.error, e.isr, e.partition_epoch) for e in handled] == [(ev.NONE, (0, 1), 1)]
    applied = _of(events, ev.AlterPartitionApplied)
    assert [(e.node, e.isr, e.partition_epoch) for e in applied] == [(0, (0, 1), 1)]
    assert rc.cluster.controller.record.isr == (0, 1)


def test_caught_up_follower_rejoins_the_isr() -> None:
    rc, _ = _boot(replica_lag_time_max_ms=10_000)
    rc.apply(ops.Crash(2))
    rc.apply(ops.Advance(10_000))
    rc.apply(ops.Produce(rid=1, acks=-1))
    events = _replicate(rc)
    assert rc.cluster.controller.record.isr == (0, 1)
    events = rc.apply(ops.Restart(2)) + rc.apply(ops.Advance(1_000)) + _replicate(rc)
    proposed = _of(events, ev.IsrChangeProposed)
    assert [(e.node, e.isr) for e in proposed] == [(0, (0, 1, 2))]
    assert list(rc.cluster.controller.record.isr) == [0, 1, 2]
    assert rc.cluster.brokers[2].log.entries == [ev.Entry(0, 0, 1)]


def _shrink_in_flight(rc: ReferenceCluster) -> int:
    """Broker 2 stops fetching; advance until leader 0 proposes the ISR without it, and return the
    proposal's message id with the AlterPartition request still undelivered."""
    rc.apply(ops.Produce(rid=1, acks=1))
    _replicate(rc)
    rc.apply(ops.Advance(500))
    index = rc.cluster.index_of(FetchRequest, src=2)
    assert index is not None
    rc.apply(ops.Drop(index))
    rc.apply(ops.Produce(rid=2, acks=1))
    _replicate(rc)
    for _ in range(20):
        proposed = _of(rc.apply(ops.Advance(1_000)), ev.IsrChangeProposed)
        if proposed:
            assert [(e.node, e.isr) for e in proposed] == [(0, (0, 1))]
            return proposed[0].msg
        rc.apply(ops.Settle(1_000))
    raise AssertionError("leader 0 never proposed a shrink")


@pytest.mark.parametrize(
    ("error", "still_pending"),
    [(ev.INVALID_UPDATE_VERSION, True), (ev.FENCED_LEADER_EPOCH, True), (ev.INELIGIBLE_REPLICA, False)],
)
def test_a_refused_alter_partition_stays_pending_unless_the_controller_says_not_applied(
    error: int, still_pending: bool
) -> None:
    """Partition.handleAlterPartitionError: only INELIGIBLE_REPLICA / OPERATION_NOT_ATTEMPTED return
    the leader to its committed ISR; other errors leave the proposal pending (no new proposal, the
    maximal ISR unchanged) until new metadata (PartitionTest.testIsrNotShrunkIfUpdateFails)."""
    rc, _ = _boot(replica_lag_time_max_ms=10_000)
    msg = _shrink_in_flight(rc)
    leader = rc.cluster.brokers[0]
    view = leader.partition.view
    refusal = AlterPartitionResponse(msg, error, view.isr, view.leader_epoch, view.partition_epoch)
    rc.cluster.rt.network.send(CONTROLLER_NODE, 0, refusal)
    events = _deliver(rc, AlterPartitionResponse, CONTROLLER_NODE, 0)
    assert [(e.msg, e.error) for e in _of(events, ev.AlterPartitionApplied)] == [(msg, error)]
    assert leader.partition.pending_msg() == (msg if still_pending else None)
    assert leader.partition.view.isr == (0, 1, 2)
