"""Corpus generation: a reference cluster under seeded random workloads and faults, in parallel.

The plan's configuration picks the slice and, through its trace tools (traces.tools), its random
workload: traces.replication.workload.Workload for the replication cluster, traces.txn.workload's
TxnWorkload for the exactly-once one; both are traces.workload.SwarmWorkloads.

Guarantees:

- **Deterministic per seed.** Trace ``i`` of a corpus with seed ``s`` is driven by a
  ``random.Random`` seeded from ``(s, i)`` only, and each bucket (a fixed range of trace ids) is
  written by one process into its own file; so the same seed, target and plan give byte-identical
  files whatever ``workers`` is.
- **No judging.** The lockstep judge does not run here (mining and the oracle judge corpora later);
  Hypothesis is not used either: the workload is a plain weighted random choice over
  ``traces.operations`` with swarm-tested fault families, as the gate's state machine has.
- **Planting.** ``Plan.plant`` names mutants of the plan's slice and how many traces carry each;
  the traces are chosen from the seed, one mutant per trace; a planted trace runs with the
  configuration its mutant needs (impl.mutants.config_for) and the manifest records, per trace, the
  mutant and the configuration used.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import math
import multiprocessing
import os
import random
import shutil
import signal
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconform.impl.mutants import check_mutants, config_for
from kconform.model.config import ReplicationConfig
from kconform.model.configs import REPLICATION, AnyConfig, config_from_json, slice_of
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
from kconform.traces.step_json import step_json
from kconform.traces.tools import TraceWorkload, generation_for

DEFAULT_TRACE_EVENTS = 5_000
"""Events per trace (a trace stops at the first step that reaches it)."""

BUCKET_EVENTS = 1_000_000
"""Target events per bucket file (the unit of parallel work)."""

MAX_STEPS_PER_EVENT = 10
"""A trace gives up after ``MAX_STEPS_PER_EVENT * trace_events`` steps, whatever it produced."""

GC_STEPS = 2_000
"""While a bucket is generated automatic garbage collection is paused (``paused_gc``); a trace
collects its young garbage every ``GC_STEPS`` steps and all of it at its end instead."""


def _collect_trace_garbage() -> None:
    gc.collect(1)


@contextmanager
def paused_gc() -> Iterator[Callable[[], None]]:
    """Pause automatic cyclic garbage collection for a bucket (its traces and the writing of its
    files); yields ``end_trace()``, which
    collects everything a finished trace left (generations 0 and 1); collects in full and restores
    the collector's previous state on exit. Inside a trace ``run_trace`` collects generation 0
    every ``GC_STEPS`` steps (``gc.collect(0)``): its survivors go to generation 1, which
    ``end_trace`` collects, so a trace's garbage is bounded by the trace and freed at its end.

    A reference cluster allocates many short-lived objects per step while the live simulation state
    is large, so the automatic collector (every 700 net allocations) re-traverses that state over
    and over: a quarter to a third of a worker's CPU (100k events, both slices). Nothing generated
    depends on when garbage is collected; the bytes stay the same (tests/test_seeded_identity.py).

    What was alive before the bucket (the imported modules, the caller's objects) is frozen
    (``gc.freeze``) while it runs, unless something else froze objects already: the closing full
    collection then traverses only what the bucket made (0.13 CPU-s for two 50k-event buckets
    before, 0.03 after)."""
    was_enabled = gc.isenabled()
    gc.disable()
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        yield _collect_trace_garbage
    finally:
        gc.collect()
        if freeze:
            gc.unfreeze()
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class Plan:
    """What to generate: ``events`` in total (at least; traces end on step boundaries), in traces
    of about ``trace_events``, from ``seed``, of ``config``'s slice; ``plant`` maps a mutant of that
    slice to the number of traces that carry it. A trace runs with ``config``, a planted one with
    ``config_for(mutant, config)`` (the configuration its mutant needs to be observable)."""

    events: int
    seed: int = 0
    trace_events: int = DEFAULT_TRACE_EVENTS
    config: AnyConfig = field(default_factory=ReplicationConfig)
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
        """Trace id → mutant, chosen from the seed; ValueError for a mutant of another slice or if more
        traces are asked than exist."""
        try:
            check_mutants((name for name, _ in self.plant), slice_of(self.config))
        except ValueError as e:
            raise ValueError(f"{e} (of the {slice_of(self.config)} slice; kconform mutants lists all)") from None
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
        """The plan as the manifest records it (a replication plan's record has no ``slice`` key:
        manifests written before the exactly-once slice existed stay what they were)."""
        slice_name = slice_of(self.config)
        return {
            **({} if slice_name == REPLICATION else {"slice": slice_name}),
            "seed": self.seed,
            "target_events": self.events,
            "trace_events": self.trace_events,
            "plant": {name: n for name, n in self.plant},
            "workload": (
                f"{generation_for(self.config).workload_module} (seeded random operations, swarm fault families)"
            ),
        }


def trace_config(config: AnyConfig, mutants: tuple[str, ...]) -> AnyConfig:
    """The configuration a trace carrying ``mutants`` runs with: ``config`` with each mutant's
    MUTANT_CONFIG overrides (impl.mutants.config_for)."""
    for name in mutants:
        config = config_for(name, config)
    return config


def trace_seed(seed: int, trace: int) -> int:
    """The seed of trace ``trace`` in a corpus seeded ``seed`` (stable across Python versions)."""
    digest = hashlib.blake2b(f"{seed}:{trace}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2


def make_workload(rng: random.Random, config: AnyConfig) -> TraceWorkload:
    """The random workload of ``config``'s slice."""
    return generation_for(config).make_workload(rng, config)


def run_trace(
    builder: TableBuilder,
    trace: int,
    seed: int,
    config: AnyConfig,
    mutants: frozenset[str],
    events: int,
    collect_young: Callable[[], object] = lambda: None,
) -> tuple[int, int]:
    """Drive one fresh reference cluster of ``config``'s slice until it has reported ``events``
    events (or the step cap); add its steps and events to ``builder``; returns (events, steps).
    ``collect_young`` runs every ``GC_STEPS`` steps (``paused_gc``)."""
    rng = random.Random(seed)
    parts = generation_for(config)
    workload = parts.make_workload(rng, config)
    cluster = parts.make_reference()
    pos = 0
    step = 0
    try:
        batch = cluster.reset(config, seed, mutants)
        op: ops.Operation = ops.Boot()
        for _ in range(MAX_STEPS_PER_EVENT * events):
            if step % GC_STEPS == GC_STEPS - 1:
                collect_young()
            builder.add_step(trace, step, step_json(op))
            pos = builder.add_events(trace, pos, step, batch)
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
    config = config_from_json(task.config)
    planted = dict(task.planted)
    builder = TableBuilder()
    metas = []
    with paused_gc() as end_trace:
        for trace in task.traces:
            seed = trace_seed(task.seed, trace)
            mutants = (planted[trace],) if trace in planted else ()
            used = trace_config(config, mutants)
            recorded = task.config if used == config else used.to_json()
            n_events, n_steps = run_trace(
                builder, trace, seed, used, frozenset(mutants), task.trace_events, lambda: gc.collect(0)
            )
            end_trace()
            metas.append(TraceMeta(trace, task.bucket, seed, recorded, mutants, n_events, n_steps).to_json())
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


HOST_POLL_SECONDS = 1.0
"""How often the generating process looks whether the worker host is still alive while it waits."""


def _map(tasks: list[_Task], workers: int) -> Iterator[list[dict[str, Any]]]:
    """Every task's metas, as tasks complete: in this process with one worker (or one task), else
    in ``min(workers, len(tasks))`` processes forked from one spawned host (``_host``)."""
    if workers <= 1 or len(tasks) <= 1:
        yield from map(_run_bucket, tasks)
        return
    yield from _hosted(tasks, min(workers, len(tasks)))


def _hosted(tasks: list[_Task], workers: int) -> Generator[list[dict[str, Any]], None, None]:
    """Run ``tasks`` in a host process and its forked workers; yields each bucket's metas as the host
    sends them. The host is spawned (a fresh interpreter: the caller may hold a JVM or threads,
    which a fork would copy), imports what the buckets need once and forks its workers from there,
    so a worker starts with every module loaded instead of importing them itself (about 0.8 CPU-s
    per spawned worker: the package, pyarrow, numpy, the slice's reference cluster and workload,
    found through traces.tools.generation_for). A bucket's exception is raised here; if the host dies
    without a word, RuntimeError. On any way out (an error, Ctrl-C, the caller closing this
    generator) the host is terminated and joined, and it terminates its workers."""
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    host = ctx.Process(target=_host, args=(tasks, workers, send), name="kconform-generate-host")
    host.start()
    send.close()
    try:
        for _ in tasks:
            while not receive.poll(HOST_POLL_SECONDS):
                if not host.is_alive():
                    raise RuntimeError(f"the corpus generation host died (exit code {host.exitcode})")
            try:
                kind, value = receive.recv()
            except EOFError:
                raise RuntimeError("the corpus generation host closed its pipe before sending every bucket") from None
            if kind == "error":
                raise value
            yield value
        host.join(timeout=60)
    finally:
        receive.close()
        if host.is_alive():
            host.terminate()
        host.join(timeout=60)
        if host.is_alive():
            host.kill()
            host.join(timeout=10)


def _host(tasks: list[_Task], workers: int, send: Any) -> None:
    """The spawned host: load the slice's modules (reference cluster, workload) once, fork
    ``workers`` workers, send ``("done", metas)`` per bucket as it completes, or ``("error",
    exception)`` once and stop. It leaves Ctrl-C to the generating process (SIGINT ignored here and,
    inherited, in the workers), which terminates it: SIGTERM ends its workers and it (``_end_host``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_host)
    generation_for(config_from_json(tasks[0].config))
    try:
        # Forked here, before the pool starts its threads: the workers inherit every module loaded.
        with multiprocessing.get_context("fork").Pool(processes=workers) as pool:
            for done in pool.imap_unordered(_run_bucket, tasks):
                send.send(("done", done))
    except Exception as e:  # handed to the generating process, which raises it
        try:
            send.send(("error", e))
        except OSError:
            pass  # the generating process is gone: nobody to tell
        except Exception:  # an exception that does not pickle
            with contextlib.suppress(OSError):
                send.send(("error", RuntimeError(f"{type(e).__name__}: {e}")))
    finally:
        send.close()


def _end_host(_signum: int, _frame: object) -> None:
    """SIGTERM in the host (or, inherited, in a worker): terminate its workers and exit at once."""
    for worker in multiprocessing.active_children():
        worker.terminate()
    os._exit(128 + signal.SIGTERM)


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
