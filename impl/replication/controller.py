"""The KRaft controller of the one partition (QuorumController, ReplicationControlManager,
PartitionChangeBuilder). It never crashes.

Guarantees (kafka-facts §3.5): the leader is always an unfenced ISR member unless elected
uncleanly (only with unclean.leader.election.enable, ISR then forced to [leader]) or there is no
leader; the leader epoch rises iff the leader changes; the partition epoch rises iff the
partition state changes; every change is published to every broker, and the latest state is
re-published every METADATA_REPUBLISH_MS.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

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
from .messages import AlterPartitionRequest, AlterPartitionResponse, MetadataUpdate
from .runtime import Runtime

BROKER_SESSION_TIMEOUT_MS = 9_000
"""broker.session.timeout.ms: a broker not heard from for longer is fenced (KIP-631)."""
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

    def _commit(self, leader: int, isr: tuple[int, ...]) -> bool:
        """Write the new (leader, ISR): leader epoch +1 iff the leader changed, partition epoch +1
        iff anything changed; publish on change. True iff something changed."""
        old = self.record
        isr = tuple(sorted(isr))
        if (leader, isr) == (old.leader, old.isr):
            return False
        leader_epoch = old.leader_epoch + 1 if leader != old.leader else old.leader_epoch
        self.record = PartitionRecord(leader, leader_epoch, isr, old.partition_epoch + 1)
        assert leader == NO_LEADER or leader in isr, f"leader {leader} outside ISR {isr}"
        assert isr, "the ISR never becomes empty"
        return True

    def fence(self, broker: int) -> None:
        """BrokerFenced: leave the ISR unless last member; re-elect if it led (kafka-facts §3.5)."""
        assert broker not in self.fenced, f"broker {broker} is already fenced"
        self.fenced.add(broker)
        record = self.record
        isr = record.isr
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

    def unfence(self, broker: int) -> None:
        """BrokerUnfenced: a leaderless partition elects (clean first, then unclean if enabled)."""
        self.fenced.discard(broker)
        record = self.record
        leader, isr, unclean = record.leader, record.isr, False
        if record.leader == NO_LEADER:
            leader, isr, unclean = self._elect(record.isr)
        changed = self._commit(leader, isr)
        r = self.record
        self.rt.events.emit(
            BrokerUnfenced(CONTROLLER, broker, r.leader, r.leader_epoch, r.isr, r.partition_epoch, unclean)
        )
        if changed:
            self.publish()

    def register(self, broker: int) -> None:
        """BrokerRegistration after a (re)start: a new incarnation is fenced first if the old one
        is still unfenced, then unfenced (its session starts now)."""
        self.last_heartbeat_ms[broker] = self.rt.now_ms
        if broker not in self.fenced:
            self.fence(broker)
        self.unfence(broker)

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
        if msg.src != record.leader or req.leader_epoch != record.leader_epoch:
            error = FENCED_LEADER_EPOCH
        elif req.partition_epoch != record.partition_epoch:
            error = INVALID_UPDATE_VERSION
        elif any(b not in record.isr and b in self.fenced for b in req.isr):
            error = INELIGIBLE_REPLICA
        else:
            error = NONE
            self.record = PartitionRecord(
                record.leader, record.leader_epoch, tuple(sorted(req.isr)), record.partition_epoch + 1
            )
        r = self.record
        self.rt.events.emit(AlterPartitionHandled(CONTROLLER, msg.msg_id, error, r.isr, r.partition_epoch))
        response = AlterPartitionResponse(msg.msg_id, error, r.isr, r.leader_epoch, r.partition_epoch)
        self.rt.network.send(CONTROLLER_NODE, msg.src, response)
        if error == NONE:
            self.publish()

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
