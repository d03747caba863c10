"""The lockstep judge of the fetch-session slice: each event against model.fetch_state.

Same contract as every slice's judge (conformance.judge.LockstepJudge): the model runs the same
handler with the event's inputs and the claimed outcome is compared field by field; after every
event the invariants of model.fetch_invariants are checked. A request handled twice (a duplicated
message) has two answers; the client's handling is accepted if any of them justifies it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kconform.conformance.fetch.environment import Environment
from kconform.conformance.judge import NON_CONFORMANCE, Finding, LockstepJudge, compare, only_clock_moved
from kconform.model import fetch_invariants as I
from kconform.model import fetch_session as FS
from kconform.model import fetch_state as S
from kconform.model.fetch_config import CLIENT_NODE_BASE, FetchConfig
from kconform.model.fetch_state import FetchState
from kconform.model.invariants import Violation
from kconform.model.not_enabled import NotEnabled
from kconform.traces import events as ev
from kconform.traces.operations import Operation


def _client(node: int) -> int:
    return node - CLIENT_NODE_BASE


def _settling(run: Callable[[Any], FetchState]) -> Callable[[Any], FetchState]:
    """A handler that answers nothing: the state it leaves has no ``last_answer`` (model.fetch_state.settled)."""
    return lambda e: S.settled(run(e))


def answer_fields(a: FS.Answer) -> dict[str, object]:
    """The fields of SessionFetchHandled an answer determines."""
    parts = a.partitions
    return {
        "outcome": a.outcome,
        "error": a.error,
        "session_id": a.session_id,
        "evicted": a.evicted,
        "partitions": tuple(d.name for d in parts),
        "errors": tuple(d.error for d in parts),
        "hws": tuple(d.hw for d in parts),
        "lsos": tuple(d.lso for d in parts),
        "log_starts": tuple(d.log_start for d in parts),
        "counts": tuple(len(d.records) for d in parts),
        "records": tuple(r for d in parts for r in d.records),
        "aborted_counts": tuple(len(d.aborted) for d in parts),
        "aborted": tuple(t for d in parts for t in d.aborted),
    }


class FetchJudge(LockstepJudge[FetchState, FetchConfig]):
    """Holds the model state of one fetch-session run and judges each event as it arrives."""

    invariant_registry = I.INVARIANTS
    not_enabled = (NotEnabled,)
    report_violations_once = True
    keep_state_of_first_mismatch = True

    def __init__(self, cfg: FetchConfig, checked: frozenset[str] | None = None) -> None:
        super().__init__(cfg, checked, S.initial_state(cfg))
        self._environment = Environment(self.state)
        self.handlers = {
            ev.ClockAdvanced: lambda e: S.advance_clock(self.state, e.now_ms),
            ev.RecordsAppended: lambda e: S.append(self.state, e.partition, e.rids, e.pid, e.txn, e.commit),
            ev.HwAdvanced: lambda e: S.hw_advanced(self.state, e.partition, e.hw),
            ev.LogStartAdvanced: lambda e: S.log_start_advanced(self.state, e.partition, e.log_start),
            ev.LeadershipChanged: lambda e: S.leadership_changed(self.state, e.partition, e.leads),
            ev.SessionCacheLost: lambda e: S.cache_lost(self.state),
            ev.FetchAssigned: lambda e: S.assigned(self.state, self.cfg, _client(e.node), e.partitions),
            ev.SessionClosing: self._closing,
            ev.SessionFetchSent: self._sent,
            ev.SessionFetchHandled: self._handled,
            ev.SessionFetchApplied: self._applied,
        }
        for kind, run in list(self.handlers.items()):
            if kind is not ev.SessionFetchHandled:
                self.handlers[kind] = _settling(run)

    def unchanged(self, pre: FetchState, post: FetchState) -> bool:
        """A clock tick that leaves no answer to settle changes only ``now_ms``, which no invariant
        reads (tests/test_fetch_invariant_memo.py): the same state was checked already, and a
        violation found then is reported once (``report_violations_once``), so re-running the checks
        could add no finding (issue 17). The tick itself is still judged: the model's clock must
        move forward."""
        return post is pre or only_clock_moved(pre, post)

    def find_violations(self, pre: FetchState, post: FetchState) -> Sequence[Violation]:
        return I.check_state(post, self.cfg, self.checked)

    def operation_done(self, op: Operation) -> list[Finding]:
        """The environment's operations did to the model what they ask (conformance.fetch.environment):
        a harness stand-in that skips or bends one is non-conformance named after the operation."""
        why = self._environment.done(op, self.state)
        if not why:
            return []
        return [Finding(NON_CONFORMANCE, op.kind, f"the operation was not done as asked: {why}")]

    def coverage_key(self, event: ev.Event) -> str:
        """Session outcomes count with their error: ``session_fetch_handled:error:INVALID_FETCH_SESSION_EPOCH``."""
        if isinstance(event, ev.SessionFetchHandled) and event.error != ev.NONE:
            return f"{event.kind}:{event.outcome}:{ev.ERRORS.get(event.error, str(event.error))}"
        if isinstance(event, ev.SessionFetchHandled) and event.evicted:
            return f"{event.kind}:{event.outcome}:evicted"
        return super().coverage_key(event)

    def _sent(self, e: ev.SessionFetchSent) -> FetchState:
        s, req = self.keep(S.send(self.state, self.cfg, _client(e.node), e.msg))
        compare(
            {
                "session_id": e.session_id,
                "epoch": e.epoch,
                "partitions": tuple((p.partition, p.offset) for p in e.fetches),
                "forgotten": e.forgotten,
            },
            {"session_id": req.session_id, "epoch": req.epoch, "partitions": req.to_send, "forgotten": req.forgotten},
        )
        return s

    def _closing(self, e: ev.SessionClosing) -> FetchState:
        s, req = self.keep(S.closing(self.state, self.cfg, _client(e.node), e.msg))
        compare({"session_id": e.session_id}, {"session_id": req.session_id})
        return s

    def _handled(self, e: ev.SessionFetchHandled) -> FetchState:
        s, answer = self.keep(S.handle(self.state, self.cfg, e.msg, e.client, e.session_id))
        expected = answer_fields(answer)
        compare({k: getattr(e, k) for k in expected}, expected)
        return s

    def _applied(self, e: ev.SessionFetchApplied) -> FetchState:
        client = _client(e.node)
        claimed = {
            "outcome": e.outcome,
            "session_id": e.session_id,
            "epoch": e.epoch,
            "positions": tuple((p.partition, p.offset) for p in e.positions),
            "rids": e.rids,
        }
        if e.outcome == S.TIMED_OUT:
            s, out = self.keep(S.timed_out(self.state, self.cfg, client, e.msg))
        elif e.outcome == S.IGNORED:
            s, out = self.keep(S.ignored(self.state, self.cfg, client, e.msg))
        else:
            answers = S.answers_to(self.state, e.msg)
            if not answers:
                raise NotEnabled(f"request {e.msg} was never answered")
            return self.first_match(answers, lambda a: S.apply_answer(self.state, self.cfg, client, e.msg, a), claimed)
        compare(claimed, self._fields(out))
        return s

    @staticmethod
    def _fields(out: S.Applied) -> dict[str, object]:
        return {
            "outcome": out.outcome,
            "session_id": out.session_id,
            "epoch": out.epoch,
            "positions": out.positions,
            "rids": out.rids,
        }


__all__ = ["FetchJudge", "answer_fields"]
