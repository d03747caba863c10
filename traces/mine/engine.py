"""Running the miner's SQL: on Spark (the miner, any master) and on DuckDB (the benchmark's baseline).

Both engines build the same views (kconform.traces.mine.invariants) over the readable buckets of
a corpus and run the same union of invariant queries. Spark's default plan (``PLANS``: ``files``)
runs one task per corpus file (whole traces, sorted by trace and position), which reads the file
itself and runs the DuckDB spelling of the views and invariants over chunks of whole traces
(kconform.traces.mine.tasks, an RDD of file indices). In the ``sorted`` plan (DuckDB's default
before the files plan)
neither engine shuffles the events either: the replication slice's node state ``st`` comes from one
vectorised pass per file (kconform.traces.mine.state; on Spark through ``mapInArrow``), and the
invariants, in each engine's SQL, are projections and small joins over ``st`` and the corpus'
columns. The reference plan ``windows`` repartitions the events by trace once and builds ``st``
with window views. Only violations (and per-invariant, per-trace counts) come back to the driver.
Witness events are looked up in the buckets of flagged traces only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from kconform.model.config import ReplicationConfig
from kconform.traces.arrow_build import bools, int64s
from kconform.traces.corpus import EVENTS_DIR, Manifest, arrow_schema, bucket_path, present_columns
from kconform.traces.events import EVENT_TYPES
from kconform.traces.mine.invariants import INVARIANTS, RESERVED_COLUMNS, view_sql, violations_sql
from kconform.traces.mine.txn_tables import spark_values, txn_tables
from kconform.traces.schema import event_fields

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession

VIOLATION_COLUMNS = ("invariant", "trace", "pos", "wpos", "detail")


def traces_table(manifest: Manifest) -> pa.Table:
    """The ``tr`` view: per replication-slice trace its effective min ISR and whether its
    configuration permits no loss."""
    rows: dict[str, list[Any]] = {"trace": [], "min_isr": [], "strict": []}
    for t in manifest.traces:
        cfg = t.configuration()
        if not isinstance(cfg, ReplicationConfig):
            continue
        rows["trace"].append(t.trace)
        rows["min_isr"].append(cfg.effective_min_isr)
        rows["strict"].append(not cfg.unclean_leader_election and cfg.flush_interval_ms == 0)
    # From buffers, not pa.array: that would import pandas (0.3-0.5 CPU-s per process).
    return pa.Table.from_arrays(
        [int64s(rows["trace"]), int64s(rows["min_isr"]), bools(rows["strict"])], names=["trace", "min_isr", "strict"]
    )


def column(name: str) -> str:
    """The name of event field ``name`` in the ``ev`` view (SQL keywords get a trailing ``_``)."""
    return f"{name}_" if name in RESERVED_COLUMNS else name


_SQL_TYPES: dict[str, dict[str, str]] = {
    "spark": {
        "int64": "BIGINT",
        "bool": "BOOLEAN",
        "string": "STRING",
        "list<element: int64>": "ARRAY<BIGINT>",
        "entries": "ARRAY<STRUCT<offset: BIGINT, epoch: BIGINT, rid: BIGINT>>",
    },
    "duckdb": {
        "int64": "BIGINT",
        "bool": "BOOLEAN",
        "string": "VARCHAR",
        "list<element: int64>": "BIGINT[]",
        "entries": 'STRUCT("offset" BIGINT, epoch BIGINT, rid BIGINT)[]',
    },
}


def ev_select(dialect: str, present: set[str] | None = None) -> str:
    """The select list that exposes a corpus' columns as the ``ev`` view: keywords renamed, and a
    typed NULL for every event-field column the files lack (``present``: the columns they have)."""
    quote = "`" if dialect == "spark" else '"'
    out = []
    for f in arrow_schema():
        if present is not None and f.name not in present:
            typ = "entries" if pa.types.is_list(f.type) and pa.types.is_struct(f.type.value_type) else str(f.type)
            out.append(f"CAST(NULL AS {_SQL_TYPES[dialect][typ]}) AS {column(f.name)}")
        else:
            out.append(f"{quote}{f.name}{quote} AS {column(f.name)}")
    return ", ".join(out)


def bad_rows_sql() -> str:
    """A query over ``ev`` for rows that are no valid event: an unknown kind, or a null field the
    kind requires. Generated from the event classes."""
    arms = []
    for kind, cls in sorted(EVENT_TYPES.items()):
        nulls = " OR ".join(f"{column(name)} IS NULL" for name, _ in event_fields(cls) if name != "node")
        arms.append(f"WHEN '{kind}' THEN {nulls or 'FALSE'}")
    return f"""
        SELECT trace, pos, kind FROM ev
        WHERE CASE kind {" ".join(arms)} ELSE TRUE END"""


@dataclass
class EngineResult:
    """What one engine run produced: the violations (Arrow, at most ``limit`` rows are kept in full),
    counts per (invariant, trace), rows that were not valid events, and the seconds spent."""

    violations: pa.Table
    counts: list[tuple[str, int, int, int]] = field(default_factory=list)
    """(invariant, trace, violations, first position) for every flagged (invariant, trace)."""
    bad_rows: list[tuple[int, int, str]] = field(default_factory=list)
    events: int = 0
    seconds: float = 0.0


# --------------------------------------------------------------------------------------------
# Spark
# --------------------------------------------------------------------------------------------


JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""Java options of the driver and executor JVMs (SPARK_DEFAULTS)."""

SPARK_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # Upper bound for the shuffles after the one by trace; AQE coalesces them to what the data needs.
    "spark.sql.shuffle.partitions": "64",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    # Every join is keyed by trace first and the events are already partitioned by trace: do not
    # shuffle them again to co-partition on the full join key.
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "2g",
    # The JVMs do little but schedule tasks and collect violations (the files plan): compile with C1
    # only (C2's background compilation of Spark's code is CPU the miner never earns back) and
    # collect garbage on the allocating thread instead of a pool of GC threads.
    "spark.driver.extraJavaOptions": JVM_OPTIONS,
    "spark.executor.extraJavaOptions": JVM_OPTIONS,
    # Python workers forked from a daemon that imported the tasks' modules once (pyarrow, numpy,
    # DuckDB, traces.mine.tasks): a worker no longer imports them itself (about 1 CPU-s each).
    "spark.python.daemon.module": "kconform.traces.mine.daemon",
}
"""The session settings ``spark_session`` starts from (``conf`` overrides any of them)."""

EVENTS_PER_PARTITION = 1_000_000
"""Events per partition of the trace-partitioned events (the unit of every window and join task)."""


def trace_partitions(events: int, parallelism: int) -> int:
    """Partitions for ``events`` events on ``parallelism`` cores: about EVENTS_PER_PARTITION events
    each, a multiple of the cores, at least one per core."""
    per_core = max(1, -(-events // (EVENTS_PER_PARTITION * max(1, parallelism))))
    return per_core * max(1, parallelism)


def spark_context(
    master: str = "local[*]", conf: dict[str, str] | None = None, class_archive: str = "use"
) -> SparkContext:
    """A SparkContext for mining (SPARK_DEFAULTS, on a local master bound to loopback only, ``conf``
    on top; reuses a running one): all the
    files plan needs after the corpus check (``run_spark`` takes it in place of a session and starts
    a SparkSession on it only if it needs Spark SQL: another plan, the SQL row check, or witness
    events of violations). Starting no SparkSession spares the driver JVM its SQL machinery (the
    session and its configuration: 0.9 CPU-s of a cold JVM, 2026-11-27). Unless ``conf`` sets the
    driver's Java options, a new driver JVM maps the class data sharing archive of this Java and
    Spark installation from the user's cache (about half the JVM's start-up CPU), and with
    ``class_archive="auto"`` makes it when this process exits if it is missing
    (traces.mine.jvm_archive.MODES; ``KCONFORM_SPARK_CDS`` overrides)."""
    os.environ.setdefault("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON", _python()))
    from pyspark import SparkConf, SparkContext

    from kconform.traces.mine import jvm_archive
    from kconform.traces.mine.converters import light_numpy_converters
    from kconform.traces.mine.loopback import loopback_conf, pin_loopback

    light_numpy_converters()  # Py4J's argument checks would import pandas (traces.mine.converters)
    pin_loopback(master)  # a local master's JVMs listen on 127.0.0.1 only (traces.mine.loopback)
    settings = {**SPARK_DEFAULTS, **loopback_conf(master), **(conf or {})}
    key = "spark.driver.extraJavaOptions"
    if conf is None or key not in conf:  # the default options: with the class archive
        settings[key] = jvm_archive.driver_options(settings[key], class_archive)
    spark_conf = SparkConf().setMaster(master).setAppName("kconform-mine")
    for name, value in settings.items():
        spark_conf.set(name, value)
    running = SparkContext._active_spark_context is not None
    sc = SparkContext.getOrCreate(spark_conf)
    if not running:
        jvm_archive.started(sc._gateway)
        sc.setLogLevel("ERROR")
    return sc


def spark_session(
    master: str = "local[*]", conf: dict[str, str] | None = None, class_archive: str = "use"
) -> SparkSession:
    """A SparkSession for mining on ``spark_context(master, conf, class_archive)`` (SPARK_DEFAULTS:
    no UI, adaptive execution, no reshuffle of trace-partitioned data for joins; ``conf`` on top);
    reuses a running one (setting ``conf``'s runtime SQL properties on it)."""
    return _session(spark_context(master, conf, class_archive), {**SPARK_DEFAULTS, **(conf or {})})


def _session(spark: SparkSession | SparkContext, options: dict[str, str] | None = None) -> SparkSession:
    """``spark`` if it is a session, else the session on the context ``spark`` (made if none, with
    ``options``; a running one gets their runtime SQL properties)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if not isinstance(spark, SparkContext):
        return spark
    builder = SparkSession.builder
    for name, value in (options or {}).items():
        builder = builder.config(name, value)
    return builder.getOrCreate()


def _python() -> str:
    import sys

    return sys.executable


def spark_schema(root: str | os.PathLike[str], buckets: Sequence[int]) -> Any:
    """The Spark schema of the event columns the buckets' files hold (footers only, read on the
    driver): handing it to the reader spares Spark a job that merges the files' schemas."""
    from pyspark.sql.pandas.types import from_arrow_schema

    present = present_columns(root, buckets)
    return from_arrow_schema(pa.schema([f for f in arrow_schema() if f.name in present]))


def _read_events(spark: SparkSession, root: str | os.PathLike[str], buckets: Sequence[int], schema: Any) -> DataFrame:
    paths = [str(bucket_path(root, EVENTS_DIR, b)) for b in buckets]
    return spark.read.schema(schema).parquet(*paths)


PLANS = ("files", "tasks", "sorted", "windows")
"""How an engine mines. ``files`` (Spark's default since 2026-11-27): one task per corpus file
(whole traces, sorted by (trace, position)), which reads the columns the chosen slices' SQL names
itself (pyarrow, engine.arrow_events) and runs the invariants' DuckDB SQL over chunks of whole
traces (traces.mine.tasks.mine_chunk); the JVM hands each task its file's index and takes back the
violations as Arrow IPC bytes (an RDD of file indices, one partition each): it never reads an event,
so the executors must read the corpus at the driver's path (shared storage). ``tasks``: the same
chunks, but Spark reads each corpus file as one partition and hands its rows to the task as Arrow
batches (traces.mine.tasks.violation_batches); on DuckDB both are the same chunks one after another
in one process. ``sorted``
(DuckDB's default) reads each corpus file as one
partition, already sorted by (trace, position), and computes ``st`` in one vectorised pass per
chunk of whole traces (traces.mine.state; on Spark through ``mapInArrow``, no shuffle of the
events); ``windows`` is the reference plan: one shuffle of the events by trace, then the SQL views
``s1``/``s2``/``st`` (window functions) of traces.mine.replication, every slice's views whatever the
corpus holds, and the row check in SQL."""

WHOLE_FILE_READS: dict[str, str] = {
    "spark.sql.files.maxPartitionBytes": str(1 << 40),
    "spark.sql.files.openCostInBytes": str(1 << 40),
}
"""Reader settings under which Spark reads every corpus file whole into one partition of its own
(no split at row groups, no packing of files): a bucket holds whole traces sorted by (trace,
position) (traces.corpus; checked by traces.inputs.corpus), so each partition holds whole traces."""


def corpus_slices(root: str | os.PathLike[str], buckets: Sequence[int]) -> frozenset[str]:
    """The slices whose SQL names an event kind the buckets' files hold (read from the files' kind
    dictionaries on the driver, one column): a slice none of whose kinds occurs cannot flag
    anything (every one of its views filters on its kinds), so its views and invariants are left out."""
    from kconform.traces.mine.invariants import SLICE_KINDS

    present: set[str] = set()
    for bucket in buckets:
        # ParquetFile, not pq.read_table: that goes through pyarrow.dataset, which imports pandas.
        kinds = pq.ParquetFile(bucket_path(root, EVENTS_DIR, bucket), read_dictionary=["kind"]).read(columns=["kind"])
        for chunk in kinds.column("kind").chunks:
            present.update(str(k) for k in chunk.dictionary.to_pylist())
    return frozenset(name for name, kinds in SLICE_KINDS.items() if kinds & present)


def _state_spark_schema() -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    from kconform.traces.mine.state import STATE_SCHEMA

    return from_arrow_schema(STATE_SCHEMA)


@contextlib.contextmanager
def _shuffle_partitions_for(spark: SparkSession, events: int) -> Iterator[None]:
    """While mining ``events`` events: Spark's shuffle partitions sized to the corpus
    (``trace_partitions``: about EVENTS_PER_PARTITION events each, at least one per core) if the
    session still has SPARK_DEFAULTS' upper bound; a value the user set is kept. The session's value
    is restored afterwards. (The bound of 64 with adaptive execution left small corpora at minutes of
    mostly idle tasks: two miner tests on tiny corpora took 239 s of wall clock with it, 73 s with 2.)"""
    key = "spark.sql.shuffle.partitions"
    before = spark.conf.get(key)
    if before == SPARK_DEFAULTS[key]:
        spark.conf.set(key, str(trace_partitions(events, spark.sparkContext.defaultParallelism)))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def run_spark(
    spark: SparkSession | SparkContext,
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    names: list[str] | None = None,
    out: Path | None = None,
    keep: int = 10_000,
    validated: bool = False,
    plan: str = "files",
) -> EngineResult:
    """Mine the given buckets of the corpus with Spark; write the violations Parquet (with witness
    events) to ``out`` if given; keep at most ``keep`` violations in the returned table.
    ``validated``: the buckets passed traces.inputs.corpus.validate_corpus (which checks every row
    the SQL row check would), so that check is skipped. ``plan``: see PLANS. ``spark``: a session,
    or a context (``spark_context``) on which a session is started only when Spark SQL is needed:
    the files plan after the corpus check needs none unless some violation fired."""
    if plan not in PLANS:
        raise ValueError(f"unknown plan {plan!r} (known: {', '.join(PLANS)})")
    wanted = set(buckets)
    wanted_events = sum(t.events for t in manifest.traces if t.bucket in wanted)
    if plan == "files" and validated:
        return _run_files(spark, root, manifest, buckets, names, out, keep, wanted_events)
    session = _session(spark)
    with _shuffle_partitions_for(session, wanted_events):
        return _run_spark(session, root, manifest, buckets, names, out, keep, validated, plan)


def _run_files(
    spark: SparkSession | SparkContext,
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    names: list[str] | None,
    out: Path | None,
    keep: int,
    events: int,
) -> EngineResult:
    """The files plan after the corpus check: one job of plain tasks on the context; a session
    (the context's properties) only for the witness events of violations, if some fired."""
    from pyspark import SparkContext

    started = time.perf_counter()
    context = spark if isinstance(spark, SparkContext) else spark.sparkContext
    found = _files_violations(context, root, manifest, buckets, names, [])
    if found.num_rows == 0:
        return _unwitnessed(out, keep, [], events, started)
    session = _session(spark)
    with _shuffle_partitions_for(session, events):
        schema = spark_schema(root, buckets)
        violations = session.createDataFrame(found)
        violations.createOrReplaceTempView("violations")
        select = ev_select("spark", {f.name for f in schema.fields})
        return _witnessed(
            session, violations, root, manifest, buckets, schema, select, out, keep, [], events, started, []
        )


def _run_spark(
    spark: SparkSession,
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    names: list[str] | None,
    out: Path | None,
    keep: int,
    validated: bool,
    plan: str,
) -> EngineResult:
    started = time.perf_counter()
    schema = spark_schema(root, buckets)
    select = ev_select("spark", {f.name for f in schema.fields})
    if plan in ("tasks", "sorted"):
        for key, value in WHOLE_FILE_READS.items():
            spark.conf.set(key, value)
    bad: list[tuple[int, int, str]] = []
    good: DataFrame | None = None
    # (The files plan after the corpus check never comes here: run_spark's _run_files, no DataFrame.)
    _read_events(spark, root, buckets, schema).createOrReplaceTempView("ev_file")
    spark.sql(f"SELECT {select} FROM ev_file").createOrReplaceTempView("ev_scan")
    if not validated:
        bad = [
            (int(r["trace"]), int(r["pos"]), str(r["kind"]))
            for r in spark.sql(bad_rows_sql().replace("FROM ev", "FROM ev_scan")).collect()
        ]
    skipped = sorted({t for t, _, _ in bad})
    if plan != "files":
        scan = spark.table("ev_scan")
        good = scan.where(~scan["trace"].isin(skipped)) if skipped else scan
    wanted = set(buckets)
    left_out = set(skipped)
    events = sum(t.events for t in manifest.traces if t.bucket in wanted and t.trace not in left_out)
    persisted: list[DataFrame] = []
    if plan in ("tasks", "files"):
        from kconform.traces.mine.tasks import VIOLATIONS_SCHEMA

        # The violations are few (a violation is a bug): one job brings them to the driver as Arrow,
        # and when none fired no other Spark job runs (no cache, no witness join, no writer job).
        if plan == "tasks":
            assert good is not None
            found = _tasks_violations(good, root, manifest, buckets, names).toArrow().cast(VIOLATIONS_SCHEMA)
        else:
            found = _files_violations(spark.sparkContext, root, manifest, buckets, names, skipped)
        if found.num_rows == 0:
            return _unwitnessed(out, keep, bad, events, started)
        violations = spark.createDataFrame(found)
    else:
        assert good is not None
        violations = _sql_violations(spark, good, root, manifest, buckets, names, events, plan, persisted)
        persisted.append(violations)
    violations.createOrReplaceTempView("violations")
    return _witnessed(
        spark, violations, root, manifest, buckets, schema, select, out, keep, bad, events, started, persisted
    )


def _tasks_violations(
    good: DataFrame,
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    names: list[str] | None,
) -> DataFrame:
    """The ``tasks`` plan: every partition (a corpus file) mined by DuckDB in its task
    (traces.mine.tasks), reading only the columns the chosen slices' SQL names."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from kconform.traces.mine.tasks import VIOLATIONS_SCHEMA, read_columns, violation_batches

    slices = corpus_slices(root, buckets)
    tables = {"tr": traces_table(manifest), **txn_tables(manifest)}
    chosen = sorted(slices)

    def mine(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return violation_batches(batches, tables, chosen, names)

    return good.select(*read_columns(good.columns, slices, names)).mapInArrow(
        mine, from_arrow_schema(VIOLATIONS_SCHEMA)
    )


def _files_violations(
    context: SparkContext,
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    names: list[str] | None,
    skipped: Sequence[int],
) -> pa.Table:
    """The ``files`` plan: one task per corpus file, which reads the columns the chosen slices' SQL
    names itself and mines them chunk by chunk (traces.mine.tasks.mine_chunk); the violations
    (VIOLATIONS_SCHEMA) collected on the driver.

    The tasks are a plain RDD of file indices (``parallelize``, one partition per file) whose
    Python function hands back each chunk's violations as Arrow IPC bytes, and only when some
    fired: no DataFrame, so no query planning, no code generation and no Arrow conversion in the
    JVM, whose work on a cold start was most of the plan's fixed cost (a job of 10 files,
    2026-11-27, load 10: the JVM spent 3.9 CPU-s on ``spark.range(...).mapInArrow`` against 1.2 on
    the same tasks as an RDD)."""
    from kconform.traces.mine.state import whole_trace_chunks
    from kconform.traces.mine.tasks import CHUNK_ROWS, VIOLATIONS_SCHEMA, chunk_sql, read_columns, read_file, run_chunk

    slices = sorted(corpus_slices(root, buckets))
    tables = {"tr": traces_table(manifest), **txn_tables(manifest)}
    columns = ev_columns(read_columns([column(f.name) for f in arrow_schema()], slices, names))
    sql = chunk_sql(slices, names)
    paths = [str(bucket_path(root, EVENTS_DIR, b)) for b in buckets]
    left_out = list(skipped)

    # Everything the task uses is plain data or from the light modules tasks and state: a Python
    # worker imports neither this module nor the invariants' registry.
    def mine(indices: Iterable[int]) -> Iterator[bytes]:
        for i in indices:
            events = read_file(paths[i], columns, left_out, dictionaries=True)
            for chunk in whole_trace_chunks(events.to_batches(), CHUNK_ROWS):
                found = run_chunk(chunk, tables, sql)
                if found.num_rows:
                    sink = pa.BufferOutputStream()
                    with pa.ipc.new_stream(sink, found.schema) as writer:
                        writer.write_table(found)
                    yield sink.getvalue().to_pybytes()

    files = context.parallelize(range(len(paths)), max(1, len(paths)))
    parts = [pa.ipc.open_stream(blob).read_all() for blob in files.mapPartitions(mine).collect()]
    return pa.concat_tables(parts).cast(VIOLATIONS_SCHEMA) if parts else VIOLATIONS_SCHEMA.empty_table()


def _sql_violations(
    spark: SparkSession,
    good: DataFrame,
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    names: list[str] | None,
    events: int,
    plan: str,
    persisted: list[DataFrame],
) -> DataFrame:
    """The ``sorted`` and ``windows`` plans: the views and the union of invariants as Spark SQL."""
    slices: frozenset[str] | None = None
    given: frozenset[str] = frozenset()
    if plan == "sorted":
        from kconform.traces.mine.state import STATE_INPUTS, state_batches

        good.createOrReplaceTempView("ev")
        slices = corpus_slices(root, buckets)
        if "replication" in slices:
            # One pass per partition (a corpus file: whole traces, sorted): no shuffle, no window.
            st = good.select(*STATE_INPUTS).mapInArrow(state_batches, _state_spark_schema()).persist()
            persisted.append(st)
            st.createOrReplaceTempView("st")
            given = frozenset({"st"})
    else:
        # One shuffle of the corpus: every later window, join and aggregation is keyed by trace first.
        partitions = trace_partitions(events, spark.sparkContext.defaultParallelism)
        good.repartition(partitions, "trace").createOrReplaceTempView("ev")
    # VALUES relations, not createDataFrame: the manifest's facts travel in the plan.
    for name, table in {"tr": traces_table(manifest), **txn_tables(manifest)}.items():
        spark.sql(spark_values(table)).createOrReplaceTempView(name)
    for name, sql in view_sql("spark", slices, given):
        df = spark.sql(sql)
        if name in ("st", "ent"):
            df = df.persist()
            persisted.append(df)
        df.createOrReplaceTempView(name)
    if slices is None or "replication" in slices:
        spark.table("st").count()  # materialise the cached state once; every invariant reads it
    return spark.sql(violations_sql("spark", names, slices)).persist()


def _witnessed(
    spark: SparkSession,
    violations: DataFrame,
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    schema: Any,
    select: str,
    out: Path | None,
    keep: int,
    bad: list[tuple[int, int, str]],
    events: int,
    started: float,
    persisted: list[DataFrame],
) -> EngineResult:
    """The violations with their witness events (read from the flagged traces' buckets only),
    written to ``out`` if given; unpersists ``persisted`` at the end."""
    wanted = set(buckets)
    flagged = sorted(int(r["trace"]) for r in violations.select("trace").distinct().collect())
    if flagged:
        # Witness events come from the buckets of the flagged traces only; the few violations are
        # broadcast to them.
        flagged_set = set(flagged)
        flagged_buckets = sorted({t.bucket for t in manifest.traces if t.trace in flagged_set} & wanted)
        wit = _read_events(spark, root, flagged_buckets, schema)
        wit.createOrReplaceTempView("ev_wit_file")
        spark.sql(
            f"SELECT {select} FROM ev_wit_file WHERE trace IN ({', '.join(map(str, flagged))})"
        ).createOrReplaceTempView("ev_wit")
        witnessed = spark.sql(
            """
            SELECT v.invariant, v.trace, v.pos, v.wpos, v.detail,
              transform(sort_array(collect_list(struct(e.pos AS p, to_json(struct(e.*)) AS j))), x -> x.j)
                AS witness_events
            FROM (SELECT *, wp FROM (SELECT *, monotonically_increasing_id() AS vid FROM violations)
                  LATERAL VIEW explode(array(pos, wpos)) t AS wp) v
            JOIN ev_wit e ON e.trace = v.trace AND e.pos = v.wp
            GROUP BY v.vid, v.invariant, v.trace, v.pos, v.wpos, v.detail"""
        )
    else:
        witnessed = spark.sql(
            "SELECT invariant, trace, pos, wpos, detail, CAST(array() AS ARRAY<STRING>) AS witness_events "
            "FROM violations"
        )
    try:
        with tempfile.TemporaryDirectory(prefix="kconform-violations-") as tmp:
            target = str(out) if out is not None else os.path.join(tmp, "violations.parquet")
            witnessed.coalesce(1).write.mode("overwrite").parquet(target)
            table = pq.read_table(target).sort_by(
                [("trace", "ascending"), ("pos", "ascending"), ("invariant", "ascending")]
            )
    finally:
        for df in persisted:
            df.unpersist()
    counts = _counts(table)
    return EngineResult(table.slice(0, keep), counts, bad, events, time.perf_counter() - started)


def _unwitnessed(
    out: Path | None, keep: int, bad: list[tuple[int, int, str]], events: int, started: float
) -> EngineResult:
    """The result of a run in which no invariant fired: an empty violations table (with its
    ``witness_events`` column) written to ``out`` if given, as one Parquet file."""
    table = _empty_violations()
    if out is not None:
        target = Path(out)
        if target.is_dir():  # a former run's Spark output (a directory of part files)
            shutil.rmtree(target)
        pq.write_table(table, target)
    return EngineResult(table.slice(0, keep), [], bad, events, time.perf_counter() - started)


def _counts(table: pa.Table) -> list[tuple[str, int, int, int]]:
    """(invariant, trace, violations, first position) per flagged (invariant, trace), by trace."""
    if table.num_rows == 0:
        return []
    grouped = table.group_by(["invariant", "trace"]).aggregate([("pos", "count"), ("pos", "min")])
    rows = zip(
        grouped["invariant"].to_pylist(),
        grouped["trace"].to_pylist(),
        grouped["pos_count"].to_pylist(),
        grouped["pos_min"].to_pylist(),
        strict=True,
    )
    return sorted(((str(i), int(t), int(n), int(p)) for i, t, n, p in rows), key=lambda c: (c[1], c[0]))


def _empty_violations() -> pa.Table:
    return pa.schema(
        [
            pa.field("invariant", pa.string()),
            pa.field("trace", pa.int64()),
            pa.field("pos", pa.int64()),
            pa.field("wpos", pa.int64()),
            pa.field("detail", pa.string()),
            pa.field("witness_events", pa.list_(pa.string())),
        ]
    ).empty_table()


# --------------------------------------------------------------------------------------------
# DuckDB
# --------------------------------------------------------------------------------------------


def arrow_events(
    root: str | os.PathLike[str],
    buckets: Sequence[int],
    names: Sequence[str],
    skipped: Sequence[int] = (),
    dictionaries: bool = False,
) -> Iterator[pa.Table]:
    """Per bucket, the ``ev`` columns ``names`` of its events (keywords renamed, a typed null column
    for each one the file lacks), without the ``skipped`` traces; ``dictionaries``: as
    traces.mine.tasks.read_file."""
    from kconform.traces.mine.tasks import read_file

    columns = ev_columns(names)
    for bucket in buckets:
        yield read_file(str(bucket_path(root, EVENTS_DIR, bucket)), columns, skipped, dictionaries)


def ev_columns(names: Sequence[str]) -> list[tuple[str, str, pa.DataType]]:
    """(name in ``ev``, name in the corpus files, Arrow type) of the ``ev`` columns ``names``."""
    source = {column(f.name): f for f in arrow_schema()}
    return [(n, source[n].name, source[n].type) for n in names]


def run_duckdb(
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    names: list[str] | None = None,
    threads: int | None = None,
    memory_limit: str | None = None,
    validated: bool = False,
    plan: str = "files",
    temp_directory: str | os.PathLike[str] | None = None,
) -> EngineResult:
    """The same invariants as SQL on DuckDB over the same Parquet files (benchmark baseline and a
    cross-check of the Spark dialect): returns violations without witness events. ``validated``
    and ``plan`` as for ``run_spark``. In the default ``files`` plan (since 2026-11-27) ``threads``
    workers (default 1) each mine one corpus file at a time, chunk by chunk of whole traces, as
    Spark's tasks do (traces.mine.tasks.mine_chunk, one DuckDB thread each): at most ``threads``
    files and their chunks are held at once, whatever the corpus' size, and ``memory_limit`` (e.g.
    ``"1GB"``) bounds each chunk's DuckDB, which spills beyond it to ``temp_directory``. The
    ``sorted`` plan computes ``st`` with traces.mine.state bucket by bucket and hands it to one
    DuckDB connection as an Arrow table (its memory grows with the corpus: 3.3 GiB at 10M events);
    there ``memory_limit`` bounds that connection."""
    import duckdb

    if plan not in PLANS:
        raise ValueError(f"unknown plan {plan!r} (known: {', '.join(PLANS)})")
    started = time.perf_counter()
    con = duckdb.connect()
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    if memory_limit is not None:
        con.execute("SET memory_limit = ?", [memory_limit])
    if temp_directory is not None:
        con.execute("SET temp_directory = ?", [str(temp_directory)])
    paths = ", ".join(f"'{bucket_path(root, EVENTS_DIR, b)}'" for b in buckets)
    select = ev_select("duckdb", present_columns(root, buckets))
    con.execute(f"CREATE VIEW ev AS SELECT {select} FROM read_parquet([{paths}], union_by_name = true)")
    for name, table in {"tr": traces_table(manifest), **txn_tables(manifest)}.items():
        con.register(name, table)
    bad: list[tuple[int, int, str]] = []
    if not validated:
        bad = [(int(t), int(p), str(k)) for t, p, k in con.execute(bad_rows_sql()).fetchall()]
    skipped = sorted({t for t, _, _ in bad})
    if skipped:
        con.execute(
            f"CREATE OR REPLACE VIEW ev AS SELECT {select} FROM read_parquet([{paths}], union_by_name = true) "
            f"WHERE trace NOT IN ({', '.join(str(t) for t in skipped)})"
        )
    slices: frozenset[str] | None = None
    given: frozenset[str] = frozenset()
    if plan in ("tasks", "files"):  # in one process both are the chunks one after another
        table = _duckdb_tasks(root, manifest, buckets, names, threads, skipped, memory_limit, temp_directory)
        events = sum(t.events for t in manifest.traces if t.bucket in set(buckets) and t.trace not in set(skipped))
        con.close()
        return EngineResult(table, _counts(table), bad, events, time.perf_counter() - started)
    if plan == "sorted":
        from kconform.traces.mine.state import STATE_INPUTS, STATE_SCHEMA, node_state

        slices = corpus_slices(root, buckets)
        if "replication" in slices:
            parts = [node_state(t) for t in arrow_events(root, buckets, STATE_INPUTS, skipped)]
            st_table = pa.concat_tables(parts) if parts else STATE_SCHEMA.empty_table()
            con.register("st", st_table)
            given = frozenset({"st"})
    for name, sql in view_sql("duckdb", slices, given):
        kind = "TABLE" if name in ("st", "ent") else "VIEW"
        con.execute(f"CREATE {kind} {name} AS {sql}")
    table = con.sql(
        f"SELECT * FROM ({violations_sql('duckdb', names, slices)}) ORDER BY trace, pos, invariant"
    ).to_arrow_table()
    events = sum(t.events for t in manifest.traces if t.bucket in set(buckets) and t.trace not in set(skipped))
    con.close()
    return EngineResult(table, _counts(table), bad, events, time.perf_counter() - started)


def _duckdb_tasks(
    root: str | os.PathLike[str],
    manifest: Manifest,
    buckets: Sequence[int],
    names: list[str] | None,
    threads: int | None,
    skipped: Sequence[int],
    memory_limit: str | None = None,
    temp_directory: str | os.PathLike[str] | None = None,
) -> pa.Table:
    """The ``files`` / ``tasks`` plans in this process: traces.mine.tasks.mine_chunk over each
    bucket's chunks of whole traces, ``threads`` buckets at a time (one DuckDB thread per chunk;
    pyarrow, numpy and DuckDB release the GIL for their work)."""
    from concurrent.futures import ThreadPoolExecutor

    from kconform.traces.mine.state import whole_trace_chunks
    from kconform.traces.mine.tasks import CHUNK_ROWS, VIOLATIONS_SCHEMA, chunk_sql, read_columns, run_chunk

    slices = sorted(corpus_slices(root, buckets))
    tables = {"tr": traces_table(manifest), **txn_tables(manifest)}
    columns = read_columns([column(f.name) for f in arrow_schema()], slices, names)
    sql = chunk_sql(slices, names)
    temp = None if temp_directory is None else str(temp_directory)

    def mine(bucket: int) -> list[pa.Table]:
        return [
            run_chunk(chunk, tables, sql, 1, memory_limit, temp)
            for table in arrow_events(root, [bucket], columns, skipped, dictionaries=True)
            for chunk in whole_trace_chunks(table.to_batches(), CHUNK_ROWS)
        ]

    workers = max(1, threads or 1)
    if workers == 1:
        parts = [part for bucket in buckets for part in mine(bucket)]
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kconform-mine") as pool:
            parts = [part for found in pool.map(mine, buckets) for part in found]
    found = pa.concat_tables(parts) if parts else VIOLATIONS_SCHEMA.empty_table()
    return found.sort_by([("trace", "ascending"), ("pos", "ascending"), ("invariant", "ascending")])


def known_invariants() -> list[str]:
    return list(INVARIANTS)
