"""DumpLogSegments (``kafka-dump-log.sh``, ``kafka-run-class.sh kafka.tools.DumpLogSegments``) output,
Kafka 0.10 to 4.x (kafka.tools.DumpLogSegments at each release tag).

Formats it reads (detected per line, never assumed from a version):

- magic-2 batch lines ``baseOffset: B lastOffset: L [count: C] baseSequence: ... producerId: ...
  producerEpoch: ... partitionLeaderEpoch: ... isTransactional: ... [isControl: ...]
  [deleteHorizonMs: ...] position: ...`` (``count`` since 2.0, ``isControl`` since 2.4; before
  that a transactional batch with baseSequence -1 is a control batch, since a transactional data
  batch always has a sequence, KIP-98);
- magic-0/1 batch lines ``offset: N position: P ...``;
- 2.4+ record lines ``| offset: N CreateTime: ... sequence: S headerKeys: [...] [endTxnMarker:
  COMMIT|ABORT coordinatorEpoch: E] [key: ... payload: ...]``;
- 0.11 to 2.3 --deep-iteration record lines without batch lines (``offset: N position: P ...
  magic: 2 ... producerId: P producerEpoch: E sequence: S isTransactional: B ...``): each record is
  turned into a one-record batch so that the same checks apply;
- --transaction-log-decoder payloads (``transactionalId=`` / ``transaction_metadata::transactionalId=``
  with ``producerId:P,producerEpoch:E,state=S,...``, and JSON keys/values), --offsets-decoder
  offset commits (``offset_commit::group=G,partition=TP ... offset=N`` and JSON);
- ``.txnindex`` dumps (``version: V producerId: P firstOffset: F lastOffset: L lastStableOffset: S``)
  and producer-state ``.snapshot`` dumps (``producerId: P producerEpoch: E coordinatorEpoch: C ...``);
- ``.index`` and ``.timeindex`` dumps (``offset: N position: P``, ``timestamp: T offset: N``: no fact
  the checks use);
- --cluster-metadata-decoder payloads of ``__cluster_metadata`` segments and snapshots
  (kconform.traces.logs.kraft), including the 2.8 form with the payload on a line of its own, and
  the control records of the metadata log (``LeaderChange``, ``SnapshotHeader``, ``KRaftVersion``,
  ``controlType: ...``): a control record that is not a transaction marker closes no transaction.

Each ``Dumping FILE`` line starts a new segment; any other line inside a dump (``...`` elisions,
shell prompts) breaks the chain, so that offsets and sequences are never compared across text
someone removed (``Obs.stream`` changes).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from kconform.model.txn_graph import STATES
from kconform.traces.logs.checks.base import MAX_KEYS, Table
from kconform.traces.logs.kraft import MetadataParseError, is_metadata_payload, parse_payload
from kconform.traces.logs.observations import (
    BATCH,
    OFFSET_COMMIT,
    PRODUCER_SNAPSHOT,
    RECORD,
    TXN_INDEX,
    TXN_LOG,
    Obs,
    cut,
)

_KV = re.compile(r"(?<!\w)(\w+): (\S+)")  # the look-behind keeps it linear on long words
_PARTITION_DIR = re.compile(r"([^/\\]+-\d+)(?:\.[0-9a-f]{32}-(?:delete|future|stray))?[/\\][^/\\]+$")
_TIMESTAMP_KEYS = ("CreateTime", "LogAppendTime")


class DumpParseError(ValueError):
    """A dump line that is recognized but does not parse (the message says which field)."""


def _int(kv: dict[str, str], key: str, required: bool = False) -> int | None:
    raw = kv.get(key)
    if raw is None:
        if required:
            raise DumpParseError(f"missing {key}")
        return None
    try:
        return int(raw)
    except ValueError:
        raise DumpParseError(f"{key}: not an integer: {raw[:40]!r}") from None


def _opt_int(kv: dict[str, str], key: str) -> int | None:
    """An optional offset as Scala / Java print it: ``None``, ``Some(5)``, ``Optional[5]``,
    ``OptionalLong.empty``, ``OptionalLong[5]`` or a plain number (-1 = none)."""
    raw = kv.get(key)
    if raw is None:
        return None
    m = re.search(r"-?\d+", raw)
    if m is None:
        if raw.startswith(("None", "Optional")):
            return None
        raise DumpParseError(f"{key}: not an optional offset: {raw[:40]!r}")
    return int(m.group(0))


def _bool(kv: dict[str, str], key: str) -> bool | None:
    raw = kv.get(key)
    if raw is None:
        return None
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    raise DumpParseError(f"{key}: not a boolean: {raw[:40]!r}")


def _create_time(kv: dict[str, str]) -> int | None:
    for key in _TIMESTAMP_KEYS:
        if key in kv:
            return _int(kv, key)
    return None


def partition_of_path(path: str) -> str | None:
    """``topic-N`` from a segment path such as ``/data/foo-0/00000000000000000000.log``."""
    m = _PARTITION_DIR.search(path.strip())
    return m.group(1) if m else None


@dataclass
class _Segment:
    name: str
    partition: str | None
    suffix: str
    chunk: int = 0


_STATE_IDS = dict(enumerate(STATES))


class DumpParser:
    """Turns the lines of one file that are DumpLogSegments output into observations.

    :meth:`feed` returns None for a line that is not dump output (the caller tries other formats),
    else the observations of the line (possibly none). A held control batch waits for its marker
    record, so :meth:`flush` must be called at the end of the file.
    """

    def __init__(self, file: str) -> None:
        self.file = file
        self.segment: _Segment | None = None
        self._count = 0
        self._held: Obs | None = None
        self._saw_batch_line = False
        self._topics: dict[str, str] = Table(MAX_KEYS)  # KRaft topic id -> name (TOPIC_RECORDs of this dump)

    # ---- public -------------------------------------------------------------------------------

    def feed(self, number: int, text: str) -> list[Obs] | None:
        line = text.strip()
        if not line:
            return None
        first = line[:12]
        if first.startswith("Dumping "):
            out = self.flush()
            self._start_segment(line[len("Dumping ") :].strip())
            return out
        if first.startswith(("baseOffset: ", "| offset: ", "offset: ")) or first.startswith("|  offset: "):
            return self._data_line(number, text, line)
        if line.startswith(("Starting offset: ", "Log starting offset: ", "Snapshot end offset: ")) or (
            line == "KRaft bootstrap snapshot"
        ):
            return self.flush()
        if line.startswith("payload: ") and is_metadata_payload(line[len("payload: ") :]):
            return self._metadata(number, text, None, line[len("payload: ") :])
        if line.startswith("version: ") and " producerId: " in line and " firstOffset: " in line:
            return [*self.flush(), self._txn_index(number, text, line)]
        if line.startswith("producerId: ") and " producerEpoch: " in line and "coordinatorEpoch: " in line:
            return [*self.flush(), self._snapshot(number, text, line)]
        if line.startswith("timestamp: ") and " offset: " in line and len(line) < 80:
            return self.flush()  # a .timeindex entry: carries no fact the checks use
        if line.startswith("Found ") and " invalid bytes at the end of " in line:
            return self.flush()
        if self.segment is not None:
            self.break_chain()
        return None

    def break_chain(self) -> None:
        """Text that is not dump output interrupted the dump: later lines are a new chain."""
        if self.segment is not None:
            self.segment.chunk += 1

    def flush(self) -> list[Obs]:
        """The held batch, if any (call at a segment's or the file's end)."""
        held, self._held = self._held, None
        return [held] if held is not None else []

    # ---- segments -----------------------------------------------------------------------------

    def _start_segment(self, path: str) -> None:
        self._count += 1
        name = path.rsplit("/", 1)[-1]
        suffix = name.rsplit(".", 1)[-1] if "." in name else ""
        self.segment = _Segment(name=path, partition=partition_of_path(path), suffix=suffix)
        self._saw_batch_line = False
        self._topics = Table(MAX_KEYS)

    def _obs(self, kind: str, number: int, text: str, **fields: Any) -> Obs:
        """An observation of line ``number`` (``text``) of this file, in its stream and partition."""
        return Obs(
            kind=kind,
            file=self.file,
            line=number,
            text=cut(text),
            stream=self._stream(),
            partition=self._partition(),
            **fields,
        )

    def _stream(self) -> str:
        seg = self.segment
        if seg is None:
            self._start_segment("")
            seg = self.segment
            assert seg is not None
        return f"{self.file}#dump{self._count}.{seg.chunk}"

    def _partition(self) -> str | None:
        return self.segment.partition if self.segment is not None else None

    # ---- data lines ---------------------------------------------------------------------------

    def _data_line(self, number: int, text: str, line: str) -> list[Obs]:
        is_record = line.startswith("|")
        body = line.lstrip("| ").strip() if is_record else line
        head, key, payload = _split_key_payload(body)
        kv = dict(_KV.findall(head))
        try:
            if line.startswith("baseOffset: "):
                return self._batch_v2(number, text, kv)
            if is_record:
                return self._record(number, text, kv, key, payload)
            # "offset: N ...": a magic 0/1 batch, an old (0.11-2.3) deep record, or an index entry
            if "position" in kv and len(kv) == 2:
                return self.flush()  # an .index entry
            if "producerId" in kv or "sequence" in kv or "endTxnMarker" in kv:
                return self._old_deep_record(number, text, kv, key, payload)
            return self._batch_v01(number, text, kv, key, payload)
        except DumpParseError as e:
            raise DumpParseError(f"DumpLogSegments line: {e}") from None

    def _batch_v2(self, number: int, text: str, kv: dict[str, str]) -> list[Obs]:
        out = self.flush()
        self._saw_batch_line = True
        base = _int(kv, "baseOffset", required=True)
        last = _int(kv, "lastOffset", required=True)
        transactional = _bool(kv, "isTransactional")
        control = _bool(kv, "isControl")
        base_seq = _int(kv, "baseSequence")
        if control is None and transactional and base_seq == -1:
            control = True  # before 2.4 the line has no isControl (see module docstring)
        count = _int(kv, "count")
        horizon = kv.get("deleteHorizonMs")
        compacted = (count is not None and base is not None and last is not None and count < last - base + 1) or (
            horizon is not None and horizon not in ("OptionalLong.empty", "-1")
        )
        obs = self._obs(
            BATCH,
            number,
            text,
            offset=base,
            last_offset=last,
            count=count,
            pid=_int(kv, "producerId"),
            producer_epoch=_int(kv, "producerEpoch"),
            base_seq=base_seq,
            last_seq=_int(kv, "lastSequence"),
            leader_epoch=_int(kv, "partitionLeaderEpoch"),
            transactional=transactional,
            control=bool(control),
            create_time=_create_time(kv),
            compacted=compacted,
        )
        if obs.control:
            self._held = obs  # its marker type arrives with the record line, if --deep-iteration
            return out
        return [*out, obs]

    def _batch_v01(self, number: int, text: str, kv: dict[str, str], key: str | None, payload: str | None) -> list[Obs]:
        out = self.flush()
        offset = _int(kv, "offset", required=True)
        obs = self._obs(
            BATCH,
            number,
            text,
            offset=offset,
            last_offset=offset,
            create_time=_create_time(kv),
            transactional=False,
            control=False,
        )
        return [*out, obs, *self._decoded(number, text, offset, key, payload)]

    def _old_deep_record(
        self, number: int, text: str, kv: dict[str, str], key: str | None, payload: str | None
    ) -> list[Obs]:
        out = self.flush()
        offset = _int(kv, "offset", required=True)
        seq = _int(kv, "sequence")
        marker = kv.get("endTxnMarker")
        obs = self._obs(
            BATCH,
            number,
            text,
            offset=offset,
            last_offset=offset,
            count=1,
            pid=_int(kv, "producerId"),
            producer_epoch=_int(kv, "producerEpoch"),
            base_seq=seq,
            last_seq=seq,
            transactional=_bool(kv, "isTransactional"),
            control=marker is not None or "controlType" in kv,
            marker=marker,
            coordinator_epoch=_int(kv, "coordinatorEpoch"),
            create_time=_create_time(kv),
        )
        return [*out, obs, *self._decoded(number, text, offset, key, payload)]

    def _record(self, number: int, text: str, kv: dict[str, str], key: str | None, payload: str | None) -> list[Obs]:
        offset = _int(kv, "offset", required=True)
        marker = kv.get("endTxnMarker")
        out: list[Obs] = []
        if marker is not None and marker not in ("COMMIT", "ABORT"):
            marker = None  # another control type (a KRaft LEADER_CHANGE): closes no transaction
            out = self.flush()
        elif marker is not None:
            held = self._held
            if held is not None:
                held.marker = marker
                held.coordinator_epoch = _int(kv, "coordinatorEpoch")
            out = self.flush()
        elif self._held is not None and "controlType" in kv:
            out = self.flush()
        rec = self._obs(
            RECORD,
            number,
            text,
            offset=offset,
            base_seq=_int(kv, "sequence"),
            marker=marker,
            coordinator_epoch=_int(kv, "coordinatorEpoch") if marker is not None else None,
            create_time=_create_time(kv),
        )
        return [*out, rec, *self._decoded(number, text, offset, key, payload)]

    # ---- decoded keys and payloads --------------------------------------------------------------

    def _decoded(self, number: int, text: str, offset: int | None, key: str | None, payload: str | None) -> list[Obs]:
        if key is None:
            if payload is not None and is_metadata_payload(payload.strip()):
                return self._metadata(number, text, offset, payload.strip())
            return []
        k = key.strip()
        if "transactionalId=" in k and (k.startswith(("transaction_metadata::", "transactionalId="))):
            txn_id = k.split("transactionalId=", 1)[1]
            return [self._txn_log(number, text, offset, txn_id, payload)]
        if k.startswith("{") and '"transactionalId"' in k:
            try:
                txn_id = str(json.loads(k)["data"]["transactionalId"])
            except (ValueError, KeyError, TypeError):
                raise DumpParseError(f"transaction log key is not the JSON expected: {k[:60]!r}") from None
            return [self._txn_log(number, text, offset, txn_id, payload)]
        if k.startswith("offset_commit::") or (k.startswith("{") and '"group"' in k and '"partition"' in k):
            return [self._offset_commit(number, text, offset, k, payload)]
        return []

    def _txn_log(self, number: int, text: str, offset: int | None, txn_id: str, payload: str | None) -> Obs:
        obs = self._obs(
            TXN_LOG,
            number,
            text,
            offset=offset,
            txn_id=txn_id,
        )
        p = (payload or "").strip()
        if p in ("<DELETE>", "NULL", "null", ""):
            obs.state = ""
            return obs
        if p.startswith("{"):
            try:
                data = json.loads(p)["data"]
                obs.pid = int(data["producerId"])
                obs.producer_epoch = int(data["producerEpoch"])
                status = int(data["transactionStatus"])
            except (ValueError, KeyError, TypeError):
                raise DumpParseError(f"transaction log payload is not the JSON expected: {p[:60]!r}") from None
            if status not in _STATE_IDS:
                raise DumpParseError(f"transactionStatus {status} is not a TransactionState id")
            obs.state = _STATE_IDS[status]
            return obs
        m = re.match(r"producerId:(-?\d+),producerEpoch:(-?\d+),state=(\w+)", p)
        if not m:
            raise DumpParseError(
                f"transaction log payload: expected producerId:P,producerEpoch:E,state=S, got {p[:60]!r}"
            )
        obs.pid, obs.producer_epoch, obs.state = int(m.group(1)), int(m.group(2)), m.group(3)
        if obs.state not in STATES:
            raise DumpParseError(f"transaction state {obs.state!r} is not one of Kafka's TransactionState names")
        return obs

    def _offset_commit(self, number: int, text: str, offset: int | None, key: str, payload: str | None) -> Obs:
        obs = self._obs(
            OFFSET_COMMIT,
            number,
            text,
            offset=offset,
        )
        p = (payload or "").strip()
        if key.startswith("{"):
            try:
                kd = json.loads(key)["data"]
                obs.group = str(kd["group"])
                obs.txn_id = f"{kd['topic']}-{int(kd['partition'])}"
            except (ValueError, KeyError, TypeError):
                raise DumpParseError(f"offset commit key is not the JSON expected: {key[:60]!r}") from None
        else:
            m = re.match(r"offset_commit::group=(.*),partition=(\S+)$", key)
            if not m:
                raise DumpParseError(f"offset commit key: expected group=G,partition=TP, got {key[:60]!r}")
            obs.group, obs.txn_id = m.group(1), m.group(2)
        if p.startswith("{"):
            try:
                obs.end_offset = int(json.loads(p)["data"]["offset"])
            except (ValueError, KeyError, TypeError):
                raise DumpParseError(f"offset commit payload is not the JSON expected: {p[:60]!r}") from None
        elif p not in ("<DELETE>", "NULL", ""):
            m2 = re.match(r"offset=(-?\d+)", p)
            if not m2:
                raise DumpParseError(f"offset commit payload: expected offset=N, got {p[:60]!r}")
            obs.end_offset = int(m2.group(1))
        return obs

    def _metadata(self, number: int, text: str, offset: int | None, payload: str) -> list[Obs]:
        try:
            return parse_payload(payload, self.file, number, text, self._stream(), offset, self._topics)
        except MetadataParseError as e:
            raise DumpParseError(f"cluster metadata record: {e}") from None

    # ---- index and snapshot dumps ---------------------------------------------------------------

    def _txn_index(self, number: int, text: str, line: str) -> Obs:
        kv = dict(_KV.findall(line))
        try:
            return self._obs(
                TXN_INDEX,
                number,
                text,
                pid=_int(kv, "producerId", required=True),
                offset=_int(kv, "firstOffset", required=True),
                last_offset=_int(kv, "lastOffset", required=True),
                lso=_int(kv, "lastStableOffset"),
            )
        except DumpParseError as e:
            raise DumpParseError(f"aborted-transaction index line: {e}") from None

    def _snapshot(self, number: int, text: str, line: str) -> Obs:
        kv = dict(_KV.findall(line))
        try:
            return self._obs(
                PRODUCER_SNAPSHOT,
                number,
                text,
                pid=_int(kv, "producerId", required=True),
                producer_epoch=_int(kv, "producerEpoch", required=True),
                coordinator_epoch=_int(kv, "coordinatorEpoch"),
                offset=_opt_int(kv, "currentTxnFirstOffset"),
                base_seq=_int(kv, "firstSequence"),
                last_seq=_int(kv, "lastSequence"),
                last_offset=_int(kv, "lastOffset"),
            )
        except DumpParseError as e:
            raise DumpParseError(f"producer snapshot line: {e}") from None


def _split_key_payload(body: str) -> tuple[str, str | None, str | None]:
    """(metadata part, key, payload) of a record line: ``key:`` and ``payload:`` may hold spaces."""
    key: str | None = None
    payload: str | None = None
    i = body.find(" payload: ")
    if i >= 0:
        payload = body[i + len(" payload: ") :]
        body = body[:i]
    elif body.endswith(" payload:"):
        payload = ""
        body = body[: -len(" payload:")]
    j = body.find(" key: ")
    if j >= 0:
        key = body[j + len(" key: ") :]
        body = body[:j]
    return body, key, payload
