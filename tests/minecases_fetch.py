"""Hand-made fetch-session traces for the miner: for each of the slice's mined invariants a trace that
breaks it and no other invariant (``FETCH_BROKEN``), and near misses that break nothing
(``FETCH_NEAR_MISSES``). Default FetchConfig: broker node 0, client 0 is node 100, partitions
``t-0``, ``t-1``, ``t-2`` led by the broker, HW and log start 0 until an event moves them."""

from __future__ import annotations

from kconform.traces.events import (
    Event,
    HwAdvanced,
    LeadershipChanged,
    LogStartAdvanced,
    SessionFetchApplied,
    SessionFetchHandled,
    SessionFetchSent,
    TopicOffset,
)

CLIENT = 100
SESSION = 7


def sent(
    msg: int, epoch: int, names: tuple[str, ...] = (), forgotten: tuple[str, ...] = (), sid: int = SESSION
) -> Event:
    """Client 0's request ``msg`` in session ``sid`` (full when ``epoch`` is 0) sending ``names`` at offset 0."""
    return SessionFetchSent(CLIENT, msg, sid if epoch else 0, epoch, tuple(TopicOffset(n, 0) for n in names), forgotten)


def answer(msg: int, outcome: str, parts: dict[str, tuple[int, ...]], sid: int = SESSION) -> list[Event]:
    """The broker's answer to ``msg`` and the client's accepting it: ``parts`` maps each carried
    partition to its (HW, log start[, error]), no records."""
    names = tuple(parts)
    n = len(names)
    hws = tuple(parts[p][0] for p in names)
    starts = tuple(parts[p][1] for p in names)
    errors = tuple(parts[p][2] if len(parts[p]) > 2 else 0 for p in names)
    return [
        SessionFetchHandled(0, msg, 0, outcome, 0, sid, 0, names, errors, hws, hws, starts, (0,) * n, (), (0,) * n, ()),
        SessionFetchApplied(CLIENT, msg, "accepted", sid, 1, (), ()),
    ]


def opened(*names: str) -> list[Event]:
    """A full request of ``names`` answered with session 7 (HW and log start 0)."""
    return [sent(1, 0, names), *answer(1, "full-new", dict.fromkeys(names, (0, 0)))]


FETCH_BROKEN: dict[str, list[Event]] = {
    "OneFetchInFlight": [SessionFetchSent(CLIENT, 1, 0, 0, (), ()), SessionFetchSent(CLIENT, 2, 0, 0, (), ())],
    "FullRequestAfterSessionError": [SessionFetchApplied(CLIENT, 1, "error", 7, 3, (), ())],
    "IncrementalAnswerCarriesChanges": [
        *opened("t-0", "t-1"),
        HwAdvanced(0, "t-0", 1),
        sent(2, 1),
        *answer(2, "incremental", {}),
    ],
}
"""One trace per mined fetch-session invariant that breaks it and no other (the last: the HW of t-0
moved and the incremental answer leaves it out: redpanda-data/redpanda#29304)."""

CARRIES_CHANGES_BROKEN: dict[str, list[Event]] = {
    "a partition the broker no longer leads is left out": [
        *opened("t-0", "t-1"),
        LeadershipChanged(0, "t-0", False),
        sent(2, 1),
        *answer(2, "incremental", {}),
    ],
    "a partition an incremental request added is left out": [
        *opened("t-0"),
        sent(2, 1, ("t-1",)),
        *answer(2, "incremental", {}),
    ],
    "a partition forgotten and added again is left out after its HW moved": [
        *opened("t-0", "t-1"),
        sent(2, 1, forgotten=("t-0",)),
        *answer(2, "incremental", {}),
        sent(3, 2, ("t-0",)),
        *answer(3, "incremental", {"t-0": (0, 0)}),
        HwAdvanced(0, "t-0", 1),
        sent(4, 3),
        *answer(4, "incremental", {}),
    ],
}
"""More ways to break IncrementalAnswerCarriesChanges (each flagged at its last event): an error is
always answered; a partition added to a session has no cached answer (FetchSession.update)."""

FETCH_NEAR_MISSES: dict[str, list[Event]] = {
    "the moved HW is carried": [
        *opened("t-0", "t-1"),
        HwAdvanced(0, "t-0", 1),
        sent(2, 1),
        *answer(2, "incremental", {"t-0": (1, 0)}),
        sent(3, 2),
        *answer(3, "incremental", {}),
    ],
    "the moved log start is carried, then nothing new": [
        *opened("t-0"),
        HwAdvanced(0, "t-0", 2),
        LogStartAdvanced(0, "t-0", 1),
        sent(2, 1),
        *answer(2, "incremental", {"t-0": (2, 1)}),
        sent(3, 2),
        *answer(3, "incremental", {}),
    ],
    "the partition was forgotten before its HW moved": [
        *opened("t-0", "t-1"),
        sent(2, 1, forgotten=("t-0",)),
        *answer(2, "incremental", {}),
        HwAdvanced(0, "t-0", 1),
        sent(3, 2),
        *answer(3, "incremental", {}),
    ],
    "the request that forgets it is answered after the HW moved": [
        *opened("t-0", "t-1"),
        HwAdvanced(0, "t-0", 1),
        sent(2, 1, forgotten=("t-0",)),
        *answer(2, "incremental", {}),
    ],
    "a partition added by an incremental request is carried": [
        *opened("t-0"),
        HwAdvanced(0, "t-1", 1),
        sent(2, 1, ("t-1",)),
        *answer(2, "incremental", {"t-1": (1, 0)}),
        sent(3, 2),
        *answer(3, "incremental", {}),
    ],
    "a new session of the same id without the partition": [
        *opened("t-0", "t-1"),
        sent(2, 0, ("t-1",)),
        *answer(2, "full-new", {"t-1": (0, 0)}),
        HwAdvanced(0, "t-0", 1),
        sent(3, 1),
        *answer(3, "incremental", {}),
    ],
    "another session's partition moved": [
        *opened("t-0"),
        sent(2, 0, ("t-1",), sid=8),
        *answer(2, "full-new", {"t-1": (0, 0)}, sid=8),
        HwAdvanced(0, "t-1", 1),
        sent(3, 1),
        *answer(3, "incremental", {}),
    ],
    "a partition answered with an error while not led is carried once led again": [
        *opened("t-0", "t-1"),
        LeadershipChanged(0, "t-0", False),
        sent(2, 1),
        *answer(2, "incremental", {"t-0": (-1, -1, 6)}),
        LeadershipChanged(0, "t-0", True),
        sent(3, 2),
        *answer(3, "incremental", {"t-0": (0, 0)}),
        sent(4, 3),
        *answer(4, "incremental", {}),
    ],
}
"""Each is one step from FETCH_BROKEN's IncrementalAnswerCarriesChanges trace (or a session's
ordinary life around it) and breaks nothing."""
