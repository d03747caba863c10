"""The lockstep judge of the exactly-once slice: each event against model.txn_state.

Same contract as every slice's judge (conformance.judge.LockstepJudge, docs/architecture.md): for
every event the judge runs the same handler in the model with the event's inputs and compares the
claimed outcome field by field; after every event the invariants of model.txn_invariants are
checked (TV0's KAFKA-17754 and producer-state expiry are **allowed**). This module holds the
exactly-once rules only. Markers, verifications and consumer fetch answers are matched by message /
request id; a message delivered twice is handled twice, and a response is accepted if any answer
given to its request justifies it.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from dataclasses import fields, is_dataclass, replace
from operator import is_
from typing import Any

from kconform.conformance.judge import Finding, LockstepJudge, compare, compare_fields
from kconform.conformance.txn.coverage import completed_by_key, edge_key
from kconform.model import txn_invariants as I
from kconform.model import txn_state as S
from kconform.model.coordinator import NotEnabled
from kconform.model.invariants import Violation
from kconform.model.txn_config import TxnConfig
from kconform.model.txn_partition import FetchAnswer
from kconform.model.txn_state import TxnState
from kconform.traces import events as ev
from kconform.traces import operations as ops

_BUT_CLOCK = operator.attrgetter(*(f.name for f in fields(TxnState) if f.name != "now_ms"))
"""Every field of TxnState but its clock (``TxnJudge.unchanged``)."""

UNHEALTHY = (ops.Advance, ops.Drop)
"""Operations during which the network does not deliver (model.txn_answers)."""


def _require(condition: bool, why: str) -> None:
    if not condition:
        raise NotEnabled(why)


class TxnJudge(LockstepJudge[TxnState, TxnConfig]):
    """Holds the model state of one exactly-once run and judges each event as it arrives.

    ``checked`` names the invariants checked after each event (None: all of them).
    """

    invariant_registry = I.INVARIANTS
    not_enabled = (NotEnabled,)
    report_violations_once = True
    keep_state_of_first_mismatch = True

    def __init__(self, cfg: TxnConfig, checked: frozenset[str] | None = None) -> None:
        super().__init__(cfg, checked, replace(S.initial_state(cfg), tracks_timeouts=True))
        self._memo: I.Memo = {}  # state invariants whose inputs did not change are not re-run
        self.handlers = {
            ev.ClockAdvanced: lambda e: S.advance_clock(self.state, e.now_ms, self.cfg),
            ev.CoordinatorMoved: lambda e: S.coordinator_moved(
                self.state, self.cfg, e.state_partition, e.leader, e.coordinator_epoch
            ),
            ev.CoordinatorLoaded: lambda e: S.coordinator_loaded(
                self.state, self.cfg, e.node, e.state_partition, e.coordinator_epoch
            ),
            ev.InitProducerIdHandled: self._init_producer_id,
            ev.AddPartitionsHandled: self._add_partitions,
            ev.AddOffsetsHandled: self._add_offsets,
            ev.EndTxnHandled: self._end_txn,
            ev.TxnTimedOut: self._timed_out,
            ev.TxnIdExpired: lambda e: S.txn_id_expired(self.state, self.cfg, e.node, e.txn_id),
            ev.MarkerSent: self._marker_sent,
            ev.MarkerHandled: self._marker_handled,
            ev.MarkerResponseHandled: self._marker_response,
            ev.TxnProduceHandled: self._produce,
            ev.VerifyHandled: self._verify_handled,
            ev.VerifyApplied: self._verify_applied,
            ev.HwAdvanced: lambda e: S.hw_advanced(self.state, self.cfg, e.node, e.partition, e.hw),
            ev.TxnConsumerFetchHandled: self._consumer_fetch,
            ev.TxnFetchWaitHandled: self._fetch_wait,
            ev.TxnFetchCompleted: self._fetch_completed,
            ev.ConsumerPolled: self._consumer_polled,
            ev.TxnOffsetCommitHandled: self._txn_offset_commit,
            ev.OffsetCommitHandled: self._offset_commit,
            ev.OffsetFetchHandled: self._offset_fetch,
            ev.Quiesced: lambda e: S.quiesced(self.state, e.quiet),
            ev.ProducerExpired: lambda e: S.producer_expired(self.state, self.cfg, e.node, e.partition, e.pid),
        }

    def note_operation(self, op: ops.Operation) -> None:
        """Before the events of ``op``: whether the network delivers during it (model.txn_answers).
        An Advance holds every message in flight while the clock moves, a Drop loses one; every
        other operation either moves no time or (Run, Quiesce, a wire request) delivers everything
        in flight before each timer fires."""
        self.state = S.network(self.state, not isinstance(op, UNHEALTHY))

    def unchanged(self, pre: TxnState, post: TxnState) -> bool:
        """A clock tick changes only ``now_ms``, which no invariant reads: nothing new can break
        (the tick is still judged: the model's clock moves and must move forward). The judge's
        ``only_clock_moved`` over TxnState's fields, compared in one C-level pass."""
        return post is pre or (type(post) is type(pre) is TxnState and all(map(is_, _BUT_CLOCK(pre), _BUT_CLOCK(post))))

    def count_coverage(self, event: ev.Event, pre: TxnState) -> None:
        """Also count each coordinator transition the event wrote (``txn_edge:From->To``), and what
        completed a delayed fetch (``txn_fetch_completed_by:lso`` / ``:hw`` / ``:expiry``)."""
        if self.state.ghost.writes != pre.ghost.writes:
            for src, dst in itertools.pairwise(self.state.ghost.last_path):
                self.covered[edge_key(src, dst)] += 1
        if isinstance(event, ev.TxnFetchCompleted):
            self.covered[completed_by_key(S.parked_fetch(pre, event.node, event.req), pre.now_ms)] += 1

    def find_violations(self, pre: TxnState, post: TxnState) -> Sequence[Violation]:
        return I.check_state(post, self.cfg, self.checked, self._memo) + I.check_step(pre, post, self.cfg, self.checked)

    # ------------------------------------------------------------------------------------------
    # Coordinator

    def _answer(self, e: Any, s: TxnState, a: Any, pid_field: str = "pid", epoch_field: str = "epoch") -> TxnState:
        """``s``, once the event's error, state, pid and epoch are the model's answer's (compared
        at once as tuples; only a difference builds ``compare``'s field-by-field message)."""
        if (e.error, e.state, getattr(e, pid_field), getattr(e, epoch_field)) == (a.error, a.state, a.pid, a.epoch):
            return s
        compare(
            {
                "error": e.error,
                "state": e.state,
                pid_field: getattr(e, pid_field),
                epoch_field: getattr(e, epoch_field),
            },
            {"error": a.error, "state": a.state, pid_field: a.pid, epoch_field: a.epoch},
        )
        return s

    def _init_producer_id(self, e: ev.InitProducerIdHandled) -> TxnState:
        s, a = self.keep(
            S.init_producer_id(
                self.state,
                self.cfg,
                e.node,
                e.txn_id,
                e.transactional,
                e.timeout_ms,
                e.expected_pid,
                e.expected_epoch,
                e.pid,
            )
        )
        return self._answer(e, s, a)

    def _add_partitions(self, e: ev.AddPartitionsHandled) -> TxnState:
        s, a = self.keep(
            S.add_partitions(self.state, self.cfg, e.node, e.txn_id, e.pid, e.epoch, frozenset(e.partitions))
        )
        compare_fields(e, a, ("error", "state"))
        return s

    def _add_offsets(self, e: ev.AddOffsetsHandled) -> TxnState:
        _require(e.group in self.cfg.groups, f"group {e.group!r} is not in this configuration")
        parts = frozenset({self.cfg.offsets_partition(e.group)})
        s, a = self.keep(S.add_partitions(self.state, self.cfg, e.node, e.txn_id, e.pid, e.epoch, parts))
        compare_fields(e, a, ("error", "state"))
        return s

    def _end_txn(self, e: ev.EndTxnHandled) -> TxnState:
        s, a = self.keep(
            S.end_txn(self.state, self.cfg, e.node, e.txn_id, e.pid, e.epoch, e.ctxn, e.commit, e.result_pid)
        )
        return self._answer(e, s, a, "result_pid", "result_epoch")

    def _timed_out(self, e: ev.TxnTimedOut) -> TxnState:
        s, meta = self.keep(S.txn_timed_out(self.state, self.cfg, e.node, e.txn_id))
        compare_fields(e, meta, ("pid", "epoch", "state"))
        return s

    # ------------------------------------------------------------------------------------------
    # Markers

    def _marker_sent(self, e: ev.MarkerSent) -> TxnState:
        s, m = self.keep(S.marker_sent(self.state, self.cfg, e.node, e.msg, e.txn_id, e.partition))
        compare_fields(e, m, ("leader", "pid", "epoch", "commit", "coordinator_epoch"))
        return s

    def _marker_handled(self, e: ev.MarkerHandled) -> TxnState:
        m = self.state.markers.get(e.msg)
        _require(
            m is not None
            and (m.partition, m.pid, m.epoch, m.commit, m.coordinator_epoch)
            == (e.partition, e.pid, e.epoch, e.commit, e.coordinator_epoch),
            f"marker {e.msg} was not sent with this content",
        )
        s, r = self.keep(S.marker_handled(self.state, self.cfg, e.node, e.msg))
        compare_fields(e, r, ("error", "offset"))
        return s

    def _marker_response(self, e: ev.MarkerResponseHandled) -> TxnState:
        s, state = self.keep(S.marker_response(self.state, self.cfg, e.node, e.msg, e.error))
        compare({"state": e.state}, {"state": state})
        return s

    # ------------------------------------------------------------------------------------------
    # Produce, verification

    def _produce(self, e: ev.TxnProduceHandled) -> TxnState:
        s, r = self.keep(
            S.produce(
                self.state,
                self.cfg,
                e.node,
                e.req,
                e.partition,
                e.txn_id,
                e.pid,
                e.epoch,
                e.base_seq,
                e.rids,
                e.transactional,
                e.ctxn,
                e.verify_msg,
            )
        )
        compare_fields(e, r, ("outcome", "error", "base_offset"))
        return s

    def _verify_handled(self, e: ev.VerifyHandled) -> TxnState:
        v = self.state.verifications.get(e.msg)
        _require(
            v is not None and (v.txn_id, v.pid, v.epoch, v.partition) == (e.txn_id, e.pid, e.epoch, e.partition),
            f"no verification {e.msg} was sent with this content",
        )
        s, error = self.keep(S.verify_handled(self.state, self.cfg, e.node, e.msg))
        compare({"error": e.error}, {"error": error})
        return s

    def _verify_applied(self, e: ev.VerifyApplied) -> TxnState:
        answers = S.verify_answers(self.state, e.msg)
        _require(bool(answers), f"verification {e.msg} was never answered")
        claimed = {"outcome": e.outcome, "error": e.error, "base_offset": e.base_offset}
        return self.first_match(
            answers, lambda a: S.verify_applied(self.state, self.cfg, e.node, e.msg, e.req, a), claimed
        )

    # ------------------------------------------------------------------------------------------
    # Consumers

    def _consumer_fetch(self, e: ev.TxnConsumerFetchHandled) -> TxnState:
        s, a = self.keep(
            S.consumer_fetch(self.state, self.cfg, e.node, e.req, e.partition, e.fetch_offset, e.read_committed)
        )
        _compare_answer(e, a)
        return s

    def _fetch_wait(self, e: ev.TxnFetchWaitHandled) -> TxnState:
        """Answered at once or parked, as model.txn_state.consumer_fetch_wait decides."""
        s, a, parked = S.consumer_fetch_wait(
            self.state,
            self.cfg,
            e.node,
            e.req,
            e.partition,
            e.fetch_offset,
            e.read_committed,
            e.min_bytes,
            e.max_wait_ms,
        )
        self.keep((s, a))
        compare({"parked": e.parked}, {"parked": parked})
        _compare_answer(e, a)
        return s

    def _fetch_completed(self, e: ev.TxnFetchCompleted) -> TxnState:
        """A parked fetch completes: allowed only when ready or at its deadline; a fresh read."""
        df = S.parked_fetch(self.state, e.node, e.req)
        s, a = self.keep(S.complete_delayed_fetch(self.state, self.cfg, e.node, e.req))
        compare_fields(e, df, ("partition", "fetch_offset", "read_committed"))
        _compare_answer(e, a)
        return s

    def _consumer_polled(self, e: ev.ConsumerPolled) -> TxnState:
        served = S.served_fetches(self.state, e.req)
        _require(bool(served), f"no fetch {e.req} was answered")
        claimed = {"rids": e.rids, "next_offset": e.next_offset}
        return self.first_match(
            served, lambda f: S.consumer_polled(self.state, e.node, e.req, e.partition, e.read_committed, f), claimed
        )

    # ------------------------------------------------------------------------------------------
    # Offsets

    def _txn_offset_commit(self, e: ev.TxnOffsetCommitHandled) -> TxnState:
        s, r = self.keep(
            S.txn_offset_commit(self.state, self.cfg, e.node, e.group, e.txn_id, e.pid, e.epoch, e.ctxn, e.offsets)
        )
        compare_fields(e, r, ("error", "base_offset"))
        return s

    def _offset_commit(self, e: ev.OffsetCommitHandled) -> TxnState:
        s, r = self.keep(S.offset_commit(self.state, self.cfg, e.node, e.group, e.offsets))
        compare_fields(e, r, ("error", "base_offset"))
        return s

    def coverage_key(self, event: ev.Event) -> str:
        """An OffsetFetch answering UNSTABLE_OFFSET_COMMIT for some partitions (KIP-447, per partition
        since issue 14) counts as ``offset_fetch_handled:UNSTABLE_OFFSET_COMMIT``; a parked fetch as
        ``txn_fetch_wait_handled:parked``, a completed one by its isolation level; an event of a
        kind without an outcome or an error (a clock tick) by its kind alone."""
        kind_only = _KIND_ONLY.get(type(event))
        if kind_only is None:
            kind_only = _KIND_ONLY[type(event)] = _counts_by_kind_alone(type(event))
        if kind_only:
            return event.kind
        if isinstance(event, ev.OffsetFetchHandled) and event.error == ev.NONE and event.unstable:
            return f"{event.kind}:{ev.ERRORS[ev.UNSTABLE_OFFSET_COMMIT]}"
        if isinstance(event, ev.TxnFetchWaitHandled) and event.parked:
            return f"{event.kind}:parked"
        if isinstance(event, ev.TxnFetchCompleted) and event.error == ev.NONE:
            return f"{event.kind}:{'read_committed' if event.read_committed else 'read_uncommitted'}"
        return super().coverage_key(event)

    def _offset_fetch(self, e: ev.OffsetFetchHandled) -> TxnState:
        s, r = self.keep(S.offset_fetch(self.state, self.cfg, e.node, e.group, e.require_stable))
        compare(
            {"error": e.error, "offsets": tuple(sorted(e.offsets)), "unstable": tuple(sorted(e.unstable))},
            {"error": r.error, "offsets": tuple(sorted(r.offsets)), "unstable": tuple(sorted(r.unstable))},
        )
        return s


_KIND_ONLY: dict[type, bool] = {}
"""Per event class: whether its coverage key is its kind alone (``_counts_by_kind_alone``)."""


def _counts_by_kind_alone(cls: type) -> bool:
    """Whether every event of ``cls`` counts under its kind alone: no ``outcome`` or ``error``
    (conformance.coverage.outcome_key reads them), and none of the classes TxnJudge.coverage_key
    refines."""
    refined = (ev.OffsetFetchHandled, ev.TxnFetchWaitHandled, ev.TxnFetchCompleted)
    names = {f.name for f in fields(cls)} if is_dataclass(cls) else set()
    return not (
        issubclass(cls, refined) or names & {"outcome", "error"} or hasattr(cls, "outcome") or hasattr(cls, "error")
    )


def _compare_answer(
    e: ev.TxnConsumerFetchHandled | ev.TxnFetchWaitHandled | ev.TxnFetchCompleted, a: FetchAnswer
) -> None:
    """A consumer fetch's answer, field by field (the aborted list as a set: the consumer heaps it)."""
    compare(
        {"error": e.error, "records": e.records, "hw": e.hw, "lso": e.lso, "aborted": tuple(sorted(e.aborted))},
        {"error": a.error, "records": a.records, "hw": a.hw, "lso": a.lso, "aborted": tuple(sorted(a.aborted))},
    )


def judge_txn_events(cfg: TxnConfig, events: list[ev.Event]) -> list[Finding]:
    """Judge a whole event list from a fresh model; returns every finding in order."""
    return TxnJudge(cfg).judge_all(events)


__all__ = ["TxnJudge", "judge_txn_events"]
