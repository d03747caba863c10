"""The exactly-once slice through the gate: the reference passes (TV0 and TV2), coverage counts
coordinator transitions, the state-machine picture is drawn from them and renders, and a mutant's
counterexample gets a report with the picture and replays."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from kconform.ci.exitcodes import EXIT_PASS, EXIT_VIOLATION
from kconform.ci.gate import run_gate
from kconform.ci.options import GateOptions
from kconform.conformance.hunt import run_campaign
from kconform.conformance.registry import for_config
from kconform.conformance.txn.coverage import edge_counts, edge_key, reachable_edges, reachable_keys
from kconform.model import txn_graph as tg
from kconform.model.txn_config import TxnConfig
from kconform.traces.counterexample import read_counterexample
from kconform.traces.replay import make_adapter, replay
from kconform.traces.report import report_path
from kconform.traces.txn.picture import txn_state_svg
from tests.headless import assert_renders_non_blank

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("tv", [0, 2])
def test_reference_passes_a_short_txn_gate(tv: int, tmp_path: Path) -> None:
    options = GateOptions(config=TxnConfig(transaction_version=tv), examples=40, seed=5, out=tmp_path, progress=False)
    console = Console(record=True, width=140)
    assert run_gate(options, console) == EXIT_PASS
    text = console.export_text()
    assert "slice=txn" in text and "TxnAtomicity" in text and "NoAbortedRead" in text
    page = (tmp_path / "txn-states.html").read_text(encoding="utf-8")
    assert "<svg" in page and "valid transitions exercised" in page


def test_a_txn_mutant_is_caught_reported_and_replays(tmp_path: Path) -> None:
    options = GateOptions(
        config=TxnConfig(), examples=400, seed=1, mutants=("no-verification",), out=tmp_path, progress=False
    )
    assert run_gate(options, Console(record=True, width=140)) == EXIT_VIOLATION
    [path] = tmp_path.glob("counterexample-*.jsonl")
    cx = read_counterexample(path)
    adapter = make_adapter("reference", cx.config)
    try:
        assert replay(cx, adapter).reproduces(cx)
    finally:
        adapter.close()
    html = report_path(path).read_text(encoding="utf-8")
    assert "Coordinator transitions this run took" in html and "<svg" in html
    assert_renders_non_blank(report_path(path), tmp_path)


def test_the_picture_marks_covered_uncovered_and_invalid_edges(tmp_path: Path) -> None:
    covered = {edge_key(tg.EMPTY, tg.ONGOING): 3, edge_key(tg.COMPLETE_ABORT, tg.PREPARE_COMMIT): 1}
    root = ET.fromstring(txn_state_svg(covered, 0))
    classes = [g.get("class", "") for g in root.iter(f"{SVG}g") if "edge" in g.get("class", "")]
    assert classes.count("edge covered") == 1
    assert classes.count("edge invalid") == 1
    assert classes.count("edge uncovered") == len(tg.edges(0)) - 1
    page = tmp_path / "states.html"
    page.write_text(f"<html><body>{txn_state_svg(covered, 2)}</body></html>", encoding="utf-8")
    assert_renders_non_blank(page, tmp_path)


def test_a_campaign_covers_transitions_the_judge_counts() -> None:
    cfg = TxnConfig()
    result = run_campaign(for_config(cfg).make_reference, cfg, frozenset(), seed=2, examples=60, steps=30)
    assert result.passed
    edges = edge_counts(result.log.covered)
    assert (tg.ONGOING, tg.PREPARE_COMMIT) in edges or (tg.ONGOING, tg.PREPARE_ABORT) in edges
    assert set(edges) <= set(tg.edges(0)), "the judge counted a transition outside Kafka's table"
    assert reachable_edges(cfg) <= set(tg.edges(0))
    assert {edge_key(*e) for e in reachable_edges(cfg)} <= reachable_keys(cfg)


def test_slice_all_runs_every_slice_and_ends_in_one_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kconform.ci.cli import main

    code = main(["gate", "--slice", "all", "--examples", "8", "--seed", "1", "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == EXIT_PASS
    assert "every slice" in out
    for part in ("replication", "txn-tv0", "txn-tv2"):
        assert (tmp_path / part / "coverage.json").exists()
    assert main(["gate", "--slice", "all", "--set", "transaction_version=2"]) == 2
    assert "need one slice" in capsys.readouterr().err
