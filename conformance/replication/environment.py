"""What the replication slice's administrative operations must do, judged after each one (issue 17,
power): the events of a run show what a broker did, never what it was asked and silently skipped.

- ``Retention(broker, offset)`` on a running replica whose log start is below ``offset`` and whose HW
  is at or past it must move the log start to ``offset`` (UnifiedLog.deleteOldSegments by time or
  size: every segment below the HW is deletable, KAFKA-5634, so retention reaches the HW;
  model.log_start.retention_bound). A replica that deletes nothing there reports nothing, and
  without this check its run only looked like one with a different retention.
- ``DeleteRecordsAt(broker, offset)`` to a running broker is answered (KIP-107: every DeleteRecords
  request gets a DeleteRecordsResponse, an error included: ReplicaManager.deleteRecords), so the
  run shows one ``DeleteRecordsHandled`` for it.

Guarantees: ``not_done`` returns "" for every other operation and whenever the operation did what
it asks on the model state before and after it; the message names the broker and what is missing.
"""

from __future__ import annotations

from kconform.model import log_start as ls
from kconform.model.state import State
from kconform.traces import operations as o


def not_done(op: o.Operation, before: State, after: State, delete_answers: int) -> str:
    """Why ``op`` was not done as asked ("" when it was): ``before`` and ``after`` are the model
    states around it, ``delete_answers`` the DeleteRecordsHandled events it caused."""
    if isinstance(op, o.Retention):
        if not 0 <= op.broker < len(before.replicas):
            return ""
        r = before.replica(op.broker)
        reaches = r.alive and r.log_start < op.offset <= ls.retention_bound(r.hw)
        moved_to = after.replica(op.broker).log_start
        if reaches and moved_to != op.offset:
            return (
                f"retention to {op.offset} on broker {op.broker} (log start {r.log_start}, HW {r.hw}) "
                f"left its log start at {moved_to}"
            )
        return ""
    if isinstance(op, o.DeleteRecordsAt):
        if not 0 <= op.broker < len(before.replicas) or not before.replica(op.broker).alive:
            return ""
        if delete_answers != 1:
            return f"DeleteRecords to running broker {op.broker} was answered {delete_answers} times, not once"
    return ""
