"""Client requests that arrive from outside the simulation (``kconform serve``: real Kafka clients on
the wire), as one operation each: ``WireRequest(conn, broker, request)``.

``request`` is the JSON text of one client request payload of this slice (impl.txn.messages), e.g.
``{"type": "TxnProduceRequest", "partition": "t-0", ...}``. The cluster sends it from the wire
connection's network address (``wire_node(conn)``) to ``broker``, delivers every message in flight
(a healthy network: verifications and markers run to completion) and keeps the answer addressed to
the connection in ``WireMailbox``, from where the server encodes it for the real client.

Guarantees: ``payload_from_json(payload_to_json(p)) == p`` for every payload in REQUEST_TYPES; any
other text raises ValueError naming the type or field at fault (a damaged trace file is refused, not
half-run); the answer to a request is kept by the request's message id until taken.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from kconform.traces.events import TopicOffset

from ..messages import Message, Payload
from .messages import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    EndTxnRequest,
    InitPidRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TxnFetchRequest,
    TxnOffsetCommitRequest,
    TxnProduceRequest,
)

WIRE_NODE_BASE = -100
"""Wire connection ``conn`` has network address ``WIRE_NODE_BASE - conn`` (below every simulated
client's address)."""

REQUEST_TYPES: dict[str, type[Payload]] = {
    cls.__name__: cls
    for cls in (
        InitPidRequest,
        AddPartitionsRequest,
        AddOffsetsRequest,
        EndTxnRequest,
        TxnProduceRequest,
        TxnOffsetCommitRequest,
        OffsetCommitRequest,
        OffsetFetchRequest,
        TxnFetchRequest,
    )
}
"""The client requests a wire connection may send, by payload class name."""


def wire_node(conn: int) -> int:
    """Network address of wire connection ``conn`` (conn >= 0)."""
    return WIRE_NODE_BASE - conn


def is_wire_node(address: int) -> bool:
    return address <= WIRE_NODE_BASE


def payload_to_json(payload: Payload) -> str:
    """The request as compact JSON text with its class name under ``type``."""
    body: dict[str, Any] = {"type": type(payload).__name__}
    for f in dataclasses.fields(payload):  # type: ignore[arg-type]
        value = getattr(payload, f.name)
        if f.name == "offsets":
            value = [[o.partition, o.offset] for o in value]
        elif isinstance(value, tuple):
            value = list(value)
        body[f.name] = value
    return json.dumps(body, separators=(",", ":"), sort_keys=True)


def payload_from_json(text: str) -> Payload:
    """Decode ``payload_to_json``'s text; ValueError naming what is wrong."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"wire request is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ValueError("wire request must be a JSON object")
    cls = REQUEST_TYPES.get(body.get("type", ""))
    if cls is None:
        raise ValueError(f"unknown wire request type {body.get('type')!r} (known: {', '.join(sorted(REQUEST_TYPES))})")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in body:
            raise ValueError(f"{cls.__name__}: missing field {f.name!r}")
        kwargs[f.name] = _field(cls.__name__, f.name, str(f.type), body[f.name])
    extra = set(body) - {"type"} - set(kwargs)
    if extra:
        raise ValueError(f"{cls.__name__}: unknown field(s) {sorted(extra)}")
    return cls(**kwargs)


def _field(owner: str, name: str, typ: str, value: Any) -> Any:
    where = f"{owner}.{name}"
    if typ == "str":
        if not isinstance(value, str):
            raise ValueError(f"{where} must be a string, got {value!r}")
        return value
    if typ == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{where} must be true or false, got {value!r}")
        return value
    if typ == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where} must be an integer, got {value!r}")
        return value
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list, got {value!r}")
    if typ == "tuple[str, ...]" and all(isinstance(v, str) for v in value):
        return tuple(value)
    if typ == "tuple[int, ...]" and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    if typ == "tuple[TopicOffset, ...]" and all(
        isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], int) for v in value
    ):
        return tuple(TopicOffset(p, o) for p, o in value)
    raise ValueError(f"{where}: ill-typed list {value!r} (a {typ})")


class WireMailbox:
    """Every wire connection's address: keeps each answer by the id of the request it answers."""

    def __init__(self) -> None:
        self.answers: dict[int, Payload] = {}

    def receive(self, msg: Message) -> None:
        req = getattr(msg.payload, "req", None)
        if isinstance(req, int):
            self.answers[req] = msg.payload

    def take(self, request_msg: int) -> Payload | None:
        """The answer to request message ``request_msg`` (None: none arrived), removed."""
        return self.answers.pop(request_msg, None)
