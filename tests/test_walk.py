"""The walk engine (conformance.walk, ``--engine walk``): the slices' machine rules driven by a
seeded random walk, reproducible from the campaign seed, its failures shrunk to a run that fails
the same way and replays; the gate's files and exit codes are those of the Hypothesis engine."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from hypothesis import strategies as st

from kconform.ci import cli
from kconform.ci.gate import counterexample_of
from kconform.conformance import walk
from kconform.conformance.adapter import Adapter
from kconform.conformance.hunt import CampaignResult, run_campaign
from kconform.conformance.machine import RunLog, make_machine
from kconform.conformance.registry import all_slices
from kconform.model.config import ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.traces.counterexample import read_counterexample
from kconform.traces.replay import make_adapter, replay


def _campaign(
    cfg: AnyConfig, seed: int, examples: int, mutants: frozenset[str] = frozenset(), shrink: bool = True
) -> CampaignResult:
    return run_campaign(
        lambda: make_adapter("reference", cfg),
        cfg,
        mutants,
        seed=seed,
        examples=examples,
        zoo=False,
        engine="walk",
        shrink=shrink,
    )


def test_a_campaign_is_reproducible_from_its_seed() -> None:
    cfg = ReplicationConfig()
    a, b, other = _campaign(cfg, 4, 6), _campaign(cfg, 4, 6), _campaign(cfg, 5, 6)
    assert a.passed and a.log.runs == 6
    assert (a.log.steps, a.log.actions, a.log.covered) == (b.log.steps, b.log.actions, b.log.covered)
    assert (other.log.steps, other.log.actions) != (a.log.steps, a.log.actions)  # near miss: another seed


def test_every_slice_machine_can_be_walked() -> None:
    """Every rule of every slice's gate configurations draws only what the walk can draw (a new
    rule with another strategy fails here, not silently in a campaign)."""
    for part in all_slices():
        for _name, cfg in part.gate_configs():

            def factory(cfg: AnyConfig = cfg) -> Adapter:
                return make_adapter("reference", cfg)

            machine = make_machine(
                part.swarm(cfg), part.machine_rules, factory, cfg, frozenset(), RunLog(), time.perf_counter
            )
            names = {r.name for r in walk.rules_of(machine)}
            assert {"tick", "run_healthy", "deliver_to"} <= names


def test_drawings_stay_in_the_strategy_and_others_are_refused() -> None:
    rng = random.Random(1)
    ints = walk.arg_of("n", st.integers(-1, 3), "M.r")
    picks = walk.arg_of("p", st.sampled_from(("a", "b")), "M.r")
    flags = walk.arg_of("f", st.booleans(), "M.r")
    assert {ints.draw(rng) for _ in range(200)} == {-1, 0, 1, 2, 3} and ints.simpler == (0,)
    assert {picks.draw(rng) for _ in range(50)} == {"a", "b"} and picks.simpler == ("a",)
    assert {flags.draw(rng) for _ in range(50)} == {True, False}
    one = walk.arg_of("o", st.sampled_from((5000,)), "M.r")  # Hypothesis makes it just(5000)
    assert {one.draw(rng) for _ in range(5)} == {5000} and one.simpler == (5000,)
    assert walk.arg_of("j", st.just(3), "M.r").draw(rng) == 3
    with pytest.raises(TypeError, match=r"M\.r: the walk engine cannot draw argument 'x'"):
        walk.arg_of("x", st.text(), "M.r")
    with pytest.raises(TypeError, match="cannot draw"):
        walk.arg_of("y", st.sampled_from((1, 2)).map(str), "M.r")


def test_a_failure_is_shrunk_and_replays() -> None:
    """A mutant (no-epoch-fencing, KIP-320) found by random search alone: the shrunk run fails
    the same way, is no longer than the walk that found it, and its counterexample replays."""
    cfg = ReplicationConfig()
    found = _campaign(cfg, 1, 50, frozenset({"no-epoch-fencing"}), shrink=False)
    shrunk = _campaign(cfg, 1, 50, frozenset({"no-epoch-fencing"}))
    assert found.failure is not None and shrunk.failure is not None
    assert found.failure.failure is not None and shrunk.failure.failure is not None
    assert shrunk.failure.failure.name == found.failure.failure.name
    assert shrunk.failure.failing_step is not None and found.failure.failing_step is not None
    assert shrunk.failure.failing_step <= found.failure.failing_step
    cx = counterexample_of(shrunk.failure, "reference")
    adapter = make_adapter("reference", cx.config)
    try:
        assert replay(cx, adapter).reproduces(cx)
    finally:
        adapter.close()


def test_the_clean_reference_passes_every_slice() -> None:
    for part in all_slices():
        for name, cfg in part.gate_configs():
            result = _campaign(cfg, 2, 3)
            assert result.passed and result.error is None, name
            assert result.log.runs == 3 and sum(result.log.actions.values()) > 0, name


def test_gate_exit_codes_and_files(tmp_path: Path) -> None:
    base = ["gate", "--engine", "walk", "--examples", "20", "--seed", "3", "--no-progress"]
    assert cli.main([*base, "--out", str(tmp_path / "clean")]) == 0
    assert cli.main([*base, "--out", str(tmp_path / "bug"), "--mutant", "no-epoch-fencing"]) == 1
    files = sorted((tmp_path / "bug").glob("counterexample-3.*"))
    assert [f.suffix for f in files] == [".html", ".jsonl"]
    assert read_counterexample(files[1]).verdict["name"] == "fetch_handled"
    assert cli.main(["replay", str(files[1])]) == 1  # the recorded failure, reproduced
    assert cli.main([*base[:2], "nope"]) == 2
