"""Transaction checks: markers closing transactional batches in data segments, the transaction log's
state machine (the coordinator's valid transitions, one table: kconform.model.txn_graph), and the
aborted-transaction index.

Sources: KIP-98; kafka.log.ProducerStateManager / ProducerAppendInfo.appendEndTxnMarker (markers
close the producer's ongoing transaction; a marker with an older coordinator epoch is fenced);
kafka.coordinator.transaction.TransactionMetadata (validPreviousStates); kafka.log.TransactionIndex.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.txn_graph import EXPIRATION_ALLOWED, STATES, is_valid_transition
from kconform.traces.logs.checks.base import MAX_KEYS, Check, KeyedCheck
from kconform.traces.logs.observations import BATCH, TXN_INDEX, TXN_INIT, TXN_LOG, TXN_TRANSITION, Obs

DEFAULT_MAX_TXN_TIMEOUT_MS = 900_000
"""transaction.max.timeout.ms's default (15 minutes): no transaction may stay open longer."""

ABORT_SLACK_MS = 300_000
"""Slack on top of the timeout for the coordinator's abort (its check runs every 10 s by default)
and for producers' clock skew in CreateTime."""


@dataclass
class _Open:
    first: Obs
    epoch: int


class TxnBatchesClosedByMarker(Check):
    """Every transactional batch is closed by exactly one marker of its producer: a producer's data
    batches after its previous marker form one transaction that the next COMMIT/ABORT marker of the
    same producer id closes (ProducerStateManager). Violations: a marker whose producer epoch is
    older than the transaction's, a non-transactional batch of the producer while its transaction
    is open, and a transaction left open while the partition kept taking writes for longer than
    transaction.max.timeout.ms and never closed in the input (a hanging transaction: the LSO is
    stuck, KAFKA-12671 class; a late marker is not flagged, since markers wait for an unavailable
    coordinator). A recently opened transaction still open at the end of the input is reported as
    open, not as a violation."""

    name = "txn-batches-closed-by-marker"
    guarantee = "every transactional batch is closed by one marker of its producer (or still open within the timeout)"
    cite = (
        "KIP-98; kafka.log.ProducerStateManager, ProducerAppendInfo.appendEndTxnMarker; "
        "KAFKA-12671 (hanging transactions)"
    )
    kinds = frozenset({BATCH})

    def __init__(self, max_txn_timeout_ms: int = DEFAULT_MAX_TXN_TIMEOUT_MS) -> None:
        super().__init__()
        self.max_txn_timeout_ms = max_txn_timeout_ms
        self._open: dict[tuple[str, int], _Open] = self.table()
        self._open_in: dict[str, set[int]] = self.table()  # stream -> producers with an open transaction
        self._latest: dict[str, Obs] = self.table()
        self.open_at_end = 0

    def observe(self, obs: Obs) -> None:
        pid = obs.pid
        if obs.create_time is not None:
            latest = self._latest.get(obs.stream)
            if latest is None or (latest.create_time or 0) < obs.create_time:
                self._latest[obs.stream] = obs
        if pid is None or pid < 0:
            return
        key = (obs.stream, pid)
        current = self._open.get(key)
        if obs.control:
            if current is not None:
                self.judged += 1
                epoch = obs.producer_epoch if obs.producer_epoch is not None else current.epoch
                if epoch < current.epoch:
                    self.flag(
                        f"producer {pid}: marker at offset {obs.offset} has epoch {epoch}, older than its open "
                        f"transaction's epoch {current.epoch} (a fenced marker was written)",
                        [obs, current.first],
                        obs.partition,
                    )
                del self._open[key]
                self._open_in[obs.stream].discard(pid)
            return
        if obs.transactional:
            if current is None:
                self._open[key] = _Open(obs, obs.producer_epoch if obs.producer_epoch is not None else -1)
                if key in self._open:  # not when the table is full
                    self._open_in.setdefault(obs.stream, set()).add(pid)
            elif obs.producer_epoch is not None and obs.producer_epoch > current.epoch:
                current.epoch = obs.producer_epoch
            return
        if obs.transactional is False and current is not None:
            self.judged += 1
            self.flag(
                f"producer {pid} wrote a non-transactional batch at offset {obs.offset} while its transaction "
                f"from offset {current.first.offset} was open",
                [obs, current.first],
                obs.partition,
            )

    def finish(self) -> None:
        threshold = self.max_txn_timeout_ms + ABORT_SLACK_MS
        for (stream, pid), txn in self._open.items():
            latest = self._latest.get(stream)
            first_time = txn.first.create_time
            if latest is None or latest.create_time is None or first_time is None:
                continue
            self.judged += 1
            if latest.create_time - first_time > threshold:
                self.flag(
                    f"producer {pid}'s transaction from offset {txn.first.offset} is never closed although the "
                    f"partition took writes {(latest.create_time - first_time) // 1000} s later (offset "
                    f"{latest.offset}; transaction.max.timeout.ms = {self.max_txn_timeout_ms // 1000} s): "
                    "a hanging transaction",
                    [txn.first, latest],
                    txn.first.partition,
                )
        self.open_at_end = len(self._open)
        if self.open_at_end:
            self.notes.append(
                f"{self.open_at_end} transaction(s) still open at the end of their dump (not a violation)"
            )


class MarkerCoordinatorEpochs(KeyedCheck[tuple[str, int]]):
    """The coordinator epochs of one producer's markers in a partition never decrease: a marker
    from a coordinator older than one that already wrote a marker for the producer is fenced
    (TransactionCoordinatorFencedException)."""

    name = "txn-marker-coordinator-epochs-non-decreasing"
    guarantee = "a producer's markers in a partition carry non-decreasing coordinator epochs"
    cite = "KIP-98; kafka.log.ProducerAppendInfo.appendEndTxnMarker (coordinator epoch fencing)"
    kinds = frozenset({BATCH})

    def observe(self, obs: Obs) -> None:
        if not obs.control or obs.coordinator_epoch is None or obs.pid is None:
            return
        key = (obs.stream, obs.pid)
        prev = self.last.get(key)
        if prev is not None and prev.coordinator_epoch is not None:
            epoch = prev.coordinator_epoch
            if not self.judge(
                obs.coordinator_epoch >= epoch,
                lambda: (
                    f"producer {obs.pid}: marker at offset {obs.offset} has coordinator epoch {obs.coordinator_epoch} "
                    f"after a marker with coordinator epoch {epoch}"
                ),
                [obs, prev],
                obs.partition,
            ):
                return  # the later markers are judged against the newest coordinator epoch
        self.last[key] = obs


class TxnInitEpochs(KeyedCheck[tuple[str, str]]):
    """A transaction coordinator never hands a transactional id an older epoch of the same producer id:
    every InitProducerId bumps the epoch (or, when it would overflow or the id expired, allocates a
    new producer id), which is what fences zombie producers (KIP-98; KIP-360 may answer a retried
    request with the current epoch again, so an equal epoch is legal). Judged on each coordinator's
    own ``Initialized transactionalId X with producerId P and producer epoch E`` lines in its line
    order (TransactionCoordinator.handleInitProducerId); lines of different coordinators are not
    ordered."""

    name = "txn-init-epochs-non-decreasing"
    guarantee = "a coordinator's InitProducerId answers never lower a transactional id's epoch for one producer id"
    cite = "KIP-98, KIP-360; kafka.coordinator.transaction.TransactionCoordinator.handleInitProducerId"
    kinds = frozenset({TXN_INIT})

    def observe(self, obs: Obs) -> None:
        if obs.txn_id is None or obs.pid is None or obs.producer_epoch is None or obs.pid < 0:
            return
        prev = self.swap((obs.stream, obs.txn_id), obs)
        if prev is None or prev.pid != obs.pid or prev.producer_epoch is None:
            return
        epoch = prev.producer_epoch
        self.judge(
            obs.producer_epoch >= epoch,
            lambda: (
                f"transactional id {obs.txn_id}: producer id {obs.pid} initialized at epoch {obs.producer_epoch} "
                f"after epoch {epoch}"
            ),
            [obs, prev],
        )


class TxnLogTransitions(KeyedCheck[tuple[str, str]]):
    """Transaction state changes follow the coordinator's valid-transition table
    (kconform.model.txn_graph, Kafka's TransactionState.validPreviousStates; with the transaction
    version 2 edges when the log does not say the version): consecutive ``__transaction_state``
    records of a transactional id, and every ``complete transition`` line of a coordinator. A
    tombstone (expiration) may follow only Empty / CompleteCommit / CompleteAbort, and a
    transactional id's producer epoch never decreases for one producer id."""

    name = "txn-state-transitions-valid"
    guarantee = "every transaction state change is an edge of the coordinator's valid-transition table"
    cite = (
        "KIP-98, KIP-890; kafka.coordinator.transaction.TransactionState.validPreviousStates, TransactionStateManager"
    )
    kinds = frozenset({TXN_LOG, TXN_TRANSITION})

    def observe(self, obs: Obs) -> None:
        if obs.kind == TXN_TRANSITION:
            self._line(obs)
            return
        if obs.txn_id is None or obs.state is None:
            return
        prev = self.swap((obs.stream, obs.txn_id), obs)
        if prev is None or prev.state is None:
            return
        src, dst = prev.state, obs.state
        self.judged += 1
        if dst == "":
            if src not in EXPIRATION_ALLOWED and src != "":
                self.flag(
                    f"transactional id {obs.txn_id!r} expired (tombstone) in state {src}", [obs, prev], obs.partition
                )
            return
        if src == "":
            return  # a new transactional id after expiry: any first state the coordinator writes
        if not is_valid_transition(src, dst, 2):
            self.flag(
                f"transactional id {obs.txn_id!r}: {src} -> {dst} is not a valid transition", [obs, prev], obs.partition
            )
            return
        if (
            prev.pid is not None
            and prev.pid == obs.pid
            and prev.producer_epoch is not None
            and obs.producer_epoch is not None
            and obs.producer_epoch < prev.producer_epoch
        ):
            self.flag(
                f"transactional id {obs.txn_id!r}: producer {obs.pid}'s epoch went back from {prev.producer_epoch} "
                f"to {obs.producer_epoch}",
                [obs, prev],
                obs.partition,
            )

    def _line(self, obs: Obs) -> None:
        src, dst = obs.prev_state, obs.state
        if src not in STATES or dst not in STATES:
            return
        self.judged += 1
        version = obs.isolation if obs.isolation is not None else 2
        if not is_valid_transition(src, dst, version):
            self.flag(
                f"coordinator moved transactional id {obs.txn_id!r} from {src} to {dst} "
                f"(not a valid transition under transaction version {version})",
                [obs],
            )


@dataclass
class _Aborted:
    pid: int
    first: Obs
    marker: Obs


class AbortedIndexCoversAbortedBatches(Check):
    """Every transaction a segment shows aborted (transactional batches closed by an ABORT marker)
    is in the partition's aborted-transaction index with that producer id and the marker's offset
    as last offset, so that read_committed fetches return it among the aborted transactions and
    consumers drop its batches (KIP-98). Judged only where both the data segment dump and the
    ``.txnindex`` dump of a partition are given."""

    name = "aborted-index-covers-aborted-batches"
    guarantee = "every aborted transaction of a segment is listed in the aborted-transaction index"
    cite = "KIP-98; kafka.log.TransactionIndex, UnifiedLog.collectAbortedTransactions"
    kinds = frozenset({BATCH, TXN_INDEX})

    def __init__(self) -> None:
        super().__init__()
        self._open: dict[tuple[str, int], Obs] = self.table()
        self._aborted: dict[str, list[_Aborted]] = self.table()
        self._entries = 0
        """Aborted transactions and index entries remembered (all partitions; at most MAX_KEYS)."""
        self._index: dict[str, set[tuple[int, int]]] = self.table()
        self._index_first: dict[str, dict[tuple[int, int], int]] = self.table()

    def observe(self, obs: Obs) -> None:
        part = obs.partition
        if part is None or obs.pid is None:
            return
        if obs.kind == TXN_INDEX:
            if obs.last_offset is not None and obs.offset is not None and self._room():
                self._index.setdefault(part, set()).add((obs.pid, obs.last_offset))
                self._index_first.setdefault(part, {})[(obs.pid, obs.last_offset)] = obs.offset
            return
        key = (obs.stream, obs.pid)
        if obs.control:
            first = self._open.pop(key, None)
            if first is not None and obs.marker == "ABORT" and self._room():
                self._aborted.setdefault(part, []).append(_Aborted(obs.pid, first, obs))
            return
        if obs.transactional and key not in self._open:
            self._open[key] = obs

    def _room(self) -> bool:
        """Whether one more aborted transaction or index entry may be remembered (else counted)."""
        if self._entries >= MAX_KEYS:
            self.lists_overflow += 1
            return False
        self._entries += 1
        return True

    def finish(self) -> None:
        for part, aborted in self._aborted.items():
            index = self._index.get(part)
            firsts = self._index_first.get(part)
            if index is None or firsts is None:
                continue
            for txn in aborted:
                self.judged += 1
                entry = (txn.pid, txn.marker.offset if txn.marker.offset is not None else -1)
                if entry not in index:
                    self.flag(
                        f"aborted transaction of producer {txn.pid} ({txn.first.offset}..{txn.marker.offset}) "
                        "is missing from the aborted-transaction index",
                        [txn.marker, txn.first],
                        part,
                    )
                elif txn.first.offset is not None and firsts[entry] > txn.first.offset:
                    self.flag(
                        f"aborted-transaction index starts producer {txn.pid}'s transaction at {firsts[entry]}, "
                        f"after its first batch at {txn.first.offset}",
                        [txn.marker, txn.first],
                        part,
                    )
