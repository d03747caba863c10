"""Zoo scenarios from issue 17's mutation census of impl/replication (docs/benchmarks.md): each kills
a census survivor with a Kafka-real situation, the clean reference passes, a planted copy is caught.

``log-start-epoch-cache``: the leader-epoch cache where the log start moves, as Kafka keeps it.

- LeaderEpochFileCache.truncateFromStart (run by UnifiedLog.maybeIncrementLogStartOffset): the
  entries at or before the new log start go and the last of them comes back starting there, so
  endOffsetFor of an epoch older than every cached one answers the start of the first later epoch
  (the new log start), not where that epoch once began;
- UnifiedLog.truncateFullyAndStartAt (a follower below its leader's log start,
  AbstractFetcherThread): LeaderEpochFileCache.clearAndFlush, so the next Fetch carries no
  lastFetchedEpoch (ReplicaFetcherThread.latestEpoch reads the cache).

The clean reference passes and answers as Kafka does; a planted copy of each bug (the mutation
census's survivors ``LeaderEpochCache.truncate_from_start:drop`` and
``ReplicaLog.truncate_fully_and_start_at:drop``) is caught by the scenario, and went unseen by
the gate without it (docs/benchmarks.md, the census of 2026-11-27).

``demoted-leader-hw``: a demoted leader keeps no leader state; its HW comes from its leader's answers
only (Partition.makeFollower, Partition.maybeIncrementLeaderHW runs on the leader only)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kconform.conformance.replication.scenarios import (
    DEMOTED_LEADER_HW,
    ELR_REFUSED_PROPOSAL_STALL,
    LOG_START_EPOCH_CACHE,
    LOG_START_EPOCH_CACHE_KIP_279,
    run_scenario,
    zoo,
)
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.runner import LockstepRun
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.impl.replication.log import LeaderEpochCache, ReplicaLog
from kconform.impl.replication.partition import Partition
from kconform.model.config import ReplicationConfig
from kconform.traces import events as ev


def _run() -> LockstepRun:
    return run_scenario(ReferenceCluster(), LOG_START_EPOCH_CACHE, GATE_CONFIG, frozenset())


def _events(run: LockstepRun, kind: type[ev.Event]) -> list[ev.Event]:
    return [e for step in run.steps for e in step.events if isinstance(e, kind)]


def test_the_scenario_runs_only_where_log_starts_move() -> None:
    assert LOG_START_EPOCH_CACHE in zoo(GATE_CONFIG)
    assert LOG_START_EPOCH_CACHE in zoo(ReplicationConfig(log_start_moves=True))
    assert LOG_START_EPOCH_CACHE not in zoo(ReplicationConfig())


@pytest.mark.parametrize("cfg", [GATE_CONFIG, ReplicationConfig(log_start_moves=True)], ids=["gate", "plain"])
def test_the_clean_reference_answers_as_kafka_and_the_model_agrees(cfg: ReplicationConfig) -> None:
    run = run_scenario(ReferenceCluster(), LOG_START_EPOCH_CACHE, cfg, frozenset())
    assert not run.failed, run.failure
    diverging = [e for e in _events(run, ev.FetchHandled) if e.diverging_epoch >= 0]  # type: ignore[attr-defined]
    # endOffsetFor(0) on the cache [(1, 4)]: epoch 0 is older than every cached epoch -> (0, 4)
    assert [(e.follower, e.diverging_epoch, e.diverging_end_offset) for e in diverging] == [(0, 0, 4)]  # type: ignore[attr-defined]
    reset = [e for e in _events(run, ev.FetchApplied) if e.outcome == "out_of_range"]  # type: ignore[attr-defined]
    assert [(e.node, e.truncated_to) for e in reset] == [(2, 7)]  # type: ignore[attr-defined]
    after = [e for e in _events(run, ev.FetchSent) if e.node == 2 and e.fetch_offset == 7]  # type: ignore[attr-defined]
    assert after and all(e.last_fetched_epoch == -1 for e in after)  # type: ignore[attr-defined]


def _keep_cache_on_start_at(self: ReplicaLog, offset: int) -> None:
    """truncateFullyAndStartAt without clearAndFlush: the old epochs stay cached."""
    kept = self.epochs
    ORIGINAL_START_AT(self, offset)
    self.epochs = kept


ORIGINAL_START_AT = ReplicaLog.truncate_fully_and_start_at
PLANTED: dict[str, tuple[type, str, Callable[..., None], str, str]] = {
    "truncate-from-start-skipped": (
        LeaderEpochCache,
        "truncate_from_start",
        lambda self, start_offset: None,
        "fetch_handled",
        "diverging_end_offset",
    ),
    "start-at-keeps-epochs": (
        ReplicaLog,
        "truncate_fully_and_start_at",
        _keep_cache_on_start_at,
        "fetch_sent",
        "last_fetched_epoch",
    ),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_epoch_cache_bug_is_caught(bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    owner, name, planted, event, field = PLANTED[bug]
    monkeypatch.setattr(owner, name, planted)
    run = _run()
    assert run.failed and run.failure is not None
    assert (run.failure.verdict, run.failure.name) == ("non-conformance", event)
    assert field in run.failure.message


def _follower_keeps_leader_state(
    self: Partition, leader: int, leader_epoch: int, isr: tuple[int, ...], pe: int
) -> None:
    """makeFollower that keeps the leader-only state (the census survivor Partition.make_follower:drop)."""
    kept = self.leading
    ORIGINAL_MAKE_FOLLOWER(self, leader, leader_epoch, isr, pe)
    self.leading = kept


ORIGINAL_MAKE_FOLLOWER = Partition.make_follower


def test_a_demoted_leader_takes_its_hw_from_its_leader(monkeypatch: pytest.MonkeyPatch) -> None:
    """``demoted-leader-hw``: the ISR update reaching the demoted broker 0 leaves its HW at the 1 its
    leader sent (the model agrees); with its old leader state kept, it computes 2 from its old view
    of the followers and is caught."""
    assert DEMOTED_LEADER_HW in zoo(ReplicationConfig()) and DEMOTED_LEADER_HW in zoo(GATE_CONFIG)
    clean = run_scenario(ReferenceCluster(), DEMOTED_LEADER_HW, GATE_CONFIG, frozenset())
    assert not clean.failed, clean.failure
    updates = [e for e in _events(clean, ev.MetadataApplied) if e.node == 0 and e.outcome == "update_isr"]  # type: ignore[attr-defined]
    assert [(e.isr, e.hw) for e in updates] == [((0, 1), 1)]  # type: ignore[attr-defined]
    monkeypatch.setattr(Partition, "make_follower", _follower_keeps_leader_state)
    buggy = run_scenario(ReferenceCluster(), DEMOTED_LEADER_HW, GATE_CONFIG, frozenset())
    assert buggy.failure is not None
    assert (buggy.failure.verdict, buggy.failure.name) == ("non-conformance", "metadata_applied")
    assert "hw" in buggy.failure.message


def _clear_pending_never(self: Partition, msg: int) -> None:
    """clear_pending that matches no answer (the census survivor Partition.clear_pending:cmp)."""


def test_a_refused_proposal_ends_and_the_leader_shrinks_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """``elr-refused-proposal-stall``: after the KIP-903 refusals the leader proposes the cut-off
    broker 1 out during the stall (IsrShrinkBounded holds); a leader that keeps the refused
    proposal pending never does, and the invariant fires."""
    assert ELR_REFUSED_PROPOSAL_STALL in zoo(GATE_CONFIG) and ELR_REFUSED_PROPOSAL_STALL not in zoo(ReplicationConfig())
    clean = run_scenario(ReferenceCluster(), ELR_REFUSED_PROPOSAL_STALL, GATE_CONFIG, frozenset())
    assert not clean.failed, clean.failure
    refused = [e for e in _events(clean, ev.AlterPartitionApplied) if e.error == ev.INELIGIBLE_REPLICA]  # type: ignore[attr-defined]
    assert refused
    assert any(e.isr == (0,) for e in _events(clean, ev.IsrChangeProposed))  # type: ignore[attr-defined]
    monkeypatch.setattr(Partition, "clear_pending", _clear_pending_never)
    buggy = run_scenario(ReferenceCluster(), ELR_REFUSED_PROPOSAL_STALL, GATE_CONFIG, frozenset())
    assert buggy.failure is not None
    assert (buggy.failure.verdict, buggy.failure.name) == ("invariant-violation", "IsrShrinkBounded")


def test_before_kafka_7415_an_epoch_older_than_the_cache_is_undefined(monkeypatch: pytest.MonkeyPatch) -> None:
    """``log-start-epoch-cache-kip-279``: on the 2.0 rung the leader answers broker 0's
    OffsetsForLeaderEpoch for epoch 0, older than every epoch it caches after DeleteRecords, with
    UNDEFINED_EPOCH_OFFSET (the cache rules before KAFKA-7415); a log whose cache kept the 2.1 rules
    (the census survivor ReplicaLog.__post_init__:drop) answers (0, 4) and is caught."""
    scenario = LOG_START_EPOCH_CACHE_KIP_279
    assert scenario in zoo(GATE_CONFIG) and scenario not in zoo(ReplicationConfig())
    cfg = scenario.configure(GATE_CONFIG)
    clean = run_scenario(ReferenceCluster(), scenario, cfg, frozenset())
    assert not clean.failed, clean.failure
    answers = [e for e in _events(clean, ev.EpochQueryHandled) if e.follower == 0 and e.error == ev.NONE]  # type: ignore[attr-defined]
    assert (-1, -1) in [(e.epoch, e.end_offset) for e in answers]  # type: ignore[attr-defined]
    monkeypatch.setattr(ReplicaLog, "__post_init__", lambda self: None)
    buggy = run_scenario(ReferenceCluster(), scenario, cfg, frozenset())
    assert buggy.failure is not None
    assert (buggy.failure.verdict, buggy.failure.name) == ("non-conformance", "epoch_query_handled")
