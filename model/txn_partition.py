"""A partition of the exactly-once slice: its leader's log, HW, producer states, transactions,
LSO, aborted index, markers, consumer fetches and (on ``__consumer_offsets``) group offsets.

Sources: kafka-facts §2 (producer state, validation, expiry), §2.4 (ongoing and unreplicated
transactions, firstUnstableOffset), §4 (LSO, TransactionIndex, read_committed fetch, the
consumer's CompletedFetch filter), §1.8 (WriteTxnMarkers at the partition), §1.9 (verification at
the leader), §1.10 (transactional offsets pending until the COMMIT marker; KIP-447 require_stable).
Replication is abstracted (docs/transactions.md): the log never loses an append and the HW moves
by ``advance_hw``. Every function is pure and returns the partition after the handler.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.model import producer_state as P
from kconform.model.errors import (
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    INVALID_PRODUCER_EPOCH,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_TXN_STATE,
    NONE,
    NOT_COORDINATOR,
    NOT_ENOUGH_REPLICAS,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
)
from kconform.model.evolve import evolve
from kconform.model.frozen_map import FrozenMap
from kconform.model.not_enabled import NotEnabled
from kconform.model.outcomes import BatchResult
from kconform.model.producer_state import ProducerEntry
from kconform.model.records import ABORT_MARKER, COMMIT_MARKER, NO_CONTROL, AbortedTxn, Record, TopicOffset

NO_PID = -1


@dataclass(frozen=True)
class CompletedTxn:
    """A transaction ended by a marker at ``last_offset`` whose marker is not below the HW yet
    (ProducerStateManager.unreplicatedTxns): it still holds the LSO back (kafka-facts §2.4)."""

    pid: int
    first_offset: int
    last_offset: int


@dataclass(frozen=True, order=True)
class IndexEntry:
    """TransactionIndex's AbortedTxn: an aborted non-empty transaction (kafka-facts §4)."""

    pid: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass(frozen=True)
class PendingOffset:
    """A transactional offset commit waiting for its transaction's COMMIT marker."""

    group: str
    partition: str
    offset: int
    record_offset: int


@dataclass(frozen=True)
class CommittedOffset:
    """A materialised group offset and the offset of the ``__consumer_offsets`` record holding it."""

    offset: int
    record_offset: int


@dataclass(frozen=True)
class Partition:
    """One partition as its (never moving) leader holds it."""

    name: str
    leader: int
    log: tuple[Record, ...] = ()
    hw: int = 0
    producers: FrozenMap[int, ProducerEntry] = field(default_factory=FrozenMap)
    unreplicated: tuple[CompletedTxn, ...] = ()
    aborted_index: tuple[IndexEntry, ...] = ()
    pending_offsets: FrozenMap[int, tuple[PendingOffset, ...]] = field(default_factory=FrozenMap)
    committed: FrozenMap[tuple[str, str], CommittedOffset] = field(default_factory=FrozenMap)

    @property
    def leo(self) -> int:
        return len(self.log)

    def producer(self, pid: int) -> ProducerEntry:
        return self.producers.get(pid) or P.EMPTY_ENTRY

    def open_txns(self) -> list[tuple[int, int]]:
        """(first offset, pid) of every open transaction, by first offset (ongoingTxns)."""
        return sorted((e.txn_first_offset, pid) for pid, e in self.producers.items() if e.in_transaction)


def first_unstable_offset(p: Partition) -> int | None:
    """min(first offset of the ongoing and the unreplicated transactions), or None (kafka-facts §2.4)."""
    firsts = [f for f, _pid in p.open_txns()] + [t.first_offset for t in p.unreplicated]
    return min(firsts) if firsts else None


def last_stable_offset(p: Partition) -> int:
    """UnifiedLog.lastStableOffset: the first unstable offset if below the HW, else the HW (§4)."""
    fus = first_unstable_offset(p)
    return fus if fus is not None and fus < p.hw else p.hw


# ---------------------------------------------------------------------------------------------
# Produce (kafka-facts §2.2, §1.9)


@dataclass(frozen=True)
class ProduceResult:
    """What the leader answered a produce: ``outcome`` of model.producer_state, error, base offset
    (the original one for a duplicate, -1 when nothing was appended)."""

    outcome: BatchResult
    error: int = NONE
    base_offset: int = -1


def _append_batch(
    p: Partition, now_ms: int, pid: int, epoch: int, base_seq: int, rids: tuple[int, ...], transactional: bool
) -> tuple[Partition, ProduceResult]:
    base = p.leo
    records = tuple(
        Record(
            base + i,
            pid,
            epoch,
            P.increment_sequence(base_seq, i) if pid != NO_PID else -1,
            rid,
            int(transactional),
            NO_CONTROL,
        )
        for i, rid in enumerate(rids)
    )
    producers = p.producers
    if pid != NO_PID:
        meta = P.BatchMetadata(base_seq, P.last_sequence(base_seq, len(rids)), base, base + len(rids) - 1)
        producers = producers.set(pid, P.apply_batch(p.producer(pid), epoch, meta, transactional, now_ms))
    return evolve(p, log=p.log + records, producers=producers), ProduceResult(P.APPENDED, NONE, base)


def _validate_and_append(
    p: Partition, now_ms: int, pid: int, epoch: int, base_seq: int, rids: tuple[int, ...], transactional: bool
) -> tuple[Partition, ProduceResult]:
    if pid == NO_PID:
        return _append_batch(p, now_ms, pid, epoch, base_seq, rids, transactional)
    check = P.validate_client_batch(
        p.producer(pid), epoch, base_seq, P.last_sequence(base_seq, len(rids)), transactional
    )
    if check.outcome == P.DUPLICATE:
        return p, ProduceResult(P.DUPLICATE, NONE, check.duplicate_of)
    if check.outcome == P.REJECTED:
        return p, ProduceResult(P.REJECTED, check.error)
    return _append_batch(p, now_ms, pid, epoch, base_seq, rids, transactional)


def needs_verification(p: Partition, verification: bool, pid: int, transactional: bool) -> bool:
    """KIP-890 part 1 (maybeStartTransactionVerification): a transactional batch of a producer with
    no ongoing transaction on this partition is verified with the coordinator first."""
    return verification and transactional and pid != NO_PID and not p.producer(pid).in_transaction


def produce(
    p: Partition,
    node: int,
    now_ms: int,
    verification: bool,
    pid: int,
    epoch: int,
    base_seq: int,
    rids: tuple[int, ...],
    transactional: bool,
    verify_msg: int,
) -> tuple[Partition, ProduceResult]:
    """The leader's Produce handler for one batch: not leader → NOT_LEADER_OR_FOLLOWER; a batch
    needing verification → VERIFYING (the verification entry records ``verify_msg``'s guard);
    else validated (duplicate / rejected / appended) per kafka-facts §2.2."""
    if node != p.leader:
        return p, ProduceResult(P.REJECTED, NOT_LEADER_OR_FOLLOWER)
    if not rids:
        raise NotEnabled("a batch holds at least one record (RecordBatch: an empty batch is never appended)")
    if needs_verification(p, verification, pid, transactional):
        entry = P.start_verification(p.producer(pid), epoch, base_seq, verify_msg)
        return evolve(p, producers=p.producers.set(pid, entry)), ProduceResult(P.VERIFYING)
    return _validate_and_append(p, now_ms, pid, epoch, base_seq, rids, transactional)


VERIFY_ERROR_TO_PRODUCE: dict[int, int] = {
    PRODUCER_FENCED: INVALID_PRODUCER_EPOCH,
    TRANSACTION_ABORTABLE: INVALID_TXN_STATE,
    INVALID_PRODUCER_ID_MAPPING: INVALID_PRODUCER_ID_MAPPING,
    CONCURRENT_TRANSACTIONS: NOT_ENOUGH_REPLICAS,
    COORDINATOR_LOAD_IN_PROGRESS: NOT_ENOUGH_REPLICAS,
    COORDINATOR_NOT_AVAILABLE: NOT_ENOUGH_REPLICAS,
    NOT_COORDINATOR: NOT_ENOUGH_REPLICAS,
}
"""AddPartitionsToTxnManager / ReplicaManager's mapping of a verification error to the produce
error (kafka-facts §1.9; TRANSACTION_ABORTABLE → INVALID_TXN_STATE as for Produce ≤ v10)."""


def apply_verification(
    p: Partition,
    now_ms: int,
    verify_error: int,
    guard: int,
    pid: int,
    epoch: int,
    base_seq: int,
    rids: tuple[int, ...],
) -> tuple[Partition, ProduceResult]:
    """The produce after the coordinator answered verification ``guard``: an error maps per
    VERIFY_ERROR_TO_PRODUCE; NONE appends unless the producer has no ongoing transaction and the
    guard is stale (its entry was cleared by a transactional batch or marker since) → INVALID_TXN_STATE
    (UnifiedLog.analyzeAndValidateProducerState); then the usual validation."""
    if verify_error != NONE:
        if verify_error not in VERIFY_ERROR_TO_PRODUCE:
            raise NotEnabled(f"verification never answers error {verify_error}")
        return p, ProduceResult(P.REJECTED, VERIFY_ERROR_TO_PRODUCE[verify_error])
    entry = p.producer(pid)
    v = entry.verification
    if not entry.in_transaction and (v is None or guard not in v.guards):
        dup = P.find_duplicate(entry, epoch, base_seq, P.last_sequence(base_seq, len(rids)))
        if dup is not None:
            return p, ProduceResult(P.DUPLICATE, NONE, dup.first_offset)
        return p, ProduceResult(P.REJECTED, INVALID_TXN_STATE)
    return _validate_and_append(p, now_ms, pid, epoch, base_seq, rids, True)


# ---------------------------------------------------------------------------------------------
# Markers (kafka-facts §1.8, §2.4, §1.10)


@dataclass(frozen=True)
class MarkerResult:
    """The marker's answer, the control record's offset (-1 on error), and the transaction it
    ended on this partition as (first offset, marker offset), or None (an empty transaction)."""

    error: int
    offset: int = -1
    ended: tuple[int, int] | None = None


def append_marker(
    p: Partition, node: int, now_ms: int, pid: int, epoch: int, commit: bool, coordinator_epoch: int
) -> tuple[Partition, MarkerResult]:
    """WriteTxnMarkers on one partition: leader check, then appendEndTxnMarker's epoch and
    coordinator-epoch fencing; a control record is appended, the producer's open transaction ends
    (a non-empty abort enters the aborted index with lastStableOffset = the first offset of the
    earliest other producer's ongoing transaction, else marker offset + 1), and the producer's
    pending offsets are materialised (COMMIT; a committed offset from a later record wins) or
    dropped (ABORT). A duplicated marker is appended again as an empty transaction."""
    if node != p.leader:
        return p, MarkerResult(NOT_LEADER_OR_FOLLOWER)
    entry = p.producer(pid)
    error = P.check_marker(entry, epoch, coordinator_epoch)
    if error != NONE:
        return p, MarkerResult(error)
    offset = p.leo
    record = Record(offset, pid, epoch, -1, -1, 1, COMMIT_MARKER if commit else ABORT_MARKER)
    ended: tuple[int, int] | None = None
    unreplicated = p.unreplicated
    index = p.aborted_index
    if entry.in_transaction:
        first = entry.txn_first_offset
        ended = (first, offset)
        unreplicated = (*unreplicated, CompletedTxn(pid, first, offset))
        if not commit:
            others = [f for f, other in p.open_txns() if other != pid]
            index = (*index, IndexEntry(pid, first, offset, min(others) if others else offset + 1))
    committed = p.committed
    for po in p.pending_offsets.get(pid) or ():
        key = (po.group, po.partition)
        old = committed.get(key)
        if commit and (old is None or old.record_offset < po.record_offset):
            committed = committed.set(key, CommittedOffset(po.offset, po.record_offset))
    new = evolve(
        p,
        log=(*p.log, record),
        producers=p.producers.set(pid, P.apply_marker(entry, epoch, coordinator_epoch, now_ms)),
        unreplicated=unreplicated,
        aborted_index=index,
        pending_offsets=p.pending_offsets.remove(pid),
        committed=committed,
    )
    return new, MarkerResult(NONE, offset, ended)


def advance_hw(p: Partition, hw: int) -> Partition:
    """The HW moves forward up to the LEO (monotonic, UnifiedLog.maybeIncrementHighWatermark);
    completed transactions whose marker is now below it stop holding the LSO back."""
    if not p.hw <= hw <= p.leo:
        raise NotEnabled(f"{p.name}: HW {p.hw} → {hw} with LEO {p.leo}")
    return evolve(p, hw=hw, unreplicated=tuple(t for t in p.unreplicated if t.last_offset >= hw))


def expire_producer(p: Partition, pid: int, now_ms: int, producer_id_expiration_ms: int) -> Partition | None:
    """The partition without ``pid``'s state if it may expire now (kafka-facts §2.3), else None."""
    entry = p.producers.get(pid)
    if entry is None or not P.expired(entry, now_ms, producer_id_expiration_ms):
        return None
    return evolve(p, producers=p.producers.remove(pid))


# ---------------------------------------------------------------------------------------------
# Consumers (kafka-facts §4)


@dataclass(frozen=True)
class FetchAnswer:
    """A consumer fetch's answer (TxnConsumerFetchHandled's outcome fields)."""

    error: int
    records: tuple[Record, ...]
    hw: int
    lso: int
    aborted: tuple[AbortedTxn, ...]


def consumer_fetch(p: Partition, node: int, fetch_offset: int, read_committed: bool) -> FetchAnswer:
    """Fetch isolation HIGH_WATERMARK or TXN_COMMITTED: records from ``fetch_offset`` to the HW or
    the LSO; for read_committed the aborted transactions with lastOffset ≥ fetch_offset and
    firstOffset < the upper bound (TransactionIndex.collectAbortedTxns; empty at the bound). A
    partition answered with an error carries no offsets: HW and LSO -1 (ReplicaManager
    .readFromLocalLog's createLogReadResult for NotLeaderOrFollowerException and, through
    handleOffsetOutOfRangeError, OffsetOutOfRangeException: highWatermark UNKNOWN_OFFSET, no
    lastStableOffset, so FetchResponse.INVALID_LAST_STABLE_OFFSET)."""
    if node != p.leader:
        return FetchAnswer(NOT_LEADER_OR_FOLLOWER, (), -1, -1, ())
    if not 0 <= fetch_offset <= p.leo:
        return FetchAnswer(OFFSET_OUT_OF_RANGE, (), -1, -1, ())
    lso = last_stable_offset(p)
    bound = lso if read_committed else p.hw
    records = p.log[fetch_offset:bound] if fetch_offset < bound else ()
    aborted: tuple[AbortedTxn, ...] = ()
    if read_committed and records:
        aborted = tuple(
            sorted(
                AbortedTxn(t.pid, t.first_offset)
                for t in p.aborted_index
                if t.last_offset >= fetch_offset and t.first_offset < bound
            )
        )
    return FetchAnswer(NONE, records, p.hw, lso, aborted)


@dataclass(frozen=True)
class Polled:
    """What the application gets from a fetch answer: the data records and the next offset."""

    records: tuple[Record, ...]
    next_offset: int

    @property
    def rids(self) -> tuple[int, ...]:
        return tuple(r.rid for r in self.records)


def poll(answer: FetchAnswer, fetch_offset: int, read_committed: bool) -> Polled:
    """CompletedFetch's rule: with read_committed, aborted entries whose first offset ≤ the batch's
    last offset enter the aborted-producer set; an ABORT control batch removes its producer; a
    transactional batch of a producer in the set is skipped. Control records never reach the
    application. (Per record = per batch here: an aborted entry starts at the first offset of a
    batch of its own producer.)"""
    if answer.error != NONE or not answer.records:
        return Polled((), fetch_offset)
    heap = sorted(answer.aborted, key=lambda a: a.first_offset)
    aborted_pids: set[int] = set()
    out: list[Record] = []
    for r in answer.records:
        if read_committed and r.pid != NO_PID:
            while heap and heap[0].first_offset <= r.offset:
                aborted_pids.add(heap.pop(0).pid)
            if r.control == ABORT_MARKER:
                aborted_pids.discard(r.pid)
            elif r.txn and r.pid in aborted_pids:
                continue
        if r.control == NO_CONTROL:
            out.append(r)
    return Polled(tuple(out), answer.records[-1].offset + 1)


# ---------------------------------------------------------------------------------------------
# Group offsets on __consumer_offsets (kafka-facts §1.10)


@dataclass(frozen=True)
class OffsetsResult:
    """An offsets request's answer: the request's error, the base offset of the written batch (-1
    if none), for OffsetFetch the committed offsets returned and the partitions answered
    UNSTABLE_OFFSET_COMMIT (KIP-447, per partition)."""

    error: int
    base_offset: int = -1
    offsets: tuple[TopicOffset, ...] = ()
    unstable: tuple[str, ...] = ()


def _offset_records(p: Partition, pid: int, epoch: int, n: int, transactional: bool) -> tuple[Record, ...]:
    return tuple(Record(p.leo + i, pid, epoch, -1, -1, int(transactional), NO_CONTROL) for i in range(n))


def txn_offset_commit(
    p: Partition, node: int, now_ms: int, group: str, pid: int, epoch: int, offsets: tuple[TopicOffset, ...]
) -> tuple[Partition, OffsetsResult]:
    """TxnOffsetCommit at the group coordinator: producer-epoch check only (origin COORDINATOR:
    epoch < stored → INVALID_PRODUCER_EPOCH); a transactional batch (one record per offset) opens
    the producer's transaction on this partition and the offsets stay pending until its marker.
    The simple-group checks (generation -1 accepted) and KIP-890 verification of offset commits
    are not modelled."""
    if node != p.leader:
        return p, OffsetsResult(NOT_COORDINATOR)
    entry = p.producer(pid)
    if P.check_epoch(entry, epoch) != NONE:
        return p, OffsetsResult(INVALID_PRODUCER_EPOCH)
    if not offsets:
        return p, OffsetsResult(NONE)
    base = p.leo
    pending = tuple(PendingOffset(group, o.partition, o.offset, base + i) for i, o in enumerate(offsets))
    new = evolve(
        p,
        log=p.log + _offset_records(p, pid, epoch, len(offsets), True),
        producers=p.producers.set(pid, P.open_coordinator_txn(entry, epoch, base, now_ms)),
        pending_offsets=p.pending_offsets.set(pid, (*(p.pending_offsets.get(pid) or ()), *pending)),
    )
    return new, OffsetsResult(NONE, base)


def offset_commit(
    p: Partition, node: int, group: str, offsets: tuple[TopicOffset, ...]
) -> tuple[Partition, OffsetsResult]:
    """A plain OffsetCommit: the offsets are committed at once (a non-transactional batch)."""
    if node != p.leader:
        return p, OffsetsResult(NOT_COORDINATOR)
    if not offsets:
        return p, OffsetsResult(NONE)
    base = p.leo
    committed = p.committed
    for i, o in enumerate(offsets):
        committed = committed.set((group, o.partition), CommittedOffset(o.offset, base + i))
    new = evolve(p, log=p.log + _offset_records(p, NO_PID, -1, len(offsets), False), committed=committed)
    return new, OffsetsResult(NONE, base)


def has_pending_offsets(p: Partition, group: str, partition: str | None = None) -> bool:
    """Whether a transactional offset of ``group`` (of ``partition`` when given) waits for its
    transaction's marker (OffsetMetadataManager.hasPendingTransactionalOffsets)."""
    return any(
        po.group == group and (partition is None or po.partition == partition)
        for pending in p.pending_offsets.values()
        for po in pending
    )


def offset_fetch(p: Partition, node: int, group: str, require_stable: bool) -> OffsetsResult:
    """OffsetFetch of all the group's partitions (OffsetMetadataManager.fetchAllOffsets, the old
    GroupMetadataManager.getOffsets): one answer per partition with a committed offset; with
    require_stable a partition with a pending transactional offset is answered
    UNSTABLE_OFFSET_COMMIT (no offset) while the others still get their committed offsets
    (KIP-447). A partition with only a pending offset has no committed one and is not listed."""
    if node != p.leader:
        return OffsetsResult(NOT_COORDINATOR)
    offsets: list[TopicOffset] = []
    unstable: list[str] = []
    for (g, tp), c in sorted(p.committed.items()):
        if g != group:
            continue
        if require_stable and has_pending_offsets(p, group, tp):
            unstable.append(tp)
        else:
            offsets.append(TopicOffset(tp, c.offset))
    return OffsetsResult(NONE, -1, tuple(offsets), tuple(unstable))


def committed_source(p: Partition, group: str, partition: str) -> int:
    """The record offset holding the group's committed offset of ``partition`` (-1 if none)."""
    c = p.committed.get((group, partition))
    return -1 if c is None else c.record_offset
