"""Kafka's wire protocol for the served cluster: frames, request headers, the API versions served,
and kio (classes generated from Kafka's own message schemas) for every request and response body.

A frame is a 4-byte big-endian size, then that many bytes. A request starts with its header (v1:
api key int16, api version int16, correlation id int32, client id nullable string; v2, for the
flexible versions: the same plus tagged fields); a response with the correlation id (header v0; v1,
for flexible versions, plus tagged fields; ApiVersions always answers with header v0, KIP-511).

What Kafka does with bad input, and so what this layer reports (kafka SocketServer.Processor,
RequestChannel.Request, NetworkReceive):

- a size above ``socket.request.max.bytes`` (or negative) → ``CloseConnection`` (InvalidReceiveException);
- an ApiVersions request of a version not served → an ApiVersionsResponse **v0** with error
  UNSUPPORTED_VERSION (35) listing the ApiVersions range served, so the client can retry lower
  (KIP-511; ApiVersionsRequest.getErrorResponse);
- any other unsupported (api key, version), a header or body that does not parse, or bytes left over
  after the body → ``CloseConnection`` (InvalidRequestException closes the channel).

Guarantees: ``parse_request`` never raises anything but ``CloseConnection``; ``encode_response`` of a
body built by ``build`` writes exactly the bytes kio writes for that class.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import struct
import types
import typing
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Union

from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.serial import entity_reader, entity_writer
from kio.serial.errors import SerialError

API_VERSIONS = 18
UNSUPPORTED_VERSION = 35
DEFAULT_MAX_REQUEST_BYTES = 104_857_600
"""socket.request.max.bytes (Kafka's default, 100 MiB)."""

SUPPORTED: dict[int, tuple[int, int]] = {
    0: (3, 9),  # Produce (v3: record batches v2; v9 flexible)
    1: (4, 12),  # Fetch (v4: isolation level and aborted transactions; v13 names topics by id)
    2: (1, 7),  # ListOffsets
    3: (0, 12),  # Metadata
    8: (2, 8),  # OffsetCommit
    9: (1, 7),  # OffsetFetch (v8 batches groups)
    10: (0, 4),  # FindCoordinator
    11: (0, 7),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 4),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    18: (0, 4),  # ApiVersions
    19: (2, 7),  # CreateTopics
    22: (0, 4),  # InitProducerId
    24: (0, 3),  # AddPartitionsToTxn (v4 is broker-to-broker)
    25: (0, 3),  # AddOffsetsToTxn
    26: (0, 3),  # EndTxn (v5: transaction version 2)
    28: (0, 3),  # TxnOffsetCommit
}
"""API key → (min, max) version served: what current clients negotiate (librdkafka 2.x, kafka-python
3.0, the Java client) within what kio generates."""


class CloseConnection(Exception):
    """Kafka would close this connection without an answer; the message says why."""


@dataclass(frozen=True)
class Request:
    """One parsed request: header fields and kio body."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Any


@dataclass(frozen=True)
class Unsupported:
    """An ApiVersions request of a version not served: answered with ``unsupported_api_versions``."""

    correlation_id: int
    api_version: int


# ------------------------------------------------------------------------------- requests


@cache
def request_class(api_key: int, version: int) -> type[Any]:
    return load_request_schema(api_key, version)


@cache
def response_class(api_key: int, version: int) -> type[Any]:
    return load_response_schema(api_key, version)


def frame_size(prefix: bytes, max_bytes: int) -> int:
    """The size of the frame whose 4-byte prefix is ``prefix``; CloseConnection beyond ``max_bytes``."""
    (size,) = struct.unpack(">i", prefix)
    if size < 0 or size > max_bytes:
        raise CloseConnection(f"frame of {size} bytes (socket.request.max.bytes = {max_bytes})")
    return int(size)


def parse_request(frame: bytes) -> Request | Unsupported:
    """A request frame (without its size) → the request, or ``Unsupported`` for an ApiVersions of a
    version not served; CloseConnection for everything Kafka closes the connection on."""
    if len(frame) < 8:
        raise CloseConnection(f"request of {len(frame)} bytes has no complete header")
    api_key, version, correlation_id = struct.unpack_from(">hhi", frame)
    served = SUPPORTED.get(api_key)
    if served is None:
        raise CloseConnection(f"api key {api_key} is not served")
    if not served[0] <= version <= served[1]:
        if api_key == API_VERSIONS and version > served[1]:
            return Unsupported(correlation_id, version)
        raise CloseConnection(f"api key {api_key} version {version} is not served ({served[0]}..{served[1]})")
    cls = request_class(api_key, version)
    header_cls = RequestHeaderV2 if cls.__flexible__ else RequestHeaderV1
    try:
        header, used = entity_reader(header_cls)(frame, 0)
        body, size = entity_reader(cls)(frame, used)
    except (SerialError, ValueError, UnicodeDecodeError, OverflowError) as exc:
        raise CloseConnection(f"api key {api_key} v{version}: request does not parse: {exc}") from None
    if used + size != len(frame):
        raise CloseConnection(f"api key {api_key} v{version}: {len(frame) - used - size} bytes after the request")
    return Request(api_key, version, correlation_id, getattr(header, "client_id", None), body)


# ------------------------------------------------------------------------------ responses


def encode_response(api_key: int, version: int, correlation_id: int, body: Any) -> bytes:
    """The framed response: size, header (v0, or v1 for a flexible version except ApiVersions), body."""
    buf = io.BytesIO()
    flexible = bool(type(body).__flexible__) and api_key != API_VERSIONS
    buf.write(struct.pack(">i", correlation_id))
    if flexible:
        buf.write(b"\x00")  # no tagged fields
    entity_writer(type(body))(buf, body)
    data = buf.getvalue()
    return struct.pack(">i", len(data)) + data


def unsupported_api_versions(u: Unsupported) -> bytes:
    """Kafka's answer to an ApiVersions request of a version it does not serve: v0, error
    UNSUPPORTED_VERSION, the ApiVersions range alone (ApiVersionsRequest.getErrorResponse)."""
    lo, hi = SUPPORTED[API_VERSIONS]
    body = build(
        response_class(API_VERSIONS, 0),
        {
            "error_code": UNSUPPORTED_VERSION,
            "api_keys": [{"api_key": API_VERSIONS, "min_version": lo, "max_version": hi}],
        },
    )
    return encode_response(API_VERSIONS, 0, u.correlation_id, body)


def api_versions_body(version: int) -> Any:
    """The ApiVersionsResponse listing SUPPORTED."""
    keys = [{"api_key": k, "min_version": lo, "max_version": hi} for k, (lo, hi) in sorted(SUPPORTED.items())]
    return build(response_class(API_VERSIONS, version), {"error_code": 0, "api_keys": keys, "throttle_time": 0})


# ------------------------------------------------------------------------- building bodies


@cache
def _hints(cls: type[Any]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def build(cls: type[Any], values: Mapping[str, Any]) -> Any:
    """An instance of the kio class ``cls`` from ``values``: keys naming no field of this version
    are ignored (so one dict serves every version), missing fields take their schema default, nested
    entities are given as dicts (or lists of dicts); ints become the field's kio type (error codes,
    timedeltas in ms). A missing field without a default raises ValueError naming it."""
    hints = _hints(cls)  # type: ignore[arg-type]
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in values:
            kwargs[f.name] = _convert(hints[f.name], values[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"{cls.__module__}.{cls.__name__}: no value for {f.name!r}")
    return cls(**kwargs)


def _convert(hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if value is None:
        optional = origin in (Union, types.UnionType) and type(None) in typing.get_args(hint)
        return "" if not optional and isinstance(hint, type) and issubclass(hint, str) else None
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _convert(inner[0], value)
    if origin is tuple:
        item = typing.get_args(hint)[0]
        return tuple(_convert(item, v) for v in value)
    if dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
        return build(hint, value)  # type: ignore[arg-type]
    if hint is ErrorCode:
        return ErrorCode(value)
    if isinstance(hint, type) and issubclass(hint, datetime.timedelta):
        delta = datetime.timedelta(milliseconds=value) if isinstance(value, int) else value
        parse: Any = getattr(hint, "parse", hint)
        return parse(delta)
    if hint is uuid.UUID or hint is str or hint is bool:
        return value
    if isinstance(hint, type) and issubclass(hint, int | bytes | str) and type(value) is not hint:
        return hint(value)
    return value
