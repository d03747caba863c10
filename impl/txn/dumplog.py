"""The exactly-once reference brokers' partition logs printed as Kafka prints them: the output of
``kafka-dump-log.sh --deep-iteration --files DIR/<topic>-<p>/00000000000000000000.log`` (Kafka 3.x
``DumpLogSegments``: one batch line per batch with its producer fields, then one ``| offset:`` line
per record, control records with ``endTxnMarker: COMMIT|ABORT coordinatorEpoch: E``).

This is the ground truth for ``kconform logs``: a run of the reference cluster with a named mutant
prints the anomaly the mutant writes into the log (a duplicate sequence, a fenced epoch's write, a
stale coordinator's marker), and the log checks must find it; a clean run must raise nothing.

Guarantees: the text is a function of the log alone (deterministic); each append of the broker is
one batch (``TxnPartitionLog.appends``), with its records in offset order; nothing but what the
log holds is printed (no invented field: positions and sizes are the running byte count of a fixed
per-record size, the leader epoch is 0 since the slice's partitions never change leader).
"""

from __future__ import annotations

from kconform.model.records import COMMIT_MARKER, NO_CONTROL

from .log import TxnPartitionLog

RECORD_BYTES = 80
"""Size printed per record (the slice stores no payload)."""
DATA_DIR = "/var/lib/kafka/data"


def segment_path(partition: str) -> str:
    """Where Kafka would keep the partition's first segment."""
    return f"{DATA_DIR}/{partition}/00000000000000000000.log"


def dump_lines(log: TxnPartitionLog) -> list[str]:
    """``kafka-dump-log.sh --deep-iteration`` output of ``log``'s one segment."""
    out = [f"Dumping {segment_path(log.name)}", "Log starting offset: 0"]
    position = 0
    for base, count, at_ms, coordinator_epoch in log.appends:
        records = log.records[base : base + count]
        first, last = records[0], records[-1]
        control = first.control != NO_CONTROL
        size = RECORD_BYTES * count
        out.append(
            f"baseOffset: {base} lastOffset: {base + count - 1} count: {count} baseSequence: {first.seq} "
            f"lastSequence: {last.seq} producerId: {first.pid} producerEpoch: {first.epoch} partitionLeaderEpoch: 0 "
            f"isTransactional: {str(bool(first.txn)).lower()} isControl: {str(control).lower()} "
            f"deleteHorizonMs: OptionalLong.empty position: {position} CreateTime: {at_ms} size: {size} magic: 2 "
            "compresscodec: none crc: 0 isvalid: true"
        )
        for r in records:
            line = (
                f"| offset: {r.offset} CreateTime: {at_ms} keySize: {4 if control else -1} valueSize: 6 "
                f"sequence: {r.seq} headerKeys: []"
            )
            if control:
                kind = "COMMIT" if r.control == COMMIT_MARKER else "ABORT"
                line += f" endTxnMarker: {kind} coordinatorEpoch: {coordinator_epoch}"
            out.append(line)
        position += size
    return out
