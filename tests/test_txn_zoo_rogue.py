"""Hand-made client requests in the exactly-once zoo (issue 17, the mutation census of 2026-11-27)
and the broker bugs they catch, each planted here as the exact mutant of the census (compiled from
the mutated source by the mutation runner's own operators) with the clean run as its near miss:

- a batch without the transactional flag under the producer id and epoch of an open transaction
  (``adversarial-producer``): Kafka refuses it (ProducerAppendInfo.updateCurrentTxnFirstOffset:
  InvalidTxnStateException "Expected transactional write", INVALID_TXN_STATE); a leader without
  that check appends it into the transaction;
- requests for a transactional id with no metadata (``unknown-transactional-id``, before any
  InitProducerId): TransactionCoordinator.handleEndTransaction answers an EndTxn
  INVALID_PRODUCER_ID_MAPPING (a TV2 coordinator without that guard dereferences nothing), and
  handleInitProducerId takes any KIP-360 expected producer id on the metadata it just created
  (isValidProducerId: producerEpoch == NO_PRODUCER_EPOCH; one that fences it is caught);
- KIP-360's previous-producer-id rule after a rotation (``epoch-exhaustion``'s last steps):
  TransactionCoordinator.handleInitProducerId takes the previous producer id only with an exhausted
  expected epoch (isEpochExhausted: >= 32766). A threshold one lower takes 32765 for a retry and
  fences the new id's Ongoing transaction; one higher refuses the genuine retry at 32766. The real
  scenario takes 32,768 round trips (about 12 s), so the test runs its steps with the epoch range
  scaled down to ``SMALL_SHORT_MAX`` in the model and the reference alike;
- a coordinator deposed before its load finished (``failover-before-load``: two moves within the
  10 ms load): TransactionStateManager.loadTransactionsForTxnTopicPartition completes a load only for
  a partition still being loaded at that coordinator epoch; a deposed coordinator that stays active
  loads anyway.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from kconform.ci.mutation.child import module_path
from kconform.ci.mutation.operators import mutate
from kconform.conformance.adapter import AdapterError
from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.runner import LockstepRun
from kconform.conformance.txn import scenarios as zoo
from kconform.impl.txn import broker as impl_broker
from kconform.impl.txn import coordinator as impl_coordinator
from kconform.impl.txn import log as impl_log
from kconform.impl.txn.cluster import TxnCluster
from kconform.model import coordinator as model_coordinator
from kconform.model import txn_timeout
from kconform.model.txn_config import SHORT_MAX, TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

CONFIGS = (TxnConfig(), TxnConfig(transaction_version=2))
IDS = ("tv0", "tv2")

NON_TXN_BATCH_UNCHECKED = "kconform.impl.txn.log:TxnPartitionLog.append_client:no-guard:97d2d692"
END_TXN_V2_NO_UNKNOWN_ID = "kconform.impl.txn.coordinator:TxnCoordinator._end_txn_v2:no-guard:3967fa7e"
FRESH_METADATA_FENCED = "kconform.impl.txn.coordinator:TxnCoordinator._init_pid:const+1:0950ecbe:9"
"""isValidProducerId's ``meta.epoch == -1`` (metadata just created) becomes ``== -2``."""
EXHAUSTED_BELOW = "kconform.impl.txn.coordinator:TxnCoordinator._init_pid:const+1:0950ecbe:7"
"""``exhausted = req.expected_epoch >= SHORT_MAX - 2``."""
EXHAUSTED_ABOVE = "kconform.impl.txn.coordinator:TxnCoordinator._init_pid:const-1:d1ef2f5b:7"
"""``exhausted = req.expected_epoch >= SHORT_MAX - 0``."""

SMALL_SHORT_MAX = 7
"""The epoch range of the scaled-down exhaustion: epochs 0..6, exhausted at 6."""


def _planted(module: str, mid: str, **overrides: Any) -> types.ModuleType:
    """``module`` compiled with mutant ``mid`` applied, as a separate module object (the real one is
    untouched); ``overrides`` replace its globals after it ran."""
    path = module_path(module)
    planted = types.ModuleType(module)
    planted.__package__ = module.rpartition(".")[0]
    exec(mutate(path.read_text(encoding="utf-8"), module, mid, str(path)), planted.__dict__)
    planted.__dict__.update(overrides)
    return planted


def _run(scenario: zoo.Scenario, cfg: TxnConfig) -> LockstepRun:
    return zoo.run_scenario(TxnCluster(), scenario, cfg, frozenset())


def _events(run: LockstepRun) -> list[ev.Event]:
    return [e for step in run.steps for e in step.events]


def _failed_at(run: LockstepRun, name: str) -> None:
    assert run.failure is not None, "the planted bug passed"
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, name), run.failure


# ------------------------------------------------------------------ non-transactional batch


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_non_transactional_batch_inside_a_transaction_is_refused_and_an_unchecked_one_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.ADVERSARIAL_PRODUCER, cfg)
    assert run.failure is None, run.failure
    hand_made = [e for e in _events(run) if isinstance(e, ev.TxnProduceHandled) and zoo.ROGUE_RID in e.rids]
    assert [(e.pid, e.transactional, e.outcome, e.error) for e in hand_made] == [
        (zoo.TXN_PID, False, "rejected", ev.INVALID_TXN_STATE)
    ]
    planted = _planted("kconform.impl.txn.log", NON_TXN_BATCH_UNCHECKED)
    monkeypatch.setattr(impl_log.TxnPartitionLog, "append_client", planted.TxnPartitionLog.append_client)
    _failed_at(_run(zoo.ADVERSARIAL_PRODUCER, cfg), "txn_produce_handled")


def test_the_same_batch_after_the_transaction_ended_is_appended() -> None:
    """Near miss: with no open transaction the producer's non-transactional batch at its next
    sequence is an idempotent one, appended (the check is about an open transaction only)."""
    steps = [op for op in zoo.ADVERSARIAL_PRODUCER.ops if not isinstance(op, ops.WireRequest)]
    hand_made = next(op for op in zoo.ADVERSARIAL_PRODUCER.ops if isinstance(op, ops.WireRequest))
    commit = next(i for i, op in enumerate(steps) if isinstance(op, ops.CommitTxn))
    steps[commit + 2 : commit + 2] = [hand_made]  # after the commit's Settle
    run = _run(zoo.Scenario("after-the-commit", "", (), tuple(steps)), TxnConfig())
    assert run.failure is None, run.failure
    appended = [e for e in _events(run) if isinstance(e, ev.TxnProduceHandled) and zoo.ROGUE_RID in e.rids]
    assert [(e.outcome, e.error) for e in appended] == [("appended", ev.NONE)]


# ------------------------------------------------------------------- unknown transactional id


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_requests_for_an_id_without_metadata_are_answered_as_kafka(cfg: TxnConfig) -> None:
    run = _run(zoo.UNKNOWN_TXN_ID, cfg)
    assert run.failure is None, run.failure
    end = next(e for e in _events(run) if isinstance(e, ev.EndTxnHandled))
    assert (end.txn_id, end.error, end.state) == (zoo.TXN_ID, ev.INVALID_PRODUCER_ID_MAPPING, "")
    init, client_init = _inits(run)[:2]
    assert (init.expected_pid, init.error, init.pid, init.epoch) == (zoo.FIRST_PID + 500, ev.NONE, zoo.FIRST_PID, 0)
    assert (client_init.expected_pid, client_init.pid, client_init.epoch) == (-1, zoo.FIRST_PID, 1)


def test_a_tv2_coordinator_without_the_unknown_id_guard_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _planted("kconform.impl.txn.coordinator", END_TXN_V2_NO_UNKNOWN_ID)
    monkeypatch.setattr(impl_coordinator.TxnCoordinator, "_end_txn_v2", planted.TxnCoordinator._end_txn_v2)
    with pytest.raises(AdapterError, match="AttributeError"):
        _run(zoo.UNKNOWN_TXN_ID, TxnConfig(transaction_version=2))
    # near miss: the guard is TV2's own; the TV0 path never runs the planted function
    assert _run(zoo.UNKNOWN_TXN_ID, TxnConfig()).failure is None


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_coordinator_fencing_an_expected_id_on_fresh_metadata_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = _planted("kconform.impl.txn.coordinator", FRESH_METADATA_FENCED)
    monkeypatch.setattr(impl_coordinator.TxnCoordinator, "_init_pid", planted.TxnCoordinator._init_pid)
    _failed_at(_run(zoo.UNKNOWN_TXN_ID, cfg), "init_producer_id_handled")


# --------------------------------------------------------------- previous producer id (KIP-360)


def _small_exhaustion(monkeypatch: pytest.MonkeyPatch) -> zoo.Scenario:
    """``epoch-exhaustion`` with epochs 0..SMALL_SHORT_MAX in the model and the reference."""
    monkeypatch.setattr(model_coordinator, "SHORT_MAX", SMALL_SHORT_MAX)
    monkeypatch.setattr(model_coordinator, "EPOCH_EXHAUSTED", SMALL_SHORT_MAX - 1)
    monkeypatch.setattr(txn_timeout, "SHORT_MAX", SMALL_SHORT_MAX)
    monkeypatch.setattr(impl_coordinator, "SHORT_MAX", SMALL_SHORT_MAX)
    real = zoo.EPOCH_EXHAUSTION.ops
    bumps = (SHORT_MAX + 1) * 2
    assert all(isinstance(op, ops.InitProducer | ops.Settle) for op in real[:bumps])

    def scaled(op: ops.Operation) -> ops.Operation:
        if isinstance(op, ops.RogueInitProducer):
            return ops.RogueInitProducer(
                op.client, op.broker, op.pid_delta, op.epoch_delta - SHORT_MAX + SMALL_SHORT_MAX
            )
        return op

    small = real[:2] * (SMALL_SHORT_MAX + 1) + tuple(scaled(op) for op in real[bumps:])
    return zoo.Scenario("small-epoch-exhaustion", "", (), small)


def _inits(run: LockstepRun) -> list[ev.InitProducerIdHandled]:
    return [e for e in _events(run) if isinstance(e, ev.InitProducerIdHandled)]


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_the_previous_producer_id_is_taken_only_at_an_exhausted_epoch(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = _small_exhaustion(monkeypatch)
    run = _run(scenario, cfg)
    assert run.failure is None, run.failure
    rotation, retry, rogue = _inits(run)[-3:]
    old, new = zoo.FIRST_PID, zoo.FIRST_PID + 1
    assert (rotation.expected_pid, rotation.pid, rotation.epoch) == (old, new, 0)
    assert (retry.expected_pid, retry.expected_epoch, retry.error, retry.pid, retry.epoch) == (
        old,
        SMALL_SHORT_MAX - 1,
        ev.NONE,
        new,
        0,
    )
    assert (rogue.expected_pid, rogue.expected_epoch, rogue.error, rogue.state) == (
        old,
        SMALL_SHORT_MAX - 2,
        ev.PRODUCER_FENCED,
        "Ongoing",
    )
    ends = [e for e in _events(run) if isinstance(e, ev.EndTxnHandled)]
    assert (ends[-1].pid, ends[-1].error, ends[-1].state) == (new, ev.NONE, "PrepareCommit")


@pytest.mark.parametrize(
    ("mid", "failing"), [(EXHAUSTED_BELOW, "init_producer_id_handled"), (EXHAUSTED_ABOVE, "init_producer_id_handled")]
)
def test_a_previous_producer_id_threshold_off_by_one_is_caught(
    mid: str, failing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = _small_exhaustion(monkeypatch)
    planted = _planted("kconform.impl.txn.coordinator", mid, SHORT_MAX=SMALL_SHORT_MAX)
    monkeypatch.setattr(impl_coordinator.TxnCoordinator, "_init_pid", planted.TxnCoordinator._init_pid)
    _failed_at(_run(scenario, TxnConfig()), failing)


# ------------------------------------------------------------------------ failover before load

DEPOSED_STAYS_ACTIVE = "kconform.impl.txn.coordinator:TxnCoordinator.deactivate:drop:c0eca0bb"
"""TxnCoordinator.deactivate without ``self.active = False``."""


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_coordinator_deposed_before_its_load_never_loads_and_one_that_does_is_caught(
    cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(zoo.FAILOVER_BEFORE_LOAD, cfg)
    assert run.failure is None, run.failure
    loaded = [(e.node, e.coordinator_epoch) for e in _events(run) if isinstance(e, ev.CoordinatorLoaded)]
    assert loaded == [(zoo.COORDINATOR, 0), (0, 2)]
    planted = _planted("kconform.impl.txn.coordinator", DEPOSED_STAYS_ACTIVE)
    monkeypatch.setattr(impl_coordinator.TxnCoordinator, "deactivate", planted.TxnCoordinator.deactivate)
    _failed_at(_run(zoo.FAILOVER_BEFORE_LOAD, cfg), "coordinator_loaded")
    # near miss: the same bug after a failover whose load finished (failover-after-prepare) is silent
    assert _run(zoo.FAILOVER_AFTER_PREPARE, cfg).failure is None


# ------------------------------------------------------------- plain offsets, transactional-id expiry

ZOO_STEPS = [
    # a leader answering its own plain OffsetCommit NOT_COORDINATOR (`log is None` negated)
    (
        "txn-offsets-before-commit",
        "kconform.impl.txn.broker:TxnBroker._on_group_request:negate:dd0d1f31:1",
        "offset_commit_handled",
    ),
    # a plain offset commit that writes no record: the next one's offset is wrong
    (
        "txn-offsets-before-commit",
        "kconform.impl.txn.log:TxnPartitionLog.offset_commit:drop:8f8fe13e",
        "offset_commit_handled",
    ),
    # a plain offset commit's record flagged transactional (-1): a read_committed Fetch shows it
    (
        "txn-offsets-before-commit",
        "kconform.impl.txn.log:TxnPartitionLog.offset_commit:const-1:eb7a1185",
        "txn_consumer_fetch_handled",
    ),
    # the hourly transactional-id expiration check with its test negated: an id idle for an hour expires
    ("producer-expiry", "kconform.impl.txn.coordinator:TxnCoordinator._expire_ids:negate:5f192d46", "txn_id_expired"),
    # the non-transactional batch refused with base offset 0 instead of -1
    (
        "adversarial-producer",
        "kconform.impl.txn.log:TxnPartitionLog.append_client:const-1:d1ef2f5b:4",
        "txn_produce_handled",
    ),
]
"""Census mutants (2026-11-27, seed 7) the gate never reached, each caught by a zoo step: (scenario,
mutant, the event the judge refuses). The clean scenarios conform (tests/test_txn_scenarios.py)."""


@pytest.mark.parametrize(("scenario", "mid", "failing"), ZOO_STEPS, ids=[m.rpartition(".")[2] for _, m, _ in ZOO_STEPS])
def test_a_zoo_step_catches_a_mutant_the_gate_never_reached(
    scenario: str, mid: str, failing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, _, where = mid.partition(":")
    cls_name, fn = where.partition(":")[0].split(".")
    real = getattr(
        impl_log if module.endswith(".log") else impl_coordinator if module.endswith(".coordinator") else impl_broker,
        cls_name,
    )
    monkeypatch.setattr(real, fn, getattr(getattr(_planted(module, mid), cls_name), fn))
    _failed_at(_run(zoo.SCENARIOS[scenario], TxnConfig()), failing)
