"""The miner: every invariant fires on a trace built to break it (Spark and DuckDB alike), the
miner agrees with the lockstep oracle trace by trace on planted corpora, clean corpora give
nothing, and the command line writes reports and replayable excerpts.

The fast tier mines with DuckDB (the same SQL text, kconform.traces.mine.invariants) and starts no
JVM; the slow tier runs Spark on one shared session: the broken traces against DuckDB, files that
lack columns, the planted corpus, a local-cluster master, and a corpus of a million events (fewer
with KCONFORM_BUDGET=small).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.model.config import ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.model.errors import NOT_LEADER_OR_FOLLOWER
from kconform.model.fetch_config import FetchConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.corpus import EVENTS_DIR, Manifest, bucket_path, write_corpus
from kconform.traces.counterexample import Counterexample, Step, make_verdict, read_counterexample
from kconform.traces.events import (
    CONTROLLER,
    BrokerRestarted,
    ConsumerFetchHandled,
    Entry,
    Event,
    FetchHandled,
    LeaderMoved,
    MetadataApplied,
    ProduceCompleted,
    ProduceHandled,
    Record,
    TxnConsumerFetchHandled,
)
from kconform.traces.generate import Plan, generate
from kconform.traces.mine.engine import (
    VIOLATION_COLUMNS,
    EngineResult,
    _shuffle_partitions_for,
    run_duckdb,
    run_spark,
    spark_session,
    trace_partitions,
)
from kconform.traces.mine.invariants import INVARIANTS
from kconform.traces.operations import Boot
from kconform.traces.oracle import OracleResult, run_oracle

from .minecases_fetch import FETCH_BROKEN as FETCH_CASES
from .minecases_txn import TXN_BROKEN

SMALL = os.environ.get("KCONFORM_BUDGET") == "small"
PLANTABLE = ("acks-all-no-wait", "no-epoch-fencing", "hw-below-min-isr")
PLANTED_PLAN = Plan(events=24_000, seed=3, trace_events=2_000, plant=tuple((m, 3) for m in PLANTABLE))


def _lead(node: int, epoch: int, isr: tuple[int, ...] = (0, 1)) -> MetadataApplied:
    return MetadataApplied(node, node, epoch, isr, epoch + 1, "become_leader", -1, 0)


def _produce(node: int, req: int, acks: int, offset: int, epoch: int, hw: int) -> ProduceHandled:
    return ProduceHandled(node, req, req, acks, 0, offset, epoch, hw)


BROKEN: dict[str, list[Event]] = {
    "HwBelowLeo": [BrokerRestarted(0, 1, 3)],
    "LeaderHwMonotonic": [_lead(0, 1), _produce(0, 1, 1, 0, 1, 1), _produce(0, 2, 1, 1, 1, 0)],
    "LeaderEpochsMonotonic": [LeaderMoved(CONTROLLER, 1, 2, (0, 1), 2), LeaderMoved(CONTROLLER, 0, 1, (0, 1), 3)],
    "ConsumerReadsBelowHw": [ConsumerFetchHandled(0, 0, -1, 0, (Entry(0, 0, 1),), 0)],
    "NoCommittedDataLoss": [
        _lead(0, 0),
        _produce(0, 1, -1, 0, 0, 0),
        FetchHandled(0, 5, 1, 0, (), 0, -1, -1, 1, 1),
        ProduceCompleted(0, 1, 0),
        _lead(1, 1),
        _produce(1, 2, 1, 0, 1, 0),
    ],
    "NoDivergenceBelowHw": [_lead(0, 0), _produce(0, 1, 1, 0, 0, 1), _lead(1, 1), _produce(1, 2, 1, 0, 1, 1)],
    "AcksAllCommitted": [_lead(0, 0), _produce(0, 1, -1, 0, 0, 0), ProduceCompleted(0, 1, 0)],
    "EpochFencing": [_lead(0, 2), ConsumerFetchHandled(0, 0, 1, 0, (), 0)],
    "HwFrozenBelowMinIsr": [_lead(0, 0, isr=(0,)), _produce(0, 1, 1, 0, 0, 1)],
    "LsoBounds": [TxnConsumerFetchHandled(0, 1, "t-0", 0, True, 0, (), 3, 5, ())],
    "ReadCommittedBelowLso": [
        TxnConsumerFetchHandled(
            0, 1, "t-0", 0, True, 0, (Record(0, 7, 0, 0, 1, 1, -1), Record(1, 7, 0, 1, 2, 1, -1)), 5, 1, ()
        )
    ],
    **TXN_BROKEN,
    **FETCH_CASES,
}
"""One trace per invariant that breaks it and no other (trace id = position in this dict); the
exactly-once ones (tests/minecases_txn.py) run under the default TxnConfig, the fetch-session ones
(tests/minecases_fetch.py) under the default FetchConfig."""
FETCH_BROKEN = frozenset(FETCH_CASES)


def _trace(events: list[Event], config: AnyConfig | None = None) -> Counterexample:
    verdict = make_verdict("pass", "", "hand-made", -1)
    cfg = config or ReplicationConfig()
    return Counterexample(cfg, 0, (), "reference", verdict, (Step(Boot(), tuple(events)),))


def _broken_trace(name: str) -> Counterexample:
    if name in FETCH_BROKEN:
        return _trace(BROKEN[name], FetchConfig())
    return _trace(BROKEN[name], TxnConfig() if name in TXN_BROKEN else None)


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest]:
    root = tmp_path_factory.mktemp("broken") / "c"
    clean = [
        _lead(0, 0),
        _produce(0, 1, -1, 0, 0, 0),
        FetchHandled(0, 5, 1, 0, (), 0, -1, -1, 1, 1),
        ProduceCompleted(0, 1, 0),
    ]
    manifest = write_corpus(root, [*(_broken_trace(name) for name in BROKEN), _trace(clean)], buckets=2)
    return root, manifest


def _fired(result: EngineResult) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for invariant, trace, _n, _first in result.counts:
        out.setdefault(trace, set()).add(invariant)
    return out


def test_every_registered_invariant_has_a_trace_that_breaks_it() -> None:
    assert list(BROKEN) == list(INVARIANTS)


def test_each_broken_trace_fires_exactly_its_invariant_on_duckdb(broken: tuple[Path, Manifest]) -> None:
    root, manifest = broken
    fired = _fired(run_duckdb(root, manifest, manifest.buckets))
    assert fired == {trace: {name} for trace, name in enumerate(BROKEN)}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    session = spark_session("local[2]")
    yield session
    session.stop()


@pytest.mark.slow
def test_spark_and_duckdb_report_the_same_violations(spark: Any, broken: tuple[Path, Manifest], tmp_path: Path) -> None:
    root, manifest = broken
    on_spark = run_spark(spark, root, manifest, manifest.buckets, out=tmp_path / "v.parquet")
    on_duckdb = run_duckdb(root, manifest, manifest.buckets)
    assert on_spark.counts == on_duckdb.counts
    assert _fired(on_spark) == {trace: {name} for trace, name in enumerate(BROKEN)}
    rows = on_spark.violations.to_pylist()
    loss = next(r for r in rows if r["invariant"] == "NoCommittedDataLoss" and r["wpos"] is not None)
    witnessed = [json.loads(w) for w in loss["witness_events"]]
    assert [w["pos"] for w in witnessed] == sorted({loss["pos"], loss["wpos"]})
    assert witnessed[0]["kind"] == "produce_completed"


# --------------------------------------------------------------------------------------------
# Miner and oracle
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest, OracleResult, EngineResult]:
    root = tmp_path_factory.mktemp("planted") / "c"
    manifest = generate(root, PLANTED_PLAN).manifest
    return root, manifest, run_oracle(root, manifest), run_duckdb(root, manifest, manifest.buckets)


def first_positions(result: EngineResult) -> dict[int, int]:
    out: dict[int, int] = {}
    for _invariant, trace, _n, first in result.counts:
        out[trace] = min(first, out.get(trace, first))
    return out


def test_miner_and_oracle_flag_the_same_traces_at_the_same_event(
    planted: tuple[Path, Manifest, OracleResult, EngineResult],
) -> None:
    _root, manifest, oracle, mined = planted
    assert len(oracle.verdicts) == len(manifest.traces)
    assert set(first_positions(mined)) == oracle.flagged
    assert first_positions(mined) == {t: oracle.verdicts[t].position for t in oracle.flagged}


def test_planted_mutants_are_found_with_their_trace_ids(
    planted: tuple[Path, Manifest, OracleResult, EngineResult],
) -> None:
    _root, manifest, oracle, mined = planted
    planted_ids = manifest.planted()
    misbehaving = {t for t in planted_ids if oracle.verdicts[t].flagged}
    found = set(first_positions(mined))
    assert found == misbehaving, "precision and recall against the oracle must both be 100 %"
    assert {planted_ids[t][0] for t in misbehaving} == set(PLANTABLE), "every plantable mutant misbehaves somewhere"
    clean = {t.trace for t in manifest.traces} - set(planted_ids)
    assert clean and not (clean & (found | oracle.flagged))


def test_clean_corpora_give_no_violation(tmp_path: Path) -> None:
    manifest = generate(tmp_path / "c", Plan(events=8_000, seed=11, trace_events=2_000)).manifest
    assert not run_duckdb(tmp_path / "c", manifest, manifest.buckets).counts
    assert not run_oracle(tmp_path / "c", manifest).flagged


def _duplicated_acks_all_request(second_answer: int, leader_hw: int) -> list[Event]:
    """One acks=all request delivered twice to leader 0 (copies at offsets 0 and 1), its two answers
    in order, then leader 1 of epoch 1 writing another record at offset 1."""
    return [
        _lead(0, 0),
        ProduceHandled(0, 1, 1, -1, 0, 0, 0, 0),
        ProduceHandled(0, 1, 1, -1, 0, 1, 0, 0),
        FetchHandled(0, 5, 1, 0, (), 0, -1, -1, 2, leader_hw),
        ProduceCompleted(0, 1, 0),
        ProduceCompleted(0, 1, second_answer),
        _lead(1, 1),
        _produce(1, 2, 1, 1, 1, 0),
    ]


def test_each_answer_of_a_duplicated_request_acknowledges_its_own_copy(tmp_path: Path) -> None:
    """Found by a generated 100M-event corpus (2026-11-27, trace 10847): the first copy's answer is
    NONE (the HW passed offset 0 only), the second copy's NOT_LEADER_OR_FOLLOWER; losing offset 1 is
    then no committed-data loss, as the lockstep model says (model.replication.complete_produce
    pairs each completion with the first delayed produce of that request still parked:
    DelayedProduce per request in ReplicaManager's purgatory). The near miss: both answers NONE with
    the HW past both copies, and the same overwrite is a loss."""
    traces = [
        _trace(_duplicated_acks_all_request(NOT_LEADER_OR_FOLLOWER, 1)),
        _trace(_duplicated_acks_all_request(0, 2)),
    ]
    manifest = write_corpus(tmp_path / "c", traces, buckets=1)
    assert _fired(run_duckdb(tmp_path / "c", manifest, manifest.buckets)) == {1: {"NoCommittedDataLoss"}}


def test_divergence_compares_each_brokers_latest_write_at_its_crossing(tmp_path: Path) -> None:
    """NoDivergenceBelowHw takes, for a broker whose HW passes an offset, the record it wrote last
    at that offset up to that event (the write in the same event included), not an earlier one it
    overwrote nor a later one: broker 0 commits (epoch 0, request 1) at offset 0 in every trace.
    Trace 0: broker 1 wrote another record first, then the same one, and its HW passes: agreement.
    Trace 1: the same writes in the other order: divergence. Trace 2: broker 1's HW passes with the
    same record, and it overwrites it afterwards (no new crossing): agreement. On every plan."""
    committed = [_lead(0, 0), _produce(0, 1, 1, 0, 0, 1), _lead(1, 1)]
    traces = [
        _trace([*committed, _produce(1, 2, 1, 0, 1, 0), _produce(1, 1, 1, 0, 0, 1)]),
        _trace([*committed, _produce(1, 1, 1, 0, 0, 0), _produce(1, 2, 1, 0, 1, 1)]),
        _trace([*committed, _produce(1, 1, 1, 0, 0, 1), _produce(1, 2, 1, 0, 1, 1)]),
    ]
    manifest = write_corpus(tmp_path / "c", traces, buckets=1)
    for plan in ("files", "sorted", "windows"):
        fired = _fired(run_duckdb(tmp_path / "c", manifest, manifest.buckets, plan=plan))
        assert fired == {1: {"NoDivergenceBelowHw"}}, plan


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def test_mine_cli_writes_report_and_excerpts_that_replay(
    planted: tuple[Path, Manifest, OracleResult, EngineResult], tmp_path: Path
) -> None:
    root, _manifest, oracle, _mined = planted
    out = tmp_path / "out"
    assert cli.main(["mine", str(root), "--engine", "duckdb", "--out", str(out), "--excerpts", "2"]) == EXIT_VIOLATION
    report = json.loads((out / "report.json").read_text())
    assert {f["trace"] for f in report["flagged_traces"]} == oracle.flagged
    assert report["exit_code"] == EXIT_VIOLATION and not report["errors"]
    excerpts = sorted(out.glob("excerpt-trace-*.jsonl"))
    assert len(excerpts) == 2
    for path in excerpts:
        cx = read_counterexample(path)
        trace = cx.verdict["mined"]["trace"]
        assert (
            cx.verdict["kind"] == oracle.verdicts[trace].verdict and cx.verdict["name"] == oracle.verdicts[trace].name
        )
        assert cli.main(["replay", str(path), "--model-only"]) == EXIT_VIOLATION


def test_mine_cli_exit_codes_for_clean_and_unreadable_corpora(
    broken: tuple[Path, Manifest], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "clean"
    write_corpus(root, [_trace([_lead(0, 0)])], buckets=1)
    assert cli.main(["mine", str(root), "--engine", "duckdb", "--out", str(tmp_path / "o1")]) == EXIT_PASS
    path = bucket_path(root, EVENTS_DIR, 0)
    path.write_bytes(path.read_bytes()[:100])
    assert cli.main(["mine", str(root), "--engine", "duckdb", "--out", str(tmp_path / "o2")]) == EXIT_ERROR
    assert f"{path}: 100 bytes, the manifest says" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists(), "refused before mining: nothing is written"
    (root / "manifest.json").write_text("{")
    assert cli.main(["mine", str(root), "--engine", "duckdb", "--out", str(tmp_path / "o3")]) == EXIT_ERROR
    assert "manifest.json:1: not valid JSON" in capsys.readouterr().err


def test_mine_cli_refuses_a_partly_unreadable_corpus_before_mining(
    broken: tuple[Path, Manifest], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Even when the readable part holds violations: a damaged corpus is exit 2, in seconds, naming
    the file, and nothing is mined (issue 20: exit codes mean one thing)."""
    root = tmp_path / "c"
    write_corpus(root, [_broken_trace(name) for name in BROKEN], buckets=2)
    path = bucket_path(root, EVENTS_DIR, 1)
    path.write_bytes(b"PAR1 garbage")
    assert cli.main(["mine", str(root), "--engine", "duckdb", "--out", str(tmp_path / "o")]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"kconform: error: {path}: " in err and "nothing was mined" in err


# --------------------------------------------------------------------------------------------
# Slow tier: Spark at scale and on a cluster master
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_spark_miner_agrees_with_the_oracle_on_the_planted_corpus(
    spark: Any, planted: tuple[Path, Manifest, OracleResult, EngineResult]
) -> None:
    root, manifest, oracle, mined = planted
    result = run_spark(spark, root, manifest, manifest.buckets)
    assert result.counts == mined.counts
    assert set(first_positions(result)) == oracle.flagged


@pytest.mark.slow
def test_spark_local_cluster_mode_mines_through_executors(
    planted: tuple[Path, Manifest, OracleResult, EngineResult], tmp_path: Path
) -> None:
    """The command line on a multi-executor master flags exactly the traces the oracle flags. The
    corpus is a generated planted one: the hand-made broken traces hold values no real trace can
    write (an HW above every record a one-event trace could append), which the input boundary
    refuses before mining (issue 20)."""
    root, _manifest, oracle, _mined = planted
    # ``use``: an existing class data sharing archive serves, but the test never waits for a dump
    # (`kconform mine` would make one on a fresh machine: 1-2 minutes once, not what this tests).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "KCONFORM_SPARK_CDS": "use"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "kconform.ci.cli",
            "mine",
            str(root),
            "--master",
            "local-cluster[2,1,2048]",
            "--conf",
            "spark.sql.shuffle.partitions=4",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert oracle.flagged, "the planted corpus must hold violations, or this test proves nothing"
    assert run.returncode == EXIT_VIOLATION, run.stdout + run.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert {f["trace"] for f in report["flagged_traces"]} == oracle.flagged
    assert report["engine"] == "spark local-cluster[2,1,2048]"


@pytest.mark.slow
def test_a_million_event_corpus_is_generated_and_mined(spark: Any, tmp_path: Path) -> None:
    events = 100_000 if SMALL else 1_000_000
    plan = Plan(events=events, seed=21, trace_events=5_000, plant=(("acks-all-no-wait", 2),))
    manifest = generate(tmp_path / "c", plan, workers=2).manifest
    assert manifest.events >= events
    result = run_spark(spark, tmp_path / "c", manifest, manifest.buckets)
    assert result.events == manifest.events
    flagged = {trace for _i, trace, _n, _f in result.counts}
    assert flagged == set(manifest.planted()), "acks-all-no-wait misbehaves in every trace it is planted in"


def test_missing_columns_of_absent_kinds_read_as_null(broken: tuple[Path, Manifest], tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    root, manifest = broken
    copy = tmp_path / "c"
    shutil.copytree(root, copy)
    path = bucket_path(copy, EVENTS_DIR, 0)
    pq.write_table(pq.read_table(path).drop_columns(["requested_epoch", "end_offset", "unclean"]), path)
    assert run_duckdb(copy, manifest, manifest.buckets).counts == run_duckdb(root, manifest, manifest.buckets).counts


def test_trace_partitions_hold_about_a_million_events_and_a_multiple_of_the_cores() -> None:
    assert trace_partitions(1_000, 2) == 2
    assert trace_partitions(1_000_000, 2) == 2
    assert trace_partitions(2_500_000, 2) == 4
    assert trace_partitions(10_000_000, 2) == 10
    assert trace_partitions(100_000_000, 4) == 100


@pytest.mark.slow
def test_spark_reads_files_that_lack_columns_and_writes_no_violation_for_a_clean_corpus(
    spark: Any, broken: tuple[Path, Manifest], tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    root, manifest = broken
    copy = tmp_path / "c"
    shutil.copytree(root, copy)
    path = bucket_path(copy, EVENTS_DIR, 0)
    pq.write_table(pq.read_table(path).drop_columns(["requested_epoch", "end_offset", "unclean"]), path)
    assert (
        run_spark(spark, copy, manifest, manifest.buckets).counts == run_duckdb(root, manifest, manifest.buckets).counts
    )
    clean = tmp_path / "clean"
    clean_manifest = write_corpus(clean, [_trace([_lead(0, 0)])], buckets=1)
    result = run_spark(spark, clean, clean_manifest, clean_manifest.buckets, out=tmp_path / "v.parquet")
    assert not result.counts and result.violations.num_rows == 0
    assert pq.read_table(tmp_path / "v.parquet").column_names == [*VIOLATION_COLUMNS, "witness_events"]


def test_mine_cli_refuses_a_spark_setting_without_a_value(
    broken: tuple[Path, Manifest], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _manifest = broken
    assert cli.main(["mine", str(root), "--conf", "spark.driver.memory"]) == EXIT_ERROR
    assert "--conf 'spark.driver.memory': expected KEY=VALUE" in capsys.readouterr().err


class _FakeConf:
    def __init__(self, value: str | None) -> None:
        self.values: dict[str, str] = {} if value is None else {"spark.sql.shuffle.partitions": value}

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class _FakeSpark:
    def __init__(self, value: str | None) -> None:
        self.conf = _FakeConf(value)
        self.sparkContext = type("Ctx", (), {"defaultParallelism": 2})()


@pytest.mark.parametrize(
    ("before", "events", "during"),
    [
        ("64", 1_000, "2"),  # SPARK_DEFAULTS' bound: sized to the corpus, at least one per core
        ("64", 5_000_000, "6"),  # about EVENTS_PER_PARTITION each, a multiple of the cores
        ("7", 1_000, "7"),  # near miss: a value the user chose is kept
    ],
)
def test_spark_shuffle_partitions_are_sized_to_the_corpus_and_restored(before: str, events: int, during: str) -> None:
    spark = _FakeSpark(before)
    with _shuffle_partitions_for(spark, events):  # type: ignore[arg-type]
        assert spark.conf.get("spark.sql.shuffle.partitions") == during
    assert spark.conf.get("spark.sql.shuffle.partitions") == before
