"""Zoo scenarios from the 2026-11-27 census of impl/replication's log, partition and broker (issue 17,
docs/benchmarks.md, "Fifth measurement ... census"): each kills a survivor of the census draw with a Kafka-real
situation; the clean reference passes (the near miss), and the census mutant itself, compiled from
its mutated tree and put in place of the real function, is caught.

- ``restarted-follower-retention``: UnifiedLog.truncateFullyAndStartAt moves the log start with the
  log (``ReplicaLog.truncate_fully_and_start_at`` without ``self.log_start = offset``);
- ``consume-wait-one-ms``: a Fetch with fetch.max.wait.ms 1 waits (ReplicaManager.fetchMessages
  answers at once only when ``maxWaitMs <= 0``; ``Broker._on_consumer_fetch``'s ``> 0`` -> ``> 1``);
- ``epochs-above-offsets-kip-279``: the 0.11-2.0 LeaderEpochFileCache.assign compares the new
  epoch's start with the latest start, not the latest epoch (``LeaderEpochCache.assign``'s
  ``[-1][1]`` -> ``[-1][0]``);
- ``pending-expansion-hw``: a member proposed in counts for the HW while the AlterPartition is in
  flight, caught up or not (KIP-497, Partition.maybeIncrementLeaderHW over the maximal ISR;
  ``Partition.maybe_increment_hw``'s ``if isr_only`` negated);
- ``follower-one-batch-behind``: a follower at the leader's LEO of its previous Fetch is caught up
  as of that Fetch (Replica.updateFetchStateOrThrow; ``RemoteReplica.record_fetch`` without that
  rule);
- ``unclean-truncation-below-hw`` (the seed-11 census's open survivor): after an unclean election
  (KIP-106) a follower truncates below its HW and the HW follows (UnifiedLog.truncateTo;
  ``ReplicaLog.truncate_to`` without ``hw = min(hw, offset)``). The scenario runs with
  unclean.leader.election.enable whatever the gate's configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kconform.ci.mutation.child import module_path
from kconform.ci.mutation.operators import mutated_tree
from kconform.conformance.replication.scenarios import (
    CONSUME_WAIT_ONE_MS,
    EPOCHS_ABOVE_OFFSETS_KIP_279,
    FOLLOWER_ONE_BATCH_BEHIND,
    PENDING_EXPANSION_HW,
    RESTARTED_FOLLOWER_RETENTION,
    UNCLEAN_TRUNCATION_BELOW_HW,
    Scenario,
    run_scenario,
    zoo,
)
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.runner import LockstepRun
from kconform.impl.replication.broker import Broker
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.impl.replication.log import LeaderEpochCache, ReplicaLog
from kconform.impl.replication.partition import Partition, RemoteReplica
from kconform.model.config import ReplicationConfig
from kconform.traces import events as ev


def mutated_function(module: str, mid: str, owner: str, name: str) -> Callable[..., Any]:
    """``owner.name`` as census mutant ``mid`` of ``module`` has it: the module compiled from its
    mutated tree (ci.mutation.operators) into a namespace of its own, the function taken from it."""
    path = module_path(module)
    code = compile(mutated_tree(path.read_text(encoding="utf-8"), module, mid), str(path), "exec")
    namespace: dict[str, Any] = {"__name__": module, "__package__": module.rpartition(".")[0]}
    exec(code, namespace)
    function: Callable[..., Any] = namespace[owner].__dict__[name]
    return function


def _run(scenario: Scenario) -> LockstepRun:
    return run_scenario(ReferenceCluster(), scenario, GATE_CONFIG, frozenset())


def _events(run: LockstepRun, kind: type[ev.Event]) -> list[Any]:
    return [e for step in run.steps for e in step.events if isinstance(e, kind)]


CENSUS: dict[str, tuple[Scenario, str, str, type, str, str, str]] = {
    "restarted-follower-retention": (
        RESTARTED_FOLLOWER_RETENTION,
        "kconform.impl.replication.log",
        "kconform.impl.replication.log:ReplicaLog.truncate_fully_and_start_at:drop:9f387ef1",
        ReplicaLog,
        "truncate_fully_and_start_at",
        "retention_applied",
        "log start 2",
    ),
    "consume-wait-one-ms": (
        CONSUME_WAIT_ONE_MS,
        "kconform.impl.replication.broker",
        "kconform.impl.replication.broker:Broker._on_consumer_fetch:const+1:b5b0c75c",
        Broker,
        "_on_consumer_fetch",
        "consumer_fetch_wait_handled",
        "parked",
    ),
    "epochs-above-offsets-kip-279": (
        EPOCHS_ABOVE_OFFSETS_KIP_279,
        "kconform.impl.replication.log",
        "kconform.impl.replication.log:LeaderEpochCache.assign:const-1:d1ef2f5b:2",
        LeaderEpochCache,
        "assign",
        "epoch_query_sent",
        "requested_epoch",
    ),
    "pending-expansion-hw": (
        PENDING_EXPANSION_HW,
        "kconform.impl.replication.partition",
        "kconform.impl.replication.partition:Partition.maybe_increment_hw:negate:582dd3f3",
        Partition,
        "maybe_increment_hw",
        "fetch_parked",
        "leader_hw",
    ),
    "follower-one-batch-behind": (
        FOLLOWER_ONE_BATCH_BEHIND,
        "kconform.impl.replication.partition",
        "kconform.impl.replication.partition:RemoteReplica.record_fetch:drop:e4702198",
        RemoteReplica,
        "record_fetch",
        "isr_change_proposed",
        "caught up",
    ),
    "unclean-truncation-below-hw": (
        UNCLEAN_TRUNCATION_BELOW_HW,
        "kconform.impl.replication.log",
        "kconform.impl.replication.log:ReplicaLog.truncate_to:drop:e195cdf9",
        ReplicaLog,
        "truncate_to",
        "fetch_applied",
        "hw",
    ),
}


@pytest.mark.parametrize("name", sorted(CENSUS))
def test_a_census_survivor_is_caught_by_its_scenario(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario, module, mid, owner, function, event, field = CENSUS[name]
    assert scenario in zoo(GATE_CONFIG)
    clean = _run(scenario)
    assert not clean.failed, clean.failure
    monkeypatch.setattr(owner, function, mutated_function(module, mid, owner.__name__, function))
    buggy = _run(scenario)
    assert buggy.failure is not None
    assert (buggy.failure.verdict, buggy.failure.name) == ("non-conformance", event)
    assert field in buggy.failure.message


def test_the_scenarios_run_where_their_configuration_does() -> None:
    plain = ReplicationConfig()
    assert RESTARTED_FOLLOWER_RETENTION not in zoo(plain)  # no log start moves
    assert CONSUME_WAIT_ONE_MS not in zoo(plain)  # no waiting consumer fetches
    assert EPOCHS_ABOVE_OFFSETS_KIP_279 in zoo(plain)
    assert EPOCHS_ABOVE_OFFSETS_KIP_279.configure(GATE_CONFIG).protocol.value == "kip-279"


def test_the_clean_runs_do_what_the_scenarios_say() -> None:
    """What each scenario is about happens in the clean run: the retention below the restarted
    follower's log start deletes nothing; the 1 ms Fetch waits and answers empty at its deadline;
    broker 1 asks for its latest epoch 4 when broker 2 takes over."""
    retention = _run(RESTARTED_FOLLOWER_RETENTION)
    reset = [e for e in _events(retention, ev.FetchApplied) if e.outcome == "out_of_range"]
    assert [(e.node, e.truncated_to) for e in reset] == [(2, 2)]
    assert not [e for e in _events(retention, ev.RetentionApplied) if e.node == 2]
    waits = _run(CONSUME_WAIT_ONE_MS)
    parked = [e for e in _events(waits, ev.ConsumerFetchWaitHandled) if e.max_wait_ms == 1]
    assert [e.parked for e in parked] == [True, True]
    assert [e.entries for e in _events(waits, ev.ConsumerFetchCompleted)] == [(), ()]
    epochs = _run(EPOCHS_ABOVE_OFFSETS_KIP_279)
    asked = [e.requested_epoch for e in _events(epochs, ev.EpochQuerySent) if e.node == 1]
    assert asked[-1] == 4
    pending = _run(PENDING_EXPANSION_HW)
    proposed = [(e.node, e.isr) for e in _events(pending, ev.IsrChangeProposed)]
    assert (1, (0, 1, 2)) in proposed
    parked_hws = [e.leader_hw for e in _events(pending, ev.FetchParked) if e.node == 1 and e.follower == 0]
    assert 1 in parked_hws  # broker 0 at offset 2, broker 2 proposed in at offset 1: the HW stays 1
    behind = _run(FOLLOWER_ONE_BATCH_BEHIND)
    answered = [e for e in _events(behind, ev.FetchHandled) if e.node == 0 and e.follower == 1]
    assert len([e for e in answered if len(e.entries) == 1 and e.leader_leo == e.entries[0].offset + 1]) == 16
    assert not [e for e in _events(behind, ev.IsrChangeProposed) if 1 not in e.isr]  # never proposed out
    unclean = _run(UNCLEAN_TRUNCATION_BELOW_HW)
    assert [(e.node, e.log_end, e.hw) for e in _events(unclean, ev.BrokerRestarted)] == [(2, 0, 0), (1, 2, 2)]
    assert [e.broker for e in _events(unclean, ev.BrokerUnfenced) if e.unclean] == [2]
    diverged = [(e.node, e.truncated_to, e.hw) for e in _events(unclean, ev.FetchApplied) if e.outcome == "diverged"]
    assert diverged == [(1, 0, 0)]
    allowed = [f for step in unclean.steps for f in step.findings]
    assert allowed and not any(f.failing for f in allowed)  # the unclean election's losses, permitted


def test_the_unclean_scenario_runs_with_unclean_elections_whatever_the_gate() -> None:
    assert not GATE_CONFIG.unclean_leader_election
    assert UNCLEAN_TRUNCATION_BELOW_HW.configure(GATE_CONFIG).unclean_leader_election
    assert UNCLEAN_TRUNCATION_BELOW_HW.configure(GATE_CONFIG).protocol is GATE_CONFIG.protocol
    assert RESTARTED_FOLLOWER_RETENTION.configure(GATE_CONFIG) is GATE_CONFIG
