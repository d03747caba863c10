"""The leader-epoch cache as a pure value: (epoch, start offset) pairs, both strictly increasing.

Semantics are Kafka's LeaderEpochFileCache (KIP-101, KIP-279; kafka-facts §3.6), by version: the
``kafka_7415`` switch (model.config.Protocol.kafka_7415) selects the rules before or after KAFKA-7415.
"""

from __future__ import annotations

from kconform.model.not_enabled import NotEnabled

EpochCache = tuple[tuple[int, int], ...]
UNDEFINED = (-1, -1)


def assign(cache: EpochCache, epoch: int, offset: int, kafka_7415: bool = True) -> EpochCache:
    """Record that ``epoch`` starts at ``offset`` (KIP-101).

    Since KAFKA-7415 (2.1): kept as is when ``epoch`` is the latest epoch and ``offset`` is not
    before its start; otherwise every entry with an epoch ≥ ``epoch`` or a start ≥ ``offset`` is
    dropped first, so an epoch can be re-assigned an earlier start and later epochs disappear.
    Before (``kafka_7415=False``, 0.11 to 2.0): appended only when ``epoch`` is later than the
    latest epoch and ``offset`` is not before the latest start; otherwise ignored
    (LeaderEpochFileCacheTest @ 2.0.0: shouldNotLetEpochGoBackwardsEvenIfMessageEpochsDo).
    """
    if epoch < 0 or offset < 0:
        raise NotEnabled(f"negative epoch/offset in assign({epoch}, {offset})")
    if not kafka_7415:
        if not cache or (epoch > cache[-1][0] and offset >= cache[-1][1]):
            return (*cache, (epoch, offset))
        return cache
    if cache and cache[-1][0] == epoch and offset >= cache[-1][1]:
        return cache
    kept = tuple((e, s) for (e, s) in cache if e < epoch and s < offset)
    return (*kept, (epoch, offset))


def latest_epoch(cache: EpochCache) -> int:
    """The latest cached epoch, -1 when the cache is empty."""
    return cache[-1][0] if cache else -1


def start_offset_of(cache: EpochCache, epoch: int) -> int:
    """The start offset recorded for ``epoch``, -1 when it is not cached."""
    for e, s in cache:
        if e == epoch:
            return s
    return -1


def end_offset_for(cache: EpochCache, requested: int, log_end: int, kafka_7415: bool = True) -> tuple[int, int]:
    """(epoch, end offset) answered for ``requested`` (KIP-279 OffsetsForLeaderEpoch v1+).

    -1 → undefined; the latest epoch → (it, LEO); nothing newer cached → undefined; older than
    the first entry → (requested, first start) since KAFKA-7415 (2.1), undefined before (the
    follower then falls back to its HW); else (largest epoch ≤ requested, start of the first
    epoch > requested).
    """
    if requested == -1 or not cache:
        return UNDEFINED
    if requested == cache[-1][0]:
        return requested, log_end
    later = [(e, s) for (e, s) in cache if e > requested]
    if not later:
        return UNDEFINED
    earlier = [e for (e, _s) in cache if e <= requested]
    if not earlier:
        return (requested, later[0][1]) if kafka_7415 else UNDEFINED
    return earlier[-1], later[0][1]


def truncate_from_end(cache: EpochCache, end_offset: int) -> EpochCache:
    """Drop every entry starting at or after ``end_offset`` (log truncated to ``end_offset``); a
    negative (undefined) offset changes nothing (LeaderEpochFileCache.truncateFromEnd;
    LeaderEpochFileCacheTest.shouldNotResetEpochHistoryTailIfUndefinedPassed)."""
    if end_offset < 0:
        return cache
    return tuple((e, s) for (e, s) in cache if s < end_offset)


def truncate_from_start(cache: EpochCache, start_offset: int) -> EpochCache:
    """The log start moved to ``start_offset`` (LeaderEpochFileCache.truncateFromStart): every
    entry starting at or before it is dropped, then the last dropped epoch is kept with
    ``start_offset`` as its start, so the epoch in force at the new log start stays known
    (kafka-facts §3.6; LeaderEpochFileCacheTest.shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs,
    shouldNotClearAnythingIfOffsetToFirstOffset). A negative (undefined) offset changes nothing
    (shouldNotResetEpochHistoryHeadIfUndefinedPassed)."""
    if start_offset < 0:
        return cache
    dropped = [(e, s) for (e, s) in cache if s <= start_offset]
    if not dropped:
        return cache
    kept = tuple((e, s) for (e, s) in cache if s > start_offset)
    return ((dropped[-1][0], start_offset), *kept)
