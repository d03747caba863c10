"""A Parquet corpus and its manifest, checked completely before any engine (Spark, DuckDB) reads it.

Every check needs no engine, so a damaged corpus costs seconds, never a Spark job; each failure is a
``CorpusError`` (an ``InputError``) naming the file, the row or line, and the field:

1. the manifest: JSON as ``jsontext`` accepts it, its own schema (unknown keys, types, ranges), at
   least one trace and one event, trace ids unique, every configuration valid, the ``checksum``
   over its own content (so an edited manifest is refused), a ``files`` entry (size and SHA-256)
   for every part file of every bucket;
2. the directory: no file the manifest does not list (Spark would read a stray ``.crc`` or part
   file, DuckDB might not);
3. each part file: its size and SHA-256 as the manifest says (any flipped, cut or appended byte),
   then its footer and schema: the columns' names (none twice), types and nullability;
4. each part file's rows (pyarrow, batch by batch): key columns non-null; every row's trace one of
   the manifest's traces of that bucket; positions 0, 1, 2, ... and steps 0 ≤ step < the trace's
   steps, in order; per trace the manifest's event and step counts; known kinds; each kind's own
   fields present and every other field null; Kafka's ranges (``limits``); offsets no larger than
   the trace could have written; enums; node roles and ids within the trace's brokers; partition,
   transactional id and group names of the configuration; every step's operation as a JSON Lines
   step's (strict JSON, the operation schema, the configuration's ids).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kconform.model.config import ConfigError
from kconform.model.configs import AnyConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.events import EVENT_TYPES
from kconform.traces.inputs import jsontext, limits, references
from kconform.traces.inputs.checksums import file_digest as file_digest
from kconform.traces.inputs.checksums import manifest_checksum as manifest_checksum
from kconform.traces.inputs.checksums import part_files as part_files
from kconform.traces.inputs.checksums import sealed as sealed
from kconform.traces.inputs.config import parse_config
from kconform.traces.inputs.schemacheck import SchemaProblem, check_def
from kconform.traces.schema import KEY_COLUMNS, event_fields, struct_class, struct_fields

if TYPE_CHECKING:
    from kconform.traces.corpus import CorpusError, Manifest, TraceMeta

MAX_MANIFEST_BYTES = 256 << 20
"""Largest manifest read (a 100M-event corpus of 20k-event traces has about 2 MB)."""
MAX_BUCKET = 1 << 20
BATCH_ROWS = 1 << 20
"""Rows checked at once (bounds memory on large buckets)."""

_TRACE_KEYS = ("trace", "bucket", "seed", "config", "mutants", "events", "steps", "implementation", "verdict")
_MANIFEST_KEYS = ("format", "schema_version", "events", "generator", "traces", "files", "checksum")


def _error(
    path: str | os.PathLike[str], row: int | None, message: str, unit: str = "row", field: str = ""
) -> CorpusError:
    from kconform.traces.corpus import CorpusError

    return CorpusError(path, row, message, unit=unit, field=field)


# --------------------------------------------------------------------------------------------
# The manifest
# --------------------------------------------------------------------------------------------


def _manifest_schema_problem(obj: dict[str, Any]) -> tuple[str, str] | None:
    missing = [k for k in _MANIFEST_KEYS if k not in obj]
    if missing:
        hint = (
            " (written by an older kconform, without content hashes: generate it again)"
            if "checksum" in missing
            else ""
        )
        return "", f"missing {', '.join(repr(k) for k in missing)}{hint}"
    unknown = sorted(set(obj) - set(_MANIFEST_KEYS))
    if unknown:
        return "", f"unknown key(s) {unknown}"
    if not isinstance(obj["generator"], dict):
        return "generator", "should be an object"
    if not isinstance(obj["files"], dict):
        return "files", "should be an object"
    for name, entry in obj["files"].items():
        ok = isinstance(entry, dict) and set(entry) == {"bytes", "sha256"}
        if not ok or not isinstance(entry["sha256"], str) or type(entry["bytes"]) is not int:
            return f"files.{name}", 'should be {"bytes": N, "sha256": HEX}'
    if not isinstance(obj["traces"], list) or not obj["traces"]:
        return "traces", "should be a non-empty list of trace entries (a corpus without traces is never a pass)"
    if type(obj["events"]) is not int or obj["events"] < 1:
        return "events", f"should be a positive integer, got {obj['events']!r}"
    return None


def _trace_entry(path: Path, index: int, obj: Any) -> tuple[TraceMeta, AnyConfig]:
    from kconform.traces.corpus import TraceMeta

    where = f"traces[{index}]"

    def fail(field: str, message: str) -> CorpusError:
        return _error(path, None, message, field=f"{where}.{field}" if field else where)

    if not isinstance(obj, dict):
        raise fail("", "a trace entry is a JSON object")
    unknown = sorted(set(obj) - set(_TRACE_KEYS))
    if unknown:
        raise fail("", f"unknown key(s) {unknown}")
    bounds = {
        "trace": (0, limits.INT64_MAX),
        "bucket": (0, MAX_BUCKET),
        "seed": (-(2**63), limits.INT64_MAX),
        "events": (1, limits.INT64_MAX),
        "steps": (1, limits.MAX_STEPS),
    }
    ints = {}
    for key, (lo, hi) in bounds.items():
        value = obj.get(key)
        if type(value) is not int or not lo <= value <= hi:
            raise fail(key, f"should be an integer in {lo}..{hi}, got {value!r}")
        ints[key] = value
    mutants = obj.get("mutants")
    if not (isinstance(mutants, list) and all(isinstance(m, str) and len(m) <= limits.MAX_NAME_CHARS for m in mutants)):
        raise fail("mutants", f"should be a list of names, got {mutants!r}")
    implementation = obj.get("implementation", "reference")
    if not isinstance(implementation, str) or len(implementation) > limits.MAX_NAME_CHARS:
        raise fail("implementation", "should be a name")
    try:
        cfg = parse_config(obj.get("config"))
    except ConfigError as e:
        raise fail("config", f"bad config: {e}") from None
    verdict = obj.get("verdict")
    if verdict is not None:
        problem = _verdict_problem(verdict)
        if problem is not None:
            raise fail(f"verdict.{problem[0]}" if problem[0] else "verdict", problem[1])
    meta = TraceMeta(
        trace=ints["trace"],
        bucket=ints["bucket"],
        seed=ints["seed"],
        config=obj["config"],
        mutants=tuple(mutants),
        events=ints["events"],
        steps=ints["steps"],
        implementation=implementation,
        verdict=verdict,
    )
    return meta, cfg


def _verdict_problem(verdict: Any) -> tuple[str, str] | None:
    from kconform.traces.inputs.schemacheck import check
    from kconform.traces.schema import json_schema

    schema = json_schema()["$defs"]["header"]["properties"]["verdict"]
    try:
        check(verdict, schema)
    except SchemaProblem as e:
        return e.path, e.message
    return None


def read_manifest(root: str | os.PathLike[str]) -> Manifest:
    """Read and validate ``root/manifest.json`` (step 1 of the module docstring)."""
    from kconform.traces.corpus import FORMAT, MANIFEST, Manifest
    from kconform.traces.schema import SchemaVersionError, check_schema_version

    path = Path(root) / MANIFEST
    if not Path(root).is_dir():
        raise _error(root, None, "not a corpus directory (it does not exist or is not a directory)")
    try:
        text = jsontext.read_bytes(path, MAX_MANIFEST_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise _error(path, None, f"missing: {root} is not a complete corpus (no {MANIFEST})") from None
    except (OSError, UnicodeDecodeError, jsontext.JsonTextError) as e:
        raise _error(path, None, f"cannot read: {e}") from None
    try:
        obj = jsontext.loads(text)
    except jsontext.JsonTextError as e:
        raise _error(path, 1 + text.count("\n", 0, _offset(text, e)), str(e), unit="line") from None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        got = obj.get("format") if isinstance(obj, dict) else type(obj).__name__
        raise _error(path, None, f"not a {FORMAT} manifest (format {got!r})")
    try:
        version = check_schema_version(obj.get("schema_version"), str(path))
    except SchemaVersionError as e:
        raise _error(path, None, str(e).removeprefix(f"{path}: "), field="schema_version") from None
    problem = _manifest_schema_problem(obj)
    if problem is not None:
        raise _error(path, None, problem[1], field=problem[0])
    entries = [_trace_entry(path, i, t) for i, t in enumerate(obj["traces"])]
    metas = tuple(m for m, _ in entries)
    ids = [m.trace for m in metas]
    if len(set(ids)) != len(ids):
        raise _error(path, None, "trace ids are not unique", field="traces")
    if sum(m.events for m in metas) != obj["events"]:
        raise _error(path, None, f"{obj['events']} but the traces have {sum(m.events for m in metas)}", field="events")
    buckets = tuple(sorted({m.bucket for m in metas}))
    expected = set(part_files(buckets))
    if set(obj["files"]) != expected:
        diff = sorted(expected.symmetric_difference(obj["files"]))
        raise _error(path, None, f"lists other part files than the traces' buckets need: {diff[:4]}", field="files")
    if obj["checksum"] != manifest_checksum(obj):
        raise _error(
            path, None, "does not match the manifest's content: it was changed after it was written", field="checksum"
        )
    return Manifest(tuple(sorted(metas, key=lambda m: m.trace)), obj["generator"], version, obj["files"])


def _offset(text: str, error: jsontext.JsonTextError) -> int:
    """Where in ``text`` the error is, as far as it says (column of a one-line document)."""
    return max(0, (error.column or 1) - 1) if "\n" not in text else 0


# --------------------------------------------------------------------------------------------
# The directory and the part files
# --------------------------------------------------------------------------------------------


def foreign_files(root: Path, manifest: Manifest) -> list[str]:
    """Files and directories under ``root`` the manifest does not account for."""
    from kconform.traces.corpus import MANIFEST

    wanted = {MANIFEST, *part_files(manifest.buckets)}
    dirs = {str(Path(name).parent) for name in wanted} | {str(Path(name).parent.parent) for name in wanted}
    out = []
    for current, subdirs, files in os.walk(root):
        rel = Path(current).relative_to(root)
        for name in files:
            if str(rel / name) not in wanted:
                out.append(str(rel / name))
        for name in subdirs:
            if str(rel / name) not in dirs:
                out.append(str(rel / name) + "/")
        subdirs[:] = [d for d in subdirs if str(rel / d) in dirs]
    return sorted(out)


def _check_digest(root: Path, name: str, expected: dict[str, Any]) -> CorpusError | None:
    path = root / name
    try:
        got = file_digest(path)
    except FileNotFoundError:
        return _error(path, None, "missing (listed in the manifest, not on disk)")
    except OSError as e:
        return _error(path, None, f"cannot read: {e.strerror or e}")
    if got["bytes"] != expected["bytes"]:
        return _error(
            path, None, f"{got['bytes']:,} bytes, the manifest says {expected['bytes']:,} (cut or appended to?)"
        )
    if got["sha256"] != expected["sha256"]:
        return _error(path, None, "its SHA-256 differs from the manifest's: the file was changed after it was written")
    return None


def check_schema(path: Path, schema: pa.Schema, expected: pa.Schema, optional_missing: bool) -> None:
    """CorpusError unless ``schema`` has ``expected``'s columns (each once) with the same types
    and nullability; event-field columns may be missing when ``optional_missing``."""
    names = schema.names
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise _error(path, None, f"column(s) {twice} appear more than once", field=twice[0])
    for f in expected:
        index = schema.get_field_index(f.name)
        if index < 0:
            if optional_missing and f.name not in KEY_COLUMNS:
                continue
            raise _error(path, None, f"column {f.name!r} ({f.type}) is missing", field=f.name)
        got = schema.field(index)
        if not got.type.equals(f.type):
            raise _error(path, None, f"column {f.name!r} has type {got.type}, expected {f.type}", field=f.name)
        if got.nullable and not f.nullable:
            raise _error(path, None, f"column {f.name!r} is nullable; the schema says it never is null", field=f.name)
    extra = sorted(set(names) - set(expected.names) - {"bucket"})
    if extra:
        raise _error(path, None, f"unknown column(s) {extra} (written by a newer kconform?)", field=extra[0])


def open_part(path: Path, expected: pa.Schema, optional_missing: bool) -> pq.ParquetFile:
    """Open one part file (footer) and check its schema."""
    try:
        pf = pq.ParquetFile(path, page_checksum_verification=True)
    except FileNotFoundError:
        raise _error(path, None, "missing (listed in the manifest, not on disk)") from None
    except (OSError, pa.ArrowException) as e:
        raise _error(path, None, f"not a readable Parquet file (truncated or corrupt?): {e}") from None
    check_schema(path, pf.schema_arrow, expected, optional_missing)
    return pf


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------


@dataclass
class _Traces:
    """Per-trace facts of one bucket as arrays indexed by a dense trace index."""

    ids: np.ndarray
    events: np.ndarray
    steps: np.ndarray
    brokers: np.ndarray
    offset_bound: np.ndarray
    known: np.ndarray
    """Whether the trace's slice is one whose ids the checks know (references.known_slice)."""

    def index(self, trace: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.ids, trace)


def _trace_facts(metas: list[TraceMeta], configs: dict[int, AnyConfig]) -> _Traces:
    metas = sorted(metas, key=lambda m: m.trace)
    events = np.array([m.events for m in metas], dtype=np.int64)
    txn = np.array([isinstance(configs[m.trace], TxnConfig) for m in metas], dtype=bool)
    # A replication trace appends at most one record per event; an exactly-once one at most a batch.
    bound = np.where(txn, events * (limits.MAX_BATCH_RECORDS + 1), events)
    return _Traces(
        ids=np.array([m.trace for m in metas], dtype=np.int64),
        events=events,
        steps=np.array([m.steps for m in metas], dtype=np.int64),
        brokers=np.array([len(references.brokers(configs[m.trace])) for m in metas], dtype=np.int64).clip(0, 2**31),
        offset_bound=bound,
        known=np.array([references.known_slice(configs[m.trace]) for m in metas], dtype=bool),
    )


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


class _EventChecker:
    """The row checks of one events part file, batch by batch (carrying order state across)."""

    def __init__(self, path: Path, facts: _Traces, names: dict[str, set[str]], columns: list[str]) -> None:
        self.path = path
        self.facts = facts
        self.names = names
        self.kinds = sorted(EVENT_TYPES)
        self.kind_code = {k: i for i, k in enumerate(self.kinds)}
        self.own = {k: {n for n, _ in event_fields(EVENT_TYPES[k])} for k in self.kinds}
        self.columns = [c for c in columns if c not in KEY_COLUMNS and c != "bucket"]
        self.row0 = 0
        self.prev: tuple[int, int, int] | None = None  # trace, pos, step of the last row checked
        self.last_pos = np.full(len(facts.ids), -1, dtype=np.int64)

    def fail(self, row: int, message: str, field: str = "") -> CorpusError:
        return _error(self.path, self.row0 + row, message, field=field)

    def check(self, batch: pa.RecordBatch) -> None:
        for name in KEY_COLUMNS:
            col = batch.column(name)
            if col.null_count:
                raise self.fail(_first(np.asarray(col.is_null())), "null in a key column", name)
        trace = np.asarray(batch.column("trace"), dtype=np.int64)
        pos = np.asarray(batch.column("pos"), dtype=np.int64)
        step = np.asarray(batch.column("step"), dtype=np.int64)
        idx = self.facts.index(trace)
        known = (idx < len(self.facts.ids)) & (self.facts.ids[np.minimum(idx, len(self.facts.ids) - 1)] == trace)
        if not known.all():
            row = _first(~known)
            raise self.fail(row, f"trace {trace[row]} is not one of the manifest's traces of this bucket", "trace")
        self._order(trace, pos, step, idx)
        kind = batch.column("kind")
        codes = np.asarray(pc.index_in(kind, value_set=pa.array(self.kinds)).fill_null(-1), dtype=np.int64)
        if (codes < 0).any():
            row = _first(codes < 0)
            raise self.fail(row, f"unknown event kind {kind[row].as_py()!r} (known: {', '.join(self.kinds)})", "kind")
        present = {self.kinds[c] for c in np.unique(codes)}
        self._node(batch, codes, present, idx)
        for name in self.columns:
            self._column(batch, name, codes, present, idx)
        self.row0 += batch.num_rows

    def _order(self, trace: np.ndarray, pos: np.ndarray, step: np.ndarray, idx: np.ndarray) -> None:
        if self.prev is not None:
            trace = np.concatenate(([self.prev[0]], trace))
            pos = np.concatenate(([self.prev[1]], pos))
            step = np.concatenate(([self.prev[2]], step))
            shift = 1
        else:
            trace = np.concatenate(([-1], trace))
            pos = np.concatenate(([-1], pos))
            step = np.concatenate(([0], step))
            shift = 1
        same = trace[1:] == trace[:-1]
        ok = np.where(same, pos[1:] == pos[:-1] + 1, (pos[1:] == 0) & (trace[1:] > trace[:-1]))
        if not ok.all():
            row = _first(~ok)
            want = "the next position" if same[row] else "position 0 of a trace with a higher id"
            raise self.fail(
                row, f"trace {trace[row + 1]} position {pos[row + 1]}: expected {want} (sorted by trace, pos)", "pos"
            )
        s = step[shift:]
        ok_step = (s >= 0) & (s < self.facts.steps[idx]) & np.where(same, step[1:] >= step[:-1], True)
        if not ok_step.all():
            row = _first(~ok_step)
            raise self.fail(row, f"trace {trace[row + 1]}: step {s[row]} out of order or not one of its steps", "step")
        np.maximum.at(self.last_pos, idx, pos[shift:])
        self.prev = (int(trace[-1]), int(pos[-1]), int(step[-1]))

    def _node(self, batch: pa.RecordBatch, codes: np.ndarray, present: set[str], idx: np.ndarray) -> None:
        node = np.asarray(batch.column("node"), dtype=np.int64)
        role = np.array([limits.NODE_ROLES.get(k, limits.BROKER) for k in self.kinds])[codes]
        brokers = self.facts.brokers[idx]
        ok = np.where(
            role == limits.CONTROLLER,
            node == -1,
            np.where(
                role == limits.CONSUMER,
                (node <= references.CONSUMER_NODE_BASE) & (node > references.CONSUMER_NODE_BASE - limits.MAX_CLIENTS),
                (node >= 0) & (node < brokers),
            ),
        )
        ok |= ~self.facts.known[idx]
        if not ok.all():
            row = _first(~ok)
            k = self.kinds[codes[row]]
            raise self.fail(
                row,
                f"{k}: node {node[row]} cannot run this handler (role {role[row]}, brokers 0..{brokers[row] - 1})",
                "node",
            )

    def _column(self, batch: pa.RecordBatch, name: str, codes: np.ndarray, present: set[str], idx: np.ndarray) -> None:
        col = batch.column(name)
        owns = np.array([name in self.own[k] for k in self.kinds])[codes]
        valid = np.asarray(col.is_valid(), dtype=bool)
        if not (valid == owns).all():
            row = _first(valid != owns)
            k = self.kinds[codes[row]]
            what = "is null" if owns[row] else f"is set, but {k} has no such field"
            raise self.fail(row, f"{k}: {what}", name)
        if not owns.any():
            return
        typ = col.type
        if pa.types.is_list(typ):
            self._list(col, name, codes, idx)
        elif pa.types.is_integer(typ):
            self._ints(np.asarray(col.fill_null(0), dtype=np.int64), name, codes, owns, idx)
        elif pa.types.is_string(typ):
            self._strings(col, name, codes, owns)

    def _ints(
        self,
        values: np.ndarray,
        name: str,
        codes: np.ndarray,
        owns: np.ndarray,
        idx: np.ndarray,
        struct: str = "",
        rows: np.ndarray | None = None,
    ) -> None:
        """Ranges of one int column (or struct field: ``rows`` maps its elements to rows)."""

        def fail(i: int, message: str, label: str) -> CorpusError:
            return self.fail(int(rows[i]) if rows is not None else i, message, label)

        if struct:
            rng = limits.STRUCT_RANGES[(struct, name)]
            lo, hi = np.full(len(values), rng.lo), np.full(len(values), rng.hi)
            label = f"{struct}.{name}"
        else:
            ranges = [limits.field_range(k, name) or limits.Range(-(2**63), limits.INT64_MAX, "") for k in self.kinds]
            lo = np.array([r.lo for r in ranges], dtype=np.int64)[codes]
            hi = np.array([r.hi for r in ranges], dtype=np.int64)[codes]
            label = name
        bad = owns & ((values < lo) | (values > hi))
        if bad.any():
            row = _first(bad)
            raise fail(row, f"{values[row]} is outside {lo[row]}..{hi[row]}", label)
        kind_of = limits.STRUCT_RANGES.get((struct, name)) if struct else limits.FIELD_RANGES.get(name)
        if kind_of is limits.OFFSET:
            bound = self.facts.offset_bound[idx]
            over = owns & (values > bound)
            if over.any():
                row = _first(over)
                events = self.facts.events[idx][row]
                raise fail(row, f"offset {values[row]}: more than a trace of {events} events can write", label)
        if name in ("broker", "follower", "leader") and not struct:
            brokers = self.facts.brokers[idx]
            allowed = (values >= (-1 if name == "leader" else 0)) & (values < brokers) | ~self.facts.known[idx]
            if (owns & ~allowed).any():
                row = _first(owns & ~allowed)
                raise fail(row, f"broker {values[row]} is not one of the brokers 0..{brokers[row] - 1}", label)

    def _strings(self, col: pa.Array, name: str, codes: np.ndarray, owns: np.ndarray) -> None:
        lengths = np.asarray(pc.utf8_length(col).fill_null(0), dtype=np.int64)
        if (lengths > limits.MAX_NAME_CHARS).any():
            row = _first(lengths > limits.MAX_NAME_CHARS)
            raise self.fail(row, f"a string of {lengths[row]} characters (at most {limits.MAX_NAME_CHARS})", name)
        for kind in {k for (k, f) in limits.ENUMS if f == name}:
            self._allowed(col, name, codes == self.kind_code[kind], limits.ENUMS[(kind, name)])
        if name in self.names:
            self._allowed(col, name, owns, tuple(sorted(self.names[name])))

    def _allowed(self, col: pa.Array, name: str, mask: np.ndarray, allowed: tuple[str, ...]) -> None:
        ok = np.asarray(pc.is_in(col, value_set=pa.array(allowed, pa.string())).fill_null(False), dtype=bool)
        bad = mask & ~ok
        if bad.any():
            row = _first(bad)
            raise self.fail(row, f"{col[row].as_py()!r} is not one of {', '.join(repr(a) for a in allowed)}", name)

    def _list(self, col: pa.Array, name: str, codes: np.ndarray, idx: np.ndarray) -> None:
        flat = pc.list_flatten(col)
        parents = np.asarray(pc.list_parent_indices(col), dtype=np.int64)
        if flat.null_count:
            raise self.fail(int(parents[_first(np.asarray(flat.is_null()))]), "holds a null element", name)
        pidx = idx[parents]
        everywhere = np.ones(len(flat), dtype=bool)
        if pa.types.is_struct(flat.type):
            typ = next(c.type for c in _columns() if c.name == name)
            cls = struct_class(typ)
            assert cls is not None
            for i, (field, ftype) in enumerate(struct_fields(cls)):
                child = flat.field(i)
                if child.null_count:
                    raise self.fail(
                        int(parents[_first(np.asarray(child.is_null()))]), "holds a null", f"{name}.{field}"
                    )
                if ftype == "int":
                    values = np.asarray(child, dtype=np.int64)
                    self._ints(values, field, codes[parents], everywhere, pidx, cls.__name__, parents)
                elif ftype == "str" and name in self.names:
                    self._allowed(child, name, everywhere, tuple(sorted(self.names[name])))
        elif pa.types.is_integer(flat.type):
            values = np.asarray(flat, dtype=np.int64)
            rng = limits.FIELD_RANGES[name]
            bad = (values < rng.lo) | (values > rng.hi)
            if name == "isr":
                bad |= ((values < 0) | (values >= self.facts.brokers[pidx])) & self.facts.known[pidx]
            if bad.any():
                row = _first(bad)
                raise self.fail(int(parents[row]), f"element {values[row]} is outside the allowed ids / range", name)
        elif pa.types.is_string(flat.type) and name in self.names:
            ok = np.asarray(pc.is_in(flat, value_set=pa.array(sorted(self.names[name]), pa.string())), dtype=bool)
            if not ok.all():
                row = _first(~ok)
                raise self.fail(int(parents[row]), f"{flat[row].as_py()!r} is not a name of the configuration", name)


def _columns() -> Any:
    from kconform.traces.schema import columns

    return columns()


def _config_names(configs: list[AnyConfig]) -> dict[str, set[str]]:
    """Per string column, the names the corpus's configurations allow (txn corpora only)."""
    names: dict[str, set[str]] = {}
    txn = [c for c in configs if isinstance(c, TxnConfig)]
    if not txn:
        return names
    for cfg in txn:
        names.setdefault("partition", set()).update(cfg.log_partitions)
        names.setdefault("partitions", set()).update(cfg.log_partitions)
        names.setdefault("offsets", set()).update(cfg.log_partitions)
        names.setdefault("state_partition", set()).update(cfg.state_partitions)
        names.setdefault("txn_id", {""}).update(cfg.transactional_ids)
        names.setdefault("group", set()).update(cfg.groups)
    return names


def _check_steps(path: Path, pf: pq.ParquetFile, facts: _Traces, configs: dict[int, AnyConfig]) -> None:
    prev: tuple[int, int] = (-1, -1)
    row0 = 0
    count = np.zeros(len(facts.ids), dtype=np.int64)
    for batch in pf.iter_batches(batch_size=BATCH_ROWS):
        for name in ("trace", "step", "op"):
            if batch.column(name).null_count:
                raise _error(path, row0 + _first(np.asarray(batch.column(name).is_null())), "null", field=name)
        traces = batch.column("trace").to_pylist()
        steps = batch.column("step").to_pylist()
        ops = batch.column("op").to_pylist()
        checked: dict[tuple[int, str], None] = {}
        for row, (trace, step, text) in enumerate(zip(traces, steps, ops, strict=True)):
            i = int(np.searchsorted(facts.ids, trace))
            if i >= len(facts.ids) or facts.ids[i] != trace:
                raise _error(
                    path, row0 + row, f"trace {trace} is not one of the manifest's traces of this bucket", field="trace"
                )
            expected = prev[1] + 1 if trace == prev[0] else 0
            if step != expected or (trace != prev[0] and trace < prev[0]):
                raise _error(path, row0 + row, f"trace {trace}: expected step {expected}, got {step}", field="step")
            prev = (trace, step)
            count[i] += 1
            cfg = configs[trace]
            key = (id(cfg), text)
            if key in checked:
                continue
            checked[key] = None
            problem = _op_problem(text, cfg, step)
            if problem is not None:
                raise _error(path, row0 + row, f"trace {trace} step {step}: {problem[1]}", field=problem[0])
        row0 += batch.num_rows
    bad = count != facts.steps
    if bad.any():
        i = _first(bad)
        raise _error(
            path, None, f"trace {facts.ids[i]}: {count[i]} steps, the manifest says {facts.steps[i]}", field="step"
        )


def _op_problem(text: str, cfg: AnyConfig, step: int) -> tuple[str, str] | None:
    try:
        op = jsontext.loads(text)
    except jsontext.JsonTextError as e:
        return "op", str(e)
    try:
        check_def(op, "operation")
    except SchemaProblem as e:
        return f"op.{e.path}" if e.path else "op", e.message
    if op["op"] == "boot" and step != 0:
        return "op", "boot is step 0 only"
    problem = references.operation_problem(op, cfg)
    return None if problem is None else (f"op.{problem[0]}", problem[1])


def check_bucket(root: Path, bucket: int, manifest: Manifest, configs: dict[int, AnyConfig]) -> None:
    """Steps 3 and 4 of the module docstring for one bucket; CorpusError on the first problem."""
    from kconform.traces.corpus import EVENTS_DIR, STEPS_DIR, STEPS_SCHEMA, arrow_schema, bucket_path

    files = manifest.files
    for table in (EVENTS_DIR, STEPS_DIR):
        name = f"{table}/bucket={bucket}/part-0.parquet"
        error = _check_digest(root, name, files[name])
        if error is not None:
            raise error
    metas = [t for t in manifest.traces if t.bucket == bucket]
    facts = _trace_facts(metas, configs)
    events_path = bucket_path(root, EVENTS_DIR, bucket)
    pf = open_part(events_path, arrow_schema(), optional_missing=True)
    checker = _EventChecker(events_path, facts, _config_names(list(configs.values())), pf.schema_arrow.names)
    try:
        for batch in pf.iter_batches(batch_size=BATCH_ROWS):
            checker.check(batch)
    except (OSError, pa.ArrowException) as e:
        raise _error(events_path, None, f"cannot read the rows (truncated or corrupt?): {e}") from None
    counts = checker.last_pos + 1
    bad = counts != facts.events
    if bad.any():
        i = _first(bad)
        raise _error(
            events_path,
            None,
            f"trace {facts.ids[i]}: {counts[i]} events, the manifest says {facts.events[i]}",
            field="trace",
        )
    steps_path = bucket_path(root, STEPS_DIR, bucket)
    try:
        _check_steps(steps_path, open_part(steps_path, STEPS_SCHEMA, optional_missing=False), facts, configs)
    except (OSError, pa.ArrowException) as e:
        raise _error(steps_path, None, f"cannot read the rows (truncated or corrupt?): {e}") from None


def validate_corpus(root: str | os.PathLike[str], manifest: Manifest) -> tuple[list[int], list[CorpusError]]:
    """Steps 2-4 of the module docstring: (the buckets that passed, the errors), every bucket
    checked. A corpus with any error must not be mined or converted (exit 2)."""
    from kconform.traces.corpus import CorpusError

    base = Path(root)
    errors = [
        _error(base / name, None, "a file the manifest does not list (Spark would read it too): remove it")
        for name in foreign_files(base, manifest)
    ]
    configs = {t.trace: parse_config(t.config) for t in manifest.traces}
    good = []
    for bucket in manifest.buckets:
        try:
            check_bucket(base, bucket, manifest, configs)
        except CorpusError as e:
            errors.append(e)
            continue
        good.append(bucket)
    return good, errors
