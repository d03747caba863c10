"""The log start offset in the replication model (issue 14 §2): DeleteRecords and retention advance
it, fetches below it answer OFFSET_OUT_OF_RANGE, the epoch cache is truncated from the start,
followers follow the leader's log start or restart at it, and the invariants fire on bad states and
stay silent on deleted records."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.model import epochs
from kconform.model import invariants as I
from kconform.model import log_start as LS
from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.errors import NONE, NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE
from kconform.model.records import Entry
from kconform.model.state import State
from tests.modelkit import booted, replicate

CFG = ReplicationConfig()


def _written(n: int, acks: int = -1) -> State:
    """Leader 0 with ``n`` records replicated to 1 and 2, all acknowledged, HW n."""
    s = booted(CFG)
    for i in range(n):
        s, _ = R.produce(s, CFG, 0, i + 1, 10 + i, acks)
    for _ in range(2):
        s = replicate(replicate(s, CFG, 1), CFG, 2)
    for i in range(n):
        if acks == -1:
            s = R.complete_produce(s, CFG, 0, i + 1, NONE)
    return s


def _set(s: State, node: int, **changes: object) -> State:
    return s.with_replica(node, replace(s.replica(node), **changes))  # type: ignore[arg-type]


def test_delete_records_advances_the_leader_log_start_up_to_the_hw() -> None:
    s = _written(4)
    assert s.replica(0).hw == 4
    s2, out = R.delete_records(s, CFG, 0, 2)
    assert (out.error, out.log_start) == (NONE, 2)
    r = s2.replica(0)
    assert r.log_start == 2 and [e.epoch for e in r.log[:2]] == [LS.DELETED, LS.DELETED] and r.log[2].rid == 12
    assert s2.ghost.deleted_to == 2
    # -1 means the HW (DeleteRecordsRequest.HIGH_WATERMARK); past the HW is out of range
    assert R.delete_records(s2, CFG, 0, -1)[1] == R.DeleteRecordsOutcome(NONE, 4)
    assert R.delete_records(s2, CFG, 0, 5)[1] == R.DeleteRecordsOutcome(OFFSET_OUT_OF_RANGE, 2)
    # below the log start: success, nothing moves (maybeIncrementLogStartOffset never goes back)
    again, out = R.delete_records(s2, CFG, 0, 1)
    assert out == R.DeleteRecordsOutcome(NONE, 2) and again == s2
    assert R.delete_records(s2, CFG, 1, 3)[1].error == NOT_LEADER_OR_FOLLOWER
    assert I.check_state(s2, CFG) == []


def test_fetches_below_the_log_start_answer_out_of_range() -> None:
    s, _ = R.delete_records(_written(4), CFG, 0, 3)
    _, low = R.consumer_fetch(s, CFG, 0, 2, -1)
    _, at = R.consumer_fetch(s, CFG, 0, 3, -1)
    assert low.error == OFFSET_OUT_OF_RANGE and low.entries == ()
    assert at.error == NONE and [e.rid for e in at.entries] == [13]


def test_followers_take_the_leader_log_start_from_fetch_answers() -> None:
    s, _ = R.delete_records(_written(4), CFG, 0, 3)
    s = replicate(s, CFG, 1)
    assert s.replica(1).log_start == 3 and s.replica(1).log[2] == LS.deleted(2)
    assert I.check_state(s, CFG) == []


def test_a_follower_below_the_leader_log_start_restarts_at_it() -> None:
    """AbstractFetcherThread.fetchOffsetAndTruncate → truncateFullyAndStartAt, HW with it (KAFKA-9491)."""
    s = _written(4)
    s = _set(s, 2, log=s.replica(2).log[:1], hw=1, epoch_cache=((0, 0),))
    s, _ = R.delete_records(s, CFG, 0, 3)
    q = R.fetch_request(s, CFG, 2)
    s2, resp = R.handle_fetch(s, CFG, 0, 2, q)
    assert (resp.error, resp.leader_log_start) == (OFFSET_OUT_OF_RANGE, 3)
    s2, out = R.apply_fetch_response(s2, CFG, 2, q, resp)
    r = s2.replica(2)
    assert (out.outcome, out.truncated_to, r.leo, r.hw, r.log_start, r.epoch_cache) == ("out_of_range", 3, 3, 3, 3, ())
    # (the hand-shortened follower 2 is still in the ISR views: WeakIsr is not the point here)
    assert I.check_state(s2, CFG, frozenset({"LogStartBelowHw", "NoDivergenceBelowHw", "HwBelowLeo"})) == []
    assert I.check_step(s, s2, CFG) == []
    s3 = replicate(s2, CFG, 2)
    assert s3.replica(2).leo == 4 and s3.replica(2).log[3].rid == 13


def test_out_of_range_within_the_leader_log_is_not_a_full_truncation() -> None:
    """KAFKA-2143: a follower whose LEO is within the leader's log fetches again from it."""
    s = _written(2)
    resp = R.FetchResponse(OFFSET_OUT_OF_RANGE, (), 2, -1, -1, 5, 2, 0)
    q = R.fetch_request(s, CFG, 1)
    s2, out = R.apply_fetch_response(s, CFG, 1, q, resp)
    assert out.outcome == "out_of_range" and out.truncated_to == -1 and s2 == s


def test_retention_is_bounded_by_the_replica_hw() -> None:
    s = _written(3)
    s = _set(s, 2, hw=1)
    with pytest.raises(R.NotEnabled):
        R.retention(s, CFG, 2, 2)  # KAFKA-5634: never past the HW
    s2 = R.retention(s, CFG, 2, 1)
    assert s2.replica(2).log_start == 1 and s2.ghost.deleted_to == 1


def test_epoch_cache_truncated_from_the_start() -> None:
    """LeaderEpochFileCache.truncateFromStart (kafka-facts §3.6)."""
    cache = ((0, 0), (1, 4), (3, 8))
    assert epochs.truncate_from_start(cache, 6) == ((1, 6), (3, 8))
    assert epochs.truncate_from_start(cache, 8) == ((3, 8),)
    assert epochs.truncate_from_start(cache, 0) == cache
    assert epochs.truncate_from_start(cache, -1) == cache
    assert epochs.truncate_from_start((), 5) == ()


def test_deleted_acknowledged_records_are_no_loss_but_lost_ones_are() -> None:
    s = _written(3)
    s2, _ = R.delete_records(s, CFG, 0, 2)
    durability = frozenset({"NoCommittedDataLoss", "ElrDurability", "ConsumedRecordsStay"})
    assert I.check_state(s2, CFG, durability) == []
    # near miss: the same placeholders without DeleteRecords behind them are a loss
    bad = replace(s2, ghost=replace(s2.ghost, deleted_to=0))
    assert "NoCommittedDataLoss" in {v.invariant for v in I.check_state(bad, CFG) if not v.allowed}


def test_divergence_below_both_log_starts_is_no_divergence() -> None:
    s, _ = R.delete_records(_written(3), CFG, 0, 2)
    assert I.check_state(s, CFG, frozenset({"NoDivergenceBelowHw", "WeakIsr", "StrongIsr"})) == []
    # near miss: a real difference at or above the log start still fires
    r1 = s.replica(1)
    bad = _set(s, 1, log=(*r1.log[:2], Entry(2, 0, 99)), hw=3)
    assert "NoDivergenceBelowHw" in {v.invariant for v in I.check_state(bad, CFG)}


def test_log_start_below_hw_fires_and_near_miss() -> None:
    s, _ = R.delete_records(_written(3), CFG, 0, 2)
    assert I.check_state(s, CFG, frozenset({"LogStartBelowHw"})) == []
    bad = _set(s, 0, log_start=1)  # placeholder at 1 above the log start
    assert {v.invariant for v in I.check_state(bad, CFG, frozenset({"LogStartBelowHw"}))} == {"LogStartBelowHw"}


def test_log_start_monotonic_fires_and_allows_truncation_to_the_leo() -> None:
    pre, _ = R.delete_records(_written(3), CFG, 0, 2)
    back = _set(pre, 0, log_start=1)
    assert "LogStartMonotonic" in {v.invariant for v in I.check_step(pre, back, CFG)}
    emptied = _set(pre, 0, log_start=1, log=pre.replica(0).log[:1], hw=1)  # UnifiedLog.truncateTo below the start
    assert "LogStartMonotonic" not in {v.invariant for v in I.check_step(pre, emptied, CFG)}


def test_no_read_below_log_start_near_miss() -> None:
    s, _ = R.delete_records(_written(3), CFG, 0, 2)
    s, out = R.consumer_fetch(s, CFG, 0, 2, -1)
    assert out.error == NONE and I.check_state(s, CFG, frozenset({"NoReadBelowLogStart"})) == []


def test_crash_keeps_the_log_start_and_restart_clamps_the_hw() -> None:
    s, _ = R.delete_records(_written(3), CFG, 0, 2)
    s = R.restart(R.crash(s, CFG, 0), CFG, 0)
    r = s.replica(0)
    assert r.log_start == 2 and r.hw >= 2
