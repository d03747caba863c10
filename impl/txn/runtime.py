"""What every node of the exactly-once slice shares: config, mutants, clock, network, events and
the cluster metadata (who leads which partition, coordinator epochs, the durable
``__transaction_state`` logs, the producer-id allocator).

Guarantees: producer ids are handed out once per run, in increasing order (the controller's
block allocator, kafka-facts §8); a ``__transaction_state`` log never loses a record once
appended (its replication is abstracted, docs/transactions.md); metadata is read directly, as an
always-fresh metadata cache (clients' FindCoordinator answers the current leader).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.model.txn_config import TxnConfig

from ..runtime import World


@dataclass(frozen=True)
class TxnRecord:
    """One value of the ``__transaction_state`` log: a transactional id's metadata as written
    (TransactionLog's value schema, the fields the slice uses)."""

    pid: int
    prev_pid: int
    next_pid: int
    epoch: int
    last_epoch: int
    timeout_ms: int
    state: str
    partitions: tuple[str, ...]
    start_ms: int
    last_update_ms: int


@dataclass
class StateLog:
    """A durable ``__transaction_state`` partition: (transactional id, record or None = tombstone)."""

    entries: list[tuple[str, TxnRecord | None]] = field(default_factory=list)

    def append(self, txn_id: str, record: TxnRecord | None) -> None:
        self.entries.append((txn_id, record))

    def replay(self) -> dict[str, TxnRecord]:
        """The last value of every transactional id (compaction's view); tombstoned ids are absent."""
        out: dict[str, TxnRecord] = {}
        for txn_id, record in self.entries:
            if record is None:
                out.pop(txn_id, None)
            else:
                out[txn_id] = record
        return out


@dataclass
class Metadata:
    """Partition leadership and coordinator epochs (the controller's view, read by everyone)."""

    leaders: dict[str, int]
    state_epochs: dict[str, int]
    state_logs: dict[str, StateLog]
    next_pid: int = 1000

    def allocate_pid(self) -> int:
        pid = self.next_pid
        self.next_pid += 1
        return pid


@dataclass
class TxnWorld(World[TxnConfig]):
    """The shared world of one exactly-once cluster run: the shared one and the cluster metadata."""

    metadata: Metadata
