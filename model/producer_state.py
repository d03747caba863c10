"""Per-partition producer state and the append validation of the idempotent producer.

Kafka's ``ProducerStateEntry``/``ProducerAppendInfo``/``UnifiedLog.analyzeAndValidateProducerState``
(kafka-facts §2): each partition remembers, per producer id, the epoch, the coordinator epoch of
the last marker, the last timestamp, the first offset of its open transaction, the last 5 batches'
sequence ranges and offsets, and the KIP-890 part 1 verification entry. ``validate_client_batch``
decides a client batch: duplicate (original offsets, nothing appended), rejected with Kafka's
error, or appended; ``apply_*`` compute the entry after a batch or marker. All pure.

Correction to kafka-facts §2.2 recorded in docs/transactions.md: a marker of the *same* epoch keeps
the cached batches (ProducerStateEntry.update only clears them on an epoch change), so the next
transaction's sequences continue after the last batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kconform.model.errors import (
    INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE,
    NONE,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    TRANSACTION_COORDINATOR_FENCED,
)
from kconform.model.evolve import evolve
from kconform.model.outcomes import BatchResult
from kconform.model.txn_config import INT32_MAX

NUM_BATCHES_TO_RETAIN = 5
"""ProducerStateEntry.NUM_BATCHES_TO_RETAIN: the dedup window (kafka-facts §2.1)."""
NO_EPOCH = -1
NO_OFFSET = -1

APPENDED: Final = "appended"
DUPLICATE: Final = "duplicate"
REJECTED: Final = "rejected"
VERIFYING: Final = "verifying"
"""Outcomes of a produce on a partition leader (TxnProduceHandled.outcome)."""


def increment_sequence(seq: int, by: int = 1) -> int:
    """DefaultRecordBatch.incrementSequence: ``seq + by`` wrapping from 2^31-1 to 0."""
    return (seq + by) % (INT32_MAX + 1)


def last_sequence(first_seq: int, records: int) -> int:
    """The last sequence of a batch of ``records`` records starting at ``first_seq`` (wraps)."""
    return increment_sequence(first_seq, records - 1)


@dataclass(frozen=True, order=True)
class BatchMetadata:
    """One cached batch: its sequence range and the offsets it was appended at."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


@dataclass(frozen=True)
class VerificationEntry:
    """KIP-890 part 1 VerificationStateEntry: the lowest sequence and epoch being verified, and the
    verification messages that hold its guard (a transactional batch or marker clears the entry,
    which makes every outstanding guard stale)."""

    lowest_seq: int
    epoch: int
    guards: frozenset[int]


@dataclass(frozen=True)
class ProducerEntry:
    """ProducerStateEntry (kafka-facts §2.1): an empty entry has epoch -1 and no batches."""

    epoch: int = NO_EPOCH
    coordinator_epoch: int = -1
    last_timestamp_ms: int = -1
    txn_first_offset: int = NO_OFFSET
    batches: tuple[BatchMetadata, ...] = ()
    verification: VerificationEntry | None = None

    @property
    def in_transaction(self) -> bool:
        return self.txn_first_offset != NO_OFFSET

    @property
    def last_seq(self) -> int:
        """The last cached sequence, -1 when there is none (only seq 0 continues it)."""
        return self.batches[-1].last_seq if self.batches else -1


EMPTY_ENTRY = ProducerEntry()


@dataclass(frozen=True)
class BatchCheck:
    """The decision on a client batch: ``outcome`` APPENDED, DUPLICATE or REJECTED, Kafka's
    ``error``, and for a duplicate the original first offset."""

    outcome: BatchResult
    error: int = NONE
    duplicate_of: int = NO_OFFSET


def find_duplicate(entry: ProducerEntry, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
    """kafka-facts §2.2 step 1: the cached batch with the same epoch and *exactly* this sequence
    range (a partial overlap is no duplicate: it fails the sequence check as OOS)."""
    if entry.epoch != epoch:
        return None
    for b in entry.batches:
        if b.first_seq == first_seq and b.last_seq == last_seq:
            return b
    return None


def check_epoch(entry: ProducerEntry, epoch: int) -> int:
    """ProducerAppendInfo.checkProducerEpoch: an older epoch than the stored one is fenced."""
    return INVALID_PRODUCER_EPOCH if epoch < entry.epoch else NONE


def check_sequence(entry: ProducerEntry, epoch: int, first_seq: int) -> int:
    """ProducerAppendInfo.checkSequence (kafka-facts §2.2 step 4, KIP-360 since 2.5).

    A verification entry bounds the sequence from above; a new epoch must start at 0 unless the
    producer is unknown (stored epoch -1: any sequence); within an epoch the batch must continue
    the last cached sequence (wrapping 2^31-1 → 0).
    """
    v = entry.verification
    if v is not None and first_seq > v.lowest_seq:
        return OUT_OF_ORDER_SEQUENCE_NUMBER
    if entry.epoch == NO_EPOCH:
        return NONE
    if epoch != entry.epoch:
        return NONE if first_seq == 0 else OUT_OF_ORDER_SEQUENCE_NUMBER
    last = entry.last_seq
    if first_seq == last + 1 or (first_seq == 0 and last == INT32_MAX):
        return NONE
    return OUT_OF_ORDER_SEQUENCE_NUMBER


def validate_client_batch(
    entry: ProducerEntry, epoch: int, first_seq: int, last_seq: int, transactional: bool
) -> BatchCheck:
    """Decide a client batch in Kafka's order (kafka-facts §2.2): duplicate, epoch, sequence, then
    INVALID_TXN_STATE for a non-transactional batch while the producer has an open transaction.
    The verification check (§1.9) is the caller's: it runs before this."""
    dup = find_duplicate(entry, epoch, first_seq, last_seq)
    if dup is not None:
        return BatchCheck(DUPLICATE, NONE, dup.first_offset)
    for error in (check_epoch(entry, epoch), check_sequence(entry, epoch, first_seq)):
        if error != NONE:
            return BatchCheck(REJECTED, error)
    if not transactional and entry.in_transaction:
        return BatchCheck(REJECTED, INVALID_TXN_STATE)
    return BatchCheck(APPENDED)


def apply_batch(
    entry: ProducerEntry,
    epoch: int,
    batch: BatchMetadata | None,
    transactional: bool,
    now_ms: int,
) -> ProducerEntry:
    """The entry after appending a batch (``batch`` None for a coordinator-origin write such as a
    transactional offset commit, which keeps no sequences): an epoch change clears the cache, the
    batch is cached (oldest of 5 evicted), a transactional batch opens the transaction if none is
    open and clears the verification entry."""
    batches = entry.batches if epoch == entry.epoch else ()
    if batch is not None:
        batches = (*batches, batch)[-NUM_BATCHES_TO_RETAIN:]
    first = entry.txn_first_offset
    verification = entry.verification
    if transactional:
        verification = None
        if first == NO_OFFSET:
            first = batch.first_offset if batch is not None else NO_OFFSET
    return evolve(
        entry,
        epoch=epoch,
        batches=batches,
        last_timestamp_ms=now_ms,
        txn_first_offset=first,
        verification=verification,
    )


def open_coordinator_txn(entry: ProducerEntry, epoch: int, first_offset: int, now_ms: int) -> ProducerEntry:
    """The entry after a coordinator-origin transactional write at ``first_offset`` (TxnOffsetCommit)."""
    e = apply_batch(entry, epoch, None, True, now_ms)
    return e if e.in_transaction else evolve(e, txn_first_offset=first_offset)


def check_marker(entry: ProducerEntry, epoch: int, coordinator_epoch: int) -> int:
    """ProducerAppendInfo.appendEndTxnMarker's checks (kafka-facts §1.8)."""
    if epoch < entry.epoch:
        return INVALID_PRODUCER_EPOCH
    if coordinator_epoch < entry.coordinator_epoch:
        return TRANSACTION_COORDINATOR_FENCED
    return NONE


def apply_marker(entry: ProducerEntry, epoch: int, coordinator_epoch: int, now_ms: int) -> ProducerEntry:
    """The entry after a marker: the open transaction ends, the epoch and coordinator epoch become
    the marker's; the batch cache is kept for the same epoch and cleared on a change (see module
    note); the verification entry is cleared (any transactional batch or marker clears it)."""
    return evolve(
        entry,
        epoch=epoch,
        coordinator_epoch=coordinator_epoch,
        batches=entry.batches if epoch == entry.epoch else (),
        last_timestamp_ms=now_ms,
        txn_first_offset=NO_OFFSET,
        verification=None,
    )


def start_verification(entry: ProducerEntry, epoch: int, first_seq: int, guard: int) -> ProducerEntry:
    """maybeCreateVerificationStateEntry + maybeUpdateLowestSequenceAndEpoch (kafka-facts §1.9):
    create the entry, or for the same epoch lower its sequence, or for a higher epoch replace epoch
    and sequence; a lower epoch leaves it (the guard is shared by every concurrent request)."""
    v = entry.verification
    if v is None:
        v = VerificationEntry(first_seq, epoch, frozenset({guard}))
    elif epoch == v.epoch:
        v = VerificationEntry(min(v.lowest_seq, first_seq), epoch, v.guards | {guard})
    elif epoch > v.epoch:
        v = VerificationEntry(first_seq, epoch, v.guards | {guard})
    else:
        v = evolve(v, guards=v.guards | {guard})
    return evolve(entry, verification=v)


def expired(entry: ProducerEntry, now_ms: int, producer_id_expiration_ms: int) -> bool:
    """ProducerStateManager.removeExpiredProducers (KIP-854, kafka-facts §2.3): no open transaction
    and ``now - lastTimestamp ≥ producer.id.expiration.ms``."""
    return not entry.in_transaction and now_ms - entry.last_timestamp_ms >= producer_id_expiration_ms
