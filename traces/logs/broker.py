"""Facts in broker log messages (server.log, state-change.log, controller.log), Kafka 0.10 to 4.x.

Each known message has an *anchor* (a phrase only it contains) and a pattern read from Kafka's
sources at the release tags: when the anchor is present but the pattern does not match, the line
is a known line that does not parse (an error naming file:line, or a counted warning with
``--lenient``). The message's own prefix names the printing broker: ``[Partition tp broker=N]``
(Partition, 1.1+), ``Partition [t,p] on broker N:`` (0.10-1.0), ``[Broker id=N]`` (the state-change
logger), ``[ReplicaFetcher replicaId=N, ...]`` (2.0+), ``[KafkaServer id=N]``.

Messages and sources (kafka.cluster.Partition, kafka.server.AbstractFetcherThread /
ReplicaFetcherThread, kafka.controller, kafka.coordinator.transaction.TransactionMetadata /
TransactionCoordinator, kafka.log.LogManager):

- ``starts at Leader Epoch E from offset S`` (0.11-2.7), ``Leader tp [with topic id X] starts at
  leader epoch E from offset S with [partition epoch P, ]high watermark H ...`` (2.8+),
  ``Follower tp ... starts at leader epoch E from offset S with [partition epoch P and ]high
  watermark H. [Current leader is L.]`` (2.8+);
- ``Shrinking ISR [for partition tp ]from A to B[. Leader: (highWatermark: H, endOffset: L). ...]``
  and ``Expanding ISR [for partition tp ]from A to B``; ``ISR updated to A and [zk]version updated to V``;
- ``Truncating partition tp [with TruncationState(offset=T, completed=C)] (due to|to) leader epoch
  and offset EpochEndOffset(..., leaderEpoch=E, endOffset=O)`` / ``... local high watermark H``
  (2.x+), ``Truncating tp to offset T below high watermark H`` (1.1+), ``Reset fetch offset for
  partition tp from X to current leader's latest offset Y`` (out-of-range: truncation to Y);
- ``LeaderAndIsrPartitionState(topicName='t', partitionIndex=p, ..., leader=L, leaderEpoch=E,
  isr=[...], ...)`` / ``UpdateMetadataPartitionState(...)`` (2.4+), ``PartitionState(controllerEpoch=C,
  leader=L, leaderEpoch=E, isr=..., ...) ... for partition tp`` (0.10-2.3), ``(Leader:L,ISR:...,
  LeaderEpoch:E,ControllerEpoch:C)`` (controller's leader cache);
- the controller's own decisions: ``Changed partition tp from A to B with state LeaderAndIsr(...)``
  (ZooKeeper controller, 1.1-3.x) and ``Replayed PartitionRecord for new partition tp with topic ID X
  and PartitionRegistration(...)`` (KRaft QuorumController, 3.x-4.x);
- ``TransactionalId X complete transition from S to TxnTransitMetadata(... txnState=T ...)``,
  ``Initialized transactionalId X with producerId P and producer epoch E``;
- unclean elections (``unclean`` / ``potential data loss``), ``Deleted log for partition tp``, broker
  start lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from kconform.model.txn_graph import STATES
from kconform.traces.logs.log4j import Record
from kconform.traces.logs.observations import (
    BROKER_START,
    FOLLOWER_START,
    ISR_EXPAND,
    ISR_SHRINK,
    ISR_UPDATED,
    LEADER_START,
    LOG_DELETED,
    PARTITION_STATE,
    TRUNCATION,
    TRUNCATION_BELOW_HW,
    TXN_INIT,
    TXN_TRANSITION,
    UNCLEAN_ELECTION,
    Obs,
    cut,
)


class LineParseError(ValueError):
    """A known message (its anchor is present) that does not match its pattern."""


_NODE_PATTERNS = (
    re.compile(r"\[Partition \S+ broker=(-?\d+)\]"),
    re.compile(r"Partition \[[^\]]+\] on broker (-?\d+)"),
    re.compile(r"\[Broker id=(-?\d+)\]"),
    re.compile(r"\[ReplicaFetcher replicaId=(-?\d+)"),
    re.compile(r"\[(?:KafkaServer|BrokerServer|ControllerServer|KafkaRaftServer) (?:id|nodeId)=(-?\d+)\]"),
    re.compile(r"\[(?:Kafka Server|Broker) (-?\d+)\]"),
    re.compile(r"\[TransactionCoordinator id=(-?\d+)\]"),
    re.compile(r"\[Transaction State Manager (-?\d+)\]"),
    re.compile(r"\[(?:GroupCoordinator|GroupMetadataManager brokerId=) ?(-?\d+)\]"),
    re.compile(r"^Broker (-?\d+) "),
    re.compile(r"\[(?:Controller|QuorumController) id=(-?\d+)"),
    re.compile(r"\[Controller (-?\d+)\]"),
)


def node_of(message: str) -> int | None:
    """The broker that printed ``message``, from Kafka's log prefixes; None if it does not say."""
    head = message[:160]
    for pattern in _NODE_PATTERNS:
        m = pattern.search(head)
        if m:
            return int(m.group(1))
    return None


def _tp(raw: str) -> str:
    """``topic-N`` from ``topic-N`` or the 0.x ``[topic,N]`` form."""
    raw = raw.strip().rstrip(".,:")
    m = re.fullmatch(r"\[([^,\]]+),(\d+)\]", raw)
    return f"{m.group(1)}-{m.group(2)}" if m else raw


_IDS = re.compile(r"-?\d+")


def _id_list(raw: str) -> str:
    ids = _IDS.findall(raw)
    return ",".join(ids)


Builder = Callable[[Record, str, int | None], list[Obs]]


def _base(kind: str, rec: Record, file: str, node: int | None) -> Obs:
    return Obs(
        kind=kind,
        file=file,
        line=rec.line,
        text=cut(rec.text),
        stream=f"{file}#node={node if node is not None else '?'}",
        ts=rec.ts,
        node=node,
    )


# ---- leader / follower starts -----------------------------------------------------------------

_START = re.compile(
    r"(?:(?P<role>Leader|Follower) )?(?P<tp>\S+?)(?: with topic id (?P<tid>\S+))? starts at [Ll]eader [Ee]poch "
    r"(?P<e>-?\d+) from offset (?P<s>-?\d+)(?P<rest>.*)$"
)
_HW = re.compile(r"high watermark (-?\d+)")
_PEPOCH = re.compile(r"partition epoch (-?\d+)")
_ISR = re.compile(r"ISR \[([\d,\s]*)\]")
_CURRENT_LEADER = re.compile(r"Current leader is (-?\d+)")


def _start(rec: Record, file: str, node: int | None) -> list[Obs]:
    m = _START.search(rec.message)
    if not m:
        raise LineParseError("'starts at leader epoch' line: expected '<tp> starts at leader epoch E from offset S'")
    rest = m.group("rest")
    follower = m.group("role") == "Follower"
    obs = _base(FOLLOWER_START if follower else LEADER_START, rec, file, node)
    obs.partition = _tp(m.group("tp"))
    obs.topic_id = m.group("tid")
    obs.leader_epoch = int(m.group("e"))
    obs.leo = int(m.group("s"))
    if (h := _HW.search(rest)) is not None:
        obs.hw = int(h.group(1))
    if (p := _PEPOCH.search(rest)) is not None:
        obs.partition_epoch = int(p.group(1))
    if (i := _ISR.search(rest)) is not None:
        obs.isr = _id_list(i.group(1))
    if follower:
        c = _CURRENT_LEADER.search(rest)
        obs.leader = int(c.group(1)) if c else None
    else:
        obs.leader = node
    return [obs]


# ---- ISR changes ------------------------------------------------------------------------------

_ISR_CHANGE = re.compile(
    r"(?P<what>Shrinking|Expanding) ISR (?:for partition (?P<tp>\S+) )?from (?P<from>[\w(),\[\]\s]*?) to "
    r"(?P<to>(?:Set\(|\[)?[\d,\s]*[\d\]\)]|(?:Set\(|\[)?\s*(?:\)|\]))(?P<rest>.*)$"
)
_LEADER_MARKS = re.compile(r"Leader: \(highWatermark: (-?\d+), endOffset: (-?\d+)\)")
_PARTITION_IDENT = re.compile(r"\[Partition (\S+) broker=-?\d+\]|Partition (\[[^\]]+\]) on broker")


def _isr_change(rec: Record, file: str, node: int | None) -> list[Obs]:
    m = _ISR_CHANGE.search(rec.message)
    if not m or not _IDS.search(m.group("from")):
        raise LineParseError("ISR change line: expected 'Shrinking|Expanding ISR from A to B'")
    obs = _base(ISR_SHRINK if m.group("what") == "Shrinking" else ISR_EXPAND, rec, file, node)
    tp = m.group("tp")
    if tp is None and (ident := _PARTITION_IDENT.search(rec.message)) is not None:
        tp = ident.group(1) or ident.group(2)
    obs.partition = _tp(tp) if tp else None
    obs.prev_state = _id_list(m.group("from"))
    obs.isr = _id_list(m.group("to"))
    if (marks := _LEADER_MARKS.search(m.group("rest"))) is not None:
        obs.hw, obs.leo = int(marks.group(1)), int(marks.group(2))
    return [obs]


_ISR_UPDATED = re.compile(
    r"ISR updated to \[?(?P<isr>[\d,\s]*?)\]?\s*(?:\(under-min-isr\)\s*)?and (?:zkVersion|version) updated to "
    r"\[?(?P<v>-?\d+)\]?"
)


def _isr_updated(rec: Record, file: str, node: int | None) -> list[Obs]:
    """The leader's committed ISR change: ``ISR updated to [A] and zkVersion updated to [V]`` (0.9-2.x,
    Partition.updateIsr) and ``ISR updated to A [(under-min-isr)] and version updated to P`` (2.7+,
    AlterPartition / AlterIsr answers)."""
    m = _ISR_UPDATED.search(rec.message)
    if not m:
        raise LineParseError("ISR update line: expected 'ISR updated to A and [zk]version updated to V'")
    obs = _base(ISR_UPDATED, rec, file, node)
    if (ident := _PARTITION_IDENT.search(rec.message)) is not None:
        obs.partition = _tp(ident.group(1) or ident.group(2))
    obs.isr = _id_list(m.group("isr"))
    obs.partition_epoch = int(m.group("v"))
    return [obs]


# ---- truncation -------------------------------------------------------------------------------

_TRUNC = re.compile(
    r"Truncating partition (?P<tp>\S+?)(?: with TruncationState\(offset=(?P<t>-?\d+), completed=(?P<c>true|false)\))? "
    r"(?:due to|to) (?:(?:local )?high watermark (?P<h>-?\d+)|leader epoch and offset EpochEndOffset\((?P<eeo>[^)]*)\))"
)
_KEYVAL = re.compile(r"(?<!\w)(\w+)=(-?\w+)")
_BELOW_HW = re.compile(r"Truncating (?:(?P<tp>\S+) )?to offset (?P<t>-?\d+) below high watermark (?P<h>-?\d+)")
_LOG_IDENT = re.compile(r"\[(?:UnifiedLog|Log|LocalLog) partition=([^,\]\s]+)")


def _truncation(rec: Record, file: str, node: int | None) -> list[Obs]:
    m = _TRUNC.search(rec.message)
    if not m:
        raise LineParseError(
            "truncation line: expected 'Truncating partition tp ... EpochEndOffset(...)' or '... high watermark H'"
        )
    obs = _base(TRUNCATION, rec, file, node)
    obs.partition = _tp(m.group("tp"))
    if m.group("t") is not None:
        obs.offset = int(m.group("t"))
        obs.completed = m.group("c") == "true"
    if m.group("h") is not None:
        obs.hw = int(m.group("h"))
        if obs.offset is None:
            obs.offset = obs.hw
            obs.completed = True
    else:
        kv = dict(_KEYVAL.findall(m.group("eeo")))
        try:
            obs.leader_epoch = int(kv["leaderEpoch"])
            obs.end_offset = int(kv["endOffset"])
            obs.error = int(kv.get("errorCode", "0"))
        except (KeyError, ValueError):
            raise LineParseError("truncation line: EpochEndOffset(...) without leaderEpoch / endOffset") from None
    return [obs]


_RESET = re.compile(
    r"Reset fetch offset for partition (?P<tp>\S+) from (?P<x>-?\d+) to current leader's latest offset (?P<y>-?\d+)"
)


_RESET_TP = re.compile(r"(?:for partition|offset \S+ for partition|Partition) (\S+)")


def _reset(rec: Record, file: str, node: int | None) -> list[Obs]:
    """A follower's out-of-range answer handling (AbstractFetcherThread, 1.1-4.x): it truncates to the
    leader's end offset (a completed truncation without an epoch answer), or starts its log afresh at
    another offset (the truncation's offset is then unknown: ``offset`` null)."""
    m = _RESET.search(rec.message)
    obs = _base(TRUNCATION, rec, file, node)
    obs.completed = True
    if m is None:
        # other wordings (the log start offset, 'Current offset X for partition tp is out of range'):
        # the log was reset to an offset the line may not state; the partition is all it tells
        tp = _RESET_TP.search(rec.message)
        if tp is None:
            return []
        obs.partition = _tp(tp.group(1))
        return [obs]
    obs.partition = _tp(m.group("tp"))
    obs.offset = int(m.group("y"))
    return [obs]


def _below_hw(rec: Record, file: str, node: int | None) -> list[Obs]:
    m = _BELOW_HW.search(rec.message)
    if not m:
        raise LineParseError("truncation line: expected 'Truncating [tp] to offset T below high watermark H'")
    obs = _base(TRUNCATION_BELOW_HW, rec, file, node)
    tp = m.group("tp")
    if tp is None and (ident := _LOG_IDENT.search(rec.message)) is not None:
        tp = ident.group(1)  # 4.1+ (KAFKA-19474) prints it from UnifiedLog, whose prefix names the partition
    obs.partition = _tp(tp) if tp else None
    obs.offset = int(m.group("t"))
    obs.hw = int(m.group("h"))
    return [obs]


# ---- controller partition states ----------------------------------------------------------------

_STATE_NEW = re.compile(r"(?:LeaderAndIsr|UpdateMetadata)PartitionState\((?P<body>[^()]*(?:\([^()]*\)[^()]*)*)\)")
_STATE_OLD = re.compile(r"PartitionState\((?P<body>controllerEpoch=[^()]*)\)")
_FOR_PARTITION = re.compile(r"for partition (\S+)")
_CACHE = re.compile(r"\(Leader:(?P<l>-?\d+),ISR:(?P<isr>[\d,]*),(?:[A-Za-z]+:[\w]+,)*?LeaderEpoch:(?P<e>-?\d+)")
_CACHE_TP = re.compile(r"(?:for|partition) (\S+) (?:is updated|to)")


def _partition_state(rec: Record, file: str, node: int | None) -> list[Obs]:
    msg = rec.message
    out: list[Obs] = []
    for m in _STATE_NEW.finditer(msg):
        kv = dict(re.findall(r"(?<!\w)(\w+)=('[^']*'|\[[^\]]*\]|[^,\s)]+)", m.group("body")))
        try:
            topic = kv["topicName"].strip("'")
            index = int(kv["partitionIndex"])
            obs = _base(PARTITION_STATE, rec, file, node)
            obs.partition = f"{topic}-{index}"
            obs.leader = int(kv["leader"])
            obs.leader_epoch = int(kv["leaderEpoch"])
        except (KeyError, ValueError):
            raise LineParseError(
                "partition state: expected topicName, partitionIndex, leader and leaderEpoch"
            ) from None
        obs.isr = _id_list(kv.get("isr", ""))
        pe = kv.get("partitionEpoch", kv.get("zkVersion"))
        obs.partition_epoch = int(pe) if pe is not None and _IDS.fullmatch(pe) else None
        out.append(obs)
    if out:
        return out
    m_old = _STATE_OLD.search(msg)
    if m_old:
        kv = dict(_KEYVAL.findall(m_old.group("body")))
        tp = _FOR_PARTITION.search(msg[m_old.end() :]) or _FOR_PARTITION.search(msg)
        try:
            obs = _base(PARTITION_STATE, rec, file, node)
            obs.leader = int(kv["leader"])
            obs.leader_epoch = int(kv["leaderEpoch"])
        except (KeyError, ValueError):
            raise LineParseError("partition state: expected leader and leaderEpoch") from None
        if tp is None:
            return []  # a state without its partition (batched request dumps): nothing to key it by
        obs.partition = _tp(tp.group(1))
        return [obs]
    c = _CACHE.search(msg)
    if c:
        tp_m = _CACHE_TP.search(msg)
        if tp_m is None:
            return []
        obs = _base(PARTITION_STATE, rec, file, node)
        obs.partition = _tp(tp_m.group(1))
        obs.leader = int(c.group("l"))
        obs.leader_epoch = int(c.group("e"))
        obs.isr = _id_list(c.group("isr"))
        return [obs]
    if "PartitionState(" not in msg:
        return []  # ",LeaderEpoch:" in some other controller line: nothing the suite reads
    raise LineParseError("partition state: no LeaderAndIsr/UpdateMetadata partition state in the line")


# ---- controller decisions ----------------------------------------------------------------------

_ZK_CHANGE = re.compile(
    r"Changed partition (?P<tp>\S+) from (?P<from>\w+) to (?P<to>\w+) with state "
    r"LeaderAndIsr\((?P<body>[^()]*(?:\([^()]*\)[^()]*)*)\)"
)
_KRAFT_REPLAY = re.compile(
    r"Replayed PartitionRecord for new partition (?P<tp>\S+) with topic ID (?P<tid>\S+) and "
    r"PartitionRegistration\((?P<body>[^()]*)\)"
)
_LIST_OR_SCALAR = re.compile(r"(?<!\w)(\w+)=(List\([^)]*\)|Set\([^)]*\)|\[[^\]]*\]|[^,\s)]+)")


def _controller_state(rec: Record, file: str, node: int | None) -> list[Obs]:
    """A partition state the controller decided: the ZooKeeper controller's ``Changed partition tp
    from A to B with state LeaderAndIsr(leader=L, leaderEpoch=E, isr=List(...), zkVersion=Z |
    leaderRecoveryState=R, partitionEpoch=P)`` (PartitionStateMachine, 1.1-3.x) and the KRaft
    controller's ``Replayed PartitionRecord for new partition tp with topic ID X and
    PartitionRegistration(replicas=[..], isr=[..], ..., leader=L, ..., leaderEpoch=E,
    partitionEpoch=P).`` (ReplicationControlManager, 3.x-4.x). ``state`` is ``controller``;
    ``prev_state`` the ZooKeeper partition state it left (``NewPartition`` starts a partition), or
    ``new`` for a KRaft partition record."""
    msg = rec.message
    m = _ZK_CHANGE.search(msg)
    kraft = None if m else _KRAFT_REPLAY.search(msg)
    found = m or kraft
    if found is None:
        raise LineParseError(
            "controller state line: expected 'Changed partition tp from A to B with state LeaderAndIsr(...)' "
            "or 'Replayed PartitionRecord for new partition tp with topic ID X and PartitionRegistration(...)'"
        )
    kv = dict(_LIST_OR_SCALAR.findall(found.group("body")))
    obs = _base(PARTITION_STATE, rec, file, node)
    obs.partition = _tp(found.group("tp"))
    try:
        obs.leader = int(kv["leader"])
        obs.leader_epoch = int(kv["leaderEpoch"])
    except (KeyError, ValueError):
        raise LineParseError("controller state line: expected leader and leaderEpoch") from None
    obs.isr = _id_list(kv.get("isr", ""))
    pe = kv.get("partitionEpoch", kv.get("zkVersion"))
    obs.partition_epoch = int(pe) if pe is not None and _IDS.fullmatch(pe) else None
    obs.state = "controller"
    if m is not None:
        obs.prev_state = m.group("from")
    else:
        obs.prev_state = "new"
        obs.topic_id = kraft.group("tid").rstrip(".") if kraft is not None else None
    return [obs]


# ---- transaction coordinator ----------------------------------------------------------------------

_TRANSITION = re.compile(
    r"TransactionalId (?P<id>.+?) complete transition from (?P<from>\w+) to TxnTransitMetadata\((?P<body>.*)\)"
)
_INIT = re.compile(
    r"Initialized transactionalId (?P<id>.+?) with producerId (?P<pid>-?\d+) and producer epoch (?P<e>-?\d+)"
    r"(?: on partition (?P<tp>\S+))?"
)


def _transition(rec: Record, file: str, node: int | None) -> list[Obs]:
    m = _TRANSITION.search(rec.message)
    if not m:
        raise LineParseError(
            "transaction transition line: expected "
            "'TransactionalId X complete transition from S to TxnTransitMetadata(...)'"
        )
    kv = dict(_KEYVAL.findall(m.group("body")))
    src, dst = m.group("from"), kv.get("txnState", "")
    if src not in STATES or dst not in STATES:
        raise LineParseError(f"transaction transition line: unknown state in {src!r} -> {dst!r}")
    obs = _base(TXN_TRANSITION, rec, file, node)
    obs.txn_id = m.group("id")
    obs.prev_state, obs.state = src, dst
    try:
        obs.pid = int(kv["producerId"])
        obs.producer_epoch = int(kv["producerEpoch"])
    except (KeyError, ValueError):
        raise LineParseError(
            "transaction transition line: TxnTransitMetadata without producerId / producerEpoch"
        ) from None
    version = kv.get("clientTransactionVersion")
    obs.isolation = int(version) if version is not None and version.isdigit() else None
    return [obs]


def _init(rec: Record, file: str, node: int | None) -> list[Obs]:
    m = _INIT.search(rec.message)
    if not m:
        raise LineParseError(
            "InitProducerId line: expected 'Initialized transactionalId X with producerId P and producer epoch E'"
        )
    obs = _base(TXN_INIT, rec, file, node)
    obs.txn_id = m.group("id")
    obs.pid = int(m.group("pid"))
    obs.producer_epoch = int(m.group("e"))
    obs.partition = m.group("tp")
    return [obs]


# ---- unclean elections, deletions, starts ----------------------------------------------------------

_TP_ANY = re.compile(r"\[([^\s,\]]+),(\d+)\]|(?:partition|for) ([\w.\-]+-\d+)\b")


def _unclean(rec: Record, file: str, node: int | None) -> list[Obs]:
    obs = _base(UNCLEAN_ELECTION, rec, file, node)
    m = _TP_ANY.search(rec.message)
    if m:
        obs.partition = f"{m.group(1)}-{m.group(2)}" if m.group(1) else m.group(3)
    return [obs]


_DELETED = re.compile(r"Deleted log for partition (\S+)")


def _deleted(rec: Record, file: str, node: int | None) -> list[Obs]:
    m = _DELETED.search(rec.message)
    if not m:
        raise LineParseError("log deletion line: expected 'Deleted log for partition tp'")
    obs = _base(LOG_DELETED, rec, file, node)
    obs.partition = _tp(m.group(1))
    return [obs]


_STARTED = re.compile(
    r"^(?:\[(?:KafkaServer|BrokerServer|KafkaRaftServer|Kafka Server)[^\]]*\],?\s*)?(?:started|starting)\s*\.?$"
    r"|Transition from STARTING to STARTED|Kafka Server started"
)


def _start_line(rec: Record, file: str, node: int | None) -> list[Obs]:
    return [_base(BROKER_START, rec, file, node)]


# anchor -> builder, tried in order; the first anchor found decides the line's kind
ANCHORS: tuple[tuple[str, Builder], ...] = (
    ("starts at Leader Epoch", _start),
    ("starts at leader epoch", _start),
    ("Shrinking ISR ", _isr_change),
    ("Expanding ISR ", _isr_change),
    ("ISR updated to ", _isr_updated),
    ("below high watermark", _below_hw),
    ("Truncating partition ", _truncation),
    ("Reset fetch offset", _reset),
    (" with state LeaderAndIsr(", _controller_state),
    ("Replayed PartitionRecord for new partition ", _controller_state),
    ("LeaderAndIsrPartitionState(", _partition_state),
    ("UpdateMetadataPartitionState(", _partition_state),
    ("PartitionState(controllerEpoch=", _partition_state),
    (",LeaderEpoch:", _partition_state),
    (" complete transition from ", _transition),
    ("Initialized transactionalId ", _init),
    ("Deleted log for partition ", _deleted),
)


WINDOW = 4096
"""Messages longer than this are read in a window around their anchor."""


def parse_record(rec: Record, file: str) -> list[Obs] | None:
    """The observations of a broker record, or None when the message is not one the suite knows.

    Raises LineParseError for a known message that does not parse.
    """
    msg = rec.message
    for anchor, build in ANCHORS:
        at = msg.find(anchor)
        if at >= 0:
            if len(msg) > WINDOW and build is not _partition_state:
                # known messages are short: read them in a window around the anchor, so that a
                # pathological line cannot make the patterns' search quadratic
                rec = replace(rec, message=msg[max(0, at - 512) : at + 2048])
            return build(rec, file, node_of(msg))
    low = msg.lower()
    if ("unclean" in low and "elect" in low and "enable" not in low) or "potential data loss" in low:
        return _unclean(rec, file, node_of(msg))
    if len(msg) < 120 and _STARTED.search(msg) and (not rec.logger or "Server" in rec.logger):
        return _start_line(rec, file, node_of(msg))
    return None
