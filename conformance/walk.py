"""The walk engine: a slice's state machine driven by a seeded random walk instead of Hypothesis
(issue 17, speed; opt-in: ``kconform gate --engine walk``, ``run_campaign(engine="walk")``).

Hypothesis costs about 170 µs per operation in the gate's campaigns (a filtered ``sampled_from``
over the rules with its feature flags, about 18 draws per step, the data tree's bookkeeping), close
to half of a campaign. The walk runs the very rules of the slice's machine (``make_machine``: the
same class, preconditions and argument strategies) from one ``random.Random`` per example:

- each example draws the LockstepRun seed (0..2**16) and the swarm families (each on with
  probability 1/2) and calls the machine's ``boot``; then, like Hypothesis' own feature flags,
  disables each rule with a probability drawn for the example (uniform in [0, 254/255]), keeping
  at least one; then ``steps`` times picks a rule uniformly among the enabled ones whose
  preconditions hold (among all whose preconditions hold when no enabled one's does) and draws
  its arguments from their strategies (``integers``, ``sampled_from`` and ``booleans``: a rule
  with another strategy is refused with a TypeError naming it);
- example ``i`` of a campaign with seed ``s`` uses ``random.Random(f"kconform-walk:{s}:{i}")``, so a
  campaign is reproducible from its seed and independent of the process (string seeds hash with
  SHA-512, not with PYTHONHASHSEED);
- every call made is recorded (``Call``); a failing walk is shrunk by ``shrink``: delete chunks of
  calls (halves down to single calls, repeated while it helps), then simplify each argument toward
  the strategy's simplest value (the lower bound or 0, the first element, False) and the seed
  toward 0, re-running the machine each time and keeping a candidate only if it fails with the
  same verdict and invariant; bounded by ``SHRINK_RUNS`` re-runs and ``SHRINK_SECONDS``. The
  shrunk run is an ordinary ``LockstepRun``: the gate writes the same counterexample file, report
  and exit code as for a Hypothesis failure, and ``kconform replay`` reproduces it.

What it does not do: Hypothesis' targeting (hill climbing on the slice's ``Target`` score) and its
example database. Rules whose precondition is false at a step are skipped during a re-run while
shrinking (a deleted call may make a later one invalid), as Hypothesis' shrinker only keeps valid
runs.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine

from kconform.conformance.machine import FAMILY, ConformanceFailure
from kconform.conformance.runner import LockstepRun
from kconform.model.fast_init import fast_frozen_init

SHRINK_RUNS = 2_000
"""Re-runs a shrink may take at most."""
SHRINK_SECONDS = 120.0
"""Wall-clock seconds a shrink may take at most (Hypothesis' own shrink limit is 300 s)."""
SEED_MAX = 2**16
"""The LockstepRun seeds an example draws from (as the machine's ``boot`` strategy)."""


@dataclass(frozen=True)
class Arg:
    """How one rule argument is drawn: ``draw(rng)``; ``simpler`` lists the values a shrink tries
    in place of a drawn one, simplest first."""

    name: str
    draw: Callable[[random.Random], object]
    simpler: tuple[object, ...]


def _unwrap(strategy: st.SearchStrategy[Any]) -> Any:
    """The strategy behind Hypothesis' lazy wrappers (``st.integers`` and ``st.booleans`` are lazy)."""
    seen = 0
    while hasattr(strategy, "wrapped_strategy") and seen < 10:
        inner = strategy.wrapped_strategy
        if inner is strategy:
            break
        strategy, seen = inner, seen + 1
    return strategy


def arg_of(name: str, strategy: st.SearchStrategy[Any], where: str) -> Arg:
    """The walk's drawing of a rule argument given as a Hypothesis strategy: ``integers(a, b)``,
    ``sampled_from(elements)`` (``just(x)`` too: a one-element ``sampled_from`` is one) and
    ``booleans()``; anything else is refused (TypeError naming
    ``where`` and the strategy), so a rule the walk cannot run is never silently skipped."""
    s = _unwrap(strategy)
    kind = type(s).__name__
    if kind == "IntegersStrategy" and s.start is not None and s.end is not None:
        lo, hi = int(s.start), int(s.end)
        simplest = 0 if lo <= 0 <= hi else lo
        return Arg(name, lambda rng: rng.randint(lo, hi), (simplest,))
    if kind in ("SampledFromStrategy", "JustStrategy") and not getattr(s, "_transformations", ()):
        # sampled_from of one element is Hypothesis' JustStrategy (a SampledFromStrategy)
        elements = tuple(s.elements)
        if not elements:
            raise TypeError(f"{where}: argument {name!r} samples from nothing")
        return Arg(name, lambda rng: elements[rng.randrange(len(elements))], (elements[0],))
    if kind == "BooleansStrategy":
        return Arg(name, lambda rng: rng.random() < 0.5, (False,))
    raise TypeError(
        f"{where}: the walk engine cannot draw argument {name!r} from {strategy!r} "
        "(it draws integers(a, b), sampled_from(...) and booleans())"
    )


Precondition = Callable[[Any], bool]
"""A rule's precondition: asked with the machine."""


@dataclass(frozen=True)
class WalkRule:
    """One rule of a machine as the walk runs it. ``families`` are the swarm families its
    ``family_on`` preconditions ask for (fixed for a run once ``boot`` chose them), ``checks`` its
    other preconditions (asked at every step)."""

    name: str
    function: Callable[..., None]
    preconditions: tuple[Precondition, ...]
    args: tuple[Arg, ...]
    families: frozenset[str] = frozenset()
    checks: tuple[Precondition, ...] = ()

    def valid(self, machine: Any) -> bool:
        return all(p(machine) for p in self.preconditions)

    def can_run(self, families: frozenset[str]) -> bool:
        """Whether its family preconditions hold in a run of ``families`` (``valid`` is then
        ``checks`` alone)."""
        return self.families <= families


def _split(
    preconditions: tuple[Callable[[Any], bool], ...],
) -> tuple[frozenset[str], tuple[Callable[[Any], bool], ...]]:
    """The families asked for by ``family_on`` preconditions, and the other preconditions in order."""
    families = frozenset(getattr(p, FAMILY) for p in preconditions if hasattr(p, FAMILY))
    return families, tuple(p for p in preconditions if not hasattr(p, FAMILY))


def rules_of(machine_class: type[RuleBasedStateMachine]) -> tuple[WalkRule, ...]:
    """The rules of a slice's machine (by name, as Hypothesis collects them), each with its
    preconditions and argument drawings. The machine must have one initialize rule, the swarm
    machine's ``boot``; rules using bundles are refused."""
    state = machine_class.setup_state()
    names = [r.function.__name__ for r in state.initializers]
    if names != ["boot"]:
        raise TypeError(f"{machine_class.__name__}: the walk engine needs one initialize rule, boot; found {names}")
    out = []
    for r in sorted(state.rules, key=lambda r: r.function.__name__):
        where = f"{machine_class.__name__}.{r.function.__name__}"
        if r.bundles or r.targets:
            raise TypeError(f"{where}: the walk engine does not run rules with bundles")
        args = tuple(arg_of(k, v, where) for k, v in r.arguments.items())
        preconditions = tuple(r.preconditions)
        families, checks = _split(preconditions)
        out.append(WalkRule(r.function.__name__, r.function, preconditions, args, families, checks))
    return tuple(out)


@fast_frozen_init
@dataclass(frozen=True)
class Call:
    """One rule call of a walk: the rule's name and its arguments in the rule's order."""

    rule: str
    args: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class Walk:
    """One example as the walk ran it: what ``boot`` got and the rule calls after it."""

    seed: int
    families: frozenset[str]
    calls: tuple[Call, ...]


@dataclass
class Outcome:
    """What running a walk did: the machine's run, and how many calls ran before it failed
    (``failed_at``: the index of the failing call, None if none failed)."""

    run: LockstepRun | None
    failed_at: int | None


def random_walk(
    machine_class: type[RuleBasedStateMachine],
    rules: tuple[WalkRule, ...],
    families: tuple[str, ...],
    rng: random.Random,
    steps: int,
) -> tuple[Walk, Outcome]:
    """One example: boot, then up to ``steps`` rule calls drawn from ``rng`` (see the module's
    docstring). A ConformanceFailure ends the walk (recorded in the outcome); HarnessAbort and
    anything else propagate. The machine's teardown always runs."""
    seed = rng.randint(0, SEED_MAX)
    on = frozenset(f for f in families if rng.random() < 0.5)
    p_disabled = rng.randrange(255) / 255
    enabled = [r for r in rules if rng.random() >= p_disabled]
    if not enabled:
        enabled = [rules[rng.randrange(len(rules))]]
    calls: list[Call] = []
    machine: Any = machine_class()  # a SliceMachine subclass: boot, run
    outcome = Outcome(None, None)
    try:
        try:
            machine.boot(seed=seed, families=set(on))
            # The family preconditions are fixed for the run: asked once here; a step asks the
            # others (the same rules in the same order as asking all of them at every step).
            chosen: frozenset[str] = machine.families
            enabled = [r for r in enabled if r.can_run(chosen)]
            runnable = [r for r in rules if r.can_run(chosen)]
            fixed = not any(r.checks for r in runnable)
            for _ in range(steps):
                if fixed:
                    valid = enabled or runnable
                else:
                    valid = [r for r in enabled if _holds(r, machine)] or [r for r in runnable if _holds(r, machine)]
                if not valid:
                    break
                rule = valid[rng.randrange(len(valid))] if len(valid) > 1 else valid[0]
                kwargs = {a.name: a.draw(rng) for a in rule.args}
                calls.append(Call(rule.name, tuple(kwargs.items())))
                rule.function(machine, **kwargs)
        except ConformanceFailure:
            outcome.failed_at = len(calls) - 1 if calls else None  # None: at boot
        outcome.run = machine.run
    finally:
        _dispose(machine)
    return Walk(seed, on, tuple(calls)), outcome


def _dispose(machine: Any) -> None:
    """The machine's teardown, then forget what it holds: Hypothesis' rule strategy refers back to
    the machine, so a machine left whole is freed only by the cyclic collector, with its run (every
    step and event) and its adapter; dropped here, they go as soon as the caller lets go of them."""
    try:
        machine.teardown()
    finally:
        vars(machine).clear()


def _holds(rule: WalkRule, machine: Any) -> bool:
    """Whether the preconditions of ``rule`` other than its families hold now."""
    checks = rule.checks
    return not checks or all(p(machine) for p in checks)


def rerun(machine_class: type[RuleBasedStateMachine], rules: dict[str, WalkRule], walk: Walk) -> Outcome:
    """Run a recorded walk again (a shrink candidate): calls whose preconditions are false at their
    turn are skipped. The machine's teardown always runs."""
    machine: Any = machine_class()  # a SliceMachine subclass: boot, run
    outcome = Outcome(None, None)
    try:
        ran = 0
        try:
            machine.boot(seed=walk.seed, families=set(walk.families))
            for call in walk.calls:
                rule = rules[call.rule]
                if not rule.valid(machine):
                    continue
                ran += 1
                rule.function(machine, **dict(call.args))
        except ConformanceFailure:
            outcome.failed_at = ran - 1 if ran else None
        outcome.run = machine.run
    finally:
        _dispose(machine)
    return outcome


def _key(run: LockstepRun | None) -> tuple[str, str] | None:
    if run is None or run.failure is None:
        return None
    return (run.failure.verdict, run.failure.name)


def shrink(
    machine_class: type[RuleBasedStateMachine],
    rules: tuple[WalkRule, ...],
    walk: Walk,
    run: LockstepRun,
    *,
    max_runs: int = SHRINK_RUNS,
    max_seconds: float = SHRINK_SECONDS,
) -> LockstepRun:
    """A shorter, simpler walk failing with the same verdict and invariant as ``run`` (the run of
    ``walk``), and its run; ``run`` itself when nothing smaller fails so (see the module's
    docstring)."""
    by_name = {r.name: r for r in rules}
    by_args = {r.name: {a.name: a for a in r.args} for r in rules}
    want = _key(run)
    assert want is not None, "shrink needs a failing run"
    started = time.perf_counter()
    budget = [max_runs]
    best, best_run = walk, run

    def fails(candidate: Walk) -> bool:
        nonlocal best, best_run
        if budget[0] <= 0 or time.perf_counter() - started > max_seconds:
            return False
        budget[0] -= 1
        got = rerun(machine_class, by_name, candidate)
        if _key(got.run) != want:
            return False
        assert got.run is not None
        calls = () if got.failed_at is None else candidate.calls[: got.failed_at + 1]  # None: at boot
        best, best_run = replace(candidate, calls=calls), got.run
        return True

    def out_of_budget() -> bool:
        return budget[0] <= 0 or time.perf_counter() - started > max_seconds

    improved = True
    while improved and not out_of_budget():
        improved = False
        size = max(1, len(best.calls) // 2)
        while size >= 1 and not out_of_budget():
            i = len(best.calls) - size
            while i >= 0 and not out_of_budget():
                calls = best.calls[:i] + best.calls[i + size :]
                if fails(replace(best, calls=calls)):
                    improved = True
                    i = min(i, len(best.calls) - size)
                else:
                    i -= 1
            size //= 2
        for n in range(len(best.calls)):
            if n >= len(best.calls) or out_of_budget():
                break
            call = best.calls[n]
            for k, (name, value) in enumerate(call.args):
                for simple in by_args[call.rule][name].simpler:
                    if simple == value:
                        continue
                    args = (*call.args[:k], (name, simple), *call.args[k + 1 :])
                    calls = (*best.calls[:n], Call(call.rule, args), *best.calls[n + 1 :])
                    if fails(replace(best, calls=calls)):
                        improved = True
                        break
                if n >= len(best.calls) or best.calls[n] is not call:
                    break
        if best.seed != 0 and fails(replace(best, seed=0)):
            improved = True
    return best_run


__all__ = [
    "SHRINK_RUNS",
    "SHRINK_SECONDS",
    "Arg",
    "Call",
    "Outcome",
    "Walk",
    "WalkRule",
    "arg_of",
    "random_walk",
    "rerun",
    "rules_of",
    "shrink",
]
