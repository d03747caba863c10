"""The model's transition relation as SMT (z3): one state vector, one formula per atomic action.

Issue 5 (z3 bounded model checking). The actions are exactly those of model.actions.successors,
with the same labels (``fence(0)``, ``metadata(1, pe=2)``, ``replicate(1)``, ...), for the
default search alphabet: no crash, restart, checkpoint or clock jump, no unclean election (the
alphabet of the known-bug searches; ``check_supported`` refuses the rest). Each action is the
composition of the handlers of model.replication that model.actions composes (a fetch round trip is
one action), written over z3 terms: ``encode_action(label)`` gives the condition under which
successors() offers the label (its handlers allow it, it changes the state, the result is within
the search bounds) and the successor vector.

The state vector (``Vector``: names → ints / bools) is the canonical state of the search
(conformance.replication.explore.canonical) projected onto what these actions can change or read; ``project``
computes it from a State and refuses states outside the encoded alphabet (a crashed broker, an
AlterPartition in flight, ...). Choices, each exact for the states the actions reach:

- logs are ``records`` slots of (epoch, record id), -1 beyond the LEO (a log never holds more
  entries than records were written);
- the leader-epoch cache maps each epoch 0..max_leader_epoch to its start offset or -1, so its
  epochs are sorted and unique by construction (the map is the list of model.epochs);
- time never moves: ``last_caught_up_ms`` is "ever caught up" (a bool), ``last_fetch_ms`` and the
  produce deadlines are constants;
- the purgatory of broker b is one bool per record id (request id = record id; offset = the
  record's written offset), acknowledgements one bool and one leader epoch per record id;
- ``published`` (every record the controller published) is a slot per partition epoch
  0..partition_slots-1: the slots past the controller's partition epoch hold -1 / false.

tests/test_bmc_agreement.py proves the encoding and the executable model agree: for every state a
breadth-first search reaches within a bound and every label, the encoded step is enabled iff
successors() offers the label, and its successor vector is the projection of successors()'
state.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import z3  # type: ignore[import-untyped]

from kconform.model.actions import SearchBounds
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.state import FETCHING, IDLE, TRUNCATING, State

Term = Any
"""A z3 expression (z3 ships no type information)."""

Value = int | bool
Vector = dict[str, Value]
"""A concrete state vector: variable name → value."""

FETCH_CODES: dict[str, int] = {IDLE: 0, FETCHING: 1, TRUNCATING: 2}
_IDLE, _FETCHING, _TRUNCATING = 0, 1, 2


WIDTH = 8
"""Bits of every numeric variable (signed bit-vectors: z3 bit-blasts the problem to SAT). Every
value is an offset, epoch, broker or record id of a small bounded system: far from -128..127."""


_NUMS: dict[int, Term] = {}


def _num(v: int) -> Term:
    term = _NUMS.get(v)
    if term is None:
        term = _NUMS[v] = z3.BitVecVal(v, WIDTH)
    return term


class Unsupported(ValueError):
    """A configuration, bound or state outside what the encoding covers; the message says what."""


# ---------------------------------------------------------------------------------------------
# Dimensions and variable names


@dataclass(frozen=True)
class Dims:
    """The sizes of the vector: brokers, record ids (= log slots), leader epochs 0..max_leader_epoch
    (= epoch-cache slots), published partition records 0..partition_slots-1, and the search's
    bound on the partition epoch (``None``: only the slots bound it)."""

    replicas: int
    records: int
    max_leader_epoch: int
    partition_slots: int
    max_partition_epoch: int | None = None

    @property
    def partition_epoch_cap(self) -> int:
        """The highest partition epoch an action may publish: the search bound, or the last slot."""
        last = self.partition_slots - 1
        return last if self.max_partition_epoch is None else min(last, self.max_partition_epoch)


def dims_for(bounds: SearchBounds, cfg: ReplicationConfig, partition_slots: int) -> Dims:
    """The dimensions of ``bounds`` with ``partition_slots`` slots for published records."""
    return Dims(cfg.replicas, bounds.max_records, bounds.max_leader_epoch, partition_slots, bounds.max_partition_epoch)


def check_supported(cfg: ReplicationConfig, bounds: SearchBounds) -> None:
    """Raise Unsupported unless the encoding covers this configuration and search alphabet."""
    if bounds.allow_crash or bounds.allow_tick:
        raise Unsupported("the SMT encoding covers the default alphabet: no crash/restart/checkpoint, no clock jumps")
    if cfg.unclean_leader_election:
        raise Unsupported("the SMT encoding does not cover unclean leader election")
    if cfg.elr:
        raise Unsupported("the SMT encoding does not cover Eligible Leader Replicas (KIP-966); use explore")
    if not 1 <= cfg.replicas <= 4:
        raise Unsupported(f"the SMT encoding is for small clusters (1..4 replicas), got {cfg.replicas}")


def var_names(d: Dims) -> list[tuple[str, bool]]:
    """Every variable of the vector as (name, is_bool), in a fixed order."""
    out: list[tuple[str, bool]] = []
    n, e_, p_ = d.replicas, d.records, d.max_leader_epoch + 1
    for b in range(n):
        r = f"r{b}."
        for i in range(e_):
            out += [(f"{r}log{i}.epoch", False), (f"{r}log{i}.rid", False)]
        out += [(f"{r}leo", False), (f"{r}hw", False), (f"{r}durable", False)]
        out += [(f"{r}cache{e}", False) for e in range(p_)]
        out += [(f"{r}leader", False), (f"{r}le", False), (f"{r}pe", False), (f"{r}fetch", False)]
        out += [(f"{r}isr{m}", True) for m in range(n)]
        for f in range(n):
            out += [(f"{r}rem{f}.leo", False), (f"{r}rem{f}.caught", True), (f"{r}rem{f}.lfll", False)]
        out += [(f"{r}purg{k}", True) for k in range(e_)]
    out += [("c.leader", False), ("c.le", False), ("c.pe", False)]
    out += [(f"c.isr{m}", True) for m in range(n)]
    out += [(f"fenced{b}", True) for b in range(n)]
    for p in range(d.partition_slots):
        out += [(f"pub{p}.leader", False), (f"pub{p}.le", False)]
        out += [(f"pub{p}.isr{m}", True) for m in range(n)]
    out += [("written", False)]
    for k in range(e_):
        out += [(f"w{k}.off", False), (f"w{k}.epoch", False), (f"acked{k}", True), (f"acked{k}.le", False)]
    return out


# ---------------------------------------------------------------------------------------------
# Projection of a model state


def project(s: State, cfg: ReplicationConfig, d: Dims) -> Vector:
    """The vector of a search state (canonical, clock at 0); Unsupported when ``s`` lies outside
    the encoded alphabet or the dimensions."""
    n = d.replicas
    out: Vector = {}
    if s.now_ms != 0 or s.ghost.consumed or s.ghost.unclean_epochs or s.ghost.crash_lost_data:
        raise Unsupported("state has moved time, consumer reads, unclean epochs or crash losses")
    written = sorted(s.ghost.written, key=lambda e: e.rid)
    if [e.rid for e in written] != list(range(len(written))) or len(written) > d.records:
        raise Unsupported(f"written records {written} are not ids 0..{d.records - 1}")
    for b, r in enumerate(s.replicas):
        p = f"r{b}."
        if not (r.alive and r.registered) or r.pending_isr is not None or r.hw_checkpoint != 0:
            raise Unsupported(f"broker {b} is down, unregistered, has an AlterPartition in flight or a checkpoint")
        if r.leo > d.records:
            raise Unsupported(f"broker {b} has {r.leo} entries, more than {d.records} slots")
        for i in range(d.records):
            entry = r.log[i] if i < r.leo else None
            out[f"{p}log{i}.epoch"] = entry.epoch if entry else -1
            out[f"{p}log{i}.rid"] = entry.rid if entry else -1
        out[f"{p}leo"], out[f"{p}hw"], out[f"{p}durable"] = r.leo, r.hw, r.durable_leo
        starts = dict(r.epoch_cache)
        if len(starts) != len(r.epoch_cache) or any(not 0 <= e <= d.max_leader_epoch for e in starts):
            raise Unsupported(f"broker {b}: epoch cache {r.epoch_cache} outside epochs 0..{d.max_leader_epoch}")
        if [e for e, _ in r.epoch_cache] != sorted(starts):
            raise Unsupported(f"broker {b}: epoch cache {r.epoch_cache} epochs not increasing")
        for e in range(d.max_leader_epoch + 1):
            out[f"{p}cache{e}"] = starts.get(e, -1)
        out[f"{p}leader"], out[f"{p}le"], out[f"{p}pe"] = r.leader, r.leader_epoch, r.partition_epoch
        out[f"{p}fetch"] = FETCH_CODES[r.fetch_state]
        for m in range(n):
            out[f"{p}isr{m}"] = m in r.isr
        for f, rem in enumerate(r.remotes):
            if rem.last_caught_up_ms not in (None, 0) or rem.last_fetch_ms != 0:
                raise Unsupported(f"broker {b}: remote {f} has timestamps {rem}")
            out[f"{p}rem{f}.leo"] = rem.leo
            out[f"{p}rem{f}.caught"] = rem.last_caught_up_ms is not None
            out[f"{p}rem{f}.lfll"] = rem.last_fetch_leader_leo
        if r.fetches or r.due:
            raise Unsupported(f"broker {b}: delayed fetches {r.fetches} are not encoded")
        pending = [dp.req for dp in r.produces]
        if pending != sorted(set(pending)):
            raise Unsupported(f"broker {b}: purgatory {r.purgatory} not in request order")
        for dp in r.produces:
            if not (dp.req == dp.rid < len(written) and dp.offset == written[dp.rid].offset):
                raise Unsupported(f"broker {b}: delayed produce {dp} is not its record's write")
            if dp.deadline_ms != cfg.request_timeout_ms:
                raise Unsupported(f"broker {b}: delayed produce {dp} has a moved deadline")
        for k in range(d.records):
            out[f"{p}purg{k}"] = k in pending
    c = s.controller
    out["c.leader"], out["c.le"], out["c.pe"] = c.leader, c.leader_epoch, c.partition_epoch
    for m in range(n):
        out[f"c.isr{m}"] = m in c.isr
        out[f"fenced{m}"] = m in s.fenced
    if len(s.published) > d.partition_slots:
        raise Unsupported(f"{len(s.published)} published records, more than {d.partition_slots} slots")
    if c.partition_epoch != len(s.published) - 1 or (s.published and s.published[-1] != c):
        raise Unsupported("the controller's record is not the last published one")
    for pe in range(d.partition_slots):
        rec = s.published[pe] if pe < len(s.published) else None
        if rec is not None and rec.partition_epoch != pe:
            raise Unsupported(f"published record {pe} has partition epoch {rec.partition_epoch}")
        out[f"pub{pe}.leader"] = rec.leader if rec else -1
        out[f"pub{pe}.le"] = rec.leader_epoch if rec else -1
        for m in range(n):
            out[f"pub{pe}.isr{m}"] = rec is not None and m in rec.isr
    out["written"] = len(written)
    acked = {a.rid: a for a in s.ghost.acked}
    if len(acked) != len(s.ghost.acked):
        raise Unsupported("a record was acknowledged twice")
    for k in range(d.records):
        w = written[k] if k < len(written) else None
        out[f"w{k}.off"] = w.offset if w else -1
        out[f"w{k}.epoch"] = w.epoch if w else -1
        a = acked.get(k)
        if a is not None and (w is None or (a.offset, a.epoch, a.acks, a.guaranteed) != (w.offset, w.epoch, -1, True)):
            raise Unsupported(f"acknowledgement {a} is not an acks=all answer for its record")
        out[f"acked{k}"] = a is not None
        out[f"acked{k}.le"] = a.leader_epoch if a else -1
    return out


# ---------------------------------------------------------------------------------------------
# Symbolic states


class Rep:
    """One replica's slice of a symbolic state (mutable while an action is being built)."""

    def __init__(self, t: Mapping[str, Term], b: int, d: Dims) -> None:
        p = f"r{b}."
        n, k_, e_ = d.replicas, d.records, d.max_leader_epoch + 1
        self.log_ep: list[Term] = [t[f"{p}log{i}.epoch"] for i in range(k_)]
        self.log_rid: list[Term] = [t[f"{p}log{i}.rid"] for i in range(k_)]
        self.leo: Term = t[f"{p}leo"]
        self.hw: Term = t[f"{p}hw"]
        self.durable: Term = t[f"{p}durable"]
        self.cache: list[Term] = [t[f"{p}cache{e}"] for e in range(e_)]
        self.leader: Term = t[f"{p}leader"]
        self.le: Term = t[f"{p}le"]
        self.pe: Term = t[f"{p}pe"]
        self.fetch: Term = t[f"{p}fetch"]
        self.isr: list[Term] = [t[f"{p}isr{m}"] for m in range(n)]
        self.rem_leo: list[Term] = [t[f"{p}rem{f}.leo"] for f in range(n)]
        self.rem_caught: list[Term] = [t[f"{p}rem{f}.caught"] for f in range(n)]
        self.rem_lfll: list[Term] = [t[f"{p}rem{f}.lfll"] for f in range(n)]
        self.purg: list[Term] = [t[f"{p}purg{k}"] for k in range(k_)]

    def items(self, b: int) -> Iterator[tuple[str, Term]]:
        p = f"r{b}."
        for i, (ep, rid) in enumerate(zip(self.log_ep, self.log_rid, strict=True)):
            yield f"{p}log{i}.epoch", ep
            yield f"{p}log{i}.rid", rid
        yield f"{p}leo", self.leo
        yield f"{p}hw", self.hw
        yield f"{p}durable", self.durable
        for e, start in enumerate(self.cache):
            yield f"{p}cache{e}", start
        yield f"{p}leader", self.leader
        yield f"{p}le", self.le
        yield f"{p}pe", self.pe
        yield f"{p}fetch", self.fetch
        for m, member in enumerate(self.isr):
            yield f"{p}isr{m}", member
        for f in range(len(self.rem_leo)):
            yield f"{p}rem{f}.leo", self.rem_leo[f]
            yield f"{p}rem{f}.caught", self.rem_caught[f]
            yield f"{p}rem{f}.lfll", self.rem_lfll[f]
        for k, pending in enumerate(self.purg):
            yield f"{p}purg{k}", pending


class Sym:
    """A symbolic state: the replicas, the controller, the published records and the ghost."""

    def __init__(self, t: Mapping[str, Term], d: Dims) -> None:
        n, k_ = d.replicas, d.records
        self.d = d
        self.pe_hint: int | None = None
        """When known, the largest partition epoch ``t`` can hold (BMC: step k-1 holds <= k-1):
        records above it cannot be applied and slots above it + 1 cannot be published."""
        self.reps: list[Rep] = [Rep(t, b, d) for b in range(n)]
        self.c_leader: Term = t["c.leader"]
        self.c_le: Term = t["c.le"]
        self.c_pe: Term = t["c.pe"]
        self.c_isr: list[Term] = [t[f"c.isr{m}"] for m in range(n)]
        self.fenced: list[Term] = [t[f"fenced{b}"] for b in range(n)]
        self.pub_leader: list[Term] = [t[f"pub{p}.leader"] for p in range(d.partition_slots)]
        self.pub_le: list[Term] = [t[f"pub{p}.le"] for p in range(d.partition_slots)]
        self.pub_isr: list[list[Term]] = [[t[f"pub{p}.isr{m}"] for m in range(n)] for p in range(d.partition_slots)]
        self.written: Term = t["written"]
        self.w_off: list[Term] = [t[f"w{k}.off"] for k in range(k_)]
        self.w_ep: list[Term] = [t[f"w{k}.epoch"] for k in range(k_)]
        self.acked: list[Term] = [t[f"acked{k}"] for k in range(k_)]
        self.acked_le: list[Term] = [t[f"acked{k}.le"] for k in range(k_)]

    def clone(self) -> Sym:
        return _clone(self)

    def terms(self) -> dict[str, Term]:
        out: dict[str, Term] = {}
        for b, r in enumerate(self.reps):
            out.update(r.items(b))
        out["c.leader"], out["c.le"], out["c.pe"] = self.c_leader, self.c_le, self.c_pe
        for m in range(self.d.replicas):
            out[f"c.isr{m}"] = self.c_isr[m]
            out[f"fenced{m}"] = self.fenced[m]
        for p in range(self.d.partition_slots):
            out[f"pub{p}.leader"], out[f"pub{p}.le"] = self.pub_leader[p], self.pub_le[p]
            for m in range(self.d.replicas):
                out[f"pub{p}.isr{m}"] = self.pub_isr[p][m]
        out["written"] = self.written
        for k in range(self.d.records):
            out[f"w{k}.off"], out[f"w{k}.epoch"] = self.w_off[k], self.w_ep[k]
            out[f"acked{k}"], out[f"acked{k}.le"] = self.acked[k], self.acked_le[k]
        return out


def _clone(s: Sym) -> Sym:
    """A copy whose lists can be reassigned without touching ``s`` (terms are immutable)."""
    out = copy.copy(s)
    out.reps = [_clone_rep(r) for r in s.reps]
    for name in ("c_isr", "fenced", "pub_leader", "pub_le", "w_off", "w_ep", "acked", "acked_le"):
        setattr(out, name, list(getattr(s, name)))
    out.pub_isr = [list(row) for row in s.pub_isr]
    return out


def _clone_rep(r: Rep) -> Rep:
    out = copy.copy(r)
    for name in ("log_ep", "log_rid", "cache", "isr", "rem_leo", "rem_caught", "rem_lfll", "purg"):
        setattr(out, name, list(getattr(r, name)))
    return out


def variables(d: Dims, tag: str) -> dict[str, Term]:
    """Fresh z3 constants for one state, named ``<tag>.<variable>``."""
    return {
        name: z3.Bool(f"{tag}.{name}") if is_bool else z3.BitVec(f"{tag}.{name}", WIDTH)
        for name, is_bool in var_names(d)
    }


def constants(v: Vector) -> dict[str, Term]:
    """A concrete vector as z3 values."""
    return {name: z3.BoolVal(x) if isinstance(x, bool) else _num(x) for name, x in v.items()}


def packed(t: Mapping[str, Term]) -> Term:
    """The whole state as one bit-vector (bools one bit each), for comparing states in one term."""
    return z3.Concat([z3.If(x, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)) if z3.is_bool(x) else x for x in t.values()])


def packed_value(d: Dims, v: Vector) -> Term:
    """The constant ``packed`` gives for the variables of ``d`` holding the vector ``v``."""
    bits, width = 0, 0
    for name, is_bool in var_names(d):
        w = 1 if is_bool else WIDTH
        bits = (bits << w) | (int(v[name]) & ((1 << w) - 1))
        width += w
    return z3.BitVecVal(bits, width)


def equal(a: Mapping[str, Term], b: Mapping[str, Term]) -> Term:
    """Every variable of ``a`` equals the same one of ``b``."""
    return z3.And([a[k] == b[k] for k in a])


def differs(a: Mapping[str, Term], b: Mapping[str, Term]) -> Term:
    """Some variable differs (structurally identical terms are skipped)."""
    return z3.Or([a[k] != b[k] for k in a if not z3.eq(a[k], b[k])])


# ---------------------------------------------------------------------------------------------
# Term helpers


def _ite(c: Term, a: Term, b: Term) -> Term:
    return b if z3.eq(a, b) else z3.If(c, a, b)


def _min(a: Term, b: Term) -> Term:
    return z3.If(a <= b, a, b)


def _max(a: Term, b: Term) -> Term:
    return z3.If(a >= b, a, b)


def _select(values: Sequence[Term], index: Term, default: Term) -> Term:
    """``values[index]`` for a symbolic index; ``default`` outside 0..len-1."""
    out = default
    for i, v in enumerate(values):
        out = z3.If(index == i, v, out)
    return out


def _count(flags: Sequence[Term]) -> Term:
    total: Term = _num(0)
    for f in flags:
        total = total + z3.If(f, _num(1), _num(0))
    return total


def _merge_rep(c: Term, a: Rep, b: Rep) -> Rep:
    """Field by field: ``a`` where ``c``, else ``b``."""
    out = _clone_rep(b)
    for name, value in vars(a).items():
        other = getattr(b, name)
        if isinstance(value, list):
            setattr(out, name, [_ite(c, x, y) for x, y in zip(value, other, strict=True)])
        else:
            setattr(out, name, _ite(c, value, other))
    return out


def _merge(c: Term, a: Sym, b: Sym) -> Sym:
    out = _clone(b)
    out.reps = [_merge_rep(c, x, y) for x, y in zip(a.reps, b.reps, strict=True)]
    for name in ("c_leader", "c_le", "c_pe", "written"):
        setattr(out, name, _ite(c, getattr(a, name), getattr(b, name)))
    for name in ("c_isr", "fenced", "pub_leader", "pub_le", "w_off", "w_ep", "acked", "acked_le"):
        setattr(out, name, [_ite(c, x, y) for x, y in zip(getattr(a, name), getattr(b, name), strict=True)])
    out.pub_isr = [
        [_ite(c, x, y) for x, y in zip(ra, rb, strict=True)] for ra, rb in zip(a.pub_isr, b.pub_isr, strict=True)
    ]
    return out


# ---------------------------------------------------------------------------------------------
# The epoch cache (model.epochs over the epoch → start map)


def _latest_epoch(cache: Sequence[Term]) -> Term:
    out: Term = _num(-1)
    for e, start in enumerate(cache):
        out = z3.If(start >= 0, e, out)
    return out


def _assign(cache: Sequence[Term], epoch: Term, offset: Term, kafka_7415: bool = True) -> list[Term]:
    """epochs.assign: kept when ``epoch`` is the latest and ``offset`` not before its start; else
    entries of later-or-equal epochs or later-or-equal starts go and ``epoch`` starts at ``offset``.
    Before KAFKA-7415 (``kafka_7415`` False): ``epoch`` is added only when later than the latest
    epoch with ``offset`` not before the latest start, else nothing changes."""
    if not kafka_7415:
        latest = _latest_epoch(cache)
        latest_start = _select(cache, latest, _num(-1))
        add = z3.Or(latest == -1, z3.And(epoch > latest, offset >= latest_start))
        return [z3.If(z3.And(add, epoch == e), offset, start) for e, start in enumerate(cache)]
    keep = z3.And(_latest_epoch(cache) == epoch, offset >= _select(cache, epoch, _num(-1)))
    out = []
    for e, start in enumerate(cache):
        kept = z3.If(z3.And(epoch > e, start >= 0, start < offset), start, -1)
        out.append(z3.If(keep, start, z3.If(epoch == e, offset, kept)))
    return out


def _truncate_cache(cache: Sequence[Term], end: Term) -> list[Term]:
    return [z3.If(start < end, start, -1) for start in cache]


def _end_offset_for(
    cache: Sequence[Term], requested: Term, log_end: Term, kafka_7415: bool = True
) -> tuple[Term, Term]:
    """epochs.end_offset_for: (epoch, end offset) answered for ``requested``; (-1, -1) undefined
    (also, before KAFKA-7415, for a ``requested`` older than every cached epoch)."""
    empty = z3.And([start < 0 for start in cache])
    later_start: Term = _num(-1)
    for e in reversed(range(len(cache))):  # the smallest later epoch wins
        later_start = z3.If(z3.And(requested < e, cache[e] >= 0), cache[e], later_start)
    has_later = z3.Or([z3.And(requested < e, start >= 0) for e, start in enumerate(cache)])
    earlier: Term = _num(-1)
    for e, start in enumerate(cache):
        earlier = z3.If(z3.And(requested >= e, start >= 0), e, earlier)
    undefined = z3.Or(requested == -1, empty, z3.And(requested != _latest_epoch(cache), z3.Not(has_later)))
    if not kafka_7415:
        undefined = z3.Or(undefined, z3.And(requested != _latest_epoch(cache), earlier == -1))
    latest = requested == _latest_epoch(cache)
    epoch = z3.If(undefined, -1, z3.If(latest, requested, z3.If(earlier == -1, requested, earlier)))
    end = z3.If(undefined, -1, z3.If(latest, log_end, later_start))
    return epoch, end


# ---------------------------------------------------------------------------------------------
# Replica mechanics


def _truncate(r: Rep, to: Term) -> None:
    """Truncate to ``to`` entries (replication._truncate): cache from the end, HW and durable clamped."""
    to = _min(to, r.leo)
    for i in range(len(r.log_ep)):
        r.log_ep[i] = z3.If(to > i, r.log_ep[i], -1)
        r.log_rid[i] = z3.If(to > i, r.log_rid[i], -1)
    r.cache = _truncate_cache(r.cache, to)
    r.hw = _min(r.hw, to)
    r.durable = _min(r.durable, to)
    r.leo = to


def _append(r: Rep, cfg: ReplicationConfig, epoch: Term, rid: Term) -> None:
    """Append (epoch, rid) at the LEO (replication._append)."""
    for i in range(len(r.log_ep)):
        r.log_ep[i] = z3.If(r.leo == i, epoch, r.log_ep[i])
        r.log_rid[i] = z3.If(r.leo == i, rid, r.log_rid[i])
    r.cache = _assign(r.cache, epoch, r.leo, cfg.protocol.kafka_7415)
    r.leo = r.leo + 1
    if cfg.flush_interval_ms == 0:
        r.durable = r.leo


def _caught_up(r: Rep, f: int) -> Term:
    """replication.caught_up with the clock still: at the leader's LEO, or ever caught up."""
    return z3.Or(r.rem_leo[f] == r.leo, r.rem_caught[f])


def _hw_target(r: Rep, cfg: ReplicationConfig, node: int, members: Sequence[Term]) -> Term:
    """replication.leader_hw_target with the maximal ISR ``members``."""
    new_hw = r.leo
    for f in range(len(r.isr)):
        if f == node:
            continue
        counted = z3.And(z3.Or(members[f], _caught_up(r, f)), r.rem_leo[f] < new_hw)
        new_hw = z3.If(counted, r.rem_leo[f], new_hw)
    return z3.If(_count(r.isr) < cfg.effective_min_isr, r.hw, _max(r.hw, new_hw))


def _advance_hw(r: Rep, cfg: ReplicationConfig, node: int, members: Sequence[Term] | None = None) -> None:
    """replication._maybe_advance_hw (every broker is running and registered here)."""
    r.hw = z3.If(r.leader == node, _hw_target(r, cfg, node, r.isr if members is None else members), r.hw)


def _leads(s: Sym, b: int) -> Term:
    return s.reps[b].leader == b


# ---------------------------------------------------------------------------------------------
# Controller


def _elect(s: Sym, isr: Sequence[Term], fenced: Sequence[Term]) -> Term:
    out: Term = _num(-1)
    for b in reversed(range(len(isr))):
        out = z3.If(z3.And(isr[b], z3.Not(fenced[b])), b, out)
    return out


def _publish(s: Sym, leader: Term, isr: Sequence[Term]) -> None:
    """replication._publish: a changed record gets partition epoch + 1 (and leader epoch + 1 when
    the leader changes) and is appended to the published records."""
    changed = z3.Or(leader != s.c_leader, *(a != b for a, b in zip(isr, s.c_isr, strict=True)))
    le = z3.If(leader != s.c_leader, s.c_le + 1, s.c_le)
    pe = s.c_pe + 1
    top = s.d.partition_slots if s.pe_hint is None else min(s.d.partition_slots, s.pe_hint + 2)
    for p in range(top):
        at = z3.And(changed, pe == p)
        s.pub_leader[p] = z3.If(at, leader, s.pub_leader[p])
        s.pub_le[p] = z3.If(at, le, s.pub_le[p])
        s.pub_isr[p] = [z3.If(at, new, old) for new, old in zip(isr, s.pub_isr[p], strict=True)]
    s.c_leader = z3.If(changed, leader, s.c_leader)
    s.c_le = z3.If(changed, le, s.c_le)
    s.c_pe = z3.If(changed, pe, s.c_pe)
    s.c_isr = [z3.If(changed, new, old) for new, old in zip(isr, s.c_isr, strict=True)]


def _within(s: Sym) -> Term:
    """actions._within: the controller's epochs within the search bounds (and the slots)."""
    return z3.And(s.c_le <= s.d.max_leader_epoch, s.c_pe <= s.d.partition_epoch_cap)


# ---------------------------------------------------------------------------------------------
# The actions: (enabled, successor)

Step = tuple[Term, Sym]


def _fence(s: Sym, cfg: ReplicationConfig, b: int) -> Step:
    t = s.clone()
    t.fenced[b] = z3.BoolVal(True)
    reduced = [z3.BoolVal(False) if m == b else s.c_isr[m] for m in range(len(s.c_isr))]
    isr = [z3.If(z3.Or(reduced), x, y) for x, y in zip(reduced, s.c_isr, strict=True)]
    leader = z3.If(s.c_leader == b, _elect(s, isr, t.fenced), s.c_leader)
    _publish(t, leader, isr)
    can_elect = s.c_le < s.d.max_leader_epoch
    return z3.And(z3.Not(s.fenced[b]), z3.Or(can_elect, s.c_leader != b), _within(t)), t


def _unfence(s: Sym, cfg: ReplicationConfig, b: int) -> Step:
    t = s.clone()
    t.fenced[b] = z3.BoolVal(False)
    elected = t.clone()
    _publish(elected, _elect(s, s.c_isr, t.fenced), s.c_isr)
    t = _merge(s.c_leader == -1, elected, t)
    return z3.And(s.fenced[b], _within(t)), t


def _move_leader(s: Sym, cfg: ReplicationConfig, b: int) -> Step:
    t = s.clone()
    _publish(t, _num(b), s.c_isr)
    en = z3.And(s.c_le < s.d.max_leader_epoch, s.c_leader != b, s.c_isr[b], z3.Not(s.fenced[b]), _within(t))
    return en, t


def _metadata_enabled(s: Sym, b: int, p: int) -> Term:
    """When successors() offers ``metadata(b, pe=p)``: the record exists, is newer than what ``b``
    applied (a broker that never applied one takes the latest only) and its leader epoch is not
    older."""
    if s.pe_hint is not None and p > s.pe_hint:
        return z3.BoolVal(False)
    r = s.reps[b]
    return z3.And(p <= s.c_pe, z3.Implies(r.pe < 0, s.c_pe == p), r.pe < p, s.pub_le[p] >= r.le)


def _metadata_next(s: Sym, cfg: ReplicationConfig, b: int, p: int | Term) -> Sym:
    """Broker ``b`` applies published record ``p`` (replication.apply_metadata); ``p`` may be a
    term (the metadata family's shared successor: one formula for every record)."""
    r = s.reps[b]
    if isinstance(p, int):
        rec_leader, rec_le, rec_isr, pe = s.pub_leader[p], s.pub_le[p], s.pub_isr[p], _num(p)
    else:
        top = s.d.partition_slots if s.pe_hint is None else min(s.d.partition_slots, s.pe_hint + 1)
        rec_leader = _select(s.pub_leader[:top], p, _num(-1))
        rec_le = _select(s.pub_le[:top], p, _num(-1))
        rec_isr = [_select([row[m] for row in s.pub_isr[:top]], p, z3.BoolVal(False)) for m in range(s.d.replicas)]
        pe = p
    lead = _clone_rep(r)
    lead.leader, lead.le, lead.pe, lead.isr = _num(b), rec_le, pe, list(rec_isr)
    lead.fetch = _num(_IDLE)
    # replication.reset_remotes: a new leader forgets its followers' LEOs, a re-elected one keeps them
    # (Replica.resetReplicaState, isNewLeader); an ISR member's last fetch becomes the leader's LEO
    is_new = r.leader != b
    lead.rem_leo = [z3.If(is_new, _num(-1), leo) for leo in r.rem_leo]
    lead.rem_caught = list(rec_isr)
    lead.rem_lfll = [z3.If(z3.Or(is_new, z3.Not(rec_isr[f])), _num(-1), r.leo) for f in range(len(r.rem_lfll))]
    lead.cache = _assign(r.cache, rec_le, r.leo) if cfg.protocol.kafka_7415 else list(r.cache)
    follow = _clone_rep(r)
    follow.leader, follow.le, follow.pe, follow.isr = rec_leader, rec_le, pe, list(rec_isr)
    if cfg.protocol is Protocol.TRUNCATE_TO_HW:
        truncated = _clone_rep(follow)
        _truncate(truncated, r.hw)
        truncated.fetch = _num(_FETCHING)
        follow.fetch = _num(_IDLE)
        follow = _merge_rep(rec_leader != -1, truncated, follow)
    else:
        started = _TRUNCATING if cfg.protocol.uses_epoch_query else _FETCHING
        follow.fetch = z3.If(rec_leader != -1, _num(started), _num(_IDLE))
    update = _clone_rep(r)
    update.pe, update.isr = pe, list(rec_isr)
    new = _merge_rep(z3.And(rec_leader == b, rec_le > r.le), lead, _merge_rep(rec_le > r.le, follow, update))
    _advance_hw(new, cfg, b)
    t = s.clone()
    t.reps[b] = new
    return t


def _metadata(s: Sym, cfg: ReplicationConfig, b: int, p: int) -> Step:
    en = _metadata_enabled(s, b, p)
    return en, (s if z3.is_false(en) else _metadata_next(s, cfg, b, p))


def _write(s: Sym, cfg: ReplicationConfig, b: int) -> Step:
    r = s.reps[b]
    t = s.clone()
    new = t.reps[b]
    for k in range(s.d.records):
        at = s.written == k
        t.w_off[k] = z3.If(at, r.leo, s.w_off[k])
        t.w_ep[k] = z3.If(at, r.le, s.w_ep[k])
        new.purg[k] = z3.Or(at, r.purg[k])
    _append(new, cfg, r.le, s.written)
    _advance_hw(new, cfg, b)
    t.written = s.written + 1
    en = z3.And(s.written < s.d.records, _leads(s, b), _count(r.isr) >= cfg.effective_min_isr)
    return en, t


def _ack(s: Sym, cfg: ReplicationConfig, b: int, k: int, enough: bool) -> Step:
    r = s.reps[b]
    offset = s.w_off[k]
    en = z3.And(
        r.purg[k],
        _leads(s, b),
        r.hw > offset,
        _select(r.log_rid, offset, _num(-1)) == k,
        (_count(r.isr) >= cfg.effective_min_isr) == enough,
    )
    t = s.clone()
    t.reps[b].purg[k] = z3.BoolVal(False)
    if enough:
        t.acked[k] = z3.BoolVal(True)
        t.acked_le[k] = r.le
    return en, t


def _replicate_from(s: Sym, cfg: ReplicationConfig, f: int, lead: int) -> Sym:
    """One fetch round trip of follower ``f`` from broker ``lead`` (fetch_request, handle_fetch,
    apply_fetch_response)."""
    r, ldr = s.reps[f], s.reps[lead]
    lfe = _latest_epoch(r.cache) if cfg.protocol is Protocol.DIVERGING_EPOCH else _num(-1)
    error = z3.Not(_leads(s, lead))
    if cfg.protocol.fenced:
        error = z3.Or(ldr.le != r.le, error)
    end_epoch, end_offset = _end_offset_for(ldr.cache, lfe, ldr.leo, cfg.protocol.kafka_7415)
    out_of_range_epoch = z3.And(lfe >= 0, end_epoch == -1)
    diverging = z3.And(lfe >= 0, end_epoch != -1, z3.Or(end_epoch < lfe, end_offset < r.leo))
    out_of_range = z3.Or(out_of_range_epoch, z3.And(z3.Not(diverging), z3.Or(r.leo > ldr.leo, r.leo < 0)))
    normal = z3.And(z3.Not(error), z3.Not(out_of_range), z3.Not(diverging))

    # The follower truncates on a diverging epoch (_diverging_truncation) ...
    div = _clone_rep(r)
    own_epoch, own_end = _end_offset_for(r.cache, end_epoch, r.leo, cfg.protocol.kafka_7415)
    to = z3.If(
        own_epoch == end_epoch,
        _min(_min(end_offset, own_end), r.leo),
        z3.If(own_epoch != -1, _min(own_end, r.leo), _min(end_offset, r.leo)),
    )
    _truncate(div, to)
    # ... or to the leader's LEO on OFFSET_OUT_OF_RANGE when its own is beyond it ...
    oor = _clone_rep(r)
    _truncate(oor, ldr.leo)
    oor = _merge_rep(ldr.leo < r.leo, oor, r)
    # ... or appends what the leader sent and takes the leader's HW from before the fetch.
    app = _clone_rep(r)
    for i in range(s.d.records):
        sent = z3.And(r.leo <= i, ldr.leo > i)
        app.log_ep[i] = z3.If(sent, ldr.log_ep[i], r.log_ep[i])
        app.log_rid[i] = z3.If(sent, ldr.log_rid[i], r.log_rid[i])
        app.cache = [
            z3.If(sent, x, y)
            for x, y in zip(_assign(app.cache, ldr.log_ep[i], _num(i), cfg.protocol.kafka_7415), app.cache, strict=True)
        ]
    app.leo = _max(r.leo, ldr.leo)
    if cfg.flush_interval_ms == 0:
        app.durable = app.leo
    app.hw = _min(ldr.hw, app.leo)
    # The leader records the fetch (handle_fetch) and may advance its HW.
    served = _clone_rep(ldr)
    served.rem_caught[f] = z3.Or(
        r.leo >= ldr.leo, z3.And(ldr.rem_lfll[f] >= 0, r.leo >= ldr.rem_lfll[f]), ldr.rem_caught[f]
    )
    served.rem_leo[f] = r.leo
    served.rem_lfll[f] = _max(ldr.leo, ldr.rem_lfll[f])
    _advance_hw(served, cfg, lead)

    t = s.clone()
    t.reps[f] = _merge_rep(error, r, _merge_rep(out_of_range, oor, _merge_rep(diverging, div, app)))
    t.reps[lead] = _merge_rep(normal, served, ldr)
    return t


def _replicate(s: Sym, cfg: ReplicationConfig, f: int) -> Step:
    return _follower_step(s, cfg, f, _FETCHING, _replicate_from)


def _truncate_from(s: Sym, cfg: ReplicationConfig, f: int, lead: int) -> Sym:
    """One OffsetsForLeaderEpoch round trip of follower ``f`` to broker ``lead`` and the
    truncation it leads to (epoch_query_request, handle_epoch_query, apply_epoch_answer)."""
    r, ldr = s.reps[f], s.reps[lead]
    error = z3.Not(_leads(s, lead))
    if cfg.protocol.fenced:
        error = z3.Or(ldr.le != r.le, error)
    a_epoch, a_end = _end_offset_for(ldr.cache, _latest_epoch(r.cache), ldr.leo, cfg.protocol.kafka_7415)
    if cfg.protocol is Protocol.KIP_101:
        a_epoch = _num(-1)
    own_epoch, own_end = _end_offset_for(r.cache, a_epoch, r.leo, cfg.protocol.kafka_7415)
    to = z3.If(
        a_end == -1,
        r.hw,
        z3.If(
            a_epoch == -1,
            _min(a_end, r.leo),
            z3.If(
                own_epoch == a_epoch,
                _min(_min(a_end, own_end), r.leo),
                z3.If(own_epoch != -1, _min(own_end, r.leo), _min(a_end, r.leo)),
            ),
        ),
    )
    complete = z3.Or(a_end == -1, a_epoch == -1, own_epoch == a_epoch, own_epoch == -1)
    new = _clone_rep(r)
    _truncate(new, to)
    new.fetch = z3.If(complete, _FETCHING, r.fetch)
    t = s.clone()
    t.reps[f] = _merge_rep(error, r, new)
    return t


def _truncate_step(s: Sym, cfg: ReplicationConfig, f: int) -> Step:
    return _follower_step(s, cfg, f, _TRUNCATING, _truncate_from)


def _follower_step(
    s: Sym, cfg: ReplicationConfig, f: int, state: int, step: Callable[[Sym, ReplicationConfig, int, int], Sym]
) -> Step:
    """A follower round trip with whichever broker it follows (never itself: a follower's leader
    is another broker in every reachable state; the encoding disables the other case)."""
    r = s.reps[f]
    leaders = [b for b in range(s.d.replicas) if b != f]
    t = s
    for b in leaders:
        t = _merge(r.leader == b, step(s, cfg, f, b), t)
    en = z3.And(r.fetch == state, z3.Or([r.leader == b for b in leaders]), differs(t.terms(), s.terms()))
    return en, t


def _alter_isr(s: Sym, cfg: ReplicationConfig, b: int, f: int, expand: bool) -> Step:
    """One accepted AlterPartition round trip (actions.alter_isr): ``b`` proposes its ISR without
    ``f`` (shrink) or with ``f`` (expand); the controller commits it; ``b`` applies the answer."""
    r = s.reps[b]
    proposed = [z3.BoolVal(expand) if m == f else r.isr[m] for m in range(s.d.replicas)]
    if expand:
        allowed = z3.And(z3.Not(r.isr[f]), r.rem_leo[f] >= r.hw)
        if cfg.protocol.fenced:
            allowed = z3.And(allowed, r.rem_leo[f] >= _select(r.cache, r.le, _num(-1)))
    else:
        allowed = z3.And(r.isr[f], z3.Not(_caught_up(r, f)))
    en = z3.And(_leads(s, b), r.isr[b], allowed)
    t = s.clone()
    new = t.reps[b]
    _advance_hw(new, cfg, b, proposed if expand else None)  # propose_isr: the maximal ISR
    added_fenced = z3.Or([z3.And(proposed[m], z3.Not(s.c_isr[m]), s.fenced[m]) for m in range(s.d.replicas)])
    ok = z3.And(s.c_leader == b, r.le == s.c_le, r.pe == s.c_pe, z3.Not(added_fenced))
    en = z3.And(en, ok)  # actions.alter_isr: a refused proposal stays pending, not a step here
    decided = t.clone()
    _publish(decided, s.c_leader, proposed)
    t = _merge(ok, decided, t)
    new = t.reps[b]
    adopt = z3.And(ok, t.c_pe > r.pe)
    new.isr = [z3.If(adopt, x, y) for x, y in zip(t.c_isr, new.isr, strict=True)]
    new.pe = z3.If(adopt, t.c_pe, new.pe)
    _advance_hw(new, cfg, b)
    return z3.And(en, differs(t.terms(), s.terms()), _within(t)), t


# ---------------------------------------------------------------------------------------------
# The alphabet


@dataclass(frozen=True)
class Action:
    """One label of model.actions.successors and how to build its step. Labels of one ``family``
    (consecutive in the alphabet, ``param`` 0, 1, ...) share one successor formula built by
    ``shared`` over a symbolic parameter (the step's action index minus the family's first)."""

    label: str
    build: Callable[[Sym, ReplicationConfig], Step]
    family: str = ""
    param: int = 0
    shared: Callable[[Sym, ReplicationConfig, Term], Sym] | None = None


def _bind(build: Callable[..., Step], *args: int | bool) -> Callable[[Sym, ReplicationConfig], Step]:
    def step(s: Sym, cfg: ReplicationConfig) -> Step:
        return build(s, cfg, *args)

    return step


def _enabled_only(enabled: Callable[..., Term], *args: int) -> Callable[[Sym, ReplicationConfig], Step]:
    """A family member's build: its own enabling condition (the successor is the family's)."""

    def step(s: Sym, cfg: ReplicationConfig) -> Step:
        return enabled(s, *args), s

    return step


def _metadata_family(b: int) -> Callable[[Sym, ReplicationConfig, Term], Sym]:
    def shared(s: Sym, cfg: ReplicationConfig, p: Term) -> Sym:
        return _metadata_next(s, cfg, b, p)

    return shared


def alphabet(d: Dims) -> list[Action]:
    """Every label successors() can produce within ``d``, in a fixed order."""
    n = range(d.replicas)
    out: list[Action] = []

    def add(label: str, build: Callable[[Sym, ReplicationConfig], Step]) -> None:
        out.append(Action(label, build))

    for b in n:
        add(f"fence({b})", _bind(_fence, b))
        add(f"unfence({b})", _bind(_unfence, b))
        add(f"move_leader({b})", _bind(_move_leader, b))
    for b in n:
        shared = _metadata_family(b)
        for p in range(d.partition_slots):
            out.append(
                Action(f"metadata({b}, pe={p})", _enabled_only(_metadata_enabled, b, p), f"metadata({b})", p, shared)
            )
    for b in n:
        add(f"write({b})", _bind(_write, b))
        for k in range(d.records):
            add(f"ack({b}, {k})", _bind(_ack, b, k, True))
            add(f"ack({b}, {k}, NOT_ENOUGH_REPLICAS_AFTER_APPEND)", _bind(_ack, b, k, False))
    for f in n:
        add(f"replicate({f})", _bind(_replicate, f))
        add(f"truncate({f})", _bind(_truncate_step, f))
    for b in n:
        for f in n:
            if f != b:
                add(f"shrink({b}, {f})", _bind(_alter_isr, b, f, False))
                add(f"expand({b}, {f})", _bind(_alter_isr, b, f, True))
    return out


Steps = list[tuple[str, Term, dict[str, Term]]]
"""(label, enabled, successor terms) per label, in alphabet order."""


def encode_actions(
    cfg: ReplicationConfig, d: Dims, pre: Mapping[str, Term], act: Term, pe_hint: int | None = None
) -> Steps:
    """(label, enabled, successor terms) of every action from the state ``pre``, for a step whose
    action index is ``act``: a family's labels share one successor whose parameter is ``act``
    minus the family's first index (meaningful exactly when ``act`` selects one of them);
    ``pe_hint``: a bound on ``pre``'s partition epoch the caller guarantees (smaller formulas),
    None: none."""
    s = Sym(pre, d)
    s.pe_hint = pe_hint
    out: Steps = []
    shared: dict[str, dict[str, Term]] = {}
    for i, action in enumerate(alphabet(d)):
        en, post = action.build(s, cfg)
        terms = post.terms()
        if action.shared is not None:
            if action.family not in shared:
                param = z3.Extract(WIDTH - 1, 0, act - (i - action.param))
                shared[action.family] = action.shared(s, cfg, param).terms()
            terms = shared[action.family]
        out.append((action.label, en, terms))
    return out


def transition(
    cfg: ReplicationConfig,
    d: Dims,
    pre: Mapping[str, Term],
    post: Mapping[str, Term],
    act: Term,
    steps: Steps | None = None,
    pe_hint: int | None = None,
    enabling: bool = True,
) -> Term:
    """One step: ``act`` (a bit-vector of ACT_WIDTH bits) is the index of an enabled label and
    ``post`` is its successor (``enabling`` False: the successor only, enabled or not). Each
    variable's next value is a choice over the labels that can change it (the others keep it;
    consecutive labels with one successor term, a family, are one choice over their index range),
    which keeps the formula small. ``steps``: encode_actions of ``pre`` and ``act``, when built."""
    steps = encode_actions(cfg, d, pre, act, pe_hint) if steps is None else steps
    clauses = [z3.ULT(act, len(steps))]
    for i, (_label, en, _nxt) in enumerate(steps):
        if not enabling:
            continue
        if z3.is_false(en):
            clauses.append(act != i)
        else:
            clauses.append(z3.Implies(act == i, en))
    for name, now in pre.items():
        runs: list[tuple[int, int, Term]] = []  # (first index, last index, next value)
        for i, (_label, en, nxt) in enumerate(steps):
            term = nxt[name]
            if z3.eq(term, now) or z3.is_false(en):
                continue
            if runs and runs[-1][1] == i - 1 and z3.eq(runs[-1][2], term):
                runs[-1] = (runs[-1][0], i, term)
            else:
                runs.append((i, i, term))
        value = now
        for lo, hi, term in runs:
            chosen = act == lo if lo == hi else z3.And(z3.UGE(act, lo), z3.ULE(act, hi))
            value = z3.If(chosen, term, value)
        clauses.append(post[name] == value)
    return z3.And(clauses)


ACT_WIDTH = 12
"""Bits of the action index of one step (up to 4096 labels)."""


# ---------------------------------------------------------------------------------------------
# Footprints: which parts of the state a step reads or writes (partial-order reduction)


def _label_kind(label: str) -> tuple[str, list[int]]:
    kind, _, rest = label.partition("(")
    args = [int(x) for x in rest.rstrip(")").replace("pe=", "").split(", ") if x.lstrip("-").isdigit()]
    return kind, args


_CONTROLLER_KINDS = ("fence", "unfence", "move_leader", "shrink", "expand")
"""The actions that may publish a partition record."""


def footprint(d: Dims, pre: Mapping[str, Term], act: Term) -> dict[str, Term]:
    """Which parts of the state the step ``act`` from ``pre`` may read or write, as one bool per
    part: ``rep<b>`` (broker b's replica), ``ctl`` (the controller and the fenced set), ``pub<p>``
    (published partition record p), ``written`` (the produce counter and the next record's write),
    ``acked<k>``.

    The parts are over-approximations that hold for every well-formed state (commute_lemma checks
    it): an election, unfence or leader move touches the controller and the next record it may
    publish; a metadata delivery of record p to b touches replica b and record p, which no action
    changes once published (and the controller's partition epoch only grows), so it does not touch
    the controller once b has applied a record (partition epoch >= 0, as after the boot); a write on b
    touches replica b and the produce counter; an acknowledgement by b of record k touches replica
    b and record k's acknowledgement (its write, done before, no action changes); a follower round
    trip of f touches replica f and the replica of the broker f follows; an ISR change by b touches
    replica b, the controller and the next record."""
    s = Sym(pre, d)
    parts: dict[str, list[Term]] = {f"rep{b}": [] for b in range(d.replicas)}
    parts |= {"ctl": [], "written": []} | {f"acked{k}": [] for k in range(d.records)}
    parts |= {f"pub{p}": [] for p in range(d.partition_slots)}
    controller = [i for i, a in enumerate(alphabet(d)) if _label_kind(a.label)[0] in _CONTROLLER_KINDS]
    for p in range(d.partition_slots):  # the record a controller action may publish next
        parts[f"pub{p}"].append(z3.And(s.c_pe + 1 == p, z3.Or([act == i for i in controller])))
    for i, action in enumerate(alphabet(d)):
        kind, args = _label_kind(action.label)
        chosen = act == i
        if kind in ("fence", "unfence", "move_leader"):
            parts["ctl"].append(chosen)
        elif kind == "metadata":
            parts[f"rep{args[0]}"].append(chosen)
            parts[f"pub{args[1]}"].append(chosen)
            parts["ctl"].append(z3.And(chosen, s.reps[args[0]].pe < 0))
        elif kind == "write":
            parts[f"rep{args[0]}"].append(chosen)
            parts["written"].append(chosen)
        elif kind == "ack":
            parts[f"rep{args[0]}"].append(chosen)
            parts[f"acked{args[1]}"].append(chosen)
        elif kind in ("replicate", "truncate"):
            f = args[0]
            parts[f"rep{f}"].append(chosen)
            for b in range(d.replicas):
                if b != f:
                    parts[f"rep{b}"].append(z3.And(chosen, s.reps[f].leader == b))
        elif kind in ("shrink", "expand"):
            parts[f"rep{args[0]}"].append(chosen)
            parts["ctl"].append(chosen)
        else:  # pragma: no cover - a new action kind must say what it touches
            raise ValueError(f"no footprint for {action.label}")
    return {name: z3.Or(terms) for name, terms in parts.items()}


def independent(a: Mapping[str, Term], b: Mapping[str, Term]) -> Term:
    """Two footprints share no part."""
    return z3.And([z3.Not(z3.And(a[name], b[name])) for name in a])


def out_of_order(d: Dims, pre1: Mapping[str, Term], act1: Term, pre2: Mapping[str, Term], act2: Term) -> Term:
    """Step ``act2`` (from ``pre2``, the state ``act1`` led to from ``pre1``) has a smaller label
    index than ``act1`` and the two footprints are disjoint: the two steps commute (commute_lemma),
    so the run with them swapped reaches the same state with as many steps."""
    return z3.And(z3.ULT(act2, act1), independent(footprint(d, pre1, act1), footprint(d, pre2, act2)))


def action_variable(tag: str) -> Term:
    """A fresh action index."""
    return z3.BitVec(tag, ACT_WIDTH)


# ---------------------------------------------------------------------------------------------
# Well-formed bounded states


def well_formed(cfg: ReplicationConfig, d: Dims, t: Mapping[str, Term]) -> Term:
    """The bounded states the vector describes: values within their ranges, log slots past the LEO
    empty, a follower's leader another broker, published records exactly up to the controller's
    partition epoch. Every reachable state satisfies it (projection builds nothing else) and the
    transition keeps it (tests/test_bmc_inductive.py)."""
    s = Sym(t, d)
    n, k_, e_max = d.replicas, d.records, d.max_leader_epoch
    out: list[Term] = []

    def within(x: Term, lo: int, hi: int) -> None:
        out.append(z3.And(x >= lo, x <= hi))

    for b, r in enumerate(s.reps):
        within(r.leo, 0, k_)
        within(r.hw, 0, k_)
        within(r.durable, 0, k_)
        out.append(r.durable <= r.leo)
        out.append(r.leo <= s.written)
        for i in range(k_):
            filled = r.leo > i
            out.append(z3.If(filled, z3.And(r.log_ep[i] >= 0, r.log_ep[i] <= e_max), r.log_ep[i] == -1))
            out.append(z3.If(filled, z3.And(r.log_rid[i] >= 0, r.log_rid[i] < s.written), r.log_rid[i] == -1))
        for start in r.cache:
            within(start, -1, k_)
        within(r.leader, -1, n - 1)
        within(r.le, -1, e_max)
        out.append(z3.Implies(r.leader >= 0, r.le >= 0))
        within(r.pe, -1, d.partition_slots - 1)
        out.append(r.pe <= s.c_pe)
        within(r.fetch, 0, 2)
        out.append(z3.Implies(r.fetch != _IDLE, z3.And(r.leader >= 0, r.leader != b)))
        for f in range(n):
            within(r.rem_leo[f], -1, k_)
            within(r.rem_lfll[f], -1, k_)
        for k in range(k_):
            out.append(z3.Implies(r.purg[k], s.written > k))
    within(s.c_leader, -1, n - 1)
    within(s.c_le, 0, e_max)
    within(s.c_pe, 0, d.partition_epoch_cap)
    within(s.written, 0, k_)
    for p in range(d.partition_slots):
        live = s.c_pe >= p
        out.append(
            z3.If(
                live,
                z3.And(s.pub_leader[p] >= -1, s.pub_leader[p] < n, s.pub_le[p] >= 0, s.pub_le[p] <= s.c_le),
                z3.And(s.pub_leader[p] == -1, s.pub_le[p] == -1, *(z3.Not(x) for x in s.pub_isr[p])),
            )
        )
        is_current = s.c_pe == p
        out.append(
            z3.Implies(
                is_current,
                z3.And(
                    s.pub_leader[p] == s.c_leader,
                    s.pub_le[p] == s.c_le,
                    *(x == y for x, y in zip(s.pub_isr[p], s.c_isr, strict=True)),
                ),
            )
        )
    for k in range(k_):
        done = s.written > k
        out.append(
            z3.If(
                done,
                z3.And(s.w_off[k] >= 0, s.w_off[k] < k_, s.w_ep[k] >= 0, s.w_ep[k] <= e_max),
                z3.And(s.w_off[k] == -1, s.w_ep[k] == -1, z3.Not(s.acked[k])),
            )
        )
        out.append(z3.If(s.acked[k], z3.And(s.acked_le[k] >= 0, s.acked_le[k] <= e_max), s.acked_le[k] == -1))
    return z3.And(out)


# ---------------------------------------------------------------------------------------------
# The invariants of model.invariants over the vector


def _entry_eq(a: Rep, b: Rep, o: int) -> Term:
    """``_entry_at(a, o) == _entry_at(b, o)``: both absent, or both present with one record."""
    return z3.And(
        (a.leo > o) == (b.leo > o),
        z3.Implies(a.leo > o, z3.And(a.log_ep[o] == b.log_ep[o], a.log_rid[o] == b.log_rid[o])),
    )


def _hw_below_leo(s: Sym) -> Term:
    return z3.And([r.hw <= r.leo for r in s.reps])


def _no_committed_data_loss(s: Sym) -> Term:
    out = []
    for k in range(s.d.records):
        for b, r in enumerate(s.reps):
            bound = _max(s.w_ep[k], s.acked_le[k])
            holds = z3.And(
                r.leo > s.w_off[k],
                _select(r.log_ep, s.w_off[k], _num(-1)) == s.w_ep[k],
                _select(r.log_rid, s.w_off[k], _num(-1)) == k,
            )
            out.append(z3.Implies(z3.And(s.acked[k], _leads(s, b), r.le >= bound), holds))
    return z3.And(out)


def _no_divergence_below_hw(s: Sym) -> Term:
    out = []
    for b1, r1 in enumerate(s.reps):
        for r2 in s.reps[b1 + 1 :]:
            for o in range(s.d.records):
                below = z3.And(r1.hw > o, r2.hw > o, r1.leo > o, r2.leo > o)
                out.append(z3.Implies(below, z3.And(r1.log_ep[o] == r2.log_ep[o], r1.log_rid[o] == r2.log_rid[o])))
    return z3.And(out)


def _epoch_cache_strictly_increasing(s: Sym) -> Term:
    out = []
    for r in s.reps:
        for e1, s1 in enumerate(r.cache):
            for s2 in r.cache[e1 + 1 :]:
                out.append(z3.Implies(z3.And(s1 >= 0, s2 >= 0), s1 < s2))
            last = z3.And(s1 >= 0, *(later < 0 for later in r.cache[e1 + 1 :]))
            out.append(z3.Implies(last, s1 <= r.leo))
    return z3.And(out)


def _leader_writes_unique(s: Sym) -> Term:
    out = []
    for k1 in range(s.d.records):
        for k2 in range(k1 + 1, s.d.records):
            both = z3.And(s.written > k1, s.written > k2)
            out.append(z3.Implies(both, z3.Or(s.w_ep[k1] != s.w_ep[k2], s.w_off[k1] != s.w_off[k2])))
    return z3.And(out)


def _isr_agreement(s: Sym, strong: bool) -> Term:
    out = []
    for b, r in enumerate(s.reps):
        for m, other in enumerate(s.reps):
            if m == b:
                continue
            member = s.c_isr[m] if strong else r.isr[m]
            for o in range(s.d.records):
                out.append(z3.Implies(z3.And(_leads(s, b), member, r.hw > o), _entry_eq(r, other, o)))
    return z3.And(out)


STATE_INVARIANTS: dict[str, Callable[[Sym], Term]] = {
    "HwBelowLeo": _hw_below_leo,
    "NoCommittedDataLoss": _no_committed_data_loss,
    "NoDivergenceBelowHw": _no_divergence_below_hw,
    "ConsumerReadsBelowHw": lambda s: z3.BoolVal(True),
    "ConsumedRecordsStay": lambda s: z3.BoolVal(True),
    "EpochCacheStrictlyIncreasing": _epoch_cache_strictly_increasing,
    "LeaderWritesUnique": _leader_writes_unique,
    "WeakIsr": lambda s: _isr_agreement(s, strong=False),
    "StrongIsr": lambda s: _isr_agreement(s, strong=True),
}
"""Each state invariant of model.invariants as a formula over one state (every violation counts:
the encoded alphabet has no unclean election and no crash, so none is allowed). The two consumer
invariants are true: the alphabet has no consumer fetch, so nothing is ever consumed."""


def _leader_hw_monotonic(pre: Sym, post: Sym) -> Term:
    out = []
    for b, (p, r) in enumerate(zip(pre.reps, post.reps, strict=True)):
        same = z3.And(_leads(post, b), _leads(pre, b), p.le == r.le)
        out.append(z3.Implies(same, r.hw >= p.hw))
    return z3.And(out)


def _leader_epochs_monotonic(pre: Sym, post: Sym) -> Term:
    return z3.And(post.c_le >= pre.c_le, *(r.le >= p.le for p, r in zip(pre.reps, post.reps, strict=True)))


STEP_INVARIANTS: dict[str, Callable[[Sym, Sym], Term]] = {
    "LeaderHwMonotonic": _leader_hw_monotonic,
    "LeaderEpochsMonotonic": _leader_epochs_monotonic,
}
"""Each step invariant of model.invariants as a formula over a state and its successor."""


def state_invariant(name: str, d: Dims, t: Mapping[str, Term]) -> Term:
    """The state invariant ``name`` over the state ``t``."""
    return STATE_INVARIANTS[name](Sym(t, d))


def step_invariant(name: str, d: Dims, pre: Mapping[str, Term], post: Mapping[str, Term]) -> Term:
    """The step invariant ``name`` over the step ``pre`` → ``post``."""
    return STEP_INVARIANTS[name](Sym(pre, d), Sym(post, d))
