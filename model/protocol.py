"""The ladder of Kafka's replication fixes the replication slice runs on (a config's ``protocol``)."""

from __future__ import annotations

import enum


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


__all__ = ["Protocol"]
