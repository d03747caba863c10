"""The node-state pass (traces.mine.state) gives the rows of the SQL views it replaces
(``s1``/``s2``/``st`` of traces.mine.replication, run on DuckDB), on hand-made traces built to
break each invariant and on a generated corpus with planted mutants; its streaming form gives the
same rows whatever the chunk size and refuses a stream that splits a trace; and the engines leave
out a slice none of whose kinds a corpus holds."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from kconform.traces.corpus import EVENTS_DIR, Manifest, bucket_path, present_columns
from kconform.traces.generate import generate
from kconform.traces.mine.engine import arrow_events, corpus_slices, ev_select, run_duckdb
from kconform.traces.mine.replication import STATE_VIEWS, views
from kconform.traces.mine.state import STATE_INPUTS, STATE_SCHEMA, node_state, state_batches
from kconform.traces.mine.tasks import state_kinds, state_rows

from .test_mine import PLANTED_PLAN, broken  # noqa: F401  (the hand-made corpus fixture)


def _sql_state(root: Path, manifest: Manifest) -> pa.Table:
    con = duckdb.connect()
    paths = ", ".join(f"'{bucket_path(root, EVENTS_DIR, b)}'" for b in manifest.buckets)
    select = ev_select("duckdb", present_columns(root, manifest.buckets))
    con.execute(f"CREATE VIEW ev AS SELECT {select} FROM read_parquet([{paths}], union_by_name = true)")
    for name, sql in views("duckdb"):
        if name in STATE_VIEWS:
            con.execute(f"CREATE VIEW {name} AS {sql}")
    cols = ", ".join(STATE_SCHEMA.names)
    table = con.sql(f"SELECT {cols} FROM st ORDER BY trace, pos").to_arrow_table()
    con.close()
    return table


def _pass_state(root: Path, manifest: Manifest) -> pa.Table:
    parts = [node_state(t) for t in arrow_events(root, manifest.buckets, STATE_INPUTS)]
    return pa.concat_tables(parts).sort_by([("trace", "ascending"), ("pos", "ascending")])


def _same_rows(a: pa.Table, b: pa.Table) -> None:
    assert a.num_rows == b.num_rows
    for name in STATE_SCHEMA.names:
        assert a.column(name).to_pylist() == b.column(name).to_pylist(), name


def test_the_pass_gives_the_sql_state_on_traces_built_to_break_each_invariant(
    broken: tuple[Path, Manifest],  # noqa: F811
) -> None:
    root, manifest = broken
    _same_rows(_pass_state(root, manifest), _sql_state(root, manifest))


@pytest.fixture(scope="module")
def planted_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest]:
    root = tmp_path_factory.mktemp("state") / "c"
    return root, generate(root, PLANTED_PLAN).manifest


def test_the_pass_gives_the_sql_state_on_a_planted_corpus(planted_corpus: tuple[Path, Manifest]) -> None:
    root, manifest = planted_corpus
    state = _pass_state(root, manifest)
    assert set(state.column("node_role").to_pylist()) == {"N", "L", "F", "D"}, "restarts, leaders and followers"
    assert state.column("inc").to_pylist().count(0) < state.num_rows, "some broker restarted"
    _same_rows(state, _sql_state(root, manifest))


def test_streaming_chunks_give_the_same_rows_and_a_split_trace_is_refused(
    planted_corpus: tuple[Path, Manifest],
) -> None:
    root, manifest = planted_corpus
    events = next(arrow_events(root, manifest.buckets[:1], STATE_INPUTS))
    whole = node_state(events)
    batches = events.to_batches(max_chunksize=777)
    for chunk_rows in (1, 1_000, 1 << 30):
        streamed = pa.Table.from_batches(list(state_batches(batches, chunk_rows)), schema=STATE_SCHEMA)
        _same_rows(streamed, whole)
    half = events.num_rows // 2
    split = [*events.slice(0, half).to_batches(), *events.slice(half).to_batches()]
    assert len(set(events.column("trace").to_pylist())) > 1
    reordered = [split[-1], *split[:-1]]  # the last trace's tail comes first, its head much later
    with pytest.raises(ValueError, match="not contiguous"):
        list(state_batches(reordered, 1_000))


def test_a_slice_with_no_kind_in_the_corpus_is_left_out_with_the_same_verdicts(
    planted_corpus: tuple[Path, Manifest],
) -> None:
    root, manifest = planted_corpus
    assert corpus_slices(root, manifest.buckets) == {"replication"}
    sorted_plan = run_duckdb(root, manifest, manifest.buckets)
    reference = run_duckdb(root, manifest, manifest.buckets, plan="windows")
    assert sorted_plan.counts and sorted_plan.counts == reference.counts


def test_rows_of_kinds_the_slice_never_names_change_no_state(planted_corpus: tuple[Path, Manifest]) -> None:
    """``tasks.state_rows`` leaves out the rows of kinds the replication SQL never names (the clock's
    ticks, AlterPartition answers): the pass over the rest gives every kept row the state the pass
    over all rows gives it."""
    root, manifest = planted_corpus
    events = next(arrow_events(root, manifest.buckets[:1], STATE_INPUTS))
    kept = state_rows(events)
    assert 0 < kept.num_rows < events.num_rows, "the corpus must hold rows of other kinds, or this proves nothing"
    assert "clock_advanced" in set(events.column("kind").to_pylist()) - state_kinds()
    whole = node_state(events)
    mask = pa.compute.is_in(whole.column("kind"), value_set=pa.array(sorted(state_kinds())))
    _same_rows(node_state(kept), whole.filter(mask))


def _shifted(events: pa.Table, name: str, shift: int) -> pa.Table:
    """``events`` with ``shift`` added to column ``name`` in the rows of odd traces (order within a
    trace kept, so the state is the same; the values' range no longer fits the pass's dense keys)."""
    odd = pa.compute.equal(pa.compute.bit_wise_and(events.column("trace"), 1), 1)
    values = events.column(name)
    moved = pa.compute.if_else(odd, pa.compute.add(values, shift), values)
    return events.set_column(events.schema.get_field_index(name), name, moved)


def test_the_pass_gives_the_same_rows_in_any_row_order_and_for_any_id_range(
    planted_corpus: tuple[Path, Manifest],
) -> None:
    """The pass's fast paths (rows already sorted by trace and position; request and partition
    epoch keys packed into one integer, looked up in a table when dense) and their general forms
    (a sort by trace, node and position; a binary search over sparse keys; grouping by sorting when
    packing would overflow) give the same rows."""
    root, manifest = planted_corpus
    events = next(arrow_events(root, manifest.buckets[:1], STATE_INPUTS))
    whole = node_state(events)
    assert len(set(events.column("trace").to_pylist())) > 2
    rows = list(range(events.num_rows))
    random.Random(7).shuffle(rows)
    order = pa.array(rows)
    _same_rows(node_state(events.take(order)), whole.take(order))
    for name, shift in (("msg", 1 << 40), ("msg", 1 << 61), ("partition_epoch", 1 << 61)):
        moved = node_state(_shifted(events, name, shift))
        if name == "msg":
            moved = moved.set_column(moved.schema.get_field_index("msg"), "msg", whole.column("msg"))
        _same_rows(moved, whole)
    kind = events.schema.get_field_index("kind")
    dictionary = node_state(events.set_column(kind, "kind", events.column("kind").dictionary_encode()), True)
    assert pa.types.is_dictionary(dictionary.column("node_role").type)
    _same_rows(dictionary.cast(STATE_SCHEMA), whole)
