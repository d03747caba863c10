"""Configuration of the fetch-session slice: one broker leading a few partitions, a few fetching
clients, the session cache's size and eviction time.

The broker's partitions are logs of the exactly-once slice's model (model.txn_partition: records,
transactions, HW, LSO, the aborted index) plus a log start offset (DeleteRecords, KIP-107); each
client is a consumer (FetchSessionHandler over the Fetcher's rules) or, if listed in
``followers``, a follower's fetcher, whose sessions are privileged in the cache (KIP-227).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from kconform.model.config import ConfigError
from kconform.model.fetch_session import MIN_EVICTION_MS

FETCH = "fetch"
"""The slice's name (``--slice fetch``, a config's ``slice`` key)."""
BROKER = 0
"""The broker's node id."""
CLIENT_NODE_BASE = 100
"""Client ``i`` is network node ``CLIENT_NODE_BASE + i``."""


def client_node(client: int) -> int:
    """The network address (and event ``node``) of client ``client``."""
    return CLIENT_NODE_BASE + client


@dataclass(frozen=True)
class FetchConfig:
    """The fetch-session slice. Kafka's defaults where the slice can afford them: the eviction time
    (MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS, 120 s) and request.timeout.ms (30 s); the cache has
    ``max_slots`` = 2 (Kafka: max.incremental.fetch.session.cache.slots = 1000) so that three
    clients contend for it; ``max_records`` stands for fetch.max.bytes / max.partition.fetch.bytes
    (records per partition per answer)."""

    partitions: int = 3
    clients: int = 3
    followers: tuple[int, ...] = (2,)
    """Clients that are followers' fetchers (privileged sessions)."""
    read_committed: tuple[int, ...] = (0,)
    """Clients fetching with isolation.level=read_committed (the others read_uncommitted)."""
    max_slots: int = 2
    eviction_ms: int = MIN_EVICTION_MS
    request_timeout_ms: int = 30_000
    max_records: int = 2

    @property
    def names(self) -> tuple[str, ...]:
        """The partitions' names, ``t-0`` .."""
        return tuple(f"t-{i}" for i in range(self.partitions))

    @property
    def client_ids(self) -> tuple[int, ...]:
        return tuple(range(self.clients))

    def privileged(self, client: int) -> bool:
        return client in self.followers

    def is_read_committed(self, client: int) -> bool:
        return client in self.read_committed

    def validate(self) -> FetchConfig:
        """This config, or ConfigError naming the bad field."""
        if not 1 <= self.partitions <= 16:
            raise ConfigError(f"partitions must be 1..16, got {self.partitions}")
        if not 1 <= self.clients <= 8:
            raise ConfigError(f"clients must be 1..8, got {self.clients}")
        if self.max_slots < 0 or self.eviction_ms < 0 or self.request_timeout_ms <= 0 or self.max_records <= 0:
            raise ConfigError("max_slots and eviction_ms are ≥ 0, request_timeout_ms and max_records > 0")
        for name, ids in (("followers", self.followers), ("read_committed", self.read_committed)):
            if any(not 0 <= c < self.clients for c in ids):
                raise ConfigError(f"{name} names clients outside 0..{self.clients - 1}: {ids}")
        return self

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"slice": FETCH}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @staticmethod
    def from_json(obj: dict[str, Any]) -> FetchConfig:
        """The config a JSON object (with ``"slice": "fetch"``) describes; ConfigError names a bad key."""
        known = {f.name: f for f in fields(FetchConfig)}
        unknown = set(obj) - set(known) - {"slice"}
        if unknown:
            raise ConfigError(f"unknown fetch config key(s) {sorted(unknown)}")
        kwargs: dict[str, Any] = {}
        for key, value in obj.items():
            if key == "slice":
                continue
            if key in ("followers", "read_committed"):
                if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
                    raise ConfigError(f"{key} is a list of client numbers, got {value!r}")
                kwargs[key] = tuple(value)
            else:
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ConfigError(f"{key} is an integer, got {value!r}")
                kwargs[key] = value
        return FetchConfig(**kwargs).validate()


__all__ = ["BROKER", "CLIENT_NODE_BASE", "FETCH", "FetchConfig", "client_node"]
