"""Facts in client logs: the Java client's Fetch traffic at DEBUG/TRACE and librdkafka's ``FETCH``
debug lines.

Java client (org.apache.kafka.clients.NetworkClient, FetchSessionHandler):

- 3.0+: ``Sending FETCH request with header RequestHeader(apiKey=FETCH, ..., clientId=C,
  correlationId=K) and timeout T to node N: FetchRequestData(..., isolationLevel=I, sessionId=S,
  sessionEpoch=E, topics=[FetchTopic(topic='t', [topicId=X, ]partitions=[FetchPartition(partition=P,
  currentLeaderEpoch=..., fetchOffset=O, lastFetchedEpoch=..., ...)])], ...)`` and ``Received FETCH
  response from node N for request with header RequestHeader(... correlationId=K): FetchResponseData(
  throttleTimeMs=..., errorCode=R, sessionId=S, responses=[FetchableTopicResponse(topic='t', ...,
  partitions=[PartitionData(partitionIndex=P, errorCode=..., highWatermark=H, lastStableOffset=L,
  logStartOffset=..., [divergingEpoch=EpochEndOffset(epoch=.., endOffset=..), ...]
  abortedTransactions=null|[AbortedTransaction(producerId=.., firstOffset=..)], ...)])])``;
- 1.1-2.x TRACE ``Completed receive from node N for FETCH with correlation id K, received
  {throttle_time_ms=..,error_code=..,session_id=..,responses=[{topic=t,partition_responses=[
  {partition_header={partition=P,error_code=..,high_watermark=H,last_stable_offset=L,...}``;
- FetchSessionHandler (1.1+, KIP-227): ``Built full|incremental fetch (sessionId=S, epoch=E) for node
  N``, ``Node N sent a full fetch response that created a new incremental fetch session S``,
  ``Node N was unable to process the fetch request with (sessionId=S, epoch=E): ERROR``,
  ``Error sending fetch request (sessionId=S, epoch=E) to node N``.

librdkafka (rdkafka_fetcher.c / rdkafka_broker.c): ``Topic t [P] MessageSet size Z, error "E",
MaxOffset H, LSO L, Ver ...`` (MaxOffset is the answer's high watermark).
"""

from __future__ import annotations

import re

from kconform.traces.logs.broker import LineParseError
from kconform.traces.logs.log4j import Record
from kconform.traces.logs.observations import FETCH_REQUEST, FETCH_RESPONSE, FETCH_SESSION, Obs, cut

_CLIENT = re.compile(r"clientId=([^,\]\)]+)")
_NODE_TO = re.compile(r"to node (-?\d+)")
_NODE_FROM = re.compile(r"from node (-?\d+)")
_CORR = re.compile(r"correlationId=(-?\d+)|correlation id (-?\d+)")
_KV_CAMEL = re.compile(r"(?<!\w)(\w+)=(-?[\w.]+)")
_ABORTED = re.compile(
    r"AbortedTransaction\(producerId=(-?\d+), firstOffset=(-?\d+)\)|\{producer_id=(-?\d+),first_offset=(-?\d+)"
)
_EPOCH_WORDS = {"INITIAL": 0, "FINAL": -1}
_SESSION_WORDS = {"INVALID": 0}


_FETCHER = re.compile(r"\[ReplicaFetcher replicaId=(-?\d+), leaderId=(-?\d+), fetcherId=(-?\d+)\]")


def _client_of(message: str, fallback: str) -> str:
    """The client that printed ``message``: its clientId, or for a broker's replica fetcher thread
    (each thread has its own fetch session) the thread's identity."""
    m = _CLIENT.search(message)
    if m:
        return m.group(1).strip()
    f = _FETCHER.search(message[:200])
    if f:
        return f"replica-fetcher-{f.group(1)}-{f.group(2)}-{f.group(3)}"
    return fallback


def _base(kind: str, rec: Record, file: str, client: str, node: int | None) -> Obs:
    return Obs(
        kind=kind,
        file=file,
        line=rec.line,
        text=cut(rec.text),
        stream=f"{file}#client={client}",
        ts=rec.ts,
        client=client,
        node=node,
    )


def _first_int(kv: dict[str, str], *keys: str) -> int | None:
    for key in keys:
        raw = kv.get(key)
        if raw is not None:
            try:
                return int(raw)
            except ValueError:
                return None
    return None


def _request(rec: Record, file: str) -> list[Obs]:
    msg = rec.message
    body_at = msg.find("FetchRequestData(")
    if body_at < 0:
        body_at = msg.find("{")
    node_m = _NODE_TO.search(msg)
    corr = _CORR.search(msg)
    if body_at < 0 or node_m is None:
        raise LineParseError("FETCH request line: expected '... to node N: FetchRequestData(...)'")
    client = _client_of(msg, "?")
    head = msg[body_at : body_at + 600]
    kv = dict(_KV_CAMEL.findall(head.split("topics=", 1)[0]))
    session = _first_int(kv, "sessionId", "session_id")
    epoch = _first_int(kv, "sessionEpoch", "session_epoch")
    isolation = _first_int(kv, "isolationLevel", "isolation_level")
    template = _base(FETCH_REQUEST, rec, file, client, int(node_m.group(1)))
    template.session_id, template.session_epoch, template.isolation = session, epoch, isolation
    template.correlation = int(corr.group(1) or corr.group(2)) if corr else None
    out: list[Obs] = []
    for topic, parts in _topics(msg[body_at:], ("FetchTopic(", "{topic=")):
        for chunk in _chunks(parts, ("FetchPartition(", "{partition=")):
            pkv = dict(_KV_CAMEL.findall(chunk))
            obs = _copy(template)
            index = _first_int(pkv, "partition")
            obs.partition = f"{topic}-{index}" if index is not None else None
            obs.offset = _first_int(pkv, "fetchOffset", "fetch_offset")
            obs.leader_epoch = _first_int(pkv, "currentLeaderEpoch", "current_leader_epoch")
            obs.end_offset = _first_int(pkv, "lastFetchedEpoch", "last_fetched_epoch")
            out.append(obs)
    return out or [template]


def _response(rec: Record, file: str, names: dict[str, str]) -> list[Obs]:
    msg = rec.message
    body_at = msg.find("FetchResponseData(")
    if body_at < 0:
        body_at = msg.find("received {")
    node_m = _NODE_FROM.search(msg)
    if body_at < 0 or node_m is None:
        raise LineParseError("FETCH response line: expected '... from node N ...: FetchResponseData(...)'")
    corr = _CORR.search(msg)
    client = _client_of(msg, "?")
    head = msg[body_at : body_at + 300].split("responses=", 1)[0]
    kv = dict(_KV_CAMEL.findall(head))
    template = _base(FETCH_RESPONSE, rec, file, client, int(node_m.group(1)))
    template.session_id = _first_int(kv, "sessionId", "session_id")
    template.error = _first_int(kv, "errorCode", "error_code")
    template.correlation = int(corr.group(1) or corr.group(2)) if corr else None
    out: list[Obs] = []
    for topic, parts in _topics(msg[body_at:], ("FetchableTopicResponse(", "{topic=")):
        for chunk in _chunks(parts, ("PartitionData(partitionIndex=", "partition_header={partition=")):
            pkv = dict(_KV_CAMEL.findall(chunk))
            obs = _copy(template)
            index = _first_int(pkv, "partitionIndex", "partition")
            name = names.get(topic, topic)
            obs.partition = f"{name}-{index}" if index is not None and name else None
            obs.topic_id = pkv.get("topicId")
            obs.hw = _first_int(pkv, "highWatermark", "high_watermark")
            obs.lso = _first_int(pkv, "lastStableOffset", "last_stable_offset")
            obs.log_start = _first_int(pkv, "logStartOffset", "log_start_offset")
            obs.partition_error = _first_int(pkv, "errorCode", "error_code")
            aborted = [(int(a or c), int(b or d)) for a, b, c, d in _ABORTED.findall(chunk)]
            if aborted:
                obs.pid = aborted[0][0]
                obs.offset = min(first for _pid, first in aborted)
                obs.aborted = ";".join(f"{p}:{f}" for p, f in aborted)
            if obs.hw is None:
                raise LineParseError("FETCH response partition without highWatermark")
            out.append(obs)
    return out or [template]


def _copy(obs: Obs) -> Obs:
    return Obs(**{name: getattr(obs, name) for name in obs.__slots__})


def _topics(body: str, openers: tuple[str, ...]) -> list[tuple[str, str]]:
    """(topic, text of its partitions) for each topic block in a Fetch request/response body."""
    starts: list[tuple[int, str]] = []
    for opener in openers:
        i = body.find(opener)
        while i >= 0:
            starts.append((i, opener))
            i = body.find(opener, i + 1)
    starts.sort()
    out: list[tuple[str, str]] = []
    for n, (i, opener) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(body)
        block = body[i + len(opener) : end]
        m = re.match(r"topic='([^']*)'|([^,}]+)", block)
        topic = (m.group(1) if m and m.group(1) is not None else (m.group(2) if m else "")) or ""
        tid = re.search(r"topicId=([\w\-]+)", block[:120])
        out.append((topic or (tid.group(1) if tid else ""), block))  # a topic id when the name is empty
    return out


def _chunks(block: str, openers: tuple[str, ...]) -> list[str]:
    for opener in openers:
        if opener in block:
            return [opener + part for part in block.split(opener)[1:]]
    return []


_SESSION_NUM = r"(-?\d+|INVALID|INITIAL|FINAL)"
_BUILT = re.compile(
    r"Built (?P<how>full|incremental) fetch \(sessionId="
    + _SESSION_NUM
    + r", epoch="
    + _SESSION_NUM
    + r"\) for node (?P<node>-?\d+)"
)
_CREATED = re.compile(
    r"Node (?P<node>-?\d+) sent a full fetch response that created a new incremental fetch session (?P<sid>-?\d+)"
)
_UNABLE = re.compile(
    r"Node (?P<node>-?\d+) was unable to process the fetch request with \(sessionId="
    + _SESSION_NUM
    + r", epoch="
    + _SESSION_NUM
    + r"\): (?P<err>\w+)"
)
_ERROR_SENDING = re.compile(
    r"Error sending fetch request \(sessionId="
    + _SESSION_NUM
    + r", epoch="
    + _SESSION_NUM
    + r"\) to node (?P<node>-?\d+)"
)
_CLOSING = re.compile(r"Node (?P<node>-?\d+) sent an incremental fetch response closing session (?P<sid>-?\d+)")


def _num(raw: str) -> int:
    if raw in _EPOCH_WORDS:
        return _EPOCH_WORDS[raw]
    if raw in _SESSION_WORDS:
        return _SESSION_WORDS[raw]
    return int(raw)


def _session(rec: Record, file: str) -> list[Obs]:
    msg = rec.message
    client = _client_of(msg, "?")
    if (m := _BUILT.search(msg)) is not None:
        obs = _base(FETCH_SESSION, rec, file, client, int(m.group("node")))
        obs.state, obs.session_id, obs.session_epoch = "built", _num(m.group(2)), _num(m.group(3))
        return [obs]
    if (m := _CREATED.search(msg)) is not None:
        obs = _base(FETCH_SESSION, rec, file, client, int(m.group("node")))
        obs.state, obs.session_id = "created", int(m.group("sid"))
        return [obs]
    if (m := _UNABLE.search(msg)) is not None:
        obs = _base(FETCH_SESSION, rec, file, client, int(m.group("node")))
        obs.state, obs.session_id, obs.session_epoch = "error", _num(m.group(2)), _num(m.group(3))
        obs.prev_state = m.group("err")
        return [obs]
    if (m := _ERROR_SENDING.search(msg)) is not None:
        obs = _base(FETCH_SESSION, rec, file, client, int(m.group("node")))
        obs.state, obs.session_id, obs.session_epoch = "error", _num(m.group(1)), _num(m.group(2))
        return [obs]
    if (m := _CLOSING.search(msg)) is not None:
        obs = _base(FETCH_SESSION, rec, file, client, int(m.group("node")))
        obs.state, obs.session_id = "closed", int(m.group("sid"))
        return [obs]
    return []


_RDK = re.compile(
    r"(?:Topic (?P<topic>\S+) )?\[(?P<p>-?\d+)\] MessageSet size (?P<size>-?\d+), error \"(?P<err>[^\"]*)\", "
    r"MaxOffset (?P<hw>-?\d+)(?:, LSO (?P<lso>-?\d+))?"
)
"""librdkafka 0.11+ prints ``..., MaxOffset H, LSO L, Ver V/W``; 0.8-0.10 (Fetch v0-v3, no LSO) end at
``MaxOffset H``; kafkacat ``-d msg`` excerpts may drop the ``Topic t`` head. The version is told by
what the line holds."""
_RDK_NAME = re.compile(r"\|(rdkafka#[\w\-]+|[\w.\-]+#(?:consumer|producer)-\d+)\|")


def parse_librdkafka(number: int, text: str, file: str) -> list[Obs] | None:
    """librdkafka's per-partition Fetch answer line, anywhere in ``text``; None if absent."""
    if "MessageSet size " not in text or "MaxOffset " not in text:
        return None
    m = _RDK.search(text)
    if m is None:
        raise LineParseError(
            "librdkafka FETCH line: expected 'Topic t [p] MessageSet size Z, error \"E\", MaxOffset H[, LSO L]'"
        )
    name = _RDK_NAME.search(text)
    client = name.group(1) if name else "rdkafka"
    obs = Obs(
        kind=FETCH_RESPONSE,
        file=file,
        line=number,
        text=cut(text),
        stream=f"{file}#client={client}",
        client=client,
        partition=f"{m.group('topic')}-{m.group('p')}" if m.group("topic") else None,
        hw=int(m.group("hw")),
        lso=int(m.group("lso")) if m.group("lso") is not None else None,
        error=0 if m.group("err") in ("Success", "No error") else -1,
    )
    return [obs]


MAX_TOPIC_IDS = 100_000
_TOPIC_IDS = re.compile(r"FetchTopic\(topic='([^']+)', topicId=([\w\-]+)")


def parse_record(rec: Record, file: str, topics: dict[str, str] | None = None) -> list[Obs] | None:
    """The observations of a Java client record, or None when the suite does not know it.

    ``topics`` (topic id -> name) is learned from requests and names the topics of responses,
    which since Fetch v13 carry only topic ids."""
    names = topics if topics is not None else {}
    msg = rec.message
    if "FETCH request with header" in msg or (msg.startswith("Sending FETCH {") and "correlation id" in msg):
        if len(names) < MAX_TOPIC_IDS:
            for topic, tid in _TOPIC_IDS.findall(msg):
                names[tid] = topic
        return _request(rec, file)
    if "Received FETCH response" in msg or ("for FETCH with correlation id" in msg and "received {" in msg):
        return _response(rec, file, names)
    if (
        "fetch (sessionId=" in msg
        or "fetch session" in msg
        or "fetch request with (sessionId=" in msg
        or "fetch request (sessionId=" in msg
    ):
        out = _session(rec, file)
        return out if out else None
    return None
