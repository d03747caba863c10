"""Every invariant fires on a hand-built bad state and stays quiet on a good one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from kconform.model import invariants as I
from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.reader import Delivery, ReaderGhost, Reset
from kconform.model.state import DelayedFetch, State
from kconform.traces.events import Entry
from tests.modelkit import booted, replicate

CFG = ReplicationConfig()


def _committed(acks: int = -1) -> State:
    """Leader 0 with one record at offset 0 replicated everywhere, HW 1, acked."""
    s = booted(CFG)
    s, _ = R.produce(s, CFG, 0, 1, 7, acks)
    for _ in range(3):
        s = replicate(replicate(s, CFG, 1), CFG, 2)
    if acks == -1:
        s = R.complete_produce(s, CFG, 0, 1, 0)
    return s


def _set(s: State, node: int, **changes: object) -> State:
    return s.with_replica(node, replace(s.replica(node), **changes))  # type: ignore[arg-type]


def _names(vs: list[I.Violation], allowed: bool = False) -> set[str]:
    return {v.invariant for v in vs if v.allowed == allowed}


def test_good_state_has_no_violation() -> None:
    s = _committed()
    assert I.check_state(s, CFG) == []


def test_every_invariant_has_a_doc_and_a_citation() -> None:
    for inv in I.INVARIANTS.values():
        assert inv.doc.endswith(".") and inv.doc.count(".") >= 1, inv.name
        assert inv.cite, inv.name


BAD_STATES: dict[str, Callable[[State], State]] = {
    "HwBelowLeo": lambda s: _set(s, 1, hw=5),
    "NoCommittedDataLoss": lambda s: _set(s, 0, log=(Entry(0, 0, 99),)),
    "NoDivergenceBelowHw": lambda s: _set(s, 2, log=(Entry(0, 0, 99),)),
    "ConsumerReadsBelowHw": lambda s: replace(s, ghost=replace(s.ghost, consumed=((Entry(3, 0, 1), 2),))),
    "ConsumedRecordsStay": lambda s: replace(
        _set(s, 0, log=(Entry(0, 0, 99),)), ghost=replace(s.ghost, consumed=((Entry(0, 0, 7), 1),))
    ),
    "EpochCacheStrictlyIncreasing": lambda s: _set(s, 1, epoch_cache=((2, 0), (1, 0))),
    "LeaderWritesUnique": lambda s: replace(s, ghost=replace(s.ghost, written=s.ghost.written | {Entry(0, 0, 99)})),
    "WeakIsr": lambda s: _set(s, 1, log=()),
    "StrongIsr": lambda s: _set(_set(s, 0, isr=(0, 1)), 2, log=()),
    "PurgatoryDeadlines": lambda s: replace(
        _set(s, 0, purgatory=(DelayedFetch(9, -1, 1, 1, -1, 0, 1, 500),)), now_ms=501, tracks_purgatory=True
    ),
    "DelayedTriggersHonoured": lambda s: replace(s, ghost=replace(s.ghost, overdue=("broker 0: delayed fetch 9",))),
    "IsrShrinkBounded": lambda s: replace(s, ghost=replace(s.ghost, late_shrinks=("leader 0 kept follower 2",))),
    "FollowerKeepsFetching": lambda s: replace(s, ghost=replace(s.ghost, stalled_fetchers=("broker 2 follows",))),
    "CrashedBrokerFenced": lambda s: replace(s, ghost=replace(s.ghost, late_fences=("broker 2 crashed",))),
    "IsrExpansionProposed": lambda s: replace(s, ghost=replace(s.ghost, late_expansions=("leader 0 did not",))),
    "FollowerBacksOff": lambda s: replace(s, ghost=replace(s.ghost, hasty_fetches=("broker 2 sent request 9",))),
    "ElrDisjointFromIsr": lambda s: replace(s, elr=(1,), controller=replace(s.controller, isr=(0, 1))),
    "ElrOnlyBelowMinIsr": lambda s: replace(s, elr=(2,), controller=replace(s.controller, isr=(0, 1))),
    "ElrDurability": lambda s: _set(s, 0, log=(Entry(0, 0, 99),)),
    "LeaderUnfenced": lambda s: replace(s, fenced=frozenset({0})),
    "LogStartBelowHw": lambda s: _set(s, 1, log_start=1, hw=0),
    "NoReadBelowLogStart": lambda s: replace(s, ghost=replace(s.ghost, consumed=((Entry(0, -1, -1), 1),))),
    # the follower-fetching consumer (tests/test_read_replica_model.py has their near misses)
    "ReplicaReadBelowHw": lambda s: replace(
        s, ghost=replace(s.ghost, reader=ReaderGhost((Delivery(s.replicas[0].log[0], 1, True, 0),)))
    ),
    "ReaderNoSkipNoRepeat": lambda s: replace(
        s, ghost=replace(s.ghost, reader=ReaderGhost((Delivery(s.replicas[0].log[0], 1, True, 1),) * 2))
    ),
    "NoResetOnFollowerAnswer": lambda s: replace(
        s, ghost=replace(s.ghost, reader=ReaderGhost((), (Reset(1, True, True, 0, 0),)))
    ),
}
BAD_CONFIGS: dict[str, ReplicationConfig] = {"ElrDurability": ReplicationConfig(eligible_leader_replicas_version=1)}
"""Invariants whose guarantee holds on one rung only (ELR: KIP-966); tests/test_elr.py has the other rungs."""


@pytest.mark.parametrize("name", sorted(BAD_STATES))
def test_state_invariant_fires_on_a_bad_state(name: str) -> None:
    bad = BAD_STATES[name](_committed())
    assert name in _names(I.check_state(bad, BAD_CONFIGS.get(name, CFG), frozenset({name})))


def test_all_state_invariants_are_covered_by_a_bad_state() -> None:
    state_invs = {n for n, inv in I.INVARIANTS.items() if inv.state_check is not None}
    assert state_invs == set(BAD_STATES)


def test_leader_hw_monotonic_fires_when_hw_drops_within_an_epoch() -> None:
    pre = _committed()
    post = _set(pre, 0, hw=0)
    assert "LeaderHwMonotonic" in _names(I.check_step(pre, post, CFG))
    moved, _ = R.controller_move_leader(pre, CFG, 1)
    assert I.check_step(pre, moved, CFG) == []


def test_leader_epochs_monotonic_fires_when_an_epoch_goes_back() -> None:
    pre = _committed()
    post = _set(pre, 1, leader_epoch=-1)
    assert "LeaderEpochsMonotonic" in _names(I.check_step(pre, post, CFG))
    post2 = replace(pre, controller=replace(pre.controller, leader_epoch=-1))
    assert "LeaderEpochsMonotonic" in _names(I.check_step(pre, post2, CFG))


def test_loss_after_acks_1_is_allowed_not_violated() -> None:
    s = _committed(acks=1)
    lost = _set(s, 0, log=(Entry(0, 0, 99),))
    vs = [v for v in I.check_state(lost, CFG, frozenset({"NoCommittedDataLoss"}))]
    assert vs and all(v.allowed for v in vs) and "acks=1" in vs[0].allowed_because


def test_loss_after_unclean_election_is_allowed() -> None:
    s = _committed()
    s = replace(s, ghost=replace(s.ghost, unclean_epochs=(1,)))
    s = _set(s, 0, log=(Entry(0, 0, 99),), leader_epoch=1)
    vs = I.check_state(s, CFG, frozenset({"NoCommittedDataLoss"}))
    assert vs and all(v.allowed for v in vs) and "unclean" in vs[0].allowed_because
