"""The ``tasks`` plan (traces.mine.tasks): the invariants' DuckDB SQL run over chunks of whole traces
gives the rows the whole-corpus plans give, a partition that split a trace is refused, and only the
columns the SQL names are read. Spark's own SQL dialect (the ``sorted`` plan) against it (slow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark import SparkContext

from kconform.traces.corpus import Manifest, arrow_schema, write_corpus
from kconform.traces.mine.engine import column, run_duckdb, run_spark, traces_table
from kconform.traces.mine.tasks import VIOLATIONS_SCHEMA, mine_chunk, read_columns, violation_batches
from kconform.traces.mine.txn_tables import txn_tables

from .test_mine import _lead, _trace
from .test_mine import broken as broken  # the hand-made corpus: one trace per invariant, and a clean one
from .test_mine import spark as spark  # the shared Spark session fixture


def test_the_tasks_plan_gives_the_rows_of_the_sorted_and_windows_plans(broken: tuple[Path, Manifest]) -> None:
    root, manifest = broken
    tasks = run_duckdb(root, manifest, manifest.buckets, validated=True, plan="tasks")
    assert tasks.counts, "the broken corpus must hold violations, or this test proves nothing"
    for plan, threads in (("sorted", None), ("windows", None), ("files", 2)):
        other = run_duckdb(root, manifest, manifest.buckets, validated=True, plan=plan, threads=threads)
        assert tasks.violations.to_pylist() == other.violations.to_pylist(), plan


def _events(*traces: int) -> pa.Table:
    """``ev`` rows of the given traces (a clock tick each: no invariant reads it alone)."""
    columns: dict[str, Any] = {column(f.name): pa.nulls(len(traces), f.type) for f in arrow_schema()}
    columns["trace"] = pa.array(traces, pa.int64())
    columns["pos"] = pa.array(range(len(traces)), pa.int64())
    columns["kind"] = pa.array(["clock_advanced"] * len(traces), pa.string())
    return pa.table(columns)


def test_a_partition_that_split_a_trace_is_refused_and_whole_traces_are_mined() -> None:
    tables = {"tr": traces_table(Manifest(traces=())), **txn_tables(Manifest(traces=()))}
    split = _events(1, 1, 2, 1)
    with pytest.raises(ValueError, match="trace 1: its events are not contiguous"):
        list(violation_batches(split.to_batches(max_chunksize=1), tables, ["replication"], chunk_rows=1))
    # near miss: the same rows with each trace contiguous are mined, chunk by chunk, and nothing fires
    whole = _events(1, 1, 1, 2)
    assert list(violation_batches(whole.to_batches(max_chunksize=1), tables, ["replication"], chunk_rows=1)) == []
    assert mine_chunk(whole, tables, ["replication"]).schema == VIOLATIONS_SCHEMA


def test_only_the_columns_the_sql_names_are_read() -> None:
    chosen = read_columns(["trace", "pos", "kind", "txn_id", "session_epoch", "not_a_column"], ["replication"], None)
    assert chosen == ["trace", "pos", "kind"]  # the exactly-once and fetch columns are not read
    assert "txn_id" in read_columns(["trace", "txn_id"], ["txn"], None)


@pytest.mark.slow
def test_spark_sql_of_the_sorted_plan_agrees_with_the_tasks_plan(spark: Any, broken: tuple[Path, Manifest]) -> None:
    """The Spark SQL spelling of every invariant (the ``sorted`` plan) against DuckDB's inside the
    tasks: the same counts on the corpus that fires every invariant."""
    root, manifest = broken
    tasks = run_spark(spark, root, manifest, manifest.buckets, validated=True)
    assert tasks.counts
    assert run_spark(spark, root, manifest, manifest.buckets, validated=True, plan="sorted").counts == tasks.counts


@pytest.mark.slow
def test_spark_tasks_plan_hands_the_rows_to_the_tasks_and_agrees(spark: Any, broken: tuple[Path, Manifest]) -> None:
    """The ``tasks`` plan (Spark reads each corpus file and hands its rows to the task; the default
    ``files`` plan has each task read its file itself): the counts of the chunks run in one process,
    on the corpus that fires every invariant."""
    root, manifest = broken
    expected = run_duckdb(root, manifest, manifest.buckets, validated=True, plan="tasks").counts
    assert expected
    assert run_spark(spark, root, manifest, manifest.buckets, validated=True, plan="tasks").counts == expected


def test_a_task_mines_a_corpus_file_without_importing_pandas(broken: tuple[Path, Manifest]) -> None:
    """What a Spark task runs (read its file, cut it into chunks of whole traces, the node state
    pass and the SQL) imports no pandas: pyarrow's ``to_numpy``/``pa.scalar``/``pq.read_table`` and
    numpy's ``asarray`` of an Arrow array would (0.3-0.5 CPU-s in every Python worker). A fresh
    interpreter, as a worker forked from the daemon (which imports what traces.mine.daemon does)."""
    root, _manifest = broken
    code = f"""
import sys
import duckdb, numpy, pyarrow.parquet
import kconform.traces.mine.tasks
from kconform.traces.corpus import EVENTS_DIR, arrow_schema, bucket_path, read_manifest
from kconform.traces.mine.engine import column, corpus_slices, ev_columns, traces_table
from kconform.traces.mine.state import whole_trace_chunks
from kconform.traces.mine.tasks import CHUNK_ROWS, chunk_sql, read_columns, read_file, run_chunk
from kconform.traces.mine.txn_tables import txn_tables

root = {str(root)!r}
manifest = read_manifest(root)
slices = sorted(corpus_slices(root, manifest.buckets))
tables = {{"tr": traces_table(manifest), **txn_tables(manifest)}}
columns = ev_columns(read_columns([column(f.name) for f in arrow_schema()], slices, None))
sql = chunk_sql(slices, None)
assert "pandas" not in sys.modules, "the driver's preparations imported pandas"
found = 0
for bucket in manifest.buckets:
    events = read_file(str(bucket_path(root, EVENTS_DIR, bucket)), columns, [], dictionaries=True)
    for chunk in whole_trace_chunks(events.to_batches(max_chunksize=7), 16):
        found += run_chunk(chunk, tables, sql).num_rows
print(found, "pandas" in sys.modules)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    found, pandas = run.stdout.split()
    assert int(found) > 0, "the corpus must fire, or the pass and the SQL did not run on it"
    assert pandas == "False"


class _InProcessContext(SparkContext):
    """A stand-in SparkContext (no JVM) whose jobs run their partitions in this process, one after
    another: what the files plan's tasks do, without Spark."""

    def __init__(self) -> None:  # no gateway, no JVM
        pass

    def parallelize(self, c: Any, numSlices: int | None = None) -> Any:
        items = list(c)
        slices = max(1, numSlices or 1)
        return _InProcessJob([items[i::slices] for i in range(slices)])


class _InProcessJob:
    def __init__(self, parts: list[list[Any]]) -> None:
        self.parts = parts
        self.task: Any = None

    def mapPartitions(self, task: Any) -> _InProcessJob:
        self.task = task
        return self

    def collect(self) -> list[Any]:
        return [x for part in self.parts for x in self.task(iter(part))]


class _SessionStarted(Exception):
    pass


def test_the_files_plan_on_a_context_starts_spark_sql_only_for_violations(
    broken: tuple[Path, Manifest], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_spark`` given a context (as ``kconform mine`` does) runs the files plan's tasks on it
    and finds DuckDB's rows; it asks for a session (Spark SQL, for the witness events) only when a
    violation fired: a clean corpus is mined and its empty violations file written without one."""
    from kconform.traces import mine

    def no_session(spark: Any, options: Any = None) -> Any:
        raise _SessionStarted

    monkeypatch.setattr(mine.engine, "_session", no_session)
    root, manifest = broken
    found = mine.engine._files_violations(_InProcessContext(), root, manifest, manifest.buckets, None, [])
    expected = run_duckdb(root, manifest, manifest.buckets, validated=True, threads=2)
    order = [("trace", "ascending"), ("pos", "ascending"), ("invariant", "ascending")]
    assert found.num_rows > 0 and found.sort_by(order).to_pylist() == expected.violations.to_pylist()
    with pytest.raises(_SessionStarted):
        run_spark(_InProcessContext(), root, manifest, manifest.buckets, validated=True)
    clean = tmp_path / "clean"
    clean_manifest = write_corpus(clean, [_trace([_lead(0, 0)])], buckets=1)
    out = tmp_path / "v.parquet"
    result = run_spark(_InProcessContext(), clean, clean_manifest, clean_manifest.buckets, out=out, validated=True)
    assert result.violations.num_rows == 0 and result.events == clean_manifest.events > 0
    assert pq.read_table(out).num_rows == 0
