"""The Hypothesis stateful test: random operations, faults, scheduling and time, judged in lockstep.

``make_machine`` builds a RuleBasedStateMachine bound to an adapter factory, a config and a set
of mutants. Each rule is one operation; after each operation every event it caused has been
judged (conformance of each handler, then every invariant). The first failing finding fails the
example, Hypothesis shrinks the operation list, and the last failing run is kept so the caller
can write it as a counterexample file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis import target
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.lockstep import Finding
from kconform.conformance.runner import ADAPTER_TIMEOUT_S, LockstepRun
from kconform.model.config import ReplicationConfig
from kconform.traces import operations as ops

STEP_MS = (100, 500, 1_000)
"""Small clock steps: fetcher backoffs, checkpoints and metadata refreshes fire; always on."""
RUN_MS = (300, 1_000, 3_000)
"""Healthy-network stretches: every message delivered, timers firing; progress in one step."""
LAG_MS = (5_000, 10_000, 31_000)
"""Jumps past session timeouts and replica.lag.time.max.ms: ISR shrinks, fencing, timeouts."""
FAMILIES = ("consume", "scheduling", "message-faults", "lag", "crash", "isolate", "leadership")
"""Rule families switched on or off per run (swarm testing, Groce et al. 2012): a run that only
moves leaders and delivers messages reaches fast-failover interleavings that a run diluted by
every fault rarely does. Produce, healthy runs, targeted delivery and small clock steps are always on;
"scheduling" adds fine-grained delivery (settle a few, deliver by queue position)."""


class HarnessAbort(BaseException):
    """Carries an AdapterError out of Hypothesis without being shrunk: a crashed or hung
    implementation is a harness error to report at once, not a property failure to minimise
    (Hypothesis only catches Exception)."""

    def __init__(self, error: AdapterError) -> None:
        super().__init__(str(error))
        self.error = error


class ConformanceFailure(AssertionError):
    """A lockstep run found non-conformance or an invariant violation."""

    def __init__(self, finding: Finding, step: int) -> None:
        super().__init__(f"[{finding.verdict}] {finding.name} at step {step}: {finding.message}")
        self.finding = finding
        self.step = step


@dataclass
class RunLog:
    """What the machine's runs leave behind for the gate: counts and the last failing run."""

    runs: int = 0
    steps: int = 0
    last_failure: LockstepRun | None = None
    all_runs_checks: dict[str, int] = field(default_factory=dict)
    violations: dict[str, int] = field(default_factory=dict)
    allowed: dict[str, int] = field(default_factory=dict)
    actions: dict[str, int] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)
    """Coverage keys (conformance.coverage) of the events the judge accepted, over all runs."""
    seconds_to_first_failure: float | None = None
    started: float = 0.0
    """Clock reading when the campaign began; detection time is measured from it."""

    def absorb(self, run: LockstepRun) -> None:
        self.runs += 1
        self.steps += len(run.steps)
        for name, n in run.judge.checks.items():
            self.all_runs_checks[name] = self.all_runs_checks.get(name, 0) + n
        for name, n in run.judge.violations.items():
            self.violations[name] = self.violations.get(name, 0) + n
        for name, n in run.judge.allowed.items():
            self.allowed[name] = self.allowed.get(name, 0) + n
        for name, n in run.judge.actions.items():
            self.actions[name] = self.actions.get(name, 0) + n
        for key, n in run.judge.covered.items():
            self.covered[key] = self.covered.get(key, 0) + n


def judged_step(run: LockstepRun, op: ops.Operation | None, log: RunLog, clock: Callable[[], float]) -> None:
    """Boot ``run`` (``op`` None) or apply ``op`` to it, as one step of a state machine of any slice.
    An adapter error becomes HarnessAbort (reported at once, never shrunk); a failing finding is
    kept in ``log`` (with the time to the first one) and raised as ConformanceFailure for
    Hypothesis to shrink."""
    try:
        if op is None:
            run.boot()
        else:
            run.apply(op)
    except AdapterError as exc:
        raise HarnessAbort(exc) from exc
    if run.failure is not None:
        log.last_failure = run
        if log.seconds_to_first_failure is None:
            log.seconds_to_first_failure = clock() - log.started
        assert run.failing_step is not None
        raise ConformanceFailure(run.failure, run.failing_step)


def _epoch_spread(run: LockstepRun) -> int:
    """How many (replica, leader epoch) pairs the logs hold: targeted search (Löscher & Sagonas)
    toward logs written across many leader epochs, where truncation and fencing bugs live."""
    return sum(len(r.epoch_cache) for r in run.judge.state.replicas)


def make_machine(
    adapter_factory: Callable[[], Adapter],
    cfg: ReplicationConfig,
    mutants: frozenset[str],
    log: RunLog,
    clock: Callable[[], float],
    adapter_timeout_s: float = ADAPTER_TIMEOUT_S,
) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class driving a fresh adapter per example."""
    brokers = st.integers(0, cfg.replicas - 1)

    class ReplicationMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.adapter = adapter_factory()
            self.run: LockstepRun | None = None
            self.next_rid = 0
            self.families: frozenset[str] = frozenset()

        @initialize(seed=st.integers(0, 2**16), families=st.sets(st.sampled_from(FAMILIES)))
        def boot(self, seed: int, families: set[str]) -> None:
            self.families = frozenset(families)
            self.run = LockstepRun(self.adapter, cfg, seed, mutants, timeout_s=adapter_timeout_s)
            judged_step(self.run, None, log, clock)

        def _do(self, op: ops.Operation) -> None:
            assert self.run is not None
            judged_step(self.run, op, log, clock)

        @rule(acks=st.sampled_from([-1, 1, 0]))
        def produce(self, acks: int) -> None:
            self.next_rid += 1
            self._do(ops.Produce(rid=self.next_rid, acks=acks))

        @precondition(lambda self: "consume" in self.families)
        @rule(offset=st.integers(0, 8))
        def consume(self, offset: int) -> None:
            self._do(ops.Consume(offset=offset))

        @precondition(lambda self: "scheduling" in self.families)
        @rule(max_messages=st.sampled_from([5, 50]))
        def settle(self, max_messages: int) -> None:
            self._do(ops.Settle(max_messages=max_messages))

        @precondition(lambda self: "scheduling" in self.families)
        @rule(index=st.integers(0, 16))
        def deliver(self, index: int) -> None:
            self._do(ops.Deliver(index=index))

        @rule(node=st.integers(-1, cfg.replicas - 1))
        def deliver_to(self, node: int) -> None:
            self._do(ops.DeliverTo(node=node))

        @rule(ms=st.sampled_from(RUN_MS))
        def run_healthy(self, ms: int) -> None:
            self._do(ops.Run(ms=ms))

        @precondition(lambda self: "message-faults" in self.families)
        @rule(index=st.integers(0, 16))
        def drop(self, index: int) -> None:
            self._do(ops.Drop(index=index))

        @precondition(lambda self: "message-faults" in self.families)
        @rule(index=st.integers(0, 16))
        def duplicate(self, index: int) -> None:
            self._do(ops.Duplicate(index=index))

        @rule(ms=st.sampled_from(STEP_MS))
        def tick(self, ms: int) -> None:
            self._do(ops.Advance(ms=ms))

        @precondition(lambda self: "lag" in self.families)
        @rule(ms=st.sampled_from(LAG_MS))
        def advance(self, ms: int) -> None:
            self._do(ops.Advance(ms=ms))

        @precondition(lambda self: "crash" in self.families)
        @rule(broker=brokers)
        def crash(self, broker: int) -> None:
            self._do(ops.Crash(broker=broker))

        @precondition(lambda self: "crash" in self.families)
        @rule(broker=brokers)
        def restart(self, broker: int) -> None:
            self._do(ops.Restart(broker=broker))

        @precondition(lambda self: "isolate" in self.families)
        @rule(broker=brokers)
        def isolate(self, broker: int) -> None:
            self._do(ops.Isolate(broker=broker))

        @precondition(lambda self: "isolate" in self.families)
        @rule()
        def heal(self) -> None:
            self._do(ops.Heal())

        @precondition(lambda self: "leadership" in self.families)
        @rule(broker=brokers)
        def move_leader(self, broker: int) -> None:
            self._do(ops.MoveLeader(broker=broker))

        def teardown(self) -> None:
            if self.run is not None:
                log.absorb(self.run)
                target(float(_epoch_spread(self.run)), label="leader epochs held in replica logs")
            self.adapter.close()

    ReplicationMachine.__name__ = "ReplicationMachine"
    return ReplicationMachine
