"""Did the implementation do what the environment's operations ask? The fetch-session slice's
harness stand-ins (the partitions' appends, HW, log start and leadership; the broker's restart; the
consumers' assignments, polls and closes) judged against the judge's model state after each
operation (conformance.judge.LockstepJudge.operation_done).

Each operation of traces.operations says what it does to the cluster; the events it causes move the
model, so after the operation the model must show that effect. A stand-in that skips or bends an
operation (an AdvanceHw that leaves the HW where it was, an append of the wrong size, a leadership
move that never happens) otherwise only makes the run a different, valid one, and the bugs the
search meant to provoke with the operation go unprovoked without anyone knowing.

Guarantee: ``unhonoured`` names an operation only when the model state after it lacks the effect
the operation's docstring promises from the state before it; operations of the shared machine
(deliver, drop, clock) and operations that the docstring says are ignored are never named.
"""

from __future__ import annotations

from kconform.model import txn_partition as T
from kconform.model.fetch_config import BROKER
from kconform.model.fetch_state import NO_MSG, FetchState
from kconform.model.records import NO_CONTROL
from kconform.traces import operations as ops
from kconform.traces.inputs.limits import OPERATION_RULES, Range

_COUNTS, _KINDS = OPERATION_RULES[("append_records", "count")], OPERATION_RULES[("append_records", "txn")]
assert isinstance(_COUNTS, Range) and isinstance(_KINDS, Range)
"""What an append may ask for (the operation's input contract); the harness ignores anything else."""


class Environment:
    """What the judge keeps between operations: the model state when the current operation began,
    and the newest request an answer to which may have been lost (a Drop of any message, or a Bounce,
    since it was sent)."""

    def __init__(self, start: FetchState) -> None:
        self.start = start
        self.lossy_upto = NO_MSG
        self.restart_upto = NO_MSG
        """The newest request sent before the broker's latest restart."""
        self.answered_then: dict[int, int] = {}
        """How often each request up to ``restart_upto`` had been answered at that restart."""

    def done(self, op: ops.Operation, post: FetchState) -> str:
        """``unhonoured`` for ``op`` from the state when it began to ``post``; for a Run (a healthy
        network), also no client may still wait for a request, unless a Drop or a Bounce since it
        was sent may have lost it or its answer (``undelivered``)."""
        pre, self.start = self.start, post
        if isinstance(op, ops.Drop | ops.Bounce):
            self.lossy_upto = max(post.sent.keys(), default=NO_MSG)
        if isinstance(op, ops.Bounce) and op.broker == BROKER:
            self.restart_upto = self.lossy_upto
            self.answered_then = {m: len(a) for m, a in post.answers.items()}
        why = unhonoured(op, pre, post)
        if not why and isinstance(op, ops.Run):
            why = undelivered(post, self.lossy_upto)
        if not why and self.restart_upto != NO_MSG and post.answers is not pre.answers:
            why = self._answered_across_restart(post)
        return why

    def _answered_across_restart(self, post: FetchState) -> str:
        """A request sent before the broker's latest restart answered after it: a restart loses
        every message in flight to or from the broker (traces.operations.Bounce; a real broker's
        connections break with its process)."""
        for m, answers in post.answers.items():
            if m <= self.restart_upto and len(answers) > self.answered_then.get(m, 0):
                return f"request {m}, in flight when the broker restarted, was answered after the restart"
        return ""


def undelivered(s: FetchState, lossy_upto: int) -> str:
    """Which client still waits for a request newer than ``lossy_upto`` after a Run: a Run delivers
    every message in flight (traces.operations.Run), so the request reached the broker, was answered
    and the answer reached the client, unless the request or the answer never left its sender.
    '' when no client waits."""
    for c, client in s.clients.items():
        m = client.in_flight
        if m != NO_MSG and m > lossy_upto:
            answered = "answered it, but the answer never reached the client" if m in s.answers else "never answered it"
            return f"client {c} still waits for request {m} after a healthy-network run: the broker {answered}"
    return ""


def unhonoured(op: ops.Operation, pre: FetchState, post: FetchState) -> str:
    """Why the model state ``post`` after ``op`` lacks the effect ``op`` asks for from ``pre``; ''
    when it has it (or ``op`` is not one of the slice's environment operations)."""
    if isinstance(op, ops.AdvanceHw | ops.AppendRecords | ops.DeleteRecords | ops.ToggleLeadership):
        return _partition_op(op, pre, post)
    if isinstance(op, ops.Bounce):
        lost = op.broker != BROKER or not post.cache.sessions
        return "" if lost else f"the broker restarted but {len(post.cache.sessions)} fetch sessions survived its cache"
    if isinstance(op, ops.Assign | ops.Poll | ops.CloseSession):
        return _client_op(op, pre, post)
    return ""


def _partition_op(
    op: ops.AdvanceHw | ops.AppendRecords | ops.DeleteRecords | ops.ToggleLeadership, pre: FetchState, post: FetchState
) -> str:
    before, after = pre.logs.get(op.partition), post.logs.get(op.partition)
    if before is None or after is None:
        return ""
    p, q = before.part, after.part
    if isinstance(op, ops.AdvanceHw):
        target = p.leo if op.offset < 0 else min(max(op.offset, p.hw), p.leo)
        return "" if q.hw == target else f"{op.partition}: HW {p.hw} → {q.hw}, asked for {target} (LEO {p.leo})"
    if isinstance(op, ops.DeleteRecords):
        target = max(before.log_start, min(op.offset, p.hw))
        if after.log_start == target:
            return ""
        return f"{op.partition}: log start {before.log_start} → {after.log_start}, asked for {target} (HW {p.hw})"
    if isinstance(op, ops.ToggleLeadership):
        return "" if after.leading != before.leading else f"{op.partition}: leadership stayed {before.leading}"
    return _appended(op, before.part, after.part)


def _appended(op: ops.AppendRecords, p: T.Partition, q: T.Partition) -> str:
    valid = op.count in _COUNTS and op.txn in _KINDS
    new = q.log[p.leo :]
    data = [r for r in new if r.control == NO_CONTROL]
    markers = len(new) - len(data)
    aborted = len(q.aborted_index) - len(p.aborted_index)
    want = (op.count, int(op.txn != 0), int(op.txn == 2), op.txn != 0) if valid else (0, 0, 0, False)
    got = (len(data), markers, aborted, bool(data) and all(r.txn for r in data))
    if got == want:
        return ""
    return (
        f"{op.partition}: appended {got[0]} records, {got[1]} markers, {got[2]} aborted transactions "
        f"(transactional: {got[3]}); asked for {want[0]}, {want[1]}, {want[2]} ({want[3]})"
    )


def _client_op(op: ops.Assign | ops.Poll | ops.CloseSession, pre: FetchState, post: FetchState) -> str:
    before, after = pre.clients.get(op.client), post.clients.get(op.client)
    if before is None or after is None:
        return ""
    if isinstance(op, ops.Assign):
        if op.partition not in pre.logs or (op.partition in after.assigned) == op.assigned:
            return ""
        verb = "add" if op.assigned else "drop"
        return f"client {op.client}: assignment {after.assigned}, asked to {verb} {op.partition}"
    sent = len(post.sent) - len(pre.sent)
    if isinstance(op, ops.Poll):
        if before.in_flight != NO_MSG or sent == 1:
            return ""
        return f"client {op.client} polled with nothing in flight and sent {sent} requests, not one"
    return "" if sent == 1 else f"client {op.client} closed and sent {sent} requests, not its close request"


__all__ = ["Environment", "undelivered", "unhonoured"]
