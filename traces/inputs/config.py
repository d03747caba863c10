"""A configuration as an input: a file header's ``config``, a manifest entry's, ``--config`` / ``--set``.

The model's config classes check what the model needs (1..7 replicas, min.insync.replicas within
them, positive intervals); this boundary adds what Kafka's own ConfigDef types bound: an ``INT``
property is an int32, a ``LONG`` an int64 (core/src/main/scala/kafka/server/KafkaConfig.scala and
the ``*Configs`` classes; producer ``transaction.timeout.ms`` is an INT, ProducerConfig: each
setting's type is its row in model.settings.SETTINGS), and the
suite's bounds on names (at most 16 transactional ids or groups of at most 256 characters).
"""

from __future__ import annotations

from typing import Any

from kconform.model.config import ConfigError
from kconform.model.configs import AnyConfig, config_from_json
from kconform.model.settings import SETTINGS
from kconform.traces.inputs.limits import INT32_MAX, INT64_MAX, MAX_CLIENTS, MAX_NAME_CHARS

KAFKA_INT_MAX: dict[str, int] = {
    name: INT32_MAX if row.kafka_type == "INT" else INT64_MAX
    for name, row in SETTINGS.items()
    if row.kafka_type in ("INT", "LONG")
}
"""Config key → the largest value its Kafka type holds (INT: int32, LONG: int64), from the
settings table (model.settings)."""

NAME_LISTS = ("transactional_ids", "groups")


def parse_config(obj: Any) -> AnyConfig:
    """The configuration ``obj`` describes; ConfigError names the key and the bound it breaks."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            bound = KAFKA_INT_MAX.get(key)
            if bound is not None and isinstance(value, int) and not isinstance(value, bool) and abs(value) > bound:
                raise ConfigError(f"{key} = {value} is outside Kafka's type for it (at most {bound})")
            if key in NAME_LISTS and isinstance(value, list):
                if len(value) > MAX_CLIENTS:
                    raise ConfigError(f"{key}: at most {MAX_CLIENTS} names, got {len(value)}")
                if len(set(map(repr, value))) != len(value):
                    raise ConfigError(f"{key}: a name is listed twice")
                for name in value:
                    if isinstance(name, str) and len(name) > MAX_NAME_CHARS:
                        raise ConfigError(f"{key}: a name of {len(name)} characters (at most {MAX_NAME_CHARS})")
    return config_from_json(obj)
