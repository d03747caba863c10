"""Eligible Leader Replicas (KIP-966 part 1, Kafka 4.0+): the controller's rules, as pure functions.

With ``eligible.leader.replicas.version=1`` the KRaft controller keeps, next to the ISR, the
replicas that left the ISR while it was below min.insync.replicas. The HW cannot advance while the
ISR is below min ISR (KAFKA-15583, model.replication.leader_hw_target), so such a replica holds
every committed record and is as safe a leader as an ISR member. Rules, from
PartitionChangeBuilder (metadata/src/main/java/org/apache/kafka/controller, KAFKA-15581
"Introduce ELR", KAFKA-15584 "Leader election with ELR") and ReplicationControlManager
(KAFKA-15586 clean shutdown detection):

- ``target_elr`` (maybePopulateTargetElr): when the new ISR has at least min ISR members the ELR
  and LastKnownElr are cleared; otherwise ELR = (old ELR plus old ISR) minus the new ISR minus the
  replicas with an unclean shutdown.
- The ISR may shrink to empty (KAFKA-15584): a fenced last member leaves it (into the ELR).
- ``elect`` (electAnyLeader, isValidNewLeader): an unfenced ISR member; if the ISR is empty, an
  unfenced ELR member (ISR becomes [it], it leaves the ELR: a clean election); else the last known
  leader if ISR and ELR are empty and it is unfenced (canElectLastKnownLeader after KAFKA-19522; an
  unclean election: ISR [it], ELR cleared); else unclean.leader.election.enable's election.
- ``last_known_elr`` (maybeUpdateLastKnownLeader): the old leader, recorded when the partition
  first becomes leaderless; cleared once it has a leader.
- An unclean shutdown (a broker re-registering without its previous broker epoch, i.e. after a
  crash; handleBrokerUncleanShutdown) removes the broker from the ISR and the ELR.
"""

from __future__ import annotations

from kconform.model.config import ReplicationConfig

NO_LEADER = -1


def target_elr(
    cfg: ReplicationConfig,
    old_isr: tuple[int, ...],
    new_isr: tuple[int, ...],
    elr: tuple[int, ...],
    unclean: frozenset[int] = frozenset(),
) -> tuple[int, ...]:
    """The ELR after the ISR goes from ``old_isr`` to ``new_isr`` (maybePopulateTargetElr):
    empty when ``new_isr`` has min ISR members, else the old ELR and old ISR members outside
    ``new_isr`` that had no unclean shutdown; sorted."""
    if len(new_isr) >= cfg.effective_min_isr:
        return ()
    return tuple(sorted(b for b in set(elr) | set(old_isr) if b not in new_isr and b not in unclean))


def elect(
    cfg: ReplicationConfig,
    isr: tuple[int, ...],
    elr: tuple[int, ...],
    last_known_elr: tuple[int, ...],
    fenced: frozenset[int],
    fenced_last_known: bool = False,
) -> tuple[int, tuple[int, ...], tuple[int, ...], bool]:
    """ONLINE election with ELR: (leader, ISR, ELR, unclean). The first unfenced ISR member in
    assignment order; with an empty ISR the first unfenced ELR member (ISR [it], it leaves the
    ELR); with ISR and ELR empty the unfenced last known leader (unclean: ISR [it]); else, with
    unclean.leader.election.enable, the first unfenced replica (ISR [it], ELR cleared).
    ``fenced_last_known`` elects the last known leader even when fenced: the KAFKA-19522 bug
    (canElectLastKnownLeader returned true for a fenced broker), for tests of the invariants."""
    for b in cfg.brokers:
        if b in isr and b not in fenced:
            return b, isr, elr, False
    if not isr:
        for b in cfg.brokers:
            if b in elr and b not in fenced:
                return b, (b,), tuple(m for m in elr if m != b), False
        if not elr and len(last_known_elr) == 1 and (fenced_last_known or last_known_elr[0] not in fenced):
            return last_known_elr[0], (last_known_elr[0],), (), True
    if cfg.unclean_leader_election:
        for b in cfg.brokers:
            if b not in fenced:
                return b, (b,), (), True
    return NO_LEADER, isr, elr, False


def last_known_elr(old_leader: int, new_leader: int, current: tuple[int, ...]) -> tuple[int, ...]:
    """LastKnownElr after a change (maybeUpdateLastKnownLeader, as simplified in Kafka PR 20629):
    the old leader when the partition becomes leaderless and nothing is recorded yet; cleared once
    the partition has a leader; else unchanged."""
    if new_leader == NO_LEADER and not current and old_leader != NO_LEADER:
        return (old_leader,)
    if new_leader != NO_LEADER:
        return ()
    return current


__all__ = ["NO_LEADER", "elect", "last_known_elr", "target_elr"]
