"""Incremental fetch sessions, client side (KIP-227): Kafka's ``FetchSessionHandler``.

Pure functions over a frozen ``Handler`` value, one per method of
``clients/src/main/java/org/apache/kafka/clients/FetchSessionHandler.java`` (trunk 2024-10, commit
1eb7644):

- ``build`` (``Builder.build``): a full request sends every wanted partition and makes them the
  session's; an incremental one sends the partitions added (in the wanted order) and then those
  whose request data changed (in session order), and forgets the ones no longer wanted;
- ``handle_response`` (``handleResponse``): FETCH_SESSION_ID_NOT_FOUND → INITIAL (0, 0); any other
  top-level error → close and try new (id, 0); a full answer must name exactly the session's
  partitions (``verifyFullFetchResponsePartitions``) and starts a session (id, 1) or stays
  sessionless (0, 0); an incremental answer may name only session partitions
  (``verifyIncrementalFetchResponsePartitions``), and continues (id, nextEpoch) or, with id 0,
  ends the session;
- ``handle_error`` (a request that failed or timed out): (id, 0); ``notify_close``: (id, -1).

A request carries the partitions' fetch offsets only (PartitionData's other fields, maxBytes,
logStartOffset, leader epochs, do not change in the slice), and no topic ids (the slice's model
scope, model.fetch_session). One request in flight per broker (KAFKA-8052's fix, Fetcher's
``nodesWithPendingFetchRequests`` since 2.3) is the caller's rule (model.fetch_state).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kconform.model.errors import FETCH_SESSION_ID_NOT_FOUND, NONE
from kconform.model.fetch_session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    Request,
    is_full,
    next_epoch,
)


@dataclass(frozen=True)
class Handler:
    """FetchSessionHandler: ``nextMetadata`` (``session_id``, ``epoch``) and ``sessionPartitions``
    (name → fetch offset, in insertion order)."""

    session_id: int = INVALID_SESSION_ID
    epoch: int = INITIAL_EPOCH
    partitions: tuple[tuple[str, int], ...] = ()

    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.partitions)


INITIAL = Handler()


def build(h: Handler, wanted: tuple[tuple[str, int], ...], privileged: bool = False) -> tuple[Handler, Request]:
    """Builder.build for the partitions ``wanted`` (name, fetch offset) in the caller's order."""
    if is_full(h.epoch):
        return replace(h, partitions=wanted), Request(h.session_id, h.epoch, wanted, (), privileged)
    nxt = dict(wanted)
    altered: list[tuple[str, int]] = []
    forgotten: list[str] = []
    session: list[tuple[str, int]] = []
    for name, offset in h.partitions:
        if name not in nxt:
            forgotten.append(name)
            continue
        new = nxt.pop(name)
        session.append((name, new))
        if new != offset:
            altered.append((name, new))
    added = [(name, offset) for name, offset in wanted if name in nxt]
    session.extend(added)
    to_send = (*added, *altered)
    return replace(h, partitions=tuple(session)), Request(h.session_id, h.epoch, to_send, tuple(forgotten), privileged)


def handle_response(h: Handler, error: int, session_id: int, names: tuple[str, ...]) -> tuple[Handler, bool]:
    """handleResponse: the handler after an answer with top-level ``error``, ``session_id`` and
    partitions ``names``; True when the answer's partition data may be used."""
    if error != NONE:
        if error == FETCH_SESSION_ID_NOT_FOUND:
            return replace(h, session_id=INVALID_SESSION_ID, epoch=INITIAL_EPOCH), False
        return replace(h, epoch=INITIAL_EPOCH), False
    session = set(h.names())
    if is_full(h.epoch):
        if set(names) != session:
            return replace(h, session_id=INVALID_SESSION_ID, epoch=INITIAL_EPOCH), False
        if session_id == INVALID_SESSION_ID:
            return replace(h, session_id=INVALID_SESSION_ID, epoch=INITIAL_EPOCH), True
        return replace(h, session_id=session_id, epoch=next_epoch(INITIAL_EPOCH)), True
    if not set(names) <= session:
        return replace(h, epoch=INITIAL_EPOCH), False
    if session_id == INVALID_SESSION_ID:
        return replace(h, session_id=INVALID_SESSION_ID, epoch=INITIAL_EPOCH), True
    return replace(h, epoch=next_epoch(h.epoch)), True


def handle_error(h: Handler) -> Handler:
    """handleError (a disconnect or a timed-out request): close the session and try a new one."""
    return replace(h, epoch=INITIAL_EPOCH)


def notify_close(h: Handler) -> Handler:
    """notifyClose: the next request closes the session and asks for none (epoch FINAL)."""
    return replace(h, epoch=FINAL_EPOCH)


__all__ = ["INITIAL", "Handler", "build", "handle_error", "handle_response", "notify_close"]
