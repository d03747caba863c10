"""The fault schedule of ``kconform serve --faults FILE`` (TOML or JSON; docs/serve.md).

One table per fault, times in milliseconds since the server started::

    [[fault]]
    at_ms = 500
    kind = "error"                    # inject a retriable error into the next `count` requests of `api`
    api = "produce"                   # an API name of API_NAMES, or "*"
    error = "NOT_LEADER_OR_FOLLOWER"  # one of INJECTABLE
    count = 2
    broker = 0                        # optional: only requests to this broker

    [[fault]]
    at_ms = 1000
    kind = "delay"                    # hold every answer of `api` for `ms` during `duration_ms`
    api = "fetch"
    ms = 200
    duration_ms = 1000

    [[fault]]
    at_ms = 2000
    kind = "crash"                    # broker's listener closes its connections and refuses new
    broker = 1                        # ones for duration_ms, then listens again on the same port
    duration_ms = 800

    [[fault]]
    at_ms = 3000
    kind = "move_coordinator"         # the transactional id's coordinator moves to `broker`
    txn_id = "my-txn"                 # (a real id, or "*": every id seen so far; judged MoveCoordinator)
    broker = 2

Injected errors are legal answers of a real cluster at a moment the fault names (a leader move, a
timeout, a coordinator loading or finishing another transaction): NOT_LEADER_OR_FOLLOWER and
COORDINATOR_LOAD_IN_PROGRESS / CONCURRENT_TRANSACTIONS are answered **without** running the request
(Kafka refuses before appending or changing state); REQUEST_TIMED_OUT is answered **after** the
reference ran it (Kafka's produce timeout: the write may have happened), so a client's retry meets
its own earlier write. They are not judged (the model judges what the reference did).

Guarantees: ``load_schedule`` refuses a bad file with ``ScheduleError`` naming the file, the fault's
index and the field (exit 2); faults are applied in ``at_ms`` order.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconform.traces.inputs.errors import InputError

INJECTABLE: dict[str, int] = {
    "NOT_LEADER_OR_FOLLOWER": 6,
    "REQUEST_TIMED_OUT": 7,
    "COORDINATOR_LOAD_IN_PROGRESS": 14,
    "CONCURRENT_TRANSACTIONS": 51,
}
AFTER_APPLY = frozenset({"REQUEST_TIMED_OUT"})
"""Errors answered after the reference ran the request (the client cannot know it took effect)."""

API_NAMES: dict[str, int] = {
    "produce": 0,
    "fetch": 1,
    "list_offsets": 2,
    "metadata": 3,
    "offset_commit": 8,
    "offset_fetch": 9,
    "find_coordinator": 10,
    "join_group": 11,
    "heartbeat": 12,
    "leave_group": 13,
    "sync_group": 14,
    "api_versions": 18,
    "create_topics": 19,
    "init_producer_id": 22,
    "add_partitions_to_txn": 24,
    "add_offsets_to_txn": 25,
    "end_txn": 26,
    "txn_offset_commit": 28,
}
ERRORS_FOR: dict[str, frozenset[str]] = {
    "NOT_LEADER_OR_FOLLOWER": frozenset({"produce", "fetch", "list_offsets"}),
    "REQUEST_TIMED_OUT": frozenset({"produce"}),
    "COORDINATOR_LOAD_IN_PROGRESS": frozenset(
        {
            "find_coordinator",
            "init_producer_id",
            "add_partitions_to_txn",
            "add_offsets_to_txn",
            "end_txn",
            "txn_offset_commit",
            "offset_commit",
            "offset_fetch",
        }
    ),
    "CONCURRENT_TRANSACTIONS": frozenset(
        {"init_producer_id", "add_partitions_to_txn", "add_offsets_to_txn", "end_txn"}
    ),
}
"""Which APIs can answer each injectable error in Kafka (the error's documented callers)."""
KINDS = ("error", "delay", "crash", "move_coordinator")


class ScheduleError(InputError):
    """A fault schedule that cannot be used."""


@dataclass
class Fault:
    at_ms: int
    kind: str
    api: str = "*"
    error: str = ""
    count: int = 1
    broker: int = -1
    ms: int = 0
    duration_ms: int = 0
    txn_id: str = ""


def load_schedule(path: Path, brokers: int) -> list[Fault]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScheduleError(path, None, "", f"cannot read: {exc.strerror}") from None
    try:
        doc: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ScheduleError(
            path, None, "", f"not valid {'JSON' if path.suffix == '.json' else 'TOML'}: {exc}"
        ) from None
    items = doc.get("fault") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise ScheduleError(path, None, "fault", "a schedule is a list of [[fault]] tables")
    return sorted((_fault(path, i, item, brokers) for i, item in enumerate(items)), key=lambda f: f.at_ms)


def _fault(path: Path, i: int, item: Any, brokers: int) -> Fault:
    def bad(field: str, why: str) -> ScheduleError:
        return ScheduleError(path, None, f"fault[{i}].{field}", why)

    if not isinstance(item, dict):
        raise bad("", "a fault is a table")
    known = {"at_ms", "kind", "api", "error", "count", "broker", "ms", "duration_ms", "txn_id"}
    unknown = set(item) - known
    if unknown:
        raise bad(sorted(unknown)[0], f"unknown field (known: {', '.join(sorted(known))})")
    for key in ("at_ms", "count", "broker", "ms", "duration_ms"):
        if key in item and (
            isinstance(item[key], bool) or not isinstance(item[key], int) or item[key] < (-1 if key == "broker" else 0)
        ):
            raise bad(key, f"must be a non-negative integer, got {item[key]!r}")
    if "at_ms" not in item:
        raise bad("at_ms", "missing")
    kind = item.get("kind")
    if kind not in KINDS:
        raise bad("kind", f"one of {', '.join(KINDS)}, got {kind!r}")
    fault = Fault(**item)
    if fault.api != "*" and fault.api not in API_NAMES:
        raise bad("api", f"unknown API {fault.api!r} (known: {', '.join(API_NAMES)}, *)")
    if kind == "error":
        if fault.error not in INJECTABLE:
            raise bad("error", f"one of {', '.join(INJECTABLE)}, got {fault.error!r}")
        allowed = ERRORS_FOR[fault.error]
        if fault.api == "*" or fault.api not in allowed:
            raise bad("api", f"{fault.error} is answered by {', '.join(sorted(allowed))} only")
    if kind in ("crash", "move_coordinator") and not 0 <= fault.broker < brokers:
        raise bad("broker", f"one of 0..{brokers - 1}, got {fault.broker}")
    if kind == "move_coordinator" and not fault.txn_id:
        raise bad("txn_id", "a transactional id is required")
    return fault
