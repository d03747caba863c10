"""Configuration of the exactly-once slice: brokers, partitions, transactional ids, protocol version.

The slice is a small cluster: data partitions of one topic, the ``__consumer_offsets`` partitions
of the groups used, and the ``__transaction_state`` partitions of the transactional ids used, each
led by one broker. Internal partitions are chosen exactly as Kafka does (kafka-facts §7):
``abs(javaStringHashCode(key)) % 50`` (model.internal_topics.partition_for, one function for both).

Replication of these partitions is the replication slice's business (model.replication proves it);
here a partition is one leader's log whose high watermark advances by ``HwAdvanced`` events and
never loses what it appended. The ``__transaction_state`` log is durable once written.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from kconform.model.config import ConfigError, json_bool, json_fields, json_int
from kconform.model.internal_topics import INT32_MAX as INT32_MAX
from kconform.model.internal_topics import INT32_MIN as INT32_MIN
from kconform.model.internal_topics import java_abs as java_abs
from kconform.model.internal_topics import java_string_hash as java_string_hash
from kconform.model.internal_topics import partition_for as partition_for

TRANSACTION_STATE_TOPIC = "__transaction_state"
CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"
DATA_TOPIC = "t"

SHORT_MAX = 2**15 - 1
"""Short.MaxValue = 32767: a producer epoch is an int16. 32767 is reserved for fencing; at 32766
the coordinator rotates the producer id (kafka-facts §1.3)."""


@dataclass(frozen=True)
class TxnConfig:
    """The exactly-once slice on brokers 0..brokers-1.

    ``transaction_version`` 0 is Kafka's production protocol (the epoch is bumped only when a
    producer is fenced or a transaction times out); 2 is KIP-890 part 2 (every EndTxn bumps the
    epoch, so a late EndTxn or marker cannot touch the next transaction). ``verification`` is
    KIP-890 part 1 (``transaction.partition.verification.enable``, default true since 3.6): a
    partition leader asks the coordinator before the first transactional write of a producer.
    Times are simulated milliseconds; defaults follow kafka-facts §8 except where the suite needs
    a short clock (transaction timeout and the expiry intervals, which the conformance machines
    reach by advancing the clock).
    """

    brokers: int = 3
    """Brokers 0..brokers-1, each a partition leader and a coordinator."""
    data_partitions: int = 2
    """Partitions of the data topic ``t`` (``t-0`` led by broker 0, ``t-1`` by broker 1, ...)."""
    transactional_ids: tuple[str, ...] = ("txn-1",)
    """The ``transactional.id`` values the producers use."""
    groups: tuple[str, ...] = ("my-group",)
    """The consumer groups transactional offsets are committed to (``TxnOffsetCommit``)."""
    transaction_version: int = 0
    """0 or 2 (the ``transaction.version`` feature; 2 is KIP-890 part 2)."""
    verification: bool = True
    """``transaction.partition.verification.enable`` (KIP-890 part 1)."""
    transaction_timeout_ms: int = 60_000
    """The producers' transaction.timeout.ms (client default 60 s)."""
    transaction_max_timeout_ms: int = 900_000
    """``transaction.max.timeout.ms``: a longer transaction.timeout.ms is INVALID_TRANSACTION_TIMEOUT."""
    transactional_id_expiration_ms: int = 604_800_000
    """``transactional.id.expiration.ms``: an idle transactional id's state is removed."""
    producer_id_expiration_ms: int = 86_400_000
    """``producer.id.expiration.ms``: an idle producer's state on a partition expires (KIP-854)."""
    abort_timed_out_interval_ms: int = 10_000
    """``transaction.abort.timed.out.transaction.cleanup.interval.ms``: how often timeouts are checked."""
    state_log_partitions: int = 50
    """``transaction.state.log.num.partitions``."""
    offsets_topic_partitions: int = 50
    """``offsets.topic.num.partitions``."""
    fetch_max_wait_ms: int = 0
    """The consumers' ``fetch.max.wait.ms``: 0 (the default here, not Kafka's 500) answers every
    Fetch at once, as before delayed fetches were modelled, so files written then read back
    identically; > 0: a Fetch with fewer than ``fetch_min_bytes`` records below its isolation
    bound waits in the leader's purgatory (model.txn_delayed_fetch)."""
    fetch_min_bytes: int = 1
    """The consumers' ``fetch.min.bytes``, counted in records (Kafka's default 1)."""

    def __post_init__(self) -> None:
        if not 1 <= self.brokers <= 7:
            raise ConfigError(f"brokers must be 1..7, got {self.brokers}")
        if not 1 <= self.data_partitions <= 8:
            raise ConfigError(f"data_partitions must be 1..8, got {self.data_partitions}")
        if self.transaction_version not in (0, 2):
            raise ConfigError(f"transaction_version must be 0 or 2, got {self.transaction_version}")
        if not self.transactional_ids or any(not t for t in self.transactional_ids):
            raise ConfigError("transactional_ids must be non-empty strings")
        for name in (
            "transaction_timeout_ms",
            "transaction_max_timeout_ms",
            "transactional_id_expiration_ms",
            "producer_id_expiration_ms",
            "abort_timed_out_interval_ms",
            "state_log_partitions",
            "offsets_topic_partitions",
            "fetch_min_bytes",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if self.fetch_max_wait_ms < 0:
            raise ConfigError(f"fetch_max_wait_ms must be >= 0, got {self.fetch_max_wait_ms}")

    # Partition names ---------------------------------------------------------------------------

    @property
    def data(self) -> tuple[str, ...]:
        """The data partitions, ``t-0``, ``t-1``, ..."""
        return tuple(f"{DATA_TOPIC}-{i}" for i in range(self.data_partitions))

    def state_partition(self, txn_id: str) -> str:
        """The ``__transaction_state`` partition that holds ``txn_id`` (its coordinator's log)."""
        return f"{TRANSACTION_STATE_TOPIC}-{partition_for(txn_id, self.state_log_partitions)}"

    def offsets_partition(self, group: str) -> str:
        """The ``__consumer_offsets`` partition of ``group``."""
        return f"{CONSUMER_OFFSETS_TOPIC}-{partition_for(group, self.offsets_topic_partitions)}"

    @property
    def state_partitions(self) -> tuple[str, ...]:
        return tuple(sorted({self.state_partition(t) for t in self.transactional_ids}))

    @property
    def offsets_partitions(self) -> tuple[str, ...]:
        return tuple(sorted({self.offsets_partition(g) for g in self.groups}))

    @property
    def log_partitions(self) -> tuple[str, ...]:
        """Every partition holding records and producer state: data, then consumer offsets."""
        return self.data + self.offsets_partitions

    def initial_leader(self, partition: str) -> int:
        """Who leads a partition at boot: data partition i on broker i mod brokers; internal
        partitions on broker (their number) mod brokers. Data and offsets partitions never move in
        this slice; ``__transaction_state`` partitions move with ``CoordinatorMoved``."""
        number = int(partition.rsplit("-", 1)[1])
        return number % self.brokers

    # JSON ------------------------------------------------------------------------------------

    @property
    def delayed_fetch(self) -> bool:
        """Whether consumer fetches of this configuration may wait in the purgatory."""
        return self.fetch_max_wait_ms > 0

    def to_json(self) -> dict[str, Any]:
        """The config as JSON; the delayed-fetch keys only when they differ from their defaults,
        so that every file written before they existed reads back and is written identically."""
        out = dataclasses.asdict(self)
        out["transactional_ids"] = list(self.transactional_ids)
        out["groups"] = list(self.groups)
        out["slice"] = "txn"
        for key in _OPTIONAL_KEYS:
            if out[key] == _DEFAULTS[key]:
                del out[key]
        return out

    @staticmethod
    def from_json(obj: Any) -> TxnConfig:
        """Build a config from a JSON object; unknown keys or bad values raise ConfigError."""
        kwargs: dict[str, Any] = {}
        for key, value in json_fields(obj, TxnConfig, frozenset({"slice"})).items():
            if key in ("transactional_ids", "groups"):
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ConfigError(f"{key} must be a list of strings, got {value!r}")
                kwargs[key] = tuple(value)
            elif key == "verification":
                kwargs[key] = json_bool(key, value)
            else:
                kwargs[key] = json_int(key, value)
        return TxnConfig(**kwargs)


_OPTIONAL_KEYS = ("fetch_max_wait_ms", "fetch_min_bytes")
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(TxnConfig)}
