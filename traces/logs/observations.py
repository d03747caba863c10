"""Observations: the typed facts the log parsers read out of what a real Kafka cluster printed.

One :class:`Obs` is one fact from one line (or one dump record) of one input file, and always keeps
where it came from (``file``, ``line``) and the line's text (cut to :data:`TEXT_LIMIT` characters)
so that every finding can show its witnesses. The schema is flat (one optional column per field,
one meaning per field name in every kind), so the same rows go to the single-process checks, to
JSON and to Parquet (``kconform logs ingest``). ``docs/logs.md`` documents every kind and field;
:data:`SCHEMA_VERSION` changes whenever a field's meaning changes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

SCHEMA_VERSION = 2
"""Version of the observation schema (the Parquet corpus records it in its manifest). 2: kind
``kraft_partition`` and fields ``replicas`` and ``elr``."""

TEXT_LIMIT = 400
"""Witness text kept per observation (characters); longer lines are cut with an ellipsis."""

# ---- kinds ------------------------------------------------------------------------------------

BATCH = "batch"
"""DumpLogSegments batch line (magic 2 ``baseOffset: ...`` or older ``offset: ... position:``)."""
RECORD = "record"
"""DumpLogSegments ``| offset: ...`` record line of --deep-iteration (control records carry ``marker``)."""
TXN_LOG = "txn_log"
"""A ``__transaction_state`` record decoded by --transaction-log-decoder (``state`` "" = tombstone)."""
OFFSET_COMMIT = "offset_commit"
"""A ``__consumer_offsets`` offset commit decoded by --offsets-decoder."""
TXN_INDEX = "txn_index"
"""An aborted-transaction index entry (DumpLogSegments of a ``.txnindex`` file)."""
PRODUCER_SNAPSHOT = "producer_snapshot"
"""A producer-state snapshot entry (DumpLogSegments of a ``.snapshot`` file)."""
EPOCH_ENTRY = "epoch_entry"
"""One (epoch, start offset) line of a ``leader-epoch-checkpoint`` file."""
CHECKPOINT_OFFSET = "checkpoint_offset"
"""One partition line of a ``replication-offset-checkpoint`` (HW) or other offset checkpoint file."""
LEADER_START = "leader_start"
"""Broker became leader of a partition at a new leader epoch (Partition.makeLeader)."""
FOLLOWER_START = "follower_start"
"""Broker became follower of a partition at a new leader epoch (Partition.makeFollower)."""
PARTITION_STATE = "partition_state"
"""A LeaderAndIsr partition state the controller sent or a broker received (ZK mode) or a KRaft
PartitionRecord / PartitionChangeRecord that names leader and leader epoch."""
ISR_SHRINK = "isr_shrink"
"""Leader removed replicas from the ISR (``Shrinking ISR from ... to ...``)."""
ISR_EXPAND = "isr_expand"
"""Leader added replicas to the ISR (``Expanding ISR from ... to ...``)."""
ISR_UPDATED = "isr_updated"
"""Leader's ISR change was committed (``ISR updated to ... and version/zkVersion updated to ...``)."""
TRUNCATION = "truncation"
"""Follower truncation decided by the fetcher (epoch-based or to the high watermark)."""
TRUNCATION_BELOW_HW = "truncation_below_hw"
"""``Truncating ... to offset T below high watermark H`` (ReplicaFetcherThread)."""
UNCLEAN_ELECTION = "unclean_election"
"""A line saying an unclean leader election happened for a partition (data loss is permitted)."""
LOG_DELETED = "log_deleted"
"""A partition's log was deleted (topic deletion); epochs may restart if the topic is recreated."""
BROKER_START = "broker_start"
"""A broker (or KRaft node) process started; its in-memory leader epochs start again."""
TXN_TRANSITION = "txn_transition"
"""Transaction coordinator moved a transactional id between states (TransactionMetadata debug lines)."""
TXN_INIT = "txn_init"
"""Transaction coordinator initialized a transactional id with a producer id and epoch."""
FETCH_REQUEST = "fetch_request"
"""A client (Java or librdkafka) sent a Fetch request; one row per partition (or one for an empty one)."""
FETCH_RESPONSE = "fetch_response"
"""A client received a Fetch answer; one row per partition (or one for a partition-less answer)."""
FETCH_SESSION = "fetch_session"
"""FetchSessionHandler's own account of a session (created, closed, error)."""
KRAFT_PARTITION = "kraft_partition"
"""A KRaft ``__cluster_metadata`` record about a partition or its topic, as --cluster-metadata-decoder
prints it (``state`` = the record type: PARTITION_RECORD, PARTITION_CHANGE_RECORD, TOPIC_RECORD,
REMOVE_TOPIC_RECORD); a change record's unset fields are None (unchanged)."""

KINDS: tuple[str, ...] = (
    BATCH,
    RECORD,
    TXN_LOG,
    OFFSET_COMMIT,
    TXN_INDEX,
    PRODUCER_SNAPSHOT,
    EPOCH_ENTRY,
    CHECKPOINT_OFFSET,
    LEADER_START,
    FOLLOWER_START,
    PARTITION_STATE,
    ISR_SHRINK,
    ISR_EXPAND,
    ISR_UPDATED,
    TRUNCATION,
    TRUNCATION_BELOW_HW,
    UNCLEAN_ELECTION,
    LOG_DELETED,
    BROKER_START,
    TXN_TRANSITION,
    TXN_INIT,
    FETCH_REQUEST,
    FETCH_RESPONSE,
    FETCH_SESSION,
    KRAFT_PARTITION,
)


@dataclass(slots=True)
class Obs:
    """One observation. Only ``kind``, ``file``, ``line`` and ``text`` are always set; every other
    field is None when the line does not carry it (see docs/logs.md for which kind sets which).

    ``stream`` names the unit whose line order is meaningful: a dump file's segment, or the
    printing node in a log file (``FILE#broker=N``), so that lines of several brokers interleaved
    in one file are checked per broker and never ordered across brokers by their timestamps.
    """

    kind: str
    file: str
    line: int
    text: str
    stream: str = ""
    ts: str | None = None
    node: int | None = None
    client: str | None = None
    partition: str | None = None
    topic_id: str | None = None
    offset: int | None = None
    last_offset: int | None = None
    count: int | None = None
    pid: int | None = None
    producer_epoch: int | None = None
    base_seq: int | None = None
    last_seq: int | None = None
    leader_epoch: int | None = None
    leader: int | None = None
    partition_epoch: int | None = None
    isr: str | None = None
    transactional: bool | None = None
    control: bool | None = None
    marker: str | None = None
    coordinator_epoch: int | None = None
    create_time: int | None = None
    compacted: bool | None = None
    txn_id: str | None = None
    state: str | None = None
    prev_state: str | None = None
    hw: int | None = None
    leo: int | None = None
    lso: int | None = None
    log_start: int | None = None
    end_offset: int | None = None
    completed: bool | None = None
    session_id: int | None = None
    session_epoch: int | None = None
    isolation: int | None = None
    error: int | None = None
    correlation: int | None = None
    group: str | None = None
    partition_error: int | None = None
    aborted: str | None = None
    replicas: str | None = None
    elr: str | None = None


FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Obs))
"""Column order of the Parquet corpus and of JSON rows."""

_INT_FIELDS = frozenset(f.name for f in fields(Obs) if "int" in str(f.type) and f.name != "line")
_BOOL_FIELDS = frozenset(f.name for f in fields(Obs) if "bool" in str(f.type))


def column_type(name: str) -> str:
    """``int``, ``bool`` or ``str``: the Parquet/SQL type of field ``name`` (``line`` is an int)."""
    if name == "line" or name in _INT_FIELDS:
        return "int"
    if name in _BOOL_FIELDS:
        return "bool"
    return "str"


def cut(text: str) -> str:
    """``text`` cut to :data:`TEXT_LIMIT` characters (an ellipsis marks the cut)."""
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def to_row(obs: Obs) -> dict[str, Any]:
    """The observation as a flat dict (every field, None where unset)."""
    return {name: getattr(obs, name) for name in FIELD_NAMES}


def from_row(row: dict[str, Any]) -> Obs:
    """The inverse of :func:`to_row` (unknown keys are ignored, missing optional ones are None)."""
    values: dict[str, Any] = {name: row.get(name) for name in FIELD_NAMES}
    values["stream"] = values["stream"] or ""
    return Obs(**values)
