"""Corpus generation: the reference cluster under seeded random workloads and faults, in parallel.

Guarantees:

- **Deterministic per seed.** Trace ``i`` of a corpus with seed ``s`` is driven by a
  ``random.Random`` seeded from ``(s, i)`` only, and each bucket (a fixed range of trace ids) is
  written by one process into its own file; so the same seed, target and plan give byte-identical
  files whatever ``workers`` is.
- **No judging.** The lockstep judge does not run here (mining and the oracle judge corpora later);
  Hypothesis is not used either: the workload is a plain weighted random choice over
  ``traces.operations`` with swarm-tested fault families, as the gate's state machine has.
- **Planting.** ``Plan.plant`` names mutants and how many traces carry each; the traces are chosen
  from the seed, one mutant per trace, and the manifest records which trace carries which.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconform.impl import ReferenceCluster
from kconform.impl.mutants import check_mutants
from kconform.model.config import ReplicationConfig
from kconform.traces import operations as ops
from kconform.traces.corpus import (
    EVENTS_DIR,
    MANIFEST,
    STEPS_DIR,
    Manifest,
    TableBuilder,
    TraceMeta,
    write_bucket,
    write_manifest,
)

FAMILIES = ("consume", "scheduling", "message-faults", "lag", "crash", "isolate", "leadership")
"""Fault / operation families switched on or off per trace (swarm testing, as conformance.machine)."""

DEFAULT_TRACE_EVENTS = 5_000
"""Events per trace (a trace stops at the first step that reaches it)."""

BUCKET_EVENTS = 1_000_000
"""Target events per bucket file (the unit of parallel work)."""

MAX_STEPS_PER_EVENT = 10
"""A trace gives up after ``MAX_STEPS_PER_EVENT * trace_events`` steps, whatever it produced."""


@dataclass(frozen=True)
class Plan:
    """What to generate: ``events`` in total (at least; traces end on step boundaries), in traces
    of about ``trace_events``, from ``seed``, every trace with ``config``; ``plant`` maps a mutant
    name to the number of traces that carry it."""

    events: int
    seed: int = 0
    trace_events: int = DEFAULT_TRACE_EVENTS
    config: ReplicationConfig = field(default_factory=ReplicationConfig)
    plant: tuple[tuple[str, int], ...] = ()

    @property
    def traces(self) -> int:
        return max(1, math.ceil(self.events / self.trace_events))

    @property
    def traces_per_bucket(self) -> int:
        return max(1, BUCKET_EVENTS // self.trace_events)

    def buckets(self) -> list[list[int]]:
        """Trace ids per bucket: contiguous ranges, at least two buckets when there are two traces."""
        per = min(self.traces_per_bucket, max(1, math.ceil(self.traces / 2)))
        return [list(range(start, min(start + per, self.traces))) for start in range(0, self.traces, per)]

    def planted(self) -> dict[int, str]:
        """Trace id → mutant, chosen from the seed; ValueError if more traces are asked than exist."""
        check_mutants(name for name, _ in self.plant)
        wanted = sum(n for _, n in self.plant)
        if wanted > self.traces:
            raise ValueError(f"cannot plant {wanted} mutant traces in a corpus of {self.traces} traces")
        chosen = random.Random(f"plant:{self.seed}").sample(range(self.traces), wanted)
        out: dict[int, str] = {}
        for name, n in self.plant:
            for _ in range(n):
                out[chosen.pop()] = name
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "target_events": self.events,
            "trace_events": self.trace_events,
            "plant": {name: n for name, n in self.plant},
            "workload": "kconform.traces.generate (seeded random operations, swarm fault families)",
        }


def trace_seed(seed: int, trace: int) -> int:
    """The seed of trace ``trace`` in a corpus seeded ``seed`` (stable across Python versions)."""
    digest = hashlib.blake2b(f"{seed}:{trace}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2


class Workload:
    """Seeded random operations for one trace: what the gate's state machine does, without
    Hypothesis (no shrinking, no database; a plain weighted choice per step)."""

    def __init__(self, rng: random.Random, config: ReplicationConfig) -> None:
        self.rng = rng
        self.replicas = config.replicas
        self.families = frozenset(f for f in FAMILIES if rng.random() < 0.5)
        self.next_rid = 0
        self.crashed: set[int] = set()
        self.isolated = False

    def next(self) -> ops.Operation:
        rng = self.rng
        choices: list[tuple[float, Callable[[], ops.Operation]]] = [
            (8.0, self._produce),
            (4.0, lambda: ops.Run(ms=rng.choice((300, 1_000, 3_000)))),
            (3.0, lambda: ops.Advance(ms=rng.choice((100, 500, 1_000)))),
            (2.0, lambda: ops.DeliverTo(node=rng.randrange(-1, self.replicas))),
        ]
        f = self.families
        if "consume" in f:
            choices.append((2.0, lambda: ops.Consume(offset=max(0, self.next_rid - rng.randrange(0, 12)))))
        if "scheduling" in f:
            choices.append((1.0, lambda: ops.Settle(max_messages=rng.choice((5, 50)))))
            choices.append((1.0, lambda: ops.Deliver(index=rng.randrange(0, 17))))
        if "message-faults" in f:
            choices.append((1.0, lambda: ops.Drop(index=rng.randrange(0, 17))))
            choices.append((1.0, lambda: ops.Duplicate(index=rng.randrange(0, 17))))
        if "lag" in f:
            choices.append((1.0, lambda: ops.Advance(ms=rng.choice((5_000, 10_000, 31_000)))))
        if "crash" in f:
            choices.append((0.5, self._crash))
            if self.crashed:
                choices.append((1.5, self._restart))
        if "isolate" in f:
            choices.append((1.0, self._heal) if self.isolated else (0.5, self._isolate))
        if "leadership" in f:
            choices.append((1.0, lambda: ops.MoveLeader(broker=rng.randrange(0, self.replicas))))
        total = sum(w for w, _ in choices)
        pick = rng.random() * total
        for weight, make in choices:
            pick -= weight
            if pick < 0:
                return make()
        return choices[-1][1]()

    def _produce(self) -> ops.Operation:
        self.next_rid += 1
        return ops.Produce(rid=self.next_rid, acks=self.rng.choice((-1, -1, -1, 1, 0)))

    def _crash(self) -> ops.Operation:
        broker = self.rng.randrange(0, self.replicas)
        self.crashed.add(broker)
        return ops.Crash(broker=broker)

    def _restart(self) -> ops.Operation:
        broker = self.rng.choice(sorted(self.crashed))
        self.crashed.discard(broker)
        return ops.Restart(broker=broker)

    def _isolate(self) -> ops.Operation:
        self.isolated = True
        return ops.Isolate(broker=self.rng.randrange(0, self.replicas))

    def _heal(self) -> ops.Operation:
        self.isolated = False
        return ops.Heal()


def run_trace(
    builder: TableBuilder, trace: int, seed: int, config: ReplicationConfig, mutants: frozenset[str], events: int
) -> tuple[int, int]:
    """Drive one fresh reference cluster until it has reported ``events`` events (or the step cap);
    add its steps and events to ``builder``; returns (events, steps)."""
    rng = random.Random(seed)
    workload = Workload(rng, config)
    cluster = ReferenceCluster()
    pos = 0
    step = 0
    try:
        batch = cluster.reset(config, seed, mutants)
        op: ops.Operation = ops.Boot()
        for _ in range(MAX_STEPS_PER_EVENT * events):
            builder.add_step(trace, step, json.dumps(op.to_json(), separators=(",", ":")))
            for event in batch:
                builder.add_event(trace, pos, step, event)
                pos += 1
            step += 1
            if pos >= events:
                break
            op = workload.next()
            batch = cluster.apply(op)
    finally:
        cluster.close()
    return pos, step


@dataclass(frozen=True)
class _Task:
    root: str
    bucket: int
    traces: tuple[int, ...]
    seed: int
    config: dict[str, Any]
    planted: tuple[tuple[int, str], ...]
    trace_events: int


def _run_bucket(task: _Task) -> list[dict[str, Any]]:
    """One worker task: every trace of one bucket, written as that bucket's files."""
    config = ReplicationConfig.from_json(task.config)
    planted = dict(task.planted)
    builder = TableBuilder()
    metas = []
    for trace in task.traces:
        seed = trace_seed(task.seed, trace)
        mutants = (planted[trace],) if trace in planted else ()
        n_events, n_steps = run_trace(builder, trace, seed, config, frozenset(mutants), task.trace_events)
        metas.append(TraceMeta(trace, task.bucket, seed, task.config, mutants, n_events, n_steps).to_json())
    write_bucket(task.root, task.bucket, builder)
    return metas


@dataclass
class GenerateResult:
    """The written corpus's manifest and how long it took (wall clock, not part of the corpus)."""

    manifest: Manifest
    seconds: float

    @property
    def events_per_second(self) -> float:
        return self.manifest.events / self.seconds if self.seconds > 0 else math.inf


def generate(
    root: str | Path,
    plan: Plan,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> GenerateResult:
    """Write the corpus of ``plan`` into ``root`` (replacing a previous corpus there; a directory
    that holds anything else is refused with FileExistsError). ``progress(events)`` is called as
    buckets complete. Returns the manifest and the wall-clock seconds."""
    root = Path(root)
    _prepare(root)
    started = time.perf_counter()
    planted = plan.planted()
    tasks = [
        _Task(
            str(root),
            bucket,
            tuple(ids),
            plan.seed,
            plan.config.to_json(),
            tuple((t, m) for t, m in sorted(planted.items()) if ids[0] <= t <= ids[-1]),
            plan.trace_events,
        )
        for bucket, ids in enumerate(plan.buckets())
    ]
    metas: list[dict[str, Any]] = []
    for done in _map(tasks, workers):
        metas.extend(done)
        if progress is not None:
            progress(sum(m["events"] for m in done))
    traces = tuple(sorted((TraceMeta(**{**m, "mutants": tuple(m["mutants"])}) for m in metas), key=lambda m: m.trace))
    manifest = Manifest(traces, plan.to_json())
    write_manifest(root, manifest)
    return GenerateResult(manifest, time.perf_counter() - started)


def _map(tasks: list[_Task], workers: int) -> Iterator[list[dict[str, Any]]]:
    if workers <= 1 or len(tasks) <= 1:
        yield from map(_run_bucket, tasks)
        return
    ctx = multiprocessing.get_context("spawn")  # no fork: the parent may hold a JVM or threads
    with ctx.Pool(processes=min(workers, len(tasks))) as pool:
        yield from pool.imap_unordered(_run_bucket, tasks)


def _prepare(root: Path) -> None:
    """Make ``root`` an empty corpus directory; only a previous corpus (or nothing) is replaced."""
    if root.exists():
        if not root.is_dir():
            raise FileExistsError(f"{root} exists and is not a directory")
        entries = {p.name for p in root.iterdir()}
        if entries and not entries <= {MANIFEST, EVENTS_DIR, STEPS_DIR}:
            raise FileExistsError(f"{root} is not empty and is not a corpus; refusing to overwrite it")
        (root / MANIFEST).unlink(missing_ok=True)
        for sub in (EVENTS_DIR, STEPS_DIR):
            shutil.rmtree(root / sub, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
