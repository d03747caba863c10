"""Unit tests of the reference broker's log, leader-epoch cache and disk (kafka-facts §3.6)."""

from __future__ import annotations

from kconform.impl.replication.disk import Disk
from kconform.impl.replication.log import LeaderEpochCache, ReplicaLog
from kconform.traces.events import Entry


def _cache(*entries: tuple[int, int]) -> LeaderEpochCache:
    cache = LeaderEpochCache()
    for epoch, start in entries:
        cache.assign(epoch, start)
    return cache


def test_assign_ignores_same_epoch_at_later_offset() -> None:
    cache = _cache((0, 0), (0, 5))
    assert cache.snapshot() == ((0, 0),)


def test_assign_moves_an_epoch_earlier_and_drops_later_epochs() -> None:
    cache = _cache((0, 0), (2, 5), (3, 8))
    cache.assign(2, 4)
    assert cache.snapshot() == ((0, 0), (2, 4))


def test_end_offset_for_follows_leader_epoch_file_cache() -> None:
    cache = _cache((1, 0), (3, 4), (5, 9))
    leo = 12
    assert cache.end_offset_for(-1, leo) == (-1, -1)
    assert cache.end_offset_for(5, leo) == (5, leo)
    assert cache.end_offset_for(6, leo) == (-1, -1)
    assert cache.end_offset_for(0, leo) == (0, 0)
    assert cache.end_offset_for(2, leo) == (1, 4)
    assert cache.end_offset_for(3, leo) == (3, 9)
    assert LeaderEpochCache().end_offset_for(0, 0) == (-1, -1)


def test_truncate_from_end_removes_entries_starting_at_or_after_offset() -> None:
    cache = _cache((0, 0), (1, 3), (2, 6))
    cache.truncate_from_end(6)
    assert cache.snapshot() == ((0, 0), (1, 3))


def test_truncation_at_leo_drops_an_epoch_without_records() -> None:
    log = ReplicaLog(Disk(), sync_appends=True)
    log.append(Entry(0, 0, 1))
    log.assign_epoch(1, 1)
    log.truncate_to(1)
    assert log.leo == 1
    assert log.epochs.snapshot() == ((0, 0),)


def test_unsynced_appends_are_lost_until_a_checkpoint() -> None:
    disk = Disk()
    log = ReplicaLog(disk, sync_appends=False)
    log.append(Entry(0, 0, 1))
    log.hw = 1
    log.checkpoint(flush=True)
    log.append(Entry(1, 0, 2))
    recovered = ReplicaLog.recover(disk, sync_appends=False)
    assert recovered.entries == [Entry(0, 0, 1)]
    assert recovered.hw == 1


def test_recovery_clamps_hw_and_truncates_epoch_cache_to_durable_end() -> None:
    disk = Disk()
    log = ReplicaLog(disk, sync_appends=False)
    log.append(Entry(0, 0, 1))
    log.checkpoint(flush=True)
    log.append(Entry(1, 2, 2))
    log.hw = 2
    disk.write_hw_checkpoint(2)
    recovered = ReplicaLog.recover(disk, sync_appends=False)
    assert recovered.leo == 1
    assert recovered.hw == 1
    assert recovered.epochs.snapshot() == ((0, 0),)


def test_truncation_is_durable_at_once() -> None:
    disk = Disk()
    log = ReplicaLog(disk, sync_appends=True)
    for offset in range(3):
        log.append(Entry(offset, 0, offset))
    log.truncate_to(1)
    assert disk.entries == [Entry(0, 0, 0)]
