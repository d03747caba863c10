"""A broker's simulated disk: what survives a crash.

Guarantees (kafka-facts §3.6, BrokerCrashed docstring): the durable log is always a prefix of the
in-memory log; truncation reaches the disk at once; the leader-epoch checkpoint is rewritten on
every change; the HW checkpoint only changes when the broker checkpoints.
"""

from __future__ import annotations

from kconform.traces.events import Entry


class Disk:
    """Durable log entries, the HW checkpoint and the leader-epoch checkpoint of one broker."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.hw_checkpoint = 0
        self.epochs: tuple[tuple[int, int], ...] = ()

    @property
    def log_end(self) -> int:
        return len(self.entries)

    def append(self, entry: Entry) -> None:
        """fsync of one appended entry (flush_interval_ms == 0)."""
        assert entry.offset == len(self.entries), f"durable append at {entry.offset}, end {len(self.entries)}"
        self.entries.append(entry)

    def flush(self, entries: list[Entry]) -> None:
        """Make the whole in-memory log durable."""
        assert entries[: len(self.entries)] == self.entries, "durable log is not a prefix of the log"
        self.entries = list(entries)

    def truncate(self, end_offset: int) -> None:
        """Truncation is durable immediately."""
        del self.entries[end_offset:]

    def write_epochs(self, epochs: tuple[tuple[int, int], ...]) -> None:
        self.epochs = epochs

    def write_hw_checkpoint(self, hw: int) -> None:
        self.hw_checkpoint = hw
