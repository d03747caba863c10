"""Planted ground truth: the exactly-once reference cluster prints its partition logs as
``kafka-dump-log.sh --deep-iteration`` does (impl.txn.dumplog); over fixed seeds, for the clean
cluster and for every mutant of the slice, ``kconform logs check`` on that text flags exactly the
anomalies the structured oracle finds in the same logs (traces.logs.groundtruth), so every mutant
whose effect the logs show is flagged and clean runs raise nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.impl.mutants import mutants_of
from kconform.impl.txn import mutants as m
from kconform.traces.logs.groundtruth import ORACLE_CHECKS, dump_text, run
from kconform.traces.logs.run import check_paths

SEEDS = range(4)
STEPS = 300
VISIBLE = {
    m.NO_SEQUENCE_DEDUP: "producer-sequences-contiguous",
    m.NO_PRODUCE_EPOCH_FENCING: "producer-epochs-non-decreasing",
    m.STALE_COORDINATOR_EPOCH_MARKER: "txn-marker-coordinator-epochs-non-decreasing",
}
"""The slice's mutants whose effect a partition's dump shows, and the check that judges it."""


def _flagged(tmp_path: Path, seed: int, mutants: tuple[str, ...]) -> tuple[frozenset[str], set[str]]:
    planted = run(seed, mutants, steps=STEPS)
    path = tmp_path / f"{'-'.join(mutants) or 'clean'}-{seed}" / "dump.txt"
    path.parent.mkdir(parents=True)
    path.write_text(dump_text(planted))
    result = check_paths([path])
    assert not result.stats.problems, result.stats.problems[:3]
    return planted.expected, {c.name for c in result.checks if c.fails}


@pytest.mark.parametrize("mutant", [None, *mutants_of("txn")])
def test_log_checks_flag_exactly_what_the_oracle_finds(tmp_path: Path, mutant: str | None) -> None:
    mutants = (mutant,) if mutant else ()
    seen: set[str] = set()
    for seed in SEEDS:
        expected, flagged = _flagged(tmp_path, seed, mutants)
        assert flagged == set(expected), (mutant, seed)
        seen |= flagged
    if mutant is None:
        assert not seen  # clean runs: nothing
    elif mutant in VISIBLE:
        assert seen == {VISIBLE[mutant]}  # the mutant's anomaly reached the dump and was found
    else:
        assert not seen & set(ORACLE_CHECKS)


def test_dump_text_is_kafka_deep_iteration_output(tmp_path: Path) -> None:
    planted = run(1, (), steps=STEPS)
    text = dump_text(planted)
    assert text.startswith("Dumping /var/lib/kafka/data/")
    assert " endTxnMarker: COMMIT coordinatorEpoch: " in text or " endTxnMarker: ABORT coordinatorEpoch: " in text
    path = tmp_path / "d.txt"
    path.write_text(text)
    result = check_paths([path])
    judged = {c.name for c in result.checks if c.judged}
    assert {"producer-sequences-contiguous", "txn-batches-closed-by-marker", "segment-offsets-increasing"} <= judged
