"""The replication slice's per-node state, computed in one vectorised pass per batch of whole traces.

``node_state(events)`` takes the events of whole traces (any order; Arrow, the ``ev`` columns of
``STATE_INPUTS``) and returns the ``st`` table the replication invariants read: every event with
the state of its node *after* it, carried forward within one broker incarnation (a restart starts
a new one). It is the same relation as the SQL views ``s1``/``s2``/``st`` of
traces.mine.replication (``VIEWS``, kept as the reference plan; tests/test_mine_state.py checks
that both give the same rows on planted and hand-made corpora), computed without a window: one
stable sort by (trace, node, position), then forward fills and running maxima over index arrays.

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
    """A nullable int64 column as (values, valid): values are 0 where null."""

    __slots__ = ("ok", "v")

    def __init__(self, v: np.ndarray, ok: np.ndarray) -> None:
        self.v = v
        self.ok = ok


def _ints(col: pa.ChunkedArray | pa.Array, order: np.ndarray) -> _Col:
    """The int64 column ``col`` (taken in ``order``) as values and validity."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if arr.type != pa.int64():
        arr = arr.cast(pa.int64())
    n = len(arr)
    data = arr.buffers()[1] if n else None
    if arr.null_count == n or data is None:
        return _Col(np.zeros(n, np.int64), np.zeros(n, bool))
    v = np.frombuffer(data, dtype=np.int64, count=arr.offset + n)[arr.offset :]
    ok = np.ones(n, bool) if arr.null_count == 0 else np.asarray(arr.is_valid(), dtype=bool)
    v = np.where(ok, v, 0)
    return _Col(v[order], ok[order])


def _codes(col: pa.ChunkedArray | pa.Array, order: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """A string column (taken in ``order``) as dictionary codes (-1: null) and the dictionary."""
    enc = pc.dictionary_encode(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
    codes = np.asarray(enc.indices.fill_null(-1), dtype=np.int64)
    return codes[order], [str(x) for x in enc.dictionary.to_pylist()]


def _arrow(c: _Col) -> pa.Array:
    return pa.array(c.v, pa.int64(), mask=~c.ok)


def _last(c: _Col, gstart: np.ndarray, include_current: bool = True) -> _Col:
    """LAST(c) IGNORE NULLS over the rows of the row's group up to it (or up to the row before)."""
    n = len(c.v)
    idx = np.where(c.ok, np.arange(n), -1)
    last = np.maximum.accumulate(idx) if n else idx
    if not include_current:
        last = np.concatenate(([-1], last[:-1])) if n else last
    ok = last >= gstart
    return _Col(np.where(ok, c.v[np.maximum(last, 0)], 0), ok)


def _running_max_before(c: _Col, gid: np.ndarray, gstart: np.ndarray) -> _Col:
    """MAX(c) over the rows of the row's group before it (null when none is set)."""
    n = len(c.v)
    if n == 0 or not c.ok.any():
        return _Col(np.zeros(n, np.int64), np.zeros(n, bool))
    uniq, rank = np.unique(c.v[c.ok], return_inverse=True)
    code = np.zeros(n, np.int64)
    code[c.ok] = rank + 1  # 0: null; 1..: the value's rank
    width = len(uniq) + 1
    enc = np.maximum.accumulate(gid * width + code)
    enc = np.concatenate(([-1], enc[:-1]))
    prev_row = np.arange(n) - 1
    ok = (prev_row >= gstart) & (enc % width > 0) & (enc // width == gid)
    return _Col(np.where(ok, uniq[np.maximum(enc % width - 1, 0)], 0), ok)


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


def node_state(events: pa.Table) -> pa.Table:
    """The ``st`` rows of ``events`` (whole traces), in the order of ``events``. Calls
    ``keep_freed_memory`` (once per process)."""
    keep_freed_memory()
    n = events.num_rows
    order = np.lexsort(
        (np.asarray(events.column("pos")), np.asarray(events.column("node")), np.asarray(events.column("trace")))
    )
    c = {name: _ints(events.column(name), order) for name in _INT_INPUTS}
    trace, pos, node = c["trace"].v, c["pos"].v, c["node"].v
    kind_codes, kind_names = _codes(events.column("kind"), order)
    outcome_codes, outcome_names = _codes(events.column("outcome"), order)

    def kind_is(*names: str) -> np.ndarray:
        wanted = [kind_names.index(k) for k in names if k in kind_names]
        return np.isin(kind_codes, wanted) if wanted else np.zeros(n, bool)

    def outcome_is(value: str) -> np.ndarray:
        return outcome_codes == outcome_names.index(value) if value in outcome_names else np.zeros(n, bool)

    isr_len = _ints(pc.list_value_length(events.column("isr")), order)
    error0 = c["error"].ok & (c["error"].v == 0)

    # Groups: (trace, node) and, within, broker incarnations (a restart starts one).
    restart = kind_is("broker_restarted")
    first = np.ones(n, bool)
    if n:
        first[1:] = (trace[1:] != trace[:-1]) | (node[1:] != node[:-1])
    tn_id = np.cumsum(first)
    tn_start = np.maximum.accumulate(np.where(first, np.arange(n), 0)) if n else first.astype(np.int64)
    inc_raw = np.cumsum(restart)
    inc = inc_raw - (inc_raw[tn_start] - restart[tn_start]) if n else inc_raw
    g_first = first | restart
    gid = np.cumsum(g_first)
    gstart = np.maximum.accumulate(np.where(g_first, np.arange(n), 0)) if n else g_first.astype(np.int64)
    del tn_id

    # The request an answer answers: MAX(...) OVER (PARTITION BY trace, msg) (a null msg is a group).
    fetch_sent = kind_is("fetch_sent")
    sent = kind_is("fetch_sent", "epoch_query_sent")
    msg_group = _groups(trace, c["msg"])
    req_offset = _group_max(msg_group, _when(fetch_sent, c["fetch_offset"]))
    req_epoch = _group_max(msg_group, _when(sent, c["current_leader_epoch"]))
    req_pos = _group_max(msg_group, _when(sent, _Col(pos, np.ones(n, bool))))

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

    node_hw = _last(hw_set, gstart)
    leo_last = _last(leo_set, gstart)
    node_leo = _Col(leo_last.v, np.ones(n, bool))
    leo_pos = _last(_when(leo_set.ok, _Col(pos, np.ones(n, bool))), gstart)
    role_now = _last(role_set, gstart)
    role_before = _last(role_set, gstart, include_current=False)
    node_epoch_last = _last(epoch_set, gstart)
    node_epoch = _Col(np.where(node_epoch_last.ok, node_epoch_last.v, -1), np.ones(n, bool))
    prev_hw = _last(hw_set, gstart, include_current=False)
    prev_pe_max = _running_max_before(pe_cand, gid, gstart)

    pe = c["partition_epoch"]
    adopt_alter = (
        alter_ok & role_before.ok & (role_before.v == 1) & pe.ok & (pe.v > np.where(prev_pe_max.ok, prev_pe_max.v, -1))
    )
    isr_adopted = _first_of(_when(applied, isr_len), _when(adopt_alter, isr_len))
    isr_size = _last(isr_adopted, gstart)
    isr_pos = _last(_when(isr_adopted.ok, _Col(pos, np.ones(n, bool))), gstart)

    back = np.empty(n, np.int64)
    back[order] = np.arange(n)  # sorted row of each input row

    def out(col: _Col) -> pa.Array:
        return pa.array(col.v[back], pa.int64(), mask=~col.ok[back])

    roles = pa.DictionaryArray.from_arrays(
        pa.array(np.where(role_now.ok, role_now.v, 0).astype(np.int32)[back]), pa.array(ROLES)
    ).cast(pa.string())
    derived = {
        "inc": pa.array(inc[back], pa.int64()),
        "req_offset": out(req_offset),
        "req_epoch": out(req_epoch),
        "req_pos": out(req_pos),
        "hw_set": out(hw_set),
        "epoch_set": out(epoch_set),
        "node_hw": out(node_hw),
        "node_leo": out(node_leo),
        "leo_pos": out(leo_pos),
        "node_role": roles,
        "node_epoch": out(node_epoch),
        "prev_hw": out(prev_hw),
        "isr_size": out(isr_size),
        "isr_pos": out(isr_pos),
    }
    arrays = [events.column(name).cast(STATE_SCHEMA.field(name).type) for name in CARRIED]
    arrays += [derived[name] for name, _ in DERIVED]
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
        trace = np.asarray(batch.column("trace"), dtype=np.int64)
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
        col = np.asarray(table.column("trace"), dtype=np.int64)
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
