"""Checks on one dumped log segment (DumpLogSegments batch lines), judged per chain of consecutive
lines (``Obs.stream``): text someone removed from a dump never joins two chains.

Sources: kafka.log.UnifiedLog / LogValidator (offsets assigned in order at append),
ProducerStateManager / ProducerAppendInfo (sequences, epochs, markers; KIP-98), KIP-101
(partitionLeaderEpoch stamped on every batch by the leader that appended it).
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.traces.logs.checks.base import Check, KeyedCheck
from kconform.traces.logs.observations import BATCH, Obs

COMPACTED_TOPICS = ("__consumer_offsets", "__transaction_state", "__cluster_metadata", "_schemas", "connect-")
"""Topics compacted by default (internal and well-known ones): gaps are expected there."""

INT32_SPAN = 1 << 31


def _is_compacted_topic(partition: str | None) -> bool:
    return partition is not None and partition.startswith(COMPACTED_TOPICS)


@dataclass
class _Prev:
    obs: Obs
    last: int


class OffsetsIncreasing(Check):
    """Offsets only grow within a segment: every batch starts after the previous one ended and
    ends at or after its start (offsets are assigned in order at append; compaction removes
    offsets, never reorders them)."""

    name = "segment-offsets-increasing"
    guarantee = "batches of a segment have increasing, non-overlapping offsets"
    cite = "kafka.log.UnifiedLog.append / LogValidator (offsets assigned monotonically); DumpLogSegments"
    kinds = frozenset({BATCH})

    def __init__(self) -> None:
        super().__init__()
        self._prev: dict[str, _Prev] = self.table()

    def observe(self, obs: Obs) -> None:
        base, last = obs.offset, obs.last_offset
        if base is None or last is None:
            return
        if last < base:
            self.flag(f"batch ends at {last} before it starts at {base}", [obs], obs.partition)
        prev = self._prev.get(obs.stream)
        if prev is not None:
            self.judged += 1
            if base <= prev.last:
                self.flag(
                    f"batch at offset {base} does not start after the previous batch's last offset {prev.last}",
                    [obs, prev.obs],
                    obs.partition,
                )
        self._prev[obs.stream] = _Prev(obs, max(last, prev.last if prev else last))


class OffsetsContiguous(KeyedCheck[str]):
    """Offsets of a segment have no gaps. Advisory: compaction (cleanup.policy=compact) removes
    whole batches, and a dump does not say whether its topic is compacted; chains that show
    compaction (a batch with fewer records than its offset span, a delete horizon, an internal
    compacted topic) are not judged."""

    name = "segment-offsets-contiguous"
    guarantee = "each batch starts right after the previous one (no offset gap) unless compaction removed offsets"
    cite = "kafka.log.UnifiedLog.append (nextOffset); LogCleaner (compaction leaves gaps)"
    kinds = frozenset({BATCH})
    advisory = True

    def __init__(self) -> None:
        super().__init__()
        self._compacted: dict[str, bool] = self.table()

    def observe(self, obs: Obs) -> None:
        if obs.offset is None or obs.last_offset is None:
            return
        if obs.compacted or _is_compacted_topic(obs.partition):
            self._compacted[obs.stream] = True
        if obs.stream in self._compacted:
            return
        prev = self.swap(obs.stream, obs)
        if prev is None or prev.last_offset is None:
            return
        self.judged += 1
        if obs.offset > prev.last_offset + 1:
            self.flag(
                f"offsets {prev.last_offset + 1}..{obs.offset - 1} are missing between two batches "
                "(compaction, or lost records)",
                [obs, prev],
                obs.partition,
            )


class LeaderEpochsNonDecreasing(KeyedCheck[str]):
    """The partition leader epoch stamped on batches never decreases along a segment: a leader
    appends with its epoch, followers copy batches as they are, and a new leader has a larger
    epoch (KIP-101)."""

    name = "segment-leader-epochs-non-decreasing"
    guarantee = "partitionLeaderEpoch never decreases along a segment"
    cite = "KIP-101; kafka.log.UnifiedLog.append (leader epoch assigned to batches), LeaderEpochFileCache"
    kinds = frozenset({BATCH})

    def observe(self, obs: Obs) -> None:
        epoch = obs.leader_epoch
        if epoch is None or epoch < 0:
            return
        prev = self.last.get(obs.stream)
        if prev is not None and prev.leader_epoch is not None:
            before = prev.leader_epoch
            if not self.judge(
                epoch >= before,
                lambda: f"batch at offset {obs.offset} has leader epoch {epoch} after a batch with epoch {before}",
                [obs, prev],
                obs.partition,
            ):
                return
        self.last[obs.stream] = obs


class ProducerSequencesContiguous(KeyedCheck[tuple[str, int]]):
    """An idempotent producer's batches in a partition carry consecutive sequence numbers within one
    producer epoch (the broker rejects gaps with OUT_OF_ORDER_SEQUENCE_NUMBER and drops duplicates,
    KIP-98): the next batch starts at the previous last sequence + 1 (wrapping at 2^31), and a
    batch's sequences span its record count. Not judged on compacted chains."""

    name = "producer-sequences-contiguous"
    guarantee = "per producer id and epoch, batch sequences continue from the previous batch (no gap, no duplicate)"
    cite = "KIP-98; kafka.log.ProducerAppendInfo.checkSequence (OutOfOrderSequenceException, duplicates)"
    kinds = frozenset({BATCH})

    def __init__(self) -> None:
        super().__init__()
        self._compacted: dict[str, bool] = self.table()

    def observe(self, obs: Obs) -> None:
        if obs.compacted or _is_compacted_topic(obs.partition):
            self._compacted[obs.stream] = True
        pid, seq = obs.pid, obs.base_seq
        if obs.control or pid is None or pid < 0 or seq is None or seq < 0 or obs.stream in self._compacted:
            return
        if obs.count is not None and obs.last_seq is not None and obs.last_seq >= 0:
            self.judged += 1
            if (obs.last_seq - seq) % INT32_SPAN != obs.count - 1:
                self.flag(f"batch of {obs.count} records has sequences {seq}..{obs.last_seq}", [obs], obs.partition)
        prev = self.swap((obs.stream, pid), obs)
        if prev is None or prev.producer_epoch != obs.producer_epoch or prev.last_seq is None:
            return
        self.judged += 1
        expected = (prev.last_seq + 1) % INT32_SPAN
        if seq != expected:
            what = "repeats" if seq <= prev.last_seq else "skips ahead of"
            self.flag(
                f"producer {pid} epoch {obs.producer_epoch}: batch at offset {obs.offset} starts at sequence {seq}, "
                f"expected {expected} ({what} the previous batch's last sequence {prev.last_seq})",
                [obs, prev],
                obs.partition,
            )


class ProducerEpochsNonDecreasing(Check):
    """Once a partition has a batch (or marker) of producer epoch E from a producer id, no later
    batch of that producer id has a smaller epoch: the broker fences older epochs (KIP-98,
    INVALID_PRODUCER_EPOCH / ProducerFencedException)."""

    name = "producer-epochs-non-decreasing"
    guarantee = "a fenced (older) producer epoch never writes again to a partition"
    cite = "KIP-98; kafka.log.ProducerAppendInfo.checkProducerEpoch"
    kinds = frozenset({BATCH})

    def __init__(self) -> None:
        super().__init__()
        self._max: dict[tuple[str, int], Obs] = self.table()

    def observe(self, obs: Obs) -> None:
        pid, epoch = obs.pid, obs.producer_epoch
        if pid is None or pid < 0 or epoch is None or epoch < 0:
            return
        key = (obs.stream, pid)
        best = self._max.get(key)
        if best is None or best.producer_epoch is None:
            self._max[key] = obs
            return
        self.judged += 1
        if epoch < best.producer_epoch:
            self.flag(
                f"producer {pid} wrote with epoch {epoch} at offset {obs.offset} after epoch {best.producer_epoch} "
                "(a fenced producer's write was accepted)",
                [obs, best],
                obs.partition,
            )
        elif epoch > best.producer_epoch:
            self._max[key] = obs
