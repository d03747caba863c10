"""The settings table (model.settings): every config field has its row, and the checks, the JSON
reader, ``--set``'s Kafka names and the input boundary's Kafka-type bounds all read it."""

from __future__ import annotations

import dataclasses
import re

import pytest

from kconform.ci.cli import _KAFKA_CONFIG_NAMES
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.settings import (
    SETTINGS,
    ConfigError,
    ReplicationSettings,
    Setting,
    TxnSettings,
    check_bounds,
    setting,
    settings_of,
)
from kconform.model.txn_config import TxnConfig
from kconform.traces.inputs.config import KAFKA_INT_MAX, parse_config
from kconform.traces.inputs.limits import INT32_MAX

CONFIGS = (ReplicationConfig, TxnConfig)


def test_every_config_field_is_a_setting_of_its_slice() -> None:
    assert [f.name for f in dataclasses.fields(ReplicationConfig)] == [
        f.name for f in dataclasses.fields(ReplicationSettings)
    ]
    assert [f.name for f in dataclasses.fields(TxnConfig)] == [f.name for f in dataclasses.fields(TxnSettings)]
    for config_type in CONFIGS:
        for name, row in settings_of(config_type):
            assert isinstance(row, Setting), name
            assert SETTINGS[name] == row
    assert set(SETTINGS) == {f.name for c in CONFIGS for f in dataclasses.fields(c)}


def test_defaults_are_the_rows() -> None:
    assert ReplicationConfig().to_json() == {
        "replicas": 3,
        "min_insync_replicas": 2,
        "unclean_leader_election": False,
        "replica_lag_time_max_ms": 30_000,
        "request_timeout_ms": 30_000,
        "flush_interval_ms": 0,
        "hw_checkpoint_interval_ms": 5_000,
        "protocol": "diverging-epoch",
    }
    assert ReplicationConfig().protocol is Protocol.DIVERGING_EPOCH
    txn = TxnConfig()
    assert (txn.transactional_ids, txn.groups, txn.verification) == (("txn-1",), ("my-group",), True)
    assert (txn.transaction_timeout_ms, txn.abort_timed_out_interval_ms, txn.state_log_partitions) == (
        60_000,
        10_000,
        50,
    )


@pytest.mark.parametrize(
    ("config_type", "field", "value", "message"),
    [
        (ReplicationConfig, "replicas", 8, "replicas must be 1..7, got 8"),
        (ReplicationConfig, "replica_lag_time_max_ms", 0, "replica_lag_time_max_ms must be positive, got 0"),
        (ReplicationConfig, "fetch_max_wait_ms", -1, "fetch_max_wait_ms must be >= 0, got -1"),
        (TxnConfig, "data_partitions", 9, "data_partitions must be 1..8, got 9"),
        (TxnConfig, "producer_id_expiration_ms", 0, "producer_id_expiration_ms must be positive, got 0"),
    ],
)
def test_bounds_are_checked_from_the_rows(config_type: type, field: str, value: int, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        config_type(**{field: value})
    edge = SETTINGS[field].maximum if value > 1 else SETTINGS[field].minimum
    config_type(**{field: edge})  # the near miss: the bound itself is allowed


def test_check_bounds_reads_only_the_configs_fields() -> None:
    @dataclasses.dataclass(frozen=True)
    class Two:
        replicas: int = setting(3, None, None, 1, 7)

    assert settings_of(Two) == (("replicas", Setting(None, None, 1, 7)),)
    check_bounds(Two())
    with pytest.raises(ConfigError, match=re.escape("replicas must be 1..7, got 0")):
        check_bounds(Two(replicas=0))


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"unclean_leader_election": 1}, "unclean_leader_election must be true or false"),
        ({"replicas": True}, "replicas must be an integer"),
        ({"protocol": "kip-999"}, "unknown protocol 'kip-999' \\(one of truncate-to-hw"),
        ({"replica": 3}, "unknown config key"),
    ],
)
def test_replication_json_reader(obj: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ReplicationConfig.from_json(obj)


def test_json_reader_reads_each_type() -> None:
    cfg = ReplicationConfig.from_json({"protocol": "kip-101", "unclean_leader_election": True, "replicas": 5})
    assert (cfg.protocol, cfg.unclean_leader_election, cfg.replicas) == (Protocol.KIP_101, True, 5)
    txn = TxnConfig.from_json({"slice": "txn", "groups": ["g"], "verification": False})
    assert (txn.groups, txn.verification) == (("g",), False)
    with pytest.raises(ConfigError, match="groups must be a list of strings"):
        TxnConfig.from_json({"groups": "g"})


def test_set_accepts_the_kafka_names_it_accepted_before_the_table() -> None:
    assert _KAFKA_CONFIG_NAMES == {
        "replication.factor": "replicas",
        "unclean.leader.election.enable": "unclean_leader_election",
        "log.flush.interval.ms": "flush_interval_ms",
        "replica.high.watermark.checkpoint.interval.ms": "hw_checkpoint_interval_ms",
        "transaction.partition.verification.enable": "verification",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "abort_timed_out_interval_ms",
        "transaction.state.log.num.partitions": "state_log_partitions",
        "offsets.topic.num.partitions": "offsets_topic_partitions",
        "transactional.id": "transactional_ids",
    }


def test_input_boundary_bounds_every_int_and_long_row() -> None:
    typed = {name for name, row in SETTINGS.items() if row.kafka_type in ("INT", "LONG")}
    assert set(KAFKA_INT_MAX) == typed
    # fetch.min.bytes is an INT (ConsumerConfig): one past int32 is refused, int32 itself is not.
    with pytest.raises(ConfigError, match="fetch_min_bytes = 2147483648 is outside Kafka's type"):
        parse_config({"fetch_min_bytes": INT32_MAX + 1})
    assert isinstance(parse_config({"fetch_min_bytes": INT32_MAX}), ReplicationConfig)


def test_a_row_is_a_frozen_value() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        SETTINGS["replicas"].minimum = 0  # type: ignore[misc]
    assert isinstance(SETTINGS["replicas"], Setting)


def test_optional_settings_are_written_only_off_their_default() -> None:
    assert "fetch_min_bytes" not in ReplicationConfig().to_json()
    assert ReplicationConfig(fetch_min_bytes=2).to_json()["fetch_min_bytes"] == 2
    txn = TxnConfig(fetch_max_wait_ms=500).to_json()
    assert list(txn)[-2:] == ["fetch_max_wait_ms", "slice"]
    assert "fetch_max_wait_ms" not in TxnConfig().to_json()
    assert TxnConfig.from_json(txn) == TxnConfig(fetch_max_wait_ms=500)
