"""The parsed command line, as plain frozen values handed to the engines (gate, replay, explore)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kconform.model.actions import SearchBounds
from kconform.model.configs import AnyConfig

IMPLEMENTATIONS: tuple[str, ...] = ("reference",)
"""Implementations the command line accepts for --implementation; the first is the default."""

DEFAULT_OUT_DIR = Path("kconform-out")
"""Where counterexample files go when --out is not given."""

GATE_ENGINE = "walk"
"""The search engine (conformance.hunt.ENGINES) of ``kconform gate`` and of the mutation score of
"the default gate" unless told otherwise (``--engine hypothesis``): the walk, which on the same
mutants killed as many as Hypothesis or more at the same example budget, at 2-3x the events per
CPU-second (docs/benchmarks.md, "The walk as the gate's default")."""


@dataclass(frozen=True)
class GateOptions:
    """Options of ``kconform gate``.

    ``examples`` and ``seconds`` are mutually exclusive budgets; both None means the gate's default
    budget. ``seed`` None means "choose one and print it". ``steps`` None means the gate's default
    maximum number of operations per example. ``junit`` None means no JUnit report.
    ``min_coverage`` (a percentage) fails a passing campaign whose handler-outcome coverage
    (conformance.coverage) is lower; None means coverage is only reported.
    """

    config: AnyConfig
    examples: int | None = None
    seconds: float | None = None
    seed: int | None = None
    implementation: str = IMPLEMENTATIONS[0]
    mutants: tuple[str, ...] = ()
    self_check: bool = False
    junit: Path | None = None
    out: Path = DEFAULT_OUT_DIR
    steps: int | None = None
    progress: bool = True
    min_coverage: float | None = None
    engine: str = GATE_ENGINE
    """The random search's engine (conformance.hunt.ENGINES): the seeded walk (the default,
    GATE_ENGINE) or Hypothesis."""

    def __post_init__(self) -> None:
        assert self.examples is None or self.seconds is None, "--examples and --seconds are exclusive"
        assert self.min_coverage is None or 0 <= self.min_coverage <= 100, "--min-coverage is a percentage"


@dataclass(frozen=True)
class ReplayOptions:
    """Options of ``kconform replay``: the implementation to run the file's operations against
    (the file's own unless overridden) or, with ``model_only``, none (judge the recorded events),
    and the budgets of one step and of the whole replay (past either: exit 2 naming the step)."""

    implementation: str
    model_only: bool = False
    step_timeout_s: float = 60.0
    """The longest one step may take (``--timeout``; kconform.traces.replay.DEFAULT_STEP_TIMEOUT_S)."""
    run_timeout_s: float = 1800.0
    """The longest the whole replay may take (``--run-timeout``)."""


@dataclass(frozen=True)
class ExploreOptions:
    """Options of ``kconform explore``: the model's configuration, the search bounds, the
    invariants to check (None: all), the depth and state caps of the breadth-first search, where
    the counterexample file goes and whether to show progress."""

    config: AnyConfig
    """A config of a slice with a model search (conformance.registry.search_of)."""
    bounds: SearchBounds = field(default_factory=SearchBounds)
    invariants: frozenset[str] | None = None
    max_depth: int = 50
    max_states: int = 1_000_000
    out: Path = DEFAULT_OUT_DIR
    progress: bool = True
