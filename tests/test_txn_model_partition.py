"""A partition of the exactly-once slice: produce, verification, markers, LSO, aborted index,
read_committed fetch, the consumer filter, group offsets (kafka-facts §1.8-§1.10, §2, §4, §7)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kconform.model import producer_state as P
from kconform.model import txn_partition as T
from kconform.model.not_enabled import NotEnabled
from kconform.model.txn_config import TxnConfig, java_string_hash, partition_for
from kconform.traces.events import (
    ABORT_MARKER,
    COMMIT_MARKER,
    CONCURRENT_TRANSACTIONS,
    INVALID_PRODUCER_EPOCH,
    INVALID_TXN_STATE,
    NONE,
    NOT_ENOUGH_REPLICAS,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
    TRANSACTION_COORDINATOR_FENCED,
    AbortedTxn,
    Record,
    TopicOffset,
)

A, B = 100, 200


def part(name: str = "t-0") -> T.Partition:
    return T.Partition(name=name, leader=0)


def txn_write(p: T.Partition, pid: int, seq: int, rids: tuple[int, ...], epoch: int = 0) -> T.Partition:
    """A transactional batch without verification (as with verification off)."""
    p, r = T.produce(p, 0, 0, False, pid, epoch, seq, rids, True, -1)
    assert r.outcome == P.APPENDED, r
    return p


def marker(p: T.Partition, pid: int, commit: bool, epoch: int = 0, coord: int = 0) -> T.Partition:
    p, r = T.append_marker(p, 0, 0, pid, epoch, commit, coord)
    assert r.error == NONE, r
    return p


def test_internal_partitions_are_chosen_as_kafka_does() -> None:
    assert java_string_hash("my-group") == -1906497762
    assert partition_for("my-group") == 12 and partition_for("test-group") == 12
    assert partition_for("txn-1") == 10 and partition_for("my-transactional-id") == 46
    assert partition_for("") == 0 and partition_for("polygenelubricants") == 0
    cfg = TxnConfig()
    assert cfg.state_partition("txn-1") == "__transaction_state-10"
    assert cfg.offsets_partition("my-group") == "__consumer_offsets-12"


def test_produce_not_leader() -> None:
    _p, r = T.produce(part(), 1, 0, False, A, 0, 0, (1,), False, -1)
    assert (r.outcome, r.error) == (P.REJECTED, NOT_LEADER_OR_FOLLOWER)


def test_produce_appends_records_with_sequences_and_dedups_retries() -> None:
    p, r = T.produce(part(), 0, 5, False, A, 0, 0, (1, 2), False, -1)
    assert r == T.ProduceResult(P.APPENDED, NONE, 0)
    assert p.log == (Record(0, A, 0, 0, 1, 0, -1), Record(1, A, 0, 1, 2, 0, -1))
    p2, dup = T.produce(p, 0, 6, False, A, 0, 0, (1, 2), False, -1)
    assert dup == T.ProduceResult(P.DUPLICATE, NONE, 0) and p2 == p


def test_lso_is_min_of_first_unstable_offset_and_hw() -> None:
    p = T.produce(part(), 0, 0, False, B, 0, 0, (9,), False, -1)[0]  # offset 0, plain
    p = txn_write(p, A, 0, (1,))  # offset 1 opens A's transaction
    p = T.advance_hw(p, 2)
    assert T.last_stable_offset(p) == 1
    p = marker(p, A, True)  # marker at 2
    assert T.last_stable_offset(p) == 1, "a completed transaction holds the LSO until its marker is below the HW"
    p = T.advance_hw(p, 3)
    assert T.last_stable_offset(p) == 3 and p.unreplicated == ()
    with pytest.raises(NotEnabled):
        T.advance_hw(p, 2)


def test_aborted_index_entry_and_its_last_stable_offset() -> None:
    p = txn_write(part(), A, 0, (1,))  # 0
    p = txn_write(p, B, 0, (2,))  # 1
    p = marker(p, A, False)  # 2
    assert p.aborted_index == (T.IndexEntry(A, 0, 2, 1),)
    p = marker(p, B, False)  # 3
    assert p.aborted_index[-1] == T.IndexEntry(B, 1, 3, 4)
    empty = marker(p, A, False)  # an empty transaction: no index entry
    assert len(empty.aborted_index) == 2 and empty.log[-1].control == ABORT_MARKER


def test_commit_is_not_indexed() -> None:
    p = marker(txn_write(part(), A, 0, (1,)), A, True)
    assert p.aborted_index == () and p.log[-1].control == COMMIT_MARKER


@pytest.mark.parametrize(
    ("stored", "marker_epoch", "marker_coord", "error"),
    [((3, 2), 2, 2, INVALID_PRODUCER_EPOCH), ((3, 2), 3, 1, TRANSACTION_COORDINATOR_FENCED), ((3, 2), 4, 2, NONE)],
)
def test_marker_fencing_on_the_partition(
    stored: tuple[int, int], marker_epoch: int, marker_coord: int, error: int
) -> None:
    entry = replace(P.EMPTY_ENTRY, epoch=stored[0], coordinator_epoch=stored[1])
    p = replace(part(), producers=part().producers.set(A, entry))
    p2, r = T.append_marker(p, 0, 0, A, marker_epoch, True, marker_coord)
    assert r.error == error
    assert (p2.leo == 1) == (error == NONE)
    assert T.append_marker(p, 1, 0, A, 4, True, 2)[1].error == NOT_LEADER_OR_FOLLOWER


def test_read_committed_fetch_stops_at_lso_and_lists_aborted() -> None:
    p = txn_write(part(), A, 0, (1,))  # 0
    p = txn_write(p, B, 0, (2,))  # 1
    p = marker(p, A, False)  # 2
    p = T.advance_hw(p, 3)
    rc = T.consumer_fetch(p, 0, 0, True)
    assert (rc.lso, rc.hw, len(rc.records)) == (1, 3, 1)
    assert rc.aborted == (AbortedTxn(A, 0),)
    ru = T.consumer_fetch(p, 0, 0, False)
    assert len(ru.records) == 3 and ru.aborted == ()
    assert T.consumer_fetch(p, 0, 1, True).records == ()
    assert T.consumer_fetch(p, 0, 1, True).aborted == ()
    assert T.consumer_fetch(p, 0, 4, True).error == OFFSET_OUT_OF_RANGE
    assert T.consumer_fetch(p, 2, 0, True).error == NOT_LEADER_OR_FOLLOWER


def test_consumer_filter_skips_aborted_batches_and_control_records() -> None:
    p = txn_write(part(), A, 0, (1,))  # 0 aborted
    p = txn_write(p, B, 0, (2,))  # 1 committed
    p = marker(p, A, False)  # 2
    p = txn_write(p, A, 1, (3,))  # 3 A's next txn, committed
    p = marker(p, B, True)  # 4
    p = marker(p, A, True)  # 5
    p = T.advance_hw(p, 6)
    rc = T.consumer_fetch(p, 0, 0, True)
    polled = T.poll(rc, 0, True)
    assert polled.rids == (2, 3) and polled.next_offset == 6
    ru = T.poll(T.consumer_fetch(p, 0, 0, False), 0, False)
    assert ru.rids == (1, 2, 3)
    unfiltered = T.poll(replace(rc, aborted=()), 0, True)
    assert unfiltered.rids == (1, 2, 3), "without the aborted list the filter has nothing to skip"
    assert T.poll(replace(rc, error=OFFSET_OUT_OF_RANGE, records=()), 7, True) == T.Polled((), 7)


def test_verification_flow() -> None:
    p, r = T.produce(part(), 0, 0, True, A, 0, 0, (1,), True, 77)
    assert r.outcome == P.VERIFYING and p.leo == 0
    for err, produce_err in [
        (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH),
        (TRANSACTION_ABORTABLE, INVALID_TXN_STATE),
        (CONCURRENT_TRANSACTIONS, NOT_ENOUGH_REPLICAS),
    ]:
        assert T.apply_verification(p, 0, err, 77, A, 0, 0, (1,))[1] == T.ProduceResult(P.REJECTED, produce_err)
    ok, r = T.apply_verification(p, 0, NONE, 77, A, 0, 0, (1,))
    assert r == T.ProduceResult(P.APPENDED, NONE, 0) and ok.producer(A).in_transaction
    assert ok.producer(A).verification is None
    stale = marker(p, A, False)
    assert T.apply_verification(stale, 0, NONE, 77, A, 0, 0, (1,))[1].error == INVALID_TXN_STATE
    # with an ongoing transaction no verification is needed
    assert T.produce(ok, 0, 0, True, A, 0, 1, (2,), True, 78)[1].outcome == P.APPENDED


def test_expiry_of_a_producer() -> None:
    p = T.produce(part(), 0, 10, False, A, 0, 0, (1,), False, -1)[0]
    assert T.expire_producer(p, A, 10 + 999, 1000) is None
    gone = T.expire_producer(p, A, 10 + 1000, 1000)
    assert gone is not None and A not in gone.producers
    assert T.expire_producer(txn_write(part(), A, 0, (1,)), A, 10**9, 1) is None


def test_transactional_offsets_pending_until_commit() -> None:
    o = part("__consumer_offsets-12")
    o, r = T.txn_offset_commit(o, 0, 0, "g", A, 0, (TopicOffset("t-0", 5),))
    assert r == T.OffsetsResult(NONE, 0)
    assert T.offset_fetch(o, 0, "g", False).offsets == ()
    # A partition with only a pending offset has no committed one: fetch-all does not list it.
    assert T.offset_fetch(o, 0, "g", True) == T.OffsetsResult(NONE)
    committed = marker(o, A, True)
    assert T.offset_fetch(committed, 0, "g", True).offsets == (TopicOffset("t-0", 5),)
    aborted = marker(o, A, False)
    assert T.offset_fetch(aborted, 0, "g", True) == T.OffsetsResult(NONE)


def test_later_plain_commit_wins_over_an_earlier_transactional_one() -> None:
    o = part("__consumer_offsets-12")
    o = T.txn_offset_commit(o, 0, 0, "g", A, 0, (TopicOffset("t-0", 5),))[0]
    o = T.offset_commit(o, 0, "g", (TopicOffset("t-0", 9),))[0]
    o = marker(o, A, True)
    assert T.offset_fetch(o, 0, "g", False).offsets == (TopicOffset("t-0", 9),)


def test_txn_offset_commit_epoch_fencing() -> None:
    o = replace(part("o-1"), producers=part().producers.set(A, replace(P.EMPTY_ENTRY, epoch=3)))
    assert T.txn_offset_commit(o, 0, 0, "g", A, 2, (TopicOffset("t-0", 5),))[1].error == INVALID_PRODUCER_EPOCH
    assert T.txn_offset_commit(o, 0, 0, "g", A, 3, (TopicOffset("t-0", 5),))[1].error == NONE


def test_require_stable_is_answered_per_partition() -> None:
    """Regression (issue 14): OffsetMetadataManagerTest.testFetchAllOffsetsWithPendingTransactionalOffsets
    (Kafka trunk 1eb7644349cb): committed foo-0=100, foo-1=110, bar-0=200; a transaction of producer
    10 commits foo-1=111, bar-0=201, bar-1=211. With require_stable foo-0 keeps 100 and only foo-1 and
    bar-0 are UNSTABLE_OFFSET_COMMIT (bar-1 is not listed); without it the committed offsets; after
    the COMMIT marker every partition is stable with the transaction's offsets."""
    o = part("__consumer_offsets-12")
    o = T.offset_commit(o, 0, "group", (TopicOffset("foo-0", 100), TopicOffset("foo-1", 110)))[0]
    o = T.offset_commit(o, 0, "group", (TopicOffset("bar-0", 200),))[0]
    pending = (TopicOffset("foo-1", 111), TopicOffset("bar-0", 201), TopicOffset("bar-1", 211))
    o = T.txn_offset_commit(o, 0, 0, "group", 10, 1, pending)[0]
    stable = T.offset_fetch(o, 0, "group", True)
    assert stable == T.OffsetsResult(NONE, -1, (TopicOffset("foo-0", 100),), ("bar-0", "foo-1"))
    plain = T.offset_fetch(o, 0, "group", False)
    assert sorted(plain.offsets) == [TopicOffset("bar-0", 200), TopicOffset("foo-0", 100), TopicOffset("foo-1", 110)]
    assert plain.unstable == ()
    done = marker(o, 10, True, epoch=1)
    after = T.offset_fetch(done, 0, "group", True)
    assert after.unstable == () and sorted(after.offsets) == sorted((TopicOffset("foo-0", 100), *pending))
