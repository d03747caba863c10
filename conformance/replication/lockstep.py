"""The replication slice's lockstep judge: each event against model.replication, one handler at a time.

For every event the judge runs the same handler in the model with the event's inputs and compares
the outcome the implementation claims with the one the model computes; after every event the
invariants of model.invariants are checked. The verdicts, the event loop and the classification of
invariant results are the shared core's (conformance.judge.LockstepJudge); this module holds the
replication rules only.

Requests and responses travel through the network between a send event and the handler events,
so the judge keeps what was sent and what was answered, by message id. A message may be delivered
twice (duplicated by the network); a response is matched against every answer given to its request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from kconform.conformance.judge import (
    NON_CONFORMANCE,
    Finding,
    LockstepJudge,
    Mismatch,
    compare,
    compare_fields,
    own_request,
)
from kconform.conformance.replication import coverage, environment, liveness
from kconform.model import fetch_pacing, invariants, isr_expansion, read_replica, replication
from kconform.model.config import ReplicationConfig
from kconform.model.errors import FENCED_LEADER_EPOCH
from kconform.model.replication import (
    EpochAnswer,
    EpochQuery,
    FetchRequest,
    FetchResponse,
    NotEnabled,
)
from kconform.model.state import PartitionRecord, PendingIsr, State, initial_state
from kconform.traces import events as ev
from kconform.traces.operations import Operation


def _sorted(isr: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(isr))


def _claimed_fetch_response(e: ev.FetchHandled | ev.FetchCompleted, model: FetchResponse) -> FetchResponse:
    """The Fetch answer an event claims. The events carry no log start offset: the model's
    ``leader_log_start`` stands for it. The leader's log start is judged where it moves
    (DeleteRecordsHandled, RetentionApplied, the truncations FetchApplied reports), and a follower's
    adoption of it by what the follower answers later (OFFSET_OUT_OF_RANGE below it)."""
    return FetchResponse(
        e.error,
        e.entries,
        e.hw,
        e.diverging_epoch,
        e.diverging_end_offset,
        e.leader_leo,
        e.leader_hw,
        model.leader_log_start,
    )


_REFINED = (
    ev.FetchHandled,
    ev.FetchCompleted,
    ev.ConsumerFetchWaitHandled,
    ev.ReplicaFetchHandled,
    ev.ReplicaFetchSent,
)
"""The event types whose coverage key conformance.replication.coverage refines."""

_KIND_KEYS: dict[type[ev.Event], str] = {}
"""Per event type judged: its kind when that is the coverage key of each of its events, else ''."""


def _kind_is_key(t: type[ev.Event]) -> bool:
    """Whether every event of type ``t`` has its kind as coverage key: no outcome and no error
    (conformance.coverage.outcome_key reads them with getattr: a field or a class attribute) and
    not a type replication refines."""
    fields = {f.name for f in dataclasses.fields(t)} if dataclasses.is_dataclass(t) else set()
    return not (
        {"outcome", "error"} & fields or hasattr(t, "outcome") or hasattr(t, "error") or issubclass(t, _REFINED)
    )


class Judge(LockstepJudge[State, ReplicationConfig]):
    """Holds the replication model state of one run and judges each event as it arrives.

    ``checked`` names the invariants checked after each event (None: all of them, the default);
    a model-search counterexample found for some invariants only is judged against those.
    """

    invariant_registry = invariants.INVARIANTS
    not_enabled = (NotEnabled,)

    def __init__(self, cfg: ReplicationConfig, checked: frozenset[str] | None = None) -> None:
        # Obligations of the purgatory are judged where fetches wait (the --slice all gate's
        # configuration); the model searches' paths, judged with the default, complete on their own terms.
        initial = replace(
            initial_state(cfg),
            tracks_purgatory=cfg.delayed_fetch,
            tracks_isr_expiration=True,
            tracks_fetchers=True,
            tracks_fencing=True,
            tracks_isr_expansion=True,
        )
        super().__init__(cfg, checked, initial)
        self._memo: invariants.Memo = {}  # state invariants whose inputs did not change are not re-run
        self._fetches: dict[int, tuple[int, FetchRequest]] = {}
        self._fetch_answers: dict[int, list[FetchResponse]] = {}
        self._queries: dict[int, tuple[int, EpochQuery]] = {}
        self._query_answers: dict[int, list[EpochAnswer]] = {}
        self._proposals: dict[int, tuple[int, PendingIsr]] = {}
        self._alter_answers: dict[int, list[tuple[int, tuple[int, ...], int]]] = {}
        self._reader_sent: dict[int, tuple[int, bool, int]] = {}
        self._reader_answers: dict[int, list[read_replica.ReplicaFetchOutcome]] = {}
        self._op_before: State = self.state
        self._delete_answers = 0
        self._progress = liveness.Progress(cfg)
        self.handlers = {
            ev.BrokerFenced: self._broker_fenced,
            ev.BrokerUnfenced: self._broker_unfenced,
            ev.LeaderMoved: self._leader_moved,
            ev.AlterPartitionHandled: self._alter_partition_handled,
            ev.ClockAdvanced: lambda e: replication.advance_clock(self.state, e.now_ms, self.cfg),
            ev.BrokerCrashed: self._crashed,
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
            ev.FetchParked: self._fetch_parked,
            ev.FetchCompleted: self._fetch_completed,
            ev.ConsumerFetchWaitHandled: self._consumer_fetch_wait_handled,
            ev.ConsumerFetchCompleted: self._consumer_fetch_completed,
            ev.ReplicaFetchSent: self._replica_fetch_sent,
            ev.ReplicaFetchHandled: self._replica_fetch_handled,
            ev.ReplicaFetchApplied: self._replica_fetch_applied,
            ev.DeleteRecordsHandled: self._delete_records_handled,
            ev.RetentionApplied: lambda e: replication.retention(self.state, self.cfg, e.node, e.log_start),
        }

    def note_operation(self, op: Operation) -> None:
        """Remember the model state before ``op`` (for operation_done) and tell the progress
        obligations (conformance.replication.liveness) what the network does during it."""
        self._op_before = self.state
        self._delete_answers = 0
        self._progress.operation(op, self.state.now_ms)

    def operation_done(self, op: Operation) -> list[Finding]:
        """Retention and DeleteRecords did what they ask (conformance.replication.environment): one
        that a broker skips silently is non-conformance named after the operation. Then progress
        conditioned on delivery (conformance.replication.liveness): a request owed an answer, or a
        follower owed its first request, past its bound of healthy time is non-conformance named
        after the operation (a Run: what the network delivered did not lead where Kafka must), its
        message opening with the check's name, RequestAnswered or FollowerStartsFetching."""
        why = environment.not_done(op, self._op_before, self.state, self._delete_answers)
        if why:
            return [Finding(NON_CONFORMANCE, op.kind, f"the operation was not done as asked: {why}")]
        return [
            Finding(NON_CONFORMANCE, op.kind, f"{name}: the network delivered, progress did not follow: {why}")
            for name, why in self._progress.late(self.state.now_ms)
        ]

    def unchanged(self, pre: State, post: State) -> bool:
        """The invariants read only the replicas, the controller and the ghost: when these are the
        very same values, the same values were checked already."""
        return post.replicas is pre.replicas and post.controller is pre.controller and post.ghost is pre.ghost

    def coverage_key(self, event: ev.Event) -> str:
        """Replication's keys refine the outcome (``fetch_handled:diverging``; conformance.replication.coverage).
        An event type whose key is its kind alone (``clock_advanced``, ``fetch_sent``) is looked up."""
        t = type(event)
        key = _KIND_KEYS.get(t)
        if key is None:
            key = _KIND_KEYS[t] = t.kind if _kind_is_key(t) else ""
        return key or coverage.coverage_key(event)

    def find_violations(self, pre: State, post: State) -> Sequence[invariants.Violation]:
        names = self.checked
        return invariants.check_state(post, self.cfg, names, self._memo) + invariants.check_step(
            pre, post, self.cfg, names
        )

    # ------------------------------------------------------------------------------------------
    # Controller

    def _election(self, e: Any, result: tuple[State, replication.Election]) -> State:
        s, el = result
        rec = el.record
        self._after = s
        compare(
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
        s = self._election(e, replication.controller_fence(self.state, self.cfg, e.broker))
        self._progress.controller_changed(s, fenced=e.broker)
        return s

    def _broker_unfenced(self, e: ev.BrokerUnfenced) -> State:
        pre = self.state
        s = self._election(e, replication.controller_unfence(pre, self.cfg, e.broker))
        self._progress.controller_changed(s, unfenced=e.broker)
        return isr_expansion.unfenced(pre, s, self.cfg, e.broker) if s.tracks_isr_expansion else s

    def _leader_moved(self, e: ev.LeaderMoved) -> State:
        s = self._election(e, replication.controller_move_leader(self.state, self.cfg, e.leader))
        self._progress.controller_changed(s)
        return s

    def _alter_partition_handled(self, e: ev.AlterPartitionHandled) -> State:
        if e.msg not in self._proposals:
            raise NotEnabled(f"AlterPartition {e.msg} was never sent")
        sender, pending = self._proposals[e.msg]
        s, error = replication.controller_alter_partition(self.state, self.cfg, sender, pending)
        c = s.controller
        self._after = s
        compare(
            {"error": e.error, "isr": _sorted(e.isr), "partition_epoch": e.partition_epoch},
            {"error": error, "isr": c.isr, "partition_epoch": c.partition_epoch},
        )
        self._alter_answers.setdefault(e.msg, []).append((error, c.isr, c.partition_epoch))
        self._progress.controller_changed(s)
        return s

    # ------------------------------------------------------------------------------------------
    # Lifecycle

    def _crashed(self, e: ev.BrokerCrashed) -> State:
        self._progress.void()
        return replication.crash(self.state, self.cfg, e.node)

    def _restarted(self, e: ev.BrokerRestarted) -> State:
        self._progress.void()
        s = replication.restart(self.state, self.cfg, e.node)
        r = s.replica(e.node)
        self._after = s
        compare({"log_end": e.log_end, "hw": e.hw}, {"log_end": r.leo, "hw": r.hw})
        return s

    def _checkpointed(self, e: ev.Checkpointed) -> State:
        r = self.state.replica(e.node)
        compare({"log_end": e.log_end, "hw": e.hw}, {"log_end": r.leo, "hw": r.hw})
        return replication.checkpoint(self.state, self.cfg, e.node)

    def _metadata_applied(self, e: ev.MetadataApplied) -> State:
        rec = PartitionRecord(e.leader, e.leader_epoch, _sorted(e.isr), e.partition_epoch)
        s, out = replication.apply_metadata(self.state, self.cfg, e.node, rec)
        self._after = s
        compare_fields(e, out, ("outcome", "truncated_to", "hw"))
        if out.outcome in ("become_leader", "become_follower"):
            self._progress.leadership_applied(e.node)
        if s.tracks_isr_expansion:
            s = isr_expansion.saw_metadata(s, e.node, e.partition_epoch)
        return fetch_pacing.started(s, e.node) if out.outcome == "become_follower" else s

    # ------------------------------------------------------------------------------------------
    # Produce, consume

    def _produce_handled(self, e: ev.ProduceHandled) -> State:
        s, out = replication.produce(self.state, self.cfg, e.node, e.req, e.rid, e.acks)
        self._after = s
        compare_fields(e, out, ("error", "offset", "epoch", "hw"))
        return s

    def _consumer_fetch_handled(self, e: ev.ConsumerFetchHandled) -> State:
        s, out = replication.consumer_fetch(self.state, self.cfg, e.node, e.fetch_offset, e.current_leader_epoch)
        self._after = s
        compare_fields(e, out, ("error", "entries", "hw"))
        return s

    # ------------------------------------------------------------------------------------------
    # The follower-fetching consumer (KIP-392; model.read_replica)

    def _replica_fetch_sent(self, e: ev.ReplicaFetchSent) -> State:
        s = read_replica.send_fetch(self.state, e.node, e.from_preferred, e.fetch_offset)
        self._reader_sent[e.msg] = (e.node, e.from_preferred, e.fetch_offset)
        self._progress.request_sent(s, "the follower-fetching consumer's Fetch", e.msg, liveness.CONSUMER, e.node, -1)
        return s

    def _replica_fetch_handled(self, e: ev.ReplicaFetchHandled) -> State:
        sent = self._reader_sent.get(e.msg)
        if sent is None or sent[0] != e.node or sent[2] != e.fetch_offset:
            raise NotEnabled(
                f"the follower-fetching consumer sent no Fetch {e.msg} at {e.fetch_offset} to broker {e.node}"
            )
        s, out = read_replica.handle_fetch(self.state, self.cfg, e.node, e.fetch_offset, e.current_leader_epoch)
        self._after = s
        compare_fields(e, out, ("error", "entries", "hw", "preferred"))
        self._reader_answers.setdefault(e.msg, []).append(out)
        return s

    def _replica_fetch_applied(self, e: ev.ReplicaFetchApplied) -> State:
        """The consumer applies an answer to its Fetch ``msg``; a duplicated request is answered
        more than once, and the answers may differ (the leader's choice of read replica moves with
        its followers' fetches), so the claim stands if any answer given justifies it."""
        sent, answers = self._reader_sent.get(e.msg), self._reader_answers.get(e.msg, [])
        if sent is None or not answers or sent[0] != e.node:
            raise NotEnabled(f"broker {e.node} never answered the follower-fetching consumer's Fetch {e.msg}")
        broker, from_preferred, fetch_offset = sent

        def run(out: read_replica.ReplicaFetchOutcome) -> tuple[State, object]:
            s = read_replica.apply_fetch(self.state, self.cfg, broker, from_preferred, fetch_offset, out, e.reset_to)
            return s, s.reader

        s = self.first_match(answers, run, {"position": e.position, "preferred": e.preferred})
        self._progress.answered(e.msg)
        return s

    # ------------------------------------------------------------------------------------------
    # Log start offset (KIP-107, model.log_start)

    def _delete_records_handled(self, e: ev.DeleteRecordsHandled) -> State:
        self._delete_answers += 1
        s, out = replication.delete_records(self.state, self.cfg, e.node, e.offset)
        self._after = s
        compare_fields(e, out, ("error", "log_start"))
        return s

    # ------------------------------------------------------------------------------------------
    # Follower fetch

    def _fetch_sent(self, e: ev.FetchSent) -> State:
        q = replication.fetch_request(self.state, self.cfg, e.node)
        compare_fields(e, q, ("leader", "fetch_offset", "last_fetched_epoch", "current_leader_epoch", "follower_epoch"))
        self._fetches[e.msg] = (e.node, q)
        self._progress.request_sent(self.state, "Fetch", e.msg, e.node, e.leader, e.follower_epoch)
        return fetch_pacing.sent(self.state, self.cfg, e.node, e.msg)

    def _sent_fetch(self, e: ev.FetchHandled | ev.FetchParked) -> FetchRequest:
        sent = self._fetches.get(e.msg)
        if sent is None or sent[0] != e.follower or sent[1].leader != e.node:
            raise NotEnabled(f"no Fetch {e.msg} was sent by broker {e.follower} to broker {e.node}")
        return sent[1]

    def _fetch_handled(self, e: ev.FetchHandled) -> State:
        s, resp = replication.handle_fetch(self.state, self.cfg, e.node, e.follower, self._sent_fetch(e))
        claimed = _claimed_fetch_response(e, resp)
        self._after = s
        compare(claimed.__dict__, resp.__dict__)
        if replication.fetch_waits(self.cfg, resp):
            raise Mismatch(
                [
                    f"answered at once with {len(resp.entries)} records; the model parks it "
                    f"(replica.fetch.min.bytes {self.cfg.replica_fetch_min_bytes}, "
                    f"replica.fetch.wait.max.ms {self.cfg.replica_fetch_wait_max_ms})"
                ]
            )
        self._fetch_answers.setdefault(e.msg, []).append(resp)
        return s

    def _fetch_parked(self, e: ev.FetchParked) -> State:
        s, _resp = replication.park_fetch(self.state, self.cfg, e.node, e.follower, e.msg, self._sent_fetch(e))
        self._after = s
        compare({"leader_hw": e.leader_hw}, {"leader_hw": s.replica(e.node).hw})
        return s

    def _fetch_completed(self, e: ev.FetchCompleted) -> State:
        s, resp = replication.complete_fetch(self.state, self.cfg, e.node, e.msg)
        if not isinstance(resp, FetchResponse):
            raise NotEnabled(f"delayed fetch {e.msg} on broker {e.node} is a consumer's, not broker {e.follower}'s")
        claimed = _claimed_fetch_response(e, resp)
        self._after = s
        compare(claimed.__dict__, resp.__dict__)
        self._fetch_answers.setdefault(e.msg, []).append(resp)
        return s

    def _consumer_fetch_wait_handled(self, e: ev.ConsumerFetchWaitHandled) -> State:
        s, out, parked = replication.consumer_fetch_wait(
            self.state, self.cfg, e.node, e.req, e.fetch_offset, e.current_leader_epoch, e.min_bytes, e.max_wait_ms
        )
        self._after = s
        compare(
            {"parked": e.parked, "error": e.error, "entries": e.entries, "hw": e.hw},
            {"parked": parked, "error": out.error, "entries": out.entries, "hw": out.hw},
        )
        return s

    def _consumer_fetch_completed(self, e: ev.ConsumerFetchCompleted) -> State:
        s, out = replication.complete_fetch(self.state, self.cfg, e.node, e.req)
        if isinstance(out, FetchResponse):
            raise NotEnabled(f"delayed fetch {e.req} on broker {e.node} is a follower's, not the consumer's")
        self._after = s
        compare_fields(e, out, ("error", "entries", "hw"))
        return s

    def _fetch_applied(self, e: ev.FetchApplied) -> State:
        q, answers = own_request(self._fetches, self._fetch_answers, e.msg, e.node, "a Fetch", NotEnabled)
        claimed = {"outcome": e.outcome, "truncated_to": e.truncated_to, "appended": e.appended, "hw": e.hw}
        s = self.first_match(
            answers, lambda resp: replication.apply_fetch_response(self.state, self.cfg, e.node, q, resp), claimed
        )
        fenced = any(a.error == FENCED_LEADER_EPOCH for a in answers)
        self._progress.answered(e.msg)
        pause = fetch_pacing.after_fetch(self.cfg, e.outcome, e.truncated_to, e.appended, fenced)
        return fetch_pacing.answered(s, e.node, e.msg, pause, fetch_pacing.backoff_after(self.cfg, e.outcome))

    # ------------------------------------------------------------------------------------------
    # OffsetsForLeaderEpoch

    def _epoch_query_sent(self, e: ev.EpochQuerySent) -> State:
        q = replication.epoch_query_request(self.state, self.cfg, e.node)
        compare_fields(e, q, ("leader", "requested_epoch", "current_leader_epoch", "follower_epoch"))
        self._queries[e.msg] = (e.node, q)
        self._progress.request_sent(self.state, "OffsetsForLeaderEpoch", e.msg, e.node, e.leader, e.follower_epoch)
        return fetch_pacing.sent(self.state, self.cfg, e.node, e.msg)

    def _epoch_query_handled(self, e: ev.EpochQueryHandled) -> State:
        sent = self._queries.get(e.msg)
        if sent is None or sent[0] != e.follower or sent[1].leader != e.node:
            raise NotEnabled(f"no OffsetsForLeaderEpoch {e.msg} was sent by broker {e.follower} to broker {e.node}")
        ans = replication.handle_epoch_query(self.state, self.cfg, e.node, sent[1])
        compare({"error": e.error, "epoch": e.epoch, "end_offset": e.end_offset}, ans.__dict__)
        self._query_answers.setdefault(e.msg, []).append(ans)
        return self.state

    def _epoch_query_applied(self, e: ev.EpochQueryApplied) -> State:
        q, answers = own_request(
            self._queries, self._query_answers, e.msg, e.node, "an OffsetsForLeaderEpoch", NotEnabled
        )
        claimed = {"outcome": e.outcome, "truncated_to": e.truncated_to, "hw": e.hw}
        s = self.first_match(
            answers, lambda a: replication.apply_epoch_answer(self.state, self.cfg, e.node, q, a), claimed
        )
        fenced = any(a.error == FENCED_LEADER_EPOCH for a in answers)
        self._progress.answered(e.msg)
        pause = fetch_pacing.after_epoch_answer(self.cfg, e.outcome, fenced)
        return fetch_pacing.answered(s, e.node, e.msg, pause, fetch_pacing.backoff_after(self.cfg, e.outcome))

    # ------------------------------------------------------------------------------------------
    # ISR

    def _isr_change_proposed(self, e: ev.IsrChangeProposed) -> State:
        r = self.state.replica(e.node)
        compare_fields(e, r, ("leader_epoch", "partition_epoch"))
        s = replication.propose_isr(self.state, self.cfg, e.node, e.msg, _sorted(e.isr))
        self._after = s
        compare({"hw": e.hw}, {"hw": s.replica(e.node).hw})
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
            raise Mismatch(
                [f"AlterPartition answer {(e.error, e.isr, e.partition_epoch)} is none of the controller's {answers}"]
            )
        s = replication.apply_alter_partition_response(
            self.state, self.cfg, e.node, e.msg, e.error, _sorted(e.isr), e.partition_epoch
        )
        self._after = s
        compare({"hw": e.hw}, {"hw": s.replica(e.node).hw})
        return s


def judge_events(cfg: ReplicationConfig, events: list[ev.Event]) -> list[Finding]:
    """Judge a whole event list from a fresh model; returns every finding in order."""
    return Judge(cfg).judge_all(events)


__all__ = ["Judge", "judge_events"]
