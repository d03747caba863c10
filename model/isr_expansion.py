"""The leader's ISR expansion: which follower Fetch obliges its leader to propose the follower back in.

Kafka's leader checks at every successful follower read, in the same call: Partition.fetchRecords →
updateFollowerFetchState → ``maybeExpandIsr(followerReplica)``, which sends AlterPartition with the
follower added when ``canAddReplicaToIsr`` (no AlterPartition in flight, KIP-497; the follower not
in the ISR; ``isReplicaIsrEligible``: not fenced and not shutting down in the leader's metadata
cache, KIP-841, and its fetch's broker epoch the registered one, KIP-903) and ``needsExpandIsr``
(``isFollowerInSync``: its LEO at least the leader's HW and, since KIP-320 / KAFKA-7128, at least
the start offset of the leader's epoch).

Guarantee of this module: ``late`` names a (leader, follower) pair only when Kafka's leader would
have proposed the follower in at a Fetch handled at the previous instant and the leader, still
leading the same epoch with nothing in flight and the follower still out of its ISR, proposed no
ISR with it in that instant. The
leader's metadata cache is judged by what the judge saw it receive: the follower must have been
unfenced (its registration, which precedes the partition records published with it in the
metadata log) before a partition record the leader received from the controller
(``Replica.metadata_seen`` ≥ ``Replica.unfenced_at``), so a leader whose cache may still hold the
follower fenced is never held to it. Time moving on ends every obligation: met, lapsed or late.
"""

from __future__ import annotations

from kconform.model import epochs
from kconform.model.config import ReplicationConfig
from kconform.model.evolve import evolve
from kconform.model.state import State


def may_expand(s: State, cfg: ReplicationConfig, leader: int, follower: int) -> bool:
    """Partition.isFollowerInSync: LEO ≥ leader HW and, since KIP-320 (KAFKA-7128), ≥ the start
    offset of the leader's epoch so that no committed data of an earlier epoch can be missing."""
    r = s.replica(leader)
    leo = r.remotes[follower].leo
    if leo < r.hw:
        return False
    if cfg.protocol.fenced:
        return leo >= epochs.start_offset_of(r.epoch_cache, r.leader_epoch)
    return True


def _still_owed(s: State, leader: int, follower: int, leader_epoch: int) -> bool:
    """canAddReplicaToIsr as far as it can change without a Fetch: the leader still leads the same
    epoch, nothing in flight, the follower out of its ISR and unfenced."""
    r = s.replicas[leader]
    return (
        s.presumes_leadership(leader)
        and r.leader_epoch == leader_epoch
        and r.pending_isr is None
        and follower not in r.isr
        and follower not in s.fenced
    )


def after_fetch(s: State, cfg: ReplicationConfig, leader: int, follower: int) -> State:
    """A successful read of ``follower``'s Fetch at ``leader`` (its fetch state already updated):
    the expansion it makes owed, recorded until time moves on (``Ghost.owed_expansions``)."""
    r = s.replicas[leader]
    eligible = s.replicas[follower].unfenced_at <= r.metadata_seen
    if not eligible or not _still_owed(s, leader, follower, r.leader_epoch) or not may_expand(s, cfg, leader, follower):
        return s
    owed = (leader, follower, r.leader_epoch)
    if owed in s.ghost.owed_expansions:
        return s
    return evolve(s, ghost=evolve(s.ghost, owed_expansions=(*s.ghost.owed_expansions, owed)))


def proposed(s: State, leader: int, isr: tuple[int, ...]) -> State:
    """``leader`` proposed ``isr``: the expansions it owed to its members are met (a later answer
    or partition record that returns the leader to an ISR without them does not owe them again)."""
    owed = s.ghost.owed_expansions
    kept = tuple(o for o in owed if o[0] != leader or o[1] not in isr)
    return s if kept == owed else evolve(s, ghost=evolve(s.ghost, owed_expansions=kept))


def late(s: State) -> tuple[str, ...]:
    """One message per expansion still owed when time moves on (call before the clock moves)."""
    return tuple(
        f"leader {leader} (epoch {epoch}) did not propose follower {follower} into its ISR "
        f"{list(s.replicas[leader].isr)} at {s.now_ms} ms after a Fetch that found it in sync (maybeExpandIsr)"
        for leader, follower, epoch in s.ghost.owed_expansions
        if _still_owed(s, leader, follower, epoch)
    )


def unfenced(pre: State, post: State, cfg: ReplicationConfig, broker: int) -> State:
    """``broker`` was unfenced between ``pre`` and ``post``: the partition records published from
    then on follow its registration in the metadata log. A registration after an unclean shutdown
    (KIP-966, KAFKA-15586) first publishes the broker's removal, so only later records count."""
    first = (post if cfg.elr and broker in pre.unclean_shutdowns else pre).controller.partition_epoch + 1
    return post.with_replica(broker, evolve(post.replicas[broker], unfenced_at=first))


def saw_metadata(s: State, node: int, partition_epoch: int) -> State:
    """``node`` received the controller's partition record ``partition_epoch`` (applied or not)."""
    r = s.replicas[node]
    if partition_epoch <= r.metadata_seen:
        return s
    return s.with_replica(node, evolve(r, metadata_seen=partition_epoch))
