"""The lockstep judge: applies an implementation's events to the model, one handler at a time.

For every event the judge runs the same handler in the model with the event's inputs and compares
the outcome the implementation claims with the one the model computes. A handler the model would
not run, or a different outcome, is **non-conformance**. After every event every invariant is
checked on the model state; a broken guarantee is an **invariant violation** (only possible with a
buggy protocol rung or a permissive configuration), or **allowed** when the configuration permits it.

Requests and responses travel through the network between a send event and the handler events,
so the judge keeps what was sent and what was answered, by message id. A message may be delivered
twice (duplicated by the network); a response is matched against every answer given to its request.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from kconform.conformance.coverage import coverage_key
from kconform.model import invariants, replication
from kconform.model.config import ReplicationConfig
from kconform.model.replication import (
    EpochAnswer,
    EpochQuery,
    FetchRequest,
    FetchResponse,
    NotEnabled,
)
from kconform.model.state import PartitionRecord, PendingIsr, State, initial_state
from kconform.traces import events as ev

Q = TypeVar("Q")
A = TypeVar("A")

NON_CONFORMANCE = "non-conformance"
INVARIANT_VIOLATION = "invariant-violation"
ALLOWED = "allowed"


@dataclass(frozen=True)
class Finding:
    """One verdict about one event: which rule or invariant, and why."""

    verdict: str
    name: str
    message: str
    event: ev.Event | None = None

    @property
    def failing(self) -> bool:
        return self.verdict in (NON_CONFORMANCE, INVARIANT_VIOLATION)


class _Mismatch(Exception):
    def __init__(self, diffs: list[str]) -> None:
        super().__init__("; ".join(diffs))
        self.diffs = diffs


def _compare(claimed: dict[str, Any], expected: dict[str, Any]) -> None:
    diffs = [
        f"{k}: implementation says {claimed[k]!r}, model says {expected[k]!r}"
        for k in expected
        if claimed[k] != expected[k]
    ]
    if diffs:
        raise _Mismatch(diffs)


def _own_request(
    sent: dict[int, tuple[int, Q]], answers: dict[int, list[A]], msg: int, node: int, what: str
) -> tuple[Q, list[A]]:
    """The request ``node`` sent as ``msg`` and every answer it got, or NotEnabled."""
    sender, request = sent.get(msg, (-1, None))
    given = answers.get(msg, [])
    if sender != node or request is None or not given:
        raise NotEnabled(f"broker {node} got no answer to {what} {msg} of its own")
    return request, given


def _sorted(isr: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(isr))


class Judge:
    """Holds the model state of one run and judges each event as it arrives.

    ``checked`` names the invariants checked after each event (None: all of them, the default);
    a model-search counterexample found for some invariants only is judged against those.
    """

    def __init__(self, cfg: ReplicationConfig, checked: frozenset[str] | None = None) -> None:
        if checked is not None and not checked <= set(invariants.INVARIANTS):
            raise ValueError(f"unknown invariant(s) {sorted(checked - set(invariants.INVARIANTS))}")
        self.cfg = cfg
        self.checked = checked
        self._checked_names = tuple(n for n in invariants.INVARIANTS if checked is None or n in checked)
        self.state: State = initial_state(cfg)
        self.events_judged = 0
        self.checks: Counter[str] = Counter()
        self.violations: Counter[str] = Counter()
        self.allowed: Counter[str] = Counter()
        self.actions: Counter[str] = Counter()
        self.covered: Counter[str] = Counter()
        """Coverage keys (conformance.coverage) of the events judged conformant."""
        self._allowed_seen: set[str] = set()
        self._after: State | None = None
        self._fetches: dict[int, tuple[int, FetchRequest]] = {}
        self._fetch_answers: dict[int, list[FetchResponse]] = {}
        self._queries: dict[int, tuple[int, EpochQuery]] = {}
        self._query_answers: dict[int, list[EpochAnswer]] = {}
        self._proposals: dict[int, tuple[int, PendingIsr]] = {}
        self._alter_answers: dict[int, list[tuple[int, tuple[int, ...], int]]] = {}
        self._handlers: dict[type[ev.Event], Callable[[Any], State]] = {
            ev.BrokerFenced: self._broker_fenced,
            ev.BrokerUnfenced: self._broker_unfenced,
            ev.LeaderMoved: self._leader_moved,
            ev.AlterPartitionHandled: self._alter_partition_handled,
            ev.ClockAdvanced: lambda e: replication.advance_clock(self.state, e.now_ms),
            ev.BrokerCrashed: lambda e: replication.crash(self.state, self.cfg, e.node),
            ev.BrokerRestarted: self._restarted,
            ev.Checkpointed: self._checkpointed,
            ev.MetadataApplied: self._metadata_applied,
            ev.ProduceHandled: self._produce_handled,
            ev.ProduceCompleted: lambda e: replication.complete_produce(self.state, self.cfg, e.node, e.req, e.error),
            ev.FetchSent: self._fetch_sent,
            ev.FetchHandled: self._fetch_handled,
            ev.FetchApplied: self._fetch_applied,
            ev.EpochQuerySent: self._epoch_query_sent,
            ev.EpochQueryHandled: self._epoch_query_handled,
            ev.EpochQueryApplied: self._epoch_query_applied,
            ev.IsrChangeProposed: self._isr_change_proposed,
            ev.AlterPartitionApplied: self._alter_partition_applied,
            ev.ConsumerFetchHandled: self._consumer_fetch_handled,
        }

    # ------------------------------------------------------------------------------------------

    def observe(self, event: ev.Event) -> list[Finding]:
        """Judge one event; returns its findings (empty when it conforms and nothing broke)."""
        self.events_judged += 1
        self.actions[event.kind] += 1
        pre = self.state
        self._after = None
        handler = self._handlers.get(type(event))
        if handler is None:
            return [Finding(NON_CONFORMANCE, event.kind, f"the model has no handler for {event.kind}", event)]
        try:
            self.state = handler(event)
        except NotEnabled as exc:
            return [Finding(NON_CONFORMANCE, event.kind, f"not allowed here: {exc}", event)]
        except _Mismatch as exc:
            if self._after is not None:
                self.state = self._after  # what the model says the handler leaves behind
            return [Finding(NON_CONFORMANCE, event.kind, f"outcome differs: {exc}", event)]
        self.covered[coverage_key(event)] += 1
        return self._check_invariants(pre, self.state, event)

    def _check_invariants(self, pre: State, post: State, event: ev.Event) -> list[Finding]:
        for name in self._checked_names:
            self.checks[name] += 1
        if post.replicas is pre.replicas and post.controller is pre.controller and post.ghost is pre.ghost:
            return []  # invariants read only these: the very same values were checked already
        names = self.checked
        found = invariants.check_state(post, self.cfg, names) + invariants.check_step(pre, post, self.cfg, names)
        out: list[Finding] = []
        for v in found:
            if v.allowed:
                key = f"{v.invariant}: {v.message}"
                if key not in self._allowed_seen:
                    self._allowed_seen.add(key)
                    self.allowed[v.invariant] += 1
                    out.append(Finding(ALLOWED, v.invariant, f"{v.message} — allowed: {v.allowed_because}", event))
            else:
                self.violations[v.invariant] += 1
                doc = invariants.INVARIANTS[v.invariant].doc
                out.append(Finding(INVARIANT_VIOLATION, v.invariant, f"{v.message} (guarantee: {doc})", event))
        return out

    # ------------------------------------------------------------------------------------------
    # Controller

    def _election(self, e: Any, result: tuple[State, replication.Election]) -> State:
        s, el = result
        rec = el.record
        self._after = s
        _compare(
            {
                "leader": e.leader,
                "leader_epoch": e.leader_epoch,
                "isr": _sorted(e.isr),
                "partition_epoch": e.partition_epoch,
                "unclean": getattr(e, "unclean", False),
            },
            {
                "leader": rec.leader,
                "leader_epoch": rec.leader_epoch,
                "isr": rec.isr,
                "partition_epoch": rec.partition_epoch,
                "unclean": el.unclean,
            },
        )
        return s

    def _broker_fenced(self, e: ev.BrokerFenced) -> State:
        return self._election(e, replication.controller_fence(self.state, self.cfg, e.broker))

    def _broker_unfenced(self, e: ev.BrokerUnfenced) -> State:
        return self._election(e, replication.controller_unfence(self.state, self.cfg, e.broker))

    def _leader_moved(self, e: ev.LeaderMoved) -> State:
        return self._election(e, replication.controller_move_leader(self.state, self.cfg, e.leader))

    def _alter_partition_handled(self, e: ev.AlterPartitionHandled) -> State:
        if e.msg not in self._proposals:
            raise NotEnabled(f"AlterPartition {e.msg} was never sent")
        sender, pending = self._proposals[e.msg]
        s, error = replication.controller_alter_partition(self.state, self.cfg, sender, pending)
        c = s.controller
        self._after = s
        _compare(
            {"error": e.error, "isr": _sorted(e.isr), "partition_epoch": e.partition_epoch},
            {"error": error, "isr": c.isr, "partition_epoch": c.partition_epoch},
        )
        self._alter_answers.setdefault(e.msg, []).append((error, c.isr, c.partition_epoch))
        return s

    # ------------------------------------------------------------------------------------------
    # Lifecycle

    def _restarted(self, e: ev.BrokerRestarted) -> State:
        s = replication.restart(self.state, self.cfg, e.node)
        r = s.replica(e.node)
        self._after = s
        _compare({"log_end": e.log_end, "hw": e.hw}, {"log_end": r.leo, "hw": r.hw})
        return s

    def _checkpointed(self, e: ev.Checkpointed) -> State:
        r = self.state.replica(e.node)
        _compare({"log_end": e.log_end, "hw": e.hw}, {"log_end": r.leo, "hw": r.hw})
        return replication.checkpoint(self.state, self.cfg, e.node)

    def _metadata_applied(self, e: ev.MetadataApplied) -> State:
        rec = PartitionRecord(e.leader, e.leader_epoch, _sorted(e.isr), e.partition_epoch)
        s, out = replication.apply_metadata(self.state, self.cfg, e.node, rec)
        self._after = s
        _compare(
            {"outcome": e.outcome, "truncated_to": e.truncated_to, "hw": e.hw},
            {"outcome": out.outcome, "truncated_to": out.truncated_to, "hw": out.hw},
        )
        return s

    # ------------------------------------------------------------------------------------------
    # Produce, consume

    def _produce_handled(self, e: ev.ProduceHandled) -> State:
        s, out = replication.produce(self.state, self.cfg, e.node, e.req, e.rid, e.acks)
        self._after = s
        _compare(
            {"error": e.error, "offset": e.offset, "epoch": e.epoch, "hw": e.hw},
            {"error": out.error, "offset": out.offset, "epoch": out.epoch, "hw": out.hw},
        )
        return s

    def _consumer_fetch_handled(self, e: ev.ConsumerFetchHandled) -> State:
        s, out = replication.consumer_fetch(self.state, self.cfg, e.node, e.fetch_offset, e.current_leader_epoch)
        self._after = s
        _compare(
            {"error": e.error, "entries": e.entries, "hw": e.hw},
            {"error": out.error, "entries": out.entries, "hw": out.hw},
        )
        return s

    # ------------------------------------------------------------------------------------------
    # Follower fetch

    def _fetch_sent(self, e: ev.FetchSent) -> State:
        q = replication.fetch_request(self.state, self.cfg, e.node)
        _compare(
            {
                "leader": e.leader,
                "fetch_offset": e.fetch_offset,
                "last_fetched_epoch": e.last_fetched_epoch,
                "current_leader_epoch": e.current_leader_epoch,
                "follower_epoch": e.follower_epoch,
            },
            {
                "leader": q.leader,
                "fetch_offset": q.fetch_offset,
                "last_fetched_epoch": q.last_fetched_epoch,
                "current_leader_epoch": q.current_leader_epoch,
                "follower_epoch": q.follower_epoch,
            },
        )
        self._fetches[e.msg] = (e.node, q)
        return self.state

    def _fetch_handled(self, e: ev.FetchHandled) -> State:
        sent = self._fetches.get(e.msg)
        if sent is None or sent[0] != e.follower or sent[1].leader != e.node:
            raise NotEnabled(f"no Fetch {e.msg} was sent by broker {e.follower} to broker {e.node}")
        s, resp = replication.handle_fetch(self.state, self.cfg, e.node, e.follower, sent[1])
        claimed = FetchResponse(
            e.error, e.entries, e.hw, e.diverging_epoch, e.diverging_end_offset, e.leader_leo, e.leader_hw
        )
        self._after = s
        _compare(claimed.__dict__, resp.__dict__)
        self._fetch_answers.setdefault(e.msg, []).append(resp)
        return s

    def _fetch_applied(self, e: ev.FetchApplied) -> State:
        q, answers = _own_request(self._fetches, self._fetch_answers, e.msg, e.node, "a Fetch")
        claimed = {"outcome": e.outcome, "truncated_to": e.truncated_to, "appended": e.appended, "hw": e.hw}
        return self._first_match(
            answers, lambda resp: replication.apply_fetch_response(self.state, self.cfg, e.node, q, resp), claimed
        )

    def _first_match(
        self, answers: list[Any], run: Callable[[Any], tuple[State, Any]], claimed: dict[str, Any]
    ) -> State:
        """Accept the claim if any answer given to the request justifies it (duplicates may differ)."""
        mismatch: _Mismatch | None = None
        for answer in answers:
            s, out = run(answer)
            try:
                _compare(claimed, {k: getattr(out, k) for k in claimed})
                return s
            except _Mismatch as exc:
                mismatch = mismatch or exc
        assert mismatch is not None
        raise mismatch

    # ------------------------------------------------------------------------------------------
    # OffsetsForLeaderEpoch

    def _epoch_query_sent(self, e: ev.EpochQuerySent) -> State:
        q = replication.epoch_query_request(self.state, self.cfg, e.node)
        _compare(
            {
                "leader": e.leader,
                "requested_epoch": e.requested_epoch,
                "current_leader_epoch": e.current_leader_epoch,
                "follower_epoch": e.follower_epoch,
            },
            {
                "leader": q.leader,
                "requested_epoch": q.requested_epoch,
                "current_leader_epoch": q.current_leader_epoch,
                "follower_epoch": q.follower_epoch,
            },
        )
        self._queries[e.msg] = (e.node, q)
        return self.state

    def _epoch_query_handled(self, e: ev.EpochQueryHandled) -> State:
        sent = self._queries.get(e.msg)
        if sent is None or sent[0] != e.follower or sent[1].leader != e.node:
            raise NotEnabled(f"no OffsetsForLeaderEpoch {e.msg} was sent by broker {e.follower} to broker {e.node}")
        ans = replication.handle_epoch_query(self.state, self.cfg, e.node, sent[1])
        _compare({"error": e.error, "epoch": e.epoch, "end_offset": e.end_offset}, ans.__dict__)
        self._query_answers.setdefault(e.msg, []).append(ans)
        return self.state

    def _epoch_query_applied(self, e: ev.EpochQueryApplied) -> State:
        q, answers = _own_request(self._queries, self._query_answers, e.msg, e.node, "an OffsetsForLeaderEpoch")
        claimed = {"outcome": e.outcome, "truncated_to": e.truncated_to, "hw": e.hw}
        return self._first_match(
            answers, lambda a: replication.apply_epoch_answer(self.state, self.cfg, e.node, q, a), claimed
        )

    # ------------------------------------------------------------------------------------------
    # ISR

    def _isr_change_proposed(self, e: ev.IsrChangeProposed) -> State:
        r = self.state.replica(e.node)
        _compare(
            {"leader_epoch": e.leader_epoch, "partition_epoch": e.partition_epoch},
            {"leader_epoch": r.leader_epoch, "partition_epoch": r.partition_epoch},
        )
        s = replication.propose_isr(self.state, self.cfg, e.node, e.msg, _sorted(e.isr))
        self._after = s
        _compare({"hw": e.hw}, {"hw": s.replica(e.node).hw})
        pending = s.replica(e.node).pending_isr
        assert pending is not None
        self._proposals[e.msg] = (e.node, pending)
        return s

    def _alter_partition_applied(self, e: ev.AlterPartitionApplied) -> State:
        sender, _p = self._proposals.get(e.msg, (-1, None))
        answers = self._alter_answers.get(e.msg, [])
        if sender != e.node or not answers:
            raise NotEnabled(f"broker {e.node} got no answer to an AlterPartition {e.msg} of its own")
        if (e.error, _sorted(e.isr), e.partition_epoch) not in answers:
            raise _Mismatch(
                [f"AlterPartition answer {(e.error, e.isr, e.partition_epoch)} is none of the controller's {answers}"]
            )
        s = replication.apply_alter_partition_response(
            self.state, self.cfg, e.node, e.msg, e.error, _sorted(e.isr), e.partition_epoch
        )
        self._after = s
        _compare({"hw": e.hw}, {"hw": s.replica(e.node).hw})
        return s


def judge_events(cfg: ReplicationConfig, events: list[ev.Event]) -> list[Finding]:
    """Judge a whole event list from a fresh model; returns every finding in order."""
    judge = Judge(cfg)
    out: list[Finding] = []
    for e in events:
        out.extend(judge.observe(e))
    return out


__all__ = ["ALLOWED", "INVARIANT_VIOLATION", "NON_CONFORMANCE", "Finding", "Judge", "judge_events", "replace"]
