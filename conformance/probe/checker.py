"""The probe checker: judges a history (conformance/probe/history.py) against the guarantees a Kafka
client can observe, in Jepsen's vocabulary (conformance/probe/anomalies.py).

One streaming pass over the events builds compact per-value columns (writer, flags, offset, first
readers), a per-partition version order (offset -> value, Jepsen's version order: from send
acknowledgements *and* reads, so offsets left empty by control records or unobserved data are
never mistaken for skipped records), per-consumer positions, and "gap claims" (a consumer passed
offsets ``[lo, hi)`` without returning them). The end phase judges what needs the whole history
(a transaction's fate may complete after its records were read): aborted reads, torn and lost
writes against the consumers' covered offset ranges, skips against the version order, zombies,
transactional offsets. Every pass is linear or n log n in the history; memory is a few arrays per
written value plus the open claims, never the history itself.

Soundness choices (docs/probe.md, "false alarms"):

- an ``info`` write may or may not have happened: it is never required to appear, and a read of it
  is fine; a record carrying an error in a completed send is treated like ``info``;
- acks=0 writes have no offset: they can only be read, never missed;
- under read_committed, a skip over offsets holding only records of transactions not known to have
  committed (aborted, or of unknown outcome nobody read committed) or nothing observed (control
  records, KIP-98 markers) is no skip;
- subscribe-mode consumers are re-assigned by rebalances: their skips and re-deliveries are allowed;
- an offset holding two values (inconsistent-offsets) is left out of skip judgements;
- consumer offsets not written by this history's commit / txn operations (auto-commit) are not judged.

Compacted topics are out of scope: compaction legitimately removes records a consumer would then
"skip".
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

from kconform.conformance.probe.anomalies import Finding, FindingLog
from kconform.conformance.probe.delivery import DeliveryJudge
from kconform.conformance.probe.history import (
    FAIL,
    INFO,
    INVOKE,
    OK,
    CommitValue,
    FetchOffsetsInvoke,
    FetchOffsetsResult,
    HistoryHeader,
    InitValue,
    OpEvent,
    PollInvoke,
    PollResult,
    Record,
    SeekValue,
    SendValue,
    SubscribeValue,
    TxnValue,
    open_history,
)

VALID, INVALID, UNKNOWN = "valid", "invalid", "unknown"
"""Verdicts: no forbidden anomaly and enough observed; a forbidden anomaly; too little observed."""

# value flags (one byte per value)
_WRITTEN = 1  # an operation of the history writes this value
_TXN = 2
_IDEMPOTENT = 4
_ACKS_ALL = 8
_ACKS_ZERO = 16
_ACKED = 32  # acknowledged with an offset (no per-record error)
_FAILED = 64  # the send definitely failed
_UNKNOWN = 128  # the record carried an error: outcome unknown

# transaction fates
_T_UNKNOWN, _T_COMMITTED, _T_ABORTED = 0, 1, 2

_NEVER = 1 << 62
"""The completion time of a write that never completed (info or open): it may take effect any time."""

# gap claim flags
_G_RC = 1
_G_SUB = 2
_G_INT = 4


class CheckInputError(ValueError):
    """A history that reads as well-formed but breaks the format's promises the checker relies on
    (e.g. one value written twice); like HistoryError, an input error (exit 2)."""


class _OffsetIndex:
    """One partition's version order: offset -> value id, dense (an array from the lowest offset)
    while offsets are dense, a dict when they are sparse."""

    __slots__ = ("base", "slots", "sparse")

    _GROW = 1 << 16

    def __init__(self) -> None:
        self.base = -1
        self.slots = array("q")
        self.sparse: dict[int, int] | None = None

    def get(self, off: int) -> int:
        if self.sparse is not None:
            return self.sparse.get(off, -1)
        k = off - self.base
        if self.base < 0 or k < 0 or k >= len(self.slots):
            return -1
        return self.slots[k] - 1

    def put(self, off: int, vid: int) -> int:
        """Store ``vid`` at ``off`` if empty; return the id already there (-1 if none)."""
        if self.sparse is None:
            if self.base < 0:
                self.base = off
            k = off - self.base
            n = len(self.slots)
            if k < 0:
                if -k <= n + self._GROW:
                    self.slots = array("q", bytes(8 * -k)) + self.slots
                    self.base = off
                    k = 0
                else:
                    self._to_sparse()
            elif k >= n:
                if k <= 2 * n + self._GROW:
                    self.slots.extend(array("q", bytes(8 * (k + 1 - n))))
                else:
                    self._to_sparse()
            if self.sparse is None:
                cur = self.slots[k] - 1
                if cur < 0:
                    self.slots[k] = vid + 1
                return cur
        assert self.sparse is not None
        cur = self.sparse.get(off, -1)
        if cur < 0:
            self.sparse[off] = vid
        return cur

    def _to_sparse(self) -> None:
        self.sparse = {self.base + k: v - 1 for k, v in enumerate(self.slots) if v}
        self.slots = array("q")

    def items_between(self, lo: int, hi: int) -> Iterable[tuple[int, int]]:
        """(offset, value id) of the filled offsets in [lo, hi), in offset order."""
        if self.sparse is not None:
            if hi - lo <= len(self.sparse):
                for off in range(lo, hi):
                    v = self.sparse.get(off, -1)
                    if v >= 0:
                        yield off, v
            else:
                for off in sorted(o for o in self.sparse if lo <= o < hi):
                    yield off, self.sparse[off]
            return
        if self.base < 0:
            return
        a = max(lo - self.base, 0)
        b = min(hi - self.base, len(self.slots))
        slots = self.slots
        for k in range(a, b):
            v = slots[k]
            if v:
                yield self.base + k, v - 1


@dataclass
class _TpState:
    """A consumer's view of one partition: last offset returned, position after the last poll,
    the current covered run [run_lo, run_hi] and the poll that last moved it."""

    last_read: int | None = None
    pos: int | None = None
    run_lo: int | None = None
    run_hi: int = -1
    last_i: int = -1


@dataclass
class _Consumer:
    rc: bool | None = None
    tps: dict[str, _TpState] = field(default_factory=dict)


@dataclass
class CheckStats:
    """What the history held and how much of it the checker could judge."""

    lines: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)
    values_written: int = 0
    values_acked: int = 0
    values_read: int = 0
    reads: int = 0
    records_read: int = 0
    acked_judged: int = 0
    unseen: int = 0
    pending: int = 0
    transactions: int = 0
    gap_claims: int = 0


@dataclass
class CheckResult:
    """The verdict (VALID / INVALID / UNKNOWN), the findings, the figures and any warnings."""

    header: HistoryHeader
    verdict: str
    findings: FindingLog
    stats: CheckStats
    warnings: list[str]
    reason: str = ""


class Checker:
    """Feed every event of one history in file order (``feed``), then ``finish``."""

    def __init__(self, header: HistoryHeader, keep: int = 20) -> None:
        self.header = header
        cfg = header.config
        self.lossy = cfg.unclean_leader_election or cfg.volatile_storage
        self.lossy_why = (
            ("unclean.leader.election.enable" if cfg.unclean_leader_election else "volatile_storage")
            if self.lossy
            else ""
        )
        self.log = FindingLog(keep=keep)
        self.stats = CheckStats()
        self.tp_ids: dict[str, int] = {tp: n for n, tp in enumerate(header.partitions())}
        self.tp_names = list(self.tp_ids)
        self.index = [_OffsetIndex() for _ in self.tp_names]
        self.conflicts: dict[tuple[int, int], set[int]] = {}
        # per value
        self.vid: dict[str, int] = {}
        self.v_name: list[str] = []  # id -> value (the same string objects as the dict's keys)
        self.v_tp = array("i")
        self.v_flags = bytearray()
        self.v_writer = array("q")  # completion i of the writer (invoke i until it completes)
        self.v_inv_ns = array("q")
        self.v_txn = array("i")
        self.v_off = array("q")
        self.v_obs = array("q")
        self.v_obs_rc = array("q")
        self.duplicates: dict[int, list[tuple[int, int]]] = {}  # vid -> [(offset, witness i)]
        self.early_reads: dict[int, tuple[int, int, bool]] = {}  # vid -> (poll i, poll ok ns, rc) before its writer
        # per transaction
        self.t_tid: list[str] = []
        self.t_proc: list[int | str] = []
        self.t_inv_ns = array("q")
        self.t_inv_i = array("q")
        self.t_done_i = array("q")
        self.t_fate = bytearray()
        self.t_end_commit = bytearray()
        self.t_first = array("q")
        self.t_count = array("i")
        self.t_offsets: dict[int, tuple[str, dict[str, int]]] = {}
        self.open_txn: dict[int | str, int] = {}
        # inits: tid -> [(ok ns, invoke ns, process, ok i)]
        self.inits: dict[str, list[tuple[int, int, int | str, int]]] = {}
        # consumers
        self.consumers: dict[int | str, _Consumer] = {}
        self.runs: dict[tuple[int, bool], list[tuple[int, int]]] = {}
        self.g_tp = array("i")
        self.g_lo = array("q")
        self.g_hi = array("q")
        self.g_w1 = array("q")
        self.g_w2 = array("q")
        self.g_flags = bytearray()
        # sends' last acked offset per process and partition (nonmonotonic-send)
        self.last_sent: dict[int | str, dict[str, tuple[int, int, bool]]] = {}
        # consumer offsets: (group, tp) -> offset value -> [(kind 'c'|'t', op i, invoke ns, txn or -1, fate)]
        # consumer offsets: (group, tp) -> offset -> [(kind 'c'|'t', op i, invoke ns, txn or -1, fate, end ns)]
        self.offset_writes: dict[tuple[str, str], dict[int, list[tuple[str, int, int, int, int, int]]]] = {}
        # fetches: group, tp, offset (None: none committed), fetch ok ns, fetch ok i, fetch invoke ns
        self.fetches: list[tuple[str, str, int | None, int, int, int]] = []
        self.subscribed: set[str] = set()  # groups of subscribe-mode consumers (may auto-commit)
        self.delivery = DeliveryJudge(dict(cfg.delivery))  # version 2: consumer delivery semantics

    # ------------------------------------------------------------------ values

    def _new_value(self, value: str, tp: str) -> int:
        vid = len(self.v_flags)
        self.vid[value] = vid
        self.v_name.append(value)
        self.v_tp.append(self.tp_ids[tp])
        self.v_flags.append(0)
        self.v_writer.append(-1)
        self.v_inv_ns.append(0)
        self.v_txn.append(-1)
        self.v_off.append(-1)
        self.v_obs.append(-1)
        self.v_obs_rc.append(-1)
        return vid

    def _register(self, rec: Record, event: OpEvent, flags: int, txn: int) -> None:
        vid = self.vid.get(rec.value)
        if vid is None:
            vid = self._new_value(rec.value, rec.tp)
        elif self.v_flags[vid] & _WRITTEN:
            raise CheckInputError(
                f"line {event.i + 1}: value {rec.value!r} is written a second time (first by the operation at "
                f"line {self.v_writer[vid] + 1}); values must be unique"
            )
        elif self.tp_names[self.v_tp[vid]] != rec.tp:
            self.v_tp[vid] = self.tp_ids[rec.tp]
        self.v_flags[vid] |= flags | _WRITTEN
        self.v_writer[vid] = event.i
        self.v_inv_ns[vid] = event.mono_ns
        self.v_txn[vid] = txn
        self.stats.values_written += 1
        early = self.early_reads.pop(vid, None)
        if early is not None:
            poll_i, poll_ns, rc = early
            if poll_ns < event.mono_ns:
                self._future_read(vid, poll_i, rec.tp, rc)

    def _future_read(self, vid: int, poll_i: int, tp: str, rc: bool) -> None:
        value = self._value_name(vid)
        if self.v_txn[vid] >= 0 and rc:
            self.log.add(
                Finding(
                    "precommitted-read",
                    f"read_committed poll read {value} (transaction of {self.t_tid[self.v_txn[vid]]}) before "
                    "the transaction began",
                    (poll_i, self.v_writer[vid]),
                    tp,
                )
            )
        else:
            self.log.add(
                Finding("future-read", f"poll read {value} before its write began", (poll_i, self.v_writer[vid]), tp)
            )

    def _value_name(self, vid: int) -> str:
        return self.v_name[vid]

    def _place(self, vid: int, tp: str, off: int, witness: int) -> None:
        """Record that ``vid`` sits at ``off`` of ``tp`` (from an acknowledgement or a read)."""
        tpi = self.tp_ids[tp]
        cur = self.index[tpi].put(off, vid)
        if cur >= 0 and cur != vid:
            self.conflicts.setdefault((tpi, off), {cur}).add(vid)
        first = self.v_off[vid]
        if first < 0:
            self.v_off[vid] = off
        elif first != off:
            seen = self.duplicates.setdefault(vid, [(first, -1)])
            if all(o != off for o, _ in seen):
                seen.append((off, witness))

    # ------------------------------------------------------------------ events

    def feed(self, e: OpEvent) -> None:
        """Judge one event (streaming; file order)."""
        st = self.stats
        st.lines += 1
        if e.type == INVOKE:
            st.ops[e.f] = st.ops.get(e.f, 0) + 1
            v = e.value
            if e.f == "send" and isinstance(v, SendValue):
                flags = (_IDEMPOTENT if v.idempotent else 0) | (
                    _ACKS_ALL if v.acks == "all" else _ACKS_ZERO if v.acks == "0" else 0
                )
                for rec in v.records:
                    self._register(rec, e, flags, -1)
            elif e.f == "txn" and isinstance(v, TxnValue):
                t = len(self.t_fate)
                self.t_tid.append(v.transactional_id)
                self.t_proc.append(e.process)
                self.t_inv_ns.append(e.mono_ns)
                self.t_inv_i.append(e.i)
                self.t_done_i.append(-1)
                self.t_fate.append(_T_UNKNOWN)
                self.t_end_commit.append(1 if v.end == "commit" else 0)
                self.t_first.append(len(self.v_flags))
                self.open_txn[e.process] = t
                first = len(self.v_flags)
                for rec in v.records:
                    self._register(rec, e, _TXN | _IDEMPOTENT | _ACKS_ALL, t)
                # _register may reuse ids of values read earlier (future reads): record the span
                self.t_first[t] = first if len(self.v_flags) - first == len(v.records) else -1
                self.t_count.append(len(v.records))
                if self.t_first[t] < 0:
                    self._txn_ids_fallback(t, v.records)
                if v.offsets is not None:
                    self.t_offsets[t] = (v.offsets.group, dict(v.offsets.offsets))
                st.transactions += 1
            return
        st.outcomes[e.type] = st.outcomes.get(e.type, 0) + 1
        inv = e.invoke
        assert inv is not None  # the reader pairs every completion
        f = e.f
        if f == "poll":
            if e.type == OK and isinstance(e.value, PollResult) and isinstance(inv.value, PollInvoke):
                self._poll(e, inv.value, e.value)
            else:
                self._reset_consumer(e.process)
        elif f == "send":
            self._send_done(e, inv)
        elif f == "txn":
            if self.delivery:
                self.delivery.feed(e, self.open_txn.get(e.process, -1))
            self._txn_done(e, inv)
        if self.delivery and f != "txn":
            self.delivery.feed(e)
        if f in ("assign", "subscribe", "crash"):
            self._reset_consumer(e.process)
            if isinstance(inv.value, SubscribeValue):
                self.subscribed.add(inv.value.group)
        elif f == "seek":
            c = self.consumers.get(e.process)
            if c is not None and isinstance(inv.value, SeekValue) and inv.value.partition in c.tps:
                self._end_run(inv.value.partition, c.tps.pop(inv.value.partition), bool(c.rc))
        elif f == "init" and e.type == OK and isinstance(inv.value, InitValue):
            self.inits.setdefault(inv.value.transactional_id, []).append((e.mono_ns, inv.mono_ns, e.process, e.i))
        elif f == "commit" and e.type in (OK, INFO) and isinstance(inv.value, CommitValue):
            fate = _T_COMMITTED if e.type == OK else _T_UNKNOWN
            end_ns = e.mono_ns if e.type == OK else _NEVER
            for tp, off in inv.value.offsets.items():
                self.offset_writes.setdefault((inv.value.group, tp), {}).setdefault(off, []).append(
                    ("c", e.i, inv.mono_ns, -1, fate, end_ns)
                )
        elif (
            f == "fetch-offsets"
            and e.type == OK
            and isinstance(e.value, FetchOffsetsResult)
            and isinstance(inv.value, FetchOffsetsInvoke)
        ):
            for tp, fetched in e.value.offsets.items():
                self.fetches.append((inv.value.group, tp, fetched, e.mono_ns, e.i, inv.mono_ns))

    def _txn_ids_fallback(self, t: int, records: tuple[Record, ...]) -> None:
        ids = getattr(self, "_txn_ids", None)
        if ids is None:
            ids = {}
            self._txn_ids: dict[int, list[int]] = ids
        ids[t] = [self.vid[r.value] for r in records]

    def _txn_values(self, t: int) -> Iterable[int]:
        first = self.t_first[t]
        if first >= 0:
            return range(first, first + self.t_count[t])
        return self._txn_ids[t]

    def _send_done(self, e: OpEvent, inv: OpEvent) -> None:
        sv = e.value if isinstance(e.value, SendValue) else None
        invoked = inv.value
        assert isinstance(invoked, SendValue)
        recs = sv.records if sv is not None and len(sv.records) == len(invoked.records) else invoked.records
        per_tp: dict[str, tuple[int, int]] = {}
        acks_all = invoked.acks == "all"
        for rec in recs:
            vid = self.vid[rec.value]
            self.v_writer[vid] = e.i
            if rec.error is not None:
                self.v_flags[vid] |= _UNKNOWN
            elif rec.offset is not None:
                self.v_flags[vid] |= _ACKED
                self.stats.values_acked += 1
                self._place(vid, rec.tp, rec.offset, e.i)
                prev = per_tp.get(rec.tp)
                if prev is not None and rec.offset <= prev[0]:
                    self.log.add(
                        Finding(
                            "int-nonmonotonic-send",
                            f"one send wrote {self._value_name(prev[1])} at offset {prev[0]} and then "
                            f"{rec.value} at offset {rec.offset} of {rec.tp}",
                            (e.i,),
                            rec.tp,
                            allowed=not invoked.idempotent,
                            why="non-idempotent producer" if not invoked.idempotent else "",
                        )
                    )
                per_tp[rec.tp] = (rec.offset, vid)
            elif e.type == FAIL:
                self.v_flags[vid] |= _FAILED
        self._send_order(e, per_tp, acks_all)

    def _send_order(self, e: OpEvent, per_tp: dict[str, tuple[int, int]], acks_all: bool) -> None:
        """nonmonotonic-send: a process's later acknowledged send to a partition lands after its earlier one."""
        if not per_tp:
            return
        last = self.last_sent.setdefault(e.process, {})
        inv = e.invoke
        assert inv is not None
        first_offsets = self._first_offsets(e)
        for tp, (off, _vid) in per_tp.items():
            prev = last.get(tp)
            low = first_offsets.get(tp, off)
            if prev is not None and low <= prev[0]:
                allowed = self.lossy or not (acks_all and prev[2])
                self.log.add(
                    Finding(
                        "nonmonotonic-send",
                        f"process {e.process} sent to {tp} at offset {low} after its earlier send there was "
                        f"acknowledged at offset {prev[0]}",
                        (prev[1], e.i),
                        tp,
                        allowed=allowed,
                        why=(self.lossy_why or "acks=0/1 write") if allowed else "",
                    )
                )
            last[tp] = (off, e.i, acks_all)

    @staticmethod
    def _first_offsets(e: OpEvent) -> dict[str, int]:
        out: dict[str, int] = {}
        v = e.value
        if isinstance(v, SendValue | TxnValue):
            for rec in v.records:
                if rec.offset is not None and rec.error is None and rec.tp not in out:
                    out[rec.tp] = rec.offset
        return out

    def _txn_done(self, e: OpEvent, inv: OpEvent) -> None:
        t = self.open_txn.pop(e.process, -1)
        if t < 0:
            return
        self.t_done_i[t] = e.i
        invoked = inv.value
        assert isinstance(invoked, TxnValue)
        if e.type == OK:
            self.t_fate[t] = _T_COMMITTED if invoked.end == "commit" else _T_ABORTED
        elif e.type == FAIL:
            self.t_fate[t] = _T_ABORTED
        tv = e.value if isinstance(e.value, TxnValue) else None
        recs = tv.records if tv is not None and len(tv.records) == len(invoked.records) else invoked.records
        committed = self.t_fate[t] == _T_COMMITTED
        per_tp: dict[str, tuple[int, int]] = {}
        for rec in recs:
            vid = self.vid[rec.value]
            self.v_writer[vid] = e.i
            if rec.error is not None or rec.offset is None:
                if e.type == FAIL and rec.error is None:
                    self.v_flags[vid] |= _FAILED
                continue
            if committed:
                self.v_flags[vid] |= _ACKED
                self.stats.values_acked += 1
            self._place(vid, rec.tp, rec.offset, e.i)
            prev = per_tp.get(rec.tp)
            if prev is not None and rec.offset <= prev[0]:
                self.log.add(
                    Finding(
                        "int-nonmonotonic-send",
                        f"transaction of {invoked.transactional_id} wrote {self._value_name(prev[1])} at offset "
                        f"{prev[0]} and then {rec.value} at offset {rec.offset} of {rec.tp}",
                        (e.i,),
                        rec.tp,
                    )
                )
            per_tp[rec.tp] = (rec.offset, vid)
        if committed:
            self._send_order(e, per_tp, True)
        if t in self.t_offsets:
            group, offsets = self.t_offsets[t]
            fate = self.t_fate[t]
            end_ns = e.mono_ns if fate == _T_COMMITTED else _NEVER
            for tp, off in offsets.items():
                self.offset_writes.setdefault((group, tp), {}).setdefault(off, []).append(
                    ("t", e.i, inv.mono_ns, t, fate, end_ns)
                )

    # ------------------------------------------------------------------ consumers

    def _end_run(self, tp: str, s: _TpState, rc: bool) -> None:
        if s.run_lo is not None and s.run_hi >= s.run_lo:
            self.runs.setdefault((self.tp_ids[tp], rc), []).append((s.run_lo, s.run_hi))
        s.run_lo = None
        s.run_hi = -1

    def _reset_consumer(self, process: int | str) -> None:
        c = self.consumers.pop(process, None)
        if c is not None:
            for tp, s in c.tps.items():
                self._end_run(tp, s, bool(c.rc))

    def _claim(self, tp: str, lo: int, hi: int, w1: int, w2: int, flags: int) -> None:
        self.g_tp.append(self.tp_ids[tp])
        self.g_lo.append(lo)
        self.g_hi.append(hi)
        self.g_w1.append(w1)
        self.g_w2.append(w2)
        self.g_flags.append(flags)

    def _nonmonotonic(self, tp: str, s: _TpState, off: int, i: int, sub: bool, rc: bool, what: str) -> None:
        allowed = sub or self.lossy
        why = "subscribe mode: a rebalance restarts from the committed offset" if sub else self.lossy_why
        self.log.add(
            Finding(
                "nonmonotonic-poll",
                f"{what} {off} of {tp}, after it had read up to {s.last_read} (position {s.pos})",
                (s.last_i, i),
                tp,
                allowed=allowed,
                why=why if allowed else "",
            )
        )
        self._end_run(tp, s, rc)
        s.last_read = None
        s.pos = None

    def _poll(self, e: OpEvent, inv: PollInvoke, res: PollResult) -> None:
        st = self.stats
        st.reads += 1
        st.records_read += len(res.records)
        rc = inv.isolation == "read_committed"
        sub = inv.mode == "subscribe"
        if sub and inv.group is not None:
            self.subscribed.add(inv.group)
        c = self.consumers.get(e.process)
        if c is None or c.rc != rc:
            if c is not None:
                self._reset_consumer(e.process)
            c = _Consumer(rc)
            self.consumers[e.process] = c
        tps = c.tps
        i = e.i
        ns = e.mono_ns
        vids = self.vid
        flags = (_G_RC if rc else 0) | (_G_SUB if sub else 0)
        v_flags, v_inv_ns, v_obs, v_obs_rc, v_off = self.v_flags, self.v_inv_ns, self.v_obs, self.v_obs_rc, self.v_off
        for rec in res.records:
            tp = rec.tp
            off = rec.offset
            assert off is not None  # the reader requires offsets in poll results
            vid = vids.get(rec.value)
            if vid is None:
                vid = self._new_value(rec.value, tp)
                self.early_reads[vid] = (i, ns, rc)
            elif ns < v_inv_ns[vid] and v_flags[vid] & _WRITTEN:
                self._future_read(vid, i, tp, rc)
            if v_obs[vid] < 0:
                v_obs[vid] = i
                st.values_read += 1
            if rc and v_obs_rc[vid] < 0:
                v_obs_rc[vid] = i
            # self._place(vid, tp, off, i), inlined for the common case (first sight, or same offset)
            if v_off[vid] == off:
                pass  # already placed at this offset (by its acknowledgement or an earlier read)
            else:
                self._place(vid, tp, off, i)
            s = tps.get(tp)
            if s is None:
                tps[tp] = _TpState(off, None, off, off, i)
                continue
            if s.last_read is not None and off <= s.last_read:
                if s.last_i == i:
                    self.log.add(
                        Finding(
                            "int-nonmonotonic-poll",
                            f"one poll returned offset {off} of {tp} after offset {s.last_read}",
                            (i,),
                            tp,
                        )
                    )
                    continue
                self._nonmonotonic(tp, s, off, i, sub, rc, "poll read offset")
            else:
                lower = s.pos if s.pos is not None else (s.last_read + 1 if s.last_read is not None else None)
                if lower is not None and off < lower:
                    self._nonmonotonic(tp, s, off, i, sub, rc, "poll read offset (below its position)")
                elif lower is not None and off > lower:
                    self._claim(tp, lower, off, s.last_i, i, flags | (_G_INT if s.last_i == i else 0))
                    if sub:
                        self._end_run(tp, s, rc)
                    elif s.run_lo is None:
                        s.run_lo = lower  # the position said the consumer would return `lower` next
            if s.run_lo is None:
                s.run_lo = off
            s.last_read = off
            s.pos = None
            s.run_hi = off
            s.last_i = i
        for tp, p in res.positions.items():
            s = tps.get(tp)
            if s is None:
                tps[tp] = _TpState(None, p, None, -1, i)
                continue
            lower = s.pos if s.pos is not None else (s.last_read + 1 if s.last_read is not None else None)
            if lower is None:
                s.pos = p
                s.last_i = i
                continue
            if p < lower:
                self._nonmonotonic(tp, s, p, i, sub, rc, "position moved back to")
                s.pos = p
                s.last_i = i
                continue
            if p > lower:
                self._claim(tp, lower, p, s.last_i, i, flags)
                if sub:
                    self._end_run(tp, s, rc)
                    s.pos = p
                    s.last_i = i
                    continue
                if s.run_lo is None:
                    s.run_lo = lower
                s.run_hi = p - 1
            s.pos = p
            s.last_i = i

    # ------------------------------------------------------------------ the end

    def finish(self, pending: Iterable[OpEvent] = (), warnings: Iterable[str] = ()) -> CheckResult:
        """Judge what needs the whole history; the history's open invocations (``pending``) are info."""
        st = self.stats
        for p in pending:
            st.pending += 1
            if self.delivery:
                self.delivery.pending(p, self.open_txn.get(p.process, -1))
            if p.f == "txn":
                t = self.open_txn.pop(p.process, None)
                if t is not None and t in self.t_offsets:
                    group, offsets = self.t_offsets[t]
                    for tp, off in offsets.items():
                        self.offset_writes.setdefault((group, tp), {}).setdefault(off, []).append(
                            ("t", p.i, p.mono_ns, t, _T_UNKNOWN, _NEVER)
                        )
            elif p.f == "commit" and isinstance(p.value, CommitValue):
                for tp, off in p.value.offsets.items():
                    self.offset_writes.setdefault((p.value.group, tp), {}).setdefault(off, []).append(
                        ("c", p.i, p.mono_ns, -1, _T_UNKNOWN, _NEVER)
                    )
        for process in list(self.consumers):
            self._reset_consumer(process)
        self._garbage_reads()
        evidence = self._committed_evidence()
        self._aborted_reads()
        self._zombies(evidence)
        covered = self._covered()
        self._lost_writes(evidence, covered)
        self._inconsistent_offsets()
        self._duplicates()
        self._gaps(evidence)
        self._txn_offsets()
        self._offset_commits()
        if self.delivery:
            self.delivery.finish(
                self.log,
                lambda t: None if t < 0 else (False if self.t_fate[t] == _T_ABORTED else True if evidence[t] else None),
                lambda tp, hi, rc: (
                    (off, self.v_name[vid])
                    for off, vid in self.index[self.tp_ids[tp]].items_between(0, hi)
                    if self._visible(vid, rc, evidence)
                ),
                self.lossy_why,
            )
        return self._verdict(list(warnings))

    def _garbage_reads(self) -> None:
        for vid, (poll_i, _ns, _rc) in self.early_reads.items():
            tp = self.tp_names[self.v_tp[vid]]
            self.log.add(
                Finding(
                    "garbage-read",
                    f"poll read {self._value_name(vid)} at offset {self.v_off[vid]} of {tp}; no operation wrote it",
                    (poll_i,),
                    tp,
                )
            )

    def _committed_evidence(self) -> bytearray:
        """Per transaction: 1 if it committed (ok) or a read_committed consumer read one of its records."""
        ev = bytearray(len(self.t_fate))
        for t, fate in enumerate(self.t_fate):
            if fate == _T_COMMITTED:
                ev[t] = 1
        obs_rc = self.v_obs_rc
        txn = self.v_txn
        for vid in range(len(self.v_flags)):
            t = txn[vid]
            if t >= 0 and obs_rc[vid] >= 0 and self.t_fate[t] == _T_UNKNOWN:
                ev[t] = 1
        return ev

    def _aborted_reads(self) -> None:
        flags, obs, obs_rc, txn, writer = self.v_flags, self.v_obs, self.v_obs_rc, self.v_txn, self.v_writer
        for vid in range(len(flags)):
            if obs[vid] < 0:
                continue
            t = txn[vid]
            tp = self.tp_names[self.v_tp[vid]]
            if t >= 0 and self.t_fate[t] == _T_ABORTED:
                what = f"{self._value_name(vid)} of an aborted transaction of {self.t_tid[t]}"
                if obs_rc[vid] >= 0:
                    self.log.add(Finding("G1a", f"read_committed poll read {what}", (writer[vid], obs_rc[vid]), tp))
                else:
                    self.log.add(
                        Finding(
                            "G1a",
                            f"read_uncommitted poll read {what}",
                            (writer[vid], obs[vid]),
                            tp,
                            allowed=True,
                            why="read_uncommitted returns aborted data",
                        )
                    )
            elif t < 0 and flags[vid] & _FAILED:
                self.log.add(
                    Finding(
                        "G1a",
                        f"poll read {self._value_name(vid)}, whose send definitely failed",
                        (writer[vid], obs[vid]),
                        tp,
                    )
                )

    def _zombies(self, evidence: bytearray) -> None:
        """zombie-commit, in two forms that need no knowledge of the coordinator's order:

        - definite: another instance's InitProducerId began after this instance's own completed and
          completed before this transaction began, so this instance was fenced, yet it committed;
        - concurrent: two instances' InitProducerIds overlapped (either may have fenced the other),
          and *both* committed transactions begun after both inits completed: whichever was fenced
          committed.
        """
        by_tid: dict[str, list[tuple[int, int, int | str, int]]] = {k: sorted(v) for k, v in self.inits.items()}
        keys = {k: [x[0] for x in v] for k, v in by_tid.items()}
        # (init i, init i) of two overlapping instances -> committing process -> its transaction
        ambiguous: dict[tuple[int, int], dict[int | str, int]] = {}
        for t in range(len(self.t_fate)):
            if not self.t_end_commit[t] or not evidence[t]:
                continue
            inits = by_tid.get(self.t_tid[t])
            if not inits:
                continue
            proc = self.t_proc[t]
            start = self.t_inv_ns[t]
            k = bisect.bisect_left(keys[self.t_tid[t]], start)
            others: list[tuple[int, int, int | str, int]] = []
            own: tuple[int, int, int | str, int] | None = None
            jo = -1
            for j in range(k - 1, -1, -1):
                if inits[j][2] == proc:
                    own, jo = inits[j], j
                    break
                others.append(inits[j])
            if own is None:
                continue
            own_ok_ns, own_inv_ns = own[0], own[1]
            fencers = [o for o in others if o[1] > own_ok_ns]  # began after this producer's epoch was issued
            if fencers:
                self._zombie(t, own, fencers[0])
                continue
            latest: dict[int | str, tuple[int, int, int | str, int]] = {}
            for o in reversed(others):  # ascending completion: the last one per process wins
                latest[o[2]] = o
            for j in range(jo - 1, -1, -1):  # inits that completed while this one was under way
                if inits[j][0] <= own_inv_ns:
                    break
                if inits[j][2] != proc and inits[j][2] not in latest:
                    latest[inits[j][2]] = inits[j]
            for q in latest.values():
                if q[1] < own_ok_ns and q[0] > own_inv_ns:  # overlapping InitProducerIds
                    pair = (min(own[3], q[3]), max(own[3], q[3]))
                    ambiguous.setdefault(pair, {}).setdefault(proc, t)
        for (a, b), by_proc in ambiguous.items():
            if len(by_proc) < 2:
                continue
            (p1, t1), (p2, t2) = sorted(by_proc.items(), key=lambda x: x[1])[:2]
            d1 = self.t_done_i[t1] if self.t_done_i[t1] >= 0 else self.t_inv_i[t1]
            d2 = self.t_done_i[t2] if self.t_done_i[t2] >= 0 else self.t_inv_i[t2]
            self.log.add(
                Finding(
                    "zombie-commit",
                    f"processes {p1} and {p2} ({self.t_tid[t1]}) ran InitProducerId concurrently, and both "
                    "committed transactions begun after both had completed: one of them was fenced",
                    (a, b, d1, d2),
                )
            )

    def _zombie(self, t: int, own: tuple[int, int, int | str, int], fencer: tuple[int, int, int | str, int]) -> None:
        how = "its commit succeeded" if self.t_fate[t] == _T_COMMITTED else "read_committed consumers read it"
        done = self.t_done_i[t] if self.t_done_i[t] >= 0 else self.t_inv_i[t]
        self.log.add(
            Finding(
                "zombie-commit",
                f"process {self.t_proc[t]} ({self.t_tid[t]}) began a transaction after process {fencer[2]}'s "
                f"InitProducerId for the same transactional.id completed, and {how}",
                (own[3], fencer[3], done),
            )
        )

    def _covered(self) -> dict[tuple[int, bool], tuple[list[int], list[int]]]:
        out: dict[tuple[int, bool], tuple[list[int], list[int]]] = {}
        for key, runs in self.runs.items():
            runs.sort()
            los: list[int] = []
            his: list[int] = []
            for lo, hi in runs:
                if his and lo <= his[-1] + 1:
                    if hi > his[-1]:
                        his[-1] = hi
                else:
                    los.append(lo)
                    his.append(hi)
            out[key] = (los, his)
        return out

    @staticmethod
    def _is_covered(cov: tuple[list[int], list[int]] | None, off: int) -> bool:
        if cov is None:
            return False
        los, his = cov
        k = bisect.bisect_right(los, off) - 1
        return k >= 0 and his[k] >= off

    def _lost_writes(self, evidence: bytearray, covered: dict[tuple[int, bool], tuple[list[int], list[int]]]) -> None:
        flags, obs, txn, offs = self.v_flags, self.v_obs, self.v_txn, self.v_off
        st = self.stats
        txn_seen: dict[int, bool] = {}
        txn_seen_rc: dict[int, bool] = {}
        for vid in range(len(flags)):
            fl = flags[vid]
            off = offs[vid]
            t = txn[vid]
            if t >= 0:
                if not evidence[t] or off < 0 or fl & _UNKNOWN:
                    continue
            elif not fl & _ACKED:
                continue
            tpi = self.v_tp[vid]
            if t >= 0 and self.v_obs_rc[vid] < 0 and self._is_covered(covered.get((tpi, True)), off):
                # a committed transaction's record that read_committed consumers passed over
                seen_rc = txn_seen_rc.get(t)
                if seen_rc is None:
                    seen_rc = any(self.v_obs_rc[v] >= 0 for v in self._txn_values(t))
                    txn_seen_rc[t] = seen_rc
                if seen_rc:
                    st.acked_judged += 1
                    tp = self.tp_names[tpi]
                    self.log.add(
                        Finding(
                            "non-atomic-txn",
                            f"read_committed consumers read part of a committed transaction of {self.t_tid[t]} but "
                            f"passed over its record {self._value_name(vid)} at offset {off} of {tp}",
                            (self.v_writer[vid], *([obs[vid]] if obs[vid] >= 0 else [])),
                            tp,
                            allowed=self.lossy,
                            why=self.lossy_why,
                        )
                    )
                    continue
            if obs[vid] >= 0:
                st.acked_judged += 1
                continue
            hit = self._is_covered(covered.get((tpi, False)), off) or self._is_covered(covered.get((tpi, True)), off)
            if not hit:
                st.unseen += 1
                continue
            st.acked_judged += 1
            tp = self.tp_names[tpi]
            name = "lost-write"
            if t >= 0:
                seen = txn_seen.get(t)
                if seen is None:
                    seen = any(obs[v] >= 0 for v in self._txn_values(t))
                    txn_seen[t] = seen
                if seen:
                    name = "non-atomic-txn"
                allowed = self.lossy
                why = self.lossy_why
            else:
                allowed = self.lossy or not fl & _ACKS_ALL
                why = self.lossy_why or "acks=1 write"
            self.log.add(
                Finding(
                    name,
                    f"{self._value_name(vid)} was acknowledged at offset {off} of {tp} "
                    + (f"(transaction of {self.t_tid[t]}) " if t >= 0 else "")
                    + "and never read, although consumers read across that offset",
                    (self.v_writer[vid],),
                    tp,
                    allowed=allowed,
                    why=why if allowed else "",
                )
            )
        if st.unseen:
            self.log.add(
                Finding(
                    "unseen",
                    f"{st.unseen} acknowledged writes were never read and no consumer read across their offsets",
                    (self._first_unseen(evidence, covered),),
                    allowed=True,
                    why="cannot be told from a write not yet read",
                )
            )

    def _first_unseen(self, evidence: bytearray, covered: dict[tuple[int, bool], tuple[list[int], list[int]]]) -> int:
        for vid in range(len(self.v_flags)):
            t = self.v_txn[vid]
            ok = (evidence[t] and self.v_off[vid] >= 0) if t >= 0 else bool(self.v_flags[vid] & _ACKED)
            if ok and self.v_obs[vid] < 0:
                return self.v_writer[vid]
        return 1

    def _inconsistent_offsets(self) -> None:
        for (tpi, off), vids in self.conflicts.items():
            tp = self.tp_names[tpi]
            ordered = sorted(vids)
            read = [v for v in ordered if self.v_obs[v] >= 0]
            acks_only = [v for v in ordered if self.v_obs[v] < 0]
            weak = (
                all(not self.v_flags[v] & _ACKS_ALL and not self.v_flags[v] & _TXN for v in acks_only)
                and len(read) <= 1
            )
            allowed = self.lossy or weak
            why = self.lossy_why or ("the other values were acknowledged by acks=0/1 sends only" if weak else "")
            witnesses = tuple(sorted({self.v_obs[v] if self.v_obs[v] >= 0 else self.v_writer[v] for v in ordered}))
            names = ", ".join(self._value_name(v) for v in ordered)
            self.log.add(
                Finding(
                    "inconsistent-offsets",
                    f"offset {off} of {tp} holds {len(ordered)} values: {names}",
                    witnesses,
                    tp,
                    allowed=allowed,
                    why=why if allowed else "",
                )
            )

    def _duplicates(self) -> None:
        for vid, seen in self.duplicates.items():
            fl = self.v_flags[vid]
            tp = self.tp_names[self.v_tp[vid]]
            first_w = self.v_obs[vid] if self.v_obs[vid] >= 0 else self.v_writer[vid]
            witnesses = tuple(sorted({first_w, *(w for _, w in seen if w >= 0)}))
            allowed = bool(fl & _WRITTEN) and not fl & _IDEMPOTENT
            offsets = ", ".join(str(o) for o, _ in seen)
            self.log.add(
                Finding(
                    "duplicate",
                    f"{self._value_name(vid)} is at offsets {offsets} of {tp}",
                    witnesses,
                    tp,
                    allowed=allowed,
                    why="non-idempotent producer (retries may write twice)" if allowed else "",
                )
            )

    def _visible(self, vid: int, rc: bool, evidence: bytearray) -> bool:
        if not rc:
            return True
        t = self.v_txn[vid]
        if t >= 0:
            return bool(evidence[t]) and self.t_fate[t] != _T_ABORTED
        return bool(self.v_flags[vid] & _WRITTEN) and not self.v_flags[vid] & _FAILED

    def _gaps(self, evidence: bytearray) -> None:
        n = len(self.g_flags)
        self.stats.gap_claims = n
        conflicts = self.conflicts
        for g in range(n):
            tpi = self.g_tp[g]
            fl = self.g_flags[g]
            rc = bool(fl & _G_RC)
            for off, vid in self.index[tpi].items_between(self.g_lo[g], self.g_hi[g]):
                if (tpi, off) in conflicts or not self._visible(vid, rc, evidence):
                    continue
                tp = self.tp_names[tpi]
                sub = bool(fl & _G_SUB)
                internal = bool(fl & _G_INT)
                allowed = not internal and (sub or self.lossy)
                why = "subscribe mode: another group member may have consumed it" if sub else self.lossy_why
                level = "read_committed" if rc else "read_uncommitted"
                self.log.add(
                    Finding(
                        "int-poll-skip" if internal else "poll-skip",
                        f"{level} consumer passed offsets {self.g_lo[g]}..{self.g_hi[g] - 1} of {tp} without "
                        f"returning {self._value_name(vid)} at offset {off}",
                        tuple(sorted({self.g_w1[g], self.g_w2[g]})),
                        tp,
                        allowed=allowed,
                        why=why if allowed else "",
                    )
                )
                break

    def _txn_offsets(self) -> None:
        for group, tp, off, ok_ns, fetch_i, _inv in self.fetches:
            if off is None:
                continue
            writers = self.offset_writes.get((group, tp), {}).get(off)
            if not writers:
                continue  # written outside the history (auto-commit): not judged
            bad: list[tuple[int, int, int]] = []
            for kind, w_i, inv_ns, t, fate, _end in writers:
                if kind == "c":
                    bad = []
                    break
                if fate == _T_ABORTED or inv_ns > ok_ns:
                    bad.append((w_i, t, fate))
                else:
                    bad = []
                    break
            if bad:
                w_i, t, fate = bad[0]
                why = "the transaction aborted" if fate == _T_ABORTED else "before the transaction began"
                self.log.add(
                    Finding(
                        "txn-offsets-visible-early",
                        f"group {group} fetched offset {off} of {tp}, written only by a transaction of "
                        f"{self.t_tid[t]}: {why}",
                        (w_i, fetch_i),
                        tp,
                    )
                )

    def _offset_commits(self) -> None:
        """lost-offset-commit: a fetch returns the value of the latest offset commit that completed
        before it began, or of a commit not known to be older; never an overwritten value or nothing."""
        latest: dict[tuple[str, str], tuple[list[int], list[int], list[int]]] = {}
        for key, by_value in self.offset_writes.items():
            if key[0] in self.subscribed:
                continue
            done = sorted(
                (end, inv, i) for ws in by_value.values() for _k, i, inv, _t, fate, end in ws
                if fate == _T_COMMITTED and end != _NEVER
            )  # fmt: skip
            ends = [d[0] for d in done]
            starts: list[int] = []  # running max of the start of writes completed so far
            which: list[int] = []
            for _end, inv, i in done:
                if not starts or inv > starts[-1]:
                    starts.append(inv)
                    which.append(i)
                else:
                    starts.append(starts[-1])
                    which.append(which[-1])
            latest[key] = (ends, starts, which)
        for group, tp, off, _ok_ns, fetch_i, fetch_inv in self.fetches:
            idx = latest.get((group, tp))
            if idx is None:
                continue
            ends, starts, which = idx
            k = bisect.bisect_left(ends, fetch_inv) - 1
            if k < 0:
                continue  # no commit completed before the fetch began
            newest_start, newest_i = starts[k], which[k]
            if off is None:
                stale = True
            else:
                writers = self.offset_writes[(group, tp)].get(off)
                if not writers:
                    continue  # a value written outside the history: not judged
                stale = all(end < newest_start for _k, _i, _inv, _t, fate, end in writers if fate != _T_ABORTED)
                stale = stale and any(fate != _T_ABORTED for *_, fate, _e in writers)
            if stale:
                got = "no offset" if off is None else f"offset {off}"
                self.log.add(
                    Finding(
                        "lost-offset-commit",
                        f"group {group} fetched {got} for {tp}, but a later commit had completed before the fetch",
                        (newest_i, fetch_i),
                        tp,
                        allowed=self.lossy,
                        why=self.lossy_why,
                    )
                )

    def _verdict(self, warnings: list[str]) -> CheckResult:
        st = self.stats
        if self.log.violations():
            verdict, reason = INVALID, f"{self.log.violations()} anomalies the configuration does not allow"
        elif st.acked_judged == 0:
            verdict = UNKNOWN
            reason = (
                "too little observed: no acknowledged write was read or read across "
                f"({st.values_acked} acknowledged, {st.reads} polls)"
            )
        else:
            verdict, reason = VALID, f"{st.acked_judged} acknowledged writes judged, no forbidden anomaly"
        return CheckResult(self.header, verdict, self.log, st, warnings, reason)


def check_history(path: str | os.PathLike[str], keep: int = 20) -> CheckResult:
    """Read ``path`` as a stream and judge it. Raises HistoryError / CheckInputError on bad input."""
    with open_history(path) as reader:
        checker = Checker(reader.header, keep=keep)
        feed = checker.feed
        for event in reader.events():
            feed(event)
        return checker.finish(reader.pending(), reader.warnings)
