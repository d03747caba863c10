"""The log start offset: the rules every slice's logs share (issue 14 §2).

A log's start offset is the first offset it still serves; everything below was deleted by
DeleteRecords (KIP-107, ``Partition.deleteRecordsOnLeader``) or by retention
(``UnifiedLog.deleteOldSegments``), or was never fetched by a follower that started at its leader's
log start (``AbstractFetcherThread.truncateFullyAndStartAt``). The replication slice
(model.replication) and the fetch-session slice (model.fetch_state) both use these functions; they
are pure functions of integers so that neither slice's log shape leaks into the other.

Sources: kafka-facts §3.2 (follower HW and log start), §3.6 (LeaderEpochFileCache.truncateFromStart),
§3.8 (OFFSET_OUT_OF_RANGE on fetch); UnifiedLog.maybeIncrementLogStartOffset / updateHighWatermark /
truncateTo; KAFKA-5634 (retention never deletes at or past the HW); KAFKA-9491 (a full truncation
raises the HW with the log start).
"""

from __future__ import annotations

from kconform.model.errors import NONE, OFFSET_OUT_OF_RANGE
from kconform.model.records import Entry

DELETED = -1
"""The epoch and record id of a deleted offset's placeholder in the replication slice's logs."""

HIGH_WATERMARK = -1
"""DeleteRecords' ``offset`` -1: delete up to the high watermark
(DeleteRecordsRequest.HIGH_WATERMARK; ``Partition.deleteRecordsOnLeader``)."""


def deleted(offset: int) -> Entry:
    """The placeholder a log holds at an ``offset`` below its log start: the record is gone."""
    return Entry(offset, DELETED, DELETED)


def in_range(fetch_offset: int, log_start: int, leo: int) -> bool:
    """Whether a Fetch at ``fetch_offset`` can be served (LocalLog.read): between the log start
    and the log end offset, both included; else OFFSET_OUT_OF_RANGE (kafka-facts §3.8, checked
    before the diverging-epoch check for a follower)."""
    return log_start <= fetch_offset <= leo


def delete_records(requested: int, log_start: int, hw: int) -> tuple[int, int]:
    """(error, new log start) of DeleteRecords on the leader (Partition.deleteRecordsOnLeader, KIP-107).

    ``requested`` -1 means the HW; any other offset below 0 or above the HW answers
    OFFSET_OUT_OF_RANGE and changes nothing; else the log start moves to ``requested`` when that
    is later (UnifiedLog.maybeIncrementLogStartOffset never moves it back: a request below it
    succeeds and changes nothing).
    """
    target = hw if requested == HIGH_WATERMARK else requested
    if target < 0 or target > hw:
        return OFFSET_OUT_OF_RANGE, log_start
    return NONE, max(log_start, target)


def retention_bound(hw: int) -> int:
    """The furthest retention may move a replica's log start: its own HW (KAFKA-5634: segments
    holding offsets at or past the HW are not deletable, UnifiedLog.deletableSegments)."""
    return hw


def follower_log_start(own: int, leader: int, hw: int) -> int:
    """A follower's log start after a Fetch answer (ReplicaFetcherThread.processPartitionData):
    max(own, leader's), applied after the HW update and never past the follower's HW
    (UnifiedLog.maybeIncrementLogStartOffset refuses a start above the HW)."""
    return max(own, min(leader, hw))


def clamp_hw(hw: int, log_start: int) -> int:
    """UnifiedLog.updateHighWatermark: a HW below the log start is raised to it."""
    return max(hw, log_start)


def after_truncation(log_start: int, to: int) -> int:
    """UnifiedLog.truncateTo: the log start after truncating the log to ``to``:
    min(``to``, log start), the one way a log start moves back (the log is then empty)."""
    return min(log_start, to)


def out_of_range_reset(follower_leo: int, leader_log_start: int, leader_leo: int) -> tuple[str, int]:
    """What a follower does with OFFSET_OUT_OF_RANGE (AbstractFetcherThread.fetchOffsetAndTruncate;
    KAFKA-7414: never fatal): ("truncate", leader LEO) when the leader's LEO is below the follower's
    (an unclean leader); ("start_at", leader log start) when the follower's LEO is below the
    leader's log start (truncateFullyAndStartAt); else ("refetch", follower LEO): fetch again from
    max(leader log start, own LEO), which is the follower's LEO (KAFKA-2143: not a full truncation)."""
    if leader_leo < follower_leo:
        return "truncate", leader_leo
    if leader_log_start > follower_leo:
        return "start_at", leader_log_start
    return "refetch", follower_leo
