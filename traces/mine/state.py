"""The replication slice's per-node state, computed in one vectorised pass per batch of whole traces.

``node_state(events)`` takes the events of whole traces (any order; Arrow, the ``ev`` columns of
``STATE_INPUTS``) and returns the ``st`` table the replication invariants read: every event with
the state of its node *after* it, carried forward within one broker incarnation (a restart starts
a new one). It is the same relation as the SQL views ``s1``/``s2``/``st`` of
traces.mine.replication (``VIEWS``, kept as the reference plan; tests/test_mine_state.py checks
that both give the same rows on planted and hand-made corpora), computed without a window: what
each event sets is computed in row order; the rows are put in (trace, node, position) order once (a
stable radix sort by node when they come sorted by trace and position, as a corpus file's do), and
the carried state is forward fills and running maxima of row numbers in that order. A request's
fields reach its answers through a table keyed by (trace, message id), built from the requests'
rows only (2026-11-27: 0.45 → 0.23 CPU-s for the 646,493 rows a 1M-event file keeps).

How a kind's fields become node state follows the tables of traces.mine.replication
(``HW_AFTER``, ``LEO_AFTER``, next to the event docstrings they transcribe): the HW after a
Fetch answer (KIP-101, the leader's HW it carries), the LEO after an append or a truncation
(KIP-101 / KIP-279), the role and leader epoch a LeaderAndIsr / metadata change installs (KIP-320),
and the ISR a leader adopts from an AlterPartition answer only when its partition epoch is newer
than any it has seen (KIP-497, AlterPartitionManager).

``state_batches`` is the streaming form Spark runs through ``mapInArrow`` over a corpus file read
as one partition: it holds at most one chunk plus one trace, and refuses (ValueError) a partition
in which a trace's rows are not contiguous, so a plan that split a trace could never give a
silently wrong verdict.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kconform.traces.arrow_build import strings

STATE_INPUTS: tuple[str, ...] = (
    "trace",
    "pos",
    "node",
    "kind",
    "outcome",
    "error",
    "leader_epoch",
    "isr",
    "partition_epoch",
    "req",
    "acks",
    "offset_",
    "epoch",
    "rid",
    "msg",
    "current_leader_epoch",
    "leader_leo",
    "leader_hw",
    "hw",
    "appended",
    "truncated_to",
    "log_end",
    "fetch_offset",
)
"""The ``ev`` columns the pass reads (names as in ``ev``: keywords end in ``_``)."""

CARRIED: tuple[str, ...] = (
    "trace",
    "pos",
    "node",
    "kind",
    "error",
    "req",
    "acks",
    "offset_",
    "epoch",
    "rid",
    "msg",
    "appended",
    "leader_epoch",
    "current_leader_epoch",
    "leader_leo",
)
"""Input columns ``st`` passes through unchanged (the ones the invariants and later views read)."""

DERIVED: tuple[tuple[str, pa.DataType], ...] = (
    ("inc", pa.int64()),
    ("req_offset", pa.int64()),
    ("req_epoch", pa.int64()),
    ("req_pos", pa.int64()),
    ("hw_set", pa.int64()),
    ("epoch_set", pa.int64()),
    ("node_hw", pa.int64()),
    ("node_leo", pa.int64()),
    ("leo_pos", pa.int64()),
    ("node_role", pa.string()),
    ("node_epoch", pa.int64()),
    ("prev_hw", pa.int64()),
    ("isr_size", pa.int64()),
    ("isr_pos", pa.int64()),
)
"""The state columns (as the SQL views name and define them)."""

ROLES = ("N", "L", "F", "D")
"""Node roles: none yet, leader, follower, down (crashed or restarting)."""

_INT_INPUTS = tuple(c for c in STATE_INPUTS if c not in ("kind", "outcome", "isr"))


STATE_SCHEMA = pa.schema(
    [pa.field(c, pa.string() if c == "kind" else pa.int64()) for c in CARRIED] + [pa.field(n, t) for n, t in DERIVED]
)
"""The schema of ``node_state``'s output (the ``st`` view)."""


class _Col:
    """A nullable int64 column as (values, valid). Where a value is null its number is whatever the
    Arrow buffer holds: every use goes through ``ok``."""

    __slots__ = ("ok", "v")

    def __init__(self, v: np.ndarray, ok: np.ndarray) -> None:
        self.v = v
        self.ok = ok


def _null(n: int) -> _Col:
    return _Col(np.zeros(n, np.int64), np.zeros(n, bool))


def _one_array(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """``col`` as one array (``combine_chunks`` builds an empty one with ``pa.array``, which imports
    pandas: ``_valid``)."""
    if not isinstance(col, pa.ChunkedArray):
        return col
    if col.num_chunks == 1:
        return col.chunk(0)
    return pa.concat_arrays(col.chunks) if col.num_chunks else pa.nulls(0, col.type)


def _ints(col: pa.ChunkedArray | pa.Array) -> _Col:
    """The int64 column ``col`` as values (the Arrow buffer itself, read-only) and validity, in row
    order."""
    arr = _one_array(col)
    if arr.type != pa.int64():
        arr = arr.cast(pa.int64())
    n = len(arr)
    data = arr.buffers()[1] if n else None
    if arr.null_count == n or data is None:
        return _null(n)
    v = np.frombuffer(data, dtype=np.int64, count=arr.offset + n)[arr.offset :]
    if arr.null_count == 0:
        return _Col(v, np.ones(n, bool))
    return _Col(v, _valid(arr))


def _valid(arr: pa.Array) -> np.ndarray:
    """The validity of ``arr``'s rows as a bool array, unpacked from its validity bitmap (an
    array's ``to_numpy``, or numpy's ``asarray`` of it, would import pandas first: 0.3-0.5 CPU-s in
    every Spark Python worker)."""
    n = len(arr)
    bitmap = arr.buffers()[0]
    if bitmap is None:
        return np.ones(n, bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), count=arr.offset + n, bitorder="little")
    return bits[arr.offset :].astype(bool)


def int64_values(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """The values of a non-null integer column as an int64 numpy array (a view of the Arrow buffer
    when it is int64 in one chunk), without importing pandas (``_valid``)."""
    return _ints(col).v


def _codes(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """A string column (plain or dictionary-encoded) as dictionary codes (-1: null) and the
    dictionary (which may name a value twice: ``_mask`` reads every code of a name)."""
    arr = _one_array(col)
    enc = arr if pa.types.is_dictionary(arr.type) else pc.dictionary_encode(arr)
    indices = _ints(enc.indices)  # not fill_null(-1): pa.scalar imports pandas
    codes = np.where(indices.ok, indices.v, -1)
    return codes, [str(x) for x in enc.dictionary.to_pylist()]


def _mask(codes: np.ndarray, dictionary: list[str], names: Iterable[str]) -> np.ndarray:
    """The rows whose code stands for one of ``names`` (a null, code -1, for none)."""
    wanted = set(names)
    lut = np.array([name in wanted for name in dictionary] + [False], bool)
    rows: np.ndarray = lut[codes]
    return rows


def _when(mask: np.ndarray, c: _Col) -> _Col:
    """CASE WHEN mask THEN c END."""
    return _Col(np.where(mask, c.v, 0), mask & c.ok)


def _first_of(*arms: _Col) -> _Col:
    """The first arm whose value is set (CASE arms over disjoint kinds)."""
    v = np.zeros(len(arms[0].v), np.int64)
    ok = np.zeros(len(arms[0].v), bool)
    for arm in reversed(arms):
        v = np.where(arm.ok, arm.v, v)
        ok |= arm.ok
    return _Col(v, ok)


def _node_order(trace: np.ndarray, node: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """A permutation of the rows in which each (trace, node)'s rows are contiguous and in position
    order: a stable sort by node when the rows are already sorted by (trace, position) (a corpus
    file's are; a radix sort for fewer than 2^15 node ids), else a sort by (trace, node, position)."""
    n = len(trace)
    if n > 1:
        same = trace[1:] == trace[:-1]
        if bool((trace[1:] >= trace[:-1]).all()) and bool((pos[1:][same] > pos[:-1][same]).all()):
            lo, hi = int(node.min()), int(node.max())
            key = (node - lo).astype(np.int16) if hi - lo < (1 << 15) else node
            return np.argsort(key, kind="stable")
    return np.lexsort((pos, node, trace))


class _Groups:
    """Rows in ``order`` (``_node_order``) cut into broker incarnations: a (trace, node)'s rows,
    a new group at each restart. ``last`` gives, for every row (in input order), the input row of
    the latest row of its group up to it (or up to the row before) where a mask holds, -1 if none:
    LAST(...) IGNORE NULLS over ROWS UNBOUNDED PRECEDING (AND 1 PRECEDING)."""

    def __init__(self, order: np.ndarray, trace: np.ndarray, node: np.ndarray, restart: np.ndarray) -> None:
        n = len(order)
        self.order = order
        self.rows = np.arange(n)
        t, nd, r = trace[order], node[order], restart[order]
        first = np.ones(n, bool)
        if n:
            first[1:] = (t[1:] != t[:-1]) | (nd[1:] != nd[:-1])
        tn_start = np.maximum.accumulate(np.where(first, self.rows, 0)) if n else self.rows
        inc_raw = np.cumsum(r)
        self.inc = self.to_input(inc_raw - (inc_raw[tn_start] - r[tn_start])) if n else inc_raw
        g_first = first | r
        self.gid = np.cumsum(g_first)
        self.gstart = np.maximum.accumulate(np.where(g_first, self.rows, 0)) if n else self.rows

    def to_input(self, sorted_values: np.ndarray) -> np.ndarray:
        """Values given per sorted row, put back in input row order."""
        out = np.empty_like(sorted_values)
        out[self.order] = sorted_values
        return out

    def last(self, mask: np.ndarray, before: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(input row of the latest masked row of the group up to each row, the same up to the row
        before) in input order, -1 where none; the second only if ``before``."""
        n = len(mask)
        latest = np.maximum.accumulate(np.where(mask[self.order], self.rows, -1)) if n else self.rows
        now = self._source(latest)
        if not before:
            return now, now
        prev = np.concatenate(([-1], latest[:-1])) if n else latest
        return now, self._source(prev)

    def _source(self, latest: np.ndarray) -> np.ndarray:
        ok = latest >= self.gstart
        return self.to_input(np.where(ok, self.order[np.maximum(latest, 0)], -1))

    def running_max_before(self, c: _Col) -> _Col:
        """MAX(c) over the rows of the row's group before it (null when none is set), in input order."""
        n = len(c.v)
        if n == 0 or not c.ok.any():
            return _null(n)
        v, ok = c.v[self.order], c.ok[self.order]
        lo, hi = int(v[ok].min()), int(v[ok].max())
        width = hi - lo + 2
        if int(self.gid[-1]) + 1 > (1 << 62) // width:  # the encoding would overflow: rank the values
            uniq, rank = np.unique(v[ok], return_inverse=True)
            values, code, width = uniq, np.zeros(n, np.int64), len(uniq) + 1
            code[ok] = rank + 1
        else:
            values, code = np.arange(lo, hi + 1, dtype=np.int64), np.where(ok, v - lo + 1, 0)
        base = self.gid * width
        enc = np.maximum.accumulate(base + code)  # 0 within a group's width: nothing set yet
        prev = np.concatenate(([-1], enc[:-1])) - base  # < 0: the previous group's
        has = prev > 0
        return _Col(self.to_input(np.where(has, values[np.maximum(prev - 1, 0)], 0)), self.to_input(has))


def _int64s(values: np.ndarray, ok: np.ndarray | None) -> pa.Array:
    """An int64 Arrow array over ``values`` (null where ``ok`` is False), from buffers: ``pa.array``
    would import pandas first (0.3-0.5 CPU-s in every process that mines)."""
    data = np.ascontiguousarray(values, dtype=np.int64)
    valid = None if ok is None else pa.py_buffer(np.packbits(ok, bitorder="little"))
    return pa.Array.from_buffers(pa.int64(), len(data), [valid, pa.py_buffer(data)])


def _taken(c: _Col, source: np.ndarray) -> _Col:
    """``c`` at the input rows ``source`` (null where -1)."""
    ok = source >= 0
    return _Col(np.where(ok, c.v[np.maximum(source, 0)], 0), ok)


def _request_max(trace: np.ndarray, msg: _Col, values: list[_Col]) -> list[_Col]:
    """For every row, MAX(value) OVER (PARTITION BY trace, msg) of each of ``values`` (SQL
    semantics: the rows of a trace with a null msg form one group; null when no row of the group
    sets the value). Only the rows that set a value are sorted (requests: a fraction of the rows);
    every row looks its group up, in a table when the (trace, msg) keys are dense, else by binary
    search."""
    n = len(trace)
    setting = np.zeros(n, bool)
    for value in values:
        setting |= value.ok
    if not setting.any():
        return [_null(n) for _ in values]
    changes = trace[1:] != trace[:-1]
    if bool((trace[1:] >= trace[:-1]).all()):
        rank = np.concatenate(([0], np.cumsum(changes))) if n else trace
    else:
        _uniq, rank = np.unique(trace, return_inverse=True)
    if msg.ok.any():
        lo, hi = int(msg.v[msg.ok].min()), int(msg.v[msg.ok].max())
    else:
        lo, hi = 0, 0
    span = hi - lo + 2
    traces = int(rank.max()) + 1
    if traces > ((1 << 62) // span):  # keys would overflow: group by sorting every row
        group = _groups(trace, _Col(np.where(msg.ok, msg.v, 0), msg.ok))
        return [_group_max(group, value) for value in values]
    key = rank * span + np.where(msg.ok, msg.v - lo + 1, 0)  # 0: the trace's null-msg group
    rows = np.flatnonzero(setting)
    rows = rows[np.argsort(key[rows], kind="stable")]
    keys = key[rows]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    groups = keys[starts]
    if traces * span <= 4 * n + 1024:  # dense: a table indexed by key
        slot = np.full(traces * span, -1, np.int64)
        slot[groups] = np.arange(len(groups))
        at = slot[key]
    else:
        at = np.minimum(np.searchsorted(groups, key), len(groups) - 1)
        at = np.where(groups[at] == key, at, -1)
    found = at >= 0
    at0 = np.maximum(at, 0)
    out = []
    low = np.iinfo(np.int64).min
    for value in values:
        ok = value.ok[rows]
        best = np.maximum.reduceat(np.where(ok, value.v[rows], low), starts)
        has = np.logical_or.reduceat(ok, starts)
        set_here = found & has[at0]
        out.append(_Col(np.where(set_here, best[at0], 0), set_here))
    return out


_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3  # glibc's mallopt parameters


@functools.cache
def keep_freed_memory() -> bool:
    """Have glibc's malloc keep freed memory for reuse instead of handing every large array back
    to the kernel (once per process; glibc only, True if applied). The pass allocates and frees some
    hundred arrays of a chunk's length (8 bytes a row); by default glibc gives each back (``munmap``,
    or a trim of the heap's top) and the next one page-faults its memory in again: half the pass's
    CPU on a million-row chunk (0.82 against 0.46 CPU-s, 2026-11-27). Arrays up to 32 MiB (4M rows)
    come from the heap, and up to 1 GiB of free heap is kept: the process's resident memory stays
    at its peak (one chunk's working set) instead of shrinking between chunks."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return all(
        mallopt(param, value) == 1
        for param, value in ((_M_MMAP_THRESHOLD, 32 << 20), (_M_TRIM_THRESHOLD, 1 << 30), (_M_TOP_PAD, 64 << 20))
    )


def node_state(events: pa.Table, dictionaries: bool = False) -> pa.Table:
    """The ``st`` rows of ``events`` (whole traces), in the order of ``events``. Calls
    ``keep_freed_memory`` (once per process). ``kind`` and ``outcome`` may come plain or
    dictionary-encoded; with ``dictionaries`` the output's ``kind`` stays as it came and
    ``node_role`` is dictionary-encoded (DuckDB compares such columns by code), else both are
    plain strings (``STATE_SCHEMA``).

    Every per-row value (what an event sets) is computed in input order; only the carried state
    (the LAST ... IGNORE NULLS of the SQL views) goes through the rows in (trace, node, position)
    order, as input row numbers (``_Groups``)."""
    keep_freed_memory()
    n = events.num_rows
    c = {name: _ints(events.column(name)) for name in _INT_INPUTS}
    trace, pos, node = c["trace"].v, c["pos"].v, c["node"].v
    kind_codes, kind_names = _codes(events.column("kind"))
    outcome_codes, outcome_names = _codes(events.column("outcome"))

    def kind_is(*names: str) -> np.ndarray:
        return _mask(kind_codes, kind_names, names)

    def outcome_is(value: str) -> np.ndarray:
        return _mask(outcome_codes, outcome_names, (value,))

    isr_len = _ints(pc.list_value_length(events.column("isr")))
    error0 = c["error"].ok & (c["error"].v == 0)
    every = np.ones(n, bool)

    # The request an answer answers: MAX(...) OVER (PARTITION BY trace, msg) (a null msg is a group).
    fetch_sent = kind_is("fetch_sent")
    sent = kind_is("fetch_sent", "epoch_query_sent")
    req_offset, req_epoch, req_pos = _request_max(
        trace,
        c["msg"],
        [_when(fetch_sent, c["fetch_offset"]), _when(sent, c["current_leader_epoch"]), _when(sent, _Col(pos, every))],
    )

    # HW_AFTER / LEO_AFTER of traces.mine.replication.
    hw_set = _first_of(
        _when(kind_is("fetch_handled") & error0, c["leader_hw"]),
        _when(kind_is("consumer_fetch_handled") & error0, c["hw"]),
        _when(
            kind_is(
                "produce_handled",
                "metadata_applied",
                "fetch_applied",
                "epoch_query_applied",
                "isr_change_proposed",
                "alter_partition_applied",
                "broker_restarted",
                "checkpointed",
            ),
            c["hw"],
        ),
    )
    off, tr_to, appended = c["offset_"], c["truncated_to"], c["appended"]
    truncated = tr_to.ok & (tr_to.v >= 0)
    fetch_applied = kind_is("fetch_applied")
    follower_append = fetch_applied & ~truncated & appended.ok & (appended.v > 0)
    leo_set = _first_of(
        _when(kind_is("produce_handled") & off.ok & (off.v >= 0), _Col(off.v + 1, off.ok)),
        _when(kind_is("fetch_handled") & error0, c["leader_leo"]),
        _when(fetch_applied & truncated, tr_to),
        _when(follower_append, _Col(req_offset.v + appended.v, req_offset.ok & appended.ok)),
        _when(kind_is("metadata_applied", "epoch_query_applied") & truncated, tr_to),
        _when(kind_is("broker_restarted", "checkpointed"), c["log_end"]),
    )
    metadata = kind_is("metadata_applied")
    applied = metadata & ~outcome_is("ignored") & (outcome_codes >= 0)
    role_code = np.zeros(n, np.int64)
    role_code[metadata & outcome_is("become_leader")] = 1
    role_code[metadata & outcome_is("become_follower")] = 2
    role_code[kind_is("broker_crashed", "broker_restarted")] = 3
    role_set = _Col(role_code, role_code > 0)
    epoch_set = _when(applied, c["leader_epoch"])
    alter_ok = kind_is("alter_partition_applied") & error0
    pe_cand = _first_of(_when(applied, c["partition_epoch"]), _when(alter_ok, c["partition_epoch"]))

    # The state carried within each broker incarnation.
    groups = _Groups(_node_order(trace, node, pos), trace, node, kind_is("broker_restarted"))
    hw_now, hw_before = groups.last(hw_set.ok, before=True)
    node_hw, prev_hw = _taken(hw_set, hw_now), _taken(hw_set, hw_before)
    leo_now, _ = groups.last(leo_set.ok)
    node_leo = _Col(_taken(leo_set, leo_now).v, every)
    leo_pos = _taken(_Col(pos, every), leo_now)
    role_now_at, role_before_at = groups.last(role_set.ok, before=True)
    role_now, role_before = _taken(role_set, role_now_at), _taken(role_set, role_before_at)
    epoch_now, _ = groups.last(epoch_set.ok)
    node_epoch_last = _taken(epoch_set, epoch_now)
    node_epoch = _Col(np.where(node_epoch_last.ok, node_epoch_last.v, -1), every)
    prev_pe_max = groups.running_max_before(pe_cand)

    pe = c["partition_epoch"]
    adopt_alter = (
        alter_ok & role_before.ok & (role_before.v == 1) & pe.ok & (pe.v > np.where(prev_pe_max.ok, prev_pe_max.v, -1))
    )
    isr_adopted = _first_of(_when(applied, isr_len), _when(adopt_alter, isr_len))
    isr_now, _ = groups.last(isr_adopted.ok)
    isr_size = _taken(isr_adopted, isr_now)
    isr_pos = _taken(_Col(pos, every), isr_now)

    def out(col: _Col) -> pa.Array:
        return _int64s(col.v, None if col.ok is every else col.ok)

    codes = np.ascontiguousarray(role_now.v, dtype=np.int32)
    roles = pa.DictionaryArray.from_arrays(
        pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(codes)]), strings(ROLES)
    )
    derived = {
        "inc": _int64s(groups.inc, None),
        "req_offset": out(req_offset),
        "req_epoch": out(req_epoch),
        "req_pos": out(req_pos),
        "hw_set": out(hw_set),
        "epoch_set": out(epoch_set),
        "node_hw": out(node_hw),
        "node_leo": out(node_leo),
        "leo_pos": out(leo_pos),
        "node_role": roles if dictionaries else roles.cast(pa.string()),
        "node_epoch": out(node_epoch),
        "prev_hw": out(prev_hw),
        "isr_size": out(isr_size),
        "isr_pos": out(isr_pos),
    }
    arrays = [
        events.column(name)
        if dictionaries and name == "kind"
        else events.column(name).cast(STATE_SCHEMA.field(name).type)
        for name in CARRIED
    ]
    arrays += [derived[name] for name, _ in DERIVED]
    names = [*CARRIED, *(name for name, _ in DERIVED)]
    if dictionaries:
        return pa.Table.from_arrays(arrays, names=names)
    return pa.Table.from_arrays(arrays, schema=STATE_SCHEMA)


def _groups(trace: np.ndarray, msg: _Col) -> np.ndarray:
    """Group id of every row for PARTITION BY trace, msg (SQL semantics: null msgs form one group)."""
    n = len(trace)
    order = np.lexsort((msg.v, msg.ok, trace))
    t, ok, v = trace[order], msg.ok[order], msg.v[order]
    first = np.ones(n, bool)
    if n:
        first[1:] = (t[1:] != t[:-1]) | (ok[1:] != ok[:-1]) | (v[1:] != v[:-1])
    group = np.empty(n, np.int64)
    group[order] = np.cumsum(first) - 1
    return group


def _group_max(group: np.ndarray, value: _Col) -> _Col:
    """MAX(value) over the rows of each row's group."""
    n = len(group)
    if n == 0 or not value.ok.any():
        return _Col(np.zeros(n, np.int64), np.zeros(n, bool))
    size = int(group.max()) + 1
    best = np.full(size, np.iinfo(np.int64).min, np.int64)
    has = np.zeros(size, bool)
    np.maximum.at(best, group[value.ok], value.v[value.ok])
    has[group[value.ok]] = True
    return _Col(np.where(has[group], best[group], 0), has[group])


CHUNK_ROWS = 1 << 18
"""Rows gathered before a pass in ``state_batches`` (the pass holds a chunk and one trace)."""


def whole_trace_chunks(batches: Iterable[pa.RecordBatch], chunk_rows: int) -> Iterator[pa.Table]:
    """Tables of whole traces, each of about ``chunk_rows`` rows or more (a chunk ends at a trace's
    end), from a stream of events in which each trace's rows are contiguous (a corpus file, sorted
    by trace and position). Holds at most one chunk plus one trace. ValueError if a trace's rows come
    back after another trace's (the partition split a trace)."""
    pending: list[pa.RecordBatch] = []
    held = 0
    done: set[int] = set()
    current: int | None = None
    for batch in batches:
        if batch.num_rows == 0:
            continue
        trace = int64_values(batch.column("trace"))
        change = np.flatnonzero(trace[1:] != trace[:-1]) + 1
        starts = np.concatenate(([0], change))
        seen = trace[starts]
        for i, t in enumerate(seen.tolist()):
            if i == 0 and t == current:
                continue
            if t in done:
                raise ValueError(f"trace {t}: its events are not contiguous in this partition (sorted by trace, pos)")
            if current is not None:
                done.add(current)
            current = t
        pending.append(batch)
        held += batch.num_rows
        if held < chunk_rows:
            continue
        table = pa.Table.from_batches(pending)
        col = int64_values(table.column("trace"))
        cut = int(np.flatnonzero(col != col[-1])[-1]) + 1 if (col != col[-1]).any() else 0
        if cut:
            yield table.slice(0, cut)
        rest = table.slice(cut)
        pending, held = rest.to_batches(), rest.num_rows
    if pending:
        yield pa.Table.from_batches(pending)


def state_batches(batches: Iterable[pa.RecordBatch], chunk_rows: int = CHUNK_ROWS) -> Iterator[pa.RecordBatch]:
    """``node_state`` over a stream of events in which each trace's rows are contiguous (a corpus
    file, sorted by trace and position): passes over chunks of whole traces (``whole_trace_chunks``).
    ValueError if a trace's rows come back after another trace's (the partition split a trace)."""
    for chunk in whole_trace_chunks(batches, chunk_rows):
        yield from node_state(chunk).to_batches()
