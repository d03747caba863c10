"""Every slice's configuration behind one JSON form: the ``slice`` key picks the slice.

A JSON config without ``slice`` (every file written before the exactly-once slice existed) is the
replication slice's; ``"slice": "txn"`` is the exactly-once slice's (model.txn_config).
"""

from __future__ import annotations

from typing import Any

from kconform.model.config import ConfigError, ReplicationConfig
from kconform.model.txn_config import TxnConfig

AnyConfig = ReplicationConfig | TxnConfig

REPLICATION = "replication"
TXN = "txn"
SLICES: tuple[str, ...] = (REPLICATION, TXN)
"""The slices, in the order the gate runs them."""


def slice_of(cfg: AnyConfig) -> str:
    """The slice a configuration belongs to."""
    return TXN if isinstance(cfg, TxnConfig) else REPLICATION


def config_from_json(obj: Any) -> AnyConfig:
    """The configuration a JSON object describes; ConfigError names an unknown slice or a bad key."""
    if not isinstance(obj, dict):
        raise ConfigError(f"a config is a JSON object, got {type(obj).__name__}")
    name = obj.get("slice", REPLICATION)
    if name == TXN:
        return TxnConfig.from_json(obj)
    if name == REPLICATION:
        return ReplicationConfig.from_json({k: v for k, v in obj.items() if k != "slice"})
    raise ConfigError(f"unknown slice {name!r} (one of {', '.join(SLICES)})")
