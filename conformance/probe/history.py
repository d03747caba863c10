"""Probe histories (format v1): what real Kafka clients observed, one JSON line per operation event.

The format is the shared contract of the probe runner and the probe checker, specified in
docs/probe.md: line 1 is a header (:class:`HistoryHeader`), every further line one operation
event (:class:`OpEvent`) in Jepsen's style (jepsen.history: every operation is an ``invoke`` line
followed, on the same process, by exactly one completion ``ok`` | ``fail`` | ``info``).

This module guarantees:

- :class:`HistoryWriter` appends whole lines only, each validated like the reader validates it,
  written with one ``write`` call and flushed and fsynced before the call returns (unless asked not
  to), so a killed run leaves a file whose every full line is a valid event;
- :func:`open_history` / :class:`HistoryReader` read a file as a stream (memory bounded by the
  open operations, not the file's length), and every problem is a :class:`HistoryError` naming
  ``file:line``, the field and what is wrong; a history of an unknown ``version`` is refused; a
  last line without its newline that does not parse (a write cut by a kill) is dropped with a
  warning, and the history is judged up to the last full line.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from kconform.traces.inputs import jsontext

HISTORY_MARKER = "kconform-probe"
"""The ``history`` field of every header."""

VERSION = 1
"""The format version this module writes by default (a header names its own)."""

DELIVERY_VERSION = 2
"""Version 2 adds consumer delivery semantics: the ``process`` operation, a transaction's
``inputs`` and the header's ``config.delivery`` (docs/probe.md). A version-1 history holding any of
them is refused; every version-1 history is a valid version-2 one."""

SUPPORTED_VERSIONS: tuple[int, ...] = (1, DELIVERY_VERSION)
"""Versions this module reads; any other is refused (exit 2), never guessed at."""

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"
EVENT_TYPES: tuple[str, ...] = (INVOKE, OK, FAIL, INFO)
COMPLETIONS: tuple[str, ...] = (OK, FAIL, INFO)

NEMESIS = "nemesis"
"""The ``process`` of fault-injection operations."""

CLIENT_OPS: tuple[str, ...] = (
    "send",
    "txn",
    "init",
    "poll",
    "assign",
    "subscribe",
    "seek",
    "crash",
    "commit",
    "fetch-offsets",
    "process",
)
NEMESIS_OPS: tuple[str, ...] = ("kill", "pause", "resume", "restart", "partition", "heal", "delay", "reset")
ACKS: tuple[str, ...] = ("0", "1", "all")
ISOLATIONS: tuple[str, ...] = ("read_committed", "read_uncommitted")
POLL_MODES: tuple[str, ...] = ("assign", "subscribe")
TXN_ENDS: tuple[str, ...] = ("commit", "abort")
CONSUMPTION: tuple[str, ...] = ("at-least-once", "at-most-once", "exactly-once")
"""The consumer's delivery promise the run asks for (docs/probe.md: what each allows)."""
DELIVERY_MODES: tuple[str, ...] = ("commit-after", "commit-before", "auto-commit", "exactly-once")
"""How a consumer group of ``config.delivery`` commits (version 2): after processing (at-least-once),
before processing (at-most-once), automatically every auto.commit.interval.ms
(enable.auto.commit), or with its output in one transaction (consume-transform-produce, KIP-98 /
KIP-447, read_committed)."""
AUTO_COMMIT_INTERVAL_MS = 5000
"""auto.commit.interval.ms's default (ConsumerConfig)."""


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class HistoryError(ValueError):
    """A history that cannot be read or written: where (``path``, 1-based ``line``; None for the
    file as a whole), which ``field`` (dotted path into the line's JSON, or None) and what is wrong."""

    def __init__(self, path: str, line: int | None, field_name: str | None, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field_name
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        what = f"{self.field}: " if self.field else ""
        return f"{where}: {what}{self.message}"


class _Bad(Exception):
    """A field problem found while parsing one line; becomes a HistoryError with the file and line."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field = field_name
        self.message = message
        super().__init__(f"{field_name}: {message}")


# --------------------------------------------------------------------------------------------
# The header
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryConfig:
    """How consumer group ``group`` processes and commits (version 2): ``mode`` (DELIVERY_MODES),
    ``auto_commit_interval_ms`` for auto-commit, and for exactly-once the ``output`` topic its
    transactions write."""

    group: str
    mode: str
    auto_commit_interval_ms: int = AUTO_COMMIT_INTERVAL_MS
    output: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode}
        if self.mode == "auto-commit":
            out["auto_commit_interval_ms"] = self.auto_commit_interval_ms
        if self.output is not None:
            out["output"] = self.output
        return out


@dataclass(frozen=True)
class ProbeConfig:
    """The target's configuration that decides which anomalies are *allowed* (docs/probe.md).

    ``acks`` is the default of sends that do not name their own; ``unclean_leader_election``
    permits losing acknowledged writes on failover (Kafka's unclean.leader.election.enable);
    ``consumption`` is the consumer's delivery promise (at-least-once permits re-delivery);
    ``volatile_storage`` says a broker restart loses its data (e.g. Tansu's memory storage), which
    permits every loss. ``extra`` keeps any further keys (the format grows additively)."""

    acks: str = "all"
    unclean_leader_election: bool = False
    min_insync_replicas: int = 1
    consumption: str = "at-least-once"
    volatile_storage: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)
    delivery: Mapping[str, DeliveryConfig] = field(default_factory=dict)
    """Consumer groups whose processing is judged (version 2), by group name."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "acks": self.acks,
            "unclean_leader_election": self.unclean_leader_election,
            "min_insync_replicas": self.min_insync_replicas,
            "consumption": self.consumption,
            "volatile_storage": self.volatile_storage,
        }
        out.update(self.extra)
        if self.delivery:
            out["delivery"] = {g: d.to_json() for g, d in self.delivery.items()}
        return out


@dataclass(frozen=True)
class Skipped:
    """A part of the workload the runner did not run, and why (e.g. the target has no transactions)."""

    what: str
    why: str


@dataclass(frozen=True)
class HistoryHeader:
    """Line 1 of a history: what was probed, with which client, and the configuration that decides
    which anomalies are allowed. ``topics`` maps topic -> partition count; every record and
    partition key of the history must name one of these partitions."""

    seed: int
    target: str
    client: str
    client_version: str
    started: str
    topics: Mapping[str, int]
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    config: ProbeConfig = field(default_factory=ProbeConfig)
    skipped: tuple[Skipped, ...] = ()
    version: int = VERSION
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "history": HISTORY_MARKER,
            "version": self.version,
            "seed": self.seed,
            "target": self.target,
            "client": self.client,
            "client_version": self.client_version,
            "started": self.started,
            "topics": dict(self.topics),
            "capabilities": dict(self.capabilities),
            "config": self.config.to_json(),
            "skipped": [{"what": s.what, "why": s.why} for s in self.skipped],
        }
        out.update(self.extra)
        return out

    def partitions(self) -> list[str]:
        """Every partition key ("topic:partition") the header declares, in order."""
        return [f"{t}:{p}" for t, n in self.topics.items() for p in range(n)]


# --------------------------------------------------------------------------------------------
# Operation values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A client-visible error: Kafka's numeric ``code`` (None when the client gave none), its
    ``name`` (e.g. PRODUCER_FENCED) and the client's ``message``."""

    code: int | None
    name: str
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "name": self.name, "message": self.message}


@dataclass(frozen=True, slots=True)
class Record:
    """One record written or read: its partition key ``tp`` ("topic:partition"), its unique
    ``value``, its ``offset`` (None = unknown: not acknowledged, or acks=0) and, on a send's
    completion, the ``error`` the client reported for this record (its outcome is then unknown)."""

    tp: str
    value: str
    offset: int | None = None
    error: ErrorInfo | None = None

    @property
    def topic(self) -> str:
        return self.tp.rsplit(":", 1)[0]

    @property
    def partition(self) -> int:
        return int(self.tp.rsplit(":", 1)[1])

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topic": self.topic, "partition": self.partition, "value": self.value}
        if self.offset is not None or self.error is not None:
            out["offset"] = self.offset
        if self.error is not None:
            out["error"] = self.error.to_json()
        return out


@dataclass(frozen=True, slots=True)
class SendValue:
    """A non-transactional produce of ``records`` with ``acks`` "0" | "1" | "all"."""

    acks: str
    idempotent: bool
    records: tuple[Record, ...]

    def to_json(self) -> dict[str, Any]:
        return {"acks": self.acks, "idempotent": self.idempotent, "records": [r.to_json() for r in self.records]}


@dataclass(frozen=True, slots=True)
class TxnOffsets:
    """sendOffsetsToTransaction: the consumer ``group``'s offsets committed with the transaction."""

    group: str
    offsets: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "offsets": dict(self.offsets)}


@dataclass(frozen=True, slots=True)
class TxnValue:
    """A transaction of ``transactional_id``: ``records`` across partitions, optionally consumer
    ``offsets``, ending in ``end`` = "commit" | "abort"; ``inputs`` (version 2, consume-transform-
    produce) are the consumed values its records were made from."""

    transactional_id: str
    records: tuple[Record, ...]
    offsets: TxnOffsets | None
    end: str
    inputs: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "transactional_id": self.transactional_id,
            "records": [r.to_json() for r in self.records],
            "offsets": None if self.offsets is None else self.offsets.to_json(),
            "end": self.end,
        }
        if self.inputs is not None:
            out["inputs"] = list(self.inputs)
        return out


@dataclass(frozen=True, slots=True)
class ProcessValue:
    """The application of consumer ``group`` processed ``records`` (version 2): ``ok`` = their
    side effects happened, ``fail`` = they did not, ``info`` = unknown."""

    group: str
    records: tuple[Record, ...]

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "records": [r.to_json() for r in self.records]}


@dataclass(frozen=True, slots=True)
class InitValue:
    """InitProducerId of a transactional producer (its ``transactional_id``)."""

    transactional_id: str

    def to_json(self) -> dict[str, Any]:
        return {"transactional_id": self.transactional_id}


@dataclass(frozen=True, slots=True)
class PollInvoke:
    """A consumer poll's request: ``isolation`` level, consumer ``group`` (None: none), ``mode``."""

    isolation: str
    group: str | None
    mode: str

    def to_json(self) -> dict[str, Any]:
        return {"isolation": self.isolation, "group": self.group, "mode": self.mode}


@dataclass(frozen=True, slots=True)
class PollResult:
    """What a poll returned: ``records`` in the order the client delivered them and, per assigned
    partition, the consumer's ``positions`` after the poll."""

    records: tuple[Record, ...]
    positions: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"records": [r.to_json() for r in self.records], "positions": dict(self.positions)}


@dataclass(frozen=True, slots=True)
class AssignValue:
    partitions: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"partitions": list(self.partitions)}


@dataclass(frozen=True, slots=True)
class SubscribeValue:
    topics: tuple[str, ...]
    group: str

    def to_json(self) -> dict[str, Any]:
        return {"topics": list(self.topics), "group": self.group}


@dataclass(frozen=True, slots=True)
class SeekValue:
    partition: str
    offset: int

    def to_json(self) -> dict[str, Any]:
        return {"partition": self.partition, "offset": self.offset}


@dataclass(frozen=True, slots=True)
class CommitValue:
    """A consumer offset commit of ``offsets`` (partition key -> next offset to consume) for ``group``."""

    group: str
    offsets: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "offsets": dict(self.offsets)}


@dataclass(frozen=True, slots=True)
class FetchOffsetsInvoke:
    group: str
    partitions: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "partitions": list(self.partitions)}


@dataclass(frozen=True, slots=True)
class FetchOffsetsResult:
    """The committed offsets a fetch returned (None: the group has none for that partition)."""

    offsets: Mapping[str, int | None]

    def to_json(self) -> dict[str, Any]:
        return {"offsets": dict(self.offsets)}


@dataclass(frozen=True, slots=True)
class RawValue:
    """A value the checker does not interpret (nemesis operations, crash): kept as written."""

    data: Any

    def to_json(self) -> Any:
        return self.data


OpValue = (
    SendValue
    | TxnValue
    | InitValue
    | PollInvoke
    | PollResult
    | AssignValue
    | SubscribeValue
    | SeekValue
    | CommitValue
    | FetchOffsetsInvoke
    | FetchOffsetsResult
    | ProcessValue
    | RawValue
)
"""Every typed operation value (None stands for JSON null: e.g. a failed poll's value)."""


@dataclass(frozen=True, slots=True)
class OpEvent:
    """One line after the header: the ``i``-th event, of ``type`` invoke/ok/fail/info, by logical
    client ``process`` (an int; "nemesis" for faults), operation ``f``, its ``value``, wall ``time``
    (s) and monotonic ``mono_ns``, and the client's ``error``.

    A completion read by :class:`HistoryReader` carries its invocation in ``invoke`` (not part of
    the file); None on invocations."""

    i: int
    type: str
    process: int | str
    f: str
    value: OpValue | None
    time: float
    mono_ns: int
    error: ErrorInfo | None = None
    invoke: OpEvent | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "i": self.i,
            "type": self.type,
            "process": self.process,
            "f": self.f,
            "value": None if self.value is None else self.value.to_json(),
            "time": self.time,
            "mono_ns": self.mono_ns,
            "error": None if self.error is None else self.error.to_json(),
        }


# --------------------------------------------------------------------------------------------
# Parsing (shared by the reader and the writer)
# --------------------------------------------------------------------------------------------


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _req(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _Bad(f"{where}{key}", "missing")
    return obj[key]


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Bad(where, f"expected a string, got {_type_name(value)}")
    return value


def _int(value: Any, where: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(where, f"expected an integer, got {_type_name(value)}")
    if minimum is not None and value < minimum:
        raise _Bad(where, f"expected an integer >= {minimum}, got {value}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _Bad(where, f"expected true or false, got {_type_name(value)}")
    return value


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(where, f"expected an object, got {_type_name(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Bad(where, f"expected a list, got {_type_name(value)}")
    return value


def _choice(value: Any, choices: tuple[str, ...], where: str) -> str:
    if value not in choices:
        raise _Bad(where, f"expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return str(value)


class _Partitions:
    """The header's partitions: validates topic/partition pairs and "topic:partition" keys."""

    def __init__(self, topics: Mapping[str, int], version: int = VERSION) -> None:
        self.version = version
        self.topics = dict(topics)
        self.keys = {f"{t}:{p}" for t, n in topics.items() for p in range(n)}
        self._key_of: dict[tuple[Any, int], str] = {(t, p): f"{t}:{p}" for t, n in topics.items() for p in range(n)}

    def needs_delivery(self, where: str) -> None:
        """Refuse a version-2 field in a version-1 history."""
        if self.version < DELIVERY_VERSION:
            raise _Bad(
                where,
                f"consumer delivery semantics need history version {DELIVERY_VERSION} (header says {self.version})",
            )

    def pair(self, topic: Any, partition: Any, where: str) -> str:
        key = self._key_of.get((topic, partition)) if isinstance(partition, int) else None
        if key is not None and not isinstance(partition, bool):
            return key
        _str(topic, f"{where}topic")
        if topic not in self.topics:
            raise _Bad(f"{where}topic", f"topic {topic!r} is not in the header's topics")
        _int(partition, f"{where}partition", 0)
        raise _Bad(f"{where}partition", f"{topic} has {self.topics[topic]} partitions, got partition {partition}")

    def key(self, value: Any, where: str) -> str:
        if isinstance(value, str) and value in self.keys:
            return value
        _str(value, where)
        raise _Bad(where, f"{value!r} is not a 'topic:partition' key of the header's topics")

    def offset_map(self, value: Any, where: str, nullable: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in _obj(value, where).items():
            key = self.key(k, f"{where}.{k}")
            out[key] = None if nullable and v is None else _int(v, f"{where}.{k}", 0)
        return out


def _error(value: Any, where: str) -> ErrorInfo | None:
    if value is None:
        return None
    obj = _obj(value, where)
    code = obj.get("code")
    if code is not None:
        _int(code, f"{where}.code")
    name = _str(_req(obj, "name", f"{where}."), f"{where}.name")
    message = obj.get("message", "")
    if message is None:
        message = ""
    return ErrorInfo(code, name, _str(message, f"{where}.message"))


def _records(value: Any, where: str, parts: _Partitions, offsets: bool) -> tuple[Record, ...]:
    """The records of a value; the common well-formed case takes a fast path, anything else the
    checked one (which names the bad field)."""
    if type(value) is list:
        key_of = parts._key_of
        fast: list[Record] = []
        append = fast.append
        for raw in value:
            if type(raw) is not dict:
                break
            part = raw.get("partition")
            val = raw.get("value")
            off = raw.get("offset")
            if type(part) is not int or type(val) is not str or "error" in raw:
                break
            tp = key_of.get((raw.get("topic"), part))
            if tp is None:
                break
            if off is not None and (type(off) is not int or off < 0 or not offsets):
                break
            append(Record(tp, val, off))
        else:
            return tuple(fast)
    return _records_checked(value, where, parts, offsets)


def _records_checked(value: Any, where: str, parts: _Partitions, offsets: bool) -> tuple[Record, ...]:
    out: list[Record] = []
    for n, raw in enumerate(_list(value, where)):
        at = f"{where}[{n}]."
        rec = _obj(raw, at[:-1])
        tp = parts.pair(rec.get("topic"), rec.get("partition"), at)
        val = rec.get("value")
        if not isinstance(val, str):
            val = _str(_req(rec, "value", at), f"{at}value")
        offset = rec.get("offset")
        if offset is not None:
            if not offsets:
                raise _Bad(f"{at}offset", "an invocation's records have no offset yet")
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                _int(offset, f"{at}offset", 0)
        err = rec.get("error")
        out.append(Record(tp, val, offset, None if err is None else _error(err, f"{at}error")))
    return tuple(out)


def _parse_send(value: Any, where: str, parts: _Partitions, completion: bool) -> SendValue:
    obj = _obj(value, where)
    return SendValue(
        _choice(_req(obj, "acks", f"{where}."), ACKS, f"{where}.acks"),
        _bool(obj.get("idempotent", False), f"{where}.idempotent"),
        _records(_req(obj, "records", f"{where}."), f"{where}.records", parts, completion),
    )


def _parse_txn(value: Any, where: str, parts: _Partitions, completion: bool) -> TxnValue:
    obj = _obj(value, where)
    offsets = obj.get("offsets")
    txn_offsets = None
    if offsets is not None:
        o = _obj(offsets, f"{where}.offsets")
        txn_offsets = TxnOffsets(
            _str(_req(o, "group", f"{where}.offsets."), f"{where}.offsets.group"),
            parts.offset_map(_req(o, "offsets", f"{where}.offsets."), f"{where}.offsets.offsets"),
        )
    inputs_raw = obj.get("inputs")
    inputs = None
    if inputs_raw is not None:
        parts.needs_delivery(f"{where}.inputs")
        inputs = tuple(_str(v, f"{where}.inputs[{n}]") for n, v in enumerate(_list(inputs_raw, f"{where}.inputs")))
    return TxnValue(
        _str(_req(obj, "transactional_id", f"{where}."), f"{where}.transactional_id"),
        _records(_req(obj, "records", f"{where}."), f"{where}.records", parts, completion),
        txn_offsets,
        _choice(_req(obj, "end", f"{where}."), TXN_ENDS, f"{where}.end"),
        inputs,
    )


def _parse_value(f: str, type_: str, value: Any, parts: _Partitions) -> OpValue | None:
    """The typed value of an ``f`` event of ``type_``; fail/info completions may carry null."""
    where = "value"
    if f in NEMESIS_OPS or f == "crash":
        return RawValue(value)
    if value is None and type_ in (FAIL, INFO):
        return None
    completion = type_ != INVOKE
    if f == "send":
        return _parse_send(value, where, parts, completion)
    if f == "txn":
        return _parse_txn(value, where, parts, completion)
    obj = _obj(value, where)
    if f == "init":
        return InitValue(_str(_req(obj, "transactional_id", "value."), "value.transactional_id"))
    if f == "poll":
        if type_ == OK:
            positions = obj.get("positions", {})
            return PollResult(
                _records(_req(obj, "records", "value."), "value.records", parts, True),
                parts.offset_map(positions, "value.positions"),
            )
        if type_ != INVOKE and "records" in obj:
            return PollResult(_records(obj["records"], "value.records", parts, True), {})
        group = obj.get("group")
        return PollInvoke(
            _choice(_req(obj, "isolation", "value."), ISOLATIONS, "value.isolation"),
            None if group is None else _str(group, "value.group"),
            _choice(obj.get("mode", "assign"), POLL_MODES, "value.mode"),
        )
    if f == "assign":
        partitions = _list(_req(obj, "partitions", "value."), "value.partitions")
        return AssignValue(tuple(parts.key(p, f"value.partitions[{n}]") for n, p in enumerate(partitions)))
    if f == "subscribe":
        topics = _list(_req(obj, "topics", "value."), "value.topics")
        for n, t in enumerate(topics):
            if _str(t, f"value.topics[{n}]") not in parts.topics:
                raise _Bad(f"value.topics[{n}]", f"topic {t!r} is not in the header's topics")
        return SubscribeValue(tuple(topics), _str(_req(obj, "group", "value."), "value.group"))
    if f == "seek":
        return SeekValue(
            parts.key(_req(obj, "partition", "value."), "value.partition"),
            _int(_req(obj, "offset", "value."), "value.offset", 0),
        )
    if f == "commit":
        return CommitValue(
            _str(_req(obj, "group", "value."), "value.group"),
            parts.offset_map(_req(obj, "offsets", "value."), "value.offsets"),
        )
    if f == "process":
        parts.needs_delivery("f")
        return ProcessValue(
            _str(_req(obj, "group", "value."), "value.group"),
            _records(_req(obj, "records", "value."), "value.records", parts, True),
        )
    if f == "fetch-offsets":
        if type_ == OK:
            return FetchOffsetsResult(parts.offset_map(_req(obj, "offsets", "value."), "value.offsets", nullable=True))
        partitions = _list(_req(obj, "partitions", "value."), "value.partitions")
        return FetchOffsetsInvoke(
            _str(_req(obj, "group", "value."), "value.group"),
            tuple(parts.key(p, f"value.partitions[{n}]") for n, p in enumerate(partitions)),
        )
    raise AssertionError(f"unhandled op {f!r}")  # _parse_event checked f


def _parse_header(obj: Any) -> HistoryHeader:
    head = _obj(obj, "header")
    marker = head.get("history")
    if marker != HISTORY_MARKER:
        raise _Bad("history", f"not a kconform probe history (expected {HISTORY_MARKER!r}, got {marker!r})")
    version = _int(_req(head, "version", ""), "version")
    if version not in SUPPORTED_VERSIONS:
        known = ", ".join(map(str, SUPPORTED_VERSIONS))
        raise _Bad("version", f"unsupported history version {version} (this kconform reads version {known})")
    topics_raw = _obj(_req(head, "topics", ""), "topics")
    if not topics_raw:
        raise _Bad("topics", "no topics: a history needs at least one partition")
    topics: dict[str, int] = {}
    for t, n in topics_raw.items():
        if ":" in t or not t:
            raise _Bad(f"topics.{t}", "a topic name is non-empty and has no ':'")
        topics[t] = _int(n, f"topics.{t}", 1)
    config_raw = _obj(head.get("config", {}), "config")
    known_config: tuple[str, ...] = (
        "acks",
        "unclean_leader_election",
        "min_insync_replicas",
        "consumption",
        "volatile_storage",
    )
    delivery: dict[str, DeliveryConfig] = {}
    if version >= DELIVERY_VERSION:
        known_config += ("delivery",)
        for g, d in _obj(config_raw.get("delivery", {}), "config.delivery").items():
            do = _obj(d, f"config.delivery.{g}")
            mode = _choice(_req(do, "mode", f"config.delivery.{g}."), DELIVERY_MODES, f"config.delivery.{g}.mode")
            output = do.get("output")
            if mode == "exactly-once" and output not in topics_raw:
                raise _Bad(
                    f"config.delivery.{g}.output",
                    f"exactly-once needs its output topic (one of the header's topics), got {output!r}",
                )
            delivery[g] = DeliveryConfig(
                g,
                mode,
                _int(
                    do.get("auto_commit_interval_ms", AUTO_COMMIT_INTERVAL_MS),
                    f"config.delivery.{g}.auto_commit_interval_ms",
                    1,
                ),
                None if output is None else _str(output, f"config.delivery.{g}.output"),
            )
    config = ProbeConfig(
        acks=_choice(config_raw.get("acks", "all"), ACKS, "config.acks"),
        unclean_leader_election=_bool(
            config_raw.get("unclean_leader_election", False), "config.unclean_leader_election"
        ),
        min_insync_replicas=_int(config_raw.get("min_insync_replicas", 1), "config.min_insync_replicas", 1),
        consumption=_choice(config_raw.get("consumption", "at-least-once"), CONSUMPTION, "config.consumption"),
        volatile_storage=_bool(config_raw.get("volatile_storage", False), "config.volatile_storage"),
        extra={k: v for k, v in config_raw.items() if k not in known_config},
        delivery=delivery,
    )
    skipped: list[Skipped] = []
    for n, s in enumerate(_list(head.get("skipped", []), "skipped")):
        so = _obj(s, f"skipped[{n}]")
        skipped.append(
            Skipped(
                _str(_req(so, "what", f"skipped[{n}]."), f"skipped[{n}].what"),
                _str(_req(so, "why", f"skipped[{n}]."), f"skipped[{n}].why"),
            )
        )
    header_keys = ("history", "version", "seed", "target", "client", "client_version", "started", "topics",
                   "capabilities", "config", "skipped")  # fmt: skip
    return HistoryHeader(
        seed=_int(_req(head, "seed", ""), "seed"),
        target=_str(_req(head, "target", ""), "target"),
        client=_str(_req(head, "client", ""), "client"),
        client_version=_str(_req(head, "client_version", ""), "client_version"),
        started=_str(_req(head, "started", ""), "started"),
        topics=topics,
        capabilities=_obj(head.get("capabilities", {}), "capabilities"),
        config=config,
        skipped=tuple(skipped),
        version=version,
        extra={k: v for k, v in head.items() if k not in header_keys},
    )


_EVENT_TYPE_SET = frozenset(EVENT_TYPES)
_CLIENT_OP_SET = frozenset(CLIENT_OPS)


def _same_records(invoked: OpValue | None, completed: OpValue | None) -> None:
    """A send's or transaction's completion lists the invocation's records, in order."""
    a = getattr(invoked, "records", ())
    b = getattr(completed, "records", ())
    if len(a) != len(b):
        raise _Bad("value.records", f"the completion lists {len(b)} records, the invocation {len(a)}")
    for n, (x, y) in enumerate(zip(a, b, strict=True)):
        if x.tp != y.tp or x.value != y.value:
            raise _Bad(
                f"value.records[{n}]",
                f"{y.tp} {y.value!r} differs from the invocation's record {x.tp} {x.value!r}",
            )


class _Sequencer:
    """The history's structure: ``i`` counts lines from 1, a process alternates invoke and
    completion of the same ``f``, and a crashed process invokes nothing more."""

    def __init__(self, parts: _Partitions) -> None:
        self.parts = parts
        self.next_i = 1
        self.open: dict[int | str, OpEvent] = {}
        self.crashed: set[int | str] = set()

    def event(self, raw: Any) -> OpEvent:
        obj = _obj(raw, "event")
        i = obj.get("i")
        type_ = obj.get("type")
        process = obj.get("process")
        f = obj.get("f")
        t = obj.get("time")
        mono_ns = obj.get("mono_ns")
        if not (  # the common well-formed case in one test; otherwise the checks below name the field
            i == self.next_i
            and type(i) is int
            and type_ in _EVENT_TYPE_SET
            and type(process) is int
            and process >= 0
            and f in _CLIENT_OP_SET
            and type(t) is float
            and math.isfinite(t)
            and type(mono_ns) is int
        ):
            i = _int(_req(obj, "i", ""), "i")
            if i != self.next_i:
                raise _Bad("i", f"expected {self.next_i} (one more than the previous line's), got {i}")
            type_ = _choice(_req(obj, "type", ""), EVENT_TYPES, "type")
            process = _req(obj, "process", "")
            if process != NEMESIS:
                _int(process, "process", 0)
            f = _req(obj, "f", "")
            _choice(f, NEMESIS_OPS if process == NEMESIS else CLIENT_OPS, "f")
            t = _req(obj, "time", "")
            if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
                raise _Bad("time", f"expected a number of seconds, got {t!r}")
            mono_ns = _int(_req(obj, "mono_ns", ""), "mono_ns")
        err = obj.get("error")
        error = None if err is None else _error(err, "error")
        value = _parse_value(f, type_, _req(obj, "value", ""), self.parts)
        invoke = self.open.get(process)
        if type_ == INVOKE:
            if invoke is not None:
                raise _Bad("type", f"process {process} invokes while its operation of line i={invoke.i} is open")
            if process in self.crashed:
                raise _Bad("process", f"process {process} crashed earlier; a crashed client's ops use a new process")
            event = OpEvent(i, type_, process, f, value, float(t), mono_ns, error)
            self.open[process] = event
        else:
            if invoke is None:
                raise _Bad("type", f"a {type_} completion of process {process}, which has no open invocation")
            if invoke.f != f:
                raise _Bad(
                    "f", f"completes {f!r} but process {process}'s open invocation (i={invoke.i}) is {invoke.f!r}"
                )
            if f in ("send", "txn") and value is not None:
                _same_records(invoke.value, value)
            del self.open[process]
            if f == "crash":
                self.crashed.add(process)
            event = OpEvent(i, type_, process, f, value, float(t), mono_ns, error, invoke)
        self.next_i = i + 1
        return event


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


class HistoryReader:
    """A history opened for streaming: ``header`` is read on open; iterate ``events()`` once.

    ``warnings`` collects what was tolerated (a truncated last line); ``lines`` is the number of
    full lines judged so far (header included); ``pending()`` after the events are exhausted lists
    the invocations that never completed (a killed run: their outcome is unknown, i.e. info)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.warnings: list[str] = []
        self.lines = 0
        try:
            self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 - closed by close() / events()
        except OSError as e:
            raise HistoryError(self.path, None, None, f"cannot read: {e.strerror or e}") from None
        try:
            first = self._file.readline()
            if not first:
                raise HistoryError(self.path, None, None, "empty file: no header line")
            obj = self._decode(first, 1, last_line_ok=False)
            try:
                self.header = _parse_header(obj)
            except _Bad as e:
                raise HistoryError(self.path, 1, e.field, e.message) from None
            self.lines = 1
            self._sequencer = _Sequencer(_Partitions(self.header.topics, self.header.version))
            self._consumed = False
        except BaseException:
            self._file.close()
            raise

    def _decode(self, raw: bytes, line: int, last_line_ok: bool) -> Any:
        """The line's JSON; HistoryError if it is not JSON (None for a tolerated truncated last line)."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise HistoryError(self.path, line, None, f"not UTF-8 (byte {e.start})") from None
        try:
            return jsontext.loads(text)
        except jsontext.JsonTextError as e:
            if e.column is None:  # JSON, but not as kconform accepts it anywhere: duplicate keys, depth, ...
                raise HistoryError(self.path, line, None, f"not JSON kconform accepts: {e}") from None
            if not raw.endswith(b"\n"):
                if last_line_ok:
                    return None
                raise HistoryError(self.path, line, None, f"truncated line (no newline, not JSON: {e})") from None
            raise HistoryError(self.path, line, None, f"not JSON: {e}") from None

    def events(self) -> Iterator[OpEvent]:
        """The operation events in file order, validated; stops at a truncated last line (warning)."""
        if self._consumed:
            raise RuntimeError("a HistoryReader's events can be read once")
        self._consumed = True
        line = 1
        sequencer = self._sequencer
        path = self.path
        try:
            for raw in self._file:
                line += 1
                obj = self._decode(raw, line, last_line_ok=True)
                if obj is None:
                    self.warnings.append(
                        f"{path}:{line}: truncated last line (no newline, not JSON) ignored; "
                        f"judged up to line {line - 1}"
                    )
                    break
                try:
                    event = sequencer.event(obj)
                except _Bad as e:
                    raise HistoryError(path, line, e.field, e.message) from None
                self.lines = line
                yield event
        finally:
            self._file.close()

    def pending(self) -> list[OpEvent]:
        """Invocations still open at the end (a killed run): their outcome is unknown (info)."""
        return sorted(self._sequencer.open.values(), key=lambda e: e.i)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> HistoryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_history(path: str | os.PathLike[str]) -> HistoryReader:
    """Open ``path`` for streaming; raises HistoryError (file:line, field) on a bad header."""
    return HistoryReader(path)


def read_history(path: str | os.PathLike[str]) -> tuple[HistoryHeader, list[OpEvent], list[str]]:
    """The whole history in memory (for small histories and tests): header, events, warnings."""
    with open_history(path) as reader:
        events = list(reader.events())
        return reader.header, events, reader.warnings


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _json_of(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    return to_json() if callable(to_json) else value


class HistoryWriter:
    """Appends a history to ``path`` (created or truncated), one validated whole line at a time. Each line
    is written with a single ``os.write`` and, with ``durable`` (the default), fsynced before the call
    returns: a run killed at any moment leaves a prefix of whole lines (at worst a torn last line, which
    the reader drops with a warning). ``durable=False`` (generated histories) buffers whole lines in 1
    MiB chunks: a kill loses the buffer, the file stays a prefix. Values may be the typed values of this
    module or plain JSON objects in the documented shape; either is checked exactly as the reader checks
    it, and a bad one raises HistoryError (with ``line`` = the line it would have been) and writes
    nothing (``validate=False`` skips that check, for trusted generators of big histories). ``i`` is
    assigned by the writer; ``time`` / ``mono_ns`` default to now. Thread-safe: one lock orders the
    lines."""

    def __init__(
        self, path: str | os.PathLike[str], header: HistoryHeader, *, durable: bool = True, validate: bool = True
    ) -> None:
        self.path = os.fspath(path)
        self.header = header
        self.durable = durable
        self.validate = validate
        self._lock = threading.Lock()
        try:
            parsed = _parse_header(json.loads(json.dumps(header.to_json())))
        except _Bad as e:
            raise HistoryError(self.path, 1, e.field, e.message) from None
        self._sequencer = _Sequencer(_Partitions(parsed.topics, parsed.version))
        self._line = 0
        self._buffer: list[bytes] = []
        self._buffered = 0
        try:
            self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        except OSError as e:
            raise HistoryError(self.path, None, None, f"cannot write: {e.strerror or e}") from None
        self._append(header.to_json())

    def _append(self, obj: Any) -> None:
        if self._fd is None:
            raise HistoryError(self.path, None, None, "the writer is closed")
        data = (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        self._line += 1
        if not self.durable:  # whole lines still, but written in 1 MiB chunks
            self._buffer.append(data)
            self._buffered += len(data)
            if self._buffered >= 1 << 20:
                self._flush()
            return
        self._write_all(data)
        os.fsync(self._fd)

    def _write_all(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def _flush(self) -> None:
        if self._buffer:
            self._write_all(b"".join(self._buffer))
            self._buffer.clear()
            self._buffered = 0

    def write(
        self,
        type_: str,
        process: int | str,
        f: str,
        value: Any,
        error: ErrorInfo | Mapping[str, Any] | None = None,
        *,
        wall_s: float | None = None,
        mono_ns: int | None = None,
    ) -> OpEvent:
        """Append one event (``type_`` invoke/ok/fail/info) and return it as the reader would."""
        with self._lock:
            obj = {
                "i": self._sequencer.next_i,
                "type": type_,
                "process": process,
                "f": f,
                "value": _json_of(value),
                "time": time.time() if wall_s is None else wall_s,
                "mono_ns": time.monotonic_ns() if mono_ns is None else mono_ns,
                "error": _json_of(error),
            }
            if not self.validate:  # trusted writers (the simulation's big histories): no re-parse
                self._sequencer.next_i += 1
                self._append(obj)
                return OpEvent(obj["i"], type_, process, f, None, obj["time"], obj["mono_ns"])
            try:
                event = self._sequencer.event(json.loads(json.dumps(obj)))
            except _Bad as e:
                raise HistoryError(self.path, self._line + 1, e.field, e.message) from None
            except (TypeError, ValueError) as e:
                raise HistoryError(self.path, self._line + 1, "value", f"not JSON-serialisable: {e}") from None
            self._append(obj)
            return event

    def invoke(self, process: int | str, f: str, value: Any, **kw: Any) -> OpEvent:
        """Append an invocation."""
        return self.write(INVOKE, process, f, value, **kw)

    def complete(
        self,
        process: int | str,
        type_: str,
        f: str,
        value: Any,
        error: ErrorInfo | Mapping[str, Any] | None = None,
        **kw: Any,
    ) -> OpEvent:
        """Append the completion (``type_`` ok/fail/info) of ``process``'s open invocation."""
        if type_ not in COMPLETIONS:
            raise HistoryError(self.path, self._line + 1, "type", f"a completion is ok, fail or info, not {type_!r}")
        return self.write(type_, process, f, value, error, **kw)

    def open_operations(self) -> list[OpEvent]:
        """Invocations written and not yet completed."""
        with self._lock:
            return sorted(self._sequencer.open.values(), key=lambda e: e.i)

    def close(self) -> None:
        """Close the file (idempotent). Open invocations stay open: the checker reads them as info."""
        with self._lock:
            if self._fd is not None:
                if not self.durable:
                    self._flush()
                    os.fsync(self._fd)
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
