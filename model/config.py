"""Configuration of one replicated partition and the protocol rung it runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kconform.model.protocol import Protocol as Protocol
from kconform.model.settings import ConfigError as ConfigError
from kconform.model.settings import ReplicationSettings, check_bounds, from_json_fields, json_of


@dataclass(frozen=True)
class ReplicationConfig(ReplicationSettings):
    """One partition replicated on brokers 0..replicas-1 (assignment order = broker id order).

    Times are simulated milliseconds. Defaults follow Kafka (kafka-facts §8) except
    min_insync_replicas (Kafka: 1), which the suite sets to 2 so that acks=all is meaningful. The
    fields, with the Kafka property, type and bounds of each, are ``ReplicationSettings``'
    (model.settings).
    """

    def __post_init__(self) -> None:
        check_bounds(self)
        if not 1 <= self.min_insync_replicas <= self.replicas:
            raise ConfigError(
                f"min.insync.replicas={self.min_insync_replicas} must be between 1 and replicas={self.replicas}"
            )
        if self.follower_fetching and not 0 <= self.client_rack < self.replicas:
            raise ConfigError(f"client_rack={self.client_rack} must name one of the {self.replicas} brokers")
        if self.replica_fetch_wait_max_ms >= self.request_timeout_ms:
            raise ConfigError(
                f"replica_fetch_wait_max_ms={self.replica_fetch_wait_max_ms} must be below "
                f"request_timeout_ms={self.request_timeout_ms} (Kafka requires replica.socket.timeout.ms >= "
                "replica.fetch.wait.max.ms; the answer must come before the fetcher's request times out)"
            )

    @property
    def effective_min_isr(self) -> int:
        """min(min.insync.replicas, replication factor) as Partition.scala computes it."""
        return min(self.min_insync_replicas, self.replicas)

    @property
    def brokers(self) -> range:
        return range(self.replicas)

    @property
    def delayed_fetch(self) -> bool:
        """Whether fetches of this configuration may wait in the purgatory."""
        return self.replica_fetch_wait_max_ms > 0 or self.fetch_max_wait_ms > 0

    @property
    def elr(self) -> bool:
        """Whether the controller keeps Eligible Leader Replicas (KIP-966, model.elr)."""
        return self.eligible_leader_replicas_version >= 1

    def to_json(self) -> dict[str, Any]:
        """The config as JSON; the delayed-fetch keys only when they differ from their defaults,
        so that every file written before they existed reads back and is written identically."""
        return json_of(self)

    @staticmethod
    def from_json(obj: Any) -> ReplicationConfig:
        """Build a config from a JSON object; unknown keys or bad values raise ConfigError."""
        kwargs = from_json_fields(obj, ReplicationConfig)
        return ReplicationConfig(**kwargs)
