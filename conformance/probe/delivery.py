"""Consumer delivery semantics: which duplicates and losses of processing a consumer group's
configuration permits (history version 2, ``config.delivery``; docs/probe.md "Delivery semantics").

A group's application polls records, processes them (``process`` operations: the side effects
happened) and commits its position. Where the commit sits decides what a crash does
(KafkaConsumer, ConsumerCoordinator; the consumer resumes at the committed offset):

- ``commit-after`` (at-least-once): a crash after processing and before the commit re-delivers the
  processed records: a **duplicate**, allowed. A record below a committed offset that was never
  processed is a **loss**, never allowed (the commit went beyond what was processed).
- ``commit-before`` (at-most-once): a crash after the commit and before processing loses the
  committed, unprocessed records: allowed. A duplicate is never allowed.
- ``auto-commit`` (enable.auto.commit, auto.commit.interval.ms): positions are committed on an
  interval (ConsumerCoordinator.maybeAutoCommitOffsetsAsync, at poll), so a crash repeats or loses
  at most the work of the last interval: allowed when the record was processed (duplicate) or
  delivered (loss) within ``bound`` before the member crashed, where ``bound`` = the interval plus
  twice the member's longest gap between polls (the auto-commit runs at a poll and commits the
  previous poll's positions); a violation when older.
- ``exactly-once`` (consume-transform-produce, KIP-98 / KIP-447: the outputs and the group's
  offsets commit in one transaction, read_committed): a consumed record's outputs are committed
  exactly once: any duplicate (two committed transactions with one input) or loss (an input below
  the group's committed offset in no committed transaction) is a violation.

With unclean.leader.election.enable or volatile storage every loss and duplicate is allowed (the
log or the offsets themselves may be lost). What is judged: records of a partition the group
processed, at offsets below the group's last committed offset (ok commits, committed
transactions' offsets, fetched offsets), visible in the group's isolation level; processing with an
unknown outcome (``info``) and transactions of unknown fate are never counted against the group.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kconform.conformance.probe.anomalies import Finding, FindingLog
from kconform.conformance.probe.history import (
    FAIL,
    OK,
    CommitValue,
    DeliveryConfig,
    FetchOffsetsInvoke,
    FetchOffsetsResult,
    OpEvent,
    PollInvoke,
    PollResult,
    ProcessValue,
    TxnValue,
)
from kconform.model.internal_topics import partition_for

_ALLOWED_DUPLICATE = {"commit-after": "at-least-once", "auto-commit": "auto-commit"}
_ALLOWED_LOSS = {"commit-before": "at-most-once", "auto-commit": "auto-commit"}


@dataclass
class _Group:
    """What one delivery group did: deliveries, processing, commits, crashes of its members."""

    cfg: DeliveryConfig
    delivered: dict[str, list[tuple[int, int, int | str]]] = field(default_factory=dict)
    """value -> [(poll ok ns, poll i, process)]."""
    processed: dict[str, list[tuple[int, int, int | str]]] = field(default_factory=dict)
    """value -> [(process ok ns, i, process)]; for exactly-once: [(txn ok ns, i, process)] of committed transactions."""
    maybe: set[str] = field(default_factory=set)
    """Values of processing with an unknown outcome, or of transactions of unknown fate."""
    offset_of: dict[str, tuple[str, int]] = field(default_factory=dict)
    """value -> (partition, offset) as delivered."""
    committed: dict[str, int] = field(default_factory=dict)
    """partition -> the highest offset committed (ok commits, fetched, committed transactions)."""
    commits: list[tuple[int, str, int, int]] = field(default_factory=list)
    """(commit completion ns, partition, offset, i) of ok and info commits (an info one at its invocation)."""
    polls: dict[int | str, list[int]] = field(default_factory=dict)
    """process -> ok ns of its polls."""
    txns: list[tuple[int, tuple[str, ...], int, int, int | str, dict[str, int]]] = field(default_factory=list)
    """(txn index in the checker, inputs, completion ns, i, process, offsets) of its consume-transform-produce
    transactions."""


class DeliveryJudge:
    """Fed every completion of a history after the checker (``feed``), judged at the end
    (``finish``) with the checker's transaction fates and visibility."""

    def __init__(self, delivery: dict[str, DeliveryConfig]) -> None:
        self.groups = {g: _Group(d) for g, d in delivery.items()}
        self.member: dict[int | str, str] = {}
        self.crashes: dict[int | str, tuple[int, int]] = {}  # process -> (crash ns, i)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def feed(self, e: OpEvent, txn_index: int = -1) -> None:
        """One completion (the checker's ``txn_index`` for a transaction's)."""
        inv = e.invoke
        if inv is None:
            return
        f, v, iv = e.f, e.value, inv.value
        if f == "crash":
            self.crashes[e.process] = (e.mono_ns, e.i)
            return
        if f == "poll" and isinstance(iv, PollInvoke) and iv.group in self.groups:
            g = self.groups[iv.group]
            self.member[e.process] = iv.group
            if e.type == OK and isinstance(v, PollResult):
                g.polls.setdefault(e.process, []).append(e.mono_ns)
                for r in v.records:
                    g.delivered.setdefault(r.value, []).append((e.mono_ns, e.i, e.process))
                    if r.offset is not None:
                        g.offset_of[r.value] = (r.tp, r.offset)
        elif f == "process" and isinstance(iv, ProcessValue) and iv.group in self.groups:
            g = self.groups[iv.group]
            for r in iv.records:
                if e.type == OK:
                    g.processed.setdefault(r.value, []).append((e.mono_ns, e.i, e.process))
                elif e.type != FAIL:
                    g.maybe.add(r.value)
                if r.offset is not None:
                    g.offset_of.setdefault(r.value, (r.tp, r.offset))
        elif f == "commit" and isinstance(iv, CommitValue) and iv.group in self.groups and e.type != FAIL:
            g = self.groups[iv.group]
            for tp, off in iv.offsets.items():
                g.commits.append((e.mono_ns if e.type == OK else inv.mono_ns, tp, off, e.i))
                if e.type == OK:
                    g.committed[tp] = max(g.committed.get(tp, 0), off)
        elif f == "fetch-offsets" and e.type == OK and isinstance(iv, FetchOffsetsInvoke) and iv.group in self.groups:
            g = self.groups[iv.group]
            if isinstance(v, FetchOffsetsResult):
                for tp, fetched in v.offsets.items():
                    if fetched is not None:
                        g.committed[tp] = max(g.committed.get(tp, 0), fetched)
        elif f == "txn" and isinstance(iv, TxnValue) and iv.offsets is not None and iv.offsets.group in self.groups:
            g = self.groups[iv.offsets.group]
            g.txns.append((txn_index, iv.inputs or (), e.mono_ns, e.i, e.process, dict(iv.offsets.offsets)))

    def pending(self, p: OpEvent, txn_index: int = -1) -> None:
        """An invocation that never completed: its processing or transaction may have happened."""
        v = p.value
        if p.f == "process" and isinstance(v, ProcessValue) and v.group in self.groups:
            self.groups[v.group].maybe.update(r.value for r in v.records)
        elif p.f == "txn" and isinstance(v, TxnValue) and v.offsets is not None and v.offsets.group in self.groups:
            self.groups[v.offsets.group].maybe.update(v.inputs or ())

    # ------------------------------------------------------------------ the end

    def finish(
        self,
        log: FindingLog,
        committed_txn: Callable[[int], bool | None],
        visible_below: Callable[[str, int, bool], Iterable[tuple[int, str]]],
        lossy_why: str,
    ) -> None:
        """Judge every group. ``committed_txn(t)``: True / False / None (unknown) for the checker's
        transaction ``t``; ``visible_below(tp, hi, rc)``: (offset, value) of the records below
        ``hi`` in the version order visible at that isolation level."""
        for group, g in self.groups.items():
            # the group as Kafka places it: its offsets live on __consumer_offsets-N (kafka-facts §7)
            name = f"{group} (__consumer_offsets-{partition_for(group)})"
            eos = g.cfg.mode == "exactly-once"
            if eos:
                self._eos_outputs(g, committed_txn)
            self._duplicates(log, name, g, lossy_why)
            self._losses(log, name, g, visible_below, lossy_why, rc=eos)

    @staticmethod
    def _eos_outputs(g: _Group, committed_txn: Callable[[int], bool | None]) -> None:
        """exactly-once: a record is processed by each committed transaction naming it as an input;
        its offsets count as committed only then."""
        for t, inputs, ok_ns, i, process, offsets in g.txns:
            fate = committed_txn(t)
            if fate is None:
                g.maybe.update(inputs)
                continue
            if not fate:
                continue
            for value in inputs:
                g.processed.setdefault(value, []).append((ok_ns, i, process))
            for tp, off in offsets.items():
                g.committed[tp] = max(g.committed.get(tp, 0), off)

    def _bound_ns(self, g: _Group, process: int | str) -> int:
        """auto-commit: the interval plus twice the member's longest gap between polls, in ns."""
        polls = g.polls.get(process, [])
        gap = max((b - a for a, b in itertools.pairwise(polls)), default=0)
        return g.cfg.auto_commit_interval_ms * 1_000_000 + 2 * gap

    def _committed_before(self, g: _Group, tp: str, off: int, before_ns: int) -> bool:
        return any(c_tp == tp and c_off > off and ns < before_ns for ns, c_tp, c_off, _i in g.commits)

    def _duplicates(self, log: FindingLog, name: str, g: _Group, lossy_why: str) -> None:
        mode = g.cfg.mode
        allowed: dict[tuple[int | str, int], list[str]] = {}  # (crashed process, crash i) -> values
        for value, times in g.processed.items():
            if len(times) < 2:
                continue
            first_ns, _first_i, first_p = min(times)
            second = sorted(times)[1]
            where = g.offset_of.get(value)
            tp, off = where if where is not None else ("?", -1)
            crash = self.crashes.get(first_p)
            why = ""
            if lossy_why:
                why = lossy_why
            elif mode in _ALLOWED_DUPLICATE and crash is not None and first_ns < crash[0] <= second[0]:
                if mode == "commit-after" and not self._committed_before(g, tp, off, crash[0]):
                    why = "at-least-once"
                elif mode == "auto-commit" and crash[0] - first_ns <= self._bound_ns(g, first_p):
                    why = "auto-commit"
            if why and not lossy_why:
                allowed.setdefault((first_p, crash[1] if crash else -1), []).append(value)
                continue
            witnesses = tuple(i for _ns, i, _p in sorted(times))
            log.add(
                Finding(
                    "delivery-duplicate",
                    f"group {name} ({mode}) processed {value} at offset {off} of {tp} {len(times)} times, "
                    f"first by process {first_p}"
                    + ("" if why else f"; {mode} allows no such repeat (no crash of it before its commit explains it)"),
                    witnesses,
                    tp,
                    allowed=bool(why),
                    why=why,
                )
            )
        _report_allowed(
            log,
            "delivery-duplicate",
            g,
            allowed,
            lambda n, p: (
                f"group {name} ({mode}) processed {n} records twice after process {p} crashed "
                "before their offsets were committed"
            ),
        )

    def _losses(
        self,
        log: FindingLog,
        name: str,
        g: _Group,
        visible_below: Callable[[str, int, bool], Iterable[tuple[int, str]]],
        lossy_why: str,
        rc: bool,
    ) -> None:
        mode = g.cfg.mode
        touched = {tp for tp, _off in g.offset_of.values()}
        allowed: dict[tuple[int | str, int], list[str]] = {}
        for tp in sorted(touched):
            hi = g.committed.get(tp)
            if hi is None:
                continue
            for off, value in visible_below(tp, hi, rc):
                if value in g.processed or value in g.maybe:
                    continue
                why = lossy_why
                deliveries = g.delivered.get(value, [])
                if not why and mode in _ALLOWED_LOSS:
                    for ns, _i, process in deliveries:
                        crash = self.crashes.get(process)
                        if crash is None or crash[0] < ns:
                            continue
                        if mode == "commit-before" and self._committed_before(g, tp, off, crash[0]):
                            why = "at-most-once"
                        elif mode == "auto-commit" and crash[0] - ns <= self._bound_ns(g, process):
                            why = "auto-commit"
                        if why:
                            allowed.setdefault((process, crash[1]), []).append(value)
                            break
                if why and not lossy_why:
                    continue
                witnesses = tuple(i for _ns, i, _p in deliveries) or _committers(g, tp, off)
                log.add(
                    Finding(
                        "delivery-loss",
                        f"group {name} ({mode}) committed offset {hi} of {tp} but never processed {value} at offset "
                        f"{off}" + ("" if deliveries else " (never delivered)"),
                        witnesses,
                        tp,
                        allowed=bool(why),
                        why=why,
                    )
                )
        _report_allowed(
            log,
            "delivery-loss",
            g,
            allowed,
            lambda n, p: (
                f"group {name} ({mode}) never processed {n} records whose offsets were committed "
                f"before process {p} crashed"
            ),
        )


def _report_allowed(
    log: FindingLog,
    anomaly: str,
    g: _Group,
    allowed: dict[tuple[int | str, int], list[str]],
    text: Callable[[int, int | str], str],
) -> None:
    """One allowed finding per crash: the records (the duplicate or lost set) that crash explains,
    witnessed by the crash."""
    for (process, crash_i), values in allowed.items():
        log.add(
            Finding(
                anomaly,
                f"{text(len(values), process)}: {', '.join(sorted(values)[:20])}",
                (crash_i,),
                g.offset_of.get(values[0], ("?", -1))[0],
                allowed=True,
                why=_why(g.cfg.mode),
            )
        )


def _why(mode: str) -> str:
    return {
        "commit-after": "commit after processing (at-least-once): a crash before the commit re-delivers",
        "commit-before": "commit before processing (at-most-once): a crash before processing loses the work",
        "auto-commit": "enable.auto.commit: a crash repeats or loses at most the last auto.commit.interval.ms",
    }.get(mode, mode)


def _committers(g: _Group, tp: str, off: int) -> tuple[int, ...]:
    """The first commit (or committed transaction) of ``tp`` past ``off``: the witness of a loss
    of a record never delivered."""
    found = sorted(i for _ns, c_tp, c_off, i in g.commits if c_tp == tp and c_off > off)
    found += sorted(i for _t, _in, _ns, i, _p, offs in g.txns if offs.get(tp, -1) > off)
    return tuple(found[:1]) or (1,)
