"""What a value may be: Kafka's own limits per field, the suite's bounds, enums and node roles.

One table per concern, keyed by field name (a name means one thing in every event kind, see
traces/schema.py) with per-kind exceptions where Kafka's type differs. ``traces/schema.py`` writes
these into the JSON Schema (``minimum`` / ``maximum`` / ``enum``), so the checked-in
``event-schema.json`` states them for other writers, and every reader checks them through it.
A test requires every integer field of every event kind, every struct field and every operation
argument to have a rule here, so a new kind cannot slip past the boundary.

Kafka's types (the request / response schemas in clients/src/main/resources/common/message/):
producer epochs are int16 (``ProducerEpoch``), leader, partition and coordinator epochs int32
(``LeaderEpoch``, ``PartitionEpoch``, ``CoordinatorEpoch``), sequences int32 (``BaseSequence``),
offsets, producer ids and timestamps int64, error codes and ``acks`` int16, timeouts int32.
``-1`` means "none" wherever the schema docs say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model import outcomes

INT16_MAX = 2**15 - 1
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class Range:
    """An inclusive integer range and where it comes from."""

    lo: int
    hi: int
    why: str

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and self.lo <= value <= self.hi


OFFSET = Range(-1, INT64_MAX, "an int64 offset (-1: none)")
LEADER_EPOCH = Range(-1, INT32_MAX, "an int32 leader epoch (-1: none)")
PARTITION_EPOCH = Range(-1, INT32_MAX, "an int32 partition epoch")
COORDINATOR_EPOCH = Range(-1, INT32_MAX, "an int32 coordinator epoch")
PRODUCER_EPOCH = Range(-1, INT16_MAX, "an int16 producer epoch (-1: none)")
PRODUCER_ID = Range(-1, INT64_MAX, "an int64 producer id (-1: none)")
SEQUENCE = Range(-1, INT32_MAX, "an int32 sequence (-1: none)")
ERROR_CODE = Range(-1, INT16_MAX, "an int16 Kafka error code")
ACKS = Range(-(2**15), INT16_MAX, "an int16 acks (Kafka answers other values than -1, 0, 1 with INVALID_REQUIRED_ACKS)")
TIME_MS = Range(-(2**63), INT64_MAX, "an int64 time in ms (a clock reported going back is for the judge to call)")
TIMEOUT_MS = Range(-(2**31), INT32_MAX, "an int32 timeout in ms")
ID = Range(-1, INT64_MAX, "an int64 id (-1: none)")
COUNT = Range(0, INT32_MAX, "a non-negative int32 count")
FLAG = Range(0, 1, "0 or 1")
CONTROL = Range(-1, 1, "-1 (data), 0 (ABORT marker) or 1 (COMMIT marker)")
NODE = Range(-(2**31), INT32_MAX, "an int32 node id")
SESSION_ID = Range(0, INT32_MAX, "an int32 fetch session id (0: none)")
SESSION_EPOCH = Range(-1, INT32_MAX, "an int32 fetch session epoch (-1: FINAL, 0: INITIAL)")

FIELD_RANGES: dict[str, Range] = {
    "node": NODE,
    "broker": NODE,
    "leader": NODE,
    "follower": NODE,
    "isr": NODE,
    "leader_epoch": LEADER_EPOCH,
    "partition_epoch": PARTITION_EPOCH,
    "msg": ID,
    "error": ERROR_CODE,
    "now_ms": TIME_MS,
    "log_end": OFFSET,
    "hw": OFFSET,
    "truncated_to": OFFSET,
    "req": ID,
    "rid": ID,
    "acks": ACKS,
    "offset": OFFSET,
    "epoch": LEADER_EPOCH,
    "fetch_offset": OFFSET,
    "last_fetched_epoch": LEADER_EPOCH,
    "current_leader_epoch": LEADER_EPOCH,
    "follower_epoch": LEADER_EPOCH,
    "diverging_epoch": LEADER_EPOCH,
    "diverging_end_offset": OFFSET,
    "leader_leo": OFFSET,
    "leader_hw": OFFSET,
    "appended": COUNT,
    "requested_epoch": LEADER_EPOCH,
    "end_offset": OFFSET,
    "coordinator_epoch": COORDINATOR_EPOCH,
    "timeout_ms": TIMEOUT_MS,
    "expected_pid": PRODUCER_ID,
    "expected_epoch": PRODUCER_EPOCH,
    "pid": PRODUCER_ID,
    "ctxn": ID,
    "result_pid": PRODUCER_ID,
    "result_epoch": PRODUCER_EPOCH,
    "base_seq": SEQUENCE,
    "rids": ID,
    "base_offset": OFFSET,
    "verify_msg": ID,
    "lso": OFFSET,
    "next_offset": OFFSET,
    "session_id": SESSION_ID,
    "evicted": SESSION_ID,
    "client": Range(0, INT32_MAX, "a client number"),
    "errors": ERROR_CODE,
    "hws": OFFSET,
    "lsos": OFFSET,
    "log_starts": OFFSET,
    "log_start": OFFSET,
    "counts": COUNT,
    "aborted_counts": COUNT,
    "min_bytes": Range(-(2**31), INT32_MAX, "an int32 fetch.min.bytes (counted in records)"),
    "max_wait_ms": TIMEOUT_MS,
    "preferred": Range(-1, INT32_MAX, "an int32 broker id (-1: no preferred read replica)"),
    "position": OFFSET,
    "reset_to": OFFSET,
}
"""Event field → range (for an int list, of each element)."""

REPLICATION_EPOCH_KINDS: frozenset[str] = frozenset({"produce_handled", "epoch_query_handled"})
"""The kinds whose ``epoch`` is a leader epoch (int32); in every other kind it is a producer epoch."""


SESSION_EPOCH_KINDS: frozenset[str] = frozenset({"session_fetch_sent", "session_fetch_applied"})
"""The kinds whose ``epoch`` is a fetch session epoch (int32, KIP-227)."""


def field_range(kind: str, name: str) -> Range | None:
    """The range of ``kind``'s int field ``name`` (None: no rule, which a test forbids)."""
    if name == "epoch" and kind in SESSION_EPOCH_KINDS:
        return SESSION_EPOCH
    if name == "epoch" and kind not in REPLICATION_EPOCH_KINDS:
        return PRODUCER_EPOCH
    return FIELD_RANGES.get(name)


STRUCT_RANGES: dict[tuple[str, str], Range] = {
    ("Entry", "offset"): OFFSET,
    ("Entry", "epoch"): LEADER_EPOCH,
    ("Entry", "rid"): ID,
    ("Record", "offset"): OFFSET,
    ("Record", "pid"): PRODUCER_ID,
    ("Record", "epoch"): PRODUCER_EPOCH,
    ("Record", "seq"): SEQUENCE,
    ("Record", "rid"): ID,
    ("Record", "txn"): FLAG,
    ("Record", "control"): CONTROL,
    ("AbortedTxn", "pid"): PRODUCER_ID,
    ("AbortedTxn", "first_offset"): OFFSET,
    ("TopicOffset", "offset"): OFFSET,
}
"""(struct class, field) → range of the positional lists (``[offset, epoch, rid]``, ...)."""

TXN_STATES: tuple[str, ...] = (
    "",
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
)
"""TransactionState names (model/txn_graph.py; "" none)."""

_BATCH_OUTCOMES = outcomes.values(outcomes.BatchResult)
ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("metadata_applied", "outcome"): outcomes.values(outcomes.MetadataResult),
    ("fetch_applied", "outcome"): outcomes.values(outcomes.FetchResult),
    ("epoch_query_applied", "outcome"): outcomes.values(outcomes.EpochQueryResult),
    ("txn_produce_handled", "outcome"): _BATCH_OUTCOMES,
    ("verify_applied", "outcome"): _BATCH_OUTCOMES,
    **{
        (kind, "state"): TXN_STATES
        for kind in (
            "init_producer_id_handled",
            "add_partitions_handled",
            "add_offsets_handled",
            "end_txn_handled",
            "txn_timed_out",
            "marker_response_handled",
        )
    },
}
"""(kind, string field) → the values it may take (the model's outcome and state names)."""

CONTROLLER = "controller"
BROKER = "broker"
CONSUMER = "consumer"
NODE_ROLES: dict[str, str] = {
    **{k: CONTROLLER for k in ("broker_fenced", "broker_unfenced", "leader_moved", "alter_partition_handled")},
    **{k: CONTROLLER for k in ("clock_advanced", "coordinator_moved", "quiesced")},
    "consumer_polled": CONSUMER,
}
"""Who runs each kind's handler: the controller / the simulated world (``node`` = -1), a consumer
client (``node`` = -40 - consumer, impl/txn/clients.consumer_node), or (every kind not listed) a
broker of the configuration."""

MAX_CLIENTS = 16
"""Producer clients and consumers of the exactly-once cluster (impl/txn/cluster.MAX_CLIENTS)."""
MAX_BATCH_RECORDS = 100
"""Records of one ``send`` (impl/txn/cluster.MAX_BATCH_RECORDS)."""
MAX_TIME_STEP_MS = 86_400_000
"""The longest ``advance`` (one simulated day: its timers fire one by one)."""
MAX_RUN_MS = 3_600_000
"""The longest ``run`` / ``quiesce`` (one simulated hour, delivered in 100 ms slices)."""
MAX_SETTLE_MESSAGES = 100_000
"""The most deliveries of one ``settle`` (impl/simulation.MAX_SETTLE_DELIVERIES)."""
MAX_STEPS = 1_000_000
"""Steps of one trace file (the longest counterexample, epoch-overflow, has 65,537)."""
MAX_NAME_CHARS = 256
"""Longest name (transactional id, group, partition, model action label)."""

BROKER_REF = "broker"
NODE_REF = "node or controller"
CLIENT_REF = "client"
DATA_PARTITION_REF = "data partition"
LOG_PARTITION_REF = "partition"
TXN_ID_REF = "transactional id"
TXN_ID_OR_NONE_REF = "transactional id or none"
GROUP_REF = "group"

WIRE_REQUEST = "wire request"
"""A ``wire_request``'s request text: a client request of the exactly-once slice (impl/txn/wire.py)
naming the configuration's partitions, transactional ids and groups (references.wire_request_problem)."""

OPERATION_RULES: dict[tuple[str, str], Range | str] = {
    ("produce", "rid"): Range(0, INT64_MAX, "a record id (int64)"),
    ("produce", "acks"): ACKS,
    ("consume", "offset"): Range(0, INT64_MAX, "an int64 fetch offset"),
    ("rogue_fetch", "broker"): BROKER_REF,
    ("rogue_fetch", "offset"): Range(0, INT64_MAX, "an int64 fetch offset"),
    ("rogue_fetch", "epoch_delta"): Range(-INT32_MAX, INT32_MAX, "a leader epoch shift"),
    ("consume_wait", "offset"): Range(0, INT64_MAX, "an int64 fetch offset"),
    ("consume_wait", "min_bytes"): Range(0, INT32_MAX, "an int32 fetch.min.bytes (counted in records)"),
    ("consume_wait", "max_wait_ms"): Range(0, MAX_RUN_MS, "a fetch.max.wait.ms of at most one simulated hour"),
    ("crash", "broker"): BROKER_REF,
    ("restart", "broker"): BROKER_REF,
    ("isolate", "broker"): BROKER_REF,
    ("deliver", "index"): Range(0, INT32_MAX, "a queue position (taken modulo the queue length)"),
    ("deliver_to", "node"): NODE_REF,
    ("drop", "index"): Range(0, INT32_MAX, "a queue position"),
    ("duplicate", "index"): Range(0, INT32_MAX, "a queue position"),
    ("advance", "ms"): Range(0, MAX_TIME_STEP_MS, "a clock move of at most one simulated day"),
    ("settle", "max_messages"): Range(0, MAX_SETTLE_MESSAGES, "a delivery count"),
    ("run", "ms"): Range(0, MAX_RUN_MS, "a run of at most one simulated hour"),
    ("move_leader", "broker"): BROKER_REF,
    ("delete_records_at", "broker"): BROKER_REF,
    ("delete_records_at", "offset"): Range(-1, INT64_MAX, "an int64 offset (-1: the HW)"),
    ("retention", "broker"): BROKER_REF,
    ("retention", "offset"): Range(0, INT64_MAX, "an int64 offset"),
    ("model_action", "label"): "label",
    ("init_producer", "client"): CLIENT_REF,
    ("init_producer", "txn_id"): TXN_ID_OR_NONE_REF,
    ("begin_txn", "client"): CLIENT_REF,
    ("send", "client"): CLIENT_REF,
    ("send", "partition"): DATA_PARTITION_REF,
    ("send", "count"): Range(1, MAX_BATCH_RECORDS, f"a batch of 1..{MAX_BATCH_RECORDS} records"),
    ("rogue_produce", "client"): CLIENT_REF,
    ("rogue_produce", "partition"): DATA_PARTITION_REF,
    ("rogue_produce", "broker"): Range(-1, INT32_MAX, "a broker id (-1: the partition's leader)"),
    ("rogue_produce", "seq_delta"): Range(-INT32_MAX, INT32_MAX, "a sequence shift"),
    ("rogue_produce", "epoch_delta"): Range(-32_767, 32_767, "a producer epoch shift (int16)"),
    ("rogue_produce", "count"): Range(1, MAX_BATCH_RECORDS, f"a batch of 1..{MAX_BATCH_RECORDS} records"),
    ("rogue_end_txn", "client"): CLIENT_REF,
    ("rogue_end_txn", "broker"): Range(-1, INT32_MAX, "a broker id (-1: the transactional id's coordinator)"),
    ("rogue_end_txn", "epoch_delta"): Range(-32_767, 32_767, "a producer epoch shift (int16)"),
    ("rogue_end_txn", "commit"): "bool",
    ("rogue_add_partitions", "client"): CLIENT_REF,
    ("rogue_add_partitions", "partition"): DATA_PARTITION_REF,
    ("rogue_add_partitions", "broker"): Range(-1, INT32_MAX, "a broker id (-1: the transactional id's coordinator)"),
    ("rogue_add_partitions", "epoch_delta"): Range(-32_767, 32_767, "a producer epoch shift (int16)"),
    ("rogue_init_producer", "client"): CLIENT_REF,
    ("rogue_init_producer", "broker"): Range(-1, INT32_MAX, "a broker id (-1: the transactional id's coordinator)"),
    ("rogue_init_producer", "pid_delta"): Range(-INT64_MAX, INT64_MAX, "a producer id shift"),
    ("rogue_init_producer", "epoch_delta"): Range(-32_767, 32_767, "a producer epoch shift (int16)"),
    ("commit_txn", "client"): CLIENT_REF,
    ("abort_txn", "client"): CLIENT_REF,
    ("send_offsets", "client"): CLIENT_REF,
    ("send_offsets", "group"): GROUP_REF,
    ("send_offsets", "partition"): DATA_PARTITION_REF,
    ("send_offsets", "offset"): Range(0, INT64_MAX, "an int64 offset"),
    ("consume_txn", "consumer"): CLIENT_REF,
    ("consume_txn", "partition"): LOG_PARTITION_REF,
    ("consume_txn", "read_committed"): "bool",
    ("commit_offsets", "group"): GROUP_REF,
    ("commit_offsets", "partition"): DATA_PARTITION_REF,
    ("commit_offsets", "offset"): Range(0, INT64_MAX, "an int64 offset"),
    ("fetch_offsets", "group"): GROUP_REF,
    ("fetch_offsets", "require_stable"): "bool",
    ("move_coordinator", "txn_id"): TXN_ID_REF,
    ("move_coordinator", "broker"): BROKER_REF,
    ("advance_hw", "partition"): LOG_PARTITION_REF,
    ("advance_hw", "offset"): Range(-1, INT64_MAX, "an int64 offset (-1: the LEO)"),
    ("quiesce", "max_ms"): Range(0, MAX_RUN_MS, "at most one simulated hour"),
    ("wire_request", "conn"): Range(0, INT32_MAX, "a wire connection number"),
    ("wire_request", "broker"): BROKER_REF,
    ("poll", "client"): CLIENT_REF,
    ("assign", "client"): CLIENT_REF,
    ("assign", "partition"): LOG_PARTITION_REF,
    ("assign", "assigned"): "bool",
    ("close_session", "client"): CLIENT_REF,
    ("append_records", "partition"): LOG_PARTITION_REF,
    ("append_records", "count"): Range(1, 20, "a batch of 1..20 records"),
    ("append_records", "txn"): Range(0, 2, "0 plain, 1 committed transaction, 2 aborted transaction"),
    ("delete_records", "partition"): LOG_PARTITION_REF,
    ("delete_records", "offset"): Range(0, INT64_MAX, "an int64 offset"),
    ("toggle_leadership", "partition"): LOG_PARTITION_REF,
    ("bounce", "broker"): BROKER_REF,
    ("wire_request", "request"): WIRE_REQUEST,
}
"""(operation, argument) → its range, or what it refers to in the file's configuration."""

TXN_OPERATIONS: frozenset[str] = frozenset(
    {
        "init_producer",
        "begin_txn",
        "send",
        "rogue_produce",
        "rogue_end_txn",
        "rogue_add_partitions",
        "rogue_init_producer",
        "commit_txn",
        "abort_txn",
        "send_offsets",
        "consume_txn",
        "commit_offsets",
        "fetch_offsets",
        "move_coordinator",
        "advance_hw",
        "quiesce",
        "wire_request",
    }
)
"""Operations only the exactly-once cluster runs."""
REPLICATION_OPERATIONS: frozenset[str] = frozenset(
    {
        "produce",
        "consume",
        "consume_wait",
        "rogue_fetch",
        "crash",
        "restart",
        "isolate",
        "heal",
        "move_leader",
        "delete_records_at",
        "retention",
        "model_action",
    }
)
"""Operations only the replication cluster (or the model search) runs."""
