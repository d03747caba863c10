"""The fetch-session cluster: one broker and its fetching clients over the simulated network and
clock, driven one operation at a time (``FetchCluster``, the Adapter of
kconform.conformance.adapter for ``FetchConfig``).

Guarantees: those of the shared simulation core (impl.simulation: one operation to completion,
bounded, the same events for the same operations); the broker's new session ids come from a
``random.Random`` seeded with the run's seed, so a run is deterministic under its seed; record ids
and producer ids are counters from 1 and 1000.
"""

from __future__ import annotations

import random
from typing import Any

from kconform.model.configs import AnyConfig
from kconform.model.fetch_config import BROKER, CLIENT_NODE_BASE, FetchConfig
from kconform.model.records import NO_CONTROL, Record
from kconform.traces.events import (
    Event,
    HwAdvanced,
    LeadershipChanged,
    LogStartAdvanced,
    RecordsAppended,
    SessionCacheLost,
)
from kconform.traces.operations import (
    AdvanceHw,
    AppendRecords,
    Assign,
    Bounce,
    CloseSession,
    DeleteRecords,
    Operation,
    Poll,
    ToggleLeadership,
)

from ..clock import Scheduler
from ..mutants import FETCH
from ..network import Network
from ..runtime import EventLog, World
from ..simulation import Node, Simulation, SimulationAdapter
from .broker import FetchBroker
from .client import FetchClient

MAX_BATCH_RECORDS = 20


class FetchSimulation(Simulation[World[FetchConfig]]):
    """One running fetch-session cluster."""

    label = "the fetch-session cluster"

    def __init__(self, config: FetchConfig, mutants: frozenset[str], seed: int) -> None:
        super().__init__(World(config, mutants, Scheduler(), Network(), EventLog()))
        self.broker = FetchBroker(self.world, random.Random(seed))
        self.clients = {c: FetchClient(c, self.world, self.broker.logs) for c in config.client_ids}
        self.next_rid = 1
        self.next_pid = 1000

    def boot(self) -> list[Event]:
        return self.world.events.drain()

    def apply_slice(self, op: Operation) -> bool:
        client = self.clients.get(getattr(op, "client", -1))
        if isinstance(op, Poll):
            if client is not None:
                client.poll()
        elif isinstance(op, Assign):
            if client is not None:
                client.assign(op.partition, op.assigned)
        elif isinstance(op, CloseSession):
            if client is not None:
                client.close()
        elif isinstance(op, AppendRecords):
            self._append(op.partition, op.count, op.txn)
        elif isinstance(op, AdvanceHw):
            log = self.broker.logs.get(op.partition)
            if log is not None:
                target = log.log.leo if op.offset < 0 else min(max(op.offset, log.log.hw), log.log.leo)
                if target > log.log.hw:
                    log.log.advance_hw(target)
                    self.world.events.emit(HwAdvanced(BROKER, op.partition, target))
        elif isinstance(op, DeleteRecords):
            log = self.broker.logs.get(op.partition)
            if log is not None:
                target = min(op.offset, log.log.hw)
                if target > log.log_start:
                    log.log_start = target
                    self.world.events.emit(LogStartAdvanced(BROKER, op.partition, target))
        elif isinstance(op, ToggleLeadership):
            log = self.broker.logs.get(op.partition)
            if log is not None:
                log.leading = not log.leading
                self.world.events.emit(LeadershipChanged(BROKER, op.partition, log.leading))
        elif isinstance(op, Bounce):
            if op.broker == BROKER:
                self.world.network.set_down(BROKER)
                self.world.network.set_up(BROKER)
                self.broker.restart()
                self.world.events.emit(SessionCacheLost(BROKER))
        else:
            return False
        return True

    def _append(self, name: str, count: int, txn: int) -> None:
        log = self.broker.logs.get(name)
        if log is None or not 1 <= count <= MAX_BATCH_RECORDS or txn not in (0, 1, 2):
            return
        rids = tuple(range(self.next_rid, self.next_rid + count))
        self.next_rid += count
        if txn == 0:
            base = log.log.leo  # a producer without id: no sequence checks (UnifiedLog skips them)
            log.log.records.extend(Record(base + i, -1, -1, -1, rid, 0, NO_CONTROL) for i, rid in enumerate(rids))
            self.world.events.emit(RecordsAppended(BROKER, name, rids, -1, False, False))
            return
        pid = self.next_pid
        self.next_pid += 1
        log.log.append_client(pid, 0, 0, rids, True, None)
        log.log.append_marker(pid, 0, txn == 1, 0)
        self.world.events.emit(RecordsAppended(BROKER, name, rids, pid, True, txn == 1))

    def node(self, address: int) -> Node | None:
        if address == BROKER:
            return self.broker
        return self.clients.get(address - CLIENT_NODE_BASE)

    def snapshot(self) -> dict[int, dict[str, Any]]:
        cache = self.broker.cache
        sessions = {
            s.id: {"epoch": s.epoch, "partitions": [(p.name, p.fetch_offset, p.high_watermark) for p in s.partitions]}
            for s in cache.sessions.values()
        }
        logs = {
            n: {"leo": lg.log.leo, "hw": lg.log.hw, "lso": lg.log.lso(), "log_start": lg.log_start}
            for n, lg in self.broker.logs.items()
        }
        return {BROKER: {"sessions": sessions, "partitions": logs}}


class FetchCluster(SimulationAdapter[FetchSimulation]):
    """The fetch-session reference implementation behind the Adapter protocol."""

    name = "fetch-reference"
    label = "the fetch-session reference cluster"
    mutant_slice = FETCH
    config_type = FetchConfig

    def __init__(self) -> None:
        super().__init__()
        self._seed = 0

    def reset(self, config: AnyConfig, seed: int, mutants: frozenset[str]) -> list[Event]:
        self._seed = seed
        return super().reset(config, seed, mutants)

    def start(self, config: FetchConfig, mutants: frozenset[str]) -> FetchSimulation:
        return FetchSimulation(config, mutants, self._seed)
