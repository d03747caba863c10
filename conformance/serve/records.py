"""Kafka's record batch format v2 (magic 2), as ``org.apache.kafka.common.record.DefaultRecordBatch``
and ``DefaultRecord`` lay it out, with the CRC32C (Castagnoli) of everything after the crc field.

Batch: baseOffset int64, batchLength int32, partitionLeaderEpoch int32, magic int8 = 2, crc uint32,
attributes int16 (bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control), lastOffsetDelta
int32, baseTimestamp int64, maxTimestamp int64, producerId int64, producerEpoch int16, baseSequence
int32, record count int32, records. Record: length varint, attributes int8, timestampDelta varlong,
offsetDelta varint, key (varint length, -1 = null), value, header count varint, headers. A control
record (``EndTransactionMarker``) has key = (version int16 0, type int16: 0 abort, 1 commit) and
value = (version int16 0, coordinatorEpoch int32), alone in a transactional control batch.

Guarantees: ``decode_batches`` checks magic, batch length and CRC and reads records exactly (bytes,
not rounded timestamps), raising ``BatchError`` with Kafka's error code (CORRUPT_MESSAGE, INVALID_RECORD,
UNSUPPORTED_COMPRESSION_TYPE) and a message; gzip batches are decompressed (the codecs needing
packages outside the standard library are refused with UNSUPPORTED_COMPRESSION_TYPE);
``encode_batch`` writes what ``decode_batches`` reads back (property-tested).
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import dataclass

from crc32c import crc32c

CORRUPT_MESSAGE = 2
INVALID_RECORD = 87
UNSUPPORTED_COMPRESSION_TYPE = 76

ATTR_COMPRESSION_MASK = 0x07
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
CONTROL_ABORT = 0
CONTROL_COMMIT = 1
BATCH_HEADER_BYTES = 61
"""DefaultRecordBatch.RECORD_BATCH_OVERHEAD: everything of a batch before its records."""
MAX_RECORDS_PER_BATCH = 1_000_000
"""A bound on one batch's record count (a count beyond what the bytes can hold is refused first)."""


class BatchError(ValueError):
    """A batch Kafka refuses: ``code`` is the partition's error in the ProduceResponse."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class WireRecord:
    """One record as the client wrote it: absolute timestamp (ms), key, value, headers."""

    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    attributes: int = 0


@dataclass(frozen=True)
class Batch:
    """One batch: producer identity, base sequence, flags and its records (offsets relative)."""

    base_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    attributes: int
    records: tuple[WireRecord, ...]
    partition_leader_epoch: int = 0

    @property
    def transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)


# ---------------------------------------------------------------------------------- varints


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def write_varint(out: bytearray, n: int) -> None:
    """Kafka's zig-zag varint / varlong (ByteUtils.writeVarlong)."""
    v = _zigzag(n) & 0xFFFFFFFFFFFFFFFF
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


class _Reader:
    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise BatchError(CORRUPT_MESSAGE, f"record batch truncated in {what}")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def varint(self, what: str) -> int:
        shift = 0
        raw = 0
        for _ in range(10):
            b = self.take(1, what)[0]
            raw |= (b & 0x7F) << shift
            if not b & 0x80:
                return (raw >> 1) ^ -(raw & 1)
            shift += 7
        raise BatchError(CORRUPT_MESSAGE, f"varint too long in {what}")

    def nullable(self, what: str) -> bytes | None:
        n = self.varint(what)
        return None if n < 0 else self.take(n, what)


# ---------------------------------------------------------------------------------- decoding

_HEAD = struct.Struct(">qiibI")
_TAIL = struct.Struct(">hiqqqhii")


def decode_batches(data: bytes) -> list[Batch]:
    """Every batch in a Produce request's ``records`` bytes (a trailing partial batch is refused)."""
    out: list[Batch] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < 12:
            raise BatchError(CORRUPT_MESSAGE, "record batch truncated in its header")
        _, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if length < BATCH_HEADER_BYTES - 12 or end > len(data):
            raise BatchError(CORRUPT_MESSAGE, f"record batch length {length} does not fit the {len(data) - pos} bytes")
        out.append(_decode_one(data, pos, end))
        pos = end
    return out


def _decode_one(data: bytes, pos: int, end: int) -> Batch:
    base_offset, _length, leader_epoch, magic, crc = _HEAD.unpack_from(data, pos)
    if magic != 2:
        raise BatchError(INVALID_RECORD, f"record batch magic {magic}: only magic 2 is served")
    body_start = pos + _HEAD.size
    if crc32c(data[body_start:end]) != crc:
        raise BatchError(CORRUPT_MESSAGE, "record batch CRC32C mismatch")
    attributes, last_delta, base_ts, _max_ts, pid, epoch, base_seq, count = _TAIL.unpack_from(data, body_start)
    records_start = body_start + _TAIL.size
    codec = attributes & ATTR_COMPRESSION_MASK
    if codec == 0:
        reader = _Reader(data, records_start, end)
    elif codec == 1:
        try:
            reader = _Reader(gzip.decompress(data[records_start:end]))
        except (OSError, EOFError, zlib.error) as exc:
            raise BatchError(CORRUPT_MESSAGE, f"gzip batch does not decompress: {exc}") from None
    else:
        raise BatchError(UNSUPPORTED_COMPRESSION_TYPE, f"compression codec {codec} is not served (none, gzip)")
    if not 0 <= count <= min(MAX_RECORDS_PER_BATCH, reader.end - reader.pos):
        raise BatchError(CORRUPT_MESSAGE, f"record count {count} does not fit the batch")
    records = tuple(_decode_record(reader, base_ts, i) for i in range(count))
    if reader.pos != reader.end:
        raise BatchError(CORRUPT_MESSAGE, "record batch has bytes after its last record")
    if count and last_delta != count - 1:
        raise BatchError(INVALID_RECORD, f"lastOffsetDelta {last_delta} with {count} records")
    return Batch(base_offset, pid, epoch, base_seq, attributes & ~ATTR_COMPRESSION_MASK, records, leader_epoch)


def _decode_record(reader: _Reader, base_ts: int, index: int) -> WireRecord:
    length = reader.varint("record length")
    inner = _Reader(reader.take(length, "record"))
    attributes = inner.take(1, "record attributes")[0]
    ts_delta = inner.varint("timestamp delta")
    offset_delta = inner.varint("offset delta")
    if offset_delta != index:
        raise BatchError(INVALID_RECORD, f"record {index} has offset delta {offset_delta}")
    key = inner.nullable("record key")
    value = inner.nullable("record value")
    n_headers = inner.varint("header count")
    if not 0 <= n_headers <= inner.end - inner.pos:
        raise BatchError(CORRUPT_MESSAGE, f"header count {n_headers} does not fit the record")
    headers: list[tuple[str, bytes | None]] = []
    for _ in range(n_headers):
        hkey = inner.nullable("header key")
        if hkey is None:
            raise BatchError(INVALID_RECORD, "null header key")
        headers.append((hkey.decode("utf-8", "replace"), inner.nullable("header value")))
    if inner.pos != inner.end:
        raise BatchError(CORRUPT_MESSAGE, f"record {index} has bytes after its headers")
    return WireRecord(base_ts + ts_delta, key, value, tuple(headers), attributes)


# ---------------------------------------------------------------------------------- encoding


def _nullable(out: bytearray, b: bytes | None) -> None:
    if b is None:
        write_varint(out, -1)
    else:
        write_varint(out, len(b))
        out += b


def encode_batch(batch: Batch) -> bytes:
    """The batch in format v2, uncompressed, with its CRC32C."""
    if not batch.records:
        raise ValueError("a record batch holds at least one record")
    base_ts = batch.records[0].timestamp
    max_ts = max(r.timestamp for r in batch.records)
    body = bytearray()
    for i, r in enumerate(batch.records):
        rec = bytearray([r.attributes & 0xFF])
        write_varint(rec, r.timestamp - base_ts)
        write_varint(rec, i)
        _nullable(rec, r.key)
        _nullable(rec, r.value)
        write_varint(rec, len(r.headers))
        for hkey, hvalue in r.headers:
            _nullable(rec, hkey.encode())
            _nullable(rec, hvalue)
        write_varint(body, len(rec))
        body += rec
    tail = _TAIL.pack(
        batch.attributes & ~ATTR_COMPRESSION_MASK,
        len(batch.records) - 1,
        base_ts,
        max_ts,
        batch.producer_id,
        batch.producer_epoch,
        batch.base_sequence,
        len(batch.records),
    )
    crc_part = tail + bytes(body)
    head = _HEAD.pack(batch.base_offset, len(crc_part) + 9, batch.partition_leader_epoch, 2, crc32c(crc_part))
    return head + crc_part


def control_batch(offset: int, pid: int, epoch: int, commit: bool, timestamp: int, coordinator_epoch: int = 0) -> bytes:
    """The transaction marker at ``offset`` as Kafka writes it (MemoryRecords.withEndTransactionMarker)."""
    key = struct.pack(">hh", 0, CONTROL_COMMIT if commit else CONTROL_ABORT)
    value = struct.pack(">hi", 0, coordinator_epoch)
    record = WireRecord(timestamp, key, value)
    return encode_batch(Batch(offset, pid, epoch, -1, ATTR_TRANSACTIONAL | ATTR_CONTROL, (record,)))


def control_type(record: WireRecord) -> int | None:
    """The control record's type (0 abort, 1 commit), None if its key is not a marker's."""
    if record.key is None or len(record.key) < 4:
        return None
    _version, kind = struct.unpack_from(">hh", record.key)
    return int(kind)
