"""The parts of a replication state that its invariants read, and which of them differ between two
states: what lets the lockstep judge re-run only the invariants whose parts changed
(model.guarantees.Parts, used by model.invariants).

A part is a field of every replica (``replica.hw``: the HW of each replica, in broker order), a
field of the state (``controller``), a field of the ghost (``ghost.acked``), or the clock where the
purgatory is tracked (``clock``: PurgatoryDeadlines reads ``now_ms`` only there). Guarantee of
``changed(a, b)``: its result has the bit of every part whose value differs between ``a`` and ``b``
(compared with ``==``, the very same object counting as equal without a comparison); a part whose
value is equal in both has its bit clear. The values compared are plain values and frozen
dataclasses whose equality reads every field (tests/test_invariant_memo.py checks that, and that
each invariant reads only the parts it declares).
"""

from __future__ import annotations

import operator

from kconform.model.state import State

REPLICA_FIELDS = (
    "log",
    "hw",
    "epoch_cache",
    "alive",
    "registered",
    "leader",
    "leader_epoch",
    "isr",
    "purgatory",
    "log_start",
)
"""The fields of a replica some invariant reads (``Replica.leo`` is the log's length)."""

STATE_FIELDS = ("controller", "fenced", "elr", "tracks_purgatory")
"""The fields of the state some invariant reads whole (the controller's record is one value)."""

GHOST_FIELDS = (
    "written",
    "acked",
    "consumed",
    "unclean_epochs",
    "crash_lost_data",
    "lossy_crashes",
    "overdue",
    "reader",
    "deleted_to",
    "hasty_fetches",
    "stalled_fetchers",
    "late_fences",
    "late_expansions",
    "late_shrinks",
)
"""The fields of the ghost some invariant reads, also those the ghost's own equality ignores (the
timer bounds' messages, ``compare=False``): each is compared on its own."""

CLOCK = "clock"
"""``now_ms`` where either state tracks the purgatory (``State.tracks_purgatory``); elsewhere no
invariant reads the clock (tests/test_invariant_memo.py)."""

NAMES = (
    *(f"replica.{f}" for f in REPLICA_FIELDS),
    *STATE_FIELDS,
    CLOCK,
    *(f"ghost.{f}" for f in GHOST_FIELDS),
)
"""Every part, in bit order: ``1 << NAMES.index(name)`` is the bit of ``name``."""

_ALL_REPLICA_BITS = (1 << len(REPLICA_FIELDS)) - 1
_STATE_BIT = {f: 1 << NAMES.index(f) for f in STATE_FIELDS}
_CONTROLLER, _FENCED, _ELR, _TRACKS = (_STATE_BIT[f] for f in STATE_FIELDS)
_CLOCK = 1 << NAMES.index(CLOCK)
_FIRST_GHOST_BIT = 1 << NAMES.index(f"ghost.{GHOST_FIELDS[0]}")
_replica_values = operator.attrgetter(*REPLICA_FIELDS)
_ghost_values = operator.attrgetter(*GHOST_FIELDS)


def _differing(x: tuple[object, ...], y: tuple[object, ...], first_bit: int) -> int:
    """The bits (``first_bit << i``) of the positions ``i`` at which ``x`` and ``y`` differ."""
    bits = 0
    for i, (u, v) in enumerate(zip(x, y, strict=True)):
        if u is not v and u != v:
            bits |= first_bit << i
    return bits


def changed(a: State, b: State) -> int:
    """The bits of the parts (``NAMES``) whose values differ between ``a`` and ``b``."""
    bits = 0
    ra, rb = a.replicas, b.replicas
    if ra is not rb:
        if len(ra) != len(rb):
            bits = _ALL_REPLICA_BITS
        else:
            for p, r in zip(ra, rb, strict=True):
                if p is not r:
                    x, y = _replica_values(p), _replica_values(r)
                    if x != y:
                        bits |= _differing(x, y, 1)
    if a.controller is not b.controller and a.controller != b.controller:
        bits |= _CONTROLLER
    if a.fenced is not b.fenced and a.fenced != b.fenced:
        bits |= _FENCED
    if a.elr != b.elr:
        bits |= _ELR
    if a.tracks_purgatory != b.tracks_purgatory:
        bits |= _TRACKS
    if (a.tracks_purgatory or b.tracks_purgatory) and a.now_ms != b.now_ms:
        bits |= _CLOCK
    ga, gb = a.ghost, b.ghost
    if ga is not gb:
        x, y = _ghost_values(ga), _ghost_values(gb)
        if x != y:
            bits |= _differing(x, y, _FIRST_GHOST_BIT)
    return bits


def parts(*names: str) -> frozenset[str]:
    """The parts an invariant reads, by name: ``replica.F`` for each replica's field F, ``ghost.F``,
    a field of ``STATE_FIELDS``, ``clock``; a name that is none of ``NAMES`` is an error."""
    unknown = sorted(set(names) - set(NAMES))
    if unknown:
        raise ValueError(f"unknown state part(s) {unknown}")
    return frozenset(names)


__all__ = ["CLOCK", "GHOST_FIELDS", "NAMES", "REPLICA_FIELDS", "STATE_FIELDS", "changed", "parts"]
