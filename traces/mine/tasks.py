"""The invariants' SQL run by DuckDB inside each Spark task, over chunks of whole traces.

Every view and invariant of the miner is keyed by trace first (each join and window names
``trace``; the manifest's tables are per trace), so the violations of a set of whole traces are the
violations the whole corpus holds for those traces. A corpus file holds whole traces sorted by
(trace, position) (traces.corpus; checked by traces.inputs.corpus), and Spark reads each file
whole into one partition (engine.WHOLE_FILE_READS): the ``tasks`` plan (engine.PLANS) hands each
partition, as Arrow batches, to ``violation_batches`` through ``mapInArrow``, which cuts it into
chunks of whole traces (state.whole_trace_chunks, refusing a split trace) and runs on each one the
same SQL text the DuckDB engine runs (invariants.view_sql / violations_sql, dialect ``duckdb``;
the node state ``st`` from state.node_state): no shuffle, no window operator and no join in Spark,
which only schedules the files, reads their Parquet and collects the violations.

A task holds one chunk (``CHUNK_ROWS`` rows or more, ending at a trace's end) and DuckDB's working
set over it, whatever the corpus' size. DuckDB must be installed where the tasks run (it is a
dependency of the project: the executors' Python has it when it has ``kconform``).

What a task needs is light: the SQL texts come ready from the driver (``ChunkSql``, made by
``chunk_sql``), the file's columns as plain names and types (``read_file``), so a Spark Python
worker imports this module, state.py, pyarrow, numpy and DuckDB, not the invariants' registry and
the model behind it (the registry is imported only by the functions that build the SQL).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kconform.traces.arrow_build import int64s, strings
from kconform.traces.mine.state import STATE_INPUTS, node_state, whole_trace_chunks

CHUNK_ROWS = 1 << 20
"""Rows a task gathers before it mines them (whole traces: a chunk ends at a trace's end). About a
corpus file (generate.BUCKET_EVENTS): DuckDB's cost per chunk (building the views, planning the union
of every invariant) is then paid about once per file."""

VIOLATIONS_SCHEMA = pa.schema(
    [
        pa.field("invariant", pa.string()),
        pa.field("trace", pa.int64()),
        pa.field("pos", pa.int64()),
        pa.field("wpos", pa.int64()),
        pa.field("detail", pa.string()),
    ]
)
"""What ``violation_batches`` yields: the rows of invariants.violations_sql."""


def read_columns(columns: Iterable[str], slices: Collection[str], names: list[str] | None) -> list[str]:
    """The ``ev`` columns (among ``columns``) that the chosen slices' views and invariants may read:
    every one whose name occurs as a word in their SQL, the node state pass's inputs when the
    replication slice is chosen, and ``trace``/``pos``. An over-approximation (a word in a comment
    or a string keeps a column); a column left out by mistake would be a DuckDB binder error, never
    a silent verdict."""
    from kconform.traces.mine.invariants import view_sql, violations_sql

    texts = [sql for _name, sql in view_sql("duckdb", slices, frozenset({"st"}))]
    texts.append(violations_sql("duckdb", names, slices))
    # Single-quoted SQL strings (kinds, outcomes, the words of a detail) name no column.
    code = re.sub(r"'[^']*'", "''", "\n".join(texts))
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    if "replication" in slices:
        words.update(STATE_INPUTS)
    words.update(("trace", "pos"))
    return [c for c in columns if c in words]


@functools.cache
def state_kinds() -> frozenset[str]:
    """The event kinds whose rows the node state ``st`` keeps (``state_rows``): those the replication
    slice's SQL names, the reference views ``s1``/``s2``/``st`` included (invariants.SLICE_KINDS)."""
    from kconform.traces.mine.invariants import SLICE_KINDS

    return SLICE_KINDS["replication"]


def state_rows(events: pa.Table, kinds: Collection[str] | None = None) -> pa.Table:
    """The rows of ``events`` the node state pass needs: those of ``kinds`` (default:
    ``state_kinds()``). A row of any
    other kind sets no state (every arm of ``HW_AFTER``, ``LEO_AFTER``, the role, epoch, ISR and
    request columns of traces.mine.replication names its kinds; the incarnation counts
    ``broker_restarted``) and no replication invariant or view reads it (each selects ``st`` rows
    by kind, or by a state column such a row leaves null: ``hw_set``, ``epoch_set``), so leaving it
    out changes no other row of ``st`` and no verdict (tests/test_mine_tasks.py). In a generated
    replication corpus a third of the rows are clock ticks, which only the exactly-once views read
    (from ``ev``)."""
    wanted = sorted(state_kinds() if kinds is None else kinds)
    keep = pc.is_in(events.column("kind"), value_set=strings(wanted))
    return events.filter(keep)


@dataclass(frozen=True)
class ChunkSql:
    """What ``run_chunk`` runs on a chunk, as plain texts (made once, on the driver, by
    ``chunk_sql``): the views in creation order, the union of the chosen invariants, and the event
    kinds whose rows the node state pass reads (empty: the replication slice is not chosen, no
    ``st``)."""

    views: tuple[tuple[str, str], ...]
    union: str
    state_kinds: tuple[str, ...]


def chunk_sql(slices: Collection[str], names: list[str] | None = None) -> ChunkSql:
    """The DuckDB SQL of the chosen invariants (default: all) of the chosen slices, over ``st``
    from the node state pass when the replication slice is chosen."""
    from kconform.traces.mine.invariants import view_sql, violations_sql

    state = "replication" in slices
    given = frozenset({"st"}) if state else frozenset()
    return ChunkSql(
        tuple(view_sql("duckdb", slices, given)),
        violations_sql("duckdb", names, slices),
        tuple(sorted(state_kinds())) if state else (),
    )


DICTIONARY_COLUMNS = ("kind", "outcome")
"""The string columns ``read_file(..., dictionaries=True)`` reads dictionary-encoded, as the corpus
files store them: few distinct values in a million rows. Reading them so halves the read (0.22 →
0.12 CPU-s for a 1M-event file, 2026-11-27), the node state pass and ``state_rows`` work on their
codes, and DuckDB compares them by code."""


def read_file(
    path: str, columns: Sequence[tuple[str, str, pa.DataType]], skipped: Sequence[int] = (), dictionaries: bool = False
) -> pa.Table:
    """The ``ev`` columns of one corpus file: ``columns`` are (name in ``ev``, name in the file, type);
    one the file lacks is a typed null column; rows of the ``skipped`` traces are left out; with
    ``dictionaries`` the ``DICTIONARY_COLUMNS`` come dictionary-encoded (same values). One
    pyarrow thread: the engines read files in parallel themselves (one per task or worker), and
    pyarrow's own pool on top costs CPU (0.77 against 0.46 CPU-s for a 1M-event file)."""
    encoded = list(DICTIONARY_COLUMNS) if dictionaries else None
    # ParquetFile, not pq.read_table: that goes through pyarrow.dataset, which imports pandas (0.3-0.5
    # CPU-s in every process that mines).
    with pq.ParquetFile(path, read_dictionary=encoded) as file:
        present = set(file.schema_arrow.names)
        read = [source for _name, source, _type in columns if source in present]
        table = file.read(columns=read, use_threads=False)
    if skipped:
        table = table.filter(pc.invert(pc.is_in(table.column("trace"), value_set=int64s(skipped))))
    arrays = [
        table.column(source) if source in present else pa.nulls(table.num_rows, typ) for _name, source, typ in columns
    ]
    return pa.Table.from_arrays(arrays, names=[name for name, _source, _type in columns])


def mine_chunk(
    events: pa.Table,
    tables: Mapping[str, pa.Table],
    slices: Collection[str],
    names: list[str] | None = None,
    threads: int = 1,
    memory_limit: str | None = None,
    temp_directory: str | None = None,
) -> pa.Table:
    """The violations (VIOLATIONS_SCHEMA) that the chosen invariants (default: all) of the chosen
    slices find in ``events``, the ``ev`` rows of whole traces, with ``tables`` (``tr`` and the
    exactly-once tables of traces.mine.txn_tables) for the manifest's facts. Sorted by trace,
    position and invariant. DuckDB runs on ``threads`` threads within ``memory_limit`` (e.g.
    ``"1GB"``; default: DuckDB's, 80 % of the machine's memory), spilling beyond it to
    ``temp_directory`` (default: DuckDB's, beside the database: ``.tmp`` in the working directory)."""
    return run_chunk(events, tables, chunk_sql(slices, names), threads, memory_limit, temp_directory)


def run_chunk(
    events: pa.Table,
    tables: Mapping[str, pa.Table],
    sql: ChunkSql,
    threads: int = 1,
    memory_limit: str | None = None,
    temp_directory: str | None = None,
) -> pa.Table:
    """``mine_chunk`` with its SQL made beforehand (``chunk_sql``)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute(f"SET threads = {int(threads)}")
        con.execute("SET enable_progress_bar = false")  # a chunk is no interactive query
        if memory_limit is not None:
            con.execute("SET memory_limit = ?", [memory_limit])
        if temp_directory is not None:
            con.execute("SET temp_directory = ?", [temp_directory])
        con.register("ev", events)
        for name, table in tables.items():
            con.register(name, table)
        if sql.state_kinds:
            con.register("st", node_state(state_rows(events.select(list(STATE_INPUTS)), sql.state_kinds), True))
        for name, text in sql.views:
            kind = "TABLE" if name == "ent" else "VIEW"
            con.execute(f"CREATE {kind} {name} AS {text}")
        found = con.sql(f"SELECT * FROM ({sql.union}) ORDER BY trace, pos, invariant").to_arrow_table()
    finally:
        con.close()
    return found.cast(VIOLATIONS_SCHEMA)


def violation_batches(
    batches: Iterable[pa.RecordBatch],
    tables: Mapping[str, pa.Table],
    slices: Collection[str],
    names: list[str] | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> Iterator[pa.RecordBatch]:
    """``mine_chunk`` over a stream of ``ev`` rows in which each trace's rows are contiguous (a
    corpus file, sorted by trace and position), chunk by chunk of whole traces; ValueError if a
    trace's rows come back after another trace's (the partition split a trace)."""
    for chunk in whole_trace_chunks(batches, chunk_rows):
        yield from mine_chunk(chunk, tables, slices, names).to_batches()
