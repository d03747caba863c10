"""Model search paths as events: each atomic action's handler calls, in the event vocabulary.

model.actions composes handlers into atomic actions and keeps only the resulting state (the
search's hot path stays as it is: nothing here runs while exploring). Given a path of action labels
(conformance.replication.explore), this module re-runs it from the booted cluster one handler call at a time
and reports each call as the event of traces.events an implementation would report for it:

- ``fence(b)`` / ``unfence(b)`` / ``move_leader(b)``: BrokerFenced / BrokerUnfenced / LeaderMoved;
- ``metadata(b, pe=N)``: MetadataApplied; ``write(b)``: ProduceHandled (acks=all, request id =
  record id = records written so far); ``ack(b, req[, error])``: ProduceCompleted;
- ``replicate(f)``: FetchSent + FetchHandled + FetchApplied; ``truncate(f)``: EpochQuerySent +
  EpochQueryHandled + EpochQueryApplied; ``shrink(b, f)`` / ``expand(b, f)``: IsrChangeProposed +
  AlterPartitionHandled + AlterPartitionApplied; every request gets a fresh message id;
- ``tick``: ClockAdvanced; ``crash(b)`` / ``restart(b)`` / ``checkpoint(b)``: BrokerCrashed /
  BrokerRestarted / Checkpointed;
- the boot (model.actions.booted_state): BrokerUnfenced for each broker, then MetadataApplied of
  the latest record for each broker.

Guarantees: the state after an action's events is exactly the state model.actions.successors
gives for that label, and the booted state is exactly booted_state (both checked on every call;
a drift raises PathEncodingError); a label that is not enabled raises ValueError. Times are
absolute (the search's canonical states shift them; the canonical form of each state here is the
search's state). So a fresh lockstep Judge fed the boot events and then the actions' events runs
the same handlers with the same inputs and reaches the same states.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from kconform.conformance.judge import INVARIANT_VIOLATION
from kconform.conformance.replication.explore import Found, canonical
from kconform.model import replication as rp
from kconform.model.actions import SearchBounds, booted_state, successors
from kconform.model.config import ReplicationConfig
from kconform.model.invariants import INVARIANTS
from kconform.model.replication import Election
from kconform.model.state import PartitionRecord, State, initial_state
from kconform.traces import events as ev
from kconform.traces.counterexample import MODEL_IMPLEMENTATION, Counterexample, Step, make_verdict
from kconform.traces.operations import Boot, ModelAction

_ERROR_CODES = {name: code for code, name in ev.ERRORS.items()}


class PathEncodingError(AssertionError):
    """The events derived for an action do not lead to the state the search computed: the
    encoding here and model.actions disagree (a bug in kconform, never a verdict)."""


@dataclass(frozen=True)
class PathStep:
    """One action of a path: its label, the events of its handler calls in order, and the state
    after them (absolute time; its canonical form is the search's state)."""

    label: str
    events: tuple[ev.Event, ...]
    state: State


def boot_events(cfg: ReplicationConfig) -> tuple[ev.Event, ...]:
    """The booted cluster as events: every broker unfenced in id order, then every broker applies
    the latest record. A fresh Judge fed them reaches booted_state(cfg)."""
    return _boot(cfg)[0]


def path_steps(cfg: ReplicationConfig, bounds: SearchBounds, path: tuple[str, ...] | list[str]) -> list[PathStep]:
    """Re-run ``path`` (action labels from the booted state) and record each action's events.

    Raises ValueError when a label is not enabled where it stands (as explore.replay does) or is
    not a label of model.actions, PathEncodingError when the events disagree with the search.
    """
    _events, s = _boot(cfg)
    recorder = _Recorder(cfg)
    out: list[PathStep] = []
    for i, label in enumerate(path):
        expected = next((post for lab, post in successors(s, cfg, bounds) if lab == label), None)
        if expected is None:
            enabled = ", ".join(lab for lab, _ in successors(s, cfg, bounds))
            raise ValueError(f"step {i + 1}: {label} is not enabled (enabled: {enabled})")
        post, events = recorder.run(s, label)
        if post != expected:
            raise PathEncodingError(f"step {i + 1}: the events of {label} lead elsewhere than the search's action")
        out.append(PathStep(label, events, post))
        s = post
    return out


def action_events(cfg: ReplicationConfig, s: State, label: str) -> tuple[State, tuple[ev.Event, ...]]:
    """The state after action ``label`` from ``s`` and the events of its handler calls (message ids
    from 1). ``s`` may be a search state (canonical time); no check against the search is made
    here (path_steps makes it), and a label whose handlers are not enabled raises NotEnabled."""
    return _Recorder(cfg).run(s, label)


def path_events(
    cfg: ReplicationConfig, bounds: SearchBounds, path: tuple[str, ...] | list[str]
) -> list[tuple[str, tuple[ev.Event, ...]]]:
    """(label, events) for each action of ``path``; see path_steps."""
    return [(step.label, step.events) for step in path_steps(cfg, bounds, path)]


def path_counterexample(
    cfg: ReplicationConfig, bounds: SearchBounds, found: Found, invariants: frozenset[str] | None = None
) -> Counterexample:
    """The search's violation as a counterexample file: step 0 ``boot`` with the boot events, then
    one ``model_action`` step per action with its events; implementation "model"; the verdict is
    the invariant violation at the last step (``step`` = the path's depth), with the search
    bounds kept under ``bounds`` and, when the search checked only some ``invariants``, their
    names under ``invariants`` (model-only replay then checks those only). Judged model-only
    (traces.replay.replay(cx, None)) it runs the same handlers on the same states, checking the
    same invariants after every event instead of after every action: for every buggy ladder
    rung it ends in the same invariant's violation at the same step (tests/test_pathevents.py).

    Raises PathEncodingError if the path does not lead to ``found.state``.
    """
    steps = path_steps(cfg, bounds, found.path)
    last = steps[-1].state if steps else booted_state(cfg)
    if canonical(last, cfg) != found.state:
        raise PathEncodingError(f"the path {' -> '.join(found.path)} does not reach the violating state")
    doc = INVARIANTS[found.invariant].doc if found.invariant in INVARIANTS else ""
    message = f"{found.message} (guarantee: {doc})" if doc else found.message
    verdict = make_verdict(INVARIANT_VIOLATION, found.invariant, message, found.depth)
    verdict["bounds"] = dataclasses.asdict(bounds)
    if invariants is not None:
        verdict["invariants"] = sorted(invariants)
    return Counterexample(
        config=cfg,
        seed=0,
        mutants=(),
        implementation=MODEL_IMPLEMENTATION,
        verdict=verdict,
        steps=(
            Step(Boot(), boot_events(cfg)),
            *(Step(ModelAction(step.label), step.events) for step in steps),
        ),
    )


# ---------------------------------------------------------------------------------------------


def _boot(cfg: ReplicationConfig) -> tuple[tuple[ev.Event, ...], State]:
    s = initial_state(cfg)
    events: list[ev.Event] = []
    for b in cfg.brokers:
        s, election = rp.controller_unfence(s, cfg, b)
        events.append(_election_event(ev.BrokerUnfenced, b, election))
    latest = s.published[-1]
    for b in cfg.brokers:
        s, out = rp.apply_metadata(s, cfg, b, latest)
        events.append(_metadata_event(b, latest, out))
    if s != booted_state(cfg):
        raise PathEncodingError("the boot events do not lead to model.actions.booted_state")
    return tuple(events), s


def _election_event(cls: type[ev.BrokerFenced] | type[ev.BrokerUnfenced], broker: int, election: Election) -> ev.Event:
    rec = election.record
    return cls(ev.CONTROLLER, broker, rec.leader, rec.leader_epoch, rec.isr, rec.partition_epoch, election.unclean)


def _metadata_event(node: int, rec: PartitionRecord, out: rp.MetadataOutcome) -> ev.MetadataApplied:
    return ev.MetadataApplied(
        node, rec.leader, rec.leader_epoch, rec.isr, rec.partition_epoch, out.outcome, out.truncated_to, out.hw
    )


def _parse(label: str) -> tuple[str, list[str]]:
    """``metadata(1, pe=3)`` → ("metadata", ["1", "pe=3"]); ``tick`` → ("tick", [])."""
    name, paren, rest = label.partition("(")
    if not paren:
        return name, []
    if not rest.endswith(")"):
        raise ValueError(f"not an action label: {label!r}")
    return name, [a.strip() for a in rest[:-1].split(",")]


def _int(label: str, text: str) -> int:
    try:
        return int(text.partition("=")[2] if "=" in text else text)
    except ValueError:
        raise ValueError(f"not an action label: {label!r}") from None


class _Recorder:
    """Runs one labelled action's handlers on a state and records their events; message ids are
    fresh across the whole path."""

    def __init__(self, cfg: ReplicationConfig) -> None:
        self.cfg = cfg
        self.next_msg = 0
        self._actions: dict[str, Callable[[State, list[int]], tuple[State, list[ev.Event]]]] = {
            "fence": self._fence,
            "unfence": self._unfence,
            "move_leader": self._move_leader,
            "metadata": self._metadata,
            "write": self._write,
            "ack": self._ack,
            "replicate": self._replicate,
            "truncate": self._truncate,
            "shrink": self._alter_isr,
            "expand": self._alter_isr,
            "tick": self._tick,
            "crash": self._crash,
            "restart": self._restart,
            "checkpoint": self._checkpoint,
        }

    def run(self, s: State, label: str) -> tuple[State, tuple[ev.Event, ...]]:
        name, raw = _parse(label)
        action = self._actions.get(name)
        if action is None:
            raise ValueError(f"not an action label: {label!r}")
        args = [_ERROR_CODES[a] if a in _ERROR_CODES else _int(label, a) for a in raw]
        post, events = action(s, args)
        return post, tuple(events)

    def _msg(self) -> int:
        self.next_msg += 1
        return self.next_msg

    # Controller

    def _fence(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        post, election = rp.controller_fence(s, self.cfg, args[0])
        return post, [_election_event(ev.BrokerFenced, args[0], election)]

    def _unfence(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        post, election = rp.controller_unfence(s, self.cfg, args[0])
        return post, [_election_event(ev.BrokerUnfenced, args[0], election)]

    def _move_leader(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        post, election = rp.controller_move_leader(s, self.cfg, args[0])
        rec = election.record
        return post, [ev.LeaderMoved(ev.CONTROLLER, rec.leader, rec.leader_epoch, rec.isr, rec.partition_epoch)]

    # Metadata, produce

    def _metadata(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        node, pe = args
        rec = next((r for r in s.published if r.partition_epoch == pe), None)
        if rec is None:
            raise ValueError(f"no partition record of partition epoch {pe} was published")
        post, out = rp.apply_metadata(s, self.cfg, node, rec)
        return post, [_metadata_event(node, rec, out)]

    def _write(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        node = args[0]
        rid = len(s.ghost.written)  # as model.actions: request id = record id = records so far
        post, out = rp.produce(s, self.cfg, node, rid, rid, -1)
        return post, [ev.ProduceHandled(node, rid, rid, -1, out.error, out.offset, out.epoch, out.hw)]

    def _ack(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        node, req = args[0], args[1]
        error = args[2] if len(args) > 2 else ev.NONE
        post = rp.complete_produce(s, self.cfg, node, req, error)
        return post, [ev.ProduceCompleted(node, req, error)]

    # Round trips

    def _replicate(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        f, msg = args[0], self._msg()
        q = rp.fetch_request(s, self.cfg, f)
        sent = ev.FetchSent(
            f, msg, q.leader, q.fetch_offset, q.last_fetched_epoch, q.current_leader_epoch, q.follower_epoch
        )
        s, resp = rp.handle_fetch(s, self.cfg, q.leader, f, q)
        handled = ev.FetchHandled(
            q.leader,
            msg,
            f,
            resp.error,
            resp.entries,
            resp.hw,
            resp.diverging_epoch,
            resp.diverging_end_offset,
            resp.leader_leo,
            resp.leader_hw,
        )
        s, out = rp.apply_fetch_response(s, self.cfg, f, q, resp)
        applied = ev.FetchApplied(f, msg, out.outcome, out.truncated_to, out.appended, out.hw)
        return s, [sent, handled, applied]

    def _truncate(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        f, msg = args[0], self._msg()
        q = rp.epoch_query_request(s, self.cfg, f)
        sent = ev.EpochQuerySent(f, msg, q.leader, q.requested_epoch, q.current_leader_epoch, q.follower_epoch)
        answer = rp.handle_epoch_query(s, self.cfg, q.leader, q)
        handled = ev.EpochQueryHandled(q.leader, msg, f, answer.error, answer.epoch, answer.end_offset)
        s, out = rp.apply_epoch_answer(s, self.cfg, f, q, answer)
        return s, [sent, handled, ev.EpochQueryApplied(f, msg, out.outcome, out.truncated_to, out.hw)]

    def _alter_isr(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        leader, f = args
        isr = s.replica(leader).isr
        proposal = tuple(m for m in isr if m != f) if f in isr else tuple(sorted((*isr, f)))
        msg = self._msg()
        r = s.replica(leader)
        s = rp.propose_isr(s, self.cfg, leader, msg, proposal)
        pending = s.replica(leader).pending_isr
        assert pending is not None
        proposed = ev.IsrChangeProposed(
            leader, msg, pending.isr, r.leader_epoch, r.partition_epoch, s.replica(leader).hw
        )
        s, error = rp.controller_alter_partition(s, self.cfg, leader, pending)
        c = s.controller
        handled = ev.AlterPartitionHandled(ev.CONTROLLER, msg, error, c.isr, c.partition_epoch)
        s = rp.apply_alter_partition_response(s, self.cfg, leader, msg, error, c.isr, c.partition_epoch)
        applied = ev.AlterPartitionApplied(leader, msg, error, c.isr, c.partition_epoch, s.replica(leader).hw)
        return s, [proposed, handled, applied]

    # Time and failures

    def _tick(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        now = s.now_ms + self.cfg.replica_lag_time_max_ms + 1  # as model.actions: past the lag time
        return rp.advance_clock(s, now), [ev.ClockAdvanced(ev.CONTROLLER, now)]

    def _crash(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        return rp.crash(s, self.cfg, args[0]), [ev.BrokerCrashed(args[0])]

    def _restart(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        post = rp.restart(s, self.cfg, args[0])
        r = post.replica(args[0])
        return post, [ev.BrokerRestarted(args[0], r.leo, r.hw)]

    def _checkpoint(self, s: State, args: list[int]) -> tuple[State, list[ev.Event]]:
        r = s.replica(args[0])
        return rp.checkpoint(s, self.cfg, args[0]), [ev.Checkpointed(args[0], r.leo, r.hw)]
