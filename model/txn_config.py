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

from dataclasses import dataclass
from functools import cache
from typing import Any

from kconform.model.internal_topics import INT32_MAX as INT32_MAX
from kconform.model.internal_topics import INT32_MIN as INT32_MIN
from kconform.model.internal_topics import java_abs as java_abs
from kconform.model.internal_topics import java_string_hash as java_string_hash
from kconform.model.internal_topics import partition_for as partition_for
from kconform.model.settings import ConfigError, TxnSettings, check_bounds, from_json_fields, json_of

TRANSACTION_STATE_TOPIC = "__transaction_state"
CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"
DATA_TOPIC = "t"

SHORT_MAX = 2**15 - 1
"""Short.MaxValue = 32767: a producer epoch is an int16. 32767 is reserved for fencing; at 32766
the coordinator rotates the producer id (kafka-facts §1.3)."""


@dataclass(frozen=True)
class TxnConfig(TxnSettings):
    """The exactly-once slice on brokers 0..brokers-1.

    ``transaction_version`` 0 is Kafka's production protocol (the epoch is bumped only when a
    producer is fenced or a transaction times out); 2 is KIP-890 part 2 (every EndTxn bumps the
    epoch, so a late EndTxn or marker cannot touch the next transaction). ``verification`` is
    KIP-890 part 1 (``transaction.partition.verification.enable``, default true since 3.6): a
    partition leader asks the coordinator before the first transactional write of a producer.
    Times are simulated milliseconds; defaults follow kafka-facts §8 except where the suite needs
    a short clock (transaction timeout and the expiry intervals, which the conformance machines
    reach by advancing the clock). The fields, with the Kafka property, type and bounds of each,
    are ``TxnSettings``' (model.settings).
    """

    def __post_init__(self) -> None:
        check_bounds(self)
        if self.transaction_version not in (0, 2):
            raise ConfigError(f"transaction_version must be 0 or 2, got {self.transaction_version}")
        if not self.transactional_ids or any(not t for t in self.transactional_ids):
            raise ConfigError("transactional_ids must be non-empty strings")

    # Partition names ---------------------------------------------------------------------------

    @property
    def data(self) -> tuple[str, ...]:
        """The data partitions, ``t-0``, ``t-1``, ..."""
        return _data_partitions(self.data_partitions)

    def state_partition(self, txn_id: str) -> str:
        """The ``__transaction_state`` partition that holds ``txn_id`` (its coordinator's log)."""
        return _state_partition(txn_id, self.state_log_partitions)

    def offsets_partition(self, group: str) -> str:
        """The ``__consumer_offsets`` partition of ``group``."""
        return _offsets_partition(group, self.offsets_topic_partitions)

    @property
    def state_partitions(self) -> tuple[str, ...]:
        return tuple(sorted({self.state_partition(t) for t in self.transactional_ids}))

    @property
    def offsets_partitions(self) -> tuple[str, ...]:
        return _offsets_partitions(self.groups, self.offsets_topic_partitions)

    @property
    def log_partitions(self) -> tuple[str, ...]:
        """Every partition holding records and producer state: data, then consumer offsets."""
        return _log_partitions(self.data_partitions, self.groups, self.offsets_topic_partitions)

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
        """The config as JSON with its ``slice`` key; the delayed-fetch keys only when they differ
        from their defaults, so that every file written before they existed reads back and is
        written identically."""
        return {**json_of(self), "slice": "txn"}

    @staticmethod
    def from_json(obj: Any) -> TxnConfig:
        """Build a config from a JSON object; unknown keys or bad values raise ConfigError."""
        kwargs = from_json_fields(obj, TxnConfig, frozenset({"slice"}))
        return TxnConfig(**kwargs)


# The partition names are pure functions of a few fields, asked for by the reference cluster at
# nearly every operation: each is computed once per distinct argument (a frozen configuration's
# fields never change, so the cache is the value the property computed before).


@cache
def _data_partitions(count: int) -> tuple[str, ...]:
    return tuple(f"{DATA_TOPIC}-{i}" for i in range(count))


@cache
def _state_partition(txn_id: str, partitions: int) -> str:
    return f"{TRANSACTION_STATE_TOPIC}-{partition_for(txn_id, partitions)}"


@cache
def _offsets_partition(group: str, partitions: int) -> str:
    return f"{CONSUMER_OFFSETS_TOPIC}-{partition_for(group, partitions)}"


@cache
def _offsets_partitions(groups: tuple[str, ...], partitions: int) -> tuple[str, ...]:
    return tuple(sorted({_offsets_partition(g, partitions) for g in groups}))


@cache
def _log_partitions(data: int, groups: tuple[str, ...], offsets_partitions: int) -> tuple[str, ...]:
    return _data_partitions(data) + _offsets_partitions(groups, offsets_partitions)
