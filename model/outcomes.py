"""The closed sets of outcome names the model's handlers answer with, as types.

Each is a ``Literal`` of the exact strings that events, trace files and corpora store (so typing them
changes no serialized byte): mypy refuses any other string where a handler's outcome is built, and
``values`` gives the set to the validation boundary (traces/inputs/limits.py), so the accepted values
and the model's own can never drift apart.
"""

from __future__ import annotations

from typing import Literal, get_args

MetadataResult = Literal["become_leader", "become_follower", "update_isr", "ignored"]
"""What a broker did with a partition record (model.replication.apply_metadata; Kafka's
Partition.makeLeader / makeFollower, or an ISR-only change)."""

FetchResult = Literal["appended", "diverged", "out_of_range", "error", "ignored"]
"""What a follower did with a Fetch answer (model.replication.apply_fetch; Kafka's
AbstractFetcherThread.processFetchRequest)."""

EpochQueryResult = Literal["truncated", "retry", "error", "ignored"]
"""What a follower did with an OffsetsForLeaderEpoch answer (model.replication; KIP-101 / KIP-279)."""

BatchResult = Literal["appended", "duplicate", "rejected", "verifying"]
"""What a partition leader decided on a producer batch (model.producer_state; Kafka's
ProducerStateManager / UnifiedLog.analyzeAndValidateProducerState, KIP-890 verification)."""


def values(result: object) -> tuple[str, ...]:
    """The strings of one of the Literal types above, in declaration order."""
    return tuple(str(v) for v in get_args(result))
