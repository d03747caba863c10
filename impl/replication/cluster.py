"""The reference cluster: brokers, controller, clients, network, clock and disks wired together,
driven one operation at a time (the ``Adapter`` of kconform.conformance.adapter).

Guarantees: ``apply`` runs one operation to completion and returns the events its handlers
emitted, in order; the same config, mutants and operations give the same events (no wall clock,
no unordered iteration; the seed is accepted for the adapter contract but no choice here is
random); every loop is bounded (MAX_TIMER_FIRINGS, MAX_SETTLE_DELIVERIES).
"""

from __future__ import annotations

from typing import Any

from kconform.model.config import ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.traces.events import CONTROLLER, ClockAdvanced, Event
from kconform.traces.operations import (
    Advance,
    Consume,
    Crash,
    Deliver,
    DeliverTo,
    Drop,
    Duplicate,
    Heal,
    Isolate,
    ModelAction,
    MoveLeader,
    Operation,
    Produce,
    Restart,
    Run,
    Settle,
)

from .broker import Broker
from .clients import Consumer, Producer
from .clock import Scheduler
from .controller import Controller
from .messages import Message
from .mutants import check_mutants
from .network import CONSUMER_NODE, CONTROLLER_NODE, PRODUCER_NODE, Network
from .runtime import EventLog, Runtime

MAX_TIMER_FIRINGS = 200_000
"""Upper bound on timers fired by one Advance (a larger Advance is refused, not truncated)."""
MAX_SETTLE_DELIVERIES = 100_000
"""Upper bound on deliveries by one Settle, whatever ``max_messages`` says."""
RUN_SETTLE_DELIVERIES = 1_000
"""Deliveries per settle inside Run: enough for any quiet cluster, bounded for a chatty one."""
RUN_STEP_MS = 100
"""Clock step of Run: below every timer period of the cluster (fetch backoff 500 ms)."""


class SimulatedCluster:
    """One running cluster: the world a ReferenceCluster adapter drives."""

    def __init__(self, config: ReplicationConfig, mutants: frozenset[str]) -> None:
        self.rt = Runtime(config, mutants, Scheduler(), Network(), EventLog())
        self.controller = Controller(self.rt)
        self.brokers = [Broker(b, self.rt) for b in config.brokers]
        self.producer = Producer(self.rt, self.controller)
        self.consumer = Consumer(self.rt, self.controller)
        self._awaiting_registration: set[int] = set()
        """Brokers restarted while isolated: they register when the network heals."""

    # ------------------------------------------------------------------------------ bring-up

    def bring_up(self) -> list[Event]:
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
                self._deliver(msg)
        return self.rt.events.drain()

    def _register(self, broker: Broker) -> None:
        self.controller.register(broker.broker_id)
        broker.registered = True

    # ---------------------------------------------------------------------------- operations

    def apply(self, op: Operation) -> list[Event]:
        """Run ``op`` to completion; return its events. A model-search action (ModelAction) is
        refused with ValueError before anything runs: the cluster cannot be driven by it."""
        if isinstance(op, ModelAction):
            raise ValueError(
                f"the reference cluster cannot be driven by model actions ({op.label}): a file of the model "
                "search (implementation 'model') is judged model-only"
            )
        self._heartbeats()
        if isinstance(op, Produce):
            self.producer.produce(op.rid, op.acks)
        elif isinstance(op, Consume):
            self.consumer.consume(op.offset)
        elif isinstance(op, Crash):
            self._crash(op.broker)
        elif isinstance(op, Restart):
            self._restart(op.broker)
        elif isinstance(op, Isolate):
            if self._is_broker(op.broker):
                self.rt.network.isolate(op.broker)
        elif isinstance(op, Heal):
            self._heal()
        elif isinstance(op, Deliver):
            msg = self.rt.network.take(op.index)
            if msg is not None:
                self._deliver(msg)
        elif isinstance(op, DeliverTo):
            index = next((i for i, m in enumerate(self.rt.network.queue) if m.dst == op.node), None)
            if index is not None:
                self._deliver(self.rt.network.queue.pop(index))
        elif isinstance(op, Drop):
            self.rt.network.take(op.index)
        elif isinstance(op, Duplicate):
            copy = self.rt.network.peek(op.index)
            if copy is not None:
                self._deliver(copy)
        elif isinstance(op, Advance):
            self._advance(op.ms)
        elif isinstance(op, Settle):
            self._settle(op.max_messages)
        elif isinstance(op, Run):
            self._run(op.ms)
        elif isinstance(op, MoveLeader):
            if self._is_broker(op.broker):
                self.controller.move_leader(op.broker)
        else:
            raise ValueError(f"the reference cluster does not know operation {op!r}")
        return self.rt.events.drain()

    def index_of(self, payload_type: type, src: int | None = None, dst: int | None = None) -> int | None:
        """Queue position of the oldest in-flight message of ``payload_type`` (optionally from
        ``src`` / to ``dst``), for steering directed scenarios with Deliver/Drop/Duplicate."""
        for index, msg in enumerate(self.rt.network.queue):
            if (
                isinstance(msg.payload, payload_type)
                and (src is None or msg.src == src)
                and (dst is None or msg.dst == dst)
            ):
                return index
        return None

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
        if self.rt.network.is_isolated(broker_id):
            self._awaiting_registration.add(broker_id)
        else:
            self._register(broker)

    def _heal(self) -> None:
        """Remove every cut; brokers that restarted while cut off register, and brokers fenced while
        cut off but still running resume heartbeats and are unfenced."""
        self.rt.network.heal()
        self._heartbeats()
        for broker in self.brokers:
            if not broker.alive:
                continue
            if broker.broker_id in self._awaiting_registration:
                self._awaiting_registration.discard(broker.broker_id)
                self._register(broker)
            elif broker.registered and broker.broker_id in self.controller.fenced:
                self.controller.unfence(broker.broker_id)

    def _heartbeats(self) -> None:
        """Every running, reachable broker's session is fresh at the current time."""
        for broker in self.brokers:
            if broker.alive and not self.rt.network.is_isolated(broker.broker_id):
                self.controller.heartbeat(broker.broker_id)

    def _advance(self, ms: int) -> None:
        """Fire due timers in time order up to now + ``ms``; ClockAdvanced at each new time."""
        if ms <= 0:
            return
        scheduler = self.rt.scheduler
        target_ms = scheduler.now_ms + ms
        for _ in range(MAX_TIMER_FIRINGS):
            due_ms = scheduler.next_due_ms()
            if due_ms is None or due_ms > target_ms:
                break
            if due_ms > scheduler.now_ms:
                self._move_clock(due_ms)
            timer = scheduler.pop_due(due_ms)
            assert timer is not None
            timer.action()
        else:
            raise RuntimeError(f"Advance({ms}) fires more than {MAX_TIMER_FIRINGS} timers; use shorter steps")
        if target_ms > scheduler.now_ms:
            self._move_clock(target_ms)

    def _move_clock(self, now_ms: int) -> None:
        self.rt.scheduler.move_to(now_ms)
        self.rt.events.emit(ClockAdvanced(CONTROLLER, now_ms))
        self._heartbeats()

    def _run(self, ms: int) -> None:
        """A healthy network for ``ms``: settle, then step the clock by at most RUN_STEP_MS."""
        remaining = ms
        for _ in range(ms // RUN_STEP_MS + 2):
            self._settle(RUN_SETTLE_DELIVERIES)
            if remaining <= 0:
                return
            step = min(RUN_STEP_MS, remaining)
            self._advance(step)
            remaining -= step

    def _settle(self, max_messages: int) -> None:
        for _ in range(min(max_messages, MAX_SETTLE_DELIVERIES)):
            msg = self.rt.network.take(0)
            if msg is None:
                return
            self._deliver(msg)

    def _deliver(self, msg: Message) -> None:
        """Run the destination's handler, unless the message is lost (destination down or cut)."""
        if not self.rt.network.can_deliver(msg):
            return
        if msg.dst == CONTROLLER_NODE:
            self.controller.receive(msg)
        elif msg.dst == PRODUCER_NODE:
            self.producer.receive(msg)
        elif msg.dst == CONSUMER_NODE:
            self.consumer.receive(msg)
        else:
            self.brokers[msg.dst].receive(msg)


class ReferenceCluster:
    """The reference implementation behind the Adapter protocol (name ``"reference"``)."""

    name = "reference"

    def __init__(self) -> None:
        self._cluster: SimulatedCluster | None = None
        self.seed: int | None = None
        """Recorded for the adapter contract; no behaviour of the reference cluster is random."""

    @property
    def cluster(self) -> SimulatedCluster:
        """The running cluster (for white-box tests); reset() must have been called."""
        if self._cluster is None:
            raise RuntimeError("the reference cluster is not running: call reset(config, seed, mutants) first")
        return self._cluster

    def reset(self, config: AnyConfig, seed: int, mutants: frozenset[str]) -> list[Event]:
        """Start a fresh cluster; returns the bring-up events. Unknown mutants raise ValueError;
        a configuration of another slice raises TypeError."""
        if not isinstance(config, ReplicationConfig):
            raise TypeError(f"the replication reference cluster cannot run a {type(config).__name__}")
        chosen = check_mutants(mutants)
        self.seed = seed
        self._cluster = SimulatedCluster(config, chosen)
        return self._cluster.bring_up()

    def apply(self, op: Operation) -> list[Event]:
        return self.cluster.apply(op)

    def snapshot(self) -> dict[int, dict[str, Any]]:
        """Each broker's observable state, for replay's side-by-side view (optional in adapters)."""
        out: dict[int, dict[str, Any]] = {}
        for b in self.cluster.brokers:
            view = b.partition.view
            out[b.broker_id] = {
                "running": b.alive,
                "leader": view.leader,
                "leader_epoch": view.leader_epoch,
                "leo": b.log.leo,
                "hw": b.log.hw,
                "isr": list(view.isr),
            }
        return out

    def close(self) -> None:
        self._cluster = None
