"""The validation boundary of corpora (traces/inputs/corpus.py): every damaged corpus of issue 20 is
refused with exit 2 before any engine starts, naming the file (and row and column)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_VIOLATION
from kconform.ci.mine import engine_failure
from kconform.traces.corpus import EVENTS_DIR, MANIFEST, STEPS_DIR, bucket_path, read_manifest
from kconform.traces.generate import Plan, generate
from kconform.traces.inputs.corpus import sealed, validate_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "c"
    generate(root, Plan(events=1_500, seed=5, trace_events=500, plant=(("acks-all-no-wait", 1),)))
    return root


@pytest.fixture
def copy(corpus: Path, tmp_path: Path) -> Path:
    root = tmp_path / "c"
    shutil.copytree(corpus, root)
    return root


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any engine started fails the test: a damaged corpus must be refused before."""
    from kconform.traces.mine import engine

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an engine was started on a damaged corpus")

    for name in ("spark_session", "run_spark", "run_duckdb"):
        monkeypatch.setattr(engine, name, forbidden)


def _reseal(root: Path) -> None:
    """Rewrite the manifest's hashes: the corpus is as a careless writer would leave it, so only
    the row and schema checks can see what is wrong."""
    obj = json.loads((root / MANIFEST).read_text())
    buckets = tuple(sorted({t["bucket"] for t in obj["traces"]}))
    (root / MANIFEST).write_text(json.dumps(sealed(root, obj, buckets)))


def _rewrite(root: Path, change: Any, bucket: int = 0, table: str = EVENTS_DIR) -> None:
    path = bucket_path(root, table, bucket)
    pq.write_table(change(pq.read_table(path)), path)
    _reseal(root)


def _set(table: pa.Table, name: str, row: int, value: Any, nullable: bool = False) -> pa.Table:
    values = table[name].to_pylist()
    values[row] = value
    f = table.schema.field(name)
    return table.set_column(
        table.column_names.index(name), pa.field(name, f.type, nullable or f.nullable), pa.array(values, f.type)
    )


def _mine_refuses(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    for engine in ("spark", "duckdb"):
        assert cli.main(["mine", str(root), "--engine", engine, "--out", str(tmp_path / "o")]) == EXIT_ERROR
        err = capsys.readouterr().err
        assert err.startswith("kconform: error: ") and "Traceback" not in err and not (tmp_path / "o").exists()
    assert cli.main(["convert", str(root), str(tmp_path / "j")]) == EXIT_ERROR
    assert "Traceback" not in capsys.readouterr().err
    assert not (tmp_path / "j").exists() or not any((tmp_path / "j").iterdir())
    return err


def test_a_clean_corpus_passes_every_check(corpus: Path) -> None:
    assert validate_corpus(corpus, read_manifest(corpus)) == ([0, 1], [])


def test_the_manifest_seals_every_part_file(corpus: Path) -> None:
    obj = json.loads((corpus / MANIFEST).read_text())
    assert sorted(obj["files"]) == sorted(
        f"{t}/bucket={b}/part-0.parquet" for b in (0, 1) for t in (EVENTS_DIR, STEPS_DIR)
    )
    assert obj["checksum"].startswith("sha256:")


def test_a_flipped_byte_in_a_data_page_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    path = bucket_path(copy, EVENTS_DIR, 1)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x10
    path.write_bytes(bytes(data))
    err = _mine_refuses(copy, tmp_path, capsys)
    assert f"{path}: its SHA-256 differs from the manifest's" in err


def test_a_junk_crc_file_beside_a_part_file_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    stray = bucket_path(copy, EVENTS_DIR, 0).parent / ".part-0.parquet.crc"
    stray.write_bytes(b"junk")
    assert f"{stray}: a file the manifest does not list" in _mine_refuses(copy, tmp_path, capsys)


def test_a_duplicated_column_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    _rewrite(copy, lambda t: t.append_column(t.schema.field("hw"), t["hw"]))
    assert "hw: column(s) ['hw'] appear more than once" in _mine_refuses(copy, tmp_path, capsys)


@pytest.mark.parametrize("hw", [2**62, -(2**63)])
def test_an_hw_spark_cannot_expand_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None, hw: int
) -> None:
    rows = pq.read_table(bucket_path(copy, EVENTS_DIR, 0))["hw"].to_pylist()
    row = next(i for i, v in enumerate(rows) if v is not None)
    _rewrite(copy, lambda t: _set(t, "hw", row, hw))
    err = _mine_refuses(copy, tmp_path, capsys)
    assert f"{bucket_path(copy, EVENTS_DIR, 0)} row {row}: hw: " in err
    assert ("more than a trace of" in err) if hw > 0 else (f"{hw} is outside -1.." in err)


def test_a_nullable_key_column_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    _rewrite(copy, lambda t: _set(t, "pos", 3, None, nullable=True))
    assert "pos: column 'pos' is nullable; the schema says it never is null" in _mine_refuses(copy, tmp_path, capsys)


def test_a_row_of_a_trace_the_manifest_lacks_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    _rewrite(copy, lambda t: _set(t, "trace", 5, 999))
    err = _mine_refuses(copy, tmp_path, capsys)
    assert "row 5: trace: trace 999 is not one of the manifest's traces of this bucket" in err


def test_an_outcome_outside_the_enum_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    kinds = pq.read_table(bucket_path(copy, EVENTS_DIR, 0))["kind"].to_pylist()
    row = kinds.index("fetch_applied")
    _rewrite(copy, lambda t: _set(t, "outcome", row, "teleported"))
    assert f"row {row}: outcome: 'teleported' is not one of 'appended'" in _mine_refuses(copy, tmp_path, capsys)


def test_a_manifest_without_traces_is_never_a_pass(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    obj = json.loads((copy / MANIFEST).read_text())
    obj["traces"], obj["events"] = [], 0
    (copy / MANIFEST).write_text(json.dumps(sealed(copy, obj, ())))
    assert "traces: should be a non-empty list" in _mine_refuses(copy, tmp_path, capsys)


def test_counts_that_disagree_with_the_data_are_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    obj = json.loads((copy / MANIFEST).read_text())
    obj["traces"][0]["events"] += 1
    obj["events"] += 1
    buckets = tuple(sorted({t["bucket"] for t in obj["traces"]}))
    (copy / MANIFEST).write_text(json.dumps(sealed(copy, obj, buckets)))
    assert "trace 0: " in _mine_refuses(copy, tmp_path, capsys)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o["traces"][0].update(seed=o["traces"][0]["seed"] + 1), "checksum: does not match"),
        (lambda o: o.update(extra=1), "unknown key(s) ['extra']"),
        (lambda o: o["traces"][0].update(bucket=-1), "traces[0].bucket: should be an integer in 0..1048576"),
        (lambda o: o.pop("checksum"), "missing 'checksum' (written by an older kconform"),
    ],
)
def test_an_edited_manifest_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None, change: Any, message: str
) -> None:
    obj = json.loads((copy / MANIFEST).read_text())
    change(obj)
    (copy / MANIFEST).write_text(json.dumps(obj))
    assert message in _mine_refuses(copy, tmp_path, capsys)


def test_a_manifest_with_a_duplicate_key_is_refused(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    text = (copy / MANIFEST).read_text().rstrip().rstrip("}") + ', "format": "kconform-corpus"}'
    (copy / MANIFEST).write_text(text)
    assert "duplicate key 'format'" in _mine_refuses(copy, tmp_path, capsys)


def test_a_re_encoded_manifest_passes(copy: Path, tmp_path: Path) -> None:
    obj = json.loads((copy / MANIFEST).read_text())
    (copy / MANIFEST).write_text(json.dumps(obj, indent=4, sort_keys=True))
    assert cli.main(["mine", str(copy), "--engine", "duckdb", "--out", str(tmp_path / "o")]) == EXIT_VIOLATION


def test_an_engine_failure_is_one_line_naming_the_file() -> None:
    java = (
        "An error occurred while calling o123.collectToPython.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed\n"
        "org.apache.parquet.io.ParquetDecodingException: Can not read value at 0 in block -1 in file "
        "file:/data/c/events/bucket=3/part-0.parquet\n\tat org.apache.parquet.hadoop.Foo.bar(Foo.java:1)\n"
    )
    line = engine_failure("spark", RuntimeError(java))
    assert "\n" not in line and "/data/c/events/bucket=3/part-0.parquet" in line
    assert line.startswith("spark failed reading /data/c/events/bucket=3/part-0.parquet: RuntimeError: org.apache")
