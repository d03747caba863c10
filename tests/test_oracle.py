"""The oracle: the lockstep judge over every trace of a corpus, one verdict per trace."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kconform.traces.corpus import EVENTS_DIR, ReadReport, bucket_path, read_traces, write_corpus
from kconform.traces.events import ProduceCompleted
from kconform.traces.generate import Plan, generate
from kconform.traces.oracle import judge_trace, run_oracle
from tests.test_mine import BROKEN, _trace


def test_a_mutant_trace_is_flagged_at_the_first_event_the_model_forbids(tmp_path: Path) -> None:
    plan = Plan(events=1_000, seed=4, trace_events=1_000, plant=(("acks-all-no-wait", 1),))
    manifest = generate(tmp_path / "c", plan).manifest
    (meta, cx), *_ = read_traces(tmp_path / "c", manifest, ReadReport())
    verdict = judge_trace(meta.trace, cx)
    events = [e for step in cx.steps for e in step.events]
    assert verdict.flagged and verdict.events == len(events)
    assert (verdict.verdict, verdict.name) == ("non-conformance", "produce_completed")
    assert verdict.position is not None and isinstance(events[verdict.position], ProduceCompleted)
    assert not any(judge_trace(0, replace(cx, steps=cx.steps[:k])).flagged for k in (1, 2))


def test_generated_clean_traces_conform(tmp_path: Path) -> None:
    manifest = generate(tmp_path / "c", Plan(events=4_000, seed=2, trace_events=2_000)).manifest
    result = run_oracle(tmp_path / "c", manifest)
    assert sorted(result.verdicts) == [0, 1] and not result.flagged
    assert result.events == manifest.events


def test_unreadable_buckets_are_reported_and_the_rest_judged(tmp_path: Path) -> None:
    manifest = write_corpus(
        tmp_path / "c", [_trace(BROKEN["AcksAllCommitted"]), _trace(BROKEN["EpochFencing"])], buckets=2
    )
    bucket_path(tmp_path / "c", EVENTS_DIR, 1).write_bytes(b"not parquet")
    result = run_oracle(tmp_path / "c", manifest)
    assert sorted(result.verdicts) == [0] and result.flagged == {0}
    assert result.read.skipped_traces == [1] and "not a readable Parquet file" in str(result.read.errors[0])
