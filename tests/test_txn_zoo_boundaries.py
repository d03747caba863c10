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


# ------------------------------------------------------------ marker before verification answer


def _plant_unguarded_append(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _planted(
        "kconform.impl.txn.broker",
        "req.transactional, waiting.guard)",
        "req.transactional, None)",
    )
    monkeypatch.setattr(impl_broker.TxnBroker, "_on_verify_response", planted.TxnBroker._on_verify_response)


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_verification_answer_overtaken_by_the_marker_is_refused_and_an_unguarded_append_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.MARKER_BEFORE_VERIFICATION_ANSWER, cfg)
    assert run.failure is None, run.failure
    rejected = [(e.outcome, e.error) for e in _events(run) if isinstance(e, ev.VerifyApplied)]
    assert rejected == [("rejected", ev.INVALID_TXN_STATE)]  # the guard, checked before the epoch
    _plant_unguarded_append(monkeypatch)
    _failed_at(_run(zoo.MARKER_BEFORE_VERIFICATION_ANSWER, cfg), NON_CONFORMANCE, "verify_applied")


def test_a_verification_answer_ahead_of_the_marker_appends_and_the_planted_bug_is_unseen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Near miss: the verification's answer reaches the leader before the marker: the batch is
    appended into the transaction, which the marker then aborts (the guard still matches)."""
    steps = [ops.Deliver(0) if op == ops.Deliver(2) else op for op in zoo.MARKER_BEFORE_VERIFICATION_ANSWER.ops]
    near = _variant(zoo.MARKER_BEFORE_VERIFICATION_ANSWER, tuple(steps))
    run = _run(near, TxnConfig())
    assert run.failure is None, run.failure
    assert [(e.outcome, e.error) for e in _events(run) if isinstance(e, ev.VerifyApplied)] == [("appended", ev.NONE)]
    _plant_unguarded_append(monkeypatch)
    assert _run(near, TxnConfig()).failure is None


# ------------------------------------------------------------------------- fetches by hand


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_hand_made_fetches_get_kafkas_errors_and_a_range_check_against_the_hw_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.FETCH_OFFSETS_BY_HAND, cfg)
    assert run.failure is None, run.failure
    hand = [e for e in _events(run) if isinstance(e, ev.TxnConsumerFetchHandled) and e.req > 0][:8]
    assert [(e.fetch_offset, e.error, e.hw, e.lso) for e in hand] == [
        (2, ev.NONE, 1, 0),
        (2, ev.NONE, 1, 0),
        (1, ev.NONE, 1, 0),
        (3, ev.OFFSET_OUT_OF_RANGE, -1, -1),
        (3, ev.OFFSET_OUT_OF_RANGE, -1, -1),
        (-1, ev.OFFSET_OUT_OF_RANGE, -1, -1),
        (0, ev.NOT_LEADER_OR_FOLLOWER, -1, -1),
        (0, ev.NOT_LEADER_OR_FOLLOWER, -1, -1),
    ]
    planted = _planted(
        "kconform.impl.txn.log", "if not 0 <= fetch_offset <= self.leo:", "if not 0 <= fetch_offset <= self.hw:"
    )
    monkeypatch.setattr(impl_log.TxnPartitionLog, "fetch", planted.TxnPartitionLog.fetch)
    _failed_at(_run(zoo.FETCH_OFFSETS_BY_HAND, cfg), NON_CONFORMANCE, "txn_consumer_fetch_handled")


def test_an_error_answer_carries_no_offsets_in_the_model() -> None:
    """Kafka answers a partition's read error with HW and LSO -1 (ReplicaManager.readFromLocalLog's
    createLogReadResult); an in-range fetch above the HW answers the real ones (a near miss)."""
    from kconform.model import txn_partition as T

    def head(a: T.FetchAnswer) -> tuple[int, int, int]:
        return a.error, a.hw, a.lso

    p = T.Partition("t-0", leader=0)
    assert head(T.consumer_fetch(p, 1, 0, False)) == (ev.NOT_LEADER_OR_FOLLOWER, -1, -1)
    assert head(T.consumer_fetch(p, 0, 1, True)) == (ev.OFFSET_OUT_OF_RANGE, -1, -1)
    assert head(T.consumer_fetch(p, 0, 0, True)) == (ev.NONE, 0, 0)


# ------------------------------------------------------------------ InitProducerId by hand


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("0 < req.timeout_ms <= cfg.transaction_max_timeout_ms", "0 < req.timeout_ms < cfg.transaction_max_timeout_ms"),
        ("if (req.expected_pid == -1) != (req.expected_epoch == -1):", "if False:"),
    ],
    ids=["max-timeout-refused", "no-invalid-request"],
)
def test_hand_made_init_producer_ids_are_validated_and_a_planted_check_is_caught(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for cfg in CONFIGS:
        run = _run(zoo.INIT_PRODUCER_ID_BY_HAND, cfg)
        assert run.failure is None, run.failure
        inits = [e for e in _events(run) if isinstance(e, ev.InitProducerIdHandled)]
        assert [(e.timeout_ms, e.error, e.epoch) for e in inits[1:]] == [
            (0, ev.INVALID_TRANSACTION_TIMEOUT, -1),
            (900_001, ev.INVALID_TRANSACTION_TIMEOUT, -1),
            (60_000, ev.INVALID_REQUEST, -1),
            (60_000, ev.INVALID_REQUEST, -1),
            (900_000, ev.NONE, inits[0].epoch + (2 if cfg.transaction_version == 2 else 1)),
        ]
    planted = _planted("kconform.impl.txn.coordinator", old, new)
    monkeypatch.setattr(impl_coordinator.TxnCoordinator, "_init_pid", planted.TxnCoordinator._init_pid)
    for cfg in CONFIGS:
        _failed_at(_run(zoo.INIT_PRODUCER_ID_BY_HAND, cfg), NON_CONFORMANCE, "init_producer_id_handled")


def test_a_failed_read_with_a_wait_is_answered_at_once_and_parking_it_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = _run(zoo.FETCH_OFFSETS_BY_HAND, TxnConfig())
    waits = [(e.error, e.parked) for e in _events(run) if isinstance(e, ev.TxnFetchWaitHandled)]
    assert waits == [(ev.OFFSET_OUT_OF_RANGE, False), (ev.NOT_LEADER_OR_FOLLOWER, False)]
    planted = _planted(
        "kconform.impl.txn.broker",
        "parked = error == NONE and len(records) < req.min_bytes",
        "parked = len(records) < req.min_bytes",
    )
    monkeypatch.setattr(impl_broker.TxnBroker, "_fetch_wait", planted.TxnBroker._fetch_wait)
    _failed_at(_run(zoo.FETCH_OFFSETS_BY_HAND, TxnConfig()), NON_CONFORMANCE, "txn_fetch_wait_handled")
    # near miss: the consumers' own fetches (in range, answered at once or parked on the LSO) are unchanged
    assert _run(zoo.DELAYED_FETCH_BEYOND_LSO, WAITING).failure is None


# ------------------------------------------------------------------ stale ABORT marker


def _plant_commit_only_coordinator_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _planted(
        "kconform.impl.txn.log",
        "        entry.coordinator_epoch = coordinator_epoch\n",
        "        if commit:\n            entry.coordinator_epoch = coordinator_epoch\n",
    )
    monkeypatch.setattr(impl_log.TxnPartitionLog, "append_marker", planted.TxnPartitionLog.append_marker)


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_deposed_coordinators_abort_marker_is_fenced_and_an_unfenced_one_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.STALE_COORDINATOR_ABORT_MARKER, cfg)
    assert run.failure is None, run.failure
    stale = [e.error for e in _events(run) if isinstance(e, ev.MarkerHandled) and e.coordinator_epoch == 0]
    assert stale == [ev.TRANSACTION_COORDINATOR_FENCED]
    _plant_commit_only_coordinator_epoch(monkeypatch)
    _failed_at(_run(zoo.STALE_COORDINATOR_ABORT_MARKER, cfg), NON_CONFORMANCE, "marker_handled")
    # near miss: the COMMIT-marker copy, where the planted leader still stores the epoch
    assert _run(zoo.STALE_COORDINATOR_MARKER, cfg).failure is None


# ------------------------------------------------------------- verification during Prepare*


def _plant_abortable_in_prepare(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _planted(
        "kconform.impl.txn.coordinator",
        "        elif meta.state in PREPARE:\n            error = CONCURRENT_TRANSACTIONS\n",
        "",
    )
    monkeypatch.setattr(impl_coordinator.TxnCoordinator, "handle_verify", planted.TxnCoordinator.handle_verify)


def test_a_verification_during_prepare_commit_is_concurrent_and_an_abortable_answer_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """TV0 (under TV2 the commit's epoch bump fences the rogue batch first: PRODUCER_FENCED)."""
    run = _run(zoo.VERIFICATION_DURING_PREPARE, TxnConfig())
    assert run.failure is None, run.failure
    verified = [(e.partition, e.error) for e in _events(run) if isinstance(e, ev.VerifyHandled)]
    assert verified[-1] == ("t-1", ev.CONCURRENT_TRANSACTIONS)
    _plant_abortable_in_prepare(monkeypatch)
    _failed_at(_run(zoo.VERIFICATION_DURING_PREPARE, TxnConfig()), NON_CONFORMANCE, "verify_handled")


def test_the_same_batch_after_the_commit_is_abortable_and_the_planted_bug_is_unseen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Near miss: the COMMIT marker and its answer land first (CompleteCommit): the partition is in no
    transaction, TRANSACTION_ABORTABLE by either coordinator."""
    steps = list(zoo.VERIFICATION_DURING_PREPARE.ops)
    rogue = next(i for i, op in enumerate(steps) if isinstance(op, ops.RogueProduce))
    steps[rogue:rogue] = [ops.Settle(100)]
    near = _variant(zoo.VERIFICATION_DURING_PREPARE, tuple(steps))
    run = _run(near, TxnConfig())
    assert run.failure is None, run.failure
    assert [e.error for e in _events(run) if isinstance(e, ev.VerifyHandled)][-1] == ev.TRANSACTION_ABORTABLE
    _plant_abortable_in_prepare(monkeypatch)
    assert _run(near, TxnConfig()).failure is None


# ------------------------------------------------------------------ two unstable transactions


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_the_lso_is_the_earliest_unstable_offset_and_the_latest_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.LSO_TWO_UNSTABLE, cfg)
    assert run.failure is None, run.failure
    reads = [(e.hw, e.lso) for e in _events(run) if isinstance(e, ev.TxnConsumerFetchHandled)]
    assert reads[:2] == [(1, 0), (3, 2)]
    planted = _planted("kconform.impl.txn.log", "first_unstable = min(unstable)", "first_unstable = max(unstable)")
    monkeypatch.setattr(impl_log.TxnPartitionLog, "lso", planted.TxnPartitionLog.lso)
    _failed_at(_run(zoo.LSO_TWO_UNSTABLE, cfg), NON_CONFORMANCE, "txn_consumer_fetch_handled")
    # near miss: one unstable transaction at a time, where min and max agree
    assert _run(zoo.READ_COMMITTED_DURING_OPEN_TXN, cfg).failure is None
