"""The settings the slices' configurations are made of, each field declared once with what it stands for.

``ReplicationSettings`` and ``TxnSettings`` are the fields of ``ReplicationConfig``
(model.config) and ``TxnConfig`` (model.txn_config), which add the behaviour. Each field is
declared ``name: T = setting(default, kafka, kafka_type, minimum, maximum)``: the suite's default
(Kafka's, kafka-facts §8, except where its docstring says otherwise), the Kafka property it stands
for (None: the suite's own knob), Kafka's ConfigDef type for it (``INT``: int32, ``LONG``: int64;
core/src/main/scala/kafka/server/KafkaConfig.scala and the ``*Configs`` classes, ProducerConfig and
ConsumerConfig for the clients' ones) and the bounds the model needs. Everything that needs to know
a field reads it from here: the configs' checks (``check_bounds``) and JSON reader
(``from_json_fields``), the command line's ``--set`` with Kafka's property names
(``kafka_names``, ci.cli) and the input boundary's bound by Kafka's type (``SETTINGS``,
traces.inputs.config). A bound between fields (min.insync.replicas within the replicas) stays in
the config's own ``__post_init__``.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any, Literal

from kconform.model.protocol import Protocol


class ConfigError(ValueError):
    """A configuration Kafka would refuse, or one the suite cannot run."""


KafkaType = Literal["INT", "LONG", "BOOLEAN", "LIST"]
"""Kafka's ConfigDef type of a property; an ``INT`` holds an int32, a ``LONG`` an int64."""


@dataclass(frozen=True)
class Setting:
    """What a config field stands for and the bounds the model needs of it."""

    kafka: str | None = None
    """The Kafka property the field stands for (None: the suite's own knob)."""
    kafka_type: KafkaType | None = None
    """Kafka's type for the value (the input boundary refuses an integer it cannot hold)."""
    minimum: int | None = None
    maximum: int | None = None
    optional: bool = False
    """Written to JSON only when it differs from its default: a key added after files were
    recorded, so that those files read back and are written identically (``json_of``)."""


def setting(
    default: Any,
    kafka: str | None = None,
    kafka_type: KafkaType | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    *,
    optional: bool = False,
) -> Any:
    """A config field: its default, and its ``Setting`` in the field's metadata."""
    row = Setting(kafka, kafka_type, minimum, maximum, optional)
    return dataclasses.field(default=default, metadata={"setting": row})


@dataclass(frozen=True)
class ReplicationSettings:
    """The replication slice's fields (one partition on brokers 0..replicas-1); times are
    simulated milliseconds."""

    replicas: int = setting(3, "replication.factor", "INT", 1, 7)
    """The partition's replication factor."""
    min_insync_replicas: int = setting(2, "min.insync.replicas", "INT")
    """An acks=all write needs this many replicas in the ISR (NOT_ENOUGH_REPLICAS). Kafka's default
    is 1; the suite's 2 makes acks=all meaningful."""
    unclean_leader_election: bool = setting(False, "unclean.leader.election.enable", "BOOLEAN")
    """An out-of-sync replica may be elected (losses allowed)."""
    replica_lag_time_max_ms: int = setting(30_000, "replica.lag.time.max.ms", "LONG", 1)
    """A follower not caught up for this long leaves the ISR."""
    request_timeout_ms: int = setting(30_000, "request.timeout.ms", "INT", 1)
    """How long a producer waits for an acks=all answer."""
    flush_interval_ms: int = setting(0, "log.flush.interval.ms", "LONG", 0)
    """0: every append is flushed (fsync per write); >0: the log is flushed only at checkpoints."""
    hw_checkpoint_interval_ms: int = setting(5_000, "replica.high.watermark.checkpoint.interval.ms", "LONG", 1)
    """How often a broker writes its high watermarks to disk."""
    protocol: Protocol = setting(Protocol.DIVERGING_EPOCH)
    """The rung of the ladder of Kafka's replication fixes (model.protocol)."""
    replica_fetch_wait_max_ms: int = setting(0, "replica.fetch.wait.max.ms", "INT", 0, optional=True)
    """The followers' Fetch maxWaitMs (Kafka's default 500). 0: every follower Fetch is answered at
    once (ReplicaManager.fetchMessages answers at once when maxWaitMs <= 0), the suite's default,
    which keeps runs recorded before delayed fetch existed identical; > 0: a Fetch with fewer than
    ``replica_fetch_min_bytes`` records past its offset waits in the purgatory (DelayedFetch) and
    the follower fetches again at once after an answer."""
    replica_fetch_min_bytes: int = setting(1, "replica.fetch.min.bytes", "INT", 1, optional=True)
    """The followers' Fetch minBytes (default 1), counted in records."""
    replica_fetch_backoff_ms: int = setting(500, "replica.fetch.backoff.ms", "INT", 0, optional=True)
    """How long a follower's fetcher waits before asking again after an answer that brought nothing
    (AbstractFetcherThread.delayPartitions after a partition error, or a request that timed out).
    Kafka's default is 1000; the suite's 500 is the pause the reference has always made (after an
    empty answer too, as if the leader had waited replica.fetch.wait.max.ms's default 500 ms), so
    runs recorded before the setting existed are unchanged. FollowerKeepsFetching bounds the
    fetcher by it (model.fetch_pacing)."""
    fetch_max_wait_ms: int = setting(0, "fetch.max.wait.ms", "INT", 0, optional=True)
    """The longest fetch.max.wait.ms (consumer default 500) the state machine draws for a waiting
    consumer Fetch (operation ``consume_wait``); 0: it draws none."""
    fetch_min_bytes: int = setting(1, "fetch.min.bytes", "INT", 1, optional=True)
    """The largest fetch.min.bytes (consumer default 1, counted in records) the machine draws."""
    eligible_leader_replicas_version: int = setting(0, "eligible.leader.replicas.version", "INT", 0, 1, optional=True)
    """The ``eligible.leader.replicas.version`` feature level (KIP-966 part 1; Kafka 4.0 off by
    default, 4.1 on for new clusters): 1 makes the controller keep Eligible Leader Replicas
    (model.elr); 0, the suite's default, keeps every rung as it was before ELR existed."""
    follower_fetching: bool = setting(False, None, "BOOLEAN", optional=True)
    """KIP-392 follower fetching: the brokers run ``replica.selector.class`` =
    RackAwareReplicaSelector and a second consumer with ``client.rack`` = the rack of broker
    ``client_rack`` (every broker its own rack) reads from its preferred read replica (operation
    ``consume_replica``; model.read_replica). Off by default: runs recorded before it existed stay
    identical."""
    client_rack: int = setting(1, "client.rack", "INT", 0, 6, optional=True)
    """The broker whose rack the follower-fetching consumer is in."""
    metadata_max_age_ms: int = setting(5_000, "metadata.max.age.ms", "LONG", 1, optional=True)
    """How long the follower-fetching consumer keeps a preferred read replica (Kafka's default
    300000; the suite's 5 s, the reference clients' metadata refresh, so that runs see it expire)."""
    log_start_moves: bool = setting(False, None, "BOOLEAN", optional=True)
    """The suite's own knob: whether the state machine draws DeleteRecords (KIP-107, the admin
    client's ``deleteRecords``) and retention (``log.retention.ms`` / ``log.retention.bytes``
    deleting old segments) that move log start offsets (model.log_start). False, the default,
    draws neither, so every seeded run recorded before it existed stays identical."""


@dataclass(frozen=True)
class TxnSettings:
    """The exactly-once slice's fields (brokers 0..brokers-1); times are simulated milliseconds,
    short where the conformance machines reach them by advancing the clock."""

    brokers: int = setting(3, None, "INT", 1, 7)
    """Brokers 0..brokers-1, each a partition leader and a coordinator."""
    data_partitions: int = setting(2, None, "INT", 1, 8)
    """Partitions of the data topic ``t`` (``t-0`` led by broker 0, ``t-1`` by broker 1, ...)."""
    transactional_ids: tuple[str, ...] = setting(("txn-1",), "transactional.id", "LIST")
    """The ``transactional.id`` values the producers use."""
    groups: tuple[str, ...] = setting(("my-group",))
    """The consumer groups transactional offsets are committed to (``TxnOffsetCommit``)."""
    transaction_version: int = setting(0, "transaction.version", "INT")
    """0 or 2 (the ``transaction.version`` feature; 2 is KIP-890 part 2)."""
    verification: bool = setting(True, "transaction.partition.verification.enable", "BOOLEAN")
    """KIP-890 part 1."""
    transaction_timeout_ms: int = setting(60_000, "transaction.timeout.ms", "INT", 1)
    """The producers' transaction timeout (client default 60 s)."""
    transaction_max_timeout_ms: int = setting(900_000, "transaction.max.timeout.ms", "INT", 1)
    """A longer transaction.timeout.ms is INVALID_TRANSACTION_TIMEOUT."""
    transactional_id_expiration_ms: int = setting(604_800_000, "transactional.id.expiration.ms", "INT", 1)
    """An idle transactional id's state is removed."""
    producer_id_expiration_ms: int = setting(86_400_000, "producer.id.expiration.ms", "INT", 1)
    """An idle producer's state on a partition expires (KIP-854)."""
    abort_timed_out_interval_ms: int = setting(
        10_000, "transaction.abort.timed.out.transaction.cleanup.interval.ms", "INT", 1
    )
    """How often the coordinator looks for timed-out transactions."""
    state_log_partitions: int = setting(50, "transaction.state.log.num.partitions", "INT", 1)
    """Partitions of ``__transaction_state``."""
    offsets_topic_partitions: int = setting(50, "offsets.topic.num.partitions", "INT", 1)
    """Partitions of ``__consumer_offsets``."""
    fetch_max_wait_ms: int = setting(0, "fetch.max.wait.ms", "INT", 0, optional=True)
    """The consumers' ``fetch.max.wait.ms``: 0 (the default here, not Kafka's 500) answers every
    Fetch at once, as before delayed fetches were modelled, so files written then read back
    identically; > 0: a Fetch with fewer than ``fetch_min_bytes`` records below its isolation
    bound waits in the leader's purgatory (model.txn_delayed_fetch)."""
    fetch_min_bytes: int = setting(1, "fetch.min.bytes", "INT", 1, optional=True)
    """The consumers' ``fetch.min.bytes``, counted in records (Kafka's default 1)."""


def settings_of(config_type: type) -> tuple[tuple[str, Setting], ...]:
    """The fields of a config dataclass with their settings, in field order."""
    return tuple((f.name, f.metadata["setting"]) for f in dataclasses.fields(config_type))


SETTINGS: dict[str, Setting] = {
    name: row for settings in (ReplicationSettings, TxnSettings) for name, row in settings_of(settings)
}
"""Config field name → its setting, over every slice's settings (a name means one thing in every
slice that has it)."""


def json_of(config: Any) -> dict[str, Any]:
    """``config``'s fields as JSON, in field order: tuples as lists, enums by value, an optional
    field only when it differs from its default."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if f.metadata["setting"].optional and value == f.default:
            continue
        out[f.name] = (
            list(value) if isinstance(value, tuple) else value.value if isinstance(value, enum.Enum) else value
        )
    return out


def check_bounds(config: Any) -> None:
    """ConfigError naming the first field of ``config`` (in field order) outside its bounds."""
    for name, row in settings_of(type(config)):
        value = getattr(config, name)
        low, high = row.minimum, row.maximum
        if low is not None and high is not None and not low <= value <= high:
            raise ConfigError(f"{name} must be {low}..{high}, got {value}")
        if low is not None and high is None and value < low:
            raise ConfigError(f"{name} must be {'positive' if low == 1 else f'>= {low}'}, got {value}")


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


def _json_value(key: str, value: Any, default: Any) -> Any:
    """``value`` read as a value of the type of the field's ``default``."""
    if isinstance(default, bool):
        return json_bool(key, value)
    if isinstance(default, int):
        return json_int(key, value)
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{key} must be a list of strings, got {value!r}")
        return tuple(value)
    if isinstance(default, enum.Enum):
        try:
            return type(default)(value)
        except ValueError:
            names = ", ".join(str(member.value) for member in type(default))
            raise ConfigError(f"unknown {key} {value!r} (one of {names})") from None
    raise TypeError(f"no JSON reader for {key} (default {default!r})")


def from_json_fields(obj: Any, config_type: type, ignored: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The keyword arguments of ``config_type`` a JSON object gives, each value read as its field's
    type (booleans, integers, lists of names, enums by value); ConfigError names a bad key or value."""
    defaults = {f.name: f.default for f in dataclasses.fields(config_type)}
    return {
        key: _json_value(key, value, defaults[key]) for key, value in json_fields(obj, config_type, ignored).items()
    }


def kafka_names() -> dict[str, str]:
    """Kafka property → config field, for the properties that are not the field's name with its
    underscores as dots (``replication.factor`` → ``replicas``)."""
    return {row.kafka: name for name, row in SETTINGS.items() if row.kafka and row.kafka.replace(".", "_") != name}


__all__ = [
    "SETTINGS",
    "ConfigError",
    "KafkaType",
    "ReplicationSettings",
    "Setting",
    "TxnSettings",
    "check_bounds",
    "from_json_fields",
    "json_bool",
    "json_fields",
    "json_int",
    "json_of",
    "kafka_names",
    "setting",
    "settings_of",
]
