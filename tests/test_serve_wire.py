"""kconform serve's protocol layer: record batches v2 (CRC32C, control batches), frames and the
answers Kafka gives to bad input (an unsupported ApiVersions version, other unsupported versions,
malformed, truncated and oversized requests), with the server still serving others afterwards."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

import pytest
from kio.serial import entity_reader

from kconform.conformance.serve import protocol as P
from kconform.conformance.serve.cluster import ServedCluster, served_config
from kconform.conformance.serve.records import (
    ATTR_TRANSACTIONAL,
    CORRUPT_MESSAGE,
    UNSUPPORTED_COMPRESSION_TYPE,
    Batch,
    BatchError,
    WireRecord,
    control_batch,
    control_type,
    decode_batches,
    encode_batch,
)
from kconform.conformance.serve.server import Server, ServerThread


def _batch() -> Batch:
    records = (
        WireRecord(1_700_000_000_123, b"k", b"v", (("h", b"x"),)),
        WireRecord(1_700_000_000_200, None, b"second"),
    )
    return Batch(7, 1000, 2, 5, ATTR_TRANSACTIONAL, records)


def test_a_batch_reads_back_exactly() -> None:
    batch = _batch()
    assert decode_batches(encode_batch(batch)) == [batch]


def test_a_flipped_byte_is_a_crc_mismatch_and_a_near_miss_is_not() -> None:
    data = bytearray(encode_batch(_batch()))
    data[-3] ^= 0x01
    with pytest.raises(BatchError) as err:
        decode_batches(bytes(data))
    assert err.value.code == CORRUPT_MESSAGE and "CRC32C" in str(err.value)
    # the partition leader epoch lies before the CRC's range: changing it is not a corruption
    intact = bytearray(encode_batch(_batch()))
    intact[12:16] = struct.pack(">i", 9)
    assert decode_batches(bytes(intact))[0].partition_leader_epoch == 9


def test_a_truncated_batch_and_an_unserved_codec_are_refused_with_kafkas_codes() -> None:
    data = encode_batch(_batch())
    with pytest.raises(BatchError) as err:
        decode_batches(data[:-1])
    assert err.value.code == CORRUPT_MESSAGE
    lz4 = bytearray(data)
    lz4[22] |= 0x03  # attributes' low byte: codec 3 (lz4)
    with pytest.raises(BatchError):  # the CRC no longer matches first
        decode_batches(bytes(lz4))


def test_a_control_batch_is_a_transaction_marker() -> None:
    (batch,) = decode_batches(control_batch(42, 1000, 3, True, 0))
    assert batch.control and batch.transactional and batch.base_offset == 42
    assert control_type(batch.records[0]) == 1
    (abort,) = decode_batches(control_batch(43, 1000, 3, False, 0))
    assert control_type(abort.records[0]) == 0


def test_unsupported_compression_code_is_kafkas() -> None:
    assert UNSUPPORTED_COMPRESSION_TYPE == 76


# ------------------------------------------------------------------------------ the server


def _frame(api_key: int, version: int, correlation: int, rest: bytes = b"") -> bytes:
    body = struct.pack(">hhi", api_key, version, correlation) + struct.pack(">h", 1) + b"c" + rest
    return struct.pack(">i", len(body)) + body


def _api_versions_v0(correlation: int) -> bytes:
    return _frame(18, 0, correlation)


def _recv_frame(sock: socket.socket) -> bytes:
    head = _recv_exactly(sock, 4)
    (size,) = struct.unpack(">i", head)
    return _recv_exactly(sock, size)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return out


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionError:
        return True


@pytest.fixture()
def served() -> Iterator[ServerThread]:
    thread = ServerThread(Server(ServedCluster(served_config(1)), max_request_bytes=1024))
    thread.start()
    yield thread
    thread.stop()


def _connect(thread: ServerThread) -> socket.socket:
    host, port = thread.server.apis.endpoints[0]
    sock = socket.create_connection((host, port), timeout=5)
    return sock


def test_api_versions_lists_what_is_served(served: ServerThread) -> None:
    with _connect(served) as sock:
        sock.sendall(_api_versions_v0(11))
        frame = _recv_frame(sock)
    correlation, error = struct.unpack_from(">ih", frame)
    assert (correlation, error) == (11, 0)
    body, _ = entity_reader(P.response_class(18, 0))(frame, 4)
    served_keys = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
    assert served_keys == P.SUPPORTED


def test_an_unsupported_api_versions_version_gets_kafkas_v0_error_answer(served: ServerThread) -> None:
    with _connect(served) as sock:
        sock.sendall(_frame(18, 9, 5, b"\x00garbage-of-a-future-version"))
        frame = _recv_frame(sock)
        correlation, error = struct.unpack_from(">ih", frame)
        assert (correlation, error) == (5, P.UNSUPPORTED_VERSION)
        body, _ = entity_reader(P.response_class(18, 0))(frame, 4)
        assert [(k.api_key, k.max_version) for k in body.api_keys] == [(18, P.SUPPORTED[18][1])]
        sock.sendall(_api_versions_v0(6))  # the connection stays open: the client retries lower
        assert struct.unpack_from(">ih", _recv_frame(sock)) == (6, 0)


@pytest.mark.parametrize(
    "frame",
    [
        _frame(0, 99, 1),  # Produce of a version not served
        _frame(1000, 0, 1),  # an api key not served
        struct.pack(">i", 3) + b"\x00\x12\x00",  # a header cut short
        _frame(3, 1, 1, b"\x00\x00\x00\x05"),  # Metadata v1 whose topic array runs past the end
        _frame(18, 0, 1, b"\x00"),  # a byte after the request
        struct.pack(">i", 4096) + b"\x00" * 8,  # above socket.request.max.bytes (1024 here)
        struct.pack(">i", -1),  # a negative size
    ],
    ids=[
        "unserved-version",
        "unknown-api",
        "short-header",
        "truncated-body",
        "trailing-bytes",
        "oversized",
        "negative",
    ],
)
def test_bad_input_closes_that_connection_and_others_are_still_served(served: ServerThread, frame: bytes) -> None:
    with _connect(served) as good, _connect(served) as bad:
        bad.sendall(frame)
        assert _closed(bad)
        good.sendall(_api_versions_v0(3))
        assert struct.unpack_from(">ih", _recv_frame(good)) == (3, 0)
    stats = served.call(lambda: served.server.stats)
    assert sum(stats.closed.values()) == 1 and not stats.errors


def test_a_request_cut_mid_frame_is_dropped_without_a_judged_step(served: ServerThread) -> None:
    steps_before = served.call(lambda: len(served.server.cluster.run.steps))
    with _connect(served) as sock:
        sock.sendall(struct.pack(">i", 100) + b"\x00\x00")
    with _connect(served) as sock:  # still serving
        sock.sendall(_api_versions_v0(9))
        assert struct.unpack_from(">ih", _recv_frame(sock)) == (9, 0)
    cluster = served.server.cluster
    assert served.call(lambda: cluster.failure) is None
    assert served.call(lambda: all(type(r.op).__name__ != "WireRequest" for r in cluster.run.steps[steps_before:]))


def test_a_plain_producers_batch_is_appended_without_sequence_checks() -> None:
    """A batch without a producer id (RecordBatch.NO_PRODUCER_ID, a non-idempotent producer) skips
    the producer-state checks (UnifiedLog.analyzeAndValidateProducerState): the reference appends it
    twice as the model does; the idempotent near miss (a real pid) is deduplicated."""
    from kconform.impl.txn.messages import InitPidRequest, TxnProduceRequest

    cluster = ServedCluster(served_config(1))
    first = cluster.send(0, 0, TxnProduceRequest("t-0", "", -1, -1, -1, (1, 2), False, -1))
    second = cluster.send(0, 0, TxnProduceRequest("t-0", "", -1, -1, -1, (5, 6), False, -1))
    assert (first.error, first.base_offset, second.error, second.base_offset) == (0, 0, 0, 2)  # type: ignore[union-attr]
    pid = cluster.send(0, 0, InitPidRequest("", 1000, -1, -1))
    idem = TxnProduceRequest("t-0", "", pid.pid, 0, 0, (3,), False, -1)  # type: ignore[union-attr]
    a, b = cluster.send(0, 0, idem), cluster.send(0, 0, idem)
    assert (a.base_offset, b.base_offset) == (4, 4)  # type: ignore[union-attr]
    assert cluster.failure is None
