"""The known-bug zoo: each scenario conforms on the fixed protocol and exposes its bug otherwise."""

from __future__ import annotations

import pytest

from kconform.conformance.judge import INVARIANT_VIOLATION, NON_CONFORMANCE
from kconform.conformance.replication.scenarios import FAST_FAILOVER, SCENARIOS, Scenario
from kconform.conformance.scenarios import declare, run_scenario
from kconform.impl import ReferenceCluster
from kconform.impl.replication.log import ReplicaLog
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces import operations as o
from kconform.traces.events import Entry


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("protocol", [Protocol.KIP_279, Protocol.KIP_320, Protocol.DIVERGING_EPOCH])
def test_scenario_conforms_on_fixed_protocols(name: str, protocol: Protocol) -> None:
    run = run_scenario(ReferenceCluster(), SCENARIOS[name], ReplicationConfig(protocol=protocol), frozenset())
    assert run.failure is None, run.failure
    assert len(run.steps) == len(SCENARIOS[name].ops) + 1


def test_fast_failover_diverges_under_kip_101_alone() -> None:
    """KIP-101 without KIP-279: the follower keeps a record the new leader never had (the new
    leader wrote in its epoch first, so even the 0.11 cache answers with its epoch's start)."""
    run = run_scenario(ReferenceCluster(), FAST_FAILOVER, ReplicationConfig(protocol=Protocol.KIP_101), frozenset())
    assert run.failure is not None
    assert run.failure.verdict == INVARIANT_VIOLATION
    assert run.failure.name in {"WeakIsr", "StrongIsr", "NoDivergenceBelowHw"}


def test_fast_failover_catches_the_kip_101_truncation_mutant() -> None:
    run = run_scenario(ReferenceCluster(), FAST_FAILOVER, ReplicationConfig(), frozenset({"kip-101-truncation"}))
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "fetch_applied")
    assert "truncated_to" in run.failure.message


def test_rejoin_before_epoch_start_catches_the_early_isr_expand_mutant() -> None:
    scenario = SCENARIOS["rejoin-before-epoch-start"]
    run = run_scenario(ReferenceCluster(), scenario, ReplicationConfig(), frozenset({"early-isr-expand"}))
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "isr_change_proposed")


def _epochs_not_persisted(self: ReplicaLog, entry: Entry) -> None:
    """A planted bug: an append's new epoch goes into the in-memory cache only (no checkpoint write)."""
    self.entries.append(entry)
    self.epochs.assign(entry.epoch, entry.offset)
    if self.sync_appends:
        self.disk.append(entry)


def _entries_not_persisted(self: ReplicaLog, entry: Entry) -> None:
    """A planted bug: an append under log.flush.interval.ms 0 (sync) never reaches the disk."""
    self.entries.append(entry)
    self.epochs.assign(entry.epoch, entry.offset)
    self.disk.write_epochs(self.epochs.snapshot())


PERSISTENCE_BUGS = {
    "epoch cache not checkpointed": (_epochs_not_persisted, "fetch_sent"),
    "synchronous append not written": (_entries_not_persisted, "broker_restarted"),
}


@pytest.mark.parametrize("bug", sorted(PERSISTENCE_BUGS))
def test_follower_restart_catches_what_a_restart_loses(bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = SCENARIOS["follower-restart"]
    plant, caught_at = PERSISTENCE_BUGS[bug]
    monkeypatch.setattr(ReplicaLog, "append", plant)
    run = run_scenario(ReferenceCluster(), scenario, ReplicationConfig(), frozenset())
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, caught_at), run.failure
    # the near miss: the same writes and leader moves without the crash and restart pass
    kept = tuple(op for op in scenario.ops if not isinstance(op, o.Crash | o.Restart))
    near_miss = run_scenario(ReferenceCluster(), Scenario("no-restart", "", 3, kept), ReplicationConfig(), frozenset())
    assert near_miss.failure is None, near_miss.failure


def test_declare_makes_a_scenario_from_a_documented_function() -> None:
    @declare(Scenario, "two-runs", min_replicas=2)
    def two_runs() -> tuple[o.Operation, ...]:
        """KAFKA-0: one run,
        then another."""
        return (o.Run(1), o.Run(2))

    assert two_runs == Scenario("two-runs", "KAFKA-0: one run, then another.", 2, (o.Run(1), o.Run(2)))

    def undocumented() -> tuple[o.Operation, ...]:
        return ()

    with pytest.raises(ValueError, match="no docstring"):
        declare(Scenario, "undocumented", min_replicas=1)(undocumented)
