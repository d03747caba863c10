"""The fetch-session model (model.fetch_session, fetch_client, fetch_state) against Kafka's rules,
and every invariant of model.fetch_invariants firing on a bad state and silent on a near miss."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.model import fetch_client as FC
from kconform.model import fetch_invariants as I
from kconform.model import fetch_session as FS
from kconform.model import fetch_state as S
from kconform.model.errors import (
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
)
from kconform.model.fetch_config import FetchConfig
from kconform.model.frozen_map import FrozenMap
from kconform.model.not_enabled import NotEnabled
from kconform.model.records import AbortedTxn

CFG = FetchConfig()


def _data(name: str, hw: int = 0, log_start: int = 0, error: int = NONE) -> FS.PartitionData:
    return FS.PartitionData(name, error, hw, hw, log_start)


def _reader(table: dict[str, FS.PartitionData]) -> FS.Reader:
    return lambda name, offset: table[name]


def test_next_epoch_wraps_to_one_and_final_stays_final() -> None:
    assert FS.next_epoch(0) == 1
    assert FS.next_epoch(41) == 42
    assert FS.next_epoch(2**31 - 1) == 1  # FetchMetadata.nextEpoch: never back to INITIAL
    assert FS.next_epoch(-1) == -1


def test_full_request_creates_a_session_at_epoch_one_and_closes_the_one_it_names() -> None:
    cache = FS.Cache(2)
    table = {"a": _data("a", 3), "b": _data("b", 5)}
    cache, a = FS.handle_fetch(cache, 0, FS.Request(0, 0, (("a", 0), ("b", 0))), _reader(table), 7)
    assert (a.outcome, a.session_id) == (FS.FULL_NEW, 7)
    session = cache.get(7)
    assert session is not None and session.epoch == 1 and session.names() == ("a", "b")
    assert [(c.hw, c.log_start) for c in session.partitions] == [(3, 0), (5, 0)]
    cache, a = FS.handle_fetch(cache, 1, FS.Request(7, 0, (("a", 0),)), _reader(table), 9)
    assert a.session_id == 9 and set(cache.sessions) == {9}
    cache, a = FS.handle_fetch(cache, 2, FS.Request(9, -1, (("a", 0),)), _reader(table), 11)
    assert (a.outcome, a.session_id, len(cache.sessions)) == (FS.SESSIONLESS, 0, 0)


def test_a_new_session_id_must_be_fresh_and_positive() -> None:
    cache, _ = FS.handle_fetch(FS.Cache(3), 0, FS.Request(0, 0, ()), _reader({}), 7)
    with pytest.raises(NotEnabled, match="newSessionId"):
        FS.handle_fetch(cache, 0, FS.Request(0, 0, ()), _reader({}), 7)
    with pytest.raises(NotEnabled):
        FS.handle_fetch(cache, 0, FS.Request(0, 0, ()), _reader({}), 0)


def test_incremental_errors_and_epoch_advance() -> None:
    table = {"a": _data("a", 3)}
    cache, _ = FS.handle_fetch(FS.Cache(2), 0, FS.Request(0, 0, (("a", 0),)), _reader(table), 7)
    _, a = FS.handle_fetch(cache, 0, FS.Request(8, 1, ()), _reader(table), 0)
    assert (a.outcome, a.error, a.session_id) == (FS.SESSION_ERROR, FETCH_SESSION_ID_NOT_FOUND, 0)
    _, a = FS.handle_fetch(cache, 0, FS.Request(7, 2, ()), _reader(table), 0)
    assert a.error == INVALID_FETCH_SESSION_EPOCH
    cache, a = FS.handle_fetch(cache, 0, FS.Request(7, 1, ()), _reader(table), 0)
    assert (a.outcome, a.partitions, cache.sessions[7].epoch) == (FS.INCREMENTAL, (), 2)
    cache, a = FS.handle_fetch(cache, 0, FS.Request(7, 2, (), ("a",)), _reader(table), 0)
    assert (a.outcome, a.session_id, len(cache.sessions)) == (FS.CLOSED, 0, 0)  # left empty: removed


def test_incremental_answer_selects_changes_and_moves_partitions_with_records_to_the_end() -> None:
    session = FS.Session(7, False, tuple(FS.CachedPartition(n, 0, 3, 0) for n in "abc"), 0, 0, 2)
    from kconform.model.records import Record

    rec = Record(3, -1, -1, -1, 1, 0, -1)
    data = (
        FS.PartitionData("a", NONE, 3, 3, 0),  # nothing new: left out
        FS.PartitionData("b", NONE, 4, 4, 0, (rec,)),  # records: included, moved to the end
        FS.PartitionData("c", NONE, 3, 3, 1),  # log start only: included, keeps its place
    )
    new, selected = FS.select_updates(session, data)
    assert [d.name for d in selected] == ["b", "c"]
    assert new.names() == ("a", "c", "b")
    assert new.find("c") == FS.CachedPartition("c", 0, 3, 1)
    err, _ = FS.select_updates(new, (FS.PartitionData("a", NOT_LEADER_OR_FOLLOWER, -1, -1, -1), *data[1:]))
    assert err.find("a") == FS.CachedPartition("a", 0, -1, -1)  # the error caches HW -1: re-sent later


def _cache_with(*sessions: FS.Session, slots: int = 2) -> FS.Cache:
    return FS.Cache(slots, FS.MIN_EVICTION_MS, FrozenMap({s.id: s for s in sessions}))


def test_eviction_takes_a_stale_session_first() -> None:
    old = FS.touch(FS.Session(5, True, (), 0, 0, 1), 0, FS.MIN_EVICTION_MS)
    young = FS.touch(FS.Session(6, False, (), 100_000, 100_000, 1), 100_000, FS.MIN_EVICTION_MS)
    cache = _cache_with(old, young)
    assert FS.eviction_victim(cache, False, 0, 120_000) is None  # not stale: 120 000 is not > 120 000
    victim = FS.eviction_victim(cache, False, 0, 120_001)
    assert victim is not None and victim.id == 5  # privileged, but unused for more than the eviction time


def test_eviction_by_evictable_key_privileged_and_size() -> None:
    parts = tuple(FS.CachedPartition(n, 0) for n in "ab")
    small = FS.touch(FS.Session(5, False, parts[:1], 0, 0, 1), 130_000, FS.MIN_EVICTION_MS)
    follower = FS.touch(FS.Session(6, True, parts, 0, 0, 1), 100_000, FS.MIN_EVICTION_MS)
    cache = _cache_with(small, follower)
    victim = FS.eviction_victim(cache, False, 2, 131_000)
    assert victim is not None and victim.id == 5  # old enough since creation, smaller than the newcomer
    assert FS.eviction_victim(cache, False, 1, 131_000) is None  # (False, 1, 0) < (False, 1, 5): not bigger
    young = FS.touch(FS.Session(5, False, parts[:1], 100_000, 100_000, 1), 100_000, FS.MIN_EVICTION_MS)
    cache = _cache_with(young, follower)
    assert FS.eviction_victim(cache, False, 5, 131_000) is None  # nobody evictable by all yet
    victim = FS.eviction_victim(cache, True, 0, 131_000)
    assert victim is not None and victim.id == 5  # a follower may evict any unprivileged session


def test_client_builds_full_then_incremental_requests() -> None:
    h, req = FC.build(FC.INITIAL, (("a", 0), ("b", 0)))
    assert (req.session_id, req.epoch, req.to_send, req.forgotten) == (0, 0, (("a", 0), ("b", 0)), ())
    h, ok = FC.handle_response(h, NONE, 7, ("a", "b"))
    assert ok and (h.session_id, h.epoch) == (7, 1)
    h, req = FC.build(h, (("c", 0), ("b", 4)))
    assert req.to_send == (("c", 0), ("b", 4)) and req.forgotten == ("a",)
    assert h.partitions == (("b", 4), ("c", 0))
    h, ok = FC.handle_response(h, NONE, 7, ("b",))
    assert ok and h.epoch == 2


@pytest.mark.parametrize(
    ("epoch", "error", "session_id", "names", "expected", "ok"),
    [
        (3, FETCH_SESSION_ID_NOT_FOUND, 0, (), (0, 0), False),
        (3, INVALID_FETCH_SESSION_EPOCH, 0, (), (7, 0), False),
        (3, NONE, 0, ("a",), (0, 0), True),  # the session was closed by the broker
        (3, NONE, 7, ("z",), (7, 0), False),  # an extra partition
        (0, NONE, 0, ("a",), (0, 0), False),  # a full answer must name every session partition
        (0, NONE, 0, ("a", "b"), (0, 0), True),  # sessionless
        (2**31 - 1, NONE, 7, (), (7, 1), True),  # wraps to 1
    ],
)
def test_handle_response(
    epoch: int, error: int, session_id: int, names: tuple[str, ...], expected: tuple[int, int], ok: bool
) -> None:
    h = FC.Handler(7, epoch, (("a", 0), ("b", 0)))
    after, used = FC.handle_response(h, error, session_id, names)
    assert ((after.session_id, after.epoch), used) == (expected, ok)


def test_error_and_close() -> None:
    h = FC.Handler(7, 5, (("a", 0),))
    assert (FC.handle_error(h).session_id, FC.handle_error(h).epoch) == (7, 0)
    assert FC.notify_close(h).epoch == -1


# ---------------------------------------------------------------------------------------------
# The slice's state


def _consumer_run() -> S.FetchState:
    s = S.initial_state(CFG)
    s = S.append(s, "t-0", (1, 2), -1, False, False)
    s = S.append(s, "t-0", (3, 4), 1000, True, False)  # aborted
    s = S.append(s, "t-0", (5,), 1001, True, True)
    s = S.hw_advanced(s, "t-0", s.logs["t-0"].part.leo)
    s = S.assigned(s, CFG, 0, ("t-0",))
    for msg in range(10, 16):
        s, _ = S.send(s, CFG, 0, msg)
        s, answer = S.handle(s, CFG, msg, 0, 77)
        s, _ = S.apply_answer(s, CFG, 0, msg, answer)
    return s


def test_a_read_committed_consumer_gets_every_committed_record_once() -> None:
    s = _consumer_run()
    assert s.consumed[(0, "t-0")].offsets == (0, 1, 5)  # the aborted 2, 3 and the markers 4, 6 never delivered
    assert not I.check_state(s, CFG)


def test_one_request_in_flight_and_timeouts() -> None:
    s = S.assigned(S.initial_state(CFG), CFG, 0, ("t-0",))
    s, _ = S.send(s, CFG, 0, 1)
    with pytest.raises(NotEnabled, match="KAFKA-8052"):
        S.send(s, CFG, 0, 2)
    with pytest.raises(NotEnabled, match="not timed out"):
        S.timed_out(s, CFG, 0, 1)
    s = S.advance_clock(s, CFG.request_timeout_ms)
    s, out = S.timed_out(s, CFG, 0, 1)
    assert (out.outcome, out.epoch) == (S.TIMED_OUT, 0)


def test_out_of_range_resets_to_the_log_start() -> None:
    s = S.initial_state(CFG)
    s = S.append(s, "t-1", (1, 2, 3), -1, False, False)
    s = S.hw_advanced(s, "t-1", 3)
    s = S.assigned(s, CFG, 1, ("t-1",))
    s = S.log_start_advanced(s, "t-1", 2)
    s, _ = S.send(s, CFG, 1, 1)
    s, answer = S.handle(s, CFG, 1, 1, 5)
    assert answer.partitions[0].error == OFFSET_OUT_OF_RANGE
    s, out = S.apply_answer(s, CFG, 1, 1, answer)
    assert out.positions == (("t-1", 2),)
    assert not I.check_state(s, CFG)


# ---------------------------------------------------------------------------------------------
# Each invariant: a bad state fires it, the near miss is silent


def _in_session() -> S.FetchState:
    s = S.initial_state(CFG)
    s = S.append(s, "t-0", (1, 2), -1, False, False)
    s = S.hw_advanced(s, "t-0", 1)
    s = S.assigned(s, CFG, 0, ("t-0",))
    s, _ = S.send(s, CFG, 0, 1)
    s, answer = S.handle(s, CFG, 1, 0, 9)
    s, _ = S.apply_answer(s, CFG, 0, 1, answer)
    return s


def _names(s: S.FetchState) -> set[str]:
    return {v.invariant for v in I.check_state(s, CFG)}


def test_session_view_agrees() -> None:
    s = _in_session()
    assert "SessionViewAgrees" not in _names(s)
    session = s.cache.sessions[9]
    bumped = replace(session, epoch=5)
    assert "SessionViewAgrees" in _names(replace(s, cache=replace(s.cache, sessions=s.cache.sessions.set(9, bumped))))
    stale = replace(session, partitions=(replace(session.partitions[0], hw=0),))
    assert "SessionViewAgrees" in _names(replace(s, cache=replace(s.cache, sessions=s.cache.sessions.set(9, stale))))
    unknown = replace(session, partitions=(replace(session.partitions[0], hw=-1),))  # an error cached: no claim
    assert "SessionViewAgrees" not in _names(
        replace(s, cache=replace(s.cache, sessions=s.cache.sessions.set(9, unknown)))
    )


def test_no_update_lost() -> None:
    s = _in_session()
    s, _ = S.send(s, CFG, 0, 2)
    s = S.hw_advanced(s, "t-0", 2)
    s, answer = S.handle(s, CFG, 2, 0, 0)
    assert answer.partitions and "NoUpdateLost" not in _names(s)
    lost = replace(answer, partitions=())
    assert "NoUpdateLost" in _names(replace(s, last_answer=(2, 0, lost)))
    session = s.cache.sessions[9]
    assert session.partitions[0].hw == 2  # near miss: nothing new since, an empty answer is right
    s2, _ = S.apply_answer(s, CFG, 0, 2, answer)
    s2, _ = S.send(s2, CFG, 0, 3)
    s2, answer2 = S.handle(s2, CFG, 3, 0, 0)
    assert answer2.partitions == () and "NoUpdateLost" not in _names(s2)


def test_no_skip_no_repeat() -> None:
    s = _consumer_run()
    got = s.consumed[(0, "t-0")]
    assert "NoSkipNoRepeat" not in _names(s)
    assert "NoSkipNoRepeat" in _names(
        replace(s, consumed=s.consumed.set((0, "t-0"), replace(got, offsets=(0, 1, 1, 5))))
    )
    assert "NoSkipNoRepeat" in _names(replace(s, consumed=s.consumed.set((0, "t-0"), replace(got, offsets=(0, 5)))))
    assert "NoSkipNoRepeat" in _names(
        replace(s, consumed=s.consumed.set((0, "t-0"), replace(got, offsets=(0, 1, 2, 5))))
    )
    near = replace(s, consumed=s.consumed.set((0, "t-0"), S.Consumed(1, (1, 5))))  # a reset to offset 1
    assert "NoSkipNoRepeat" not in _names(near)


def test_aborted_txns_carried() -> None:
    s = S.initial_state(CFG)
    s = S.append(s, "t-0", (1, 2), 1000, True, False)
    s = S.hw_advanced(s, "t-0", 3)
    s = S.assigned(s, CFG, 0, ("t-0",))
    s, _ = S.send(s, CFG, 0, 1)
    s, answer = S.handle(s, CFG, 1, 0, 9)
    assert answer.partitions[0].aborted == (AbortedTxn(1000, 0),)
    assert "AbortedTxnsCarried" not in _names(s)
    bare = replace(answer, partitions=(replace(answer.partitions[0], aborted=()),))
    assert "AbortedTxnsCarried" in _names(replace(s, last_answer=(1, 0, bare)))
    assert "AbortedTxnsCarried" not in _names(replace(s, last_answer=(1, 1, bare)))  # read_uncommitted: no list


def test_session_epoch_valid() -> None:
    s = _in_session()
    assert "SessionEpochValid" not in _names(s)
    zero = replace(s.cache.sessions[9], epoch=0)
    assert "SessionEpochValid" in _names(replace(s, cache=replace(s.cache, sessions=s.cache.sessions.set(9, zero))))


def test_every_invariant_has_a_test_here() -> None:
    tested = {"SessionViewAgrees", "NoUpdateLost", "NoSkipNoRepeat", "AbortedTxnsCarried", "SessionEpochValid"}
    assert set(I.INVARIANTS) == tested
    assert all(inv.doc and inv.cite for inv in I.INVARIANTS.values())


def test_the_yardstick_ports_both_kafka_classes_and_a_changed_literal_disagrees() -> None:
    from kconform.conformance.yardstick import fetch_session_handler_test as H
    from kconform.conformance.yardstick import fetch_session_test as T
    from kconform.conformance.yardstick import table
    from kconform.conformance.yardstick.dsl import check, run
    from kconform.conformance.yardstick.model_side import model_driver

    rows = table.rows(T.SCENARIOS + H.SCENARIOS)
    assert all(r.model.agrees or r.scenario.out_of_scope for r in rows)
    assert sum(r.model.agrees for r in rows) >= 13
    (expiration,) = [s for s in T.SCENARIOS if s.method == "testFetchSessionExpiration"]
    wrong = replace(expiration, steps=(*expiration.steps[:-1], check(sessions={2, 3})))  # Kafka evicts session 2
    assert run(wrong, model_driver(expiration.subject)).disagrees
