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
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from kconform.traces.mine.invariants import SLICE_KINDS, view_sql, violations_sql
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
    texts = [sql for _name, sql in view_sql("duckdb", slices, frozenset({"st"}))]
    texts.append(violations_sql("duckdb", names, slices))
    # Single-quoted SQL strings (kinds, outcomes, the words of a detail) name no column.
    code = re.sub(r"'[^']*'", "''", "\n".join(texts))
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    if "replication" in slices:
        words.update(STATE_INPUTS)
    words.update(("trace", "pos"))
    return [c for c in columns if c in words]


STATE_KINDS: frozenset[str] = SLICE_KINDS["replication"]
"""The event kinds whose rows the node state ``st`` keeps (``state_rows``): those the replication
slice's SQL names, the reference views ``s1``/``s2``/``st`` included (invariants.SLICE_KINDS)."""


def state_rows(events: pa.Table) -> pa.Table:
    """The rows of ``events`` the node state pass needs: those of ``STATE_KINDS``. A row of any
    other kind sets no state (every arm of ``HW_AFTER``, ``LEO_AFTER``, the role, epoch, ISR and
    request columns of traces.mine.replication names its kinds; the incarnation counts
    ``broker_restarted``) and no replication invariant or view reads it (each selects ``st`` rows
    by kind, or by a state column such a row leaves null: ``hw_set``, ``epoch_set``), so leaving it
    out changes no other row of ``st`` and no verdict (tests/test_mine_tasks.py). In a generated
    replication corpus a third of the rows are clock ticks, which only the exactly-once views read
    (from ``ev``)."""
    kinds = events.column("kind")
    keep = pc.is_in(kinds, value_set=pa.array(sorted(STATE_KINDS), pa.string()))
    return events.filter(keep)


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
    import duckdb

    con = duckdb.connect()
    try:
        con.execute(f"SET threads = {int(threads)}")
        if memory_limit is not None:
            con.execute("SET memory_limit = ?", [memory_limit])
        if temp_directory is not None:
            con.execute("SET temp_directory = ?", [temp_directory])
        con.register("ev", events)
        for name, table in tables.items():
            con.register(name, table)
        given: frozenset[str] = frozenset()
        if "replication" in slices:
            con.register("st", node_state(state_rows(events.select(list(STATE_INPUTS)))))
            given = frozenset({"st"})
        for name, sql in view_sql("duckdb", slices, given):
            kind = "TABLE" if name == "ent" else "VIEW"
            con.execute(f"CREATE {kind} {name} AS {sql}")
        found = con.sql(
            f"SELECT * FROM ({violations_sql('duckdb', names, slices)}) ORDER BY trace, pos, invariant"
        ).to_arrow_table()
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
