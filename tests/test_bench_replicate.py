"""The benchmark's large corpora (ci/benchmarks/replicate.py): K copies of a corpus with fresh trace
ids pass the corpus check, and the miner's verdicts on them are exactly K times the source's, trace
by trace (copy k of trace t is trace k * stride + t)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.ci.benchmarks.replicate import replicate_corpus
from kconform.traces.corpus import Manifest, read_manifest
from kconform.traces.generate import Plan, generate
from kconform.traces.inputs.corpus import validate_corpus
from kconform.traces.mine.engine import run_duckdb

from .test_mine import broken as broken  # the hand-made corpus: one trace per invariant, and a clean one


def test_copies_pass_the_corpus_check_and_scale_every_verdict(broken: tuple[Path, Manifest], tmp_path: Path) -> None:
    root, manifest = broken
    copy = replicate_corpus(root, tmp_path / "x3", 3)
    assert [t.trace for t in copy.traces] == sorted(t.trace for t in copy.traces)
    assert copy.events == 3 * manifest.events and len(copy.buckets) == 3 * len(manifest.buckets)
    # The hand-made traces break the corpus check's bounds on purpose (an HW past what one event can
    # write): each copy is refused exactly as its source.
    assert len(validate_corpus(tmp_path / "x3", copy)[1]) == 3 * len(validate_corpus(root, read_manifest(root))[1])
    source = run_duckdb(root, manifest, manifest.buckets, validated=True).counts
    assert source, "the source must hold violations, or this proves nothing"
    stride = copy.generator["replicated"]["trace_stride"]
    expected = sorted(
        ((name, k * stride + trace, n, pos) for k in range(3) for name, trace, n, pos in source),
        key=lambda c: (c[1], c[0]),
    )
    assert run_duckdb(tmp_path / "x3", copy, copy.buckets, validated=True, threads=2).counts == expected


def test_copies_of_a_generated_corpus_pass_the_corpus_check(tmp_path: Path) -> None:
    source = generate(tmp_path / "c", Plan(events=3_000, seed=5, trace_events=1_000), workers=1).manifest
    copy = replicate_corpus(tmp_path / "c", tmp_path / "x2", 2)
    assert copy.events == 2 * source.events
    assert validate_corpus(tmp_path / "x2", copy) == (list(copy.buckets), [])


def test_no_copy_is_refused(broken: tuple[Path, Manifest], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        replicate_corpus(broken[0], tmp_path / "x0", 0)
