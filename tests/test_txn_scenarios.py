"""The exactly-once known-bug zoo: each scenario conforms on the reference (TV0 and TV2, verification
on and off), reaches the situation it was written for, and exposes the mutants it names; the
self-check of the txn slice catches every mutant (zoo first) and every counterexample replays."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from kconform.ci.exitcodes import EXIT_PASS
from kconform.ci.gate import PROGRAM_HEAD_LINES, PROGRAM_TAIL_LINES, _shown_program, run_gate
from kconform.ci.options import GateOptions
from kconform.conformance.judge import INVARIANT_VIOLATION, NON_CONFORMANCE
from kconform.conformance.runner import LockstepRun
from kconform.conformance.scenarios import first_failing_run
from kconform.conformance.txn.scenarios import EPOCH_EXHAUSTION, SCENARIOS, run_scenario, zoo
from kconform.impl import mutants as registry
from kconform.impl.txn import mutants as m
from kconform.impl.txn.cluster import TxnCluster
from kconform.model.config import ReplicationConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces.counterexample import read_counterexample
from kconform.traces.replay import replay

SMALL = os.environ.get("KCONFORM_BUDGET") == "small"
QUICK = sorted(name for name in SCENARIOS if name != EPOCH_EXHAUSTION.name)
"""Every scenario but epoch-exhaustion (32,768 InitProducerId round trips, about 10 s a run: its
reference runs are in the slow tier here, and every fast-tier gate test of the txn slice runs the
whole zoo on the reference)."""
CONFIGS = {
    "tv0": TxnConfig(),
    "tv2": TxnConfig(transaction_version=2),
    "tv0-no-verification": TxnConfig(verification=False),
    "tv2-no-verification": TxnConfig(transaction_version=2, verification=False),
    "tv0-waiting-consumers": TxnConfig(fetch_max_wait_ms=500),
    "tv2-waiting-consumers": TxnConfig(transaction_version=2, fetch_max_wait_ms=500, fetch_min_bytes=2),
}


def _run(name: str, cfg: TxnConfig, mutants: frozenset[str] = frozenset()) -> LockstepRun:
    return run_scenario(TxnCluster(), SCENARIOS[name], cfg, mutants)


def _events(run: LockstepRun) -> list[ev.Event]:
    return [e for step in run.steps for e in step.events]


def _conforms(run: LockstepRun, name: str) -> None:
    assert run.failure is None, run.failure
    assert len(run.steps) == len(SCENARIOS[name].ops) + 1


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("name", QUICK)
def test_scenario_conforms_on_the_reference(name: str, config: str) -> None:
    _conforms(_run(name, CONFIGS[config]), name)


# Each scenario reaches the situation it was written for on the reference (the exact message
# counts of ``_behind`` hold): the event that shows the rule the mutant breaks.


def _rejected_zombie(es: list[ev.Event], cfg: TxnConfig) -> bool:
    return any(
        isinstance(e, ev.TxnProduceHandled)
        and e.epoch == 0
        and e.error == ev.INVALID_PRODUCER_EPOCH
        and e.verify_msg < 0
        for e in es
    )


def _fenced_late_end_txn(es: list[ev.Event], cfg: TxnConfig) -> bool:
    late = [e for e in es if isinstance(e, ev.EndTxnHandled) and e.ctxn == 1][-1]
    if cfg.transaction_version == 2:
        return (late.error, late.state) == (ev.PRODUCER_FENCED, "Ongoing")
    return (late.error, late.state) == (ev.NONE, "PrepareCommit")  # TV0: Kafka ends transaction 2


def _fenced_stale_marker(es: list[ev.Event], cfg: TxnConfig) -> bool:
    stale = [e for e in es if isinstance(e, ev.MarkerHandled) and e.coordinator_epoch == 0]
    return [e.error for e in stale] == [ev.TRANSACTION_COORDINATOR_FENCED]


def _completed_after_failover(es: list[ev.Event], cfg: TxnConfig) -> bool:
    resent = [e for e in es if isinstance(e, ev.MarkerSent) and e.coordinator_epoch == 1]
    done = [e for e in es if isinstance(e, ev.MarkerResponseHandled) and e.state == "CompleteCommit"]
    return len(resent) == 1 and len(done) == 1 and ev.Quiesced(ev.CONTROLLER, True) in es


def _late_batches_after_the_marker(es: list[ev.Event], cfg: TxnConfig) -> bool:
    marker = next(i for i, e in enumerate(es) if isinstance(e, ev.MarkerHandled))
    late = [e for e in es[marker:] if isinstance(e, ev.TxnProduceHandled)]
    return len(late) == 3 and all(e.epoch == 0 for e in late)


def _older_duplicate(es: list[ev.Event], cfg: TxnConfig) -> bool:
    outcomes = [(e.outcome, e.base_offset) for e in es if isinstance(e, ev.TxnProduceHandled)]
    return outcomes == [("appended", 0), ("appended", 1), ("duplicate", 0)]


SITUATIONS: dict[str, Callable[[list[ev.Event], TxnConfig], bool]] = {
    "zombie-delayed-produce": _rejected_zombie,
    "late-endtxn-next-txn": _fenced_late_end_txn,
    "stale-coordinator-marker": _fenced_stale_marker,
    "failover-after-prepare": _completed_after_failover,
    "late-produce-after-abort": _late_batches_after_the_marker,
    "older-in-flight-duplicate": _older_duplicate,
}


@pytest.mark.parametrize("config", ["tv0", "tv2"])
@pytest.mark.parametrize("name", sorted(SITUATIONS))
def test_scenario_reaches_its_situation(name: str, config: str) -> None:
    cfg = CONFIGS[config]
    assert SITUATIONS[name](_events(_run(name, cfg)), cfg)


EXPECTED = {
    m.NO_SEQUENCE_DEDUP: (NON_CONFORMANCE, "txn_produce_handled"),
    m.SMALL_DEDUP_WINDOW: (NON_CONFORMANCE, "txn_produce_handled"),
    m.LSO_IGNORES_ONGOING: (NON_CONFORMANCE, "txn_consumer_fetch_handled"),
    m.LSO_OFF_BY_ONE: (NON_CONFORMANCE, "txn_consumer_fetch_handled"),
    m.NO_ABORTED_FILTER: (NON_CONFORMANCE, "consumer_polled"),
    m.NO_PRODUCE_EPOCH_FENCING: (NON_CONFORMANCE, "txn_produce_handled"),
    m.NO_VERIFICATION: (NON_CONFORMANCE, "txn_produce_handled"),
    m.LATE_ENDTXN_NEXT_TXN: (NON_CONFORMANCE, "end_txn_handled"),
    m.STALE_COORDINATOR_EPOCH_MARKER: (NON_CONFORMANCE, "marker_handled"),
    m.TXN_OFFSETS_VISIBLE_EARLY: (NON_CONFORMANCE, "offset_fetch_handled"),
    m.FAILOVER_FORGETS_PREPARE: (INVARIANT_VIOLATION, "NoHangingTransaction"),
    m.EPOCH_OVERFLOW: (NON_CONFORMANCE, "init_producer_id_handled"),
    m.DELAYED_FETCH_DROPS_ISOLATION: (NON_CONFORMANCE, "txn_fetch_completed"),
}
"""The finding each mutant's scenario ends with: the handler whose outcome the model refuses, or
the invariant (the liveness check at Quiesced for a coordinator that forgets its Prepare)."""


def test_every_txn_mutant_has_a_scenario_and_an_expected_finding() -> None:
    exposed = {mutant for s in SCENARIOS.values() for mutant in s.mutants}
    assert exposed == set(registry.mutants_of(registry.TXN)) == set(EXPECTED)


@pytest.mark.parametrize(
    ("name", "mutant"),
    [(s.name, mutant) for s in SCENARIOS.values() if s is not EPOCH_EXHAUSTION for mutant in s.mutants],
)
def test_scenario_fails_under_its_mutant(name: str, mutant: str) -> None:
    cfg = registry.config_for(mutant, TxnConfig())
    run = _run(name, cfg, frozenset({mutant}))
    assert run.failure is not None, f"{name} passes under {mutant}"
    assert (run.failure.verdict, run.failure.name) == EXPECTED[mutant], run.failure


def test_the_zoo_catches_each_quick_mutant_with_its_own_scenario() -> None:
    """The gate's order: the first failing scenario of each mutant is one that names it (cheap
    scenarios before epoch-exhaustion, so no mutant but epoch-overflow pays for it)."""
    for mutant in sorted(set(EXPECTED) - {m.EPOCH_OVERFLOW}):
        cfg = registry.config_for(mutant, TxnConfig())
        run = first_failing_run(TxnCluster, cfg, frozenset({mutant}), zoo(cfg))
        assert run is not None and run.failure is not None, mutant
        assert (run.failure.verdict, run.failure.name) == EXPECTED[mutant]
    assert list(SCENARIOS)[-1] == EPOCH_EXHAUSTION.name


def test_late_endtxn_is_the_reference_under_tv0_so_the_self_check_runs_it_under_tv2() -> None:
    run = _run("late-endtxn-next-txn", TxnConfig(), frozenset({m.LATE_ENDTXN_NEXT_TXN}))
    assert run.failure is None
    assert registry.config_for(m.LATE_ENDTXN_NEXT_TXN, TxnConfig()) == TxnConfig(transaction_version=2)
    assert registry.config_for(m.NO_VERIFICATION, TxnConfig()) == TxnConfig()
    assert registry.config_for(m.LATE_ENDTXN_NEXT_TXN, ReplicationConfig()) == ReplicationConfig()


@pytest.mark.parametrize("config", ["tv0-waiting-consumers", "tv2-waiting-consumers"])
def test_delayed_fetch_scenario_parks_at_the_lso_and_completes_when_the_lso_moves(config: str) -> None:
    """KAFKA-5355's situation on the reference: the read_committed fetch parks at an LSO held by an
    open transaction, an HW advance past more of its records leaves it parked, and the HW passing
    the commit marker completes it with the committed records, all below the LSO then."""
    es = _events(_run("delayed-fetch-beyond-lso", CONFIGS[config]))
    parked = [e for e in es if isinstance(e, ev.TxnFetchWaitHandled)]
    assert [(e.parked, e.read_committed, e.lso) for e in parked] == [(True, True, 0)]
    done = [i for i, e in enumerate(es) if isinstance(e, ev.TxnFetchCompleted)]
    assert len(done) == 1
    completed = es[done[0]]
    assert isinstance(completed, ev.TxnFetchCompleted)
    assert [r.offset for r in completed.records] == [0, 1, 2, 3] and completed.lso == 4
    hws = [e.hw for e in es[: done[0]] if isinstance(e, ev.HwAdvanced) and e.partition == "t-0"]
    assert hws == [1, 3, 4]  # the advance to 3 left it parked: the LSO stayed at 0


def test_the_delayed_fetch_scenario_runs_only_with_waiting_consumers() -> None:
    assert "delayed-fetch-beyond-lso" not in [s.name for s in zoo(TxnConfig())]
    assert "delayed-fetch-beyond-lso" in [s.name for s in zoo(TxnConfig(fetch_max_wait_ms=500))]
    assert registry.config_for(m.DELAYED_FETCH_DROPS_ISOLATION, TxnConfig()) == TxnConfig(fetch_max_wait_ms=5000)


def test_the_zoo_is_skipped_for_another_cluster_shape() -> None:
    cfg = TxnConfig(brokers=2)
    assert first_failing_run(TxnCluster, cfg, frozenset({m.NO_SEQUENCE_DEDUP}), zoo(cfg)) is None


def test_a_long_program_is_printed_with_its_middle_elided(tmp_path: Path) -> None:
    lines = [f"cluster.step({i})" for i in range(1000)]
    shown = _shown_program("\n".join(lines) + "\n", tmp_path / "cx.jsonl").splitlines()
    assert len(shown) == PROGRAM_HEAD_LINES + PROGRAM_TAIL_LINES + 1
    assert shown[0] == lines[0] and shown[-1] == lines[-1]
    assert str(tmp_path / "cx.jsonl") in shown[PROGRAM_HEAD_LINES]
    assert _shown_program("a\nb\n", tmp_path) == "a\nb\n"


# ------------------------------------------------------------------------------------ slow tier


@pytest.mark.slow
@pytest.mark.parametrize("config", ["tv0"] if SMALL else ["tv0", "tv2"])
def test_epoch_exhaustion_conforms_and_catches_the_overflow(config: str) -> None:
    """32,766 real epoch bumps, then the rotation to a fresh producer id at epoch 0 (KIP-360)."""
    cfg = CONFIGS[config]
    run = _run(EPOCH_EXHAUSTION.name, cfg)
    _conforms(run, EPOCH_EXHAUSTION.name)
    inits = [e for e in _events(run) if isinstance(e, ev.InitProducerIdHandled)]
    rotation = next(i for i, e in enumerate(inits) if e.pid == 1001)
    assert (inits[rotation - 1].pid, inits[rotation - 1].epoch) == (1000, 32766)
    assert (inits[rotation].pid, inits[rotation].epoch) == (1001, 0)
    # then KIP-360's previous-id rule: the rotation's retry (1000, 32766) and a rogue (1000, 32765)
    assert [(e.expected_epoch, e.error) for e in inits[rotation + 1 :]] == [
        (32766, ev.NONE),
        (32765, ev.PRODUCER_FENCED),
    ]
    mutated = _run(EPOCH_EXHAUSTION.name, cfg, frozenset({m.EPOCH_OVERFLOW}))
    assert mutated.failure is not None
    assert (mutated.failure.verdict, mutated.failure.name) == EXPECTED[m.EPOCH_OVERFLOW]


@pytest.mark.slow
@pytest.mark.parametrize("tv", [0] if SMALL else [0, 2])
def test_txn_self_check_catches_every_mutant_and_replays(tv: int, tmp_path: Path) -> None:
    console = Console(record=True, width=160)
    seconds = 30.0 if SMALL else 60.0
    options = GateOptions(
        TxnConfig(transaction_version=tv), seconds=seconds, seed=5, self_check=True, out=tmp_path, progress=False
    )
    code = run_gate(options, console)
    text = console.export_text()
    assert code == EXIT_PASS, text
    files = sorted(tmp_path.glob("mutant-*.jsonl"))
    assert [f.name for f in files] == [f"mutant-{name}.jsonl" for name in sorted(registry.mutants_of(registry.TXN))]
    late = read_counterexample(tmp_path / f"mutant-{m.LATE_ENDTXN_NEXT_TXN}.jsonl")
    assert isinstance(late.config, TxnConfig) and late.config.transaction_version == 2
    cx = read_counterexample(tmp_path / f"mutant-{m.FAILOVER_FORGETS_PREPARE}.jsonl")
    assert replay(cx, TxnCluster()).reproduces(cx)
