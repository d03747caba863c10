"""Trace corpora: many traces as one Parquet dataset plus a JSON manifest.

Layout of a corpus directory::

    manifest.json                       format, schema version, one entry per trace
    events/bucket=K/part-0.parquet      one row per event (wide, typed columns), sorted by (trace, pos)
    steps/bucket=K/part-0.parquet       one row per step: (trace, step, op as JSON text)

A trace belongs to exactly one bucket (``TraceMeta.bucket``); a bucket is the unit of parallel
generation and of partition pruning (hive-style ``bucket=K`` directories, readable by Spark, DuckDB
and pyarrow as a partition column). The event columns are ``schema.KEY_COLUMNS`` then one column per
distinct event field (``schema.columns()``), null where the row's kind lacks the field; the Parquet
schema is derived from the event classes, never written by hand (``arrow_schema()``).

Reading validates and names the place of every problem: ``CorpusError`` carries the file and the
row (0-based row of that Parquet file, or 1-based line of a JSON file) and the message. Readers that
go over many files (``read_traces``) collect per-file errors and go on with the other files, so what
could be checked is checked and reported.
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kconform.model.configs import AnyConfig, config_from_json
from kconform.traces import arrow_build
from kconform.traces.atomicfile import atomic_text_writer, atomic_write_bytes
from kconform.traces.events import EVENT_TYPES, SCHEMA_VERSION, Event
from kconform.traces.inputs.errors import InputError
from kconform.traces.operations import OperationDecodeError, operation_from_json
from kconform.traces.schema import (
    KEY_COLUMNS,
    columns,
    event_fields,
    struct_class,
    struct_fields,
)

if TYPE_CHECKING:
    from kconform.traces.counterexample import Counterexample, Step

FORMAT = "kconform-corpus"
"""The ``format`` marker of every manifest."""

MANIFEST = "manifest.json"
EVENTS_DIR = "events"
STEPS_DIR = "steps"

_ARROW_SCALARS: dict[str, pa.DataType] = {"int": pa.int64(), "bool": pa.bool_(), "str": pa.string()}


def arrow_type(typ: str) -> pa.DataType:
    """The Arrow type of an event field annotation: int64, bool, string, a list of one of those, or
    a list of structs (one struct field per field of the dataclass, e.g. ``Entry``)."""
    if typ in _ARROW_SCALARS:
        return _ARROW_SCALARS[typ]
    cls = struct_class(typ)
    if cls is not None:
        return pa.list_(pa.struct([(n, _ARROW_SCALARS[t]) for n, t in struct_fields(cls)]))
    return pa.list_(_ARROW_SCALARS[typ.removeprefix("tuple[").removesuffix(", ...]")])


ENTRY_TYPE = arrow_type("tuple[Entry, ...]").value_type
_KEY_TYPES: dict[str, pa.DataType] = {
    "trace": pa.int64(),
    "pos": pa.int64(),
    "step": pa.int64(),
    "kind": pa.string(),
    "node": pa.int64(),
}
_Array = np.ndarray[Any, Any]
"""A numpy array (the writer's row indices)."""
STEPS_SCHEMA = pa.schema([("trace", pa.int64()), ("step", pa.int64()), ("op", pa.string())])


class CorpusError(InputError):
    """A corpus (or a file of it) that cannot be read: ``path``, ``row`` (0-based Parquet row or
    1-based JSON line; None for the file as a whole), the ``field`` (column or manifest key) and
    what is wrong."""

    def __init__(
        self, path: str | os.PathLike[str], row: int | None, message: str, unit: str = "row", field: str = ""
    ) -> None:
        super().__init__(path, row, field, message, unit=unit)

    @property
    def path(self) -> str:
        return self.file

    @property
    def row(self) -> int | None:
        return self.line


def arrow_schema() -> pa.Schema:
    """The Parquet schema of ``events/``: key columns, then every event field column (nullable)."""
    fields = [pa.field(name, _KEY_TYPES[name], nullable=False) for name in KEY_COLUMNS]
    fields += [pa.field(c.name, arrow_type(c.type)) for c in columns()]
    return pa.schema(fields)


# --------------------------------------------------------------------------------------------
# Manifest
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceMeta:
    """One trace of a corpus: how it was produced and how big it is.

    ``config`` is the configuration's JSON (model.configs: replication, or ``"slice": "txn"``);
    ``mutants`` the mutants switched on (a planted trace has some); ``events``/``steps`` count its
    rows; ``verdict`` is the verdict a JSON Lines source file recorded (None for generated traces:
    nobody judged them yet)."""

    trace: int
    bucket: int
    seed: int
    config: dict[str, Any]
    mutants: tuple[str, ...]
    events: int
    steps: int
    implementation: str = "reference"
    verdict: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "trace": self.trace,
            "bucket": self.bucket,
            "seed": self.seed,
            "config": self.config,
            "mutants": list(self.mutants),
            "events": self.events,
            "steps": self.steps,
            "implementation": self.implementation,
        }
        if self.verdict is not None:
            out["verdict"] = self.verdict
        return out

    def configuration(self) -> AnyConfig:
        """The trace's configuration (either slice)."""
        return config_from_json(self.config)


@dataclass(frozen=True)
class Manifest:
    """The manifest of a corpus: schema version, traces (sorted by id), and free-form
    ``generator`` facts (seed, workload, planted mutants, timing)."""

    traces: tuple[TraceMeta, ...]
    generator: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
    files: dict[str, Any] = field(default_factory=dict, compare=False)
    """Size and SHA-256 of every part file (``inputs.corpus.sealed``; filled in when read)."""

    @property
    def events(self) -> int:
        return sum(t.events for t in self.traces)

    @property
    def buckets(self) -> tuple[int, ...]:
        return tuple(sorted({t.bucket for t in self.traces}))

    def by_trace(self) -> dict[int, TraceMeta]:
        return {t.trace: t for t in self.traces}

    def planted(self) -> dict[int, tuple[str, ...]]:
        """Trace id → mutants, for the traces that carry any."""
        return {t.trace: t.mutants for t in self.traces if t.mutants}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "schema_version": self.schema_version,
            "events": self.events,
            "generator": self.generator,
            "traces": [t.to_json() for t in self.traces],
        }


def write_manifest(root: str | os.PathLike[str], manifest: Manifest) -> None:
    """Write ``root/manifest.json`` atomically (written last: a corpus without it is incomplete),
    with the size and SHA-256 of every part file and a checksum of its own content
    (``inputs.corpus.sealed``), so a reader sees any byte changed afterwards."""
    from kconform.traces.inputs.checksums import sealed

    obj = sealed(root, manifest.to_json(), manifest.buckets)
    with atomic_text_writer(Path(root) / MANIFEST) as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def bucket_path(root: str | os.PathLike[str], table: str, bucket: int) -> Path:
    """The one Parquet file of ``bucket`` in ``table`` (EVENTS_DIR or STEPS_DIR)."""
    return Path(root) / table / f"bucket={bucket}" / "part-0.parquet"


class TableBuilder:
    """Collects the events and steps of many traces, in (trace, position) order, into column
    lists; ``tables()`` turns them into the two Arrow tables, whose rows are in the order they were
    added (so no sort). Per event only the kind's own fields are read, once, as one tuple; at a
    flush each column is scattered into a dense list (null where the row's kind lacks the field)
    and built from buffers (traces.arrow_build: no ``pa.array``, so pyarrow never imports pandas).

    Rows must be added in order: steps by (trace, step), events by (trace, position), each
    strictly increasing; ValueError otherwise (a corpus file is sorted by those keys)."""

    FLUSH_ROWS = 200_000
    """Events held as Python objects before they are turned into Arrow columns (bounds memory).
    Where the flushes fall changes the chunks of the columns, not the written bytes."""

    def __init__(self) -> None:
        self._cols = columns()
        self._fields = {kind: tuple(name for name, _ in event_fields(cls)) for kind, cls in EVENT_TYPES.items()}
        self._getters = {kind: attrgetter(*fields) for kind, fields in self._fields.items()}
        self._codes = {kind: code for code, kind in enumerate(EVENT_TYPES)}
        self._kind_bytes = [kind.encode() for kind in EVENT_TYPES]
        self._kind_lengths = np.array([len(b) for b in self._kind_bytes], dtype=np.int64)
        self._types = {c.name: arrow_type(c.type) for c in self._cols}
        self._builders = {name: arrow_build.builder(typ) for name, typ in self._types.items()}
        self._placed = {name: arrow_build.placed(typ) for name, typ in self._types.items()}
        self._parts: list[pa.Table] = []
        self._steps: tuple[list[int], list[int], list[str]] = ([], [], [])
        self._last_step = (-1, -1)
        self._last_event = (-1, -1)
        self._reset()

    def _reset(self) -> None:
        self._trace: list[int] = []
        self._pos: list[int] = []
        self._step: list[int] = []
        self._kind = array("h")
        self._values: dict[str, list[Any]] = {}
        self._slots: dict[type[Event], tuple[Any, ...]] = {}

    def add_step(self, trace: int, step: int, op_json: str) -> None:
        if (trace, step) <= self._last_step:
            raise ValueError(f"step ({trace}, {step}) added after ({self._last_step[0]}, {self._last_step[1]})")
        self._last_step = (trace, step)
        self._steps[0].append(trace)
        self._steps[1].append(step)
        self._steps[2].append(op_json)

    def add_events(self, trace: int, pos: int, step: int, events: Sequence[Event]) -> int:
        """Add ``events``, produced by step ``step`` of ``trace``, at positions ``pos``, ``pos`` + 1,
        ...; returns the position after the last one."""
        n = len(events)
        if not n:
            return pos
        if (trace, pos) <= self._last_event:
            raise ValueError(f"event ({trace}, {pos}) added after ({self._last_event[0]}, {self._last_event[1]})")
        self._last_event = (trace, pos + n - 1)
        self._trace.extend(repeat(trace, n))
        self._pos.extend(range(pos, pos + n))
        self._step.extend(repeat(step, n))
        slots, kinds_append = self._slots, self._kind.append
        for event in events:
            # The kind's field values are read here, once, as one tuple (``node`` first): the event
            # object itself is not kept, so a bucket's held rows are plain tuples, not dataclasses.
            slot = slots.get(type(event))
            if slot is None:
                slot = self._slot(event)
            get, hold, code = slot
            hold(get(event))
            kinds_append(code)
        if len(self._kind) >= self.FLUSH_ROWS:
            self._flush()
        return pos + n

    def _slot(self, event: Event) -> tuple[Callable[[Event], Any], Callable[[Any], None], int]:
        """What ``add_events`` does with an event of ``event``'s class until the next flush: read
        its kind's fields, hold them (in ``_values``, made on the kind's first event since the
        flush), and its kind's code (``_kind``, one per row)."""
        kind = event.kind
        held = self._values.get(kind)
        if held is None:
            held = self._values[kind] = []
        slot = (self._getters[kind], held.append, self._codes[kind])
        self._slots[type(event)] = slot
        return slot

    def add_event(self, trace: int, pos: int, step: int, event: Event) -> None:
        self.add_events(trace, pos, step, (event,))

    def _flush(self) -> None:
        n = len(self._trace)
        if n:
            self._parts.append(self._table(n))
        self._reset()

    def _table(self, n: int) -> pa.Table:
        """The held rows as one table of ``arrow_schema()``, in the order they were added.

        A column is built from the values of the kinds that have the field only (kind after
        kind), each put in its row by a placed builder (traces.arrow_build.placed), null in the
        rows of other kinds: Python touches each field value once, numpy the rest. Where each value
        goes comes from the rows' kind codes (numpy, which pyarrow imports anyway): a row's rank
        among the rows of its kind (one stable sort by kind), and per set of kinds where each
        kind's values start."""
        values: dict[str, dict[str, Sequence[Any]]] = {}
        for kind, held in self._values.items():
            fields = self._fields[kind]
            # attrgetter of one name gives the value itself, of several a tuple of them.
            values[kind] = (
                {fields[0]: held} if len(fields) == 1 else dict(zip(fields, zip(*held, strict=True), strict=True))
            )
        kinds = np.frombuffer(self._kind, dtype=np.int16)
        counts = np.bincount(kinds, minlength=len(self._codes))
        starts = np.cumsum(counts) - counts
        by_kind = np.argsort(kinds, kind="stable")  # the rows of each kind in row order, kind after kind
        rank = np.empty(n, dtype=np.int64)
        rank[by_kind] = np.arange(n, dtype=np.int64) - np.repeat(starts, counts)
        places: dict[tuple[str, ...], arrow_build.Placement] = {}

        def column(
            name: str, kinds_having: tuple[str, ...], build: arrow_build.Builder, put: arrow_build.Placed
        ) -> pa.Array:
            present = tuple(k for k in kinds_having if k in values)
            if len(present) == 1 and counts[self._codes[present[0]]] == n:
                return build(values[present[0]][name], None)
            at = places.get(present)
            if at is None:
                at = places[present] = self._places(present, kinds, counts, rank)
            return put(list(chain.from_iterable(values[k][name] for k in present)), at)

        arrays: list[pa.Array] = [
            arrow_build.int64s(self._trace),
            arrow_build.int64s(self._pos),
            arrow_build.int64s(self._step),
            self._kind_column(kinds),
            column("node", tuple(self._values), arrow_build.int64s, arrow_build.placed(pa.int64())),
        ]
        nulls: dict[pa.DataType, pa.Array] = {}  # one all-null array per type, shared by its columns
        for col in self._cols:
            if any(k in values for k in col.kinds):
                arrays.append(column(col.name, col.kinds, self._builders[col.name], self._placed[col.name]))
            else:
                typ = self._types[col.name]
                empty = nulls.get(typ)
                if empty is None:
                    empty = nulls[typ] = pa.nulls(n, typ)
                arrays.append(empty)
        return pa.Table.from_arrays(arrays, schema=arrow_schema())

    def _kind_column(self, kinds: _Array) -> pa.Array:
        """The ``kind`` column: each row's kind name, from its code."""
        names = self._kind_bytes
        offsets = np.zeros(len(kinds) + 1, dtype=np.int64)
        np.cumsum(self._kind_lengths[kinds], out=offsets[1:])
        data = b"".join(map(names.__getitem__, self._kind))
        return pa.Array.from_buffers(
            pa.string(), len(kinds), [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)]
        )

    def _places(self, present: tuple[str, ...], kinds: _Array, counts: _Array, rank: _Array) -> arrow_build.Placement:
        """Where the values of a column that the kinds ``present`` have go, taken kind after kind:
        ``kinds`` holds each row's kind code, ``counts`` the rows per code, ``rank`` each row's rank
        among the rows of its kind. A row of another kind is null."""
        base = np.zeros(len(self._codes), dtype=np.int64)
        has = np.zeros(len(self._codes), dtype=np.bool_)
        offset = 0
        for kind in present:
            code = self._codes[kind]
            base[code], has[code] = offset, True
            offset += int(counts[code])
        mask = has[kinds]
        order = (base[kinds] + rank)[mask]
        return arrow_build.Placement(order, mask, pa.py_buffer(np.packbits(mask, bitorder="little")))

    def add_trace(self, trace: int, steps: Sequence[Step]) -> tuple[int, int]:
        """Add every step and event of one trace; returns (events, steps) added."""
        pos = 0
        for index, step in enumerate(steps):
            self.add_step(trace, index, json.dumps(step.op.to_json(), separators=(",", ":")))
            pos = self.add_events(trace, pos, index, step.events)
        return pos, len(steps)

    def tables(self) -> tuple[pa.Table, pa.Table]:
        """(events, steps) as Arrow tables with ``arrow_schema()`` / STEPS_SCHEMA, in the order
        added, which is by trace then position / step."""
        self._flush()
        parts, self._parts = self._parts, []
        events = pa.concat_tables(parts) if parts else arrow_schema().empty_table()
        steps = pa.Table.from_arrays(
            [
                arrow_build.int64s(self._steps[0]),
                arrow_build.int64s(self._steps[1]),
                arrow_build.strings(self._steps[2]),
            ],
            schema=STEPS_SCHEMA,
        )
        return events, steps


def write_bucket(root: str | os.PathLike[str], bucket: int, builder: TableBuilder) -> int:
    """Write one bucket's events and steps files atomically; returns the number of event rows."""
    events, steps = builder.tables()
    for table, data in ((EVENTS_DIR, events), (STEPS_DIR, steps)):
        path = bucket_path(root, table, bucket)
        path.parent.mkdir(parents=True, exist_ok=True)
        sink = pa.BufferOutputStream()
        pq.write_table(data, sink, compression="zstd", row_group_size=1 << 20, write_page_checksum=True)
        atomic_write_bytes(path, sink.getvalue().to_pybytes())
    return int(events.num_rows)


def write_corpus(
    root: str | os.PathLike[str],
    traces: Sequence[Counterexample],
    buckets: int = 1,
    generator: dict[str, Any] | None = None,
) -> Manifest:
    """Write ``traces`` (trace ids 0, 1, ... in order; trace i in bucket i % buckets) as a corpus;
    returns its manifest."""
    Path(root).mkdir(parents=True, exist_ok=True)
    builders = [TableBuilder() for _ in range(buckets)]
    metas = []
    for trace, cx in enumerate(traces):
        bucket = trace % buckets
        n_events, n_steps = builders[bucket].add_trace(trace, _with_boot(cx))
        metas.append(
            TraceMeta(
                trace,
                bucket,
                cx.seed,
                cx.config.to_json(),
                cx.mutants,
                n_events,
                n_steps,
                cx.implementation,
                cx.verdict,
            )
        )
    for bucket, builder in enumerate(builders):
        write_bucket(root, bucket, builder)
    manifest = Manifest(tuple(metas), generator or {})
    write_manifest(root, manifest)
    return manifest


def _with_boot(cx: Counterexample) -> tuple[Step, ...]:
    """The steps of ``cx`` with the header's init events folded into a leading boot step."""
    if not cx.init_events:
        return cx.steps
    from kconform.traces.counterexample import Step
    from kconform.traces.operations import Boot

    if cx.steps and isinstance(cx.steps[0].op, Boot):
        return (Step(Boot(), cx.init_events + cx.steps[0].events), *cx.steps[1:])
    return (Step(Boot(), cx.init_events), *cx.steps)


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def check_file_schema(path: str | os.PathLike[str], schema: pa.Schema, expected: pa.Schema) -> None:
    """CorpusError unless every key column is present and every column has the expected type.
    Event-field columns may be missing (a corpus written before an event kind existed has no
    columns for it; readers see nulls); unknown columns are an error (they would be ignored)."""
    for f in expected:
        index = schema.get_field_index(f.name)
        if index < 0:
            if f.name in KEY_COLUMNS or f.name in STEPS_SCHEMA.names:
                raise CorpusError(path, None, f"column {f.name!r} ({f.type}) is missing")
            continue
        got = schema.field(index).type
        if not got.equals(f.type):
            raise CorpusError(path, None, f"column {f.name!r} has type {got}, expected {f.type}")
    extra = sorted(set(schema.names) - set(expected.names) - {"bucket"})
    if extra:
        raise CorpusError(path, None, f"unknown column(s) {extra} (written by a newer kconform?)")


def open_parquet(path: str | os.PathLike[str], expected: pa.Schema) -> pq.ParquetFile:
    """Open one Parquet file and check its schema from the footer (a truncated or non-Parquet file
    fails here, before any row is read)."""
    try:
        pf = pq.ParquetFile(path)
    except FileNotFoundError:
        raise CorpusError(path, None, "missing (listed in the manifest, not on disk)") from None
    except (OSError, pa.ArrowException) as e:
        raise CorpusError(path, None, f"not a readable Parquet file (truncated or corrupt?): {e}") from None
    check_file_schema(path, pf.schema_arrow, expected)
    return pf


def present_columns(root: str | os.PathLike[str], buckets: Iterable[int]) -> set[str]:
    """The event-table columns present in at least one of the buckets' files (footers only)."""
    names: set[str] = set()
    for bucket in buckets:
        names.update(pq.read_schema(bucket_path(root, EVENTS_DIR, bucket)).names)
    return names


@dataclass
class ReadReport:
    """What a multi-file read got through: traces read, and the errors of the files it skipped."""

    traces_read: int = 0
    events_read: int = 0
    errors: list[CorpusError] = field(default_factory=list)
    skipped_traces: list[int] = field(default_factory=list)


def read_traces(
    root: str | os.PathLike[str], manifest: Manifest, report: ReadReport, traces: Iterable[int] | None = None
) -> Iterator[tuple[TraceMeta, Counterexample]]:
    """Every trace of the corpus (or the listed ids) with its manifest entry, as a Counterexample with
    verdict "pass" (or the recorded one), in bucket order, then trace order. A bucket file that cannot be read, or a row
    that is not a valid event, is recorded in ``report.errors`` (file and row) and its traces are
    skipped; the other buckets are still read."""
    wanted = None if traces is None else set(traces)
    metas = manifest.by_trace()
    for bucket in manifest.buckets:
        ids = [t.trace for t in manifest.traces if t.bucket == bucket and (wanted is None or t.trace in wanted)]
        if not ids:
            continue
        try:
            cxs = _read_bucket(root, bucket, {i: metas[i] for i in ids})
        except CorpusError as e:
            report.errors.append(e)
            report.skipped_traces.extend(ids)
            continue
        for trace, cx in zip(ids, cxs, strict=True):
            report.traces_read += 1
            report.events_read += sum(len(s.events) for s in cx.steps)
            yield metas[trace], cx


def _read_bucket(root: str | os.PathLike[str], bucket: int, metas: dict[int, TraceMeta]) -> list[Counterexample]:
    # Imported here, not at the top: a generating process writes corpora and never reads one back
    # (the counterexample module pulls in every slice's invariants, networkx among them).
    from kconform.traces.counterexample import Counterexample, Step, make_verdict

    events_path = bucket_path(root, EVENTS_DIR, bucket)
    steps_path = bucket_path(root, STEPS_DIR, bucket)
    ev_file = open_parquet(events_path, arrow_schema())
    st_file = open_parquet(steps_path, STEPS_SCHEMA)
    try:
        ev_table = ev_file.read()
        st_table = st_file.read()
    except (OSError, pa.ArrowException) as e:
        raise CorpusError(events_path, None, f"cannot read the rows (truncated or corrupt?): {e}") from None
    ops: dict[int, list[Any]] = {t: [] for t in metas}
    for row, (trace, step, op_text) in enumerate(
        zip(st_table["trace"].to_pylist(), st_table["step"].to_pylist(), st_table["op"].to_pylist(), strict=True)
    ):
        if trace not in ops:
            continue
        if step != len(ops[trace]):
            raise CorpusError(steps_path, row, f"trace {trace}: expected step {len(ops[trace])}, got {step}")
        try:
            ops[trace].append(operation_from_json(json.loads(op_text)))
        except (json.JSONDecodeError, TypeError, OperationDecodeError) as e:
            raise CorpusError(steps_path, row, f"trace {trace} step {step}: bad operation: {e}") from None
    events: dict[int, list[list[Event]]] = {t: [[] for _ in ops[t]] for t in metas}
    decoder = RowDecoder(events_path)
    last_pos: dict[int, int] = {}
    last_step: dict[int, int] = {}
    for row, values in enumerate(ev_table.to_pylist()):
        trace = values["trace"]
        if trace not in events:
            continue
        pos = values["pos"]
        if pos != last_pos.get(trace, -1) + 1:
            raise CorpusError(
                events_path, row, f"trace {trace}: expected position {last_pos.get(trace, -1) + 1}, got {pos}"
            )
        last_pos[trace] = pos
        step = values["step"]
        if not 0 <= step < len(events[trace]) or step < last_step.get(trace, 0):
            raise CorpusError(events_path, row, f"trace {trace} position {pos}: step {step} out of order or unknown")
        last_step[trace] = step
        events[trace][step].append(decoder.decode(row, values))
    out = []
    for trace, meta in metas.items():
        if last_pos.get(trace, -1) + 1 != meta.events:
            raise CorpusError(
                events_path, None, f"trace {trace}: {last_pos.get(trace, -1) + 1} events, manifest says {meta.events}"
            )
        steps = tuple(Step(op, tuple(evs)) for op, evs in zip(ops[trace], events[trace], strict=True))
        verdict = meta.verdict or make_verdict("pass", "", "recorded trace from a corpus; not judged", -1)
        out.append(
            Counterexample(
                config=meta.configuration(),
                seed=meta.seed,
                mutants=meta.mutants,
                implementation=meta.implementation,
                verdict=verdict,
                steps=steps,
            )
        )
    return out


class RowDecoder:
    """Turns a row dict of the events table back into an Event, or raises CorpusError(file, row)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self._fields = {kind: event_fields(cls) for kind, cls in EVENT_TYPES.items()}

    def decode(self, row: int, values: dict[str, Any]) -> Event:
        kind = values.get("kind")
        cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise CorpusError(self.path, row, f"unknown event kind {kind!r} (known: {', '.join(sorted(EVENT_TYPES))})")
        kwargs: dict[str, Any] = {}
        for name, typ in self._fields[cls.kind]:
            value = values.get(name)
            if value is None:
                raise CorpusError(self.path, row, f"{kind}: field {name!r} is null")
            if struct_class(typ) is None and typ.startswith("tuple["):
                if None in value:
                    raise CorpusError(self.path, row, f"{kind}: field {name!r} holds a null")
                value = tuple(value)
            elif (cls_ := struct_class(typ)) is not None:
                if any(e is None or None in e.values() for e in value):
                    raise CorpusError(self.path, row, f"{kind}: field {name!r} holds a null element or element field")
                value = tuple(cls_(**e) for e in value)
            kwargs[name] = value
        return cls(**kwargs)


# The manifest reader is the validation boundary's (it builds this module's classes): see
# kconform.traces.inputs.corpus, imported on the first call (it imports this module, and pyarrow.compute,
# which a generating process does not need).


def read_manifest(root: str | os.PathLike[str]) -> Manifest:
    """The manifest of the corpus at ``root`` (``inputs.corpus.read_manifest``): CorpusError naming
    the file, the field and the problem."""
    from kconform.traces.inputs.corpus import read_manifest as read

    return read(root)


def check_corpus_files(root: str | os.PathLike[str], manifest: Manifest) -> tuple[list[int], list[CorpusError]]:
    """Every check of the corpus short of an engine (hashes, foreign files, footers, schema, every row):
    (buckets that passed, errors); ``inputs.corpus.validate_corpus``."""
    from kconform.traces.inputs.corpus import validate_corpus

    return validate_corpus(root, manifest)
