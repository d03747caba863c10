"""The follower-fetching consumer's state and ghost (KIP-392; model.read_replica holds its rules).

Kept apart from model.read_replica so that model.state can carry them without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from kconform.model.records import Entry

NO_REPLICA = -1
"""No preferred read replica (FetchResponse preferred_read_replica = -1)."""


@dataclass(frozen=True)
class Reader:
    """The follower-fetching consumer's view of its one partition (SubscriptionState's
    TopicPartitionState): its position, its preferred read replica and when that expires."""

    position: int = 0
    preferred: int = NO_REPLICA
    expires_ms: int = -1


@dataclass(frozen=True)
class Delivery:
    """One record handed to the application: from broker ``broker`` (a preferred read replica iff
    ``from_follower``), with that broker's HW at the read."""

    entry: Entry
    broker: int
    from_follower: bool
    served_hw: int


class Reset(NamedTuple):
    """One position reset: the broker whose OFFSET_OUT_OF_RANGE caused it, whether the Fetch went
    to that broker as a preferred read replica, whether a preferred read replica was still set
    when the answer arrived (FetchCollector.handleInitializeErrors asks clearPreferredReadReplica
    first and resets only when it cleared nothing), the position set, and how many deliveries
    preceded it."""

    broker: int
    from_follower: bool
    replica_set: bool
    to: int
    after: int


@dataclass(frozen=True)
class ReaderGhost:
    """What only the reader's invariants read: every delivery and every position reset."""

    deliveries: tuple[Delivery, ...] = ()
    resets: tuple[Reset, ...] = ()
