"""KRaft ``__cluster_metadata`` records as ``kafka-dump-log.sh --cluster-metadata-decoder`` prints them.

DumpLogSegments' ``ClusterMetadataLogMessageParser`` (Kafka 2.8 to 4.x) prints each metadata record's
value as ``payload: {"type":"PARTITION_RECORD","version":V,"data":{...}}`` (the generated JSON
converter of the record), either on a record line (``| offset: N ... payload: {...}``, 3.0+), on a
line of its own (`` payload: {...}`` under ``--skip-record-metadata``, 2.8) or bare (``grep -o
'payload: .*'``). A value the tool could not decode is printed as ``Error at N, skipping. ...``: a
legal line that carries no fact.

Only the records that carry a partition's registration are turned into observations
(:data:`~kconform.traces.logs.observations.KRAFT_PARTITION`): ``PARTITION_RECORD`` (the full state:
replicas, ISR, leader, leader epoch, partition epoch, ELR since KIP-966), ``PARTITION_CHANGE_RECORD``
(only what changed: a field left out, ``null`` or ``leader: -2`` means unchanged, KIP-631 and
``PartitionChangeRecord.json``), ``TOPIC_RECORD`` (names the topic id) and ``REMOVE_TOPIC_RECORD``
(ends a topic id). Every other record type is known and carries nothing the checks judge.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kconform.traces.logs.observations import KRAFT_PARTITION, Obs, cut

NO_LEADER_CHANGE = -2
"""``PartitionChangeRecord.leader`` default: the leader did not change (PartitionChangeRecord.json)."""

PARTITION_RECORD = "PARTITION_RECORD"
PARTITION_CHANGE_RECORD = "PARTITION_CHANGE_RECORD"
TOPIC_RECORD = "TOPIC_RECORD"
REMOVE_TOPIC_RECORD = "REMOVE_TOPIC_RECORD"
_PARTITION_TYPES = frozenset({PARTITION_RECORD, PARTITION_CHANGE_RECORD, TOPIC_RECORD, REMOVE_TOPIC_RECORD})


_TYPE = re.compile(r'\{"type":"(\w+)"')


class MetadataParseError(ValueError):
    """A metadata record payload that is recognized (``{"type":"..._RECORD"``) but does not parse."""


def is_metadata_payload(payload: str) -> bool:
    """Whether ``payload`` is a --cluster-metadata-decoder record value (JSON with a record ``type``)."""
    return payload.startswith('{"type":"') and '_RECORD"' in payload[:60]


def _ids(data: dict[str, Any], *names: str) -> str | None:
    """The broker id list of the first of ``names`` present, as ``1,2,3`` (None: absent or null)."""
    for name in names:
        for key, value in data.items():
            if key.lower() == name.lower():
                if value is None:
                    return None
                if not isinstance(value, list) or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in value
                ):
                    raise MetadataParseError(f"{key}: not a list of broker ids: {str(value)[:40]!r}")
                return ",".join(str(v) for v in value)
    return None


def _int(data: dict[str, Any], name: str, required: bool = False) -> int | None:
    value = data.get(name)
    if value is None:
        if required:
            raise MetadataParseError(f"{name} missing")
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise MetadataParseError(f"{name}: not an integer: {str(value)[:40]!r}")
    return value


def parse_payload(
    payload: str, file: str, number: int, text: str, stream: str, offset: int | None, topics: dict[str, str]
) -> list[Obs]:
    """The observation of one metadata record value (none for record types the checks do not use).

    ``topics`` maps topic ids to names as TOPIC_RECORDs name them (per dump): a partition is named
    ``topic-N`` when its topic record was seen, else ``<topic id>-N``.
    """
    head = _TYPE.match(payload)
    if head is None or head.group(1) not in _PARTITION_TYPES:
        return []  # a record type the checks do not use: its value is not read (it may be trimmed)
    try:
        doc = json.loads(payload)
    except ValueError:
        raise MetadataParseError(f"metadata record payload is not JSON: {payload[:60]!r}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
        raise MetadataParseError(f"metadata record payload has no type: {payload[:60]!r}")
    kind = doc["type"]
    data = doc.get("data")
    if not isinstance(data, dict):
        raise MetadataParseError(f"{kind}: no data object")
    topic_id = data.get("topicId")
    if not isinstance(topic_id, str):
        raise MetadataParseError(f"{kind}: no topicId")
    obs = Obs(
        kind=KRAFT_PARTITION,
        file=file,
        line=number,
        text=cut(text),
        stream=stream,
        offset=offset,
        topic_id=topic_id,
        state=kind,
    )
    if kind == TOPIC_RECORD:
        name = data.get("name")
        if not isinstance(name, str):
            raise MetadataParseError("TOPIC_RECORD: no name")
        topics[topic_id] = name
        obs.partition = name
        return [obs]
    if kind == REMOVE_TOPIC_RECORD:
        obs.partition = topics.pop(topic_id, topic_id)
        return [obs]
    index = _int(data, "partitionId", required=True)
    obs.partition = f"{topics.get(topic_id, topic_id)}-{index}"
    obs.isr = _ids(data, "isr")
    obs.replicas = _ids(data, "replicas")
    obs.elr = _ids(data, "eligibleLeaderReplicas")
    leader = _int(data, "leader")
    if kind == PARTITION_RECORD:
        obs.leader = leader
        obs.leader_epoch = _int(data, "leaderEpoch", required=True)
        obs.partition_epoch = _int(data, "partitionEpoch", required=True)
        if obs.isr is None or obs.replicas is None or leader is None:
            raise MetadataParseError("PARTITION_RECORD: replicas, isr and leader are required")
        if obs.elr is None:
            obs.elr = ""  # absent before KIP-966 (PartitionRecord v0): no eligible leader replicas
    else:
        obs.leader = None if leader == NO_LEADER_CHANGE else leader
    return [obs]
