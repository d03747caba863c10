"""The records the model's logs hold and its handlers answer with: offsets, epochs, producer ids.

``Entry`` is one record of the replication slice's log; ``Record``, ``AbortedTxn`` and
``TopicOffset`` are the exactly-once slice's records, aborted-transaction index entries and
consumer-group offsets. They are frozen and ordered; ``to_list``/``from_list`` give the JSON form
trace files store (a list of integers, or ``[partition, offset]``), and ``from_list`` rejects
anything else with a ValueError naming the value.

Conventions (Kafka's): offsets are int64 and ``-1`` means "none/unknown" for leaders, epochs,
offsets, producer ids and sequences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kconform.model.fast_init import fast_frozen_inits


@dataclass(frozen=True, order=True)
class Entry:
    """One record in a replica's log: its offset, the leader epoch that wrote it, and its record id.

    Record ids are unique per produce *request* chosen by the client; a duplicated request appends
    the same id twice (no idempotence in the replication slice).
    """

    offset: int
    epoch: int
    rid: int

    def to_list(self) -> list[int]:
        return [self.offset, self.epoch, self.rid]

    @staticmethod
    def from_list(value: Any) -> Entry:
        if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, int) for v in value)):
            raise ValueError(f"an entry is [offset, epoch, rid] of integers, got {value!r}")
        return Entry(value[0], value[1], value[2])


NO_CONTROL = -1
ABORT_MARKER = 0
COMMIT_MARKER = 1
"""``Record.control``: a data record, or a control record of Kafka's ControlRecordType (ABORT = 0,
COMMIT = 1; kafka-facts §4)."""


@dataclass(frozen=True, order=True)
class Record:
    """One record of a partition in the exactly-once slice, as a fetch returns it.

    ``pid``/``epoch``/``seq`` are the batch's producer id, producer epoch and this record's
    sequence (-1 for none); ``rid`` is the harness's record id (-1 for control records and
    offset commits); ``txn`` is 1 for a transactional batch (markers always are); ``control`` is
    NO_CONTROL, ABORT_MARKER or COMMIT_MARKER.
    """

    offset: int
    pid: int
    epoch: int
    seq: int
    rid: int
    txn: int
    control: int

    def to_list(self) -> list[int]:
        return [self.offset, self.pid, self.epoch, self.seq, self.rid, self.txn, self.control]

    @staticmethod
    def from_list(value: Any) -> Record:
        if not (isinstance(value, list) and len(value) == 7 and all(_is_int(v) for v in value)):
            raise ValueError(f"a record is [offset, pid, epoch, seq, rid, txn, control] of integers, got {value!r}")
        return Record(*value)


@dataclass(frozen=True, order=True)
class AbortedTxn:
    """An entry of a read_committed fetch's abortedTransactions list: (producerId, firstOffset)."""

    pid: int
    first_offset: int

    def to_list(self) -> list[int]:
        return [self.pid, self.first_offset]

    @staticmethod
    def from_list(value: Any) -> AbortedTxn:
        if not (isinstance(value, list) and len(value) == 2 and all(_is_int(v) for v in value)):
            raise ValueError(f"an aborted transaction is [pid, first_offset] of integers, got {value!r}")
        return AbortedTxn(value[0], value[1])


@dataclass(frozen=True, order=True)
class TopicOffset:
    """A consumer-group offset: the next offset to consume in ``partition``."""

    partition: str
    offset: int

    def to_list(self) -> list[Any]:
        return [self.partition, self.offset]

    @staticmethod
    def from_list(value: Any) -> TopicOffset:
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and _is_int(value[1])):
            raise ValueError(f"a topic offset is [partition, offset], got {value!r}")
        return TopicOffset(value[0], value[1])


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


fast_frozen_inits(vars(), __name__)  # each frozen dataclass here gets a cheaper, identical __init__ (model.fast_init)
