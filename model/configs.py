"""Every slice's configuration behind one JSON form: the ``slice`` key picks the slice.

A JSON config without ``slice`` (every file written before the exactly-once slice existed) is the
replication slice's; ``"slice": "txn"`` is the exactly-once slice's (model.txn_config). Another
slice registers its parser (``register_config``; conformance.registry does it for every slice it
registers), so files of that slice read back without this module naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kconform.model.config import ConfigError, ReplicationConfig
from kconform.model.fetch_config import FETCH, FetchConfig
from kconform.model.txn_config import TxnConfig


class SliceConfig(Protocol):
    """What every slice's configuration gives: a JSON form that ``config_from_json`` reads back.

    An open type, not a union of the known slices' configs: a registered slice's own config (the fetch
    slice's, a test's fake slice's) is one without this module naming it. Code that needs a slice's own
    fields narrows with ``isinstance`` to that slice's config class.
    """

    def to_json(self) -> dict[str, Any]: ...


AnyConfig = SliceConfig
"""Any slice's configuration (the name the layers above use)."""

REPLICATION = "replication"
TXN = "txn"
SLICES: tuple[str, ...] = (REPLICATION, TXN, FETCH)
"""The slices, in the order the gate runs them."""


def slice_of(cfg: object) -> str:
    """The slice a configuration belongs to (by its exact type); ConfigError for an unknown type."""
    try:
        return _NAMES[type(cfg)]
    except KeyError:
        raise ConfigError(f"{type(cfg).__name__} is no slice's configuration") from None


def replication_from_json(obj: dict[str, Any]) -> ReplicationConfig:
    """A replication config from its JSON object (which may carry ``"slice": "replication"``)."""
    return ReplicationConfig.from_json({k: v for k, v in obj.items() if k != "slice"})


_PARSERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    REPLICATION: replication_from_json,
    TXN: TxnConfig.from_json,
    FETCH: FetchConfig.from_json,
}
"""Slice name -> the parser of its JSON config (the whole object, ``slice`` key included)."""
_NAMES: dict[type, str] = {ReplicationConfig: REPLICATION, TxnConfig: TXN, FetchConfig: FETCH}
"""Configuration type -> its slice's name."""


def register_config(name: str, config_type: type, parse: Callable[[dict[str, Any]], Any]) -> None:
    """Make ``config_from_json`` read configs whose ``slice`` key is ``name`` with ``parse``, and
    ``slice_of`` name the slice of a ``config_type`` value."""
    _PARSERS[name] = parse
    _NAMES[config_type] = name


def unregister_config(name: str) -> None:
    """Forget slice ``name``'s parser and type (a test's fake slice cleans up with it)."""
    _PARSERS.pop(name, None)
    for config_type in [t for t, n in _NAMES.items() if n == name]:
        del _NAMES[config_type]


def config_from_json(obj: Any) -> AnyConfig:
    """The configuration a JSON object describes; ConfigError names an unknown slice or a bad key."""
    if not isinstance(obj, dict):
        raise ConfigError(f"a config is a JSON object, got {type(obj).__name__}")
    name = obj.get("slice", REPLICATION)
    parse = _PARSERS.get(name) if isinstance(name, str) else None
    if parse is None:
        raise ConfigError(f"unknown slice {name!r} (one of {', '.join(_PARSERS)})")
    config: AnyConfig = parse(obj)
    return config
