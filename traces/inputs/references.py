"""Ids checked against the file's own configuration.

The schema says a ``leader`` is an int32; only the configuration says which brokers exist. This
module checks every id an event or operation names against it: nodes by the role that runs each
kind (``limits.NODE_ROLES``: the controller and the simulated world are -1, consumers -40 - c,
everything else a broker), broker / leader / follower / ISR members among the brokers (-1 for "no
leader"), and in the exactly-once slice partitions, transactional ids and groups among the
configured ones. Each check returns the first problem as (field, message), or None.
"""

from __future__ import annotations

from typing import Any

from kconform.model.config import ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.inputs import limits

Problem = tuple[str, str]

CONTROLLER_NODE = -1
CONSUMER_NODE_BASE = -40
PRODUCER_NODE_BASE = -10
GROUP_CLIENT_NODE = -70
REPLICATION_CLIENT_NODES = (-2, -3)
"""impl/network.py PRODUCER_NODE and CONSUMER_NODE (messages may be addressed to them)."""


def known_slice(cfg: object) -> bool:
    """Whether this module knows ``cfg``'s ids (the replication and exactly-once slices); a slice
    registered at run time (conformance.registry) is checked by the schema only."""
    return isinstance(cfg, ReplicationConfig | TxnConfig)


def brokers(cfg: AnyConfig) -> range:
    """The broker ids of ``cfg`` (0 .. n-1); for another slice's configuration, every int32 id."""
    if isinstance(cfg, ReplicationConfig):
        return range(cfg.replicas)
    if isinstance(cfg, TxnConfig):
        return range(cfg.brokers)
    return range(-(2**31), 2**31)


def _broker_list(ids: range) -> str:
    return f"{ids.start}..{ids.stop - 1}" if len(ids) > 1 else str(ids.start)


def _check_node(kind: str, node: Any, ids: range) -> Problem | None:
    role = limits.NODE_ROLES.get(kind, limits.BROKER)
    if role == limits.CONTROLLER:
        if node != CONTROLLER_NODE:
            return "node", f"{kind} is run by the controller / the simulated world: node must be -1, got {node}"
    elif role == limits.CONSUMER:
        if not CONSUMER_NODE_BASE - limits.MAX_CLIENTS < node <= CONSUMER_NODE_BASE:
            return "node", f"{kind} is run by a consumer: node must be -40 - consumer (consumer < 16), got {node}"
    elif node not in ids:
        return "node", f"{kind} is run by a broker: node {node} is not one of the brokers {_broker_list(ids)}"
    return None


def event_problem(event: dict[str, Any], cfg: AnyConfig) -> Problem | None:
    """The first id of ``event`` (already schema-valid JSON) that ``cfg`` does not have."""
    if not known_slice(cfg):
        return None
    kind = event["kind"]
    ids = brokers(cfg)
    problem = _check_node(kind, event["node"], ids)
    if problem is not None:
        return problem
    for name in ("broker", "follower"):
        if name in event and event[name] not in ids:
            return name, f"broker {event[name]} is not one of the brokers {_broker_list(ids)}"
    if "leader" in event and event["leader"] != -1 and event["leader"] not in ids:
        return "leader", f"broker {event['leader']} is not one of the brokers {_broker_list(ids)} (or -1: none)"
    for i, member in enumerate(event.get("isr", ())):
        if member not in ids:
            return f"isr[{i}]", f"broker {member} is not one of the brokers {_broker_list(ids)}"
    if isinstance(cfg, TxnConfig):
        return _txn_event_problem(event, cfg)
    return None


def _txn_event_problem(event: dict[str, Any], cfg: TxnConfig) -> Problem | None:
    partitions = set(cfg.log_partitions)
    names = (
        ("partition", partitions, "partition"),
        ("state_partition", set(cfg.state_partitions), "__transaction_state partition"),
        ("txn_id", {*cfg.transactional_ids, ""}, "transactional id"),
        ("group", set(cfg.groups), "group"),
    )
    for name, known, what in names:
        if name in event and event[name] not in known:
            return name, f"{event[name]!r} is not a {what} of the configuration ({', '.join(sorted(known))})"
    for i, partition in enumerate(event.get("partitions", ())):
        if partition not in partitions:
            return f"partitions[{i}]", f"{partition!r} is not a partition of the configuration"
    for i, item in enumerate(event.get("offsets", ())):
        if item[0] not in partitions:
            return f"offsets[{i}]", f"{item[0]!r} is not a partition of the configuration"
    return None


def operation_problem(op: dict[str, Any], cfg: AnyConfig) -> Problem | None:
    """The first argument of ``op`` (already schema-valid JSON) that ``cfg`` does not have, or an
    operation of the other slice."""
    if not known_slice(cfg):
        return None
    kind = op["op"]
    txn = isinstance(cfg, TxnConfig)
    if txn and kind in limits.REPLICATION_OPERATIONS:
        return "op", f"{kind!r} is an operation of the replication slice; this file's config is the txn slice's"
    if not txn and kind in limits.TXN_OPERATIONS:
        return "op", f"{kind!r} is an operation of the exactly-once slice; this file's config is replication's"
    ids = brokers(cfg)
    for name, value in op.items():
        rule = limits.OPERATION_RULES.get((kind, name))
        if not isinstance(rule, str):
            continue
        problem = _argument_problem(rule, value, cfg, ids)
        if problem is not None:
            return name, problem
    return None


def _argument_problem(rule: str, value: Any, cfg: AnyConfig, ids: range) -> str | None:
    if rule == limits.WIRE_REQUEST:
        return wire_request_problem(value, cfg)
    if rule == limits.BROKER_REF:
        return None if value in ids else f"broker {value} is not one of the brokers {_broker_list(ids)}"
    if rule == limits.NODE_REF:
        return None if value in _addressable(cfg) else f"node {value} is not a node messages can be addressed to"
    if rule == limits.CLIENT_REF:
        return None if 0 <= value < limits.MAX_CLIENTS else f"client {value} is not one of 0..{limits.MAX_CLIENTS - 1}"
    if isinstance(cfg, TxnConfig):
        known = {
            limits.DATA_PARTITION_REF: set(cfg.data),
            limits.LOG_PARTITION_REF: set(cfg.log_partitions),
            limits.TXN_ID_REF: set(cfg.transactional_ids),
            limits.TXN_ID_OR_NONE_REF: {*cfg.transactional_ids, ""},
            limits.GROUP_REF: set(cfg.groups),
        }.get(rule)
        if known is not None and value not in known:
            return f"{value!r} is not a {rule} of the configuration ({', '.join(repr(k) for k in sorted(known))})"
    return None


def _addressable(cfg: AnyConfig) -> set[int]:
    nodes = {CONTROLLER_NODE, *brokers(cfg)}
    if isinstance(cfg, TxnConfig):
        for c in range(limits.MAX_CLIENTS):
            nodes.update((PRODUCER_NODE_BASE - c, CONSUMER_NODE_BASE - c))
        nodes.add(GROUP_CLIENT_NODE)
    else:
        nodes.update(REPLICATION_CLIENT_NODES)
    return nodes


WIRE_RANGES: dict[str, tuple[int, int]] = {
    "pid": (-(2**63), 2**63 - 1),
    "expected_pid": (-(2**63), 2**63 - 1),
    "epoch": (-(2**15), 2**15 - 1),
    "expected_epoch": (-(2**15), 2**15 - 1),
    "base_seq": (-(2**31), 2**31 - 1),
    "timeout_ms": (-(2**31), 2**31 - 1),
    "fetch_offset": (-(2**63), 2**63 - 1),
    "ctxn": (-1, 2**63 - 1),
}
"""The ranges a wire request's integers can take: what the wire carries (producer id int64, epoch
int16, sequence and timeout int32, fetch offset int64: a real client may send any of them, and a
served trace must replay), and the server's own client-transaction numbers."""


def wire_request_problem(text: Any, cfg: AnyConfig) -> str | None:
    """What is wrong with a ``wire_request``'s request text (impl/txn/wire.py): it must decode to a
    client request of the exactly-once slice whose integers are in Kafka's ranges and whose
    partitions, transactional id and group are the configuration's."""
    from kconform.impl.txn.wire import payload_from_json

    if not isinstance(cfg, TxnConfig):
        return "a wire request is an operation of the exactly-once slice"
    try:
        payload = payload_from_json(text)
    except ValueError as exc:
        return str(exc)
    kind = type(payload).__name__
    for name, (lo, hi) in WIRE_RANGES.items():
        value = getattr(payload, name, None)
        if value is not None and not lo <= value <= hi:
            return f"{kind}.{name} = {value} is outside {lo}..{hi}"
    partition = getattr(payload, "partition", None)
    if partition is not None and partition not in cfg.log_partitions:
        return f"{kind}.partition {partition!r} is not a partition of the configuration"
    for p in getattr(payload, "partitions", ()):
        if p not in cfg.data:
            return f"{kind}.partitions: {p!r} is not a data partition of the configuration"
    for o in getattr(payload, "offsets", ()):
        if o.partition not in cfg.data or not 0 <= o.offset < 2**63:
            return f"{kind}.offsets: ({o.partition!r}, {o.offset}) is not a data partition and int64 offset"
    for rid in getattr(payload, "rids", ()):
        if not 0 <= rid < 2**63:
            return f"{kind}.rids: {rid} is not a record id (int64 >= 0)"
    txn_id = getattr(payload, "txn_id", None)
    optional = kind in ("InitPidRequest", "TxnProduceRequest")
    if txn_id is not None and (txn_id or not optional) and txn_id not in cfg.transactional_ids:
        return f"{kind}.txn_id {txn_id!r} is not a transactional id of the configuration"
    group = getattr(payload, "group", None)
    if group is not None and group not in cfg.groups:
        return f"{kind}.group {group!r} is not a group of the configuration"
    return None
