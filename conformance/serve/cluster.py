"""The served cluster: the exactly-once reference cluster (impl/txn) run in lockstep with its judge,
with the names real clients use mapped onto the names of the model's configuration.

Real clients pick their own topic names, transactional ids and group names; the model's
configuration (``TxnConfig``) has a fixed data topic ``t`` with ``data_partitions`` partitions,
``transactional_ids`` and ``groups``. ``Aliases`` gives each real name, on first use, the next free
model name (a topic gets as many consecutive model partitions as it has partitions), so every
request the server handles becomes one operation of the reference with model names
(``WireRequest``), judged like any other, and replayable from the trace file alone.

Guarantees: every operation applied to the reference goes through ``LockstepRun`` (judged at once;
the first failing finding is kept and the run continues unjudged, as the gate's runs do);
``trace`` is a counterexample file of the whole run (verdict "pass" when nothing failed) that
``kconform replay`` re-drives with the implementation "reference"; the simulated clock only moves
forward, by ``Run`` steps of at most MAX_CLOCK_STEP_MS that follow the wall clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kconform.conformance.judge import Finding
from kconform.conformance.runner import LockstepRun, StepRecord
from kconform.impl.messages import Payload
from kconform.impl.txn.cluster import TxnCluster, TxnSimulation
from kconform.impl.txn.wire import payload_to_json
from kconform.model.txn_config import TxnConfig
from kconform.traces.counterexample import Counterexample, Step, make_verdict, write_counterexample
from kconform.traces.events import Event
from kconform.traces.operations import AdvanceHw, MoveCoordinator, Operation, Run, WireRequest

from .records import WireRecord

MAX_CLOCK_STEP_MS = 60_000
"""Longest single Run step when the clock catches up with the wall clock (the trace limits allow an hour)."""
SERVED_IMPLEMENTATION = "reference"
"""The implementation named in a served run's trace file: replay re-drives the reference with it."""


class PoolExhausted(Exception):
    """Every model name of this kind is taken (the configuration holds a fixed number)."""


@dataclass
class Aliases:
    """Real names → model names, assigned in first-use order."""

    cfg: TxnConfig
    topics: dict[str, tuple[str, ...]] = field(default_factory=dict)
    txn_ids: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)

    def free_partitions(self) -> int:
        return len(self.cfg.data) - sum(len(p) for p in self.topics.values())

    def create_topic(self, name: str, partitions: int) -> tuple[str, ...]:
        """The model partitions of topic ``name`` (created with ``partitions`` when new)."""
        if name in self.topics:
            return self.topics[name]
        if partitions < 1 or partitions > self.free_partitions():
            raise PoolExhausted(
                f"topic {name!r} needs {partitions} partition(s); {self.free_partitions()} of the "
                f"configuration's {len(self.cfg.data)} are free"
            )
        used = sum(len(p) for p in self.topics.values())
        self.topics[name] = self.cfg.data[used : used + partitions]
        return self.topics[name]

    def partition(self, topic: str, index: int) -> str | None:
        parts = self.topics.get(topic)
        return parts[index] if parts is not None and 0 <= index < len(parts) else None

    def txn_id(self, real: str) -> str:
        return _assign(self.txn_ids, real, self.cfg.transactional_ids, "transactional id")

    def group(self, real: str) -> str:
        return _assign(self.groups, real, self.cfg.groups, "group")

    def real_partition(self, model: str) -> tuple[str, int] | None:
        for name, parts in self.topics.items():
            if model in parts:
                return name, parts.index(model)
        return None


def _assign(table: dict[str, str], real: str, pool: tuple[str, ...], what: str) -> str:
    if real not in table:
        if len(table) >= len(pool):
            raise PoolExhausted(f"the served cluster holds {len(pool)} {what}s; {real!r} would be one more")
        table[real] = pool[len(table)]
    return table[real]


def served_config(brokers: int) -> TxnConfig:
    """The configuration a served run judges against: the most partitions, ids and groups the slice
    allows, Kafka's default transaction timeout bounds."""
    return TxnConfig(
        brokers=brokers,
        data_partitions=8,
        transactional_ids=tuple(f"txn-{i}" for i in range(1, 9)),
        groups=tuple(f"group-{i}" for i in range(1, 9)),
    )


class ServedCluster:
    """The reference cluster behind the wire, judged step by step."""

    def __init__(
        self,
        cfg: TxnConfig,
        mutants: frozenset[str] = frozenset(),
        seed: int = 0,
        clock: Callable[[], float] = time.monotonic,
        judged: bool = True,
    ) -> None:
        self.cfg = cfg
        self.judged = judged
        """False (the benchmark's baseline only): operations run on the reference unjudged and unrecorded."""
        self.aliases = Aliases(cfg)
        self.adapter = TxnCluster()
        self.run = LockstepRun(self.adapter, cfg, seed, mutants, timeout_s=0)
        self.run.boot()
        self._clock = clock
        self._t0 = clock()
        self.findings: list[tuple[int, Finding]] = []
        self.records: dict[int, WireRecord] = {}
        """rid → the record a client wrote (its content; the model knows only the rid)."""
        self.batch_of: dict[int, int] = {}
        """rid → the wire batch it arrived in (fetch answers keep the client's batch boundaries)."""
        self._rid_of_seq: dict[tuple[str, int, int, int], int] = {}
        self._next_rid = 1
        self._next_batch = 1
        self._ctxn: dict[tuple[str, int, int], int] = {}
        self._next_ctxn = 1
        self.last_events: tuple[Event, ...] = ()
        """The events of the last WireRequest."""
        self.requests: dict[str, int] = {}
        """Requests handled per API name (for the benchmark and the summary)."""

    @property
    def sim(self) -> TxnSimulation:
        return self.adapter.sim

    @property
    def failure(self) -> Finding | None:
        return self.run.failure

    # ------------------------------------------------------------------------------ steps

    def step(self, op: Operation) -> StepRecord:
        if not self.judged:
            return StepRecord(op, tuple(self.adapter.apply(op)), ())
        record = self.run.apply(op)
        index = len(self.run.steps) - 1
        self.findings.extend((index, f) for f in record.findings)
        return record

    def catch_up(self) -> None:
        """Move the simulated clock to the wall clock (ms since start), settling on the way."""
        target = int((self._clock() - self._t0) * 1000)
        for _ in range(1000):
            behind = target - self.sim.world.now_ms
            if behind <= 0:
                return
            self.step(Run(min(behind, MAX_CLOCK_STEP_MS)))

    def send(self, conn: int, broker: int, payload: Payload) -> Payload | None:
        """One client request through the reference (a judged WireRequest); its answer, if any."""
        self.catch_up()
        record = self.step(WireRequest(conn, broker, payload_to_json(payload)))
        self.last_events = record.events
        answer = self.sim.wire.take(self.sim.last_wire_msg)
        self.replicate()
        return answer

    def replicate(self) -> None:
        """Every log partition's HW to its LEO (judged AdvanceHw steps): the slice abstracts
        replication, so an append is acknowledged by all replicas at once (acks=all satisfied)."""
        for p in self.cfg.log_partitions:
            leader = self.sim.brokers[self.sim.world.metadata.leaders[p]]
            log = leader.logs.get(p)
            if log is not None and log.hw < log.leo:
                self.step(AdvanceHw(p, -1))

    def move_coordinator(self, real_txn_id: str, broker: int) -> None:
        self.catch_up()
        self.step(MoveCoordinator(self.aliases.txn_id(real_txn_id), broker))

    # -------------------------------------------------------------------------- record ids

    def rids_for(
        self, partition: str, pid: int, epoch: int, base_seq: int, records: tuple[WireRecord, ...]
    ) -> tuple[int, ...]:
        """Record ids of a produced batch: an idempotent producer's (pid, epoch, sequence) keeps its
        rid, so a retried batch carries the same ids (a second append of it is then visible to the
        invariants); a plain producer's records get fresh ids."""
        batch = self._next_batch
        self._next_batch += 1
        out: list[int] = []
        for i, record in enumerate(records):
            key = (partition, pid, epoch, (base_seq + i) % 2**31)
            rid = self._rid_of_seq.get(key) if pid >= 0 else None
            if rid is None:
                rid = self._next_rid
                self._next_rid += 1
                if pid >= 0:
                    self._rid_of_seq[key] = rid
                self.records[rid] = record
                self.batch_of[rid] = batch
            out.append(rid)
        return tuple(out)

    def ctxn(self, txn_id: str, pid: int, epoch: int) -> int:
        """The client transaction a transactional request belongs to: a number per (id, pid,
        epoch), replaced after an EndTxn answered NONE (the next request opens the next one)."""
        key = (txn_id, pid, epoch)
        if key not in self._ctxn:
            self._ctxn[key] = self._next_ctxn
            self._next_ctxn += 1
        return self._ctxn[key]

    def txn_ended(self, txn_id: str, pid: int, epoch: int) -> None:
        self._ctxn.pop((txn_id, pid, epoch), None)

    # ------------------------------------------------------------------------------ trace

    def counterexample(self) -> Counterexample:
        """The whole run as a trace file (up to the failing step when one failed)."""
        run = self.run
        if run.failure is not None and run.failing_step is not None:
            f = run.failure
            verdict = make_verdict(f.verdict, f.name, f.message, run.failing_step)
            steps = run.steps[: run.failing_step + 1]
        else:
            verdict = make_verdict("pass", "served", "every request served conformed", len(run.steps) - 1)
            steps = run.steps
        return Counterexample(
            config=self.cfg,
            seed=run.seed,
            mutants=tuple(sorted(run.mutants)),
            implementation=SERVED_IMPLEMENTATION,
            verdict=verdict,
            steps=tuple(Step(r.op, r.events) for r in steps),
        )

    def write_trace(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_counterexample(path, self.counterexample())
        return path
