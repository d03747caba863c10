"""The fetch-session slice's mined invariants (traces.mine.fetch) against the lockstep oracle: on
the zoo's traces, clean and with each mutant, DuckDB flags exactly the traces of the mutants the
miner covers, at the event the oracle flags; a clean generated corpus fires nothing; Spark agrees
with DuckDB (slow)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kconform.conformance.fetch.scenarios import SCENARIOS
from kconform.impl.fetch.cluster import FetchCluster
from kconform.impl.fetch.mutants import FETCH_BEFORE_RESPONSE, NO_RESET_ON_SESSION_ERROR, SIZE_PASS_UPDATES_CACHE
from kconform.model.fetch_config import FetchConfig
from kconform.traces.corpus import Manifest, write_corpus
from kconform.traces.counterexample import Counterexample, Step, make_verdict
from kconform.traces.generate import Plan, generate
from kconform.traces.mine.engine import EngineResult, run_duckdb, run_spark
from kconform.traces.operations import Boot
from kconform.traces.oracle import OracleResult, run_oracle

from .minecases_fetch import CARRIES_CHANGES_BROKEN, FETCH_NEAR_MISSES
from .test_mine import first_positions
from .test_mine import spark as spark  # the shared Spark session fixture

CFG = FetchConfig()
MINED = {FETCH_BEFORE_RESPONSE, NO_RESET_ON_SESSION_ERROR, SIZE_PASS_UPDATES_CACHE}
"""The mutants whose first wrong event a mined invariant sees (traces.mine.fetch says why only these)."""


def _zoo_trace(name: str, mutants: tuple[str, ...]) -> Counterexample:
    cluster = FetchCluster()
    steps = [Step(Boot(), tuple(cluster.reset(CFG, 0, frozenset(mutants))))]
    for op in SCENARIOS[name].ops:
        steps.append(Step(op, tuple(cluster.apply(op))))
    cluster.close()
    return Counterexample(CFG, 0, mutants, "reference", make_verdict("pass", "", name, -1), tuple(steps))


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest, OracleResult, EngineResult]:
    traces = []
    for name, scenario in SCENARIOS.items():
        traces.append(_zoo_trace(name, ()))
        traces += [_zoo_trace(name, (m,)) for m in scenario.mutants if m in MINED]
    root = tmp_path_factory.mktemp("fetch-zoo") / "c"
    manifest = write_corpus(root, traces, buckets=2)
    return root, manifest, run_oracle(root, manifest), run_duckdb(root, manifest, manifest.buckets)


def test_miner_flags_exactly_the_zoo_traces_the_oracle_flags_at_its_event(
    zoo: tuple[Path, Manifest, OracleResult, EngineResult],
) -> None:
    _root, manifest, oracle, mined = zoo
    planted = manifest.planted()
    assert oracle.flagged == set(planted)
    assert first_positions(mined) == {t: oracle.verdicts[t].position for t in oracle.flagged}
    assert {planted[t][0] for t in first_positions(mined)} == MINED


def test_a_clean_generated_corpus_fires_nothing(tmp_path: Path) -> None:
    result = generate(tmp_path / "c", Plan(events=3_000, seed=4, trace_events=1_000, config=CFG))
    assert not run_duckdb(tmp_path / "c", result.manifest, result.manifest.buckets).counts


@pytest.mark.slow
def test_spark_mines_the_fetch_zoo_like_duckdb(
    spark: Any, zoo: tuple[Path, Manifest, OracleResult, EngineResult]
) -> None:
    root, manifest, _oracle, mined = zoo
    assert run_spark(spark, root, manifest, manifest.buckets).counts == mined.counts


def test_near_misses_of_the_mined_fetch_invariants_fire_nothing(tmp_path: Path) -> None:
    verdict = make_verdict("pass", "", "hand-made", -1)
    traces = [
        Counterexample(CFG, 0, (), "reference", verdict, (Step(Boot(), tuple(events)),))
        for events in FETCH_NEAR_MISSES.values()
    ]
    manifest = write_corpus(tmp_path / "c", traces, buckets=1)
    assert run_duckdb(tmp_path / "c", manifest, manifest.buckets).counts == []


def test_each_other_way_to_lose_an_update_fires_at_its_last_event(tmp_path: Path) -> None:
    verdict = make_verdict("pass", "", "hand-made", -1)
    cases = list(CARRIES_CHANGES_BROKEN.values())
    traces = [Counterexample(CFG, 0, (), "reference", verdict, (Step(Boot(), tuple(e)),)) for e in cases]
    manifest = write_corpus(tmp_path / "c", traces, buckets=1)
    counts = run_duckdb(tmp_path / "c", manifest, manifest.buckets).counts
    last_handled = [max(i for i, e in enumerate(events) if e.kind == "session_fetch_handled") for events in cases]
    assert [(name, trace, first) for name, trace, _n, first in counts] == [
        ("IncrementalAnswerCarriesChanges", t, pos) for t, pos in enumerate(last_handled)
    ]
