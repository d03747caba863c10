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
    return (
        f"slice=txn transaction.version={cfg.transaction_version} verification={verification} "
        f"brokers={cfg.brokers} partitions={cfg.data_partitions}"
    )


SLICE: Slice[TxnConfig] = slice_of(
    SliceModules(machine, scenarios, coverage, txn_invariants),
    name=TXN,
    title="exactly-once (idempotent producer, transactions, read_committed, transactional offsets)",
    config_type=TxnConfig,
    parse_config=TxnConfig.from_json,
    gate_configs=lambda: tuple((f"txn-tv{tv}", TxnConfig(transaction_version=tv)) for tv in (0, 2)),
    describe=describe,
    make_judge=TxnJudge,
    make_reference=TxnCluster,
)
