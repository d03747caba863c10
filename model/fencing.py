"""The controller's session bound: how long a crashed broker may stay unfenced.

KRaft brokers heartbeat the active controller (BrokerLifecycleManager, every
broker.heartbeat.interval.ms); the controller's BrokerHeartbeatManager keeps each broker's last
contact, and ``hasValidSession`` holds while ``lastContactNs + sessionTimeoutNs >= now``.
QuorumController.rescheduleMaybeFenceStaleBrokers schedules ``maybeFenceOneStaleBroker`` at
``nextCheckTimeNs`` (the earliest session expiry), which fences the stale broker
(ReplicationControlManager.handleBrokerFenced: it leaves every ISR, leadership moves): a crashed
broker's partitions get a new leader about broker.session.timeout.ms after its last heartbeat.

Guarantee of this module: ``late_fences`` names a broker only when it has been down (crashed, not
restarted) for longer than broker.session.timeout.ms plus ``FENCE_SLACK_MS`` and is still unfenced.
A crashed broker's last contact is at or before its crash, so Kafka fences it by then. The slack
permits a controller that checks sessions periodically instead of at each expiry (the reference's
controller ticks every second); fencing earlier (a broker cut off before it crashed) is never
reported. Only crashes are judged: a broker cut off by the network leaves no event, so its last
contact is unknown to the judge.
"""

from __future__ import annotations

from collections.abc import Iterator

from kconform.model.state import State
from kconform.model.timer_bounds import NEVER

BROKER_SESSION_TIMEOUT_MS = 9_000
"""broker.session.timeout.ms, Kafka's default (KRaftConfigs.BROKER_SESSION_TIMEOUT_MS_DEFAULT)."""

FENCE_SLACK_MS = 1_000
"""How late after a session's expiry a controller may fence: Kafka schedules the check at the
expiry itself; a controller checking every second (the reference) is at most this late."""


def fence_deadlines(s: State) -> Iterator[tuple[int, int]]:
    """(broker, deadline ms) for each crashed, unfenced broker whose crash time is known: by the
    deadline the controller has fenced it."""
    for b, r in enumerate(s.replicas):
        if not r.alive and r.crashed_ms is not None and b not in s.fenced:
            yield b, r.crashed_ms + BROKER_SESSION_TIMEOUT_MS + FENCE_SLACK_MS


def quiet_until(s: State) -> int:
    """The latest time up to which ``late_fences`` is empty on ``s`` with its clock moved there
    (timer_bounds.NEVER: at every time): the earliest fence deadline."""
    return min((deadline for _b, deadline in fence_deadlines(s)), default=NEVER)


def late_fences(s: State) -> tuple[str, ...]:
    """One message per crashed broker still unfenced past its deadline on ``s``'s clock."""
    return tuple(
        f"broker {b} crashed at {s.replicas[b].crashed_ms} ms and is still "
        f"unfenced at {s.now_ms} ms (broker.session.timeout.ms {BROKER_SESSION_TIMEOUT_MS} + {FENCE_SLACK_MS})"
        for b, deadline in fence_deadlines(s)
        if s.now_ms > deadline
    )
