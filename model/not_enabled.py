"""The model's one precondition error: a handler Kafka would not run in this state.

Every handler of every slice raises ``NotEnabled`` (and nothing else) when its preconditions do
not hold: a rule forbids it (Kafka would not run it, or would throw IllegalStateException), or the
event names something the state does not have (a broker outside the replicas, a batch without
records). The lockstep judges report it as a non-conformance finding, never as a crash.
"""

from __future__ import annotations


class NotEnabled(Exception):
    """The handler cannot run in this state; the message names the rule that forbids it."""
