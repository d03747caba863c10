"""The fetch-session slice's model state and its handlers: one broker's partitions and session cache,
the clients' FetchSessionHandlers and positions, the requests in flight and the answers given.

Each handler is a pure function ``(state, cfg, inputs) -> (state, outcome)`` that raises
``NotEnabled`` when Kafka would not run it; the lockstep judge (conformance.fetch.lockstep) runs it
with an event's inputs and compares the outcome the implementation claims.

- The broker (model.fetch_session) answers with ``read``: ReplicaManager.readFromLog on a partition
  of model.txn_partition with a log start offset: not the leader → NOT_LEADER_OR_FOLLOWER; a fetch
  offset below the log start or past the LEO → OFFSET_OUT_OF_RANGE (both with HW, LSO and log start
  -1); else at most ``max_records`` records up to the HW (read_uncommitted) or the LSO
  (read_committed), with the aborted transactions overlapping them (TransactionIndex).
- A client (model.fetch_client) fetches its assigned partitions from its positions, one request in
  flight (KAFKA-8052's fix); an accepted answer's data for a partition whose fetch offset (as the
  request's session partitions had it, Fetcher.handleFetchSuccess) is still the position is
  delivered (model.txn_partition.poll: read_committed drops aborted records, control records never
  reach the application) and moves the position; OFFSET_OUT_OF_RANGE resets the position to the log
  start (auto.offset.reset=earliest; the ListOffsets round trip is abstracted as immediate).
- The ghost records what each client's application received (``Consumed``) for the invariants.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kconform.model import fetch_client as FC
from kconform.model import fetch_session as FS
from kconform.model import log_start as LS
from kconform.model import txn_partition as T
from kconform.model.errors import NONE, NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE
from kconform.model.fetch_config import BROKER, FetchConfig
from kconform.model.frozen_map import FrozenMap
from kconform.model.not_enabled import NotEnabled
from kconform.model.records import NO_CONTROL, Record

NO_MSG = -1

ACCEPTED = "accepted"
"""The answer was used (handleResponse true): its data reached the positions."""
REJECTED = "rejected"
"""handleResponse false without a top-level error (the partitions did not match the session)."""
ERROR = "error"
"""A top-level session error: FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH."""
TIMED_OUT = "timed-out"
"""request.timeout.ms passed without an answer: handleError."""
IGNORED = "ignored"
"""An answer to a request that is no longer in flight (a duplicate or a timed-out one)."""
APPLIED_OUTCOMES = (ACCEPTED, REJECTED, ERROR, TIMED_OUT, IGNORED)


def _require(condition: bool, why: str) -> None:
    if not condition:
        raise NotEnabled(why)


@dataclass(frozen=True)
class Log:
    """One partition at the broker: the exactly-once slice's partition (log, HW, LSO, aborted index),
    its log start offset (DeleteRecords, KIP-107) and whether the broker leads it."""

    part: T.Partition
    log_start: int = 0
    leading: bool = True


@dataclass(frozen=True)
class Client:
    """One fetching client: its FetchSessionHandler, assigned partitions (in assignment order), its
    positions, the last HW / LSO / log start each answer told it, and its request in flight."""

    handler: FC.Handler = FC.INITIAL
    assigned: tuple[str, ...] = ()
    positions: FrozenMap[str, int] = field(default_factory=FrozenMap)
    view: FrozenMap[str, tuple[int, int, int]] = field(default_factory=FrozenMap)
    in_flight: int = NO_MSG


@dataclass(frozen=True)
class Sent:
    """A request on the wire: who sent it when, what it says, and the client's session partitions
    when it was built (FetchRequestData.sessionPartitions: the fetch offsets its answer is for)."""

    client: int
    request: FS.Request
    session_view: tuple[tuple[str, int], ...]
    sent_ms: int


@dataclass(frozen=True)
class Consumed:
    """The ghost of one client's consumption of one partition since it was assigned or reset:
    where it started and every data record offset the application got, in order."""

    start: int
    offsets: tuple[int, ...] = ()


@dataclass(frozen=True)
class FetchState:
    """The slice's state; ``last_answer`` is the broker answer (msg, client, answer) the latest step
    produced, None after a step of any other handler (``settled``): the invariants about one answer
    judge it against the logs as they were when it was given."""

    now_ms: int
    logs: FrozenMap[str, Log]
    cache: FS.Cache
    clients: FrozenMap[int, Client]
    sent: FrozenMap[int, Sent] = field(default_factory=FrozenMap)
    answers: FrozenMap[int, tuple[FS.Answer, ...]] = field(default_factory=FrozenMap)
    consumed: FrozenMap[tuple[int, str], Consumed] = field(default_factory=FrozenMap)
    last_answer: tuple[int, int, FS.Answer] | None = None


def settled(s: FetchState) -> FetchState:
    """``s`` after a step that answered nothing: no ``last_answer``."""
    return s if s.last_answer is None else replace(s, last_answer=None)


def initial_state(cfg: FetchConfig) -> FetchState:
    """Empty partitions led by the broker, an empty cache, clients with nothing assigned."""
    logs = FrozenMap({name: Log(T.Partition(name, BROKER)) for name in cfg.names})
    clients: FrozenMap[int, Client] = FrozenMap({c: Client() for c in cfg.client_ids})
    return FetchState(0, logs, FS.Cache(cfg.max_slots, cfg.eviction_ms), clients)


def _log(s: FetchState, name: str) -> Log:
    log = s.logs.get(name)
    _require(log is not None, f"the broker has no partition {name!r}")
    assert log is not None
    return log


def _client(s: FetchState, cfg: FetchConfig, client: int) -> Client:
    c = s.clients.get(client)
    _require(c is not None, f"no client {client} in this configuration (0..{cfg.clients - 1})")
    assert c is not None
    return c


# ---------------------------------------------------------------------------------------------
# The broker's partitions


def read(log: Log, fetch_offset: int, read_committed: bool, max_records: int) -> FS.PartitionData:
    """ReplicaManager.readFromLog for one partition (module docstring)."""
    p = log.part
    if not log.leading:
        return FS.PartitionData(p.name, NOT_LEADER_OR_FOLLOWER, -1, -1, -1)
    if not LS.in_range(fetch_offset, log.log_start, p.leo):
        return FS.PartitionData(p.name, OFFSET_OUT_OF_RANGE, -1, -1, -1)
    a = T.consumer_fetch(p, p.leader, fetch_offset, read_committed)
    records = a.records[:max_records]
    aborted = tuple(t for t in a.aborted if records and t.first_offset <= records[-1].offset)
    lso = LS.clamp_hw(a.lso, log.log_start)  # the LSO is never below the log start (UnifiedLog)
    return FS.PartitionData(p.name, a.error, a.hw, lso, log.log_start, records, aborted)


def append(s: FetchState, name: str, rids: tuple[int, ...], pid: int, txn: bool, commit: bool) -> FetchState:
    """Records appended to ``name``: a plain batch (``txn`` false, pid -1) or a whole transaction of
    producer ``pid`` followed by its COMMIT or ABORT marker (model.txn_partition.produce and
    append_marker: an aborted one enters the aborted index)."""
    log = _log(s, name)
    _require(bool(rids), "a batch holds at least one record")
    p = log.part
    if txn:
        _require(pid >= 0 and pid not in p.producers, f"a transaction's producer id is fresh, got {pid}")
        p, r = T.produce(p, BROKER, s.now_ms, False, pid, 0, 0, rids, True, NO_MSG)
        _require(r.error == NONE, f"the transactional batch was refused ({r.error})")
        p, m = T.append_marker(p, BROKER, s.now_ms, pid, 0, commit, 0)
        _require(m.error == NONE, f"the marker was refused ({m.error})")
    else:
        _require(pid == T.NO_PID, "a plain batch has no producer id")
        p, r = T.produce(p, BROKER, s.now_ms, False, pid, -1, -1, rids, False, NO_MSG)
    return replace(s, logs=s.logs.set(name, replace(log, part=p)))


def hw_advanced(s: FetchState, name: str, hw: int) -> FetchState:
    """The HW moves forward up to the LEO (model.txn_partition.advance_hw)."""
    log = _log(s, name)
    return replace(s, logs=s.logs.set(name, replace(log, part=T.advance_hw(log.part, hw))))


def log_start_advanced(s: FetchState, name: str, log_start: int) -> FetchState:
    """DeleteRecords (KIP-107): the log start moves forward, never past the HW
    (model.log_start.delete_records, the rule the replication slice's leaders follow too)."""
    log = _log(s, name)
    error, moved_to = LS.delete_records(log_start, log.log_start, log.part.hw)
    _require(
        error == NONE and moved_to == log_start > log.log_start,
        f"{name}: log start {log.log_start} → {log_start}, HW {log.part.hw}",
    )
    return replace(s, logs=s.logs.set(name, replace(log, log_start=log_start)))


def leadership_changed(s: FetchState, name: str, leading: bool) -> FetchState:
    """The broker stops or starts leading ``name`` (a leader change elsewhere in the cluster)."""
    log = _log(s, name)
    _require(log.leading != leading, f"{name}: leadership is already {leading}")
    return replace(s, logs=s.logs.set(name, replace(log, leading=leading)))


def cache_lost(s: FetchState) -> FetchState:
    """The broker restarted: its session cache (memory only) is empty; logs survive."""
    return replace(s, cache=FS.lose_cache(s.cache))


def advance_clock(s: FetchState, now_ms: int) -> FetchState:
    _require(now_ms >= s.now_ms, f"time goes back from {s.now_ms} to {now_ms}")
    return replace(s, now_ms=now_ms)


# ---------------------------------------------------------------------------------------------
# Clients


def assigned(s: FetchState, cfg: FetchConfig, client: int, names: tuple[str, ...]) -> FetchState:
    """The client's assignment becomes ``names``; a newly assigned partition starts at the log start
    (auto.offset.reset=earliest, no committed offsets in this slice)."""
    c = _client(s, cfg, client)
    _require(len(set(names)) == len(names) and all(n in s.logs for n in names), f"bad assignment {names}")
    positions = FrozenMap({n: c.positions[n] for n in names if n in c.positions})
    consumed = s.consumed
    for n in names:
        if n not in c.positions:
            start = _log(s, n).log_start
            positions = positions.set(n, start)
            consumed = consumed.set((client, n), Consumed(start))
    for n in c.assigned:
        if n not in names:
            consumed = consumed.remove((client, n))
    view = FrozenMap({n: v for n, v in c.view.items() if n in names})
    return replace(
        s, clients=s.clients.set(client, replace(c, assigned=names, positions=positions, view=view)), consumed=consumed
    )


def closing(s: FetchState, cfg: FetchConfig, client: int, msg: int) -> tuple[FetchState, FS.Request]:
    """The consumer closes (AbstractFetch.prepareCloseFetchSessionRequests): notifyClose, then at once,
    whatever is in flight, a request of no partitions with epoch -1 as ``msg``, which closes the
    session at the broker. The client then starts over as a new consumer instance that resumes
    from its positions (committed on close): a fresh handler, nothing in flight (answers to earlier
    requests are ignored), nothing heard yet."""
    c = _client(s, cfg, client)
    _require(msg not in s.sent, f"message {msg} was sent already")
    handler, request = FC.build(FC.notify_close(c.handler), (), cfg.privileged(client))
    sent = Sent(client, request, handler.partitions, s.now_ms)
    new_c = replace(c, handler=FC.INITIAL, in_flight=NO_MSG, view=FrozenMap())
    return replace(s, clients=s.clients.set(client, new_c), sent=s.sent.set(msg, sent)), request


def send(s: FetchState, cfg: FetchConfig, client: int, msg: int) -> tuple[FetchState, FS.Request]:
    """The client builds a fetch request of its assigned partitions at their positions and sends it
    as ``msg``; refused while a request of it is in flight (KAFKA-8052)."""
    c = _client(s, cfg, client)
    _require(c.in_flight == NO_MSG, f"client {client} has request {c.in_flight} in flight (KAFKA-8052)")
    _require(msg not in s.sent, f"message {msg} was sent already")
    wanted = tuple((n, c.positions[n]) for n in c.assigned)
    handler, request = FC.build(c.handler, wanted, cfg.privileged(client))
    sent = Sent(client, request, handler.partitions, s.now_ms)
    new_c = replace(c, handler=handler, in_flight=msg)
    return replace(s, clients=s.clients.set(client, new_c), sent=s.sent.set(msg, sent)), request


def handle(s: FetchState, cfg: FetchConfig, msg: int, client: int, new_session_id: int) -> tuple[FetchState, FS.Answer]:
    """The broker handles request ``msg`` (it may be a duplicate: handled again on the current state)."""
    sent = s.sent.get(msg)
    _require(sent is not None and sent.client == client, f"client {client} sent no request {msg}")
    assert sent is not None
    rc = cfg.is_read_committed(client)

    def reader(name: str, fetch_offset: int) -> FS.PartitionData:
        log = s.logs.get(name)
        if log is None:
            raise NotEnabled(f"the request names partition {name!r}, which the broker does not have")
        return read(log, fetch_offset, rc, cfg.max_records)

    cache, answer = FS.handle_fetch(s.cache, s.now_ms, sent.request, reader, new_session_id)
    answers = s.answers.set(msg, (*(s.answers.get(msg) or ()), answer))
    return replace(s, cache=cache, answers=answers, last_answer=(msg, client, answer)), answer


@dataclass(frozen=True)
class Applied:
    """What applying an answer did: the outcome, the handler's next metadata, the positions of the
    assigned partitions after it and the record ids the application got."""

    outcome: str
    session_id: int
    epoch: int
    positions: tuple[tuple[str, int], ...]
    rids: tuple[int, ...]


def _applied(s: FetchState, client: int, outcome: str, rids: tuple[int, ...] = ()) -> Applied:
    c = s.clients[client]
    positions = tuple((n, c.positions[n]) for n in c.assigned)
    return Applied(outcome, c.handler.session_id, c.handler.epoch, positions, rids)


def timed_out(s: FetchState, cfg: FetchConfig, client: int, msg: int) -> tuple[FetchState, Applied]:
    """request.timeout.ms passed since ``msg`` was sent without its answer: handleError."""
    c = _client(s, cfg, client)
    sent = s.sent.get(msg)
    _require(c.in_flight == msg and sent is not None, f"client {client} has no request {msg} in flight")
    assert sent is not None
    _require(s.now_ms - sent.sent_ms >= cfg.request_timeout_ms, f"request {msg} has not timed out yet")
    new_c = replace(c, handler=FC.handle_error(c.handler), in_flight=NO_MSG)
    s = replace(s, clients=s.clients.set(client, new_c))
    return s, _applied(s, client, TIMED_OUT)


def ignored(s: FetchState, cfg: FetchConfig, client: int, msg: int) -> tuple[FetchState, Applied]:
    """An answer to a request that is not (any more) in flight is dropped (NetworkClient)."""
    c = _client(s, cfg, client)
    _require(msg in s.answers and s.sent[msg].client == client, f"request {msg} of client {client} was never answered")
    _require(c.in_flight != msg, f"request {msg} is in flight: its answer is used")
    return s, _applied(s, client, IGNORED)


def apply_answer(
    s: FetchState, cfg: FetchConfig, client: int, msg: int, answer: FS.Answer
) -> tuple[FetchState, Applied]:
    """The client handles ``answer`` to its in-flight request ``msg``: handleResponse, then the data
    of an accepted answer reaches the positions (module docstring)."""
    c = _client(s, cfg, client)
    sent = s.sent.get(msg)
    _require(c.in_flight == msg and sent is not None, f"client {client} has no request {msg} in flight")
    assert sent is not None
    names = tuple(d.name for d in answer.partitions)
    handler, ok = FC.handle_response(c.handler, answer.error, answer.session_id, names)
    c = replace(c, handler=handler, in_flight=NO_MSG)
    if answer.error != NONE:
        s = replace(s, clients=s.clients.set(client, c))
        return s, _applied(s, client, ERROR)
    if not ok:
        s = replace(s, clients=s.clients.set(client, c))
        return s, _applied(s, client, REJECTED)
    offsets = dict(sent.session_view)
    rc = cfg.is_read_committed(client)
    positions, view, consumed = c.positions, c.view, s.consumed
    rids: list[int] = []
    for d in answer.partitions:
        fetch_offset = offsets.get(d.name)
        if d.name not in c.assigned or fetch_offset is None or positions.get(d.name) != fetch_offset:
            continue  # no longer wanted, or the position moved since: the data is dropped (FetchCollector)
        if d.error == OFFSET_OUT_OF_RANGE:
            start = _log(s, d.name).log_start
            positions = positions.set(d.name, start)
            consumed = consumed.set((client, d.name), Consumed(start))
            continue
        if d.error != NONE:
            continue
        view = view.set(d.name, (d.hw, d.lso, d.log_start))
        polled = T.poll(T.FetchAnswer(NONE, d.records, d.hw, d.lso, d.aborted), fetch_offset, rc)
        positions = positions.set(d.name, polled.next_offset)
        if polled.records:
            rids.extend(polled.rids)
            key = (client, d.name)
            before = consumed.get(key) or Consumed(fetch_offset)
            got = tuple(r.offset for r in polled.records)
            consumed = consumed.set(key, replace(before, offsets=before.offsets + got))
    c = replace(c, positions=positions, view=view)
    s = replace(s, clients=s.clients.set(client, c), consumed=consumed)
    return s, _applied(s, client, ACCEPTED, tuple(rids))


def answers_to(s: FetchState, msg: int) -> tuple[FS.Answer, ...]:
    """Every answer the broker gave to request ``msg`` (a duplicated request is answered twice)."""
    return s.answers.get(msg) or ()


def visible(log: Log, read_committed: bool) -> tuple[Record, ...]:
    """The data records of ``log`` a consumer at this isolation may ever deliver: below the HW (or the
    LSO), not control records, and with read_committed not of an aborted transaction."""
    p = log.part
    bound = T.last_stable_offset(p) if read_committed else p.hw
    aborted = {(t.pid, o) for t in p.aborted_index for o in range(t.first_offset, t.last_offset + 1)}
    return tuple(
        r
        for r in p.log[:bound]
        if r.control == NO_CONTROL and not (read_committed and r.txn and (r.pid, r.offset) in aborted)
    )


__all__ = [
    "ACCEPTED",
    "APPLIED_OUTCOMES",
    "ERROR",
    "IGNORED",
    "REJECTED",
    "TIMED_OUT",
    "Applied",
    "Client",
    "Consumed",
    "FetchState",
    "Log",
    "Sent",
    "advance_clock",
    "answers_to",
    "append",
    "apply_answer",
    "assigned",
    "cache_lost",
    "closing",
    "handle",
    "hw_advanced",
    "ignored",
    "initial_state",
    "leadership_changed",
    "log_start_advanced",
    "read",
    "send",
    "settled",
    "timed_out",
    "visible",
]
