"""Planted ground truth for the broker-log checks: runs of the replication reference cluster
(impl/replication) printed as Kafka 3.x prints its ``server.log`` / ``state-change.log`` lines
(impl.replication.serverlog), with a structured oracle that judges the run's truncations on the
brokers' true state (their epoch caches, LEO and HW just before each truncation), not on the text.

The oracle applies Kafka's rules to every truncation of the run:

- ``truncation-agrees-with-epoch-cache``: a truncation on the leader's answer (A, O) goes no further
  than O nor than the follower's own end offset for A, the start of its first cached epoch above A
  (KIP-279, ``AbstractFetcherThread.getOffsetTruncationState``; mutant kip-101-truncation breaks it);
- ``no-truncation-below-hw``: a follower never truncates below its HW unless the run elected a
  leader uncleanly (KIP-101; mutant truncate-to-hw and the pre-KIP-101 protocols can).

The log checks see only what the lines show (a follower's own cache only through the epochs it led),
so they may find less than the oracle but never more: tests/test_logs_groundtruth_replication.py
requires, over fixed seeds, that clean runs raise nothing, that every finding is one the oracle
confirms, and that the mutants whose effect the lines show are found.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kconform.impl.mutants import config_for
from kconform.impl.replication.cluster import ReferenceCluster, SimulatedCluster
from kconform.impl.replication.serverlog import ServerLog, Truncation
from kconform.model.config import ReplicationConfig
from kconform.traces.generate import make_workload
from kconform.traces.operations import Operation

EPOCH_CACHE = "truncation-agrees-with-epoch-cache"
BELOW_HW = "no-truncation-below-hw"
ORACLE_CHECKS = (EPOCH_CACHE, BELOW_HW)
"""The checks whose rule the oracle judges on the structured state."""


class PrintingCluster(ReferenceCluster):
    """The replication reference cluster whose event log prints Kafka's lines (ServerLog)."""

    def start(self, config: ReplicationConfig, mutants: frozenset[str]) -> SimulatedCluster:
        sim = SimulatedCluster(config, mutants)
        sim.rt.events = ServerLog(sim)
        return sim


@dataclass(frozen=True)
class ReplicationRun:
    """One run: its seed and mutants, each printed file's text, and what the oracle found."""

    seed: int
    mutants: tuple[str, ...]
    files: dict[str, str]
    expected: frozenset[str]
    truncations: int


def run(
    seed: int, mutants: Iterable[str] = (), steps: int = 300, config: ReplicationConfig | None = None
) -> ReplicationRun:
    """Drive a fresh replication reference cluster with the slice's random workload for ``steps``
    operations (``seed``), then print its logs and judge its truncations with the oracle."""
    names = tuple(mutants)
    used = _config(names, config)
    workload = make_workload(random.Random(seed), used)
    return _drive(seed, names, used, (workload.next() for _ in range(steps)))


def run_ops(
    ops: Iterable[Operation], mutants: Iterable[str] = (), config: ReplicationConfig | None = None
) -> ReplicationRun:
    """The same for a fixed operation sequence (a scenario of conformance/replication/scenarios.py)."""
    names = tuple(mutants)
    return _drive(0, names, _config(names, config), iter(ops))


def _config(names: tuple[str, ...], config: ReplicationConfig | None) -> ReplicationConfig:
    used = config or ReplicationConfig()
    for name in names:
        used = config_for(name, used)
    return used


def _drive(seed: int, names: tuple[str, ...], used: ReplicationConfig, ops: Iterator[Operation]) -> ReplicationRun:
    cluster = PrintingCluster()
    try:
        cluster.reset(used, seed, frozenset(names))
        for op in ops:
            cluster.apply(op)
        log = cluster.cluster.rt.events
        assert isinstance(log, ServerLog)
        files = log.text()
        expected = oracle(log.truncations, log.unclean)
        count = len(log.truncations)
    finally:
        cluster.close()
    return ReplicationRun(seed, names, files, expected, count)


def own_end_offset(t: Truncation) -> int:
    """The follower's own end offset for the answered epoch before the truncation (KIP-279): the
    start of its first cached epoch above it, else its LEO."""
    return min((start for epoch, start in t.cache_before if epoch > t.answer_epoch), default=t.leo_before)


def oracle(truncations: Iterable[Truncation], unclean: bool) -> frozenset[str]:
    """The anomalies of :data:`ORACLE_CHECKS` the run's truncations hold."""
    found: set[str] = set()
    for t in truncations:
        if t.answer_epoch >= 0 and (t.offset > t.answer_end >= 0 or t.offset > own_end_offset(t)):
            found.add(EPOCH_CACHE)
        if t.offset < t.hw_before and not unclean:
            found.add(BELOW_HW)
    return frozenset(found)


__all__ = ["ORACLE_CHECKS", "PrintingCluster", "ReplicationRun", "oracle", "own_end_offset", "run", "run_ops"]
