"""The exactly-once judge on hand-written event sequences: conformant transactions give no
finding, a wrong outcome is non-conformance, and permitted anomalies are classified."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.conformance.judge import ALLOWED, INVARIANT_VIOLATION, NON_CONFORMANCE, Finding
from kconform.conformance.txn.lockstep import TxnJudge, judge_txn_events
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops
from kconform.traces.events import (
    ABORT_MARKER,
    COMMIT_MARKER,
    NONE,
    NOT_COORDINATOR,
    PRODUCER_FENCED,
    AbortedTxn,
    Record,
)
from tests.txnkit import HW_ALL, INIT, run

TXN = "txn-1"  # __transaction_state-10: broker 1 coordinates
PID = 1000
COORD = 1
LEADER = {"t-0": 0, "t-1": 1}


SP = "__transaction_state-10"
BOOT: list[ev.Event] = [ev.CoordinatorMoved(ev.CONTROLLER, SP, COORD, 0), ev.CoordinatorLoaded(COORD, SP, 0)]


def init(epoch: int = 0, req: int = 1, pid: int = PID) -> ev.Event:
    return ev.InitProducerIdHandled(COORD, req, TXN, True, 60_000, -1, -1, NONE, pid, epoch, "Empty")


def add(*parts: str, epoch: int = 0, req: int = 2) -> ev.Event:
    return ev.AddPartitionsHandled(COORD, req, TXN, PID, epoch, parts, NONE, "Ongoing")


def produce_verified(
    part: str, seq: int, rids: tuple[int, ...], ctxn: int, offset: int, msg: int, epoch: int = 0, req: int = 0
) -> list[ev.Event]:
    """A transactional batch that needs verification, verified and appended at ``offset``."""
    leader = LEADER[part]
    return [
        ev.TxnProduceHandled(
            leader, req or msg, part, TXN, PID, epoch, seq, rids, True, ctxn, "verifying", NONE, -1, msg
        ),
        ev.VerifyHandled(COORD, msg, TXN, PID, epoch, part, NONE),
        ev.VerifyApplied(leader, msg, req or msg, "appended", NONE, offset),
    ]


def end(
    commit: bool, ctxn: int, state: str, epoch: int = 0, req: int = 50, result_epoch: int | None = None
) -> ev.Event:
    re = epoch if result_epoch is None else result_epoch
    return ev.EndTxnHandled(COORD, req, TXN, PID, epoch, ctxn, commit, NONE, state, PID, re)


def marker(msg: int, part: str, commit: bool, offset: int, after: str, epoch: int = 0) -> list[ev.Event]:
    leader = LEADER[part]
    return [
        ev.MarkerSent(COORD, msg, TXN, part, leader, PID, epoch, commit, 0),
        ev.MarkerHandled(leader, msg, part, PID, epoch, commit, 0, NONE, offset),
        ev.MarkerResponseHandled(COORD, msg, NONE, after),
    ]


def committed_txn() -> list[ev.Event]:
    """One transaction over t-0 (records 1, 2) and t-1 (record 3), committed, then read."""
    return [
        *BOOT,
        init(),
        add("t-0", "t-1"),
        *produce_verified("t-0", 0, (1, 2), 1, 0, 100),
        *produce_verified("t-1", 0, (3,), 1, 0, 101),
        end(True, 1, "PrepareCommit"),
        *marker(200, "t-0", True, 2, "PrepareCommit"),
        *marker(201, "t-1", True, 1, "CompleteCommit"),
        ev.HwAdvanced(0, "t-0", 3),
        ev.TxnConsumerFetchHandled(
            0,
            300,
            "t-0",
            0,
            True,
            NONE,
            (
                Record(0, PID, 0, 0, 1, 1, -1),
                Record(1, PID, 0, 1, 2, 1, -1),
                Record(2, PID, 0, -1, -1, 1, COMMIT_MARKER),
            ),
            3,
            3,
            (),
        ),
        ev.ConsumerPolled(9, 300, "t-0", True, (1, 2), 3),
    ]


def _verdicts(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.verdict, f.name) for f in findings]


def test_a_conformant_committed_transaction_has_no_finding() -> None:
    judge = TxnJudge(TxnConfig())
    found = [f for e in committed_txn() for f in judge.observe(e)]
    assert found == []
    assert judge.events_judged == len(committed_txn())
    assert judge.covered["end_txn_handled:NONE"] == 1 and judge.covered["txn_produce_handled:verifying"] == 2
    assert judge.checks["TxnAtomicity"] == len(committed_txn())
    assert ("PrepareCommit", "CompleteCommit") in judge.state.ghost.transitions


def test_a_wrong_end_txn_outcome_is_non_conformance() -> None:
    events = committed_txn()[:11]
    endtxn = events[-1]
    assert isinstance(endtxn, ev.EndTxnHandled)
    wrong = replace(endtxn, state="PrepareAbort")
    found = judge_txn_events(TxnConfig(), [*events[:-1], wrong])
    assert _verdicts(found) == [(NON_CONFORMANCE, "end_txn_handled")]
    assert "PrepareAbort" in found[0].message


def test_an_unfiltered_aborted_record_is_non_conformance() -> None:
    events = [
        *BOOT,
        init(),
        add("t-0"),
        *produce_verified("t-0", 0, (1,), 1, 0, 100),
        end(False, 1, "PrepareAbort"),
        *marker(200, "t-0", False, 1, "CompleteAbort"),
        ev.HwAdvanced(0, "t-0", 2),
        ev.TxnConsumerFetchHandled(
            0,
            300,
            "t-0",
            0,
            True,
            NONE,
            (Record(0, PID, 0, 0, 1, 1, -1), Record(1, PID, 0, -1, -1, 1, ABORT_MARKER)),
            2,
            2,
            (AbortedTxn(PID, 0),),
        ),
    ]
    judge = TxnJudge(TxnConfig())
    assert [f for e in events for f in judge.observe(e)] == []
    bad = judge.observe(ev.ConsumerPolled(9, 300, "t-0", True, (1,), 2))
    assert _verdicts(bad) == [(NON_CONFORMANCE, "consumer_polled")]
    good = TxnJudge(TxnConfig())
    for e in events:
        good.observe(e)
    assert good.observe(ev.ConsumerPolled(9, 300, "t-0", True, (), 2)) == []


def test_requests_to_a_moved_coordinator_and_marker_resend_after_load() -> None:
    events = [
        *BOOT,
        init(),
        add("t-0"),
        *produce_verified("t-0", 0, (1,), 1, 0, 100),
        end(True, 1, "PrepareCommit"),
        ev.MarkerSent(COORD, 200, TXN, "t-0", 0, PID, 0, True, 0),
        ev.CoordinatorMoved(ev.CONTROLLER, SP, 2, 1),
        ev.EndTxnHandled(COORD, 51, TXN, PID, 0, 1, True, NOT_COORDINATOR, "", -1, -1),
        ev.EndTxnHandled(2, 52, TXN, PID, 0, 1, True, 14, "", -1, -1),
        ev.MarkerHandled(0, 200, "t-0", PID, 0, True, 0, NONE, 1),
        ev.MarkerResponseHandled(COORD, 200, NONE, ""),  # stale: the coordinator moved, holds no state
        ev.CoordinatorLoaded(2, SP, 1),
        ev.MarkerSent(2, 201, TXN, "t-0", 0, PID, 0, True, 1),
        ev.MarkerHandled(0, 201, "t-0", PID, 0, True, 1, NONE, 2),  # a second marker: an empty transaction
        ev.MarkerResponseHandled(2, 201, NONE, "CompleteCommit"),
        ev.EndTxnHandled(2, 53, TXN, PID, 0, 1, True, NONE, "CompleteCommit", PID, 0),
    ]
    assert judge_txn_events(TxnConfig(), events) == []


def test_a_marker_never_sent_cannot_be_handled() -> None:
    found = judge_txn_events(TxnConfig(), [ev.MarkerHandled(0, 7, "t-0", PID, 0, True, 0, NONE, 0)])
    assert _verdicts(found) == [(NON_CONFORMANCE, "marker_handled")]


def test_duplicated_verification_answers_any_justifies_the_produce() -> None:
    events = [
        *BOOT,
        init(),
        add("t-0"),
        ev.TxnProduceHandled(0, 3, "t-0", TXN, PID, 0, 0, (1,), True, 1, "verifying", NONE, -1, 100),
        ev.VerifyHandled(COORD, 100, TXN, PID, 0, "t-0", NONE),
        ev.VerifyHandled(COORD, 100, TXN, PID, 0, "t-0", NONE),
        ev.VerifyApplied(0, 100, 3, "appended", NONE, 0),
    ]
    assert judge_txn_events(TxnConfig(), events) == []


def _late_produce_after_abort(cfg: TxnConfig) -> list[Finding]:
    """Client transaction 1 is aborted; its late batch to t-1 arrives while transaction 2 (which
    also covers t-1) is open, and transaction 2 commits (the KAFKA-17754 interleaving)."""
    tv2 = cfg.transaction_version == 2
    e1 = 1 if tv2 else 0
    events = [
        *BOOT,
        init(),
        add("t-0", "t-1"),
        *produce_verified("t-0", 0, (1,), 1, 0, 100),
        end(False, 1, "PrepareAbort", result_epoch=e1),
        *marker(200, "t-0", False, 1, "PrepareAbort", epoch=e1),
        *marker(201, "t-1", False, 0, "CompleteAbort", epoch=e1),
        add("t-0", "t-1", epoch=e1, req=60),
    ]
    judge = TxnJudge(cfg)
    setup = [f for e in events for f in judge.observe(e)]
    assert setup == []
    late = ev.TxnProduceHandled(1, 4, "t-1", TXN, PID, 0, 0, (2,), True, 1, "verifying", NONE, -1, 102)
    out = judge.observe(late)
    out += judge.observe(ev.VerifyHandled(COORD, 102, TXN, PID, 0, "t-1", PRODUCER_FENCED if tv2 else NONE))
    if tv2:
        out += judge.observe(ev.VerifyApplied(1, 102, 4, "rejected", 47, -1))
        return out
    out += judge.observe(ev.VerifyApplied(1, 102, 4, "appended", NONE, 1))
    for e in [
        *produce_verified("t-0", 1, (3,), 2, 2, 103),
        end(True, 2, "PrepareCommit", req=61),
        *marker(202, "t-0", True, 3, "PrepareCommit"),
        *marker(203, "t-1", True, 2, "CompleteCommit"),
    ]:
        out += judge.observe(e)
    return out


def test_tv0_late_produce_joining_the_next_transaction_is_allowed_kafka_17754() -> None:
    found = _late_produce_after_abort(TxnConfig(transaction_version=0))
    assert found and all(f.verdict == ALLOWED for f in found)
    assert "TxnAtomicity" in {f.name for f in found}
    assert "KAFKA-17754" in found[0].message


def test_tv2_fences_the_late_produce() -> None:
    assert _late_produce_after_abort(TxnConfig(transaction_version=2)) == []


def test_without_verification_a_late_produce_hangs_a_transaction() -> None:
    cfg = TxnConfig(verification=False)
    events = [
        *BOOT,
        init(),
        add("t-0"),
        ev.TxnProduceHandled(0, 3, "t-0", TXN, PID, 0, 0, (1,), True, 1, "appended", NONE, 0, -1),
        end(False, 1, "PrepareAbort"),
        *marker(200, "t-0", False, 1, "CompleteAbort"),
        ev.TxnProduceHandled(0, 4, "t-0", TXN, PID, 0, 1, (2,), True, 1, "appended", NONE, 2, -1),
    ]
    found = judge_txn_events(cfg, events)
    assert _verdicts(found) == [(INVARIANT_VIOLATION, "NoHangingTransaction")]


def test_unknown_event_kind_is_non_conformance() -> None:
    found = judge_txn_events(TxnConfig(), [ev.BrokerCrashed(0)])
    assert _verdicts(found) == [(NON_CONFORMANCE, "broker_crashed")]


def test_quiescence_with_an_open_transaction_is_a_liveness_violation() -> None:
    events = [*BOOT, init(), add("t-0"), *produce_verified("t-0", 0, (1,), 1, 0, 100)]
    assert judge_txn_events(TxnConfig(), [*events, ev.Quiesced(ev.CONTROLLER, False)]) == []
    found = judge_txn_events(TxnConfig(), [*events, ev.Quiesced(ev.CONTROLLER, True)])
    assert {(f.verdict, f.name) for f in found} == {(INVARIANT_VIOLATION, "NoHangingTransaction")}
    assert judge_txn_events(TxnConfig(), [*committed_txn(), ev.Quiesced(ev.CONTROLLER, True)]) == []


def test_tv2_transaction_bumps_the_epoch_and_an_empty_abort_completes_at_once() -> None:
    cfg = TxnConfig(transaction_version=2)
    events = [
        *BOOT,
        init(),
        add("t-0"),
        *produce_verified("t-0", 0, (1,), 1, 0, 100),
        end(True, 1, "PrepareCommit", result_epoch=1),
        *marker(200, "t-0", True, 1, "CompleteCommit", epoch=1),
        ev.EndTxnHandled(COORD, 51, TXN, PID, 0, 1, True, NONE, "CompleteCommit", PID, 1),  # a retry
        ev.EndTxnHandled(COORD, 52, TXN, PID, 1, 2, False, NONE, "CompleteAbort", PID, 2),  # empty abort
        *produce_verified("t-0", 0, (2,), 3, 2, 101, epoch=0),
    ]
    judge = TxnJudge(cfg)
    found = [f for e in events[:-3] for f in judge.observe(e)]
    assert found == []
    assert {("CompleteCommit", "PrepareAbort"), ("PrepareAbort", "CompleteAbort")} <= judge.state.ghost.transitions
    stale = [f for e in events[-3:] for f in judge.observe(e)]
    assert _verdicts(stale) == [(NON_CONFORMANCE, "verify_handled"), (NON_CONFORMANCE, "verify_applied")]


def test_no_coordinator_before_boot() -> None:
    found = judge_txn_events(
        TxnConfig(), [ev.InitProducerIdHandled(COORD, 1, TXN, True, 60_000, -1, -1, NOT_COORDINATOR, -1, -1, "")]
    )
    assert found == []
    assert _verdicts(judge_txn_events(TxnConfig(), [init()])) == [(NON_CONFORMANCE, "init_producer_id_handled")]


def _reference_run_steps() -> list[ops.Operation]:
    """A committed transaction with records and offsets whose commit meets a coordinator
    failover, consumers of both isolation levels, a fenced zombie and a timed-out transaction,
    then quiescence and plain offsets."""
    return [
        *INIT,
        ops.BeginTxn(0),
        ops.Send(0, "t-0", 2),
        ops.Send(0, "t-1", 1),
        ops.SendOffsets(0, "my-group", "t-0", 7),
        ops.Settle(1000),
        ops.CommitTxn(0),
        ops.MoveCoordinator(TXN, 2),
        ops.Settle(1000),
        *HW_ALL,
        ops.FetchOffsets("my-group", True),
        ops.ConsumeTxn(5, "t-0", True),
        ops.ConsumeTxn(6, "t-1", False),
        ops.BeginTxn(0),
        ops.Send(0, "t-0", 1),
        ops.Settle(1000),
        ops.InitProducer(1, TXN),
        ops.Settle(1000),
        ops.Advance(70_000),
        ops.Quiesce(200_000),
        *HW_ALL,
        ops.ConsumeTxn(5, "t-0", True),
        ops.CommitOffsets("my-group", "t-1", 3),
        ops.FetchOffsets("my-group", False),
    ]


@pytest.mark.parametrize(("tv", "verification"), [(0, True), (0, False), (2, True), (2, False)])
def test_the_reference_cluster_conforms(tv: int, verification: bool) -> None:
    cfg = TxnConfig(transaction_version=tv, verification=verification)
    _cluster, events = run(_reference_run_steps(), cfg)
    judge = TxnJudge(cfg)
    found = [f for e in events for f in judge.observe(e)]
    assert found == []
    assert {"quiesced", "marker_handled:NONE", "coordinator_loaded", "txn_timed_out"} <= set(judge.covered)
    assert judge.state.ghost.reads and judge.state.ghost.fates


def test_only_the_latest_marker_send_completes_a_partition() -> None:
    """A marker re-sent after a timeout supersedes the first send (Kafka re-sends only after the
    earlier request failed on its connection): the first send's late answer changes nothing."""
    head = [
        *BOOT,
        init(),
        add("t-0"),
        *produce_verified("t-0", 0, (1,), 1, 0, 100),
        end(True, 1, "PrepareCommit"),
        ev.MarkerSent(COORD, 200, TXN, "t-0", 0, PID, 0, True, 0),
        ev.MarkerSent(COORD, 201, TXN, "t-0", 0, PID, 0, True, 0),
        ev.MarkerHandled(0, 200, "t-0", PID, 0, True, 0, NONE, 1),
        ev.MarkerHandled(0, 201, "t-0", PID, 0, True, 0, NONE, 2),
    ]
    stale_then_current = [
        ev.MarkerResponseHandled(COORD, 200, NONE, "PrepareCommit"),
        ev.MarkerResponseHandled(COORD, 201, NONE, "CompleteCommit"),
        ev.MarkerResponseHandled(COORD, 201, NONE, "CompleteCommit"),  # a duplicated answer: stale too
    ]
    assert judge_txn_events(TxnConfig(), [*head, *stale_then_current]) == []
    early = judge_txn_events(TxnConfig(), [*head, ev.MarkerResponseHandled(COORD, 200, NONE, "CompleteCommit")])
    assert _verdicts(early) == [(NON_CONFORMANCE, "marker_response_handled")]


def test_offset_fetch_with_unstable_partitions_counts_under_its_own_coverage_key() -> None:
    """The judge's ``coverage_key`` is a method a slice overrides: a base-class instance attribute
    once shadowed TxnJudge's, so KIP-447's UNSTABLE_OFFSET_COMMIT answers counted as plain NONE."""
    judge = TxnJudge(TxnConfig())
    unstable = ev.OffsetFetchHandled(
        node=0, req=9, group="g0", require_stable=True, error=ev.NONE, offsets=(), unstable=("t-0",)
    )
    stable = replace(unstable, unstable=())
    assert "coverage_key" not in vars(judge)
    assert judge.coverage_key(unstable) == "offset_fetch_handled:UNSTABLE_OFFSET_COMMIT"
    assert judge.coverage_key(stable) == "offset_fetch_handled:NONE"  # near miss: nothing pending
