"""Fuzzing as part of the suite: every input kind of kconform.ci.fuzzing.KINDS, damaged byte-wise and
schema-aware by Hypothesis-chosen mutations, run through the real command line. No traceback, no
hang, every damage that must be refused is refused (exit 2), a re-encoding keeps the exit code.
Small budgets here; ``python -m kconform.ci.benchmarks.fuzz`` runs the large ones."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kconform.ci.fuzzing import (
    KINDS,
    MUST_REFUSE,
    REENCODED,
    InputKind,
    Mutation,
    run_case,
    stub_engines,
)

EXAMPLES = 12
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


FUZZED: dict[str, str] = {
    "counterexample": "counterexample files (kconform replay, model-only and re-driving the reference)",
    "trace": "trace files",
    "corpus": "Parquet corpora and their manifests",
    "history": "kconform probe --check on probe histories (conformance/probe/history.py)",
    "logs": "kconform logs check on Kafka logs and dump-log output (traces/logs)",
    "wire": "kconform serve's traces with damaged wire requests: refused at the boundary (exit 2, naming "
    "the step and field), never a traceback, model-only or re-driving the reference",
}
"""The input kinds fuzzed here, each with what its damaged samples go through."""


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    root = tmp_path_factory.mktemp("fuzz-samples")
    return {name: kind.samples(root / name) for name, kind in KINDS.items()}


def _check(kind: InputKind, sample: Path, rng: random.Random, command: int, work: Path) -> Mutation:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    dst = work / ("input" + (".jsonl" if sample.suffix == ".jsonl" else sample.suffix))
    mutation = kind.mutate(rng, sample, dst)
    build = kind.commands[command % len(kind.commands)]
    outcome = run_case(build(dst, work), hang_s=120)
    label = f"{mutation.what}: {outcome.stderr[-400:]}"
    assert not outcome.hang, label
    assert not outcome.traceback, label
    assert outcome.code in kind.clean_exits | {2}, label
    if mutation.expect == MUST_REFUSE:
        assert outcome.code == 2, label
    if mutation.expect == REENCODED:
        clean = work / "clean"
        clean.mkdir()
        assert outcome.code == run_case(build(sample, clean)).code, label
    return mutation


def test_every_kind_has_valid_samples(samples: dict[str, list[Path]], tmp_path: Path) -> None:
    """The samples themselves are read without complaint (exit 0 or 1: the counterexamples fail)."""
    for name in FUZZED:
        kind = KINDS[name]
        assert samples[name], name
        for sample in samples[name]:
            work = tmp_path / name
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            outcome = run_case(kind.commands[0](sample, work))
            assert outcome.code in kind.clean_exits and not outcome.traceback, (sample, outcome.stderr)


@pytest.mark.parametrize("name", list(FUZZED))
@FUZZ
@given(rng=st.randoms(use_true_random=False), which=st.integers(0, 99), command=st.integers(0, 9))
def test_fuzzed_inputs(
    samples: dict[str, list[Path]], tmp_path: Path, name: str, rng: random.Random, which: int, command: int
) -> None:
    """A damaged sample of the input kind ``name`` through one of its commands (round robin over
    ``command``): no traceback, no hang, refused (exit 2) where it must be (FUZZED says which commands)."""
    pool = samples[name]
    _check(KINDS[name], pool[which % len(pool)], rng, command, tmp_path / "w")


@settings(FUZZ, max_examples=60)
@given(rng=st.randoms(use_true_random=False), which=st.integers(0, 99))
def test_fuzzed_command_lines(
    samples: dict[str, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rng: random.Random, which: int
) -> None:
    pool = samples["options"]
    restore = stub_engines()
    monkeypatch.chdir(tmp_path)
    try:
        _check(KINDS["options"], pool[which % len(pool)], rng, 0, tmp_path / "w")
    finally:
        restore()


def test_a_new_kind_is_one_registration() -> None:
    """The registry is the extension point: each entry brings samples, a mutator and commands."""
    for kind in KINDS.values():
        assert callable(kind.samples) and callable(kind.mutate) and kind.commands
