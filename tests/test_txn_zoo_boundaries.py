"""Zoo scenarios at the boundaries hand-planted bugs hid behind (issue 17, power: the exactly-once
census of hand-made bugs of 2026-11-27), each bug planted here as a one-line change of the
reference's source (compiled as a separate module, the real one untouched) with the clean run and a
near miss that stays silent:

- ``aborted-list-at-marker``: TransactionIndex.collectAbortedTxns keeps an aborted transaction whose
  ABORT marker is the fetch offset (``lastOffset >= fetchOffset``); a leader comparing ``>`` drops
  it from the answer;
- ``failover-after-prepare-abort``: TransactionStateManager.loadTransactionsForTxnTopicPartition
  completes PrepareAbort as well as PrepareCommit; a loader that only re-sends COMMIT markers hangs
  the aborted transaction;
- ``expiry-keeps-open-txn``: ProducerStateManager.isProducerExpired spares a producer with an open
  transaction (KIP-854); an expiry that only looks at the idle time drops it;
- ``delayed-fetch-past-lso``: DelayedFetch.tryComplete counts from the start offset of its read (the
  LSO for a read_committed fetch positioned above it); counting from the fetch offset completes it
  at an HW advance that left the LSO in place.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from kconform.ci.mutation.child import module_path
from kconform.conformance.judge import INVARIANT_VIOLATION, NON_CONFORMANCE
from kconform.conformance.runner import LockstepRun
from kconform.conformance.txn import scenarios as zoo
from kconform.impl.txn import broker as impl_broker
from kconform.impl.txn import coordinator as impl_coordinator
from kconform.impl.txn import log as impl_log
from kconform.impl.txn.cluster import TxnCluster
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

CONFIGS = (TxnConfig(), TxnConfig(transaction_version=2))
IDS = ("tv0", "tv2")
WAITING = TxnConfig(transaction_version=2, fetch_max_wait_ms=5000)
"""The gate's TV2 configuration: consumer fetches wait (model.txn_delayed_fetch)."""


def _planted(module: str, old: str, new: str) -> types.ModuleType:
    """``module`` compiled with its one occurrence of ``old`` replaced by ``new``, as a separate
    module object (the real one is untouched)."""
    path = module_path(module)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{module}: the planted line is not there once"
    planted = types.ModuleType(module)
    planted.__package__ = module.rpartition(".")[0]
    exec(compile(text.replace(old, new), str(path), "exec"), planted.__dict__)
    return planted


def _run(scenario: zoo.Scenario, cfg: TxnConfig) -> LockstepRun:
    return zoo.run_scenario(TxnCluster(), scenario, cfg, frozenset())


def _events(run: LockstepRun) -> list[ev.Event]:
    return [e for step in run.steps for e in step.events]


def _failed_at(run: LockstepRun, verdict: str, name: str) -> None:
    assert run.failure is not None, "the planted bug passed"
    assert (run.failure.verdict, run.failure.name) == (verdict, name), run.failure


def _variant(scenario: zoo.Scenario, ops_: tuple[ops.Operation, ...]) -> zoo.Scenario:
    return zoo.Scenario(scenario.name + "-near-miss", "", (), ops_)


# ------------------------------------------------------------------------ aborted list at marker


def _plant_aborted_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _planted(
        "kconform.impl.txn.log",
        "if a.last_offset >= fetch_offset and a.first_offset < bound",
        "if a.last_offset > fetch_offset and a.first_offset < bound",
    )
    monkeypatch.setattr(impl_log.TxnPartitionLog, "fetch", planted.TxnPartitionLog.fetch)


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_fetch_from_the_abort_marker_lists_the_aborted_transaction(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.ABORTED_LIST_AT_MARKER, cfg)
    assert run.failure is None, run.failure
    committed = [e for e in _events(run) if isinstance(e, ev.TxnConsumerFetchHandled) and e.read_committed]
    assert [(e.fetch_offset, [a.first_offset for a in e.aborted]) for e in committed] == [(2, [0]), (0, [0])]
    _plant_aborted_boundary(monkeypatch)
    _failed_at(_run(zoo.ABORTED_LIST_AT_MARKER, cfg), NON_CONFORMANCE, "txn_consumer_fetch_handled")


def test_a_fetch_one_past_the_abort_marker_lists_nothing_and_the_planted_bug_is_unseen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Near miss: the HW passes the marker before the read_uncommitted read, so the read_committed
    fetch starts past the marker (nothing to list, by either comparison)."""
    steps = list(zoo.ABORTED_LIST_AT_MARKER.ops)
    steps[steps.index(ops.AdvanceHw("t-0", 2))] = ops.AdvanceHw("t-0", -1)
    near = _variant(zoo.ABORTED_LIST_AT_MARKER, tuple(steps))
    assert _run(near, TxnConfig()).failure is None
    _plant_aborted_boundary(monkeypatch)
    assert _run(near, TxnConfig()).failure is None


# --------------------------------------------------------------------- failover after PrepareAbort


def _plant_commit_only_load(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _planted(
        "kconform.impl.txn.coordinator",
        "                if meta.state in PREPARE:\n                    self._send_markers(txn_id, meta)\n",
        "                if meta.state == PREPARE_COMMIT:\n                    self._send_markers(txn_id, meta)\n",
    )
    monkeypatch.setattr(impl_coordinator.TxnCoordinator, "load", planted.TxnCoordinator.load)


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_new_coordinator_completes_a_prepare_abort_and_one_that_does_not_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.FAILOVER_AFTER_PREPARE_ABORT, cfg)
    assert run.failure is None, run.failure
    resent = [e for e in _events(run) if isinstance(e, ev.MarkerSent) and e.coordinator_epoch == 1]
    assert [(e.partition, e.commit) for e in resent] == [("t-0", False)]
    _plant_commit_only_load(monkeypatch)
    _failed_at(_run(zoo.FAILOVER_AFTER_PREPARE_ABORT, cfg), INVARIANT_VIOLATION, "NoHangingTransaction")


def test_a_failover_after_the_abort_marker_landed_needs_no_resend(monkeypatch: pytest.MonkeyPatch) -> None:
    """Near miss: the ABORT marker and its answer are delivered (not lost) before the failover: the
    transaction is CompleteAbort, the new coordinator has nothing to re-send, the planted loader is
    unseen."""
    steps = [ops.Settle(100) if isinstance(op, ops.Drop) else op for op in zoo.FAILOVER_AFTER_PREPARE_ABORT.ops]
    near = _variant(zoo.FAILOVER_AFTER_PREPARE_ABORT, tuple(steps))
    assert _run(near, TxnConfig()).failure is None
    _plant_commit_only_load(monkeypatch)
    assert _run(near, TxnConfig()).failure is None


# ---------------------------------------------------------------------- expiry keeps an open txn


def _plant_expiry_of_open_txn(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _planted(
        "kconform.impl.txn.log",
        "if e.txn_first_offset < 0 and self.world.now_ms - e.last_timestamp_ms >= limit",
        "if self.world.now_ms - e.last_timestamp_ms >= limit",
    )
    monkeypatch.setattr(impl_log.TxnPartitionLog, "expire_producers", planted.TxnPartitionLog.expire_producers)


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_an_open_transaction_outlives_producer_expiry_and_its_expiry_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.EXPIRY_KEEPS_OPEN_TXN, cfg)
    assert run.failure is None, run.failure
    es = _events(run)
    assert not [e for e in es if isinstance(e, ev.ProducerExpired)]
    assert [e.state for e in es if isinstance(e, ev.TxnTimedOut)] == ["PrepareAbort"]  # its markers held
    _plant_expiry_of_open_txn(monkeypatch)
    _failed_at(_run(zoo.EXPIRY_KEEPS_OPEN_TXN, cfg), NON_CONFORMANCE, "producer_expired")


def test_a_producer_whose_transaction_ended_expires_and_the_planted_bug_is_unseen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Near miss: the transaction commits before the day passes, so the idle producer has no open
    transaction and must expire (ProducerExpiryBounded); the planted expiry agrees there."""
    near = _variant(
        zoo.EXPIRY_KEEPS_OPEN_TXN, (*zoo._open(1), *zoo._commit(zoo.PRODUCER), *zoo.EXPIRY_KEEPS_OPEN_TXN.ops[-1:])
    )
    run = _run(near, TxnConfig())
    assert run.failure is None, run.failure
    assert [e.partition for e in _events(run) if isinstance(e, ev.ProducerExpired)] == ["t-0"]
    _plant_expiry_of_open_txn(monkeypatch)
    assert _run(near, TxnConfig()).failure is None


# --------------------------------------------------------------------- delayed fetch past the LSO


def _plant_count_from_fetch_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _planted(
        "kconform.impl.txn.broker",
        "return op.start_offset > end or end - op.start_offset >= op.min_bytes",
        "return op.fetch_offset > end or end - op.fetch_offset >= op.min_bytes",
    )
    monkeypatch.setattr(impl_broker.TxnBroker, "_fetch_ready", planted.TxnBroker._fetch_ready)


def test_a_fetch_parked_above_the_lso_waits_for_the_lso_and_an_early_answer_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = _run(zoo.DELAYED_FETCH_PAST_LSO, WAITING)
    assert run.failure is None, run.failure
    done = [e for e in _events(run) if isinstance(e, ev.TxnFetchCompleted)]
    assert [(e.fetch_offset, [r.offset for r in e.records]) for e in done] == [(1, [1, 2])]
    _plant_count_from_fetch_offset(monkeypatch)
    _failed_at(_run(zoo.DELAYED_FETCH_PAST_LSO, WAITING), NON_CONFORMANCE, "txn_fetch_completed")


def test_a_fetch_parked_at_the_lso_is_counted_alike_and_the_planted_bug_is_unseen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Near miss: without the read_uncommitted read first the read_committed fetch is parked at the
    LSO itself (start offset = fetch offset), where both ways of counting agree."""
    steps = list(zoo.DELAYED_FETCH_PAST_LSO.ops)
    i = steps.index(ops.ConsumeTxn(zoo.CONSUMER, "t-0", False))
    del steps[i : i + 2]
    near = _variant(zoo.DELAYED_FETCH_PAST_LSO, tuple(steps))
    assert _run(near, WAITING).failure is None
    _plant_count_from_fetch_offset(monkeypatch)
    assert _run(near, WAITING).failure is None


def test_frozen_map_updates_keep_the_sorted_order() -> None:
    """FrozenMap.set / remove skip the sort when the order is already right (a replaced value, a key
    after every key); the result is the map a full sort gives, equal and hashing alike."""
    from kconform.model.frozen_map import FrozenMap

    m: FrozenMap[Any, int] = FrozenMap()
    for k in (5, 9, 7, 12, 9, 1, "a", 3):
        m = m.set(k, len(m))
        assert list(m) == list(FrozenMap(dict(m.items())))
        assert m == FrozenMap(dict(m.items())) and hash(m) == hash(FrozenMap(dict(m.items())))
    for k in (7, 100, "a"):
        m = m.remove(k)
        assert list(m) == list(FrozenMap(dict(m.items())))
    assert list(m) == [1, 3, 5, 9, 12]
