"""The exactly-once slice as the registry sees it: one ``Slice`` naming each of its parts."""

from __future__ import annotations

from kconform.conformance.slice import Slice, SliceModules, slice_of
from kconform.conformance.txn import coverage, machine, scenarios
from kconform.conformance.txn.lockstep import TxnJudge
from kconform.impl.txn.cluster import TxnCluster
from kconform.model import txn_invariants
from kconform.model.configs import TXN
from kconform.model.txn_config import TxnConfig


def describe(cfg: TxnConfig) -> str:
    """The gate's one-line description of an exactly-once configuration."""
    verification = "on" if cfg.verification else "off"
    out = (
        f"slice=txn transaction.version={cfg.transaction_version} verification={verification} "
        f"brokers={cfg.brokers} partitions={cfg.data_partitions}"
    )
    if cfg.delayed_fetch:
        out += f" fetch.max.wait.ms={cfg.fetch_max_wait_ms} fetch.min.bytes={cfg.fetch_min_bytes}"
    return out


GATE_CONFIGS = (
    ("txn-tv0", TxnConfig(transaction_version=0)),
    ("txn-tv2", TxnConfig(transaction_version=2, fetch_max_wait_ms=5000)),
)
"""What ``--slice all`` runs: TV0 with consumers answered at once, TV2 with consumers that wait
(model.txn_delayed_fetch): fetch.min.bytes 1 (Kafka's default) and fetch.max.wait.ms 5000, a legal
value above Kafka's 500 ms default so that parked fetches outlive more of a run's HW advances (at
seed 7, 300 examples: fetches completed by the LSO moving 2 with 500 ms, 64 with 5000 ms; the rest
expire)."""


SLICE: Slice[TxnConfig] = slice_of(
    SliceModules(machine, scenarios, coverage, txn_invariants),
    name=TXN,
    title="exactly-once (idempotent producer, transactions, read_committed, transactional offsets)",
    config_type=TxnConfig,
    parse_config=TxnConfig.from_json,
    gate_configs=lambda: GATE_CONFIGS,
    describe=describe,
    make_judge=TxnJudge,
    make_reference=TxnCluster,
)
