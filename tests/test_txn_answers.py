"""BrokerAnswersBounded (model/txn_answers.py, issue 17): on a healthy network a WriteTxnMarkers
request and a KIP-890 verification are answered, and the answer handled, within request.timeout.ms.

Each broker bug is planted as the exact mutant of the mutation census (compiled from the mutated
source by the mutation runner's operators) and caught; the near misses are silent: the same bug
while the harness holds every message (Advance), a correct cluster whose marker the harness dropped
(re-sent after the timeout, never answered itself), and events judged without their operations (a
corpus: nothing is owed).
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from kconform.ci.mutation.child import module_path
from kconform.ci.mutation.operators import mutate
from kconform.conformance.judge import INVARIANT_VIOLATION
from kconform.conformance.runner import LockstepRun
from kconform.conformance.txn import scenarios as zoo
from kconform.conformance.txn.lockstep import TxnJudge
from kconform.impl.txn import broker as impl_broker
from kconform.impl.txn import coordinator as impl_coordinator
from kconform.impl.txn.cluster import TxnCluster
from kconform.model import txn_answers as A
from kconform.model.frozen_map import FrozenMap
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

CONFIGS = (TxnConfig(), TxnConfig(transaction_version=2))
IDS = ("tv0", "tv2")

LEADER_NEVER_ANSWERS_MARKERS = "kconform.impl.txn.broker:TxnBroker._on_marker:drop:06167401"
COORDINATOR_IGNORES_MARKER_ANSWERS = "kconform.impl.txn.broker:TxnBroker._on_marker_response:drop:b9d5659b"
COORDINATOR_NEVER_ANSWERS_VERIFICATIONS = "kconform.impl.txn.coordinator:TxnCoordinator.handle_verify:drop:aeb0519e"
PLANTS = {
    LEADER_NEVER_ANSWERS_MARKERS: (impl_broker.TxnBroker, "_on_marker"),
    COORDINATOR_IGNORES_MARKER_ANSWERS: (impl_broker.TxnBroker, "_on_marker_response"),
    COORDINATOR_NEVER_ANSWERS_VERIFICATIONS: (impl_coordinator.TxnCoordinator, "handle_verify"),
}

COMMIT = (
    *zoo._INIT,
    ops.BeginTxn(zoo.PRODUCER),
    ops.Send(zoo.PRODUCER, "t-0", 1),
    ops.Settle(100),
    ops.CommitTxn(zoo.PRODUCER),
)
"""A transaction whose EndTxn is still in flight."""


def _plant(monkeypatch: pytest.MonkeyPatch, mid: str) -> None:
    module = mid.partition(":")[0]
    path = module_path(module)
    planted = types.ModuleType(module)
    planted.__package__ = module.rpartition(".")[0]
    exec(mutate(path.read_text(encoding="utf-8"), module, mid, str(path)), planted.__dict__)
    cls, name = PLANTS[mid]
    monkeypatch.setattr(cls, name, getattr(getattr(planted, cls.__name__), name))


def _run(steps: tuple[ops.Operation, ...], cfg: TxnConfig | None = None) -> LockstepRun:
    return zoo.run_scenario(TxnCluster(), zoo.Scenario("answers", "", (), steps), cfg or TxnConfig(), frozenset())


def _late(run: LockstepRun) -> list[str]:
    return [f.message for step in run.steps for f in step.findings if f.name == "BrokerAnswersBounded"]


# ------------------------------------------------------------------------------------ the bound


def test_a_request_is_late_only_after_request_timeout_ms() -> None:
    owed = A.owe(FrozenMap(), True, 7, A.Owed(A.MARKER, 1, 0, 1_000, "'txn-1' on t-0"))
    assert A.late(owed, 1_000 + A.REQUEST_TIMEOUT_MS) == ()
    (message,) = A.late(owed, 1_001 + A.REQUEST_TIMEOUT_MS)
    assert "request 7" in message and "broker 1" in message
    assert A.late(A.paid(owed, 7), 10**9) == ()
    assert A.owe(FrozenMap(), False, 7, A.Owed(A.MARKER, 1, 0, 0, "")) == FrozenMap()


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_healthy_cluster_owes_nothing_at_the_end_of_a_quiesce(cfg: TxnConfig) -> None:
    run = _run((*COMMIT, ops.Quiesce(zoo.QUIESCE_MS)), cfg)
    assert run.failure is None, run.failure
    assert run.judge.state.ghost.owed == FrozenMap()
    assert any(isinstance(e, ev.MarkerSent) for step in run.steps for e in step.events)


@pytest.mark.parametrize("mid", sorted(PLANTS))
@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_broker_that_never_answers_is_caught_on_a_healthy_network(
    mid: str, cfg: TxnConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plant(monkeypatch, mid)
    run = _run((*COMMIT, ops.Quiesce(zoo.QUIESCE_MS)), cfg)
    assert run.failure is not None, "the planted bug passed"
    assert (run.failure.verdict, run.failure.name) == (INVARIANT_VIOLATION, "BrokerAnswersBounded"), run.failure
    what = A.VERIFICATION if "verify" in mid else A.MARKER
    assert run.failure.message.startswith(f"{what} request")


def test_the_zoo_catches_a_leader_that_never_answers_markers(monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(monkeypatch, LEADER_NEVER_ANSWERS_MARKERS)
    run = zoo.run_scenario(TxnCluster(), zoo.LATE_PRODUCE_AFTER_ABORT, TxnConfig(), frozenset())
    assert run.failure is not None and run.failure.name == "BrokerAnswersBounded"


# ----------------------------------------------------------------------------------- near misses


def test_the_same_bug_is_silent_while_the_harness_holds_every_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """The marker is sent, handled and never answered, but time passes only in Advance: nothing
    delivered its answer late that a healthy network would have delivered."""
    _plant(monkeypatch, LEADER_NEVER_ANSWERS_MARKERS)
    run = _run((*COMMIT, ops.Settle(1), ops.Settle(1), ops.Advance(45_000), ops.Settle(100), ops.Advance(45_000)))
    assert run.failure is None, run.failure
    handled = [e for step in run.steps for e in step.events if isinstance(e, ev.MarkerHandled)]
    assert len(handled) >= 2  # the first marker and its re-send, neither answered
    assert _late(run) == []


def test_a_dropped_marker_is_forgiven_and_its_resend_is_answered() -> None:
    """A correct cluster: the harness drops the marker, so that request is never answered; the
    coordinator re-sends it after request.timeout.ms during the Quiesce, and that one is answered."""
    steps = (*COMMIT, ops.Settle(1))  # the EndTxn: PrepareCommit, the marker in flight
    dropped = (ops.Drop(1), ops.Quiesce(zoo.QUIESCE_MS))  # queue: the EndTxn's answer, the marker
    run = _run((*steps, *dropped))
    assert run.failure is None, run.failure
    sent = [e.msg for step in run.steps for e in step.events if isinstance(e, ev.MarkerSent)]
    answered = {e.msg for step in run.steps for e in step.events if isinstance(e, ev.MarkerResponseHandled)}
    assert len(sent) == 2 and sent[0] not in answered and sent[1] in answered


def test_events_judged_without_their_operations_owe_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus (traces/oracle.py) is judged event by event, without the operations: the network's
    health is unknown there, so the bound is not judged."""
    _plant(monkeypatch, LEADER_NEVER_ANSWERS_MARKERS)
    run = _run((*COMMIT, ops.Quiesce(zoo.QUIESCE_MS)))
    assert run.failure is not None
    judge = TxnJudge(TxnConfig())
    findings: list[Any] = []
    for step in run.steps:
        for e in step.events:
            findings += judge.observe(e)
    assert [f for f in findings if f.name == "BrokerAnswersBounded"] == []
    assert judge.state.ghost.owed == FrozenMap()
