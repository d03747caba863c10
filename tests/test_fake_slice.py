"""A third slice needs no change to shared code: a tiny fake slice, registered in a test, goes
through the gate (campaign, coverage, self-check), counterexample files, reports, replay, trace
generation and the command line by its registrations alone (its ``Slice`` in
conformance.registry, its ``SliceTools`` in traces.tools).

The fake slice models one thing: a clock that never goes back. Its judge accepts ``ClockAdvanced``
events whose time is not below the model's; its reference implementation reports the clock after
each Advance / Run; its one mutant (``fake-clock-goes-back``) reports, after a jump of a second or
more, a time one millisecond before the previous report, which the judge must call
non-conformance.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import strategies as st
from rich.console import Console

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_PASS, EXIT_VIOLATION
from kconform.ci.gate import run_gate
from kconform.ci.options import GateOptions
from kconform.conformance import registry
from kconform.conformance.judge import NON_CONFORMANCE, LockstepJudge, Violation
from kconform.conformance.machine import Jumps, SliceMachine, Swarm, Target
from kconform.conformance.runner import LockstepRun
from kconform.conformance.slice import Slice
from kconform.model.config import ConfigError
from kconform.model.configs import config_from_json
from kconform.traces import events as ev
from kconform.traces import operations as ops
from kconform.traces.counterexample import read_counterexample
from kconform.traces.generate import Plan, generate
from kconform.traces.oracle import run_oracle
from kconform.traces.tools import SliceTools, register_tools, unregister_tools

NAME = "fake-clock"
MUTANT = "fake-clock-goes-back"


@dataclasses.dataclass(frozen=True)
class ClockConfig:
    """The fake slice's configuration: how long a clock jump of the machine is."""

    jump_ms: int = 5_000

    def to_json(self) -> dict[str, Any]:
        return {"slice": NAME, "jump_ms": self.jump_ms}

    @staticmethod
    def from_json(obj: dict[str, Any]) -> ClockConfig:
        unknown = set(obj) - {"slice", "jump_ms"}
        if unknown:
            raise ConfigError(f"unknown key(s) {sorted(unknown)}")
        return ClockConfig(int(obj.get("jump_ms", 5_000)))


class ClockWentBack(Exception):
    """The fake model's NotEnabled: the clock would go back."""


@dataclasses.dataclass(frozen=True)
class _Entry:
    doc: str


class ClockJudge(LockstepJudge[int, ClockConfig]):
    """The model state is the clock; a ClockAdvanced event may not move it back."""

    invariant_registry: ClassVar[Mapping[str, _Entry]] = {"ClockNeverBack": _Entry("The clock never goes back.")}
    not_enabled = (ClockWentBack,)

    def __init__(self, cfg: ClockConfig, checked: frozenset[str] | None = None) -> None:
        super().__init__(cfg, checked, 0)
        self.handlers = {ev.ClockAdvanced: self._advanced}

    def _advanced(self, e: ev.ClockAdvanced) -> int:
        if e.now_ms < self.state:
            raise ClockWentBack(f"the clock would go back from {self.state} to {e.now_ms}")
        return e.now_ms

    def find_violations(self, pre: int, post: int) -> Sequence[Violation]:
        return ()


class ClockCluster:
    """The fake reference implementation: a clock reported after every Advance and Run."""

    name = "reference"

    def __init__(self) -> None:
        self.now = 0
        self.mutants: frozenset[str] = frozenset()

    def reset(self, config: Any, seed: int, mutants: frozenset[str]) -> list[ev.Event]:
        self.now, self.mutants = 0, mutants
        return [ev.ClockAdvanced(node=-1, now_ms=0)]

    def apply(self, op: ops.Operation) -> list[ev.Event]:
        if not isinstance(op, ops.Advance | ops.Run):
            return []
        before, self.now = self.now, self.now + op.ms
        back = MUTANT in self.mutants and op.ms >= 1_000
        return [ev.ClockAdvanced(node=-1, now_ms=before - 1 if back else self.now)]

    def close(self) -> None:
        pass


def _swarm(cfg: ClockConfig) -> Swarm:
    return Swarm(("scheduling", "jumps"), st.just(-1), (1,), Jumps("jumps", (cfg.jump_ms,)), Target("clock", _score))


def _score(run: LockstepRun) -> float:
    return float(run.judge.state)


def _no_more_rules(base: type[SliceMachine], cfg: ClockConfig) -> type[SliceMachine]:
    return base


@dataclasses.dataclass(frozen=True)
class _Scenario:
    ops: tuple[ops.Operation, ...]


SCENARIOS = {"one-long-jump": _Scenario((ops.Advance(ms=1_000),))}


def _report(cx: Any) -> str:
    return f"<html><body>{cx.verdict['kind']}</body></html>"


class ClockWorkload:
    """The fake slice's trace workload: clock jumps of a seeded random length."""

    def __init__(self, rng: random.Random, config: ClockConfig) -> None:
        self.rng = rng

    def next(self) -> ops.Operation:
        return ops.Advance(ms=self.rng.choice((100, 1_000)))


FAKE: Slice[ClockConfig] = Slice(
    name=NAME,
    title="a clock that never goes back (a test's fake slice)",
    config_type=ClockConfig,
    parse_config=ClockConfig.from_json,
    gate_configs=lambda: ((NAME, ClockConfig()),),
    describe=lambda cfg: f"slice={NAME} jump_ms={cfg.jump_ms}",
    make_judge=ClockJudge,
    invariants=lambda: ClockJudge.invariant_registry,
    make_reference=ClockCluster,
    mutants=lambda: {MUTANT: "reports the clock 1 ms early after a long jump"},
    swarm=_swarm,
    machine_rules=_no_more_rules,
    zoo=lambda cfg: list(SCENARIOS.values()),
    reachable_keys=lambda cfg: frozenset({"clock_advanced"}),
)
FAKE_TOOLS = SliceTools(name=NAME, report_html=_report, make_workload=ClockWorkload, workload_module=__name__)


@pytest.fixture
def fake() -> Iterator[Slice[ClockConfig]]:
    registry.register(FAKE)
    register_tools(FAKE_TOOLS)
    try:
        yield FAKE
    finally:
        registry.unregister(NAME)
        unregister_tools(NAME)


def _options(tmp_path: Path, **kw: Any) -> GateOptions:
    return GateOptions(config=ClockConfig(), seed=3, out=tmp_path, progress=False, steps=10, **kw)


def test_the_fake_slice_is_found_by_name_config_and_json(fake: Slice[ClockConfig]) -> None:
    assert registry.get(NAME) is fake
    assert registry.for_config(ClockConfig()) is fake
    assert NAME in registry.names()
    assert config_from_json({"slice": NAME, "jump_ms": 7}) == ClockConfig(7)


def test_gate_runs_the_fake_slice_and_reports_its_coverage(fake: Slice[ClockConfig], tmp_path: Path) -> None:
    console = Console(record=True, width=160)
    assert run_gate(_options(tmp_path, examples=5), console) == EXIT_PASS
    text = console.export_text()
    assert f"slice={NAME} jump_ms=5000" in text
    assert "covered 1 of 1 reachable (100.0 %)" in text
    assert "ClockNeverBack" in text


def test_gate_self_check_catches_the_fake_mutant_and_replays_it(fake: Slice[ClockConfig], tmp_path: Path) -> None:
    console = Console(record=True, width=160)
    assert run_gate(_options(tmp_path, self_check=True, seconds=20.0), console) == EXIT_PASS
    path = tmp_path / f"mutant-{MUTANT}.jsonl"
    cx = read_counterexample(path)
    assert cx.config == ClockConfig() and cx.verdict["kind"] == NON_CONFORMANCE
    assert (tmp_path / f"mutant-{MUTANT}.html").read_text() == "<html><body>non-conformance</body></html>"
    assert cli.main(["replay", str(path)]) == EXIT_VIOLATION
    assert cli.main(["replay", str(path), "--model-only"]) == EXIT_VIOLATION


def test_the_command_line_offers_the_fake_slice(fake: Slice[ClockConfig], tmp_path: Path) -> None:
    common = ["--examples", "3", "--steps", "5", "--no-progress", "--out", str(tmp_path)]
    assert cli.main(["gate", "--slice", NAME, *common]) == EXIT_PASS
    assert cli.main(["gate", "--slice", NAME, "--mutant", MUTANT, *common]) == EXIT_VIOLATION


def test_without_registration_the_fake_slice_is_unknown() -> None:
    with pytest.raises(registry.UnknownSlice):
        registry.for_config(ClockConfig())
    with pytest.raises(ConfigError, match="unknown slice 'fake-clock'"):
        config_from_json({"slice": NAME})


def test_trace_generation_and_the_oracle_run_the_fake_slice(fake: Slice[ClockConfig], tmp_path: Path) -> None:
    result = generate(tmp_path / "corpus", Plan(events=120, seed=1, trace_events=40, config=ClockConfig()))
    manifest = result.manifest
    assert manifest.events >= 120
    assert manifest.generator["slice"] == NAME and manifest.traces[0].config == ClockConfig().to_json()
    oracle = run_oracle(tmp_path / "corpus", manifest)
    assert oracle.events == manifest.events and not oracle.flagged and not oracle.read.errors
