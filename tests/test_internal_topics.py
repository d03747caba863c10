"""The one partitionFor of groups and transactional ids: Java's String.hashCode and Kafka's
Utils.abs, with literal values (kafka-facts §7)."""

from __future__ import annotations

import pytest

from kconform.model import internal_topics as T
from kconform.model import txn_config


def test_java_string_hash_literals() -> None:
    assert T.java_string_hash("") == 0
    assert T.java_string_hash("a") == 97
    assert T.java_string_hash("my-group") == -1906497762
    assert T.java_string_hash("test-group") == 627841412
    assert T.java_string_hash("txn-1") == 110810510
    assert T.java_string_hash("polygenelubricants") == T.INT32_MIN  # hashCode is Integer.MIN_VALUE
    assert (
        T.java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00 == 1772899
    )  # a surrogate pair: two UTF-16 code units


def test_utils_abs_is_not_a_bit_mask() -> None:
    """Utils.abs = (n == Integer.MIN_VALUE) ? 0 : Math.abs(n): Integer.MIN_VALUE maps to 0 (Math.abs
    would stay negative) and -1 to 1 (the pre-KAFKA-1469 ``n & 0x7fffffff`` gave 2147483647)."""
    assert T.java_abs(T.INT32_MIN) == 0
    assert T.java_abs(-1) == 1
    assert T.java_abs(-1906497762) == 1906497762 != (-1906497762 & 0x7FFFFFFF)


@pytest.mark.parametrize(
    ("key", "partition"),
    [
        ("my-group", 12),
        ("test-group", 12),
        ("txn-1", 10),
        ("my-transactional-id", 46),
        ("", 0),
        ("polygenelubricants", 0),
    ],
)
def test_partition_for_literals_with_50_partitions(key: str, partition: int) -> None:
    assert T.partition_for(key) == partition


def test_the_bit_mask_would_place_my_group_elsewhere() -> None:
    assert (-1906497762 & 0x7FFFFFFF) % 50 == 36 and T.partition_for("my-group") == 12


def test_groups_and_transactional_ids_share_the_one_function() -> None:
    assert txn_config.partition_for is T.partition_for
    cfg = txn_config.TxnConfig()
    assert (
        cfg.offsets_partition("my-group")
        == f"__consumer_offsets-{T.partition_for('my-group', cfg.offsets_topic_partitions)}"
    )
    assert cfg.state_partition("txn-1").endswith(f"-{T.partition_for('txn-1', cfg.state_log_partitions)}")
    assert T.partition_for("my-group", 7) == 1906497762 % 7
    with pytest.raises(ValueError):
        T.partition_for("g", 0)
