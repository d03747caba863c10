"""The replication model's handlers follow Kafka's rules (kafka-facts §3, §6)."""

from __future__ import annotations

import pytest

from kconform.model import epochs
from kconform.model import replication as R
from kconform.model.config import ConfigError, Protocol, ReplicationConfig
from kconform.traces import events as ev
from tests.modelkit import booted, replicate, spread_metadata

CFG = ReplicationConfig()


def test_epoch_cache_end_offset_for_follows_leader_epoch_file_cache() -> None:
    cache = ((1, 0), (3, 5), (4, 9))
    assert epochs.end_offset_for(cache, 4, 12) == (4, 12)
    assert epochs.end_offset_for(cache, 3, 12) == (3, 9)
    assert epochs.end_offset_for(cache, 2, 12) == (1, 5)
    assert epochs.end_offset_for(cache, 0, 12) == (0, 0)
    assert epochs.end_offset_for(cache, 5, 12) == (-1, -1)
    assert epochs.end_offset_for(cache, -1, 12) == (-1, -1)
    assert epochs.assign(cache, 2, 3) == ((1, 0), (2, 3))
    assert epochs.assign(cache, 4, 10) == cache
    assert epochs.truncate_from_end(cache, 9) == ((1, 0), (3, 5))


def test_acks_all_waits_for_the_isr_and_then_acknowledges() -> None:
    s = booted(CFG)
    s, out = R.produce(s, CFG, 0, req=1, rid=7, acks=-1)
    assert (out.error, out.offset, out.hw) == (ev.NONE, 0, 0)
    with pytest.raises(R.NotEnabled):
        R.complete_produce(s, CFG, 0, 1, ev.NONE)
    for _ in range(2):
        s = replicate(replicate(s, CFG, 1), CFG, 2)
    assert s.replica(0).hw == 1
    s = R.complete_produce(s, CFG, 0, 1, ev.NONE)
    assert s.ghost.acked[0].guaranteed


def test_not_enough_replicas_before_append_when_isr_below_min() -> None:
    cfg = ReplicationConfig(min_insync_replicas=3)
    s = booted(cfg)
    s, _ = R.controller_fence(s, cfg, 2)
    s = spread_metadata(s, cfg)
    s, out = R.produce(s, cfg, 0, 1, 1, -1)
    assert out.error == ev.NOT_ENOUGH_REPLICAS and s.replica(0).leo == 0
    s, out = R.produce(s, cfg, 0, 2, 2, 1)
    assert out.error == ev.NONE and s.replica(0).leo == 1


def test_hw_frozen_below_min_isr_kafka_15583() -> None:
    s = booted(CFG)
    s, _ = R.controller_fence(s, CFG, 1)
    s, _ = R.controller_fence(s, CFG, 2)
    s = spread_metadata(s, CFG)
    s, _ = R.produce(s, CFG, 0, 1, 1, 1)
    assert s.replica(0).isr == (0,) and s.replica(0).hw == 0


def test_invalid_acks_and_not_leader() -> None:
    s = booted(CFG)
    assert R.produce(s, CFG, 0, 1, 1, 2)[1].error == ev.INVALID_REQUIRED_ACKS
    assert R.produce(s, CFG, 1, 1, 1, 1)[1].error == ev.NOT_LEADER_OR_FOLLOWER


def test_stale_epoch_fetch_is_fenced_kip_320() -> None:
    s = booted(CFG)
    s, _ = R.controller_move_leader(s, CFG, 1)
    s = spread_metadata(s, CFG)
    q = R.FetchRequest(leader=1, fetch_offset=0, last_fetched_epoch=-1, current_leader_epoch=0, follower_epoch=0)
    assert R.handle_fetch(s, CFG, 1, 2, q)[1].error == ev.FENCED_LEADER_EPOCH
    q2 = R.FetchRequest(1, 0, -1, 5, 5)
    assert R.handle_fetch(s, CFG, 1, 2, q2)[1].error == ev.UNKNOWN_LEADER_EPOCH


def test_diverging_epoch_truncates_follower_to_the_leaders_epoch_end() -> None:
    s = booted(CFG)
    s, _ = R.produce(s, CFG, 0, 1, 1, 1)
    s = replicate(s, CFG, 1)  # broker 1 has offset 0; broker 2 has nothing
    s, _ = R.produce(s, CFG, 0, 2, 2, 1)
    s = replicate(s, CFG, 1)  # broker 1 has offsets 0, 1 (epoch 0)
    s, _ = R.controller_move_leader(s, CFG, 2)  # broker 2 leads epoch 1 with an empty log
    s = spread_metadata(s, CFG)
    s, _ = R.produce(s, CFG, 2, 3, 3, 1)
    q = R.fetch_request(s, CFG, 1)
    assert (q.fetch_offset, q.last_fetched_epoch) == (2, 0)
    s, resp = R.handle_fetch(s, CFG, 2, 1, q)
    assert (resp.diverging_epoch, resp.diverging_end_offset) == (0, 0)
    s, out = R.apply_fetch_response(s, CFG, 1, q, resp)
    assert (out.outcome, out.truncated_to) == ("diverged", 0)


def test_truncate_to_hw_rung_truncates_on_becoming_follower() -> None:
    cfg = ReplicationConfig(protocol=Protocol.TRUNCATE_TO_HW)
    s = booted(cfg)
    s, _ = R.produce(s, cfg, 0, 1, 1, 1)
    s = replicate(s, cfg, 1)
    s, _ = R.controller_move_leader(s, cfg, 2)
    s, out = R.apply_metadata(s, cfg, 1, s.controller)
    assert (out.outcome, out.truncated_to) == ("become_follower", 0)
    assert s.replica(1).leo == 0


def test_epoch_query_rungs_differ_only_in_the_answer_epoch() -> None:
    """A new leader that never appended: since KAFKA-7415 (2.1, the kip-320 rung) it caches (1, 0)
    at once and answers epoch 0 with (0, 0) (KIP-101's v0 answer carries no epoch); before (the
    kip-101 and kip-279 rungs) its cache is empty and the answer is undefined, so the follower falls
    back to its HW: the same truncation to 0 here."""
    for protocol, expected in ((Protocol.KIP_101, (-1, -1)), (Protocol.KIP_279, (-1, -1)), (Protocol.KIP_320, (0, 0))):
        cfg = ReplicationConfig(protocol=protocol)
        s = booted(cfg)
        s, _ = R.produce(s, cfg, 0, 1, 1, 1)
        s, _ = R.controller_move_leader(s, cfg, 1)
        s = spread_metadata(s, cfg)
        q = R.epoch_query_request(s, cfg, 0)
        assert q.requested_epoch == 0
        answer = R.handle_epoch_query(s, cfg, 1, q)
        assert (answer.epoch, answer.end_offset) == expected
        s, out = R.apply_epoch_answer(s, cfg, 0, q, answer)
        assert (out.outcome, out.truncated_to) == ("truncated", 0)


def test_isr_shrink_needs_lag_and_expand_needs_epoch_start() -> None:
    s = booted(CFG)
    s, _ = R.produce(s, CFG, 0, 1, 1, 1)
    with pytest.raises(R.NotEnabled):
        R.propose_isr(s, CFG, 0, 9, (0, 1))
    s = R.advance_clock(s, CFG.replica_lag_time_max_ms + 1)
    s = R.propose_isr(s, CFG, 0, 9, (0, 1))
    s, err = R.controller_alter_partition(s, CFG, 0, s.replica(0).pending_isr)  # type: ignore[arg-type]
    assert err == ev.NONE and s.controller.isr == (0, 1)
    s = R.apply_alter_partition_response(s, CFG, 0, 9, err, (0, 1), s.controller.partition_epoch)
    assert s.replica(0).isr == (0, 1)
    with pytest.raises(R.NotEnabled):  # broker 2 has not fetched: its LEO is unknown
        R.propose_isr(s, CFG, 0, 10, (0, 1, 2))


def test_crash_loses_unflushed_entries_only_with_a_flush_interval() -> None:
    cfg = ReplicationConfig(flush_interval_ms=1000)
    s = booted(cfg)
    s, _ = R.produce(s, cfg, 0, 1, 1, 1)
    s = R.checkpoint(s, cfg, 0)
    s, _ = R.produce(s, cfg, 0, 2, 2, 1)
    s = R.restart(R.crash(s, cfg, 0), cfg, 0)
    assert s.replica(0).leo == 1 and s.ghost.crash_lost_data
    s2 = booted(CFG)
    s2, _ = R.produce(s2, CFG, 0, 1, 1, 1)
    s2 = R.restart(R.crash(s2, CFG, 0), CFG, 0)
    assert s2.replica(0).leo == 1 and not s2.ghost.crash_lost_data


def test_unclean_election_only_when_enabled() -> None:
    for unclean in (False, True):
        cfg = ReplicationConfig(unclean_leader_election=unclean, min_insync_replicas=1)
        s = booted(cfg)
        s = R.advance_clock(s, 40_000)
        s = R.propose_isr(s, cfg, 0, 1, (0,))
        s, _ = R.controller_alter_partition(s, cfg, 0, s.replica(0).pending_isr)  # type: ignore[arg-type]
        s = R.crash(s, cfg, 0)
        s, el = R.controller_fence(s, cfg, 0)
        assert el.record.leader == (1 if unclean else -1)
        assert el.unclean == unclean


def test_config_rejects_min_isr_above_replicas() -> None:
    with pytest.raises(ConfigError, match=r"min\.insync\.replicas"):
        ReplicationConfig(replicas=3, min_insync_replicas=4)
    with pytest.raises(ConfigError, match="unknown protocol"):
        ReplicationConfig.from_json({"protocol": "kip-999"})


@pytest.mark.parametrize("kafka_7415", [True, False])
@pytest.mark.parametrize("flush_interval_ms", [0, 1000])
def test_append_all_is_append_one_by_one(kafka_7415: bool, flush_interval_ms: int) -> None:
    """A fetched batch applied at once (``_append_all``) leaves the state appending each record in
    turn leaves, epochs changing within the batch; a record not at the LEO is the same error."""
    from kconform.model.not_enabled import NotEnabled
    from kconform.model.records import Entry

    protocol = Protocol.DIVERGING_EPOCH if kafka_7415 else Protocol.KIP_101
    cfg = ReplicationConfig(protocol=protocol, flush_interval_ms=flush_interval_ms)
    s = booted(cfg)
    batch = (Entry(0, 0, 1), Entry(1, 0, 2), Entry(2, 3, 3), Entry(3, 5, 4))
    one_by_one = s
    for e in batch:
        one_by_one = R._append(one_by_one, cfg, 1, e)
    assert R._append_all(s, cfg, 1, batch) == one_by_one
    assert R._append_all(s, cfg, 1, ()) is s
    with pytest.raises(NotEnabled, match="append at offset 3 but LEO is 2"):
        R._append_all(s, cfg, 1, (*batch[:2], batch[3]))
