"""The replication reference cluster: brokers, controller, clients, network, clock and disks wired
together over the shared simulation core (impl.simulation), driven one operation at a time
(``ReferenceCluster``, the ``Adapter`` of kconform.conformance.adapter for ``ReplicationConfig``).

Guarantees: those of impl.simulation (one operation to completion, deterministic, bounded); every
running, reachable broker's session is fresh before each operation and at each new clock time; a
broker restarted while cut off registers when the network heals.
"""

from __future__ import annotations

from typing import Any, ClassVar

from kconform.model.config import ReplicationConfig
from kconform.traces.events import Event
from kconform.traces.operations import (
    Consume,
    ConsumeReplica,
    ConsumeWait,
    Crash,
    DeleteRecordsAt,
    Heal,
    Isolate,
    MoveLeader,
    Operation,
    Produce,
    Restart,
    Retention,
    RogueFetch,
)

from ..clock import Scheduler
from ..network import CONSUMER_NODE, CONTROLLER_NODE, PRODUCER_NODE, Network
from ..runtime import EventLog
from ..simulation import Node, Simulation, SimulationAdapter
from .broker import Broker
from .clients import Consumer, Producer
from .controller import Controller
from .runtime import Runtime


class SimulatedCluster(Simulation[Runtime]):
    """One running replication cluster: the world a ReferenceCluster adapter drives."""

    label = "the reference cluster"

    def __init__(self, config: ReplicationConfig, mutants: frozenset[str]) -> None:
        super().__init__(Runtime(config, mutants, Scheduler(), Network(), EventLog()))
        self.rt = self.world
        self.controller = Controller(self.rt)
        self.brokers = [Broker(b, self.rt) for b in config.brokers]
        self.producer = Producer(self.rt, self.controller)
        self.consumer = Consumer(self.rt, self.controller)
        self._awaiting_registration: set[int] = set()
        """Brokers restarted while isolated: they register when the network heals."""
        self._reachable: list[int] | None = None
        """The running, reachable brokers (``_heartbeats``), None when to be looked at again: only a
        crash, a restart, an isolation or a heal changes them, never a delivery or a timer."""

    # ------------------------------------------------------------------------------ bring-up

    def boot(self) -> list[Event]:
        """Register brokers 0..N-1 in order (the first elects broker 0), then deliver the metadata
        queued by then; clients learn the leader."""
        self.controller.start_timers()
        for broker in self.brokers:
            broker.start_timers()
        self.producer.start_timers()
        self.consumer.start_timers()
        for broker in self.brokers:
            self._register(broker)
        self.producer.refresh_metadata()
        self.consumer.refresh_metadata()
        queued = [m.msg_id for m in self.rt.network.queue]
        for msg_id in queued:
            index = next((i for i, m in enumerate(self.rt.network.queue) if m.msg_id == msg_id), None)
            if index is not None:
                msg = self.rt.network.take(index)
                assert msg is not None
                self.deliver(msg)
        return self.rt.events.drain()

    def _register(self, broker: Broker, after_crash: bool = False) -> None:
        """Register ``broker``; after a crash it has no clean-shutdown broker epoch (KIP-966)."""
        self.controller.register(broker.broker_id, unclean_shutdown=after_crash)
        broker.registered = True

    # ---------------------------------------------------------------------------- operations

    def before_operation(self) -> None:
        self._reachable = None
        self._heartbeats()

    def on_clock_moved(self) -> None:
        self._heartbeats()

    def apply_slice(self, op: Operation) -> bool:
        self._reachable = None  # a crash, a restart, an isolation or a heal may change them
        return self._apply_slice(op)

    def _apply_slice(self, op: Operation) -> bool:
        if isinstance(op, Produce):
            self.producer.produce(op.rid, op.acks)
        elif isinstance(op, Consume):
            self.consumer.consume(op.offset)
        elif isinstance(op, RogueFetch):
            if 0 <= op.broker < self.rt.config.replicas:
                self.consumer.rogue_fetch(op.broker, op.offset, op.epoch_delta)
        elif isinstance(op, ConsumeReplica):
            if self.rt.config.follower_fetching:
                self.consumer.consume_replica()
        elif isinstance(op, ConsumeWait):
            self.consumer.consume_wait(op.offset, op.min_bytes, op.max_wait_ms)
        elif isinstance(op, Crash):
            self._crash(op.broker)
        elif isinstance(op, Restart):
            self._restart(op.broker)
        elif isinstance(op, Isolate):
            if self._is_broker(op.broker):
                self.rt.network.isolate(op.broker)
        elif isinstance(op, Heal):
            self._heal()
        elif isinstance(op, MoveLeader):
            if self._is_broker(op.broker):
                self.controller.move_leader(op.broker)
        elif isinstance(op, DeleteRecordsAt | Retention):
            if self._is_broker(op.broker) and self.brokers[op.broker].alive:
                broker = self.brokers[op.broker]
                (broker.delete_records if isinstance(op, DeleteRecordsAt) else broker.retention)(op.offset)
        else:
            return False
        return True

    def snapshot(self) -> dict[int, dict[str, Any]]:
        return {b.broker_id: _broker_view(b) for b in self.brokers}

    def node(self, address: int) -> Node | None:
        if address == CONTROLLER_NODE:
            return self.controller
        if address == PRODUCER_NODE:
            return self.producer
        if address == CONSUMER_NODE:
            return self.consumer
        return self.brokers[address]

    def _is_broker(self, broker: int) -> bool:
        return 0 <= broker < len(self.brokers)

    def _crash(self, broker_id: int) -> None:
        """Crash a live broker: its timers stop, its in-flight messages are lost."""
        if not self._is_broker(broker_id) or not self.brokers[broker_id].alive:
            return
        self.brokers[broker_id].crash()
        self.rt.scheduler.cancel_owner(broker_id)
        self.rt.network.set_down(broker_id)
        self._awaiting_registration.discard(broker_id)

    def _restart(self, broker_id: int) -> None:
        """Restart a crashed broker; it registers now if reachable, else when the network heals."""
        if not self._is_broker(broker_id) or self.brokers[broker_id].alive:
            return
        broker = self.brokers[broker_id]
        self.rt.network.set_up(broker_id)
        broker.restart()
        if self.rt.config.elr:
            self.controller.new_incarnation(broker_id)
        if self.rt.network.is_isolated(broker_id):
            self._awaiting_registration.add(broker_id)
        else:
            self._register(broker, after_crash=True)

    def _heal(self) -> None:
        """Remove every cut; brokers that restarted while cut off register, and brokers fenced while
        cut off but still running resume heartbeats and are unfenced."""
        self.rt.network.heal()
        self._reachable = None
        self._heartbeats()
        for broker in self.brokers:
            if not broker.alive:
                continue
            if broker.broker_id in self._awaiting_registration:
                self._awaiting_registration.discard(broker.broker_id)
                self._register(broker, after_crash=True)
            elif broker.registered and broker.broker_id in self.controller.fenced:
                self.controller.unfence(broker.broker_id)

    def _heartbeats(self) -> None:
        """Every running, reachable broker's session is fresh at the current time (runs before every
        operation and at every clock move)."""
        reachable = self._reachable
        if reachable is None:
            is_isolated = self.rt.network.is_isolated
            reachable = [b.broker_id for b in self.brokers if b.alive and not is_isolated(b.broker_id)]
            self._reachable = reachable
        self.controller.heartbeats(reachable)


class ReferenceCluster(SimulationAdapter[SimulatedCluster]):
    """The replication reference implementation behind the Adapter protocol (name ``"reference"``)."""

    name = "reference"
    label = "the replication reference cluster"
    mutant_slice: ClassVar[str | None] = None
    config_type = ReplicationConfig

    def start(self, config: ReplicationConfig, mutants: frozenset[str]) -> SimulatedCluster:
        return SimulatedCluster(config, mutants)

    @property
    def cluster(self) -> SimulatedCluster:
        """The running cluster (for white-box tests); reset() must have been called."""
        return self.running


def _broker_view(b: Broker) -> dict[str, Any]:
    """One broker's observable state, for replay's side-by-side view."""
    view = b.partition.view
    return {
        "running": b.alive,
        "leader": view.leader,
        "leader_epoch": view.leader_epoch,
        "leo": b.log.leo,
        "hw": b.log.hw,
        "log_start": b.log.log_start,
        "isr": list(view.isr),
    }
