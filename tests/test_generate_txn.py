"""Corpus generation of the exactly-once slice: `kconform generate --slice txn`, its workload,
planted txn mutants and the oracle's verdicts on the result."""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS
from kconform.impl.mutants import mutants_of
from kconform.model.txn_config import TxnConfig
from kconform.traces import operations as ops
from kconform.traces.corpus import EVENTS_DIR, Manifest, bucket_path, read_manifest
from kconform.traces.generate import DEFAULT_TRACE_EVENTS, Plan, generate, trace_seed
from kconform.traces.mine.engine import run_duckdb
from kconform.traces.oracle import run_oracle
from kconform.traces.txn.workload import MAX_INSTANCES, PLANTABLE, UNPLANTABLE, TxnWorkload

SMALL = os.environ.get("KCONFORM_BUDGET") == "small"
PLAN = Plan(events=2_400, seed=5, trace_events=800, config=TxnConfig())


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("txn") / "c"
    generate(root, PLAN)
    return root


def test_a_txn_corpus_holds_exactly_once_traces(corpus: Path) -> None:
    manifest = read_manifest(corpus)
    assert manifest.generator["slice"] == "txn" and "txn_workload" in manifest.generator["workload"]
    assert [t.trace for t in manifest.traces] == [0, 1, 2]
    assert all(t.configuration() == TxnConfig() and t.events >= PLAN.trace_events for t in manifest.traces)
    kinds = set(pq.read_table(bucket_path(corpus, EVENTS_DIR, 0), columns=["kind"])["kind"].to_pylist())
    assert {"init_producer_id_handled", "txn_produce_handled", "end_txn_handled", "marker_handled"} <= kinds
    assert {"txn_consumer_fetch_handled", "consumer_polled", "hw_advanced"} <= kinds


def test_same_seed_same_txn_corpus_whatever_the_workers(corpus: Path, tmp_path: Path) -> None:
    generate(tmp_path / "again", PLAN, workers=2)
    assert _files(tmp_path / "again") == _files(corpus)
    generate(tmp_path / "other", Plan(events=2_400, seed=6, trace_events=800, config=TxnConfig()))
    assert _files(tmp_path / "other") != _files(corpus)


def test_the_workload_does_what_the_gate_machine_does() -> None:
    """Over a few seeded traces every operation of the slice occurs, older instances act after a
    newer one fenced them, and each trace's first steps start transactional instance 0."""
    kinds: Counter[str] = Counter()
    zombie_acts = 0
    for trace in range(8):
        workload = TxnWorkload(random.Random(trace_seed(0, trace)), TxnConfig())
        first = workload.next()
        assert first == ops.InitProducer(client=0, txn_id="txn-1")
        newest = 0
        for _ in range(1_500):
            op = workload.next()
            kinds[op.kind] += 1
            if isinstance(op, ops.InitProducer) and op.txn_id:
                newest = op.client
            client = getattr(op, "client", None)
            if isinstance(op, ops.Send | ops.CommitTxn | ops.AbortTxn) and client is not None and client < newest:
                zombie_acts += 1
        assert workload.instances <= MAX_INSTANCES
    producers = (ops.InitProducer, ops.BeginTxn, ops.Send, ops.CommitTxn, ops.AbortTxn, ops.SendOffsets)
    others = (ops.ConsumeTxn, ops.CommitOffsets, ops.FetchOffsets, ops.MoveCoordinator, ops.AdvanceHw, ops.Quiesce)
    world = (ops.Drop, ops.Duplicate, ops.Deliver, ops.DeliverTo, ops.Settle, ops.Advance, ops.Run)
    wanted = {c.kind for c in (*producers, *others, *world)}
    assert wanted <= set(kinds), wanted - set(kinds)
    assert zombie_acts > 0


def test_every_trace_holds_messages_back_whatever_its_families() -> None:
    """The "delays" episodes run in every trace (at BASE_RATE when the family is off): a message
    at the head of the queue stays there while at least two others overtake it (Deliver(1)), then
    arrives (Deliver(0)); and each trace moves the coordinator and quiesces."""
    for trace in range(8):
        workload = TxnWorkload(random.Random(trace_seed(3, trace)), TxnConfig())
        steps = [workload.next() for _ in range(1_500)]
        held = overtaken = 0
        for op in steps:
            if op == ops.Deliver(1):
                overtaken += 1
            else:
                held += op == ops.Deliver(0) and overtaken >= 2
                overtaken = 0
        assert held >= 3, (trace, sorted(workload.families))
        assert any(isinstance(op, ops.MoveCoordinator) for op in steps)
        assert any(isinstance(op, ops.Quiesce) for op in steps)


def test_planted_txn_traces_run_with_the_config_their_mutant_needs(tmp_path: Path) -> None:
    plan = Plan(events=1_500, seed=3, trace_events=500, config=TxnConfig(), plant=(("late-endtxn-next-txn", 1),))
    manifest = generate(tmp_path / "c", plan).manifest
    versions: dict[int, tuple[tuple[str, ...], int]] = {}
    for t in manifest.traces:
        cfg = t.configuration()
        assert isinstance(cfg, TxnConfig)
        versions[t.trace] = (t.mutants, cfg.transaction_version)
    planted = next(t for t, (mutants, _) in versions.items() if mutants)
    assert versions[planted] == (("late-endtxn-next-txn",), 2)
    assert all(v == ((), 0) for t, v in versions.items() if t != planted)


def test_a_mutant_of_another_slice_cannot_be_planted() -> None:
    with pytest.raises(ValueError, match="of the txn slice"):
        Plan(events=10, config=TxnConfig(), plant=(("acks-all-no-wait", 1),)).planted()
    with pytest.raises(ValueError, match="of the replication slice"):
        Plan(events=10, plant=(("no-verification", 1),)).planted()


def test_every_txn_mutant_is_plantable_or_says_why_not() -> None:
    assert set(PLANTABLE) | set(UNPLANTABLE) == set(mutants_of("txn"))
    assert not set(PLANTABLE) & set(UNPLANTABLE)
    assert all(len(why) > 40 for why in UNPLANTABLE.values())


def test_generate_cli_writes_a_txn_corpus(tmp_path: Path) -> None:
    argv = ["generate", str(tmp_path / "c"), "--events", "600", "--trace-events", "300", "--no-progress"]
    assert cli.main([*argv, "--slice", "txn", "--transaction-version", "2"]) == EXIT_PASS
    manifest = read_manifest(tmp_path / "c")
    assert {t.configuration() for t in manifest.traces} == {TxnConfig(transaction_version=2)}
    assert cli.main([*argv, "--transaction-version", "2"]) == EXIT_ERROR
    assert cli.main([*argv, "--slice", "txn", "--plant", "acks-all-no-wait"]) == EXIT_ERROR
    assert read_manifest(tmp_path / "c") == manifest, "a refused command leaves the corpus alone"


@pytest.mark.parametrize("version", [0, 2])
def test_clean_txn_corpora_conform(tmp_path: Path, version: int) -> None:
    plan = Plan(events=3_000, seed=version, trace_events=1_000, config=TxnConfig(transaction_version=version))
    manifest = generate(tmp_path / "c", plan).manifest
    result = run_oracle(tmp_path / "c", manifest)
    assert sorted(result.verdicts) == [0, 1, 2] and not result.flagged
    assert result.events == manifest.events
    assert run_duckdb(tmp_path / "c", manifest, manifest.buckets).counts == [], "the miner agrees"


def _flagged_exactly_the_planted(root: Path, plan: Plan) -> Manifest:
    """Generate ``plan``; the oracle flags exactly its planted traces, and the miner's SQL (on
    DuckDB) flags the same traces, each at the oracle's first failing event."""
    manifest = generate(root, plan, workers=2).manifest
    result = run_oracle(root, manifest)
    planted = manifest.planted()
    assert len(result.verdicts) == len(manifest.traces) and not result.read.errors
    assert result.flagged == set(planted), {
        t: (planted.get(t), result.verdicts[t].name) for t in result.flagged ^ set(planted)
    }
    assert 0 < len(planted) < len(manifest.traces)
    first: dict[int, int] = {}
    for _invariant, trace, _n, pos in run_duckdb(root, manifest, manifest.buckets).counts:
        first[trace] = min(pos, first.get(trace, pos))
    assert first == {t: result.verdicts[t].position for t in result.flagged}, "the miner agrees"
    return manifest


def test_a_planted_txn_corpus_is_flagged_in_exactly_the_planted_traces(tmp_path: Path) -> None:
    """Each plantable mutant in one trace of 2,000 events (see the slow test for the default size),
    one clean trace."""
    plant = tuple((name, 1) for name in PLANTABLE)
    plan = Plan(events=(len(plant) + 1) * 2_000, seed=4, trace_events=2_000, config=TxnConfig(), plant=plant)
    _flagged_exactly_the_planted(tmp_path / "c", plan)


@pytest.mark.slow
@pytest.mark.parametrize("version", [0, 2])
def test_planted_txn_corpora_of_default_size_are_flagged_in_exactly_the_planted_traces(
    tmp_path: Path, version: int
) -> None:
    """Traces of the default size, each plantable mutant in two (one with KCONFORM_BUDGET=small) and
    as many clean: 100,000 events (50,000 when small)."""
    copies = 1 if SMALL else 2
    plant = tuple((name, copies) for name in PLANTABLE)
    events = (len(PLANTABLE) + 1) * copies * DEFAULT_TRACE_EVENTS
    plan = Plan(events=events, seed=30 + version, config=TxnConfig(transaction_version=version), plant=plant)
    _flagged_exactly_the_planted(tmp_path / "c", plan)
