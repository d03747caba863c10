"""``kconform logs check`` / ``ingest``: exit codes as the gate, the reports, JUnit XML, and the
DuckDB pass over an ingested corpus agreeing with the single-process checks."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kconform.ci.cli import main
from kconform.traces.logs.ingest import check_corpus, write_corpus
from kconform.traces.logs.observations import SCHEMA_VERSION
from kconform.traces.logs.run import check_paths
from tests.logskit import FIXTURES

BAD = FIXTURES / "dump-2.8-klog-invalid-transition.txt"
HEALTHY = FIXTURES / "dump-3.2.3-output-topic-txn.txt"


def test_check_exit_codes_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    junit = tmp_path / "junit.xml"
    assert main(["logs", "check", str(HEALTHY), "--out", str(out)]) == 0
    assert main(["logs", "check", str(BAD), str(HEALTHY), "--out", str(out), "--junit", str(junit)]) == 1
    report = json.loads((out / "report.json").read_text())
    (txn,) = [c for c in report["checks"] if c["name"] == "txn-state-transitions-valid"]
    assert txn["status"] == "violated" and txn["shown"][0]["witnesses"][0]["line"] == 10
    assert txn["shown"][0]["witnesses"][0]["file"].endswith("dump-2.8-klog-invalid-transition.txt")
    html = (out / "report.html").read_text()
    assert "PrepareCommit -&gt; CompleteAbort" in html and "state=CompleteAbort" in html
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["txn-state-transitions-valid"].find("failure") is not None
    assert cases["fetch-session-epochs"].find("skipped") is not None
    assert "not observed" in capsys.readouterr().out


def test_a_finding_excerpt_rechecks_to_the_same_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["logs", "check", str(BAD), "--out", str(out)]) == 1
    report = json.loads((out / "report.json").read_text())
    (txn,) = [c for c in report["checks"] if c["name"] == "txn-state-transitions-valid"]
    excerpt = txn["shown"][0]["excerpt"]
    assert f"excerpt: kconform logs check {excerpt}" in capsys.readouterr().out
    again = tmp_path / "again"
    assert main(["logs", "check", excerpt, "--out", str(again)]) == 1
    (txn2,) = [c for c in json.loads((again / "report.json").read_text())["checks"] if c["name"] == txn["name"]]
    assert [f["message"] for f in txn2["shown"]] == [f["message"] for f in txn["shown"]]
    lines = sum(len(p.read_text().splitlines()) for p in Path(excerpt).rglob("*") if p.is_file())
    assert lines < len(BAD.read_text().splitlines())


def test_a_damaged_file_is_exit_2_and_loses_nothing_already_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    damaged = tmp_path / "server.log.1.gz"
    damaged.write_bytes(gzip.compress(BAD.read_bytes())[:-40])  # cut: the stream ends early
    fake = tmp_path / "binary-looking.log"
    fake.write_bytes(b"\x1f\x8b not gzip at all\n")  # gzip magic, no gzip stream
    out = tmp_path / "out"
    for lenient in ([], ["--lenient"]):
        assert main(["logs", "check", str(BAD), str(damaged), str(fake), "--out", str(out), *lenient]) == 2
        report = json.loads((out / "report.json").read_text())
        assert len(report["unreadable"]) == 2
        assert any(str(damaged) in m for m in report["unreadable"]) and any(
            str(fake) in m for m in report["unreadable"]
        )
        (txn,) = [c for c in report["checks"] if c["name"] == "txn-state-transitions-valid"]
        assert txn["status"] == "violated"  # BAD's finding (and the damaged copy's lines before the cut) are kept
    assert "could not be read to their end" in capsys.readouterr().err
    assert main(["logs", "ingest", str(HEALTHY), str(fake), "--out", str(tmp_path / "c"), "--engine", "none"]) == 2


def test_a_known_line_that_does_not_parse_is_exit_2_unless_lenient(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "server.log"
    bad.write_text(
        "[2020-01-01 00:00:00,000] INFO [Partition t-0 broker=1] Shrinking ISR from to x (kafka.cluster.Partition)\n"
    )
    assert main(["logs", "check", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:1" in err and "Traceback" not in err
    assert main(["logs", "check", str(bad), "--out", str(tmp_path / "o"), "--lenient"]) == 0


def test_bad_paths_and_flags_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", "check", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert main(["logs", "check", str(HEALTHY), "--check", "no-such-check", "--out", str(tmp_path / "o")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def _verdicts(run_checks: list[tuple[str, str, int, int]]) -> list[tuple[str, str, int, int]]:
    return sorted(run_checks)


def test_duckdb_pass_over_the_corpus_agrees_with_the_single_process_checks(tmp_path: Path) -> None:
    single = check_paths([FIXTURES])
    summary = write_corpus([FIXTURES], tmp_path / "corpus")
    assert summary.rows == sum(single.stats.observations.values())
    corpus = check_corpus(tmp_path / "corpus", engine="duckdb")
    expected = [(c.name, c.status, c.judged, c.finding_count) for c in single.checks]
    assert _verdicts(corpus.rows()) == _verdicts(expected)
    found = sorted((f.check, f.message) for t in corpus.totals for f in t.shown)
    assert found == sorted((f.check, f.message) for c in single.checks for f in c.findings)


def test_ingest_command(tmp_path: Path) -> None:
    assert main(["logs", "ingest", str(BAD), "--out", str(tmp_path / "c"), "--engine", "duckdb"]) == 1
    assert main(["logs", "ingest", str(HEALTHY), "--out", str(tmp_path / "d"), "--engine", "duckdb"]) == 0
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert manifest["rows"] > 0 and manifest["schema_version"] == SCHEMA_VERSION == 2


@pytest.mark.slow
def test_spark_pass_agrees_with_the_single_process_checks(tmp_path: Path) -> None:
    single = check_paths([FIXTURES])
    write_corpus([FIXTURES], tmp_path / "corpus")
    corpus = check_corpus(tmp_path / "corpus", engine="spark", master="local[2]")
    expected = [(c.name, c.status, c.judged, c.finding_count) for c in single.checks]
    assert _verdicts(corpus.rows()) == _verdicts(expected)


def test_input_text_is_never_read_as_console_markup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A finding's message quotes the input (a partition name here); text that looks like rich markup
    ('[/x]', '[bold]') is printed as it is. Before, '[/x]' crashed the command (MarkupError)."""
    log = tmp_path / "[bold]server.log"
    log.write_text(
        "[2020-01-01 00:00:00,000] INFO [Partition t[/x]-0 broker=1] Shrinking ISR from 1,2 to 1,2,3 "
        "(kafka.cluster.Partition)\n"
        "[2020-01-01 00:00:00,000] INFO [Partition t[bold]-0 broker=1] Shrinking ISR from 1,2 to 1,2,3 "
        "(kafka.cluster.Partition)\n"
        "[2020-01-01 00:00:00,000] INFO unknown [/z] (com.example.X)\n"
    )
    assert main(["logs", "check", str(log), "--out", str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    assert "t[/x]-0: ISR 'shrink'" in captured.out and "t[bold]-0: ISR 'shrink'" in captured.out
