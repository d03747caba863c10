"""Parquet corpora: generation (deterministic, parallel, planted), round trips, and every way a
corpus or a JSON Lines file can be broken (clear error with file and row or line, exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS
from kconform.traces.corpus import (
    EVENTS_DIR,
    MANIFEST,
    CorpusError,
    ReadReport,
    arrow_schema,
    bucket_path,
    check_corpus_files,
    read_manifest,
    read_traces,
)
from kconform.traces.counterexample import read_counterexample
from kconform.traces.generate import Plan, generate
from kconform.traces.schema import columns

PLAN = Plan(events=3_000, seed=5, trace_events=1_000, plant=(("acks-all-no-wait", 1),))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "c"
    generate(root, PLAN)
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_generate_writes_the_planned_traces(corpus: Path) -> None:
    manifest = read_manifest(corpus)
    assert [t.trace for t in manifest.traces] == [0, 1, 2]
    assert all(t.events >= PLAN.trace_events for t in manifest.traces)
    assert sum(t.events for t in manifest.traces) == manifest.events >= PLAN.events
    assert list(manifest.planted().values()) == [("acks-all-no-wait",)]
    good, errors = check_corpus_files(corpus, manifest)
    assert good == list(manifest.buckets) and not errors
    kinds = set(pq.read_table(bucket_path(corpus, EVENTS_DIR, 0), columns=["kind"])["kind"].to_pylist())
    assert {"produce_handled", "fetch_handled", "fetch_applied", "metadata_applied"} <= kinds


def test_same_seed_same_corpus_whatever_the_workers(corpus: Path, tmp_path: Path) -> None:
    generate(tmp_path / "again", PLAN, workers=2)
    assert _files(tmp_path / "again") == _files(corpus)
    generate(tmp_path / "other", Plan(events=3_000, seed=6, trace_events=1_000))
    assert _files(tmp_path / "other") != _files(corpus)


def test_generate_refuses_a_directory_that_is_not_a_corpus(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a corpus"):
        generate(tmp_path, Plan(events=10, trace_events=10))
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_jsonl_round_trip_keeps_every_step_and_event(corpus: Path, tmp_path: Path) -> None:
    assert cli.main(["convert", str(corpus), str(tmp_path / "jsonl")]) == EXIT_PASS
    files = sorted((tmp_path / "jsonl").glob("*.jsonl"))
    assert [f.name for f in files] == ["trace-0.jsonl", "trace-1.jsonl", "trace-2.jsonl"]
    assert cli.main(["convert", str(tmp_path / "jsonl"), str(tmp_path / "back"), "--buckets", "2"]) == EXIT_PASS
    original = {m.trace: cx for m, cx in read_traces(corpus, read_manifest(corpus), ReadReport())}
    back = {m.trace: cx for m, cx in read_traces(tmp_path / "back", read_manifest(tmp_path / "back"), ReadReport())}
    assert back.keys() == original.keys()
    for trace, cx in original.items():
        assert back[trace].steps == cx.steps == read_counterexample(tmp_path / "jsonl" / f"trace-{trace}.jsonl").steps
        assert back[trace].mutants == cx.mutants and back[trace].config == cx.config


# --------------------------------------------------------------------------------------------
# Broken inputs: named file and row, the rest still read
# --------------------------------------------------------------------------------------------


def _copy(corpus: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(corpus, dst)
    return dst


def _rewrite_events(root: Path, bucket: int, change: object) -> None:
    """Rewrite one events file and the manifest's hashes (as a careless writer would), so that the
    schema and row checks, not the content hash, are what sees the change."""
    from kconform.traces.inputs.corpus import sealed

    path = bucket_path(root, EVENTS_DIR, bucket)
    table = pq.read_table(path)
    pq.write_table(change(table), path)  # type: ignore[operator]
    obj = json.loads((root / MANIFEST).read_text())
    (root / MANIFEST).write_text(json.dumps(sealed(root, obj, tuple(sorted({t["bucket"] for t in obj["traces"]})))))


def test_a_truncated_bucket_is_named_and_the_others_are_still_read(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus, tmp_path)
    path = bucket_path(root, EVENTS_DIR, 1)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    report = ReadReport()
    read = [m.trace for m, _ in read_traces(root, read_manifest(root), report)]
    assert read and report.skipped_traces and set(read).isdisjoint(report.skipped_traces)
    assert len(report.errors) == 1 and report.errors[0].path == str(path)
    assert "not a readable Parquet file" in str(report.errors[0])


def test_a_column_of_the_wrong_type_is_named(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus, tmp_path)
    _rewrite_events(
        root, 0, lambda t: t.set_column(t.schema.get_field_index("hw"), "hw", pa.compute.cast(t["hw"], pa.string()))
    )
    good, errors = check_corpus_files(root, read_manifest(root))
    assert good == [1] and len(errors) == 1
    assert str(errors[0]) == f"{bucket_path(root, EVENTS_DIR, 0)}: hw: column 'hw' has type string, expected int64"


def test_an_unknown_kind_is_named_with_its_row(corpus: Path, tmp_path: Path) -> None:
    root = _copy(corpus, tmp_path)
    kinds = pq.read_table(bucket_path(root, EVENTS_DIR, 0))["kind"].to_pylist()
    kinds[7] = "martian"
    _rewrite_events(root, 0, lambda t: t.set_column(t.schema.get_field_index("kind"), "kind", pa.array(kinds)))
    report = ReadReport()
    list(read_traces(root, read_manifest(root), report))
    assert [(e.row, e.path) for e in report.errors] == [(7, str(bucket_path(root, EVENTS_DIR, 0)))]
    assert "unknown event kind 'martian'" in report.errors[0].message


def test_a_manifest_of_an_unknown_schema_version_is_refused(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(corpus, tmp_path)
    obj = json.loads((root / MANIFEST).read_text())
    obj["schema_version"] = 99
    (root / MANIFEST).write_text(json.dumps(obj))
    with pytest.raises(CorpusError, match=r"unsupported schema_version 99 \(written by a newer kconform"):
        read_manifest(root)
    assert cli.main(["convert", str(root), str(tmp_path / "out")]) == EXIT_ERROR
    assert "unsupported schema_version 99" in capsys.readouterr().err


def test_convert_reports_a_garbage_jsonl_file_and_converts_the_rest(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["convert", str(corpus), str(tmp_path / "jsonl")]) == EXIT_PASS
    bad = tmp_path / "jsonl" / "trace-1.jsonl"
    lines = bad.read_text().splitlines()
    lines[3] = lines[3][:20]
    bad.write_text("\n".join(lines) + "\n")
    assert cli.main(["convert", str(tmp_path / "jsonl"), str(tmp_path / "back")]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{bad}:4: not valid JSON" in err and "1 of 3 file(s) not converted" in err
    assert len(read_manifest(tmp_path / "back").traces) == 2


# --------------------------------------------------------------------------------------------
# Fuzzing: corrupt bytes and garbage lines never crash the tool
# --------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 1.0), flips=st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 255)), max_size=4))
def test_fuzzed_parquet_is_an_error_or_a_valid_read(
    corpus: Path, tmp_path_factory: pytest.TempPathFactory, cut: float, flips: list[tuple[float, int]]
) -> None:
    root = tmp_path_factory.mktemp("fuzz") / "c"
    shutil.copytree(corpus, root)
    path = bucket_path(root, EVENTS_DIR, 0)
    data = bytearray(path.read_bytes())
    for where, value in flips:
        data[int(where * (len(data) - 1))] = value
    path.write_bytes(bytes(data[: max(1, int(cut * len(data)))] if cut < 1 else data))
    report = ReadReport()
    read = list(read_traces(root, read_manifest(root), report))  # must not raise
    assert len(read) + len(report.skipped_traces) == 3
    for error in report.errors:
        assert error.path.endswith(".parquet") and error.message


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.one_of(
            st.text(max_size=40),
            st.just('{"step": 0}'),
            st.just('{"format": "kconform-counterexample", "schema_version": 7}'),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_fuzzed_jsonl_is_exit_2_with_file_and_line(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path_factory.mktemp("jsonl")
    (d / "t.jsonl").write_text("\n".join(lines), encoding="utf-8")
    assert cli.main(["convert", str(d / "t.jsonl"), str(d / "out")]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{d / 't.jsonl'}" in err and "internal error" not in err


def test_the_arrow_schema_has_the_key_columns_first() -> None:
    assert arrow_schema().names[:5] == ["trace", "pos", "step", "kind", "node"]


def test_a_corpus_written_before_a_kind_existed_is_still_read(corpus: Path, tmp_path: Path) -> None:
    """Columns of kinds a file never holds may be absent (an older writer): read as nulls."""
    root = _copy(corpus, tmp_path)
    dropped = ["requested_epoch", "end_offset"]  # OffsetsForLeaderEpoch fields: unused on the default rung
    _rewrite_events(root, 0, lambda t: t.drop_columns(dropped))
    assert check_corpus_files(root, read_manifest(root)) == ([0, 1], [])
    before = {m.trace: cx for m, cx in read_traces(corpus, read_manifest(corpus), ReadReport())}
    after = {m.trace: cx for m, cx in read_traces(root, read_manifest(root), ReadReport())}
    assert after == before


def test_every_column_is_documented() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "trace-schema.md").read_text(encoding="utf-8")
    missing = [c.name for c in columns() if f"| `{c.name}` " not in page and f" `{c.name}` |" not in page]
    assert not missing, f"docs/trace-schema.md does not explain {missing}"
