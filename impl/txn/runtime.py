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
from typing import Any, NamedTuple

from kconform.model.txn_config import TxnConfig

from ..runtime import World


class TxnRecord(NamedTuple):
    """One value of the ``__transaction_state`` log: a transactional id's metadata as written
    (TransactionLog's value schema, the fields the slice uses). Immutable. A named tuple of
    numbers and strings: the cyclic collector stops tracking it (and the log entry holding it),
    so a long log (the epoch-exhaustion scenario appends 32,772 records) costs its full passes
    nothing."""

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
    """A durable ``__transaction_state`` partition: (transactional id, record or None = tombstone).
    A record is kept as the plain tuple of its fields (``replay`` names them again): a plain tuple
    of numbers and strings, and the entry holding it, leave the cyclic collector's care.

    The last value of every transactional id (what ``replay`` returns) is kept up to date as
    records are appended, by the same steps ``replay`` would take over the whole log, so a
    coordinator's load costs one record per transactional id, not one per entry of the log."""

    entries: list[tuple[str, tuple[Any, ...] | None]] = field(default_factory=list)
    _latest: dict[str, tuple[Any, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for txn_id, values in self.entries:
            self._apply(txn_id, values)

    def _apply(self, txn_id: str, values: tuple[Any, ...] | None) -> None:
        if values is None:
            self._latest.pop(txn_id, None)
        else:
            self._latest[txn_id] = values

    def append(self, txn_id: str, record: TxnRecord | None) -> None:
        values = None if record is None else tuple(record)
        self.entries.append((txn_id, values))
        self._apply(txn_id, values)

    def replay(self) -> dict[str, TxnRecord]:
        """The last value of every transactional id (compaction's view); tombstoned ids are absent.
        The same dict, in the same order, as replaying ``entries`` one by one into an empty one."""
        return {txn_id: TxnRecord._make(values) for txn_id, values in self._latest.items()}


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
