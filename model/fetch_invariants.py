"""Named guarantees of the fetch-session slice, each a function over FetchState with a citation.

They cross-check the parts of the model against each other (the session cache against the clients'
handlers, the selected updates against the logs, the consumers' deliveries against the logs), so a
model rule or a permissive configuration that breaks one is reported as an invariant violation;
an implementation that differs from the model is reported before that, as non-conformance.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kconform.model import fetch_session as FS
from kconform.model.fetch_config import FetchConfig
from kconform.model.fetch_state import Client, FetchState, read, visible
from kconform.model.invariants import Violation

Check = Callable[[FetchState, FetchConfig], Iterator[Violation]]


@dataclass(frozen=True)
class FetchInvariant:
    """A registered guarantee: ``check`` sees one state."""

    name: str
    doc: str
    cite: str
    check: Check


INVARIANTS: dict[str, FetchInvariant] = {}


def _register(name: str, cite: str) -> Callable[[Check], Check]:
    def deco(fn: Check) -> Check:
        INVARIANTS[name] = FetchInvariant(name, (fn.__doc__ or "").strip(), cite, fn)
        return fn

    return deco


@_register("SessionViewAgrees", "KIP-227; FetchSessionHandler.handleResponse, FetchSession.update")
def session_view_agrees(s: FetchState, cfg: FetchConfig) -> Iterator[Violation]:
    """Between requests, a client in an incremental session and the broker's session of that id agree
    on the session's partitions, the next epoch, and each cached HW and log start the client was told."""
    for cid, c in s.clients.items():
        h = c.handler
        if c.in_flight != -1 or FS.is_full(h.epoch):
            continue
        session = s.cache.get(h.session_id)
        if session is None:
            continue  # evicted or lost: the next request learns it (FETCH_SESSION_ID_NOT_FOUND)
        if set(session.names()) != set(h.names()):
            yield Violation(
                "SessionViewAgrees",
                f"client {cid} holds partitions {sorted(h.names())} of session {h.session_id}, "
                f"the broker {sorted(session.names())}",
            )
            continue
        if session.epoch != h.epoch:
            yield Violation(
                "SessionViewAgrees",
                f"client {cid} will send epoch {h.epoch} in session {h.session_id}, the broker expects {session.epoch}",
            )
        for cached, (hw, log_start) in _unheard(c, session):
            yield Violation(
                "SessionViewAgrees",
                f"client {cid} last heard HW {hw} / log start {log_start} of {cached.name}, "
                f"session {session.id} caches {cached.hw} / {cached.log_start}: an update it never got",
            )


def _unheard(c: Client, session: FS.Session) -> Iterator[tuple[FS.CachedPartition, tuple[int, int]]]:
    """The partitions of ``session`` assigned to client ``c`` whose cached (HW, log start), once the
    session answered one (HW -1: never, or after an error), is not the last the client heard, with that."""
    for cached in session.partitions:
        told = c.view.get(cached.name)
        if cached.hw < 0 or told is None or cached.name not in c.assigned:
            continue
        if (told[0], told[2]) != (cached.hw, cached.log_start):
            yield cached, (told[0], told[2])


@_register("NoUpdateLost", "KIP-227; CachedPartition.maybeUpdateResponseData; KAFKA-12330")
def no_update_lost(s: FetchState, cfg: FetchConfig) -> Iterator[Violation]:
    """An incremental answer leaves out only partitions with nothing new: no records, the HW and log
    start the session cached, no error."""
    if s.last_answer is None:
        return
    msg, client, answer = s.last_answer
    if answer.outcome != FS.INCREMENTAL:
        return
    session = s.cache.get(answer.session_id)
    if session is None:
        return
    included = {d.name for d in answer.partitions}
    rc = cfg.is_read_committed(client)
    left_out = (c for c in session.partitions if c.name not in included)
    for cached, d in ((c, read(s.logs[c.name], c.fetch_offset, rc, cfg.max_records)) for c in left_out):
        if FS.must_respond(cached, d):  # KIP-227's rule, stated once (model.fetch_session)
            yield Violation(
                "NoUpdateLost",
                f"answer to request {msg} leaves out {cached.name}: records {len(d.records)}, error {d.error}, "
                f"HW {d.hw} (cached {cached.hw}), log start {d.log_start} (cached {cached.log_start})",
            )


@_register("NoSkipNoRepeat", "KIP-227 (sessions change what is sent, never what is read); KIP-107 log start")
def no_skip_no_repeat(s: FetchState, cfg: FetchConfig) -> Iterator[Violation]:
    """Since a partition was assigned (or its position reset to the log start after
    OFFSET_OUT_OF_RANGE), the application got every record it may read below its position, once and
    in order, whatever happened to the session (evicted, lost, reset, closed)."""
    for (cid, name), got in s.consumed.items():
        c = s.clients[cid]
        position = c.positions.get(name)
        if position is None:
            continue
        expected = tuple(
            r.offset for r in visible(s.logs[name], cfg.is_read_committed(cid)) if got.start <= r.offset < position
        )
        if got.offsets != expected:
            repeated = sorted({o for o in got.offsets if got.offsets.count(o) > 1})
            skipped = sorted(set(expected) - set(got.offsets))
            yield Violation(
                "NoSkipNoRepeat",
                f"client {cid} on {name} from {got.start} to position {position}: repeated {repeated}, "
                f"skipped {skipped}, extra {sorted(set(got.offsets) - set(expected))}",
            )


@_register("AbortedTxnsCarried", "KIP-98 read_committed; TransactionIndex.collectAbortedTxns; KIP-227")
def aborted_txns_carried(s: FetchState, cfg: FetchConfig) -> Iterator[Violation]:
    """A read_committed answer, full or incremental, lists every aborted transaction that overlaps the
    records it returns, so the consumer can drop them."""
    if s.last_answer is None:
        return
    msg, client, answer = s.last_answer
    if not cfg.is_read_committed(client):
        return
    for d in answer.partitions:
        if not d.records:
            continue
        first, last = d.records[0].offset, d.records[-1].offset
        listed = {(a.pid, a.first_offset) for a in d.aborted}
        for t in s.logs[d.name].part.aborted_index:
            if t.last_offset >= first and t.first_offset <= last and (t.pid, t.first_offset) not in listed:
                yield Violation(
                    "AbortedTxnsCarried",
                    f"answer to request {msg} returns {d.name} offsets {first}..{last} without the aborted "
                    f"transaction of producer {t.pid} at {t.first_offset}..{t.last_offset}",
                )


@_register("SessionEpochValid", "KIP-227; FetchMetadata.nextEpoch")
def session_epoch_valid(s: FetchState, cfg: FetchConfig) -> Iterator[Violation]:
    """Every cached session expects an incremental epoch (1 .. Int.MaxValue, wrapping to 1): never
    0 or -1, which would make its next request a full one."""
    for session in s.cache.sessions.values():
        if not 1 <= session.epoch <= FS.INT32_MAX:
            yield Violation("SessionEpochValid", f"session {session.id} expects epoch {session.epoch}")


def check_state(s: FetchState, cfg: FetchConfig, checked: frozenset[str] | None = None) -> list[Violation]:
    """Every checked invariant's violations in ``s`` (``checked`` None: all)."""
    return [v for name, inv in INVARIANTS.items() if checked is None or name in checked for v in inv.check(s, cfg)]


__all__ = ["INVARIANTS", "FetchInvariant", "check_state"]
