"""The exactly-once reference cluster end to end: commit, abort, read_committed, failover at each
point of docs/transactions.md, zombie fencing, idempotent retries, determinism."""

from __future__ import annotations

import pytest

from kconform.impl.txn.cluster import TxnCluster
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

from .txnkit import HW_ALL, INIT, committed_txn, of, run


def test_boot_is_deterministic_and_loads_every_coordinator() -> None:
    cfg = TxnConfig(transactional_ids=("txn-1", "my-transactional-id"))
    a = [e.to_json() for e in run([], cfg)[1]]
    b = [e.to_json() for e in run([], cfg)[1]]
    assert a == b
    loaded = {e.state_partition for e in of(run([], cfg)[1], ev.CoordinatorLoaded)}
    assert loaded == {"__transaction_state-10", "__transaction_state-46"}


def test_same_operations_give_the_same_events() -> None:
    steps = [*INIT, *committed_txn(0, [("t-0", 2), ("t-1", 1)]), ops.Advance(70_000), ops.Quiesce(200_000)]
    assert [e.to_json() for e in run(steps)[1]] == [e.to_json() for e in run(steps)[1]]


def test_commit_writes_a_marker_on_every_partition_and_read_committed_sees_it() -> None:
    steps = [*INIT, *committed_txn(0, [("t-0", 2), ("t-1", 1)]), *HW_ALL]
    steps += [ops.ConsumeTxn(0, "t-0", True), ops.ConsumeTxn(0, "t-1", True), ops.Settle(10)]
    _, events = run(steps)
    end = of(events, ev.EndTxnHandled)
    assert [(e.error, e.state, e.ctxn) for e in end] == [(ev.NONE, "PrepareCommit", 1)]
    markers = of(events, ev.MarkerHandled)
    assert sorted(e.partition for e in markers) == ["t-0", "t-1"] and all(e.commit and e.error == 0 for e in markers)
    assert of(events, ev.MarkerResponseHandled)[-1].state == "CompleteCommit"
    polled = {e.partition: e.rids for e in of(events, ev.ConsumerPolled)}
    assert polled == {"t-0": (1, 2), "t-1": (3,)}


def test_lso_holds_at_an_open_transaction_and_passes_after_the_marker_is_below_the_hw() -> None:
    steps = [*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 2), ops.Settle(100), ops.AdvanceHw("t-0", -1)]
    steps += [ops.ConsumeTxn(0, "t-0", True), ops.Settle(10), ops.CommitTxn(0), ops.Settle(100)]
    steps += [ops.ConsumeTxn(1, "t-0", True), ops.Settle(10), ops.AdvanceHw("t-0", -1)]
    steps += [ops.ConsumeTxn(2, "t-0", True), ops.Settle(10)]
    _, events = run(steps)
    fetches = of(events, ev.TxnConsumerFetchHandled)
    assert [(f.hw, f.lso, len(f.records)) for f in fetches] == [(2, 0, 0), (2, 0, 0), (3, 3, 3)]
    assert [p.rids for p in of(events, ev.ConsumerPolled)] == [(), (), (1, 2)]


def test_abort_is_filtered_by_read_committed_and_seen_by_read_uncommitted() -> None:
    steps = [*INIT, *committed_txn(0, [("t-0", 2)], commit=False), *committed_txn(0, [("t-0", 1)]), *HW_ALL]
    steps += [ops.ConsumeTxn(0, "t-0", True), ops.ConsumeTxn(1, "t-0", False), ops.Settle(10)]
    _, events = run(steps)
    fetch = of(events, ev.TxnConsumerFetchHandled)[0]
    assert fetch.aborted == (ev.AbortedTxn(1000, 0),)
    assert [r.control for r in fetch.records] == [-1, -1, ev.ABORT_MARKER, -1, ev.COMMIT_MARKER]
    # the second transaction's sequences continue (same epoch keeps the cached batches)
    assert [r.seq for r in fetch.records if r.control < 0] == [0, 1, 2]
    polled = {e.read_committed: e.rids for e in of(events, ev.ConsumerPolled)}
    assert polled == {True: (3,), False: (1, 2, 3)}


def _end_held(commit: bool) -> list[ops.Operation]:
    """A transaction on both partitions whose EndTxn is sent but not yet delivered."""
    return [
        *INIT,
        ops.BeginTxn(0),
        ops.Send(0, "t-0", 1),
        ops.Send(0, "t-1", 1),
        ops.Settle(100),
        ops.CommitTxn(0) if commit else ops.AbortTxn(0),
    ]


@pytest.mark.parametrize(
    ("point", "before_move"),
    [
        ("before prepare", []),
        ("after prepare, no marker", [ops.DeliverTo(1)]),
        ("after prepare and one marker", [ops.DeliverTo(1), ops.DeliverTo(0), ops.Drop(0)]),
        ("after complete, answer lost", [ops.Settle(1000)]),
    ],
)
def test_coordinator_failover_at_each_point_completes_the_transaction(
    point: str, before_move: list[ops.Operation]
) -> None:
    steps = [*_end_held(True), *before_move, ops.MoveCoordinator("txn-1", 2), ops.Quiesce(300_000)]
    cluster, events = run(steps)
    assert [e.coordinator_epoch for e in of(events, ev.CoordinatorLoaded)] == [0, 1], point
    meta = cluster.sim.brokers[2].coordinators["__transaction_state-10"].txns["txn-1"]
    assert meta.state == "CompleteCommit", point
    commits = [e for e in of(events, ev.MarkerHandled) if e.error == ev.NONE and e.commit]
    assert {e.partition for e in commits} == {"t-0", "t-1"}, point
    assert cluster.sim.quiet(), point
    assert cluster.sim.producers[0].state == "READY", point


def test_a_prepare_found_on_load_is_finished_by_the_new_coordinator() -> None:
    steps = [*_end_held(True), ops.DeliverTo(1), ops.Drop(0), ops.Drop(0), ops.MoveCoordinator("txn-1", 0)]
    steps += [ops.Advance(10), ops.Settle(100)]
    _, events = run(steps)
    sent = [e for e in of(events, ev.MarkerSent) if e.coordinator_epoch == 1]
    assert sorted(e.partition for e in sent) == ["t-0", "t-1"]
    assert of(events, ev.MarkerResponseHandled)[-1].state == "CompleteCommit"


def test_the_old_coordinator_answers_not_coordinator_and_the_loading_one_load_in_progress() -> None:
    steps = [*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.MoveCoordinator("txn-1", 2)]
    steps += [ops.Settle(10), ops.Advance(100), ops.Settle(10), ops.Quiesce(1000)]
    _, events = run(steps)
    answers = [(e.node, e.error) for e in of(events, ev.AddPartitionsHandled)]
    assert answers == [(1, ev.NOT_COORDINATOR), (2, ev.NONE)]
    steps = [*INIT, ops.MoveCoordinator("txn-1", 2), ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Quiesce(1000)]
    _, events = run(steps)
    answers = [(e.node, e.error) for e in of(events, ev.AddPartitionsHandled)]
    assert answers == [(2, ev.COORDINATOR_LOAD_IN_PROGRESS), (2, ev.NONE)]


@pytest.mark.parametrize("verification", [True, False])
def test_a_new_instance_fences_the_zombie(verification: bool) -> None:
    steps = [*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Settle(100)]
    steps += [ops.InitProducer(1, "txn-1"), ops.Quiesce(10_000)]
    steps += [ops.Send(0, "t-0", 1), ops.CommitTxn(0), ops.Settle(100)]
    cluster, events = run(steps, TxnConfig(verification=verification))
    inits = of(events, ev.InitProducerIdHandled)
    assert [(e.error, e.state) for e in inits[1:]] == [(ev.CONCURRENT_TRANSACTIONS, "PrepareAbort"), (ev.NONE, "Empty")]
    assert inits[-1].epoch == 2
    aborts = [e for e in of(events, ev.MarkerHandled) if not e.commit]
    assert [(e.partition, e.epoch) for e in aborts] == [("t-0", 1)]
    zombie = [e for e in of(events, ev.TxnProduceHandled) if e.req > aborts[0].msg]
    if verification:  # the coordinator says PRODUCER_FENCED, the leader answers INVALID_PRODUCER_EPOCH
        assert [e.outcome for e in zombie] == ["verifying"]
        assert [e.error for e in of(events, ev.VerifyHandled)][-1] == ev.PRODUCER_FENCED
        applied = of(events, ev.VerifyApplied)[-1]
        assert (applied.outcome, applied.error) == ("rejected", ev.INVALID_PRODUCER_EPOCH)
    else:
        assert [(e.outcome, e.error) for e in zombie] == [("rejected", ev.INVALID_PRODUCER_EPOCH)]
    assert cluster.sim.producers[0].state == "FATAL_ERROR"
    assert not of(events, ev.EndTxnHandled)


def test_duplicated_produce_is_answered_with_the_original_offset() -> None:
    steps = [ops.InitProducer(0, ""), ops.Settle(10), ops.Send(0, "t-0", 2), ops.Duplicate(0), ops.Settle(10)]
    _, events = run(steps)
    produced = of(events, ev.TxnProduceHandled)
    assert [(e.outcome, e.base_offset) for e in produced] == [("appended", 0), ("duplicate", 0)]
    assert not produced[0].transactional and produced[0].txn_id == ""


def test_retry_after_a_lost_answer_is_deduplicated_within_five_in_flight() -> None:
    steps = [ops.InitProducer(0, ""), ops.Settle(10)] + [ops.Send(0, "t-0", 1) for _ in range(5)]
    steps += [ops.Settle(5)]  # five batches appended; their answers are in flight
    steps += [ops.Drop(0), ops.Settle(100), ops.Advance(30_000), ops.Settle(100)]
    _, events = run(steps)
    produced = of(events, ev.TxnProduceHandled)
    assert [e.outcome for e in produced[:5]] == ["appended"] * 5
    assert produced[-1].outcome == "duplicate" and produced[-1].base_offset == 0


def test_timeout_aborts_with_a_bumped_epoch() -> None:
    steps = [*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Settle(100), ops.Advance(70_000), ops.Settle(100)]
    _, events = run(steps)
    timed_out = of(events, ev.TxnTimedOut)
    assert [(e.epoch, e.state) for e in timed_out] == [(1, "PrepareAbort")]
    assert of(events, ev.MarkerResponseHandled)[-1].state == "CompleteAbort"


def test_tv2_end_txn_bumps_the_epoch_and_the_producer_follows() -> None:
    cfg = TxnConfig(transaction_version=2)
    steps = [*INIT, *committed_txn(0, [("t-0", 1)]), *committed_txn(0, [("t-0", 1)])]
    _, events = run(steps, cfg)
    ends = of(events, ev.EndTxnHandled)
    assert [(e.epoch, e.result_epoch) for e in ends] == [(0, 1), (1, 2)]
    produced = of(events, ev.TxnProduceHandled)
    assert [(e.epoch, e.base_seq) for e in produced] == [(0, 0), (1, 0)]  # a new epoch restarts at 0
    applied = of(events, ev.VerifyApplied)
    assert [e.outcome for e in applied] == ["appended", "appended"]


def test_group_offsets_become_visible_only_at_the_commit_marker() -> None:
    steps = [ops.CommitOffsets("my-group", "t-1", 3), ops.CommitOffsets("my-group", "t-0", 2), ops.Settle(10)]
    steps += [*INIT, ops.BeginTxn(0), ops.SendOffsets(0, "my-group", "t-0", 7), ops.Settle(100)]
    steps += [ops.FetchOffsets("my-group", False), ops.FetchOffsets("my-group", True), ops.Settle(10)]
    steps += [ops.CommitTxn(0), ops.Settle(100), ops.FetchOffsets("my-group", True), ops.Settle(10)]
    _, events = run(steps)
    assert of(events, ev.AddOffsetsHandled)[0].error == ev.NONE
    assert of(events, ev.TxnOffsetCommitHandled)[0].error == ev.NONE
    fetched = [(e.error, e.offsets, e.unstable) for e in of(events, ev.OffsetFetchHandled)]
    t0, t1 = ev.TopicOffset("t-0", 2), ev.TopicOffset("t-1", 3)
    assert fetched == [
        (ev.NONE, (t0, t1), ()),
        (ev.NONE, (t1,), ("t-0",)),  # KIP-447 per partition: t-1 is stable and still answered
        (ev.NONE, (ev.TopicOffset("t-0", 7), t1), ()),
    ]


def test_unknown_txn_mutant_refused_and_replication_mutants_are_not_txn_ones() -> None:
    with pytest.raises(ValueError, match="known mutants"):
        TxnCluster().reset(TxnConfig(), 0, frozenset({"truncate-to-hw"}))


def test_quiesce_is_bounded_and_ends_an_open_transaction_by_timeout() -> None:
    steps = [*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Quiesce(1_000_000)]
    cluster, events = run(steps)
    assert of(events, ev.TxnTimedOut) and cluster.sim.quiet()
    assert cluster.sim.world.now_ms <= 60_000 + 10_000 + 1_000


def test_quiesce_reports_whether_it_got_quiet() -> None:
    _, events = run([*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Quiesce(1_000)])
    assert [e.quiet for e in of(events, ev.Quiesced)] == [False]
    _, events = run([*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Quiesce(100_000)])
    assert [e.quiet for e in of(events, ev.Quiesced)] == [True]
