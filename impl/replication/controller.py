"""The KRaft controller of the one partition (QuorumController, ReplicationControlManager,
PartitionChangeBuilder). It never crashes.

Guarantees (kafka-facts §3.5): the leader is always an unfenced ISR member unless elected
uncleanly (only with unclean.leader.election.enable, ISR then forced to [leader]) or there is no
leader; the leader epoch rises iff the leader changes; the partition epoch rises iff the
partition state changes; every change is published to every broker, and the latest state is
re-published every METADATA_REPUBLISH_MS.

With ``eligible.leader.replicas.version=1`` (KIP-966 part 1) the controller also keeps the
eligible leader replicas and the last known leader (``_elr_change``; docs/elr.md): the ISR may then
become empty, and elections go ISR → ELR → last known leader → unclean.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kconform.model import fencing
from kconform.model.state import NO_BROKER_EPOCH
from kconform.traces.events import (
    CONTROLLER,
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_UPDATE_VERSION,
    NO_LEADER,
    NONE,
    AlterPartitionHandled,
    BrokerFenced,
    BrokerUnfenced,
    LeaderMoved,
)

from ..messages import Message
from ..network import CONTROLLER_NODE
from . import mutants
from .messages import AlterPartitionRequest, AlterPartitionResponse, MetadataUpdate
from .runtime import Runtime

BROKER_SESSION_TIMEOUT_MS = fencing.BROKER_SESSION_TIMEOUT_MS
"""broker.session.timeout.ms: a broker not heard from for longer is fenced (KIP-631); the model's
bound (model.fencing) allows this controller's once-a-second check."""
METADATA_REPUBLISH_MS = 1_000
"""How often brokers see the latest partition state again (they keep fetching the metadata log)."""


@dataclass(frozen=True)
class PartitionRecord:
    """The controller's partition state."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int


class Controller:
    """Broker registrations, sessions and the partition record."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        replicas = tuple(rt.config.brokers)
        self.replicas = replicas
        self.record = PartitionRecord(NO_LEADER, -1, replicas, -1)
        self.fenced: set[int] = set(replicas)
        self.last_heartbeat_ms: dict[int, int] = {b: 0 for b in replicas}
        self.elr: tuple[int, ...] = ()
        """Eligible leader replicas (PartitionRecord.eligibleLeaderReplicas, KIP-966); sorted."""
        self.last_known_elr: tuple[int, ...] = ()
        """PartitionRecord.lastKnownElr: the leader before the partition became leaderless."""
        self.broker_epochs: dict[int, int] = {b: 0 for b in replicas}
        """Each broker's current incarnation (KIP-903 broker epoch), checked in AlterPartition."""

    def start_timers(self) -> None:
        self.rt.scheduler.schedule(METADATA_REPUBLISH_MS, CONTROLLER_NODE, "controller-tick", self._on_tick)

    # --------------------------------------------------------------------------- elections

    def _elect(self, isr: tuple[int, ...]) -> tuple[int, tuple[int, ...], bool]:
        """ONLINE election (PartitionChangeBuilder): the first ISR member in assignment order that is
        unfenced; else, with unclean.leader.election.enable (KIP-106), the first unfenced replica
        with ISR forced to [it]; else no leader. Returns (leader, isr, unclean)."""
        for broker in self.replicas:
            if broker in isr and broker not in self.fenced:
                return broker, isr, False
        if self.rt.config.unclean_leader_election:
            for broker in self.replicas:
                if broker not in self.fenced:
                    return broker, (broker,), True
        return NO_LEADER, isr, False

    def _target_elr(self, new_isr: tuple[int, ...], unclean_shutdown: int | None) -> tuple[int, ...]:
        """PartitionChangeBuilder.maybePopulateTargetElr (KAFKA-15581): with at least min ISR
        members in the new ISR there is no ELR; below it, the members that leave the ISR join the
        ELR and stay there, except a broker that shut down uncleanly (KAFKA-15586)."""
        if len(new_isr) >= self.rt.config.effective_min_isr:
            return ()
        kept = (set(self.elr) | set(self.record.isr)) - set(new_isr)
        kept.discard(-2 if unclean_shutdown is None else unclean_shutdown)
        return tuple(sorted(kept))

    def _elect_with_elr(
        self, isr: tuple[int, ...], elr: tuple[int, ...]
    ) -> tuple[int, tuple[int, ...], tuple[int, ...], bool]:
        """electAnyLeader with ELR (KAFKA-15584), in assignment order: an unfenced ISR member;
        with an empty ISR an unfenced ELR member (clean: the ISR becomes [it], it leaves the ELR);
        with ISR and ELR empty the last known leader if unfenced (canElectLastKnownLeader after
        KAFKA-19522; unclean, ISR [it]); else unclean.leader.election.enable's election.
        Returns (leader, ISR, ELR, unclean)."""
        for broker in self.replicas:
            if broker in isr and broker not in self.fenced:
                return broker, isr, elr, False
        if not isr:
            for broker in self.replicas:
                if broker in elr and broker not in self.fenced:
                    return broker, (broker,), tuple(b for b in elr if b != broker), False
            if not elr and len(self.last_known_elr) == 1:
                last = self.last_known_elr[0]
                if last not in self.fenced or self.rt.mutant(mutants.ELECT_FENCED_LAST_KNOWN_LEADER):
                    return last, (last,), (), True
        if self.rt.config.unclean_leader_election:
            for broker in self.replicas:
                if broker not in self.fenced:
                    return broker, (broker,), (), True
        return NO_LEADER, isr, elr, False

    def _elr_change(self, target_isr: tuple[int, ...], unclean_shutdown: int | None = None) -> tuple[bool, bool]:
        """One partition change with ELR (PartitionChangeBuilder.build): the ELR follows the ISR
        change; the leader stays if it is unfenced and in the new ISR, else an election runs;
        LastKnownElr records the old leader when the partition first loses its leader and is
        cleared once it has one (maybeUpdateLastKnownLeader). Returns (changed, unclean)."""
        old = self.record
        elr = self._target_elr(target_isr, unclean_shutdown)
        leader, isr, unclean = old.leader, target_isr, False
        if old.leader == NO_LEADER or old.leader in self.fenced or old.leader not in target_isr:
            leader, isr, elr, unclean = self._elect_with_elr(target_isr, elr)
        last_known = self.last_known_elr
        if leader != NO_LEADER:
            last_known = ()
        elif not last_known and old.leader != NO_LEADER:
            last_known = (old.leader,)
        changed = self._commit(leader, isr, elr, last_known)
        return changed, unclean and changed

    def _commit(
        self,
        leader: int,
        isr: tuple[int, ...],
        elr: tuple[int, ...] | None = None,
        last_known_elr: tuple[int, ...] | None = None,
    ) -> bool:
        """Write the new (leader, ISR) and, with ELR, the new ELR and last known leader: leader
        epoch +1 iff the leader changed, partition epoch +1 iff anything changed. True iff
        something changed (the caller publishes)."""
        old = self.record
        isr = tuple(sorted(isr))
        elr = self.elr if elr is None else elr
        last_known_elr = self.last_known_elr if last_known_elr is None else last_known_elr
        if (leader, isr, elr, last_known_elr) == (old.leader, old.isr, self.elr, self.last_known_elr):
            return False
        leader_epoch = old.leader_epoch + 1 if leader != old.leader else old.leader_epoch
        self.record = PartitionRecord(leader, leader_epoch, isr, old.partition_epoch + 1)
        self.elr, self.last_known_elr = elr, last_known_elr
        assert leader == NO_LEADER or leader in isr, f"leader {leader} outside ISR {isr}"
        assert isr or self.rt.config.elr, "the ISR never becomes empty without ELR (KAFKA-15584)"
        return True

    def fence(self, broker: int) -> None:
        """BrokerFenced: leave the ISR unless last member; re-elect if it led (kafka-facts §3.5)."""
        assert broker not in self.fenced, f"broker {broker} is already fenced"
        self.fenced.add(broker)
        record = self.record
        isr = record.isr
        if self.rt.config.elr:  # KAFKA-15584: the last ISR member leaves too, into the ELR
            changed, unclean = self._elr_change(tuple(b for b in isr if b != broker))
        else:
            if broker in isr and len(isr) > 1:
                isr = tuple(b for b in isr if b != broker)
            leader, unclean = record.leader, False
            if record.leader == broker:
                leader, isr, unclean = self._elect(isr)
            changed = self._commit(leader, isr)
        r = self.record
        self.rt.events.emit(
            BrokerFenced(CONTROLLER, broker, r.leader, r.leader_epoch, r.isr, r.partition_epoch, unclean)
        )
        if changed:
            self.publish()

    def unfence(self, broker: int, unclean_shutdown: bool = False) -> None:
        """BrokerUnfenced: a leaderless partition elects (clean first, then unclean if enabled).

        With ELR, a broker registering after an unclean shutdown (no clean-shutdown broker epoch:
        ReplicationControlManager.handleBrokerUncleanShutdown, KAFKA-15586) first leaves the ISR
        and the ELR, in a change of its own, before it is unfenced."""
        changed = False
        unclean = False
        if self.rt.config.elr:
            if unclean_shutdown and not self.rt.mutant(mutants.UNCLEAN_SHUTDOWN_KEEPS_ELR):
                changed, _ = self._elr_change(tuple(b for b in self.record.isr if b != broker), broker)
            self.fenced.discard(broker)
            changed2, unclean = self._elr_change(self.record.isr)
            changed = changed or changed2
        else:
            self.fenced.discard(broker)
            record = self.record
            leader, isr = record.leader, record.isr
            if record.leader == NO_LEADER:
                leader, isr, unclean = self._elect(record.isr)
            changed = self._commit(leader, isr)
        r = self.record
        self.rt.events.emit(
            BrokerUnfenced(CONTROLLER, broker, r.leader, r.leader_epoch, r.isr, r.partition_epoch, unclean)
        )
        if changed:
            self.publish()

    def register(self, broker: int, unclean_shutdown: bool = False) -> None:
        """BrokerRegistration after a (re)start: a new incarnation is fenced first if the old one
        is still unfenced, then unfenced (its session starts now). ``unclean_shutdown``: the
        broker registers after a crash, without the broker epoch of a clean shutdown (KIP-966)."""
        self.last_heartbeat_ms[broker] = self.rt.now_ms
        if broker not in self.fenced:
            self.fence(broker)
        self.unfence(broker, unclean_shutdown)

    def new_incarnation(self, broker: int) -> None:
        """A restarted broker's next broker epoch (KIP-903). The controller takes it when the
        broker restarts, not when its registration arrives, as model.replication.restart does: a
        leader's fetch state of the previous incarnation no longer counts even before then."""
        self.broker_epochs[broker] += 1

    def move_leader(self, broker: int) -> None:
        """LeaderMoved: PREFERRED-style election of ``broker`` if it is an unfenced ISR member and
        not already leader; otherwise nothing happens."""
        record = self.record
        if broker not in record.isr or broker in self.fenced or broker == record.leader:
            return
        self._commit(broker, record.isr)
        r = self.record
        self.rt.events.emit(LeaderMoved(CONTROLLER, r.leader, r.leader_epoch, r.isr, r.partition_epoch))
        self.publish()

    # ------------------------------------------------------------------------ AlterPartition

    def receive(self, msg: Message) -> None:
        payload = msg.payload
        if not isinstance(payload, AlterPartitionRequest):
            raise AssertionError(f"the controller cannot handle {type(payload).__name__}")
        self._on_alter_partition(msg, payload)

    def _on_alter_partition(self, msg: Message, req: AlterPartitionRequest) -> None:
        """AlterPartitionHandled (KIP-497; ReplicationControlManager.alterPartition).

        Stale leader epoch or not the leader → FENCED_LEADER_EPOCH; stale partition epoch →
        INVALID_UPDATE_VERSION; a fenced member added → INELIGIBLE_REPLICA; else ISR := proposal and
        partition epoch +1, leader epoch unchanged (KAFKA-15021).
        """
        record = self.record
        error = self.alter_partition_error(msg.src, req)
        if error == NONE and self.rt.config.elr:
            self._elr_change(tuple(sorted(req.isr)))
        elif error == NONE:
            self.record = PartitionRecord(
                record.leader, record.leader_epoch, tuple(sorted(req.isr)), record.partition_epoch + 1
            )
        r = self.record
        self.rt.events.emit(AlterPartitionHandled(CONTROLLER, msg.msg_id, error, r.isr, r.partition_epoch))
        response = AlterPartitionResponse(msg.msg_id, error, r.isr, r.leader_epoch, r.partition_epoch)
        self.rt.network.send(CONTROLLER_NODE, msg.src, response)
        if error == NONE:
            self.publish()

    def alter_partition_error(self, sender: int, req: AlterPartitionRequest) -> int:
        """The answer ReplicationControlManager.alterPartition gives ``req`` from ``sender``
        without applying it: NONE if it may be applied."""
        record = self.record
        if sender != record.leader or req.leader_epoch != record.leader_epoch:
            return FENCED_LEADER_EPOCH
        if req.partition_epoch != record.partition_epoch:
            return INVALID_UPDATE_VERSION
        if any(b not in record.isr and b in self.fenced for b in req.isr):
            return INELIGIBLE_REPLICA
        if (
            self.rt.config.elr
            and not self.rt.mutant(mutants.NO_BROKER_EPOCH_CHECK)
            and any(
                e != NO_BROKER_EPOCH and self.broker_epochs[b] != e
                for b, e in zip(req.isr, req.broker_epochs, strict=True)
            )
        ):
            # KIP-903 (KAFKA-14139): fetch state of an older incarnation; -1 (a member the leader has
            # not heard from) is not checked (ReplicationControlManager.ineligibleReplicasForIsr)
            return INELIGIBLE_REPLICA
        return NONE

    # -------------------------------------------------------------------- sessions, metadata

    def heartbeats(self, brokers: Iterable[int]) -> None:
        """Each of ``brokers`` is alive and reachable now (heartbeats are not simulated as messages;
        the cluster calls this before every operation and at every clock move)."""
        now = self.rt.now_ms
        beats = self.last_heartbeat_ms
        for broker in brokers:
            beats[broker] = now

    def expire_sessions(self) -> None:
        """Fence every unfenced broker not heard from for > BROKER_SESSION_TIMEOUT_MS."""
        now = self.rt.now_ms
        for broker in self.replicas:
            if broker not in self.fenced and now - self.last_heartbeat_ms[broker] > BROKER_SESSION_TIMEOUT_MS:
                self.fence(broker)

    def publish(self) -> None:
        """Send the latest partition state to every broker."""
        r = self.record
        update = MetadataUpdate(r.leader, r.leader_epoch, r.isr, r.partition_epoch)
        for broker in self.replicas:
            self.rt.network.send(CONTROLLER_NODE, broker, update)

    def _on_tick(self) -> None:
        self.expire_sessions()
        self.publish()
        self.rt.scheduler.schedule(METADATA_REPUBLISH_MS, CONTROLLER_NODE, "controller-tick", self._on_tick)
