"""The bounds of the exactly-once slice's periodic tasks (model.txn_timeout).

TxnTimeoutAbortBounded: a loaded coordinator rolls an Ongoing transaction back within one
abort-check interval (transaction.abort.timed.out.transaction.cleanup.interval.ms) of it outliving
transaction.timeout.ms, or of the coordinator loading it; nothing else is demanded: a transaction
rolled back at the bound, a coordinator still loading, a task that runs more often, or the
yardstick's hand-driven states stay silent. ProducerExpiryBounded: a leader drops an idle
producer's state within one producer.id.expiration.check.interval.ms of producer.id.expiration.ms;
a producer with an open transaction and a check that runs more often stay silent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from kconform.conformance.judge import INVARIANT_VIOLATION
from kconform.conformance.txn.lockstep import TxnJudge
from kconform.conformance.txn.scenarios import LATE_PRODUCE_AFTER_ABORT, PRODUCER_EXPIRY, run_scenario
from kconform.impl.txn import broker as txn_broker
from kconform.impl.txn import coordinator as txn_coordinator
from kconform.impl.txn.cluster import TxnCluster
from kconform.model import txn_invariants as I
from kconform.model import txn_state as S
from kconform.model import txn_timeout
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from tests.test_txn_lockstep import BOOT, COORD, PID, SP, TXN, add, init, produce_verified

CFG = TxnConfig()
TIMEOUT = 60_000  # the producers' transaction.timeout.ms (init()'s)
INTERVAL = CFG.abort_timed_out_interval_ms
START = 5_000
BOUNDS = ("TxnTimeoutAbortBounded", "ProducerExpiryBounded")


def _clock(ms: int) -> ev.Event:
    return ev.ClockAdvanced(ev.CONTROLLER, ms)


def _ongoing() -> list[ev.Event]:
    """Coordinator 1 loaded at 0 ms; the transaction opened at START (Ongoing, epoch 0)."""
    return [*BOOT, init(), _clock(START), add("t-0")]


def _late(events: list[ev.Event], cfg: TxnConfig = CFG) -> list[str]:
    judge = TxnJudge(cfg)
    found = [f for e in events for f in judge.observe(e)]
    assert all(f.name in BOUNDS and f.verdict == INVARIANT_VIOLATION for f in found), found
    return [f.message for f in found]


def test_a_transaction_ongoing_past_timeout_plus_one_interval_fires_and_one_ms_earlier_is_silent() -> None:
    deadline = START + TIMEOUT + INTERVAL
    assert _late([*_ongoing(), _clock(deadline)]) == []
    late = _late([*_ongoing(), _clock(deadline + 1)])
    assert len(late) == 1 and f"'{TXN}' stayed Ongoing past {deadline} ms" in late[0], late


def test_a_rollback_at_the_bound_is_silent() -> None:
    deadline = START + TIMEOUT + INTERVAL
    rolled_back = ev.TxnTimedOut(COORD, TXN, PID, 1, "PrepareAbort")
    assert _late([*_ongoing(), _clock(deadline), rolled_back, _clock(deadline + 100_000)]) == []


def test_the_window_restarts_at_a_later_load_and_nothing_is_demanded_while_loading() -> None:
    moved, loaded_at = ev.CoordinatorMoved(ev.CONTROLLER, SP, 2, 1), START + TIMEOUT + 50_000
    loading = [*_ongoing(), _clock(START + 1), moved, _clock(loaded_at)]
    assert _late(loading) == []  # long past start + timeout + interval, but nobody holds it loaded
    loaded = [*loading, ev.CoordinatorLoaded(2, SP, 1)]
    assert _late([*loaded, _clock(loaded_at + INTERVAL)]) == []
    late = _late([*loaded, _clock(loaded_at + INTERVAL + 1)])
    assert len(late) == 1 and f"coordinator loaded at {loaded_at} ms" in late[0], late


def test_hand_built_states_and_other_states_are_not_judged() -> None:
    judge = TxnJudge(CFG)
    for e in _ongoing():
        assert judge.observe(e) == []
    s = judge.state
    later = START + TIMEOUT + INTERVAL + 1
    assert I.check_state(S.advance_clock(s, later, CFG), CFG, frozenset({"TxnTimeoutAbortBounded"})) != []
    untracked = S.advance_clock(replace(s, tracks_timeouts=False), later, CFG)
    assert I.check_state(untracked, CFG, frozenset({"TxnTimeoutAbortBounded"})) == []
    assert S.advance_clock(s, later).ghost.late_aborts == ()  # no config: the yardstick's clock jumps


def _run() -> Any:
    return run_scenario(TxnCluster(), LATE_PRODUCE_AFTER_ABORT, CFG, frozenset())


def _timers(period_ms: int | None) -> Callable[..., None]:
    """TxnCoordinator._schedule with the abort timer's period ``period_ms`` instead of Kafka's
    (None: never scheduled; the timer re-arms itself with the period it was given)."""
    original = txn_coordinator.TxnCoordinator._schedule

    def schedule(self: Any, delay_ms: int, name: str, action: Any) -> None:
        kafkas = name == "txn-timeout-abort" and delay_ms == INTERVAL
        period = period_ms if kafkas else delay_ms
        if period is not None:
            original(self, period, name, action)

    return schedule


def test_the_scenario_passes_and_the_timed_out_transaction_is_rolled_back() -> None:
    run = _run()
    assert run.failure is None, run.failure
    assert any(isinstance(e, ev.TxnTimedOut) for step in run.steps for e in step.events)


def test_a_coordinator_loaded_without_its_abort_timer_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The surviving mutant TxnCoordinator.load without ``_schedule(..., "txn-timeout-abort", ...)``
    (docs/benchmarks.md): before this invariant the run passed (a coordinator that never aborts is
    never quiet, so the Quiesced check concluded nothing)."""
    monkeypatch.setattr(txn_coordinator.TxnCoordinator, "_schedule", _timers(None))
    run = _run()
    assert run.failure is not None and run.failure.name == "TxnTimeoutAbortBounded", run.failure


def test_an_abort_check_shorter_than_kafkas_stays_permitted_and_a_longer_one_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(txn_coordinator.TxnCoordinator, "_schedule", _timers(INTERVAL // 3))
    run = _run()
    assert run.failure is None, run.failure
    monkeypatch.setattr(txn_coordinator.TxnCoordinator, "_schedule", _timers(INTERVAL * 2))
    run = _run()
    assert run.failure is not None and run.failure.name == "TxnTimeoutAbortBounded", run.failure


# ProducerExpiryBounded (KIP-854): the leader's PeriodicProducerExpirationCheck drops an idle
# producer's state within one check interval of producer.id.expiration.ms.

DAY = CFG.producer_id_expiration_ms
CHECK = txn_timeout.PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS
IDEMPOTENT_PID = 2000


def _idempotent_write(at_ms: int) -> list[ev.Event]:
    """An idempotent producer (pid 2000) appends one batch to t-0 at ``at_ms``."""
    return [
        *BOOT,
        ev.InitProducerIdHandled(0, 1, "", False, 60_000, -1, -1, ev.NONE, IDEMPOTENT_PID, 0, ""),
        _clock(at_ms),
        ev.TxnProduceHandled(0, 2, "t-0", "", IDEMPOTENT_PID, 0, 0, (1, 2), False, -1, "appended", ev.NONE, 0, -1),
    ]


def test_an_idle_producer_kept_past_expiry_plus_one_check_fires_and_one_ms_earlier_is_silent() -> None:
    deadline = START + DAY + CHECK
    assert _late([*_idempotent_write(START), _clock(deadline)]) == []
    late = _late([*_idempotent_write(START), _clock(deadline + 1)])
    assert len(late) == 1 and f"t-0: producer {IDEMPOTENT_PID}'s state outlived {deadline} ms" in late[0], late
    expired = ev.ProducerExpired(0, "t-0", IDEMPOTENT_PID)
    assert _late([*_idempotent_write(START), _clock(START + DAY), expired, _clock(deadline + CHECK)]) == []


def test_a_producer_in_a_transaction_never_expires() -> None:
    """isProducerExpired needs no open transaction: the transactional producer's open transaction
    on t-0 is judged by TxnTimeoutAbortBounded (here: its coordinator has not loaded it again)."""
    moved = ev.CoordinatorMoved(ev.CONTROLLER, SP, 2, 1)
    open_txn = [*BOOT, init(), add("t-0"), *produce_verified("t-0", 0, (1,), 1, 0, 100), moved]
    assert _late([*open_txn, _clock(DAY + CHECK + 1)]) == []


def _expiry_run() -> Any:
    return run_scenario(TxnCluster(), PRODUCER_EXPIRY, CFG, frozenset())


def test_the_expiry_scenario_passes_and_the_leader_drops_the_state(monkeypatch: pytest.MonkeyPatch) -> None:
    run = _expiry_run()
    assert run.failure is None, run.failure
    assert any(isinstance(e, ev.ProducerExpired) for step in run.steps for e in step.events)
    monkeypatch.setattr(txn_broker, "PRODUCER_EXPIRATION_CHECK_MS", CHECK // 2)  # checking more often: permitted
    assert _expiry_run().failure is None


@pytest.mark.parametrize("period_ms", [None, 1_300_000], ids=["no-check", "check-every-21-min"])
def test_a_leader_without_its_expiration_check_or_a_slower_one_is_caught(
    period_ms: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The surviving mutant TxnBroker.start_timers without the producer-expiry timer
    (docs/benchmarks.md), and a check slower than Kafka's 10 min whose phase misses the bound."""
    if period_ms is None:
        monkeypatch.setattr(txn_broker.TxnBroker, "start_timers", lambda self: None)
    else:
        monkeypatch.setattr(txn_broker, "PRODUCER_EXPIRATION_CHECK_MS", period_ms)
    run = _expiry_run()
    assert run.failure is not None and run.failure.name == "ProducerExpiryBounded", run.failure
