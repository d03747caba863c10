"""KIP-392 follower fetching in the model (model.read_replica): what the leader names, what a
follower serves, how the consumer handles each answer, and the three reader invariants firing on
a bad state and silent on a near miss."""

from __future__ import annotations

from kconform.model import invariants as I
from kconform.model import read_replica as RR
from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.errors import (
    FENCED_LEADER_EPOCH,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    UNKNOWN_LEADER_EPOCH,
)
from kconform.model.evolve import evolve
from kconform.model.reader import Delivery, Reader, ReaderGhost, Reset
from kconform.model.state import State
from tests.modelkit import booted, replicate

CFG = ReplicationConfig(follower_fetching=True, client_rack=1)


def _written(n: int) -> State:
    """Leader 0 with ``n`` records; followers 1 and 2 fetched three times: their HW is n."""
    s = booted(CFG)
    for i in range(n):
        s, _ = R.produce(s, CFG, 0, i + 1, 10 + i, 1)
    for _ in range(3):
        s = replicate(replicate(s, CFG, 1), CFG, 2)
    return s


def test_the_leader_names_the_consumers_rack_and_reads_nothing() -> None:
    s = _written(3)
    out = RR.replica_fetch(s, 0, 1, 0, CFG.client_rack)
    assert out == RR.ReplicaFetchOutcome(NONE, (), 3, 1)
    # the leader in the consumer's rack, or a rack with no broker: the leader serves
    assert RR.replica_fetch(s, 0, 1, 0, 0).preferred == RR.NO_REPLICA
    assert RR.replica_fetch(s, 0, 1, 0, 0).entries == s.replica(0).log[1:3]


def test_the_leader_only_names_isr_followers_that_have_the_offset() -> None:
    s = _written(3)
    assert RR.select_read_replica(s, 0, 3, 1) == 1
    assert RR.select_read_replica(s, 0, 4, 1) == RR.NO_REPLICA  # LEO as the leader knows it is 3
    out_of_isr = s.with_replica(0, evolve(s.replica(0), isr=(0, 2)))  # KAFKA-14372
    assert RR.select_read_replica(out_of_isr, 0, 0, 1) == RR.NO_REPLICA


def test_a_follower_serves_below_its_own_hw_and_empty_above_it() -> None:
    s = booted(CFG)
    for i in range(3):
        s, _ = R.produce(s, CFG, 0, i + 1, 10 + i, 1)
    s = replicate(s, CFG, 1)  # follower 1 has 3 records, HW 0 (the leader's HW was 0)
    s = replicate(s, CFG, 2)
    s = replicate(s, CFG, 1)  # leader HW 3 now; follower 1's HW 3
    lagging = s.with_replica(1, evolve(s.replica(1), hw=1))
    out = RR.replica_fetch(lagging, 1, 0, 0, 1)
    assert out.error == NONE and [e.offset for e in out.entries] == [0] and out.hw == 1
    # above the follower's HW but within its log: no records, no error (KIP-392)
    assert RR.replica_fetch(lagging, 1, 2, 0, 1) == RR.ReplicaFetchOutcome(NONE, (), 1, RR.NO_REPLICA)
    # past its LEO: OFFSET_OUT_OF_RANGE
    assert RR.replica_fetch(lagging, 1, 4, 0, 1).error == OFFSET_OUT_OF_RANGE


def test_a_follower_checks_the_leader_epoch() -> None:
    s = _written(1)
    assert RR.replica_fetch(s, 1, 0, 1, 1).error == UNKNOWN_LEADER_EPOCH
    later = s.with_replica(1, evolve(s.replica(1), leader_epoch=2))
    assert RR.replica_fetch(later, 1, 0, 1, 1).error == FENCED_LEADER_EPOCH
    unregistered = s.with_replica(1, evolve(s.replica(1), registered=False))
    assert RR.replica_fetch(unregistered, 1, 0, -1, 1).error == NOT_LEADER_OR_FOLLOWER


def test_the_consumer_switches_and_expires() -> None:
    s = _written(2)
    reader, ghost = RR.apply_answer(
        Reader(), ReaderGhost(), 100, 5000, 0, False, 0, RR.ReplicaFetchOutcome(NONE, (), 2, 1), 0
    )
    assert reader == Reader(0, 1, 5100) and ghost == ReaderGhost()
    assert RR.read_replica(reader, 5100, 0) == (reader, 1, True)
    assert RR.read_replica(reader, 5101, 0) == (Reader(0), 0, False)
    out = RR.replica_fetch(s, 1, 0, 0, 1)
    reader, ghost = RR.apply_answer(reader, ghost, 200, 5000, 1, True, 0, out, 0)
    assert reader.position == 2 and [d.entry.offset for d in ghost.deliveries] == [0, 1]
    # the same preferred replica named again keeps its expiry (updatePreferredReadReplica)
    again, _ = RR.apply_answer(reader, ghost, 300, 5000, 0, False, 2, RR.ReplicaFetchOutcome(NONE, (), 2, 1), 0)
    assert again.expires_ms == 5100
    # a stale answer (another offset than the position) is discarded
    assert RR.apply_answer(reader, ghost, 300, 5000, 1, True, 0, out, 0) == (reader, ghost)


def test_out_of_range_from_a_follower_goes_back_to_the_leader() -> None:
    """KAFKA-8365: only the leader's OFFSET_OUT_OF_RANGE resets the position."""
    oor = RR.ReplicaFetchOutcome(OFFSET_OUT_OF_RANGE, (), 1, RR.NO_REPLICA)
    at_follower = Reader(5, 1, 9000)
    reader, ghost = RR.apply_answer(at_follower, ReaderGhost(), 0, 5000, 1, True, 5, oor, 0)
    assert reader == Reader(5) and ghost.resets == ()
    reader, ghost = RR.apply_answer(reader, ghost, 0, 5000, 0, False, 5, oor, 2)
    assert reader == Reader(2) and ghost.resets == (Reset(0, False, False, 2, 0),)
    # UNKNOWN_LEADER_EPOCH is only logged; other errors clear the preferred replica
    unknown = RR.ReplicaFetchOutcome(UNKNOWN_LEADER_EPOCH, (), -1, RR.NO_REPLICA)
    assert RR.apply_answer(at_follower, ReaderGhost(), 0, 5000, 1, True, 5, unknown, 0)[0] == at_follower
    fenced = RR.ReplicaFetchOutcome(FENCED_LEADER_EPOCH, (), -1, RR.NO_REPLICA)
    assert RR.apply_answer(at_follower, ReaderGhost(), 0, 5000, 1, True, 5, fenced, 0)[0] == Reader(5)


def _with_reader(s: State, deliveries: tuple[Delivery, ...], resets: tuple[Reset, ...] = ()) -> State:
    return evolve(s, ghost=evolve(s.ghost, reader=ReaderGhost(deliveries, resets)))


def _names(s: State) -> set[str]:
    return {v.invariant for v in I.check_state(s, CFG) if not v.allowed}


def test_replica_read_below_hw_fires_and_near_miss() -> None:
    s = _written(3)
    log = s.replica(1).log
    assert "ReplicaReadBelowHw" in _names(_with_reader(s, (Delivery(log[0], 1, True, 1), Delivery(log[1], 1, True, 1))))
    assert "ReplicaReadBelowHw" not in _names(
        _with_reader(s, (Delivery(log[0], 1, True, 1), Delivery(log[1], 0, False, 2)))
    )


def test_reader_no_skip_no_repeat_fires_and_near_miss() -> None:
    s = _written(3)
    log = s.replica(1).log
    skip = (Delivery(log[0], 0, False, 3), Delivery(log[2], 1, True, 3))
    repeat = (Delivery(log[0], 0, False, 3), Delivery(log[1], 1, True, 3), Delivery(log[1], 0, False, 3))
    assert "ReaderNoSkipNoRepeat" in _names(_with_reader(s, skip))
    assert "ReaderNoSkipNoRepeat" in _names(_with_reader(s, repeat))
    switch = (Delivery(log[0], 0, False, 3), Delivery(log[1], 1, True, 3), Delivery(log[2], 0, False, 3))
    assert "ReaderNoSkipNoRepeat" not in _names(_with_reader(s, switch))
    # a reset by the leader restarts the count at its position
    after_reset = (Delivery(log[0], 0, False, 3), Delivery(log[1], 0, False, 3), Delivery(log[0], 0, False, 3))
    assert "ReaderNoSkipNoRepeat" not in _names(_with_reader(s, after_reset, (Reset(0, False, False, 0, 2),)))


def test_no_reset_on_follower_answer_fires_and_near_miss() -> None:
    s = _written(1)
    assert "NoResetOnFollowerAnswer" in _names(_with_reader(s, (), (Reset(1, True, True, 0, 0),)))
    assert "NoResetOnFollowerAnswer" in _names(_with_reader(s, (), (Reset(0, False, True, 0, 0),)))
    assert "NoResetOnFollowerAnswer" not in _names(_with_reader(s, (), (Reset(0, False, False, 0, 0),)))
    # the lazy-expiry race: nothing was set when the follower's answer came, so Kafka resets
    assert "NoResetOnFollowerAnswer" not in _names(_with_reader(s, (), (Reset(1, True, False, 0, 0),)))


def test_out_of_range_from_a_follower_after_expiry_resets() -> None:
    """SubscriptionState.preferredReadReplica expires the replica lazily, when the consumer next
    selects one, even with a Fetch to the follower pending (AbstractFetch.prepareFetchRequests);
    the follower's OFFSET_OUT_OF_RANGE then finds nothing to clear (clearPreferredReadReplica is
    empty) and FetchCollector.handleInitializeErrors resets. The model does the same, and
    NoResetOnFollowerAnswer stays silent on it."""
    s = _written(1)
    at_follower = Reader(5, 1, 9000)
    expired, target, preferred = RR.read_replica(at_follower, 9001, 0)
    assert (expired, target, preferred) == (Reader(5), 0, False)
    oor = RR.ReplicaFetchOutcome(OFFSET_OUT_OF_RANGE, (), 1, RR.NO_REPLICA)
    reader, ghost = RR.apply_answer(expired, ReaderGhost(), 9002, 5000, 1, True, 5, oor, 0)
    assert reader == Reader(0) and ghost.resets == (Reset(1, True, False, 0, 0),)
    assert "NoResetOnFollowerAnswer" not in _names(evolve(s, ghost=evolve(s.ghost, reader=ghost)))


def test_follower_reads_join_the_consumed_ghost() -> None:
    s = _written(2)
    after, out = RR.handle_fetch(s, CFG, 1, 0, 0)
    assert out.entries and after.ghost.consumed[-len(out.entries) :] == tuple((e, out.hw) for e in out.entries)
    assert I.check_state(after, CFG) == []
