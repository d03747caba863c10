"""The fetch-session slice end to end: the zoo conforms on the reference and catches each mutant, a
short gate passes with full coverage of the reachable outcomes, a mutant's counterexample replays
and its report shows the per-session timeline, and corpus generation with the oracle runs it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_PASS, EXIT_VIOLATION
from kconform.ci.gate import run_gate
from kconform.ci.options import GateOptions
from kconform.conformance import registry
from kconform.conformance.fetch.scenarios import SCENARIOS, Scenario
from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.scenarios import run_scenario
from kconform.impl.fetch.cluster import FetchCluster
from kconform.impl.mutants import FETCH, mutants_of
from kconform.model.configs import config_from_json
from kconform.model.fetch_config import FetchConfig
from kconform.traces import operations as o
from kconform.traces.counterexample import read_counterexample
from kconform.traces.generate import Plan, generate
from kconform.traces.oracle import run_oracle

CFG = FetchConfig()


def test_the_slice_is_registered_and_its_config_reads_back() -> None:
    part = registry.get(FETCH)
    assert registry.for_config(CFG) is part
    assert config_from_json(CFG.to_json()) == CFG
    assert set(part.mutants()) == set(mutants_of(FETCH))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_scenario_conforms_on_the_reference(name: str) -> None:
    run = run_scenario(FetchCluster(), SCENARIOS[name], CFG, frozenset())
    assert run.failure is None, run.failure


@pytest.mark.parametrize(("name", "mutant"), [(name, m) for name, s in sorted(SCENARIOS.items()) for m in s.mutants])
def test_each_scenario_catches_its_mutants(name: str, mutant: str) -> None:
    run = run_scenario(FetchCluster(), SCENARIOS[name], CFG, frozenset({mutant}))
    assert run.failure is not None and run.failure.verdict == NON_CONFORMANCE


def test_old_busy_session_eviction_catches_a_touch_that_forgets_evictable_by_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted bug no named mutant has: FetchSessionCacheShard.touch never puts an old session in
    evictableByAll, so an unprivileged newcomer finds nothing to evict (mutation census, issue 17).
    ``evict-an-old-busy-session`` answers it FULL_NO_SLOT where the model evicts; the reference
    passes it (above)."""
    from kconform.impl.fetch import broker as B

    real = B.FetchSessionCache.touch

    def forgetful(self: B.FetchSessionCache, session: B.FetchSession, now_ms: int) -> None:
        real(self, session, now_ms)
        self.evictable_by_all.pop(session.id, None)

    monkeypatch.setattr(B.FetchSessionCache, "touch", forgetful)
    run = run_scenario(FetchCluster(), SCENARIOS["evict-an-old-busy-session"], CFG, frozenset())
    assert run.failure is not None and run.failure.verdict == NON_CONFORMANCE, run.failure


def test_every_mutant_has_a_scenario() -> None:
    assert {m for s in SCENARIOS.values() for m in s.mutants} == set(mutants_of(FETCH))


def test_delete_records_past_an_open_transaction_lifts_the_lso_to_the_log_start() -> None:
    """UnifiedLog.maybeIncrementFirstUnstableOffset: the LSO answered is never below the log start.
    The short gate found the reference answering LSO 0 after DeleteRecords moved the log start to 1
    past a transaction whose marker was still above the HW; the model answers 1, as Kafka does."""
    ops = (
        o.Assign(client=0, partition="t-0", assigned=True),
        o.AppendRecords(partition="t-0", count=1, txn=1),
        o.AdvanceHw(partition="t-0", offset=1),
        o.DeleteRecords(partition="t-0", offset=1),
        o.Poll(client=0),
        o.Run(ms=300),
        o.Poll(client=0),
        o.Run(ms=300),
    )
    run = run_scenario(FetchCluster(), Scenario("lso-at-log-start", "regression", (), ops), CFG, frozenset())
    assert run.failure is None, run.failure
    lsos = [lso for st in run.steps for e in st.events for lso in getattr(e, "lsos", ())]
    assert lsos and lsos[-1] == 1


def test_the_same_seed_gives_the_same_session_ids() -> None:
    ids = []
    for _ in range(2):
        run = run_scenario(FetchCluster(), SCENARIOS["evict-the-idle-session"], CFG, frozenset(), seed=11)
        ids.append([getattr(e, "session_id", None) for st in run.steps for e in st.events])
    assert ids[0] == ids[1]


def test_a_short_gate_passes_and_covers_the_reachable_outcomes(tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    options = GateOptions(config=CFG, seed=3, out=tmp_path, progress=False, examples=60)
    assert run_gate(options, console) == EXIT_PASS
    text = console.export_text()
    assert "slice=fetch" in text and "NoSkipNoRepeat" in text
    assert "covered" in text


def test_a_mutant_counterexample_replays_and_reports_the_sessions(tmp_path: Path) -> None:
    common = ["--slice", FETCH, "--examples", "20", "--seed", "1", "--no-progress", "--out", str(tmp_path)]
    assert cli.main(["gate", *common, "--mutant", "no-reset-on-session-error"]) == EXIT_VIOLATION
    [path] = tmp_path.glob("counterexample-*.jsonl")
    cx = read_counterexample(path)
    assert cx.config == CFG and cx.verdict["kind"] == NON_CONFORMANCE
    assert cli.main(["replay", str(path)]) == EXIT_VIOLATION
    assert cli.main(["replay", str(path), "--model-only"]) == EXIT_VIOLATION
    page = path.with_suffix(".html").read_text()
    assert "Fetch sessions: requests and answers" in page and "FETCH_SESSION_ID_NOT_FOUND" in page


def test_corpus_generation_and_the_oracle_run_the_slice(tmp_path: Path) -> None:
    result = generate(tmp_path / "corpus", Plan(events=1_500, seed=2, trace_events=500, config=CFG))
    manifest = result.manifest
    assert manifest.generator["slice"] == FETCH
    oracle = run_oracle(tmp_path / "corpus", manifest)
    assert oracle.events == manifest.events and not oracle.flagged and not oracle.read.errors


@pytest.mark.slow
def test_self_check_catches_every_fetch_mutant_and_replays(tmp_path: Path) -> None:
    console = Console(record=True, width=160)
    options = GateOptions(CFG, seconds=20.0, seed=5, self_check=True, out=tmp_path, progress=False)
    assert run_gate(options, console) == EXIT_PASS, console.export_text()
    files = sorted(tmp_path.glob("mutant-*.jsonl"))
    assert [f.name for f in files] == [f"mutant-{name}.jsonl" for name in sorted(mutants_of(FETCH))]
    for f in files:
        assert cli.main(["replay", str(f)]) == EXIT_VIOLATION


@pytest.mark.slow
def test_a_longer_gate_covers_at_least_ninety_percent(tmp_path: Path) -> None:
    examples = 300 if os.environ.get("KCONFORM_BUDGET") == "small" else 1_000
    options = GateOptions(config=CFG, seed=11, out=tmp_path, progress=False, examples=examples, min_coverage=90.0)
    assert run_gate(options, Console(record=True, width=200)) == EXIT_PASS
