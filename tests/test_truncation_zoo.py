"""The zoo's truncation scenarios (issue 17, the fetcher's power): ``divergent-epochs`` on the top
rung (truncation on fetch, KAFKA-10554) and pinned to the KIP-320 rung (OffsetsForLeaderEpoch),
``epoch-query-answers`` (KIP-320) and ``follower-log-start``. Each passes on the clean reference,
carries its rung into its run (and so into a counterexample file), and catches a planted copy of a
fetcher bug the mutation benchmark found surviving, which the zoo's scenarios before let through."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_VIOLATION
from kconform.ci.gate import counterexample_of
from kconform.conformance.adapter import AdapterError
from kconform.conformance.hunt import run_campaign
from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.replication import scenarios as rscen
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.runner import LockstepRun
from kconform.conformance.scenarios import scenario_config
from kconform.impl import ReferenceCluster
from kconform.impl.replication import fetcher
from kconform.impl.replication.log import ReplicaLog
from kconform.impl.replication.messages import EpochQueryRequest, EpochQueryResponse, FetchResponse
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.invariants import INVARIANTS
from kconform.traces import events as ev
from kconform.traces.counterexample import write_counterexample

DEFAULT = ReplicationConfig()
NAMES = ("divergent-epochs", "divergent-epochs-kip-320")


def _run(name: str, cfg: ReplicationConfig = DEFAULT) -> LockstepRun:
    return rscen.run_scenario(ReferenceCluster(), rscen.SCENARIOS[name], cfg, frozenset())


E = TypeVar("E", bound=ev.Event)


def _events(run: LockstepRun, kind: type[E]) -> list[E]:
    return [e for step in run.steps for e in step.events if isinstance(e, kind)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("cfg", [ReplicationConfig(), GATE_CONFIG], ids=["default", "gate"])
def test_the_clean_reference_conforms_and_every_follower_ends_with_the_leaders_log(
    name: str, cfg: ReplicationConfig
) -> None:
    run = _run(name, cfg)
    assert run.failure is None, run.failure
    assert isinstance(run.adapter, ReferenceCluster)
    logs = {tuple(x.epoch for x in b.log.entries) for b in run.adapter.cluster.brokers}
    assert logs == {(0, 1, 1)}


def test_pinned_scenarios_run_on_their_rung_without_what_it_did_not_have() -> None:
    """The run (and a counterexample file written from it) carries the pinned rung; ELR (4.0) and
    follower fetching (2.4) are off below them, every other setting is the gate's."""
    cfg = scenario_config(rscen.DIVERGENT_EPOCHS_KIP_320, GATE_CONFIG)
    assert isinstance(cfg, ReplicationConfig)
    assert (cfg.protocol, cfg.elr, cfg.follower_fetching) == (Protocol.KIP_320, False, False)
    assert replace(cfg, protocol=GATE_CONFIG.protocol, eligible_leader_replicas_version=1, follower_fetching=True) == (
        GATE_CONFIG
    )
    kip_320 = _run("epoch-query-answers").cfg
    assert isinstance(kip_320, ReplicationConfig) and kip_320.protocol is Protocol.KIP_320
    assert scenario_config(rscen.DIVERGENT_EPOCHS, GATE_CONFIG) is GATE_CONFIG
    assert {s.name for s in rscen.zoo(ReplicationConfig())} >= set(NAMES)
    assert not {s.name for s in rscen.zoo(ReplicationConfig(replicas=2))} & set(NAMES)


def test_divergent_epochs_truncates_twice_on_fetch() -> None:
    """Broker 0 (epochs 0, 0, 2, 2) against leader 1 (0, 1, 1): divergingEpoch (1, 3) → its own end
    of epoch 0, 2; then (0, 1) → 1 (AbstractFetcherThreadTest.testTruncation's shape)."""
    run = _run("divergent-epochs")
    handled = [(e.diverging_epoch, e.diverging_end_offset) for e in _events(run, ev.FetchHandled) if e.follower == 0]
    assert [d for d in handled if d != (-1, -1)][-2:] == [(1, 3), (0, 1)]
    cuts = [e.truncated_to for e in _events(run, ev.FetchApplied) if e.node == 0 and e.outcome == "diverged"]
    assert cuts[-2:] == [2, 1]


def test_the_kip_320_run_asks_again_after_an_epoch_it_never_had() -> None:
    run = _run("divergent-epochs-kip-320")
    applied = [(e.outcome, e.truncated_to) for e in _events(run, ev.EpochQueryApplied) if e.node == 0]
    assert applied[-2:] == [("retry", 2), ("truncated", 1)]
    undefined = [e for e in _events(run, ev.EpochQueryHandled) if e.end_offset == -1]
    assert undefined  # the boot-time answers to followers without an epoch


# Planted copies of the survivors of the mutation benchmark (docs/benchmarks.md) -----------------


def _own_epoch_check_negated(log: ReplicaLog, epoch: int, end_offset: int) -> int:
    """diverging_epoch_truncation with `own_epoch != -1` negated: a follower that has an earlier
    epoch than the leader's diverging one takes the leader's end offset instead of its own."""
    own_epoch, own_end = log.epochs.end_offset_for(epoch, log.leo)
    if own_epoch == epoch:
        return min(end_offset, own_end, log.leo)
    if own_epoch == -1:
        return min(own_end, log.leo)
    return min(end_offset, log.leo)


def _own_end_ignored(log: ReplicaLog, epoch: int, end_offset: int) -> int:
    """diverging_epoch_truncation with `own_epoch == epoch` negated: the follower's own end offset
    for the leader's epoch is used alone (a follower longer in that epoch keeps its extra records)."""
    own_epoch, own_end = log.epochs.end_offset_for(epoch, log.leo)
    if own_epoch != epoch and own_epoch != -1:
        return min(end_offset, own_end, log.leo)
    if own_epoch != -1:
        return min(own_end, log.leo)
    return min(end_offset, log.leo)


def _undefined_answer_taken(log: ReplicaLog, epoch: int, end_offset: int) -> tuple[int, bool]:
    """epoch_answer_truncation off by one (`end_offset == -1` written `== -2`): an undefined answer
    (UNDEFINED_EPOCH_OFFSET) is not recognised, the follower truncates to min(-1, LEO): the reference
    fails (the gate's "the implementation failed", exit 2, which does not pass it)."""
    if end_offset == -2:
        return log.hw, True
    if epoch == -1:
        return min(end_offset, log.leo), True
    own_epoch, own_end = log.epochs.end_offset_for(epoch, log.leo)
    if own_epoch == epoch:
        return min(end_offset, own_end, log.leo), True
    if own_epoch != -1:
        return min(own_end, log.leo), False
    return min(end_offset, log.leo), True


def _done_after_one_round(log: ReplicaLog, epoch: int, end_offset: int) -> tuple[int, bool]:
    """epoch_answer_truncation without truncationCompleted = false: a follower that never had the
    answer's epoch truncates once and starts fetching (before KIP-279's second round trip)."""
    offset, _complete = ORIGINAL_EPOCH_ANSWER(log, epoch, end_offset)
    return offset, True


ORIGINAL_EPOCH_ANSWER = fetcher.epoch_answer_truncation


def _epoch_query_unfenced(self: fetcher.ReplicaFetcher) -> int:
    """_send_epoch_query with its protocol flag negated: OffsetsForLeaderEpoch without
    currentLeaderEpoch on the KIP-320 rung (and with it below)."""
    view = self.partition.view
    requested = self.log.epochs.latest_epoch()
    current = view.leader_epoch if not self.rt.config.protocol.fenced else -1
    request = EpochQueryRequest(view.leader, requested, current, view.leader_epoch)
    msg = self.rt.network.send(self.broker_id, view.leader, request)
    self.rt.events.emit(ev.EpochQuerySent(self.broker_id, msg, view.leader, requested, current, view.leader_epoch))
    return msg


PLANTED: dict[str, tuple[str, Callable[..., object], str, str]] = {
    "own epoch check negated": (
        "diverging_epoch_truncation",
        _own_epoch_check_negated,
        "divergent-epochs",
        "fetch_applied",
    ),
    "own end offset alone": ("diverging_epoch_truncation", _own_end_ignored, "divergent-epochs", "fetch_applied"),
    "undefined answer not recognised": (
        "epoch_answer_truncation",
        _undefined_answer_taken,
        "divergent-epochs-kip-320",
        "implementation failed",
    ),
    "truncation complete after one round": (
        "epoch_answer_truncation",
        _done_after_one_round,
        "divergent-epochs-kip-320",
        "epoch_query_applied",
    ),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_truncation_bug_is_caught_here_and_not_by_fast_failover_on_the_gates_rung(
    bug: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    attr, plant, scenario, caught_at = PLANTED[bug]
    monkeypatch.setattr(fetcher, attr, plant)
    if caught_at == "implementation failed":
        with pytest.raises(AdapterError, match="truncate to -1"):
            _run(scenario)
    else:
        run = _run(scenario)
        assert run.failure is not None
        assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, caught_at), run.failure
    # the near miss: the zoo's truncation shape before, on the gate's rung, lets it through
    near_miss = rscen.run_scenario(ReferenceCluster(), rscen.FAST_FAILOVER, ReplicationConfig(), frozenset())
    assert near_miss.failure is None, near_miss.failure


def test_an_unfenced_epoch_query_is_caught_on_the_kip_320_rung(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetcher.ReplicaFetcher, "_send_epoch_query", _epoch_query_unfenced)
    run = _run("divergent-epochs-kip-320")
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "epoch_query_sent"), run.failure
    # the near miss: the top rung never sends OffsetsForLeaderEpoch, so its scenario cannot see it
    assert _run("divergent-epochs").failure is None


def test_the_zoos_counterexample_carries_the_pinned_rung_and_replays_there(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """End to end: the default gate's campaign finds the planted unfenced OffsetsForLeaderEpoch in
    the zoo; the counterexample file the gate writes from that run names the KIP-320 rung in its
    header, and replay re-drives it there and reproduces the finding (exit 1)."""
    monkeypatch.setattr(fetcher.ReplicaFetcher, "_send_epoch_query", _epoch_query_unfenced)
    result = run_campaign(ReferenceCluster, DEFAULT, frozenset(), seed=7, examples=0)
    assert result.failure is not None and result.failure.failure is not None
    assert result.failure.failure.name == "epoch_query_sent"
    path = tmp_path / "counterexample-7.jsonl"
    write_counterexample(path, counterexample_of(result.failure, "reference"))
    header = json.loads(path.read_text().splitlines()[0])
    assert header["config"]["protocol"] == "kip-320"
    assert cli.main(["replay", str(path)]) == EXIT_VIOLATION


LOG_START_CFG = replace(DEFAULT, log_start_moves=True)


def test_follower_log_start_runs_only_with_log_start_moves_and_the_new_leader_refuses_deleted_records() -> None:
    assert rscen.FOLLOWER_LOG_START in rscen.zoo(GATE_CONFIG)
    assert rscen.FOLLOWER_LOG_START not in rscen.zoo(DEFAULT)
    run = _run("follower-log-start", LOG_START_CFG)
    assert run.failure is None, run.failure
    answers = [(e.node, e.fetch_offset, e.error) for e in _events(run, ev.ConsumerFetchHandled)]
    assert answers[-2:] == [(1, 1, ev.OFFSET_OUT_OF_RANGE), (1, 2, ev.NONE)]


def _log_start_not_adopted(
    original: Callable[[fetcher.ReplicaFetcher, FetchResponse], None],
) -> Callable[[fetcher.ReplicaFetcher, FetchResponse], None]:
    """on_fetch_response without `log.increment_log_start(...)`: a follower keeps its own log start."""

    def on_fetch_response(self: fetcher.ReplicaFetcher, resp: FetchResponse) -> None:
        increment = ReplicaLog.increment_log_start
        ReplicaLog.increment_log_start = lambda log, offset: False  # type: ignore[method-assign,assignment]
        try:
            original(self, resp)
        finally:
            ReplicaLog.increment_log_start = increment  # type: ignore[method-assign]

    return on_fetch_response


def test_a_follower_that_keeps_its_own_log_start_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        fetcher.ReplicaFetcher, "on_fetch_response", _log_start_not_adopted(fetcher.ReplicaFetcher.on_fetch_response)
    )
    run = _run("follower-log-start", LOG_START_CFG)
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "consumer_fetch_handled"), run.failure
    # the near miss: the zoo's other log-start scenarios let it through
    for name in ("restart-below-log-start", "log-start-epoch-cache"):
        assert _run(name, LOG_START_CFG).failure is None, name


def test_epoch_query_answers_reaches_a_stale_and_a_fenced_answer() -> None:
    for cfg in (DEFAULT, GATE_CONFIG):
        run = _run("epoch-query-answers", cfg)
        assert run.failure is None, run.failure
        outcomes = {(e.node, e.outcome) for e in _events(run, ev.EpochQueryApplied)}
        assert {(0, "ignored"), (1, "error")} <= outcomes


Handler = Callable[[fetcher.ReplicaFetcher, EpochQueryResponse], None]


def _answer_handler(check_epoch: bool, check_error: bool) -> Handler:
    """on_epoch_response with some of its guards: without the epoch check a stale answer (to a query
    for another leader or epoch) is applied; without the error check an error answer (end offset -1)
    is taken for an undefined one and the follower truncates to its HW and starts fetching."""

    def on_epoch_response(self: fetcher.ReplicaFetcher, resp: EpochQueryResponse) -> None:
        view = self.partition.view
        stale = view.leader != resp.leader or view.leader_epoch != resp.follower_epoch
        if self.state is not fetcher.FetchState.TRUNCATING or (check_epoch and stale):
            self.rt.events.emit(ev.EpochQueryApplied(self.broker_id, resp.req, "ignored", -1, self.log.hw))
            self._next_after(resp.req, progressed=False)
            return
        if check_error and resp.error != ev.NONE:
            self.rt.events.emit(ev.EpochQueryApplied(self.broker_id, resp.req, "error", -1, self.log.hw))
            self._next_after(resp.req, progressed=False)
            return
        offset, complete = fetcher.epoch_answer_truncation(self.log, resp.epoch, resp.end_offset)
        self.log.truncate_to(offset)
        if complete:
            self.state = fetcher.FetchState.FETCHING
        outcome = "truncated" if complete else "retry"
        self.rt.events.emit(ev.EpochQueryApplied(self.broker_id, resp.req, outcome, offset, self.log.hw))
        self._next_after(resp.req, progressed=True)

    return on_epoch_response


@pytest.mark.parametrize("check_epoch", [False, True], ids=["stale-applied", "fenced-applied"])
def test_a_follower_that_applies_stale_or_fenced_answers_is_caught(
    check_epoch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = _answer_handler(check_epoch=check_epoch, check_error=not check_epoch)
    monkeypatch.setattr(fetcher.ReplicaFetcher, "on_epoch_response", handler)
    run = _run("epoch-query-answers")
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "epoch_query_applied"), run.failure
    # the near miss: the divergent-epochs run on the same rung gets no such answer
    assert _run("divergent-epochs-kip-320").failure is None


def _send_now_after_nothing(self: fetcher.ReplicaFetcher, req: int, progressed: bool) -> None:
    """_next_after with `progressed` negated: the follower asks again at once after an empty or
    failed answer and waits replica.fetch.backoff.ms after progress (FollowerKeepsFetching, a
    progress bound, refuses the wait; nothing else does)."""
    ORIGINAL_NEXT_AFTER(self, req, not progressed)


ORIGINAL_NEXT_AFTER = fetcher.ReplicaFetcher._next_after


def test_no_scenario_is_pinned_to_kip_101_because_a_pace_change_walks_into_its_hole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Why divergent-epochs runs on KIP-320 and not on KIP-101: there the same operations, with only
    the fetcher's pace changed, reach the 0.11 hole (an undefined answer sends a follower back to a
    lagging HW, below the leader's): a safety violation that is the rung's, not the implementation's,
    which the gate would report as the implementation's. (Found by the mutation benchmark before
    FollowerKeepsFetching judged the pace; it is left out here to show the safety verdict alone.)
    On KIP-320 the same reference keeps every safety invariant."""
    assert Protocol.KIP_101 not in {s.protocol for s in rscen.SCENARIOS.values()}
    monkeypatch.setattr(fetcher.ReplicaFetcher, "_next_after", _send_now_after_nothing)
    safety = frozenset(INVARIANTS) - {"FollowerKeepsFetching"}
    verdicts = {}
    for rung in (Protocol.KIP_101, Protocol.KIP_320):
        run = LockstepRun(ReferenceCluster(), replace(GATE_CONFIG, protocol=rung), 0, frozenset(), checked=safety)
        run.boot()
        for op in rscen.DIVERGENT_EPOCHS.ops:
            if not run.failed:
                run.apply(op)
        verdicts[rung] = run.failure.name if run.failure else None
    assert verdicts[Protocol.KIP_101] in {"WeakIsr", "StrongIsr", "NoDivergenceBelowHw"}
    assert verdicts[Protocol.KIP_320] is None
