"""Which partition of an internal topic holds a key: the one function for consumer groups
(``__consumer_offsets``) and transactional ids (``__transaction_state``), kafka-facts §7.

Kafka computes both the same way: ``Utils.abs(key.hashCode) % partitions``
(GroupCoordinatorService.partitionFor / GroupMetadataManager.partitionFor for a group id with
offsets.topic.num.partitions; TransactionStateManager.partitionFor for a transactional id with
transaction.state.log.num.partitions; both default to 50). ``hashCode`` is Java's
``String.hashCode`` over UTF-16 code units with int32 overflow. ``Utils.abs`` is
``(n == Integer.MIN_VALUE) ? 0 : Math.abs(n)`` (clients/.../common/utils/Utils.java): since
KAFKA-1469 / KAFKA-1988 it is no longer ``n & 0x7fffffff``, which maps -1 to 2147483647 instead of 1.
"""

from __future__ import annotations

import functools

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
DEFAULT_PARTITIONS = 50
"""offsets.topic.num.partitions and transaction.state.log.num.partitions default to 50."""


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: s[0]·31^(n-1)+…+s[n-1] over UTF-16 code units, int32 overflow."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - 2**32 if h > INT32_MAX else h


def java_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``|n|``, except ``abs(Integer.MIN_VALUE) = 0``."""
    return 0 if n == INT32_MIN else abs(n)


@functools.lru_cache(maxsize=1024)
def partition_for(key: str, partitions: int = DEFAULT_PARTITIONS) -> int:
    """The internal-topic partition Kafka picks for a group id or a transactional id.
    A pure function of its arguments, cached: brokers, clients and the model ask it for every request."""
    if partitions < 1:
        raise ValueError(f"an internal topic has at least one partition, got {partitions}")
    return java_abs(java_string_hash(key)) % partitions
