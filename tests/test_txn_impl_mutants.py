"""Each exactly-once mutant changes the reference cluster's events on a scenario built for it; the
correct cluster's events on the same scenario show the rule the mutant breaks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kconform.impl import mutants as registry
from kconform.impl.txn import mutants as m
from kconform.impl.txn.cluster import TxnCluster
from kconform.impl.txn.coordinator import TxnMetadata
from kconform.impl.txn.messages import EndTxnRequest, MarkerRequest, TxnProduceRequest
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

from .txnkit import HW_ALL, INIT, committed_txn, of, run


class Drive:
    """Step a cluster by hand: apply operations, deliver everything but held messages."""

    def __init__(self, cfg: TxnConfig, mutants: frozenset[str]) -> None:
        self.cluster = TxnCluster()
        self.events = self.cluster.reset(cfg, 0, mutants)

    def op(self, *steps: ops.Operation) -> None:
        for step in steps:
            self.events += self.cluster.apply(step)

    def ids(self, pred: Callable[[object], bool]) -> set[int]:
        """Ids of the in-flight messages whose payload satisfies ``pred``."""
        return {msg.msg_id for msg in self.cluster.sim.world.network.queue if pred(msg.payload)}

    def deliver(self, msg_id: int) -> None:
        queue = self.cluster.sim.world.network.queue
        self.op(ops.Deliver(next(i for i, msg in enumerate(queue) if msg.msg_id == msg_id)))

    def drop(self, msg_id: int) -> None:
        queue = self.cluster.sim.world.network.queue
        self.op(ops.Drop(next(i for i, msg in enumerate(queue) if msg.msg_id == msg_id)))

    def settle_except(self, held: set[int], hold: Callable[[object], bool] = lambda p: False) -> None:
        """Deliver in send order every message but those in ``held`` or whose payload ``hold`` picks."""
        for _ in range(10_000):
            queue = self.cluster.sim.world.network.queue
            index = next((i for i, msg in enumerate(queue) if msg.msg_id not in held and not hold(msg.payload)), None)
            if index is None:
                return
            self.op(ops.Deliver(index))


def _both(scenario: Callable[[frozenset[str]], list[ev.Event]], name: str) -> tuple[list[ev.Event], list[ev.Event]]:
    correct, mutated = scenario(frozenset()), scenario(frozenset({name}))
    assert [e.to_json() for e in correct] != [e.to_json() for e in mutated]
    return correct, mutated


def test_every_txn_mutant_is_registered_for_the_txn_slice_and_has_a_scenario() -> None:
    assert set(registry.mutants_of(registry.TXN)) == registry.TXN_MUTANT_NAMES == set(SCENARIOS)
    assert not set(registry.mutants_of(registry.REPLICATION)) & registry.TXN_MUTANT_NAMES


# ------------------------------------------------------------------------------- scenarios


def _duplicated_produce(mutants: frozenset[str]) -> list[ev.Event]:
    steps = [ops.InitProducer(0, ""), ops.Settle(10), ops.Send(0, "t-0", 2), ops.Duplicate(0), ops.Settle(10)]
    return run(steps, mutants=mutants)[1]


def test_no_sequence_dedup_appends_a_duplicate_twice() -> None:
    correct, mutated = _both(_duplicated_produce, m.NO_SEQUENCE_DEDUP)
    assert [e.outcome for e in of(correct, ev.TxnProduceHandled)] == ["appended", "duplicate"]
    assert [(e.outcome, e.base_offset) for e in of(mutated, ev.TxnProduceHandled)] == [("appended", 0), ("appended", 2)]


def _older_duplicate(mutants: frozenset[str]) -> list[ev.Event]:
    d = Drive(TxnConfig(), mutants)
    d.op(ops.InitProducer(0, ""), ops.Settle(10), ops.Send(0, "t-0", 1), ops.Send(0, "t-0", 1))
    first, second = sorted(d.ids(lambda p: isinstance(p, TxnProduceRequest)))
    d.op(ops.Duplicate(0))  # a copy of the first batch now, the original later
    d.deliver(second)
    d.deliver(first)
    return d.events


def test_small_dedup_window_rejects_a_duplicate_of_an_older_batch() -> None:
    correct, mutated = _both(_older_duplicate, m.SMALL_DEDUP_WINDOW)
    assert [e.outcome for e in of(correct, ev.TxnProduceHandled)] == ["appended", "appended", "duplicate"]
    last = of(mutated, ev.TxnProduceHandled)[-1]
    assert (last.outcome, last.error) == ("rejected", ev.OUT_OF_ORDER_SEQUENCE_NUMBER)


def _read_open_txn(mutants: frozenset[str]) -> list[ev.Event]:
    steps = [*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 2), ops.Settle(100), *HW_ALL]
    steps += [ops.ConsumeTxn(0, "t-0", True), ops.Settle(10)]
    return run(steps, mutants=mutants)[1]


@pytest.mark.parametrize(("name", "lso", "rids"), [(m.LSO_IGNORES_ONGOING, 2, (1, 2)), (m.LSO_OFF_BY_ONE, 1, (1,))])
def test_lso_mutants_let_read_committed_see_an_open_transaction(name: str, lso: int, rids: tuple[int, ...]) -> None:
    correct, mutated = _both(_read_open_txn, name)
    assert [(e.lso, e.records) for e in of(correct, ev.TxnConsumerFetchHandled)] == [(0, ())]
    assert [e.lso for e in of(mutated, ev.TxnConsumerFetchHandled)] == [lso]
    assert [e.rids for e in of(mutated, ev.ConsumerPolled)] == [rids]


def _abort_then_commit(mutants: frozenset[str]) -> list[ev.Event]:
    steps = [*INIT, *committed_txn(0, [("t-0", 2)], commit=False), *committed_txn(0, [("t-0", 1)]), *HW_ALL]
    steps += [ops.ConsumeTxn(0, "t-0", True), ops.Settle(10)]
    return run(steps, mutants=mutants)[1]


def test_no_aborted_filter_returns_aborted_records() -> None:
    correct, mutated = _both(_abort_then_commit, m.NO_ABORTED_FILTER)
    assert [e.rids for e in of(correct, ev.ConsumerPolled)] == [(3,)]
    assert [e.rids for e in of(mutated, ev.ConsumerPolled)] == [(1, 2, 3)]


def _zombie_produce(mutants: frozenset[str]) -> list[ev.Event]:
    """The first instance's produce is delayed until a second instance fenced it (no verification)."""
    d = Drive(TxnConfig(verification=False), mutants)
    d.op(*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1))
    d.settle_except(set(), _is_produce)
    d.op(ops.InitProducer(1, "txn-1"))
    d.settle_except(set(), _is_produce)
    d.op(ops.Settle(100))
    return d.events


def test_no_produce_epoch_fencing_appends_a_zombie_write() -> None:
    correct, mutated = _both(_zombie_produce, m.NO_PRODUCE_EPOCH_FENCING)
    late = of(correct, ev.TxnProduceHandled)[-1]
    assert (late.epoch, late.outcome, late.error) == (0, "rejected", ev.INVALID_PRODUCER_EPOCH)
    assert (of(mutated, ev.TxnProduceHandled)[-1].outcome, late.epoch) == ("appended", 0)


def _late_produce_after_abort(mutants: frozenset[str]) -> list[ev.Event]:
    """The produce (and its retries) stay in the network until the batch expired and the
    transaction was aborted; then they arrive (the hanging-transaction case of KIP-890)."""
    d = Drive(TxnConfig(transaction_timeout_ms=300_000), mutants)
    d.op(*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1))
    d.settle_except(set(), _is_produce)
    d.op(ops.Advance(120_001), ops.AbortTxn(0))
    d.settle_except(set(), _is_produce)
    d.op(ops.Settle(100), ops.AdvanceHw("t-0", -1), ops.ConsumeTxn(0, "t-0", True), ops.Settle(10))
    return d.events


def test_no_verification_lets_a_late_produce_start_a_hanging_transaction() -> None:
    correct, mutated = _both(_late_produce_after_abort, m.NO_VERIFICATION)
    assert of(correct, ev.EndTxnHandled)[-1].state == "PrepareAbort"
    assert {e.error for e in of(correct, ev.VerifyApplied)} == {ev.INVALID_TXN_STATE}
    assert of(correct, ev.TxnConsumerFetchHandled)[-1].lso == 1  # only the abort marker
    assert any(e.outcome == "appended" for e in of(mutated, ev.TxnProduceHandled))
    fetch = of(mutated, ev.TxnConsumerFetchHandled)[-1]
    assert fetch.lso == 1 < fetch.hw  # the late record opened a transaction nobody will end


def _late_end_txn(mutants: frozenset[str]) -> list[ev.Event]:
    """TV2: the EndTxn of transaction 1 is duplicated; the copy arrives while transaction 2 is open."""
    d = Drive(TxnConfig(transaction_version=2), mutants)
    d.op(*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Settle(100), ops.CommitTxn(0))
    (late,) = d.ids(lambda p: isinstance(p, EndTxnRequest))
    d.op(ops.Duplicate(0))
    d.settle_except({late})
    d.op(ops.BeginTxn(0), ops.Send(0, "t-0", 1))
    d.settle_except({late})
    d.deliver(late)
    return d.events


def test_late_endtxn_next_txn_ends_the_next_transaction() -> None:
    correct, mutated = _both(_late_end_txn, m.LATE_ENDTXN_NEXT_TXN)
    late = of(correct, ev.EndTxnHandled)[-1]
    assert (late.epoch, late.error, late.state) == (0, ev.PRODUCER_FENCED, "Ongoing")
    late = of(mutated, ev.EndTxnHandled)[-1]
    assert (late.epoch, late.error, late.state) == (0, ev.NONE, "PrepareCommit")


def _stale_marker(mutants: frozenset[str]) -> list[ev.Event]:
    """The first coordinator's markers are delayed past a failover and the next transaction."""
    d = Drive(TxnConfig(), mutants)
    d.op(*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Settle(100), ops.CommitTxn(0), ops.DeliverTo(1))
    old = d.ids(lambda p: isinstance(p, MarkerRequest))
    d.op(ops.MoveCoordinator("txn-1", 2), ops.Advance(10))
    d.settle_except(old)
    d.op(ops.BeginTxn(0), ops.Send(0, "t-0", 1))
    d.settle_except(old)
    for msg_id in sorted(old):
        d.deliver(msg_id)
    return d.events


def test_stale_coordinator_epoch_marker_ends_the_next_transaction() -> None:
    correct, mutated = _both(_stale_marker, m.STALE_COORDINATOR_EPOCH_MARKER)
    stale = [e for e in of(correct, ev.MarkerHandled) if e.coordinator_epoch == 0]
    assert [e.error for e in stale] == [ev.TRANSACTION_COORDINATOR_FENCED]
    stale = [e for e in of(mutated, ev.MarkerHandled) if e.coordinator_epoch == 0]
    assert [e.error for e in stale] == [ev.NONE]


def _offsets_before_commit(mutants: frozenset[str]) -> list[ev.Event]:
    steps = [*INIT, ops.BeginTxn(0), ops.SendOffsets(0, "my-group", "t-0", 7), ops.Settle(100)]
    steps += [ops.FetchOffsets("my-group", False), ops.Settle(10)]
    return run(steps, mutants=mutants)[1]


def test_txn_offsets_visible_early_shows_an_uncommitted_offset() -> None:
    correct, mutated = _both(_offsets_before_commit, m.TXN_OFFSETS_VISIBLE_EARLY)
    assert [e.offsets for e in of(correct, ev.OffsetFetchHandled)] == [()]
    assert [e.offsets for e in of(mutated, ev.OffsetFetchHandled)] == [(ev.TopicOffset("t-0", 7),)]


def _failover_after_prepare(mutants: frozenset[str]) -> list[ev.Event]:
    d = Drive(TxnConfig(), mutants)
    d.op(*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Settle(100), ops.CommitTxn(0), ops.DeliverTo(1))
    for msg_id in sorted(d.ids(lambda p: isinstance(p, MarkerRequest))):
        d.drop(msg_id)
    d.op(ops.MoveCoordinator("txn-1", 2), ops.Quiesce(100_000))
    return d.events


def test_failover_forgets_prepare_never_completes_the_transaction() -> None:
    correct, mutated = _both(_failover_after_prepare, m.FAILOVER_FORGETS_PREPARE)
    assert of(correct, ev.MarkerResponseHandled)[-1].state == "CompleteCommit"
    assert not [e for e in of(mutated, ev.MarkerSent) if e.coordinator_epoch == 1]
    assert not of(mutated, ev.MarkerResponseHandled)


def _exhausted_epoch(mutants: frozenset[str]) -> list[ev.Event]:
    """The id's epoch stands at 32766 (set white-box: 32766 bumps are too long a scenario)."""
    d = Drive(TxnConfig(), mutants)
    d.op(*INIT)
    coordinator = d.cluster.sim.brokers[1].coordinators["__transaction_state-10"]
    meta: TxnMetadata = coordinator.txns["txn-1"]
    meta.epoch = 32766
    coordinator._write("txn-1", meta)
    d.op(ops.InitProducer(1, "txn-1"), ops.Settle(10))
    return d.events


def test_epoch_overflow_hands_out_the_fencing_epoch() -> None:
    correct, mutated = _both(_exhausted_epoch, m.EPOCH_OVERFLOW)
    fresh = of(correct, ev.InitProducerIdHandled)[-1]
    assert (fresh.pid, fresh.epoch) == (1001, 0)
    bumped = of(mutated, ev.InitProducerIdHandled)[-1]
    assert (bumped.pid, bumped.epoch) == (1000, 32767)


def _parked_read_committed(mutants: frozenset[str]) -> list[ev.Event]:
    """A read_committed fetch waits at the LSO (0: an open transaction); the HW passes 2 more records."""
    steps = [*INIT, ops.BeginTxn(0), ops.Send(0, "t-0", 1), ops.Settle(100), ops.AdvanceHw("t-0", -1)]
    steps += [ops.ConsumeTxn(0, "t-0", True), ops.Settle(10), ops.Send(0, "t-0", 2), ops.Settle(100)]
    steps += [ops.AdvanceHw("t-0", -1), ops.Settle(10)]
    return run(steps, TxnConfig(fetch_max_wait_ms=500), mutants)[1]


def test_kafka_5355_delayed_fetch_returns_records_beyond_the_lso() -> None:
    correct, mutated = _both(_parked_read_committed, m.DELAYED_FETCH_DROPS_ISOLATION)
    assert of(correct, ev.TxnFetchCompleted) == [] and of(correct, ev.ConsumerPolled) == []
    (done,) = of(mutated, ev.TxnFetchCompleted)
    assert (done.read_committed, done.lso, [r.offset for r in done.records]) == (True, 0, [0, 1, 2])
    assert [e.rids for e in of(mutated, ev.ConsumerPolled)] == [(1, 2, 3)]


def _is_produce(payload: object) -> bool:
    return isinstance(payload, TxnProduceRequest)


SCENARIOS: dict[str, Callable[[frozenset[str]], list[ev.Event]]] = {
    m.NO_SEQUENCE_DEDUP: _duplicated_produce,
    m.SMALL_DEDUP_WINDOW: _older_duplicate,
    m.LSO_IGNORES_ONGOING: _read_open_txn,
    m.LSO_OFF_BY_ONE: _read_open_txn,
    m.NO_ABORTED_FILTER: _abort_then_commit,
    m.NO_PRODUCE_EPOCH_FENCING: _zombie_produce,
    m.NO_VERIFICATION: _late_produce_after_abort,
    m.LATE_ENDTXN_NEXT_TXN: _late_end_txn,
    m.STALE_COORDINATOR_EPOCH_MARKER: _stale_marker,
    m.TXN_OFFSETS_VISIBLE_EARLY: _offsets_before_commit,
    m.FAILOVER_FORGETS_PREPARE: _failover_after_prepare,
    m.EPOCH_OVERFLOW: _exhausted_epoch,
    m.DELAYED_FETCH_DROPS_ISOLATION: _parked_read_committed,
}
