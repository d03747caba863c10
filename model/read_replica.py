"""Follower fetching (KIP-392, Kafka 2.4): the consumer that reads from a preferred read replica.

What a consumer may observe when it fetches from a follower, as pure functions over the
replication slice's ``State``. Sources, read at Kafka trunk ``1eb7644`` (2024-10):
``ReplicaManager.findPreferredReadReplica`` and ``readFromLocalLog``, ``Partition.fetchRecords`` /
``readRecords``, ``FetchParams.fetchOnlyLeader``, ``RackAwareReplicaSelector``, and on the client
``AbstractFetch.selectReadReplica``, ``FetchCollector.updatePartitionState`` /
``handleInitializeErrors``, ``FetchUtils.requestMetadataUpdate`` and
``SubscriptionState.TopicPartitionState.preferredReadReplica``.

Guarantees (the reader's, ``model.read_replica_invariants``):

- a follower serves a consumer what a leader serves, with its own HW as the bound
  (FetchIsolation.HIGH_WATERMARK on the local log): a fetch offset above the follower's HW but
  within its log is answered with no records and no error, so the consumer simply asks again; a
  follower's HW is min(leader's HW in its last answer, its LEO), so it never passes what a leader
  committed;
- OFFSET_OUT_OF_RANGE from a preferred read replica only clears the preferred replica (the next
  fetch goes to the leader); only the leader's OFFSET_OUT_OF_RANGE resets the position (KAFKA-8365);
- every other partition error clears the preferred replica too (requestMetadataUpdate), and the
  preferred replica expires ``metadata.max.age.ms`` after it was set.

Modelled choices: every broker is its own rack and the consumer's ``client.rack`` is the rack of
broker ``client_rack`` (RackAwareReplicaSelector: the leader when it is in the consumer's rack or
no candidate is, else the most caught-up candidate of the rack); a candidate is an ISR follower
(KAFKA-14372, 3.4) whose LEO as the leader last saw it
reaches the fetch offset. The followers' log start offsets are not tracked by the leader in this
model (RemoteReplica has none), so the log-start half of the candidate check is left out: in the
slice a follower's log start only moves with the leader's. auto.offset.reset is ``earliest``: a
reset goes to the leader's log start.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model import log_start as ls
from kconform.model import purgatory
from kconform.model.config import ReplicationConfig
from kconform.model.errors import NONE, NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE, UNKNOWN_LEADER_EPOCH
from kconform.model.evolve import evolve
from kconform.model.not_enabled import NotEnabled
from kconform.model.reader import NO_REPLICA, Delivery, Reader, ReaderGhost, Reset
from kconform.model.records import Entry
from kconform.model.state import State

__all__ = ["NO_REPLICA", "Delivery", "Reader", "ReaderGhost", "ReplicaFetchOutcome"]


@dataclass(frozen=True)
class ReplicaFetchOutcome:
    """The broker's answer to a follower-fetching consumer (FetchResponse.PartitionData)."""

    error: int
    entries: tuple[Entry, ...]
    hw: int
    preferred: int


def select_read_replica(s: State, leader: int, fetch_offset: int, client_rack: int) -> int:
    """The preferred read replica leader ``leader`` names for a consumer in ``client_rack`` at
    ``fetch_offset``, or NO_REPLICA (ReplicaManager.findPreferredReadReplica with
    RackAwareReplicaSelector; the leader itself is never sent out).

    Candidates: ISR followers (KAFKA-14372) whose LEO as the leader knows it is at least
    ``fetch_offset`` (KAFKA-15390's exclusion of fenced brokers reads the leader's metadata cache
    of other brokers, which the slice does not model; a fenced broker leaves the ISR anyway);
    the consumer's rack holds at most one broker here, so the most caught-up candidate of the rack is that broker."""
    r = s.replicas[leader]
    if client_rack == leader or not 0 <= client_rack < len(s.replicas):
        return NO_REPLICA
    if client_rack not in r.isr:
        return NO_REPLICA
    if r.remotes[client_rack].leo < fetch_offset:
        return NO_REPLICA
    return client_rack


def replica_fetch(s: State, node: int, offset: int, current_leader_epoch: int, client_rack: int) -> ReplicaFetchOutcome:
    """A read_uncommitted consumer Fetch carrying client metadata (Fetch v11+, ``rack_id``) at
    broker ``node``, leader or follower (FetchParams.fetchOnlyLeader is false for it).

    KIP-320 epoch check against the broker's own leader epoch; a broker that does not know the
    partition yet (not registered) answers NOT_LEADER_OR_FOLLOWER. A leader first asks the replica
    selector: when it names a follower, the answer carries no records, the leader's HW and the
    preferred replica (readFromLocalLog skips the read, KAFKA-13767). Otherwise an offset outside
    [log start, LEO] is OFFSET_OUT_OF_RANGE, else the records from ``offset`` up to the broker's own
    HW (none when the offset is at or above it)."""
    r = s.replica(node)
    if not r.alive:
        raise NotEnabled(f"broker {node} is not running")
    error = purgatory.fence_error(r, current_leader_epoch)
    if error == NONE and (not r.registered or r.leader_epoch < 0):
        error = NOT_LEADER_OR_FOLLOWER
    if error != NONE:
        return ReplicaFetchOutcome(error, (), -1, NO_REPLICA)
    if s.presumes_leadership(node):
        preferred = select_read_replica(s, node, offset, client_rack)
        if preferred != NO_REPLICA:
            return ReplicaFetchOutcome(NONE, (), r.hw, preferred)
    if not ls.in_range(offset, r.log_start, r.leo):
        return ReplicaFetchOutcome(OFFSET_OUT_OF_RANGE, (), r.hw, NO_REPLICA)
    return ReplicaFetchOutcome(NONE, r.log[offset : r.hw], r.hw, NO_REPLICA)


def read_replica(reader: Reader, now_ms: int, leader: int) -> tuple[Reader, int, bool]:
    """Where the consumer sends its next Fetch (AbstractFetch.selectReadReplica): its preferred
    read replica while set and not expired, else the leader its metadata names; the last value
    says whether it is the preferred replica. An expired preferred replica is cleared on the way
    (TopicPartitionState.preferredReadReplica(timeMs))."""
    if reader.preferred != NO_REPLICA:
        if now_ms <= reader.expires_ms:
            return reader, reader.preferred, True
        reader = evolve(reader, preferred=NO_REPLICA, expires_ms=-1)
    return reader, leader, False


def apply_answer(
    reader: Reader,
    ghost: ReaderGhost,
    now_ms: int,
    metadata_max_age_ms: int,
    broker: int,
    from_preferred: bool,
    fetch_offset: int,
    out: ReplicaFetchOutcome,
    reset_to: int,
) -> tuple[Reader, ReaderGhost]:
    """The consumer handles ``out``, the answer of ``broker`` to its Fetch at ``fetch_offset``
    (FetchCollector). An answer for another position than the current one is discarded. Records
    are delivered and move the position past them. A preferred replica in the answer is kept,
    expiring ``metadata_max_age_ms`` from now (a repeat of the same replica keeps its expiry:
    updatePreferredReadReplica). OFFSET_OUT_OF_RANGE clears a preferred replica if one is set,
    else resets the position to ``reset_to`` (auto.offset.reset=earliest: the leader's log start);
    UNKNOWN_LEADER_EPOCH is only logged; every other error requests a metadata update, which
    clears the preferred replica (FetchUtils.requestMetadataUpdate)."""
    if fetch_offset != reader.position:
        return reader, ghost
    if out.error == NONE:
        if out.preferred != NO_REPLICA and out.preferred != reader.preferred:
            reader = evolve(reader, preferred=out.preferred, expires_ms=now_ms + metadata_max_age_ms)
        if out.entries:
            new = tuple(Delivery(e, broker, from_preferred, out.hw) for e in out.entries)
            reader = evolve(reader, position=out.entries[-1].offset + 1)
            ghost = evolve(ghost, deliveries=ghost.deliveries + new)
        return reader, ghost
    if out.error == OFFSET_OUT_OF_RANGE and reader.preferred == NO_REPLICA:
        reset = Reset(broker, from_preferred, reader.preferred != NO_REPLICA, reset_to, len(ghost.deliveries))
        return evolve(reader, position=reset_to), evolve(ghost, resets=(*ghost.resets, reset))
    if out.error == UNKNOWN_LEADER_EPOCH:
        return reader, ghost
    return evolve(reader, preferred=NO_REPLICA, expires_ms=-1), ghost


def handle_fetch(
    s: State, cfg: ReplicationConfig, node: int, offset: int, current_leader_epoch: int
) -> tuple[State, ReplicaFetchOutcome]:
    """Broker ``node`` answers the follower-fetching consumer (``replica_fetch``); the records it
    returns join ``Ghost.consumed`` with the HW that bounded them, as a leader's do."""
    out = replica_fetch(s, node, offset, current_leader_epoch, cfg.client_rack)
    if not out.entries:
        return s, out
    consumed = s.ghost.consumed + tuple((e, out.hw) for e in out.entries)
    return evolve(s, ghost=evolve(s.ghost, consumed=consumed)), out


def send_fetch(s: State, broker: int, from_preferred: bool, fetch_offset: int) -> State:
    """The follower-fetching consumer sends a Fetch at ``fetch_offset`` to ``broker``: to its
    preferred read replica while one is set and unexpired, else (``from_preferred`` false) to the
    broker its metadata names as leader, which the model does not track. NotEnabled when the
    request contradicts the reader's state."""
    reader, target, preferred = read_replica(s.reader, s.now_ms, broker)
    if fetch_offset != reader.position:
        raise NotEnabled(f"the consumer fetches offset {fetch_offset} at position {reader.position}")
    if preferred != from_preferred or target != broker:
        want = f"preferred read replica {target}" if preferred else "the leader"
        raise NotEnabled(f"the consumer sent its Fetch to broker {broker} instead of {want}")
    return evolve(s, reader=reader)


def apply_fetch(
    s: State,
    cfg: ReplicationConfig,
    broker: int,
    from_preferred: bool,
    fetch_offset: int,
    out: ReplicaFetchOutcome,
    reset_to: int,
) -> State:
    """The follower-fetching consumer handles broker ``broker``'s answer (``apply_answer``)."""
    reader, ghost = apply_answer(
        s.reader, s.ghost.reader, s.now_ms, cfg.metadata_max_age_ms, broker, from_preferred, fetch_offset, out, reset_to
    )
    return evolve(s, reader=reader, ghost=evolve(s.ghost, reader=ghost))
