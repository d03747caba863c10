"""The Hypothesis state machine's shared part: a run per example, judged step by step, with swarm
families and targeting; every slice's machine is this base plus its own rules.

``make_machine`` builds a slice's RuleBasedStateMachine class from its ``Swarm`` and its rules;
``swarm_machine`` builds the base class for one slice, configuration and set of mutants: each
example boots a fresh adapter and a LockstepRun (``judged_step``), switches a random subset of
the slice's rule families on (swarm testing, Groce et al. 2012), and carries the network and
clock rules every slice shares (deliver, drop, duplicate, settle, run, tick, clock jumps). A
slice's machine subclasses it with its client and fault rules. Each rule is one operation; after
each operation every event it caused has been judged (conformance of each handler, then every
invariant). The first failing finding fails the example, Hypothesis shrinks the operation list,
and the last failing run is kept so the caller can write it as a counterexample file. At teardown
the run's counts go to the RunLog and its score to Hypothesis' ``target`` (targeted
property-based testing, Löscher & Sagonas 2017).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from hypothesis import strategies as st
from hypothesis import target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.judge import Finding
from kconform.conformance.runner import ADAPTER_TIMEOUT_S, LockstepRun
from kconform.conformance.step_sizes import RUN_MS as RUN_MS
from kconform.conformance.step_sizes import STEP_MS as STEP_MS
from kconform.traces import operations as ops

MESSAGE_INDEX = st.integers(0, 16)
"""The message in flight a Deliver / Drop / Duplicate addresses (modulo the queue length)."""


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


@dataclass(frozen=True)
class Jumps:
    """Long clock jumps (``advance``), enabled by the rule family ``family``."""

    family: str
    ms: tuple[int, ...]


@dataclass(frozen=True)
class Target:
    """What each run is targeted at: ``score`` of the finished run, reported under ``label``."""

    label: str
    score: Callable[[LockstepRun], float]


@dataclass(frozen=True)
class Swarm:
    """A slice's shape of the shared rules: its rule families, the nodes ``deliver_to`` picks
    (-1: the controller), the batch sizes ``settle`` delivers, the long clock jumps and the
    target."""

    families: tuple[str, ...]
    nodes: st.SearchStrategy[int]
    settle: tuple[int, ...]
    jumps: Jumps
    target: Target


FAMILY = "_kconform_family"
"""The attribute naming the family of a ``family_on`` precondition: its value depends on the run's
families only, which ``boot`` sets once (conformance.walk evaluates it once per example)."""


def family_on(family: str) -> Callable[[Any], bool]:
    """A precondition: rule family ``family`` is switched on in this run (swarm testing). A named
    function, not a lambda: Hypothesis describes every precondition at every validity check of a
    rule, and a lambda's description is looked up from its source each time."""

    def on(machine: Any) -> bool:
        return family in machine.families

    on.__name__ = on.__qualname__ = f"{family.replace('-', '_')}_on"
    setattr(on, FAMILY, family)  # a function attribute mypy does not know
    return on


class SliceMachine(RuleBasedStateMachine):
    """The type of the base class ``swarm_machine`` builds (its attributes, for the slices' rules)."""

    run: LockstepRun | None
    families: frozenset[str]

    def _do(self, op: ops.Operation) -> None:
        raise NotImplementedError

    def after_boot(self) -> None:
        """Operations every run of the slice starts with, after the boot step."""


def swarm_machine(
    adapter_factory: Callable[[], Adapter],
    cfg: Any,
    mutants: frozenset[str],
    log: RunLog,
    clock: Callable[[], float],
    swarm: Swarm,
    adapter_timeout_s: float = ADAPTER_TIMEOUT_S,
) -> type[SliceMachine]:
    """The base state machine class of a slice: boot, swarm families, the shared network and clock
    rules, teardown with the run's counts and target score. Hypothesis collects the rules of a
    subclass and of this base alike (by name)."""

    class SwarmMachine(SliceMachine):
        def __init__(self) -> None:
            super().__init__()
            self.adapter = adapter_factory()
            self.run = None
            self.families = frozenset()

        @initialize(seed=st.integers(0, 2**16), families=st.sets(st.sampled_from(swarm.families)))
        def boot(self, seed: int, families: set[str]) -> None:
            self.families = frozenset(families)
            self.run = LockstepRun(self.adapter, cfg, seed, mutants, timeout_s=adapter_timeout_s)
            judged_step(self.run, None, log, clock)
            self.after_boot()

        def _do(self, op: ops.Operation) -> None:
            assert self.run is not None
            judged_step(self.run, op, log, clock)

        @rule(ms=st.sampled_from(RUN_MS))
        def run_healthy(self, ms: int) -> None:
            self._do(ops.Run(ms=ms))

        @rule(ms=st.sampled_from(STEP_MS))
        def tick(self, ms: int) -> None:
            self._do(ops.Advance(ms=ms))

        @rule(node=swarm.nodes)
        def deliver_to(self, node: int) -> None:
            self._do(ops.DeliverTo(node=node))

        @precondition(family_on(swarm.jumps.family))
        @rule(ms=st.sampled_from(swarm.jumps.ms))
        def advance(self, ms: int) -> None:
            self._do(ops.Advance(ms=ms))

        @precondition(family_on("scheduling"))
        @rule(max_messages=st.sampled_from(swarm.settle))
        def settle(self, max_messages: int) -> None:
            self._do(ops.Settle(max_messages=max_messages))

        @precondition(family_on("scheduling"))
        @rule(index=MESSAGE_INDEX)
        def deliver(self, index: int) -> None:
            self._do(ops.Deliver(index=index))

        @precondition(family_on("message-faults"))
        @rule(index=MESSAGE_INDEX)
        def drop(self, index: int) -> None:
            self._do(ops.Drop(index=index))

        @precondition(family_on("message-faults"))
        @rule(index=MESSAGE_INDEX)
        def duplicate(self, index: int) -> None:
            self._do(ops.Duplicate(index=index))

        def teardown(self) -> None:
            if self.run is not None:
                log.absorb(self.run)
                if currently_in_test_context():  # not under the walk engine (conformance.walk)
                    target(swarm.target.score(self.run), label=swarm.target.label)
            self.adapter.close()

    return SwarmMachine


class MachineRules(Protocol):
    """A slice's own rules: a subclass of the base ``swarm_machine`` built for a configuration."""

    def __call__(self, base: type[SliceMachine], cfg: Any) -> type[SliceMachine]: ...


def make_machine(
    swarm: Swarm,
    rules: MachineRules,
    adapter_factory: Callable[[], Adapter],
    cfg: Any,
    mutants: frozenset[str],
    log: RunLog,
    clock: Callable[[], float],
    adapter_timeout_s: float = ADAPTER_TIMEOUT_S,
) -> type[RuleBasedStateMachine]:
    """The state machine of a slice (its ``swarm`` and ``rules``), driving a fresh adapter per
    example and leaving counts and the last failing run in ``log``."""
    return rules(swarm_machine(adapter_factory, cfg, mutants, log, clock, swarm, adapter_timeout_s), cfg)


__all__ = [
    "FAMILY",
    "RUN_MS",
    "STEP_MS",
    "ConformanceFailure",
    "HarnessAbort",
    "Jumps",
    "MachineRules",
    "RunLog",
    "SliceMachine",
    "Swarm",
    "Target",
    "family_on",
    "judged_step",
    "make_machine",
    "swarm_machine",
]
