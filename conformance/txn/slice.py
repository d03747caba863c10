"""The exactly-once slice as the registry sees it: one ``Slice`` naming each of its parts."""

from __future__ import annotations

from pathlib import Path

from kconform.conformance.slice import CoverageArtifact, Slice
from kconform.conformance.txn.coverage import reachable_keys
from kconform.conformance.txn.lockstep import TxnJudge
from kconform.conformance.txn.machine import rules, swarm
from kconform.conformance.txn.scenarios import SCENARIOS, first_failing_scenario
from kconform.impl.mutants import mutants_of
from kconform.impl.txn_cluster import TxnCluster
from kconform.model import txn_invariants
from kconform.model.configs import TXN
from kconform.model.txn_config import TxnConfig
from kconform.traces.atomicfile import atomic_write_bytes
from kconform.traces.txn_picture import txn_state_svg
from kconform.traces.txn_report import render_txn_html
from kconform.traces.txn_workload import TxnWorkload


def describe(cfg: TxnConfig) -> str:
    """The gate's one-line description of an exactly-once configuration."""
    verification = "on" if cfg.verification else "off"
    return (
        f"slice=txn transaction.version={cfg.transaction_version} verification={verification} "
        f"brokers={cfg.brokers} partitions={cfg.data_partitions}"
    )


def write_state_picture(out: Path, covered: dict[str, int], cfg: TxnConfig, summary: str) -> Path:
    """The coordinator's state machine with the campaign's covered / uncovered transitions, as an
    HTML page ``txn-states.html`` in ``out`` (beside coverage.json)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "txn-states.html"
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>kconform: coordinator states</title>"
        "</head><body style='font-family:sans-serif'><h1>Transaction coordinator states exercised</h1>"
        f"<p>{summary} (handler outcomes and transitions)</p>{txn_state_svg(covered, cfg.transaction_version)}"
        "</body></html>\n"
    )
    atomic_write_bytes(path, page.encode("utf-8"))
    return path


SLICE: Slice[TxnConfig] = Slice(
    name=TXN,
    title="exactly-once (idempotent producer, transactions, read_committed, transactional offsets)",
    config_type=TxnConfig,
    parse_config=TxnConfig.from_json,
    gate_configs=lambda: tuple((f"txn-tv{tv}", TxnConfig(transaction_version=tv)) for tv in (0, 2)),
    describe=describe,
    make_judge=TxnJudge,
    invariants=lambda: txn_invariants.INVARIANTS,
    make_reference=TxnCluster,
    mutants=lambda: mutants_of(TXN),
    swarm=swarm,
    machine_rules=rules,
    first_failing_scenario=first_failing_scenario,
    scenarios=lambda: SCENARIOS,
    reachable_keys=reachable_keys,
    coverage_artifacts=(
        CoverageArtifact("coordinator state machine with the transitions exercised", write_state_picture),
    ),
    report_html=render_txn_html,
    make_workload=TxnWorkload,
    workload_module="kconform.traces.txn_workload",
)
