"""A broker's simulated disk: what survives a crash.

Guarantees (kafka-facts §3.6, BrokerCrashed docstring): the durable log is always a prefix of the
in-memory log; truncation reaches the disk at once; the leader-epoch checkpoint is rewritten on
every change; the HW checkpoint only changes when the broker checkpoints; the log start offset
and the deletion of the records below it are durable at once (UnifiedLog deletes the segments and
checkpoints the log start, ``log-start-offset-checkpoint``; the model keeps it through a crash).
"""

from __future__ import annotations

from kconform.traces.events import Entry


class Disk:
    """Durable log entries, the HW checkpoint and the leader-epoch checkpoint of one broker."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.hw_checkpoint = 0
        self.epochs: tuple[tuple[int, int], ...] = ()
        self.log_start = 0

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

    def delete_below(self, log_start: int, placeholders: list[Entry]) -> None:
        """The log start moved to ``log_start``: the durable records below it are the ``placeholders``
        (one per offset from 0) and the new log start is durable."""
        for offset in range(min(log_start, len(self.entries))):
            self.entries[offset] = placeholders[offset]
        self.log_start = log_start

    def restart_at(self, offset: int, placeholders: list[Entry]) -> None:
        """truncateFullyAndStartAt: the durable log is ``placeholders`` up to ``offset``, its log start ``offset``."""
        self.entries = list(placeholders[:offset])
        self.log_start = offset

    def write_epochs(self, epochs: tuple[tuple[int, int], ...]) -> None:
        self.epochs = epochs

    def write_hw_checkpoint(self, hw: int) -> None:
        self.hw_checkpoint = hw
