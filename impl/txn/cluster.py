"""The exactly-once cluster: brokers (partition leaders and transaction coordinators), producer
clients, consumers and a group client over the simulated network and clock, driven one operation
at a time (``TxnCluster``, the Adapter of kconform.conformance.adapter for ``TxnConfig``).

Guarantees: those of the shared simulation core (impl.simulation: one operation to completion,
deterministic, bounded), and Quiesce is bounded too (MAX_QUIESCE_ROUNDS); record ids and client
transaction numbers are counters from 1, so they are unique per run.
"""

from __future__ import annotations

from typing import Any

from kconform.model.txn_config import TxnConfig
from kconform.traces.events import CONTROLLER, CoordinatorMoved, Event, Quiesced, TopicOffset
from kconform.traces.operations import (
    AbortTxn,
    AdvanceHw,
    BeginTxn,
    CommitOffsets,
    CommitTxn,
    ConsumeTxn,
    FetchOffsets,
    InitProducer,
    MoveCoordinator,
    Operation,
    Quiesce,
    RogueAddPartitions,
    RogueEndTxn,
    RogueInitProducer,
    RogueProduce,
    Send,
    SendOffsets,
    WireRequest,
)

from ..clock import Scheduler
from ..mutants import TXN
from ..network import Network
from ..runtime import EventLog
from ..simulation import MAX_SETTLE_DELIVERIES, Node, Simulation, SimulationAdapter
from .broker import TxnBroker
from .clients import GROUP_CLIENT_NODE, GroupClient, TxnConsumer, TxnProducer, consumer_at, producer_at
from .runtime import Metadata, StateLog, TxnWorld
from .wire import WireMailbox, is_wire_node, payload_from_json, wire_node

MAX_CLIENTS = 16
"""Producer clients and consumers are numbered 0..MAX_CLIENTS-1; other numbers are ignored."""
MAX_BATCH_RECORDS = 100
MAX_QUIESCE_ROUNDS = 10_000
"""Upper bound on (deliver everything, fire the next timers) rounds of one Quiesce."""
COORDINATOR_LOAD_MS = 10
"""Time the new coordinator takes to load its ``__transaction_state`` partition."""


class TxnSimulation(Simulation[TxnWorld]):
    """One running exactly-once cluster."""

    label = "the exactly-once cluster"

    def __init__(self, config: TxnConfig, mutants: frozenset[str]) -> None:
        partitions = config.log_partitions + config.state_partitions
        metadata = Metadata(
            leaders={p: config.initial_leader(p) for p in partitions},
            state_epochs={p: 0 for p in config.state_partitions},
            state_logs={p: StateLog() for p in config.state_partitions},
        )
        super().__init__(TxnWorld(config, mutants, Scheduler(), Network(), EventLog(), metadata))
        self.brokers = [TxnBroker(b, self.world) for b in range(config.brokers)]
        self.producers: dict[int, TxnProducer] = {}
        self.consumers: dict[int, TxnConsumer] = {}
        self.group_client = GroupClient(self.world)
        self.next_rid = 1
        self.next_ctxn = 1
        self.wire = WireMailbox()
        self.last_wire_msg = -1
        """Message id of the last WireRequest's request (its answer is ``wire.take`` of it)."""

    def boot(self) -> list[Event]:
        """Each ``__transaction_state`` partition's first leader loads it at coordinator epoch 0."""
        for broker in self.brokers:
            broker.start_timers()
        for sp in self.world.config.state_partitions:
            leader = self.world.metadata.leaders[sp]
            self.world.events.emit(CoordinatorMoved(CONTROLLER, sp, leader, 0))
            self.brokers[leader].become_coordinator(sp, 0).load()
        return self.world.events.drain()

    # ---------------------------------------------------------------------------- operations

    def apply_slice(self, op: Operation) -> bool:
        cfg = self.world.config
        if isinstance(op, InitProducer):
            self._init_producer(op.client, op.txn_id)
        elif isinstance(op, BeginTxn):
            producer = self.producers.get(op.client)
            if producer is not None and producer.begin(self.next_ctxn):
                self.next_ctxn += 1
        elif isinstance(op, Send):
            producer = self.producers.get(op.client)
            if producer is not None and op.partition in cfg.data and 1 <= op.count <= MAX_BATCH_RECORDS:
                rids = tuple(range(self.next_rid, self.next_rid + op.count))
                self.next_rid += op.count
                producer.send(op.partition, rids)
        elif isinstance(op, RogueProduce):
            producer = self.producers.get(op.client)
            ok = 1 <= op.count <= MAX_BATCH_RECORDS and op.partition in cfg.data and op.broker < cfg.brokers
            if producer is not None and ok:
                rids = tuple(range(self.next_rid, self.next_rid + op.count))
                if producer.rogue_produce(op.partition, op.broker, op.seq_delta, op.epoch_delta, rids):
                    self.next_rid += op.count
        elif isinstance(op, RogueEndTxn):
            producer = self.producers.get(op.client)
            if producer is not None and op.broker < cfg.brokers:
                producer.rogue_end_txn(op.broker, op.epoch_delta, op.commit)
        elif isinstance(op, RogueAddPartitions):
            producer = self.producers.get(op.client)
            if producer is not None and op.partition in cfg.data and op.broker < cfg.brokers:
                producer.rogue_add_partitions(op.partition, op.broker, op.epoch_delta)
        elif isinstance(op, RogueInitProducer):
            producer = self.producers.get(op.client)
            if producer is not None and op.broker < cfg.brokers:
                producer.rogue_init_producer(op.broker, op.pid_delta, op.epoch_delta)
        elif isinstance(op, CommitTxn | AbortTxn):
            producer = self.producers.get(op.client)
            if producer is not None:
                producer.end(isinstance(op, CommitTxn))
        elif isinstance(op, SendOffsets):
            producer = self.producers.get(op.client)
            if producer is not None and op.group in cfg.groups:
                producer.send_offsets(op.group, TopicOffset(op.partition, op.offset))
        elif isinstance(op, ConsumeTxn):
            if 0 <= op.consumer < MAX_CLIENTS and op.partition in cfg.log_partitions:
                consumer = self.consumers.setdefault(op.consumer, TxnConsumer(op.consumer, self.world))
                consumer.fetch(op.partition, op.read_committed)
        elif isinstance(op, CommitOffsets):
            if op.group in cfg.groups:
                self.group_client.commit(op.group, TopicOffset(op.partition, op.offset))
        elif isinstance(op, FetchOffsets):
            if op.group in cfg.groups:
                self.group_client.fetch(op.group, op.require_stable)
        elif isinstance(op, MoveCoordinator):
            self._move_coordinator(op.txn_id, op.broker)
        elif isinstance(op, AdvanceHw):
            if op.partition in cfg.log_partitions:
                self.brokers[self.world.metadata.leaders[op.partition]].advance_hw(op.partition, op.offset)
        elif isinstance(op, Quiesce):
            self._quiesce(op.max_ms)
        elif isinstance(op, WireRequest):
            self._wire_request(op)
        else:
            return False
        return True

    def _init_producer(self, client: int, txn_id: str) -> None:
        if not 0 <= client < MAX_CLIENTS or (txn_id and txn_id not in self.world.config.transactional_ids):
            return
        producer = self.producers.get(client)
        if producer is None or producer.txn_id != txn_id:
            producer = TxnProducer(client, txn_id, self.world)
            self.producers[client] = producer
        producer.init()

    def _wire_request(self, op: WireRequest) -> None:
        """Send the decoded request from the wire connection to the broker, then deliver everything
        in flight (bounded by MAX_SETTLE_DELIVERIES); a malformed request or an unknown broker raises
        ValueError before anything runs."""
        if op.conn < 0 or not 0 <= op.broker < len(self.brokers):
            raise ValueError(f"wire request from connection {op.conn} to unknown broker {op.broker}")
        payload = payload_from_json(op.request)
        self.last_wire_msg = self.world.network.send(wire_node(op.conn), op.broker, payload)
        self.settle(MAX_SETTLE_DELIVERIES)

    def _move_coordinator(self, txn_id: str, broker: int) -> None:
        """Coordinator failover: leadership of the id's state partition moves, epoch + 1; the old
        coordinator stops at once, the new one loads COORDINATOR_LOAD_MS later."""
        sp = self.world.config.state_partition(txn_id)
        metadata = self.world.metadata
        if sp not in metadata.state_logs or not 0 <= broker < len(self.brokers):
            return
        self.brokers[metadata.leaders[sp]].resign_coordinator(sp)
        metadata.state_epochs[sp] += 1
        metadata.leaders[sp] = broker
        self.world.events.emit(CoordinatorMoved(CONTROLLER, sp, broker, metadata.state_epochs[sp]))
        coordinator = self.brokers[broker].become_coordinator(sp, metadata.state_epochs[sp])
        self.world.scheduler.schedule(COORDINATOR_LOAD_MS, broker, "coordinator-load", coordinator.load)

    # -------------------------------------------------------------------------- the world

    def snapshot(self) -> dict[int, dict[str, Any]]:
        return {b.broker_id: _broker_view(b) for b in self.brokers}

    def node(self, address: int) -> Node | None:
        if address >= 0:
            return self.brokers[address]
        if address == GROUP_CLIENT_NODE:
            return self.group_client
        if is_wire_node(address):
            return self.wire
        # A lookup by the inverse of producer_node / consumer_node (both one-to-one): the producer
        # first, as a scan of the producers then the consumers would find them.
        producer = self.producers.get(producer_at(address))
        if producer is not None:
            return producer
        return self.consumers.get(consumer_at(address))

    def quiet(self) -> bool:
        """Nothing in flight, no client with work, no coordinator with work of its own (loading, a
        transaction Ongoing until its timeout abort, markers outstanding): what is still open
        now stays open for ever, which the Quiesced event lets the judge conclude."""
        if self.world.network.queue:
            return False
        if any(p.busy() for p in self.producers.values()):
            return False
        return not any(c.busy() for b in self.brokers for c in b.coordinators.values())

    def _quiesce(self, max_ms: int) -> None:
        """Deliver and fire timers until quiet or ``max_ms`` passed; then Quiesced(quiet)."""
        scheduler = self.world.scheduler
        deadline_ms = scheduler.now_ms + max(0, max_ms)
        for _ in range(MAX_QUIESCE_ROUNDS):
            self.settle(MAX_SETTLE_DELIVERIES)
            if self.quiet():
                break
            due_ms = scheduler.next_due_ms()
            if due_ms is None or due_ms > deadline_ms:
                break
            self.fire_next(due_ms)
        self.world.events.emit(Quiesced(CONTROLLER, self.quiet()))


class TxnCluster(SimulationAdapter[TxnSimulation]):
    """The exactly-once reference implementation behind the Adapter protocol (name ``"txn-reference"``)."""

    name = "txn-reference"
    label = "the exactly-once reference cluster"
    mutant_slice = TXN
    config_type = TxnConfig

    def start(self, config: TxnConfig, mutants: frozenset[str]) -> TxnSimulation:
        return TxnSimulation(config, mutants)

    @property
    def sim(self) -> TxnSimulation:
        """The running cluster (for white-box tests); reset() must have been called."""
        return self.running


def _broker_view(b: TxnBroker) -> dict[str, Any]:
    """One broker's observable state: per partition LEO / HW / LSO, per coordinator its ids' states."""
    return {
        "partitions": {p: {"leo": log.leo, "hw": log.hw, "lso": log.lso()} for p, log in sorted(b.logs.items())},
        "coordinators": {
            sp: {t: meta.state for t, meta in sorted(c.txns.items())} for sp, c in sorted(b.coordinators.items())
        },
    }
