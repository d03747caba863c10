"""The bounds of the exactly-once slice's periodic tasks: how long a loaded coordinator may leave a
transaction Ongoing past its transaction.timeout.ms, and how long a partition leader may keep an
idle producer's state past producer.id.expiration.ms.

Kafka's TransactionCoordinator.startup schedules ``transaction-abort``
(``abortTimedOutTransactions``) every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``
(TransactionStateManagerConfig, default 10 s) at a fixed rate from the broker's start. Each run
asks TransactionStateManager.timedOutTransactions for the transactions of every loaded partition
that are Ongoing with ``txnStartTimestamp + txnTimeoutMs < now`` (strict) and no pending transition,
and rolls each back: prepareFenceProducerEpoch (epoch + 1, KAFKA-6119) then endTransaction(ABORT,
isFromClient = false), which writes PrepareAbort (model.coordinator.abort_timed_out).

Guarantee of this module: ``late_aborts`` names a transaction only when every run of the task a
coordinator must have made since the transaction timed out would have rolled it back. A task run
at a time ``t > start + timeout`` finds it, and one run falls in every interval, so the rollback
happens by ``start + timeout + interval``; a coordinator that loaded the partition later (a
failover: the transactions of a partition are in no cache before their load,
TransactionStateManager.loadTransactionsForTxnTopicPartition) has them by ``load + interval``.
The window is therefore ``max(start + timeout, loaded at) + interval``, judged while the
partition's leader is loaded; a move to another leader restarts it at the next load. Not judged:
an Ongoing transaction at epoch 32767 (prepareFenceProducerEpoch throws IllegalStateException
there; unreachable through the clients, whose epochs stop at 32766). Kafka skips a transaction
with a pending transition; in the model a handler's log write is atomic with it
(docs/transactions.md), so none is ever pending when time passes. A task run more often only
aborts earlier (still after the timeout, which model.coordinator.timed_out enforces).

Producer-state expiry (KIP-854): UnifiedLog schedules ``PeriodicProducerExpirationCheck``
(removeExpiredProducers) every ``producer.id.expiration.check.interval.ms`` (10 min) at a fixed rate
from the log's creation; ProducerStateManager.removeExpiredProducers drops every producer with no
open transaction (``currentTxnFirstOffset`` empty) and ``now - lastTimestamp >=
producer.id.expiration.ms`` (isProducerExpired). ``late_expiries`` names such a producer only once
``lastTimestamp + producer.id.expiration.ms + the check interval`` has passed: one check falls in
every interval, and the first one at or after the expiry time removes it. The slice's data and
offsets partitions never change leader, so their logs (and the task) live for the whole run.
"""

from __future__ import annotations

from collections.abc import Iterator

from kconform.model import txn_graph as G
from kconform.model import txn_partition as T
from kconform.model.coordinator import StatePartition, TxnMetadata
from kconform.model.frozen_map import FrozenMap
from kconform.model.txn_config import SHORT_MAX, TxnConfig


def abort_deadline(meta: TxnMetadata, owner: StatePartition, cfg: TxnConfig) -> int | None:
    """The time (ms) by which a loaded coordinator has rolled ``meta`` back if it is still
    Ongoing; None when nothing is demanded (not Ongoing, the partition not loaded, epoch 32767)."""
    if meta.state != G.ONGOING or not owner.loaded or meta.epoch >= SHORT_MAX:
        return None
    return max(meta.start_ms + meta.timeout_ms, owner.loaded_ms) + cfg.abort_timed_out_interval_ms


def abort_deadlines(
    txns: FrozenMap[str, TxnMetadata], coordinators: FrozenMap[str, StatePartition], cfg: TxnConfig
) -> Iterator[tuple[str, int]]:
    """(transactional id, deadline ms) of every Ongoing transaction a loaded coordinator holds."""
    for txn_id, meta in txns.items():
        owner = coordinators.get(cfg.state_partition(txn_id))
        if owner is None:
            continue
        deadline = abort_deadline(meta, owner, cfg)
        if deadline is not None:
            yield txn_id, deadline


_FIRST_ABORT: list[tuple[object, object, object, int | None]] = []
"""The last (txns, coordinators, cfg) ``first_abort_deadline`` saw and its answer (one slot, replaced
whole; the objects are held, so their ids are not reused)."""


def first_abort_deadline(
    txns: FrozenMap[str, TxnMetadata], coordinators: FrozenMap[str, StatePartition], cfg: TxnConfig
) -> int | None:
    """The earliest of ``abort_deadlines`` (None: none), computed once for the very same maps and
    config in a row: a clock tick leaves them as they were."""
    if _FIRST_ABORT:
        last = _FIRST_ABORT[0]
        if last[0] is txns and last[1] is coordinators and last[2] is cfg:
            return last[3]
    first = min((deadline for _txn_id, deadline in abort_deadlines(txns, coordinators, cfg)), default=None)
    _FIRST_ABORT[:] = [(txns, coordinators, cfg, first)]
    return first


def late_aborts(
    txns: FrozenMap[str, TxnMetadata], coordinators: FrozenMap[str, StatePartition], cfg: TxnConfig, now_ms: int
) -> tuple[str, ...]:
    """One message per transaction still Ongoing after its rollback deadline on the clock ``now_ms``
    (none before the earliest deadline)."""
    first = first_abort_deadline(txns, coordinators, cfg)
    if first is None or now_ms <= first:
        return ()
    return tuple(
        f"{txn_id!r} stayed Ongoing past {deadline} ms (now {now_ms} ms; started at {txns[txn_id].start_ms} ms, "
        f"transaction.timeout.ms {txns[txn_id].timeout_ms} + abort interval {cfg.abort_timed_out_interval_ms}, "
        f"coordinator loaded at {coordinators[cfg.state_partition(txn_id)].loaded_ms} ms)"
        for txn_id, deadline in sorted(abort_deadlines(txns, coordinators, cfg))
        if now_ms > deadline
    )


PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 600_000
"""producer.id.expiration.check.interval.ms, Kafka's default (ProducerStateManagerConfig; LogConfig):
the period of UnifiedLog's PeriodicProducerExpirationCheck."""


def expiry_deadlines(partitions: FrozenMap[str, T.Partition], cfg: TxnConfig) -> Iterator[tuple[str, int, int]]:
    """(partition, producer id, deadline ms) of every producer with no open transaction: by the
    deadline its leader has dropped its state."""
    for name, p in partitions.items():
        for pid, entry in p.producers.items():
            if not entry.in_transaction:
                yield (
                    name,
                    pid,
                    entry.last_timestamp_ms + cfg.producer_id_expiration_ms + PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
                )


_FIRST_EXPIRY: list[tuple[object, object, int | None]] = []
"""The last (partitions, cfg) ``first_expiry_deadline`` saw and its answer (as ``_FIRST_ABORT``)."""


def first_expiry_deadline(partitions: FrozenMap[str, T.Partition], cfg: TxnConfig) -> int | None:
    """The earliest of ``expiry_deadlines`` (None: none), computed once for the very same
    partitions and config in a row."""
    if _FIRST_EXPIRY:
        last = _FIRST_EXPIRY[0]
        if last[0] is partitions and last[1] is cfg:
            return last[2]
    first = min((deadline for _name, _pid, deadline in expiry_deadlines(partitions, cfg)), default=None)
    _FIRST_EXPIRY[:] = [(partitions, cfg, first)]
    return first


def late_expiries(partitions: FrozenMap[str, T.Partition], cfg: TxnConfig, now_ms: int) -> tuple[str, ...]:
    """One message per producer whose state outlived its expiry deadline on the clock ``now_ms``
    (none before the earliest deadline)."""
    first = first_expiry_deadline(partitions, cfg)
    if first is None or now_ms <= first:
        return ()
    return tuple(
        f"{name}: producer {pid}'s state outlived {deadline} ms (now {now_ms} ms; last write at "
        f"{partitions[name].producers[pid].last_timestamp_ms} ms, producer.id.expiration.ms "
        f"{cfg.producer_id_expiration_ms} + check interval {PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS})"
        for name, pid, deadline in sorted(expiry_deadlines(partitions, cfg))
        if now_ms > deadline
    )
