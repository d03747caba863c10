"""Planted ground truth for the log checks: runs of the exactly-once reference cluster (impl/txn)
printed as ``kafka-dump-log.sh --deep-iteration`` output (impl.txn.dumplog), with a structured
oracle that reads the same logs directly (not the text).

The oracle states, per run, which anomalies the brokers' logs hold, each after the rule Kafka
enforces when it appends (so a mutant that disables the rule can write one):

- ``producer-sequences-contiguous``: a producer epoch's batches continue its sequence (a duplicate
  or gap; ``ProducerAppendInfo.checkSequence``, KIP-98; written by mutant no-sequence-dedup);
- ``producer-epochs-non-decreasing``: a producer id writes with an epoch older than one it already
  wrote (``ProducerAppendInfo.checkProducerEpoch``; mutant no-produce-epoch-fencing);
- ``txn-marker-coordinator-epochs-non-decreasing``: a producer's markers carry non-decreasing
  coordinator epochs (``appendEndTxnMarker`` fences older coordinators; mutant
  stale-coordinator-epoch-marker).

A test runs named mutants and clean runs over fixed seeds and requires the log checks on the
printed text to flag exactly what the oracle says (tests/test_logs_groundtruth.py).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from kconform.impl.mutants import config_for
from kconform.impl.txn.cluster import TxnCluster
from kconform.impl.txn.dumplog import dump_lines
from kconform.impl.txn.log import TxnPartitionLog
from kconform.model.records import NO_CONTROL
from kconform.model.txn_config import TxnConfig
from kconform.traces.generate import make_workload

SEQUENCES = "producer-sequences-contiguous"
EPOCHS = "producer-epochs-non-decreasing"
COORDINATOR_EPOCHS = "txn-marker-coordinator-epochs-non-decreasing"
ORACLE_CHECKS = (SEQUENCES, EPOCHS, COORDINATOR_EPOCHS)
"""The checks whose rule the oracle judges on the structured logs."""


@dataclass(frozen=True)
class PlantedRun:
    """One run: its seed and mutants, each partition log's dump text, and what the oracle found."""

    seed: int
    mutants: tuple[str, ...]
    dumps: dict[str, list[str]]
    expected: frozenset[str]


def run(seed: int, mutants: Iterable[str] = (), steps: int = 400, config: TxnConfig | None = None) -> PlantedRun:
    """Drive a fresh exactly-once reference cluster with the slice's random workload for ``steps``
    operations (``seed``), then print every partition log and judge it with the oracle."""
    names = tuple(mutants)
    used = config or TxnConfig()
    for name in names:
        used = config_for(name, used)
    workload = make_workload(random.Random(seed), used)
    cluster = TxnCluster()
    try:
        cluster.reset(used, seed, frozenset(names))
        for _ in range(steps):
            cluster.apply(workload.next())
        logs = {name: log for b in cluster.sim.brokers for name, log in sorted(b.logs.items()) if log.records}
        dumps = {name: dump_lines(log) for name, log in logs.items()}
        expected = frozenset(c for log in logs.values() for c in oracle(log))
    finally:
        cluster.close()
    return PlantedRun(seed, names, dumps, expected)


def oracle(log: TxnPartitionLog) -> set[str]:
    """The anomalies of :data:`ORACLE_CHECKS` that ``log`` holds, judged on its records."""
    found: set[str] = set()
    last_seq: dict[tuple[int, int], int] = {}
    max_epoch: dict[int, int] = {}
    coordinator: dict[int, int] = {}
    for base, count, _at, coordinator_epoch in log.appends:
        first = log.records[base]
        last = log.records[base + count - 1]
        pid, epoch = first.pid, first.epoch
        if pid < 0:
            continue
        if epoch < max_epoch.get(pid, epoch):
            found.add(EPOCHS)
        max_epoch[pid] = max(max_epoch.get(pid, epoch), epoch)
        if first.control != NO_CONTROL:
            if coordinator_epoch < coordinator.get(pid, coordinator_epoch):
                found.add(COORDINATOR_EPOCHS)
            coordinator[pid] = max(coordinator.get(pid, coordinator_epoch), coordinator_epoch)
            continue
        if first.seq >= 0:
            prev = last_seq.get((pid, epoch))
            if prev is not None and first.seq != prev + 1:
                found.add(SEQUENCES)
            last_seq[(pid, epoch)] = last.seq
    return found


def dump_text(planted: PlantedRun) -> str:
    """Every partition's dump, one after the other, as one file's text."""
    return "".join(f"{line}\n" for name in sorted(planted.dumps) for line in planted.dumps[name])


__all__ = ["ORACLE_CHECKS", "PlantedRun", "dump_text", "oracle", "run"]
