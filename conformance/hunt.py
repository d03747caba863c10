"""Budgeted Hypothesis campaigns over the lockstep machine (what the gate and benchmarks run).

A campaign first runs the slice's known-bug zoo (Slice.zoo), then its state machine for a
budget of examples or seconds, in rounds of examples with seeds derived from the campaign seed, so
that a time budget can stop between rounds and a campaign is reproducible from its seed. The first
failure ends the campaign after Hypothesis has shrunk it; the shrunk run is returned for the
counterexample file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, settings, stateful
from hypothesis import seed as hypothesis_seed

from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.machine import ConformanceFailure, HarnessAbort, RunLog, make_machine
from kconform.conformance.registry import for_config
from kconform.conformance.runner import ADAPTER_TIMEOUT_S, LockstepRun
from kconform.conformance.scenarios import first_failing_run
from kconform.model.configs import AnyConfig

ROUND_EXAMPLES = 100

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
) -> CampaignResult:
    """Run the zoo (unless ``zoo`` is False), then random search until the example or time budget is
    spent or a failure is found (and shrunk, unless ``shrink`` is False: the verdict is the same,
    the failing run is the first one found; mutation testing only needs the verdict)."""
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
        except ConformanceFailure:
            assert log.last_failure is not None
            return CampaignResult(log, log.last_failure, time.perf_counter() - started, done + (log.runs - runs_before))
        done += n
        if progress is not None:
            progress(done, log.runs)
    return CampaignResult(log, None, time.perf_counter() - started, done)
