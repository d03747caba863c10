"""Budgeted Hypothesis campaigns over the lockstep machine (what the gate and benchmarks run).

A campaign first runs the slice's known-bug zoo (Slice.zoo), then its state machine for a
budget of examples or seconds, in rounds of examples with seeds derived from the campaign seed, so
that a time budget can stop between rounds and a campaign is reproducible from its seed. The first
failure ends the campaign after Hypothesis has shrunk it; the shrunk run is returned for the
counterexample file.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, settings, stateful
from hypothesis import seed as hypothesis_seed
from hypothesis.stateful import RuleBasedStateMachine

from kconform.conformance import walk
from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.machine import ConformanceFailure, HarnessAbort, RunLog, make_machine
from kconform.conformance.registry import for_config
from kconform.conformance.runner import ADAPTER_TIMEOUT_S, LockstepRun, watched
from kconform.conformance.scenarios import first_failing_run
from kconform.model.configs import AnyConfig

ROUND_EXAMPLES = 100
ENGINES = ("hypothesis", "walk")
"""How a campaign's random search runs: Hypothesis' stateful testing (targeting, shrinking by
Hypothesis; ``run_campaign``'s default) or the seeded random walk over the same machine
(conformance.walk: no Hypothesis per step, its own shrinker)."""

GC_THRESHOLD = 20_000
"""The cyclic garbage collector's first-generation threshold while a campaign runs (Python's default
is 700): a campaign allocates millions of short-lived immutable states and events, almost none of
them in cycles, and the default made the collector scan them about every 700 allocations (about
20 % of the exactly-once zoo's CPU, 8-15 % of a replication campaign's; docs/benchmarks.md). The
older generations' thresholds are kept, so cycles (an adapter's nodes) are still collected."""


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """GC_THRESHOLD for the block; the previous thresholds back on every exit."""
    before = gc.get_threshold()
    gc.set_threshold(max(GC_THRESHOLD, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class _FirstFailure(BaseException):
    """Ends an unshrunk Hypothesis campaign at its first failing run: Hypothesis only catches
    Exception, so this leaves its engine at once (as HarnessAbort does). Without it, a failure found
    during a target phase's hill climbing let the climb run to its end: up to max_examples * 10
    runs with no verdict to gain (a mutant killed at run 70 of a 100-example round ran 2,092)."""


def _stopping_at_first_failure(machine: type[RuleBasedStateMachine]) -> type[RuleBasedStateMachine]:
    """``machine`` whose teardown raises _FirstFailure after a failing run (its counts and the
    failing run already in the RunLog: the base teardown and judged_step put them there)."""

    class FirstFailureMachine(machine):  # type: ignore[valid-type,misc]
        def teardown(self) -> None:
            super().teardown()
            run = getattr(self, "run", None)
            if run is not None and run.failure is not None:
                raise _FirstFailure

    FirstFailureMachine.__name__ = machine.__name__
    return FirstFailureMachine


_get_state_machine_test: Callable[..., Callable[[], None]] = stateful.get_state_machine_test
"""Hypothesis' own entry point for running a state machine as one test (HypoFuzz uses it too);
typed here because older Hypothesis releases ship it without annotations."""


@dataclass
class CampaignResult:
    """What a campaign did: runs, steps, per-invariant counts and the shrunk failing run if any."""

    log: RunLog
    failure: LockstepRun | None
    seconds: float
    examples: int
    error: AdapterError | None = None
    """The harness error that ended the campaign early; what was checked until then is in ``log``."""

    @property
    def passed(self) -> bool:
        return self.failure is None


def run_campaign(
    adapter_factory: Callable[[], Adapter],
    cfg: AnyConfig,
    mutants: frozenset[str],
    *,
    seed: int,
    examples: int | None = None,
    seconds: float | None = None,
    steps: int = 50,
    progress: Callable[[int, int], None] | None = None,
    zoo: bool = True,
    adapter_timeout_s: float = ADAPTER_TIMEOUT_S,
    shrink: bool = True,
    engine: str = "hypothesis",
) -> CampaignResult:
    """Run the zoo (unless ``zoo`` is False), then random search until the example or time budget is
    spent or a failure is found (and shrunk, unless ``shrink`` is False: the verdict is the same,
    the failing run is the first one found and the campaign ends with it; mutation testing only
    needs the verdict). ``engine`` is one of ENGINES."""
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r}: expected one of {', '.join(ENGINES)}")
    with _fewer_collections(), watched():  # one SIGALRM timer for the campaign's adapter calls
        budget = (examples, seconds, steps)
        return _campaign(adapter_factory, cfg, mutants, seed, budget, progress, zoo, adapter_timeout_s, shrink, engine)


def _campaign(
    adapter_factory: Callable[[], Adapter],
    cfg: AnyConfig,
    mutants: frozenset[str],
    seed: int,
    budget: tuple[int | None, float | None, int],
    progress: Callable[[int, int], None] | None,
    zoo: bool,
    adapter_timeout_s: float,
    shrink: bool,
    engine: str,
) -> CampaignResult:
    """run_campaign's work; ``budget`` is (examples, seconds, steps)."""
    examples, seconds, steps = budget
    if examples is None and seconds is None:
        examples = 100
    part = for_config(cfg)
    clock = time.perf_counter
    log = RunLog()
    started = time.perf_counter()
    log.started = started
    try:
        scenario_run = first_failing_run(adapter_factory, cfg, mutants, part.zoo(cfg)) if zoo else None
    except AdapterError as exc:
        return CampaignResult(log, None, time.perf_counter() - started, 0, error=exc)
    if scenario_run is not None:
        log.absorb(scenario_run)
        log.seconds_to_first_failure = time.perf_counter() - started
        return CampaignResult(log, scenario_run, time.perf_counter() - started, 0)
    if engine == "walk":
        return _walk_campaign(
            adapter_factory, cfg, mutants, log, seed, examples, seconds, steps, progress, adapter_timeout_s, shrink
        )
    done = 0
    round_no = 0
    while True:
        if examples is not None and done >= examples:
            break
        if seconds is not None and time.perf_counter() - started >= seconds:
            break
        n = ROUND_EXAMPLES if examples is None else min(ROUND_EXAMPLES, examples - done)
        swarm = part.swarm(cfg)
        machine = make_machine(swarm, part.machine_rules, adapter_factory, cfg, mutants, log, clock, adapter_timeout_s)
        if not shrink:
            machine = _stopping_at_first_failure(machine)
        test = _get_state_machine_test(
            machine,
            settings=settings(
                max_examples=n,
                stateful_step_count=steps,
                deadline=None,
                database=None,
                phases=[Phase.generate, Phase.target, Phase.shrink] if shrink else [Phase.generate, Phase.target],
                suppress_health_check=list(HealthCheck),
                verbosity=Verbosity.quiet,
                report_multiple_bugs=False,
            ),
        )
        test = hypothesis_seed(seed * 100_003 + round_no)(test)
        round_no += 1
        runs_before = log.runs
        try:
            test()
        except HarnessAbort as abort:
            return CampaignResult(log, None, time.perf_counter() - started, done, error=abort.error)
        except (ConformanceFailure, _FirstFailure):
            assert log.last_failure is not None
            return CampaignResult(log, log.last_failure, time.perf_counter() - started, done + (log.runs - runs_before))
        done += n
        if progress is not None:
            progress(done, log.runs)
    return CampaignResult(log, None, time.perf_counter() - started, done)


def _walk_campaign(
    adapter_factory: Callable[[], Adapter],
    cfg: AnyConfig,
    mutants: frozenset[str],
    log: RunLog,
    seed: int,
    examples: int | None,
    seconds: float | None,
    steps: int,
    progress: Callable[[int, int], None] | None,
    adapter_timeout_s: float,
    shrink: bool,
) -> CampaignResult:
    """Random search by the walk engine (conformance.walk) after the zoo: example ``i`` is walked
    from its own seeded PRNG; the first failing walk is shrunk (unless ``shrink`` is False) on a
    machine whose runs are not counted in ``log``."""
    part = for_config(cfg)
    clock = time.perf_counter
    swarm = part.swarm(cfg)
    machine = make_machine(swarm, part.machine_rules, adapter_factory, cfg, mutants, log, clock, adapter_timeout_s)
    rules = walk.rules_of(machine)
    started = log.started
    done = 0
    while (examples is None or done < examples) and (seconds is None or clock() - started < seconds):
        rng = random.Random(f"kconform-walk:{seed}:{done}")
        try:
            recorded, outcome = walk.random_walk(machine, rules, swarm.families, rng, steps)
        except HarnessAbort as abort:
            return CampaignResult(log, None, clock() - started, done, error=abort.error)
        done += 1
        if outcome.run is not None and outcome.run.failure is not None:
            failing = outcome.run
            if shrink:
                quiet = RunLog(started=started)
                shrinker = make_machine(
                    swarm, part.machine_rules, adapter_factory, cfg, mutants, quiet, clock, adapter_timeout_s
                )
                try:
                    failing = walk.shrink(shrinker, rules, recorded, failing)
                except HarnessAbort as abort:
                    return CampaignResult(log, None, clock() - started, done, error=abort.error)
            log.last_failure = failing
            return CampaignResult(log, failing, clock() - started, done)
        if progress is not None and done % ROUND_EXAMPLES == 0:
            progress(done, log.runs)
    if progress is not None and done % ROUND_EXAMPLES != 0:
        progress(done, log.runs)
    return CampaignResult(log, None, clock() - started, done)
