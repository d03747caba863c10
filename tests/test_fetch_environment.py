"""conformance.fetch.environment: after each operation of the environment the judge checks that the
implementation did what it asks. A harness stand-in that skips an operation (or bends it: an
AdvanceHw to the wrong offset, an append of the wrong size) is non-conformance named after the
operation; the operations the docstrings say are ignored (an append of no records or too many, an
HW or log start moved backwards) are silent, and so is the reference on the zoo scenario that
makes every kind of move (tests/test_fetch_slice.py runs it clean)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kconform.conformance.fetch.environment import unhonoured
from kconform.conformance.fetch.scenarios import SCENARIOS, Scenario
from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.scenarios import run_scenario
from kconform.impl.fetch import cluster as C
from kconform.model import fetch_state as S
from kconform.model.fetch_config import FetchConfig
from kconform.traces import operations as o

CFG = FetchConfig()
MOVES = "partition-moves-reach-the-session"


def _skipping(kind: type[o.Operation]) -> Callable[[C.FetchSimulation, o.Operation], bool]:
    real = C.FetchSimulation.apply_slice

    def apply_slice(self: C.FetchSimulation, op: o.Operation) -> bool:
        return True if isinstance(op, kind) else real(self, op)

    return apply_slice


@pytest.mark.parametrize(
    ("kind", "scenario"),
    [
        (o.AdvanceHw, MOVES),
        (o.AppendRecords, MOVES),
        (o.DeleteRecords, MOVES),
        (o.ToggleLeadership, MOVES),
        (o.Bounce, MOVES),
        (o.CloseSession, MOVES),
        (o.Assign, MOVES),
        (o.Poll, MOVES),
    ],
)
def test_a_stand_in_that_skips_an_operation_is_named(
    kind: type[o.Operation], scenario: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(C.FetchSimulation, "apply_slice", _skipping(kind))
    run = run_scenario(C.FetchCluster(), SCENARIOS[scenario], CFG, frozenset())
    assert run.failure is not None and run.failure.verdict == NON_CONFORMANCE, run.failure
    assert run.failure.name == kind.kind and "not done as asked" in run.failure.message, run.failure


def test_a_bent_advance_hw_is_named_and_the_clamps_are_silent() -> None:
    s = S.initial_state(CFG)
    s = S.append(s, "t-0", (1, 2, 3), -1, False, False)  # LEO 3, HW 0
    at_one = S.hw_advanced(s, "t-0", 1)
    assert unhonoured(o.AdvanceHw("t-0", 1), s, at_one) == ""
    assert unhonoured(o.AdvanceHw("t-0", 0), at_one, at_one) == ""  # below the HW: clamped, nothing moves
    assert unhonoured(o.AdvanceHw("t-0", 9), at_one, S.hw_advanced(at_one, "t-0", 3)) == ""  # clamped to the LEO
    assert "asked for 3" in unhonoured(o.AdvanceHw("t-0", -1), at_one, at_one)  # -1: the LEO
    assert "asked for 1" in unhonoured(o.AdvanceHw("t-0", 1), s, S.hw_advanced(s, "t-0", 3))
    assert unhonoured(o.AdvanceHw("nope", -1), s, s) == ""  # an unknown partition: ignored


def test_appends_are_checked_by_size_and_kind_and_ignored_ones_are_silent() -> None:
    s = S.initial_state(CFG)
    plain = S.append(s, "t-0", (1, 2), -1, False, False)
    aborted = S.append(s, "t-0", (1, 2), 1000, True, False)
    committed = S.append(s, "t-0", (1, 2), 1000, True, True)
    assert unhonoured(o.AppendRecords("t-0", 2, 0), s, plain) == ""
    assert unhonoured(o.AppendRecords("t-0", 2, 2), s, aborted) == ""
    assert unhonoured(o.AppendRecords("t-0", 2, 1), s, committed) == ""
    assert "asked for 2, 1, 0" in unhonoured(o.AppendRecords("t-0", 2, 1), s, aborted)  # aborted, not committed
    assert "asked for 3" in unhonoured(o.AppendRecords("t-0", 3, 0), s, plain)
    assert "asked for 2, 0, 0 (False)" in unhonoured(o.AppendRecords("t-0", 2, 0), s, committed)
    for ignored in (o.AppendRecords("t-0", 0, 0), o.AppendRecords("t-0", 21, 0), o.AppendRecords("t-0", 1, 3)):
        assert unhonoured(ignored, s, s) == ""
        assert "asked for 0" in unhonoured(ignored, s, plain)


def test_log_start_and_leadership_moves() -> None:
    s = S.initial_state(CFG)
    s = S.hw_advanced(S.append(s, "t-0", (1, 2, 3), -1, False, False), "t-0", 2)
    moved = S.log_start_advanced(s, "t-0", 2)
    assert unhonoured(o.DeleteRecords("t-0", 9), s, moved) == ""  # clamped to the HW
    assert unhonoured(o.DeleteRecords("t-0", 1), moved, moved) == ""  # backwards: ignored
    assert "asked for 2" in unhonoured(o.DeleteRecords("t-0", 5), s, s)
    away = S.leadership_changed(s, "t-0", False)
    assert unhonoured(o.ToggleLeadership("t-0"), s, away) == ""
    assert "stayed True" in unhonoured(o.ToggleLeadership("t-0"), s, s)


def test_an_answer_that_never_leaves_the_broker_is_named_after_a_run_and_a_lost_one_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broker that reports its answer (SessionFetchHandled) but never sends it: after a Run (a
    healthy network) the client still waits for it. A Drop or a Bounce may have lost an answer:
    the requests sent before one are exempt (near miss: the clean zoo drops nothing, so a dropped
    answer is planted with a Drop)."""
    from kconform.impl.messages import Payload
    from kconform.impl.network import Network
    from kconform.model.fetch_config import BROKER

    ops = (o.Assign(client=0, partition="t-0", assigned=True), o.Poll(client=0), o.Run(ms=300))
    lost: tuple[o.Operation, ...] = (*ops[:2], o.Deliver(index=0), o.Drop(index=0), o.Run(ms=300))
    clean = run_scenario(C.FetchCluster(), Scenario("lost", "near miss", (), lost), CFG, frozenset())
    assert clean.failure is None, clean.failure
    assert any(e.kind == "session_fetch_handled" for st in clean.steps for e in st.events)
    real_send = Network.send

    def mute(self: Network, src: int, dst: int, payload: Payload) -> int:
        return -1 if src == BROKER else real_send(self, src, dst, payload)

    monkeypatch.setattr(Network, "send", mute)
    run = run_scenario(C.FetchCluster(), Scenario("mute", "planted", (), ops), CFG, frozenset())
    assert run.failure is not None and run.failure.name == "run", run.failure
    assert "the answer never reached the client" in run.failure.message
    run = run_scenario(C.FetchCluster(), Scenario("lost", "near miss", (), lost), CFG, frozenset())
    assert run.failure is None, run.failure  # the Drop may have taken it: exempt


def test_a_broker_nobody_can_reach_is_named_after_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """FetchSimulation.node without the broker: requests are never delivered, so never answered;
    after a Run the client still waits (the census survivor node:drop)."""
    real = C.FetchSimulation.node

    def node(self: C.FetchSimulation, address: int) -> object:
        return None if address == 0 else real(self, address)

    monkeypatch.setattr(C.FetchSimulation, "node", node)
    ops = (o.Assign(client=0, partition="t-0", assigned=True), o.Poll(client=0), o.Run(ms=300))
    run = run_scenario(C.FetchCluster(), Scenario("deaf", "planted", (), ops), CFG, frozenset())
    assert run.failure is not None and run.failure.name == "run", run.failure
    assert "never answered it" in run.failure.message


def test_a_request_answered_across_a_restart_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Bounce that keeps the messages in flight (FetchSimulation.apply_slice without
    network.set_down, a census survivor): the request in flight at the restart is answered by the
    restarted broker. The reference loses it (request-lost-in-a-restart conforms, the near miss)."""
    from kconform.impl.network import Network

    monkeypatch.setattr(Network, "set_down", lambda self, node: None)
    run = run_scenario(C.FetchCluster(), SCENARIOS["request-lost-in-a-restart"], CFG, frozenset())
    assert run.failure is not None and run.failure.verdict == NON_CONFORMANCE, run.failure
    assert "answered after the restart" in run.failure.message, run.failure
