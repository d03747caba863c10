"""A replica's log: entries, high watermark and leader-epoch cache, written through to its disk.

The entry at offset ``o`` is ``entries[o]``; below the log start offset (DeleteRecords, retention,
a follower restarted at its leader's log start) it is a placeholder of epoch -1
(``model.log_start.deleted``) that is never read. Guarantees: offsets are contiguous; epochs of the
records in the log never decrease; the epoch cache follows LeaderEpochFileCache (kafka-facts §3.6,
truncateFromStart when the log start moves); log start ≤ HW ≤ LEO at all times (KAFKA-5634: the
log start never passes the HW); what reaches the disk is decided here (every append when
``sync_appends``, else only at checkpoints; truncation, log start and epoch-cache changes at once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.model.log_start import deleted
from kconform.traces.events import Entry

from .disk import Disk

UNDEFINED = (-1, -1)


class LeaderEpochCache:
    """(epoch, start offset) pairs, both strictly increasing (kafka-facts §3.6)."""

    def __init__(self, entries: tuple[tuple[int, int], ...] = (), kafka_7415: bool = True) -> None:
        self._entries: list[tuple[int, int]] = list(entries)
        self.kafka_7415 = kafka_7415
        """The rules since KAFKA-7415 (2.1); False: those of 0.11 to 2.0 (assign only appends, a
        query below the first entry is undefined)."""

    def snapshot(self) -> tuple[tuple[int, int], ...]:
        return tuple(self._entries)

    def latest_epoch(self) -> int:
        """The latest cached epoch, -1 when empty."""
        return self._entries[-1][0] if self._entries else -1

    def start_offset_of(self, epoch: int) -> int | None:
        """The cached start offset of ``epoch``, None if it is not cached."""
        for e, start in self._entries:
            if e == epoch:
                return start
        return None

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (LeaderEpochFileCache.assign).

        Nothing changes when ``epoch`` is the latest epoch and the offset is not before its
        start; otherwise every entry with an epoch ≥ ``epoch`` or a start ≥ ``start_offset`` is
        removed before appending, so an epoch may move earlier and later epochs disappear.
        """
        assert epoch >= 0 and start_offset >= 0, f"assign({epoch}, {start_offset})"
        if not self.kafka_7415:
            if not self._entries or (epoch > self._entries[-1][0] and start_offset >= self._entries[-1][1]):
                self._entries.append((epoch, start_offset))
            return
        if self._entries:
            latest_epoch, latest_start = self._entries[-1]
            if latest_epoch == epoch and start_offset >= latest_start:
                return
        self._entries = [(e, s) for e, s in self._entries if e < epoch and s < start_offset]
        self._entries.append((epoch, start_offset))

    def end_offset_for(self, requested_epoch: int, log_end: int) -> tuple[int, int]:
        """(epoch, end offset) for ``requested_epoch`` (endOffsetFor, KIP-101/KIP-279).

        -1 → undefined; the latest epoch → (it, LEO); no cached epoch above it → undefined;
        older than every cached epoch → (requested, first start); else (largest cached epoch ≤
        requested, start of the first cached epoch > requested).
        """
        if requested_epoch == -1:
            return UNDEFINED
        if self._entries and requested_epoch == self._entries[-1][0]:
            return requested_epoch, log_end
        higher = [(e, s) for e, s in self._entries if e > requested_epoch]
        if not higher:
            return UNDEFINED
        floor = [e for e, _ in self._entries if e <= requested_epoch]
        if not floor:
            return (requested_epoch, higher[0][1]) if self.kafka_7415 else UNDEFINED
        return floor[-1], higher[0][1]

    def truncate_from_end(self, end_offset: int) -> None:
        """Remove every entry starting at or after ``end_offset`` (a negative one: nothing)."""
        if end_offset < 0:
            return
        self._entries = [(e, s) for e, s in self._entries if s < end_offset]

    def truncate_from_start(self, start_offset: int) -> None:
        """The log start moved to ``start_offset`` (LeaderEpochFileCache.truncateFromStart): entries
        starting at or before it go, and the last of them comes back starting at ``start_offset``;
        a negative offset changes nothing."""
        if start_offset < 0:
            return
        gone = [(e, s) for e, s in self._entries if s <= start_offset]
        if gone:
            self._entries = [(gone[-1][0], start_offset)] + [(e, s) for e, s in self._entries if s > start_offset]


@dataclass(eq=False)
class ReplicaLog:
    """The log, HW and epoch cache of one replica, with its durable copy on ``disk`` (a fresh one
    is empty: no entries, HW 0, no epochs)."""

    disk: Disk
    sync_appends: bool
    kafka_7415: bool = True
    """The leader-epoch cache rules since KAFKA-7415 (2.1); False: those of 0.11 to 2.0."""
    entries: list[Entry] = field(default_factory=list)
    hw: int = 0
    epochs: LeaderEpochCache = field(default_factory=LeaderEpochCache)
    log_start: int = 0
    """The first offset served (UnifiedLog.logStartOffset)."""

    def __post_init__(self) -> None:
        self.epochs.kafka_7415 = self.kafka_7415

    @staticmethod
    def recover(disk: Disk, sync_appends: bool, kafka_7415: bool = True) -> ReplicaLog:
        """Reload after a restart: LEO = durable end, log start = min(its checkpoint, LEO), HW =
        min(HW checkpoint, LEO) but not below the log start (UnifiedLog.updateHighWatermark), epoch
        cache truncated from the end at the LEO (BrokerRestarted docstring)."""
        log = ReplicaLog(disk, sync_appends, kafka_7415)
        log.entries = list(disk.entries)
        log.log_start = min(disk.log_start, log.leo)
        log.hw = max(log.log_start, min(disk.hw_checkpoint, log.leo))
        log.epochs = LeaderEpochCache(disk.epochs, kafka_7415)
        log.epochs.truncate_from_end(log.leo)
        disk.write_epochs(log.epochs.snapshot())
        return log

    @property
    def leo(self) -> int:
        return len(self.entries)

    def read(self, start: int, end: int) -> tuple[Entry, ...]:
        """Entries in [start, end), empty when start ≥ end."""
        assert start >= self.log_start, f"read from {start} below the log start {self.log_start}"
        return tuple(self.entries[start:end])

    def append(self, entry: Entry) -> None:
        """Append one entry at the LEO; its (epoch, offset) goes into the epoch cache."""
        assert entry.offset == self.leo, f"append at {entry.offset} but LEO is {self.leo}"
        assert not self.entries or self.entries[-1].epoch <= entry.epoch, "epochs in a log never decrease"
        self.entries.append(entry)
        self.epochs.assign(entry.epoch, entry.offset)
        self.disk.write_epochs(self.epochs.snapshot())
        if self.sync_appends:
            self.disk.append(entry)

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        """makeLeader: record the new epoch's start (KAFKA-7415) durably."""
        self.epochs.assign(epoch, start_offset)
        self.disk.write_epochs(self.epochs.snapshot())

    def truncate_to(self, offset: int) -> None:
        """Truncate to ``offset`` (≤ LEO): log, epoch cache (truncateFromEnd), HW = min(HW, LEO)
        and log start = min(log start, ``offset``) (UnifiedLog.truncateTo: the one way a log start
        moves back, the log is then empty).

        At ``offset == LEO`` only the epoch cache changes (an epoch assigned at the LEO with no
        records goes), as UnifiedLog.truncateTo does.
        """
        assert 0 <= offset <= self.leo, f"truncate to {offset} outside [0, {self.leo}]"
        del self.entries[offset:]
        self.epochs.truncate_from_end(offset)
        self.hw = min(self.hw, offset)
        self.log_start = min(self.log_start, offset)
        self.disk.truncate(offset)
        self.disk.log_start = self.log_start
        self.disk.write_epochs(self.epochs.snapshot())

    def increment_log_start(self, offset: int) -> bool:
        """UnifiedLog.maybeIncrementLogStartOffset: move the log start forward to ``offset`` (never
        back; False when it is not later), the records below become placeholders, the epoch cache is
        truncated from the start (LeaderEpochFileCache.truncateFromStart), durably. The caller
        keeps ``offset`` ≤ HW (Kafka throws OffsetOutOfRangeException past it, KAFKA-5634)."""
        assert offset <= self.hw, f"log start {offset} past the HW {self.hw}"
        if offset <= self.log_start:
            return False
        for o in range(self.log_start, offset):
            self.entries[o] = deleted(o)
        self.log_start = offset
        self.epochs.truncate_from_start(offset)
        self.disk.delete_below(offset, self.entries)
        self.disk.write_epochs(self.epochs.snapshot())
        return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """UnifiedLog.truncateFullyAndStartAt (AbstractFetcherThread, a follower below its leader's
        log start): the log is emptied and restarts at ``offset``: log start, LEO and HW all
        ``offset`` (KAFKA-9491: the HW moves with the log start), the epoch cache cleared
        (LeaderEpochFileCache.clearAndFlush)."""
        self.entries = [deleted(o) for o in range(offset)]
        self.log_start = offset
        self.hw = offset
        self.epochs = LeaderEpochCache((), self.kafka_7415)
        self.disk.restart_at(offset, self.entries)
        self.disk.write_epochs(())

    def advance_hw(self, candidate: int) -> bool:
        """Leader HW: only ever increases (UnifiedLog.maybeIncrementHighWatermark)."""
        assert candidate <= self.leo, f"HW {candidate} above LEO {self.leo}"
        if candidate > self.hw:
            self.hw = candidate
            return True
        return False

    def set_follower_hw(self, leader_hw: int) -> None:
        """Follower HW = min(leader HW, own LEO), not below the log start (UnifiedLog.updateHighWatermark);
        it may go down (kafka-facts §3.2)."""
        self.hw = max(self.log_start, min(leader_hw, self.leo))

    def checkpoint(self, flush: bool) -> None:
        """Periodic checkpoint: flush the log (when appends are not synced) and the HW."""
        if flush:
            self.disk.flush(self.entries)
        self.disk.write_hw_checkpoint(self.hw)
