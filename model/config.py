"""Configuration of one replicated partition and the protocol rung it runs."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any


class Protocol(enum.Enum):
    """The ladder of Kafka's replication fixes; each rung is a small difference over one core.

    - TRUNCATE_TO_HW: before KIP-101 (< 0.11) a new follower truncates to its local HW.
    - KIP_101: OffsetsForLeaderEpoch v0 (0.11): truncate to the leader's end offset for the
      follower's latest epoch (answer carries no epoch).
    - KIP_279: the answer carries the epoch (2.0) so the follower finds the true divergence point.
    - KIP_320: Fetch and OffsetsForLeaderEpoch carry currentLeaderEpoch and are fenced (2.1);
      ISR expansion waits for the leader epoch's start offset.
    - DIVERGING_EPOCH: truncation on fetch via lastFetchedEpoch / divergingEpoch (2.7+, KIP-595
      style), with KIP-320 fencing: what Kafka runs today.
    """

    TRUNCATE_TO_HW = "truncate-to-hw"
    KIP_101 = "kip-101"
    KIP_279 = "kip-279"
    KIP_320 = "kip-320"
    DIVERGING_EPOCH = "diverging-epoch"

    @property
    def fenced(self) -> bool:
        """Whether requests carry and check currentLeaderEpoch (KIP-320)."""
        return self in (Protocol.KIP_320, Protocol.DIVERGING_EPOCH)

    @property
    def kafka_7415(self) -> bool:
        """Whether the leader-epoch cache has the rules of KAFKA-7415 (2.1, commit f2dd6aa2698):
        a new leader caches (its epoch, its LEO) at once, ``assign`` drops conflicting entries so
        epochs and start offsets strictly increase, and a query for an epoch older than the first
        entry is answered (that epoch, the first entry's start). Before (0.11 to 2.0: the rungs up
        to kip-279), epochs enter the cache only with appended batches, ``assign`` only appends
        (a later epoch at an offset not before the latest start) and such a query is undefined."""
        return self in (Protocol.KIP_320, Protocol.DIVERGING_EPOCH)

    @property
    def uses_epoch_query(self) -> bool:
        """Whether a new follower truncates through OffsetsForLeaderEpoch before fetching."""
        return self in (Protocol.KIP_101, Protocol.KIP_279, Protocol.KIP_320)


_OPTIONAL_KEYS = ("replica_fetch_wait_max_ms", "replica_fetch_min_bytes", "fetch_max_wait_ms", "fetch_min_bytes")


class ConfigError(ValueError):
    """A configuration Kafka would refuse, or one the suite cannot run."""


def json_fields(obj: Any, config_type: type, ignored: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The keys of the JSON object ``obj`` but the ``ignored`` ones, each a field of the dataclass
    ``config_type``; ConfigError when ``obj`` is no object or names another key."""
    if not isinstance(obj, dict):
        raise ConfigError(f"a config is a JSON object, got {type(obj).__name__}")
    body = {k: v for k, v in obj.items() if k not in ignored}
    unknown = set(body) - {f.name for f in dataclasses.fields(config_type)}
    if unknown:
        raise ConfigError(f"unknown config key(s): {sorted(unknown)}")
    return body


def json_bool(key: str, value: Any) -> bool:
    """``value`` if it is a JSON boolean, else ConfigError naming ``key``."""
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    return value


def json_int(key: str, value: Any) -> int:
    """``value`` if it is a JSON integer (not a boolean), else ConfigError naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{key} must be an integer, got {value!r}")
    return value


@dataclass(frozen=True)
class ReplicationConfig:
    """One partition replicated on brokers 0..replicas-1 (assignment order = broker id order).

    Times are simulated milliseconds. Defaults follow Kafka (kafka-facts §8) except
    min_insync_replicas (Kafka: 1), which the suite sets to 2 so that acks=all is meaningful.
    """

    replicas: int = 3
    """The partition's replication factor (``replication.factor``)."""
    min_insync_replicas: int = 2
    """``min.insync.replicas``: an acks=all write needs this many in the ISR (NOT_ENOUGH_REPLICAS)."""
    unclean_leader_election: bool = False
    """``unclean.leader.election.enable``: an out-of-sync replica may be elected (losses allowed)."""
    replica_lag_time_max_ms: int = 30_000
    """``replica.lag.time.max.ms``: a follower not caught up for this long leaves the ISR."""
    request_timeout_ms: int = 30_000
    """``request.timeout.ms``: how long a producer waits for an acks=all answer."""
    flush_interval_ms: int = 0
    """0: every append is flushed (fsync per write); >0: the log is flushed only at checkpoints."""
    hw_checkpoint_interval_ms: int = 5_000
    protocol: Protocol = Protocol.DIVERGING_EPOCH
    replica_fetch_wait_max_ms: int = 0
    """The followers' Fetch maxWaitMs (Kafka's replica.fetch.wait.max.ms, default 500). 0: every
    follower Fetch is answered at once (ReplicaManager.fetchMessages answers at once when
    maxWaitMs <= 0), the suite's default, which keeps runs recorded before delayed fetch existed
    identical; > 0: a Fetch with fewer than ``replica_fetch_min_bytes`` records past its offset
    waits in the purgatory (DelayedFetch) and the follower fetches again at once after an answer."""
    replica_fetch_min_bytes: int = 1
    """The followers' Fetch minBytes (replica.fetch.min.bytes, default 1), counted in records."""
    fetch_max_wait_ms: int = 0
    """The longest fetch.max.wait.ms (consumer default 500) the state machine draws for a waiting
    consumer Fetch (operation ``consume_wait``); 0: it draws none."""
    fetch_min_bytes: int = 1
    """The largest fetch.min.bytes (consumer default 1, counted in records) the machine draws."""

    def __post_init__(self) -> None:
        if not 1 <= self.replicas <= 7:
            raise ConfigError(f"replicas must be 1..7, got {self.replicas}")
        if not 1 <= self.min_insync_replicas <= self.replicas:
            raise ConfigError(
                f"min.insync.replicas={self.min_insync_replicas} must be between 1 and replicas={self.replicas}"
            )
        for name in (
            "replica_lag_time_max_ms",
            "request_timeout_ms",
            "hw_checkpoint_interval_ms",
            "replica_fetch_min_bytes",
            "fetch_min_bytes",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("flush_interval_ms", "replica_fetch_wait_max_ms", "fetch_max_wait_ms"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
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

    def to_json(self) -> dict[str, Any]:
        """The config as JSON; the delayed-fetch keys only when they differ from their defaults,
        so that every file written before they existed reads back and is written identically."""
        out = dataclasses.asdict(self)
        out["protocol"] = self.protocol.value
        for key in _OPTIONAL_KEYS:
            if out[key] == _DEFAULTS[key]:
                del out[key]
        return out

    @staticmethod
    def from_json(obj: Any) -> ReplicationConfig:
        """Build a config from a JSON object; unknown keys or bad values raise ConfigError."""
        kwargs: dict[str, Any] = {}
        for key, value in json_fields(obj, ReplicationConfig).items():
            if key == "protocol":
                try:
                    kwargs[key] = Protocol(value)
                except ValueError:
                    names = ", ".join(p.value for p in Protocol)
                    raise ConfigError(f"unknown protocol {value!r} (one of {names})") from None
            elif key == "unclean_leader_election":
                kwargs[key] = json_bool(key, value)
            else:
                kwargs[key] = json_int(key, value)
        return ReplicationConfig(**kwargs)


_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(ReplicationConfig)}
