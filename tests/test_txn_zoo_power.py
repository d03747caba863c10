"""Two broker bugs the default gate missed (issue 17, the mutation sample of 2026-11-27) and the zoo
steps that catch them now, each planted here with the clean run as its near miss:

- a coordinator that loses its ``__transaction_state`` partition but keeps running
  (TxnBroker.resign_coordinator without TxnCoordinator.deactivate): Kafka drops the partition's
  transactions and pending markers on resignation (TransactionCoordinator.onResignation,
  TransactionMarkerChannelManager.removeMarkersForTxnTopicPartition), so the deposed coordinator
  must not re-send its lost marker; ``failover-after-prepare`` now lets time pass that re-send
  timeout;
- a TxnOffsetCommit that does not record its producer on ``__consumer_offsets`` when it is the
  producer's first write there: the pending offsets are an open transaction of the producer that
  holds the partition's LSO (ProducerStateManager.update, UnifiedLog.lastStableOffset); a
  read_committed Fetch of the partition in ``txn-offsets-before-commit`` must return nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.runner import LockstepRun
from kconform.conformance.txn.scenarios import (
    COORDINATOR,
    FAILOVER_AFTER_PREPARE,
    OFFSETS_PARTITION,
    TXN_OFFSETS_BEFORE_COMMIT,
    Scenario,
    run_scenario,
)
from kconform.impl.txn import broker as txn_broker
from kconform.impl.txn import log as txn_log
from kconform.impl.txn.cluster import TxnCluster
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev

CONFIGS = (TxnConfig(), TxnConfig(transaction_version=2))


def _run(scenario: Scenario, cfg: TxnConfig) -> LockstepRun:
    return run_scenario(TxnCluster(), scenario, cfg, frozenset())


def _events(run: LockstepRun) -> list[ev.Event]:
    return [e for step in run.steps for e in step.events]


def _resign_without_deactivating(self: Any, state_partition: str) -> None:
    self.coordinators.pop(state_partition, None)


def _forget_new_offset_writers(original: Callable[..., tuple[int, int]]) -> Callable[..., tuple[int, int]]:
    def txn_offset_commit(self: Any, pid: int, *args: Any) -> tuple[int, int]:
        known = pid in self.producers
        result = original(self, pid, *args)
        if not known:
            self.producers.pop(pid, None)
        return result

    return txn_offset_commit


@pytest.mark.parametrize("cfg", CONFIGS, ids=("tv0", "tv2"))
def test_the_deposed_coordinator_stays_silent_and_a_running_one_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(FAILOVER_AFTER_PREPARE, cfg)
    assert run.failure is None, run.failure
    moved = next(i for i, e in enumerate(_events(run)) if isinstance(e, ev.CoordinatorMoved) and e.coordinator_epoch)
    later = _events(run)[moved:]
    assert not [e for e in later if isinstance(e, ev.MarkerSent) and e.node == COORDINATOR]
    assert any(isinstance(e, ev.ClockAdvanced) for e in later[-20:])  # time passed the re-send timeout
    monkeypatch.setattr(txn_broker.TxnBroker, "resign_coordinator", _resign_without_deactivating)
    run = _run(FAILOVER_AFTER_PREPARE, cfg)
    assert run.failure is not None and (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "marker_sent")


@pytest.mark.parametrize("cfg", CONFIGS, ids=("tv0", "tv2"))
def test_pending_offsets_hold_the_offsets_partitions_lso_and_a_forgotten_writer_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(TXN_OFFSETS_BEFORE_COMMIT, cfg)
    assert run.failure is None, run.failure
    fetch = next(e for e in _events(run) if isinstance(e, ev.TxnConsumerFetchHandled))
    assert (fetch.partition, fetch.records, fetch.lso) == (OFFSETS_PARTITION, (), 0) and fetch.hw > 0
    original = txn_log.TxnPartitionLog.txn_offset_commit
    monkeypatch.setattr(txn_log.TxnPartitionLog, "txn_offset_commit", _forget_new_offset_writers(original))
    run = _run(TXN_OFFSETS_BEFORE_COMMIT, cfg)
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "txn_consumer_fetch_handled")
