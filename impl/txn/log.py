"""One partition of the exactly-once slice on its leader: the log of Records, the producer state
of every producer id, the LSO bookkeeping, the aborted-transaction index and (for a
``__consumer_offsets`` partition) the group offsets.

Guarantees (kafka-facts §2, §4, §1.8, §1.10):
- a client batch is validated in Kafka's order: duplicate (same epoch, exact sequence range among
  the last NUM_BATCHES_TO_RETAIN batches → the original offset, nothing appended), epoch
  (lower → INVALID_PRODUCER_EPOCH), sequence (OUT_OF_ORDER_SEQUENCE_NUMBER), transaction state
  (a non-transactional batch during an open transaction → INVALID_TXN_STATE);
- a marker of a lower producer epoch or an older coordinator epoch is refused; one of the same
  epoch keeps the cached batches (docs/transactions.md correction), a new epoch clears them;
- LSO = min(first unstable offset, HW), where completed transactions stay unstable until their
  marker is below the HW; the aborted index holds one entry per aborted non-empty transaction;
- transactional offsets stay pending until the COMMIT marker and are dropped on ABORT.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kconform.model.txn_config import INT32_MAX
from kconform.traces.events import (
    ABORT_MARKER,
    COMMIT_MARKER,
    INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE,
    NO_CONTROL,
    NONE,
    OFFSET_OUT_OF_RANGE,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    TRANSACTION_COORDINATOR_FENCED,
    AbortedTxn,
    Record,
    TopicOffset,
)

from ..runtime import World
from . import mutants as m

NO_PRODUCER_ID = -1
"""RecordBatch.NO_PRODUCER_ID: the batch of a producer without idempotence."""
NUM_BATCHES_TO_RETAIN = 5
"""ProducerStateEntry.NUM_BATCHES_TO_RETAIN (KAFKA-5494; 0.11 kept one)."""


def next_seq(seq: int, count: int) -> int:
    """``seq`` + ``count`` wrapping at Int.MaxValue → 0 (DefaultRecordBatch.incrementSequence)."""
    return (seq + count) % (INT32_MAX + 1)


@dataclass
class CachedBatch:
    """BatchMetadata: a batch's sequence range and first offset."""

    first_seq: int
    last_seq: int
    first_offset: int


@dataclass
class ProducerEntry:
    """ProducerStateEntry: epoch, coordinator epoch, the cached batches, the open transaction."""

    epoch: int = -1
    coordinator_epoch: int = -1
    batches: list[CachedBatch] = field(default_factory=list)
    last_timestamp_ms: int = 0
    txn_first_offset: int = -1
    """First offset of the producer's open transaction on this partition, -1 when none."""

    def set_epoch(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.batches.clear()
            self.epoch = epoch


@dataclass
class VerificationEntry:
    """VerificationStateEntry (KIP-890 part 1): the guard of the pending verification."""

    guard: int
    lowest_seq: int
    epoch: int


@dataclass(frozen=True)
class AbortedEntry:
    """An entry of the transaction index: (pid, first offset, marker offset, LSO at completion)."""

    pid: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass(frozen=True)
class AppendResult:
    """``outcome`` "appended" / "duplicate" / "rejected" with ``error`` and ``base_offset``."""

    outcome: str
    error: int
    base_offset: int


class TxnPartitionLog:
    """A partition on its leader (never loses an append; the HW moves by ``advance_hw``). Any
    slice's world will do (the fetch-session slice's broker keeps its partitions in these too)."""

    def __init__(self, name: str, world: World[Any]) -> None:
        self.name = name
        self.world = world
        self.records: list[Record] = []
        self.appends: list[tuple[int, int, int, int]] = []
        """(base offset, record count, append time ms, coordinator epoch or -1) of every append, in
        log order: the batches impl.txn.dumplog prints as kafka-dump-log.sh would."""
        self.hw = 0
        self.producers: dict[int, ProducerEntry] = {}
        self.verifications: dict[int, VerificationEntry] = {}
        self.unreplicated: list[tuple[int, int]] = []
        """Completed transactions (first offset, marker offset) whose marker is not below the HW."""
        self.aborted_index: list[AbortedEntry] = []
        self.committed_offsets: dict[tuple[str, str], tuple[int, int]] = {}
        """(group, partition) → (offset, record offset of the commit)."""
        self.pending_offsets: dict[int, dict[tuple[str, str], tuple[int, int]]] = {}
        """pid → transactional offsets waiting for the marker."""

    @property
    def leo(self) -> int:
        return len(self.records)

    # ----------------------------------------------------------------------------- produce

    def has_ongoing(self, pid: int) -> bool:
        entry = self.producers.get(pid)
        return entry is not None and entry.txn_first_offset >= 0

    def find_duplicate(self, pid: int, epoch: int, base_seq: int, count: int) -> int | None:
        """The original first offset of an exact duplicate among the cached batches, else None."""
        entry = self.producers.get(pid)
        if entry is None or entry.epoch != epoch or self.world.mutant(m.NO_SEQUENCE_DEDUP):
            return None
        last_seq = next_seq(base_seq, count - 1)
        for batch in entry.batches:
            if batch.first_seq == base_seq and batch.last_seq == last_seq:
                return batch.first_offset
        return None

    def start_verification(self, pid: int, epoch: int, base_seq: int, guard: int) -> int:
        """Create or update the producer's verification entry; returns its guard (an existing
        entry keeps its guard: one verification per producer, kafka-facts §1.9)."""
        entry = self.verifications.get(pid)
        if entry is None:
            self.verifications[pid] = VerificationEntry(guard, base_seq, epoch)
            return guard
        if epoch == entry.epoch and base_seq < entry.lowest_seq:
            entry.lowest_seq = base_seq
        elif epoch > entry.epoch:
            entry.epoch, entry.lowest_seq = epoch, base_seq
        return entry.guard

    def append_client(
        self,
        pid: int,
        epoch: int,
        base_seq: int,
        rids: tuple[int, ...],
        transactional: bool,
        guard: int | None,
    ) -> AppendResult:
        """Validate and append one client batch (kafka-facts §2.2; UnifiedLog order). ``guard``
        is the verification guard the batch was verified under (None when it was not). A batch
        without a producer id (a plain producer, RecordBatch.NO_PRODUCER_ID) is appended with no
        producer-state validation or bookkeeping (UnifiedLog.analyzeAndValidateProducerState only
        looks at batches that ``hasProducerId``)."""
        if pid == NO_PRODUCER_ID:
            base_offset = self.leo
            self.appends.append((base_offset, len(rids), self.world.now_ms, -1))
            for i, rid in enumerate(rids):
                self.records.append(Record(base_offset + i, pid, epoch, -1, rid, int(transactional), NO_CONTROL))
            return AppendResult("appended", NONE, base_offset)
        duplicate = self.find_duplicate(pid, epoch, base_seq, len(rids))
        if duplicate is not None:
            return AppendResult("duplicate", NONE, duplicate)
        entry = self.producers.get(pid, ProducerEntry())
        if guard is not None and transactional and entry.txn_first_offset < 0:
            current = self.verifications.get(pid)
            if current is None or current.guard != guard:
                return AppendResult("rejected", INVALID_TXN_STATE, -1)
        if epoch < entry.epoch and not self.world.mutant(m.NO_PRODUCE_EPOCH_FENCING):
            return AppendResult("rejected", INVALID_PRODUCER_EPOCH, -1)
        if not self._sequence_ok(pid, entry, epoch, base_seq):
            return AppendResult("rejected", OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
        if not transactional and entry.txn_first_offset >= 0:
            return AppendResult("rejected", INVALID_TXN_STATE, -1)
        base_offset = self.leo
        self.appends.append((base_offset, len(rids), self.world.now_ms, -1))
        for i, rid in enumerate(rids):
            seq = next_seq(base_seq, i)
            self.records.append(Record(base_offset + i, pid, epoch, seq, rid, int(transactional), NO_CONTROL))
        entry.set_epoch(epoch)
        entry.batches.append(CachedBatch(base_seq, next_seq(base_seq, len(rids) - 1), base_offset))
        keep = 1 if self.world.mutant(m.SMALL_DEDUP_WINDOW) else NUM_BATCHES_TO_RETAIN
        del entry.batches[:-keep]
        entry.last_timestamp_ms = self.world.now_ms
        if transactional:
            if entry.txn_first_offset < 0:
                entry.txn_first_offset = base_offset
            self.verifications.pop(pid, None)
        self.producers[pid] = entry
        return AppendResult("appended", NONE, base_offset)

    def _sequence_ok(self, pid: int, entry: ProducerEntry, epoch: int, base_seq: int) -> bool:
        """ProducerAppendInfo.checkSequence (kafka-facts §2.2 step 4)."""
        if self.world.mutant(m.NO_SEQUENCE_DEDUP):
            return True
        verification = self.verifications.get(pid)
        if verification is not None and base_seq > verification.lowest_seq:
            return False
        if epoch != entry.epoch:
            return entry.epoch == -1 or base_seq == 0
        last_seq = entry.batches[-1].last_seq if entry.batches else -1
        return base_seq == last_seq + 1 or (base_seq == 0 and last_seq == INT32_MAX)

    # ----------------------------------------------------------------------------- markers

    def append_marker(self, pid: int, epoch: int, commit: bool, coordinator_epoch: int) -> tuple[int, int]:
        """ProducerAppendInfo.appendEndTxnMarker (kafka-facts §1.8, §2.4, §4): (error, offset)."""
        entry = self.producers.get(pid, ProducerEntry())
        if epoch < entry.epoch:
            return INVALID_PRODUCER_EPOCH, -1
        if coordinator_epoch < entry.coordinator_epoch and not self.world.mutant(m.STALE_COORDINATOR_EPOCH_MARKER):
            return TRANSACTION_COORDINATOR_FENCED, -1
        offset = self.leo
        self.appends.append((offset, 1, self.world.now_ms, coordinator_epoch))
        self.records.append(Record(offset, pid, epoch, -1, -1, 1, COMMIT_MARKER if commit else ABORT_MARKER))
        entry.set_epoch(epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp_ms = self.world.now_ms
        if entry.txn_first_offset >= 0:
            first = entry.txn_first_offset
            entry.txn_first_offset = -1
            if not commit:
                self.aborted_index.append(AbortedEntry(pid, first, offset, self._stable_after(pid, offset)))
            if offset >= self.hw:
                self.unreplicated.append((first, offset))
        self.verifications.pop(pid, None)
        self.producers[pid] = entry
        pending = self.pending_offsets.pop(pid, {})
        if commit:
            for key, (value, at) in sorted(pending.items()):
                self._materialize(key, value, at)
        return NONE, offset

    def _stable_after(self, pid: int, marker_offset: int) -> int:
        """lastStableOffset(completedTxn): the earliest other producer's open transaction, else
        the marker offset + 1 (kafka-facts §2.4)."""
        others = [e.txn_first_offset for p, e in self.producers.items() if p != pid and e.txn_first_offset >= 0]
        return min(others) if others else marker_offset + 1

    # ---------------------------------------------------------------------------- HW, LSO

    def advance_hw(self, hw: int) -> None:
        assert self.hw <= hw <= self.leo, f"{self.name}: HW {self.hw} -> {hw} outside [HW, LEO={self.leo}]"
        self.hw = hw
        self.unreplicated = [(first, last) for first, last in self.unreplicated if last >= hw]

    def lso(self) -> int:
        """UnifiedLog.lastStableOffset: min(first unstable offset, HW) (kafka-facts §4)."""
        if self.world.mutant(m.LSO_IGNORES_ONGOING):
            return self.hw
        unstable = [e.txn_first_offset for e in self.producers.values() if e.txn_first_offset >= 0]
        unstable += [first for first, _ in self.unreplicated]
        if not unstable:
            return self.hw
        first_unstable = min(unstable)
        if self.world.mutant(m.LSO_OFF_BY_ONE):
            first_unstable += 1
        return min(first_unstable, self.hw)

    def fetch(self, fetch_offset: int, read_committed: bool) -> tuple[int, tuple[Record, ...], tuple[AbortedTxn, ...]]:
        """(error, records, aborted) of a consumer fetch from ``fetch_offset`` (kafka-facts §4)."""
        if not 0 <= fetch_offset <= self.leo:
            return OFFSET_OUT_OF_RANGE, (), ()
        bound = self.lso() if read_committed else self.hw
        records = tuple(self.records[fetch_offset:bound]) if fetch_offset < bound else ()
        if not read_committed or not records:
            return NONE, records, ()
        aborted = tuple(
            AbortedTxn(a.pid, a.first_offset)
            for a in self.aborted_index
            if a.last_offset >= fetch_offset and a.first_offset < bound
        )
        return NONE, records, tuple(sorted(aborted))

    # ------------------------------------------------------------------------- expiration

    def expire_producers(self) -> list[int]:
        """Drop producers with no open transaction idle ≥ producer.id.expiration.ms (KIP-854)."""
        limit = self.world.config.producer_id_expiration_ms
        expired = sorted(
            pid
            for pid, e in self.producers.items()
            if e.txn_first_offset < 0 and self.world.now_ms - e.last_timestamp_ms >= limit
        )
        for pid in expired:
            del self.producers[pid]
        return expired

    # ----------------------------------------------------------------------- group offsets

    def txn_offset_commit(self, pid: int, epoch: int, group: str, offsets: tuple[TopicOffset, ...]) -> tuple[int, int]:
        """A transactional offset write (origin COORDINATOR: epoch check only; kafka-facts §1.10):
        (error, base offset). The offsets stay pending until the marker."""
        entry = self.producers.get(pid, ProducerEntry())
        if epoch < entry.epoch:
            return INVALID_PRODUCER_EPOCH, -1
        base_offset = self.leo
        pending = self.pending_offsets.setdefault(pid, {})
        for i, to in enumerate(offsets):
            self.records.append(Record(base_offset + i, pid, epoch, -1, -1, 1, NO_CONTROL))
            pending[(group, to.partition)] = (to.offset, base_offset + i)
            if self.world.mutant(m.TXN_OFFSETS_VISIBLE_EARLY):
                self._materialize((group, to.partition), to.offset, base_offset + i)
        entry.set_epoch(epoch)
        entry.last_timestamp_ms = self.world.now_ms
        if entry.txn_first_offset < 0:
            entry.txn_first_offset = base_offset
        self.producers[pid] = entry
        return NONE, base_offset

    def offset_commit(self, group: str, offsets: tuple[TopicOffset, ...]) -> int:
        """A plain offset commit, visible at once; returns its base offset."""
        base_offset = self.leo
        for i, to in enumerate(offsets):
            self.records.append(Record(base_offset + i, -1, -1, -1, -1, 0, NO_CONTROL))
            self._materialize((group, to.partition), to.offset, base_offset + i)
        return base_offset

    def _materialize(self, key: tuple[str, str], value: int, at: int) -> None:
        """The write with the larger record offset wins (kafka-facts §1.10)."""
        current = self.committed_offsets.get(key)
        if current is None or current[1] < at:
            self.committed_offsets[key] = (value, at)

    def offset_fetch(self, group: str, require_stable: bool) -> tuple[int, tuple[TopicOffset, ...], tuple[str, ...]]:
        """(error, committed offsets of ``group``, partitions answered UNSTABLE_OFFSET_COMMIT): with
        require_stable a partition with a pending transactional offset of the group gets
        UNSTABLE_OFFSET_COMMIT on its own, the others their committed offsets (KIP-447,
        OffsetMetadataManager.fetchAllOffsets)."""
        pending = {key for offsets in self.pending_offsets.values() for key in offsets}
        stable: list[TopicOffset] = []
        unstable: list[str] = []
        for (g, p), (value, _) in sorted(self.committed_offsets.items()):
            if g != group:
                continue
            if require_stable and (g, p) in pending:
                unstable.append(p)
            else:
                stable.append(TopicOffset(p, value))
        return NONE, tuple(stable), tuple(unstable)
