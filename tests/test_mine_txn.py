"""The miner's exactly-once invariants: near misses of the hand-made bad traces stay clean, and on
a corpus of the txn zoo (every scenario under TV0 and TV2, clean and with each mutant it names) the
miner flags exactly the traces the lockstep oracle flags, at the oracle's first failing event.

The hand-made bad traces themselves are in tests/test_mine.py's BROKEN table (one per invariant,
on DuckDB and Spark). The zoo corpus runs the reference cluster directly (every operation of the
scenario, not stopping at the first failure) and leaves out epoch-exhaustion (32,768 round trips).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kconform.conformance.txn.scenarios import EPOCH_EXHAUSTION, SCENARIOS
from kconform.impl.mutants import config_for
from kconform.impl.txn.cluster import TxnCluster
from kconform.model.txn_config import TxnConfig
from kconform.traces.corpus import Manifest, write_corpus
from kconform.traces.counterexample import Counterexample, Step, make_verdict
from kconform.traces.events import Event
from kconform.traces.mine.engine import EngineResult, run_duckdb, run_spark
from kconform.traces.operations import Boot
from kconform.traces.oracle import OracleResult, run_oracle

from .minecases_txn import TXN_NEAR_MISSES, TXN_QUIESCED_OPEN, TXN_STALE_OFFSET_READ, TXN_UNCOMMITTED_LSO_PAST_OPEN
from .test_mine import first_positions
from .test_mine import spark as spark  # the shared Spark session fixture


def _cx(cfg: TxnConfig, events: list[Event], mutants: tuple[str, ...] = ()) -> Counterexample:
    return Counterexample(
        cfg, 0, mutants, "reference", make_verdict("pass", "", "hand-made", -1), (Step(Boot(), tuple(events)),)
    )


def _fired(result: EngineResult) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for invariant, trace, _n, _first in result.counts:
        out.setdefault(trace, set()).add(invariant)
    return out


def test_near_misses_fire_nothing_and_the_second_arms_fire(tmp_path: Path) -> None:
    """The near misses stay clean; a quiesced open transaction fires TxnEndsWithinBound, a
    read_uncommitted LSO past an open transaction LsoBounds, an offset fetched after a newer one was
    committed TxnOffsetsVisibleOnCommit (each nothing else)."""
    second = [TXN_QUIESCED_OPEN, TXN_UNCOMMITTED_LSO_PAST_OPEN, TXN_STALE_OFFSET_READ]
    traces = [_cx(cfg, events) for cfg, events in TXN_NEAR_MISSES.values()] + [_cx(TxnConfig(), e) for e in second]
    manifest = write_corpus(tmp_path / "c", traces, buckets=2)
    fired = _fired(run_duckdb(tmp_path / "c", manifest, manifest.buckets))
    n = len(TXN_NEAR_MISSES)
    assert fired == {n: {"TxnEndsWithinBound"}, n + 1: {"LsoBounds"}, n + 2: {"TxnOffsetsVisibleOnCommit"}}, {
        name: fired.get(i) for i, name in enumerate(TXN_NEAR_MISSES)
    }


def _zoo_trace(name: str, cfg: TxnConfig, mutants: tuple[str, ...]) -> Counterexample:
    cluster = TxnCluster()
    steps = [Step(Boot(), tuple(cluster.reset(cfg, 0, frozenset(mutants))))]
    for op in SCENARIOS[name].ops:
        steps.append(Step(op, tuple(cluster.apply(op))))
    cluster.close()
    return Counterexample(cfg, 0, mutants, "reference", make_verdict("pass", "", name, -1), tuple(steps))


def zoo_traces() -> list[Counterexample]:
    """Every zoo scenario but epoch-exhaustion under TV0 and TV2: clean, and with each mutant it
    names (under the mutant's own config overrides)."""
    out = []
    for name, scenario in SCENARIOS.items():
        if scenario is EPOCH_EXHAUSTION:
            continue
        for tv in (0, 2):
            cfg = TxnConfig(transaction_version=tv)
            out.append(_zoo_trace(name, cfg, ()))
            out += [_zoo_trace(name, config_for(m, cfg), (m,)) for m in scenario.mutants]
    return out


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest, OracleResult, EngineResult]:
    root = tmp_path_factory.mktemp("zoo") / "c"
    manifest = write_corpus(root, zoo_traces(), buckets=2)
    return root, manifest, run_oracle(root, manifest), run_duckdb(root, manifest, manifest.buckets)


def test_miner_flags_exactly_the_zoo_traces_the_oracle_flags_at_its_event(
    zoo: tuple[Path, Manifest, OracleResult, EngineResult],
) -> None:
    _root, manifest, oracle, mined = zoo
    planted = manifest.planted()
    assert oracle.flagged == set(planted), "every zoo mutant misbehaves in its scenario, the clean runs conform"
    assert first_positions(mined) == {t: oracle.verdicts[t].position for t in oracle.flagged}
    caught = {planted[t][0] for t in first_positions(mined)}
    assert caught == {m for s in SCENARIOS.values() if s is not EPOCH_EXHAUSTION for m in s.mutants}


@pytest.mark.slow
def test_spark_mines_the_zoo_like_duckdb(spark: Any, zoo: tuple[Path, Manifest, OracleResult, EngineResult]) -> None:
    root, manifest, oracle, mined = zoo
    result = run_spark(spark, root, manifest, manifest.buckets)
    assert result.counts == mined.counts
    assert set(first_positions(result)) == oracle.flagged
