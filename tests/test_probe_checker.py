"""The probe checker: every anomaly class fires on a hand-built bad history and stays silent on a near miss."""

from __future__ import annotations

from pathlib import Path

from kconform.conformance.probe.anomalies import ANOMALIES
from kconform.conformance.probe.checker import INVALID, UNKNOWN, VALID
from tests.probekit import H, names

A, B = "t:0", "t:1"


# ---------------------------------------------------------------------------------------------- lost-write


def test_lost_write_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.send(1, [(A, 1, "v1")])
    h.send(1, [(A, 2, "v2")])
    h.poll(9, [(A, 0, "v0")])
    h.poll(9, [(A, 2, "v2")])
    r = h.check()
    assert {"lost-write", "poll-skip"} <= names(r)
    assert r.verdict == INVALID
    lost = next(f for f in r.findings.findings() if f.name == "lost-write")
    assert lost.partition == A and lost.witnesses == (4,)


def test_lost_write_near_miss_info_write_may_be_absent(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.send(1, [(A, None, "v1")], typ="info")
    h.send(1, [(A, 2, "v2")])
    h.poll(9, [(A, 0, "v0")])
    h.poll(9, [(A, 2, "v2")])
    r = h.check()
    assert names(r) == set() and r.verdict == VALID


def test_lost_write_allowed_with_acks_1(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.send(1, [(A, 1, "v1")], acks="1")
    h.send(1, [(A, 1, "v2")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v2")])
    r = h.check()
    assert names(r) == set()
    assert {"lost-write", "inconsistent-offsets"} <= names(r, allowed=True)
    assert r.verdict == VALID


# ---------------------------------------------------------------------------------------------- non-atomic-txn


def test_non_atomic_txn_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.txn(1, "tx", [(A, 0, "a0"), (B, 0, "b0")])
    h.send(2, [(B, 2, "b1")])
    h.poll(9, [(A, 0, "a0")], positions={A: 2, B: 0})
    h.poll(9, [(B, 2, "b1")])
    r = h.check()
    assert "non-atomic-txn" in names(r)


def test_non_atomic_txn_near_miss_whole_txn_read(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.txn(1, "tx", [(A, 0, "a0"), (B, 0, "b0")])
    h.send(2, [(B, 2, "b1")])
    h.poll(9, [(A, 0, "a0")], positions={A: 2, B: 0})
    h.poll(9, [(B, 0, "b0"), (B, 2, "b1")])  # offset 1: the commit marker, never observed
    r = h.check()
    assert names(r) == set() and r.verdict == VALID


# ---------------------------------------------------------------------------------------------- inconsistent-offsets


def test_inconsistent_offsets_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.send(2, [(A, 0, "v1")])
    h.poll(9, [(A, 0, "v1")])
    r = h.check()
    assert "inconsistent-offsets" in names(r)


def test_inconsistent_offsets_near_miss(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.send(2, [(A, 1, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v1")])
    assert names(h.check()) == set()


def test_inconsistent_offsets_allowed_under_unclean_election(tmp_path: Path) -> None:
    h = H(tmp_path / "h", unclean_leader_election=True)
    h.send(1, [(A, 0, "v0")])
    h.poll(8, [(A, 0, "v0")])
    h.send(2, [(A, 0, "v1")])
    h.poll(9, [(A, 0, "v1")])
    r = h.check()
    assert names(r) == set() and "inconsistent-offsets" in names(r, allowed=True)


# ---------------------------------------------------------------------------------------------- duplicate


def test_duplicate_fires_for_idempotent_producer(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v0")])
    assert "duplicate" in names(h.check())


def test_duplicate_near_miss_non_idempotent_is_allowed(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")], idem=False)
    h.poll(9, [(A, 0, "v0"), (A, 1, "v0")])
    r = h.check()
    assert names(r) == set() and "duplicate" in names(r, allowed=True)


# ---------------------------------------------------------------------------------------------- G1a


def test_g1a_read_committed_reads_aborted(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.txn(1, "tx", [(A, 0, "v0")], end="abort")
    h.send(2, [(A, 2, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 2, "v1")])
    assert "G1a" in names(h.check())


def test_g1a_near_miss_read_uncommitted_is_allowed(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.txn(1, "tx", [(A, 0, "v0")], end="abort")
    h.send(2, [(A, 2, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 2, "v1")], iso="read_uncommitted")
    r = h.check()
    assert names(r) == set() and "G1a" in names(r, allowed=True)


def test_g1a_failed_send_read(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, None, "v0")], typ="fail")
    h.send(1, [(A, 1, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v1")], iso="read_uncommitted")
    assert "G1a" in names(h.check())


def test_g1a_near_miss_info_send_read(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, None, "v0")], typ="info")
    h.send(1, [(A, 1, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v1")], iso="read_uncommitted")
    assert names(h.check()) == set()


def test_skip_over_aborted_records_under_read_committed_is_no_skip(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(2, [(A, 0, "v0")])
    h.txn(1, "tx", [(A, 1, "x1"), (A, 2, "x2")], end="abort")
    h.send(2, [(A, 4, "v1")])  # offset 3: the abort marker
    h.poll(8, [(A, 0, "v0"), (A, 1, "x1"), (A, 2, "x2"), (A, 4, "v1")], iso="read_uncommitted")
    h.poll(9, [(A, 0, "v0")])
    h.poll(9, [(A, 4, "v1")])
    r = h.check()
    assert names(r) == set() and r.verdict == VALID


def test_skip_over_committed_records_under_read_committed_is_a_skip(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(2, [(A, 0, "v0")])
    h.txn(1, "tx", [(A, 1, "x1"), (A, 2, "x2")])
    h.send(2, [(A, 4, "v1")])
    h.poll(8, [(A, 0, "v0"), (A, 1, "x1"), (A, 2, "x2"), (A, 4, "v1")], iso="read_uncommitted")
    h.poll(9, [(A, 0, "v0")])
    h.poll(9, [(A, 4, "v1")])
    assert names(h.check()) == {"poll-skip"}


# ------------------------------------------------------------------- precommitted, future and garbage reads


def test_precommitted_read_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.poll(9, [(A, 0, "v0")])
    h.txn(1, "tx", [(A, 0, "v0")])
    assert "precommitted-read" in names(h.check())


def test_precommitted_read_near_miss(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.txn(1, "tx", [(A, 0, "v0")])
    h.poll(9, [(A, 0, "v0")])
    r = h.check()
    assert names(r) == set() and r.verdict == VALID


def test_read_committed_poll_during_txn_is_fine(tmp_path: Path) -> None:
    """The poll returns while the transaction is still open: its commit may already have happened."""
    h = H(tmp_path / "h")
    h.invoke(1, "txn", {"transactional_id": "tx", "records": [{"topic": "t", "partition": 0, "value": "v0"}],
                        "offsets": None, "end": "commit"})  # fmt: skip
    h.poll(9, [(A, 0, "v0")])
    h.complete(1, "txn", "ok", {"transactional_id": "tx", "records": [{"topic": "t", "partition": 0, "value": "v0",
                                "offset": 0}], "offsets": None, "end": "commit"})  # fmt: skip
    assert names(h.check()) == set()


def test_future_read_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.poll(9, [(A, 0, "v0")], iso="read_uncommitted")
    h.send(1, [(A, 0, "v0")])
    assert "future-read" in names(h.check())


def test_garbage_read_fires_and_near_miss(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "old-run-value")])
    assert names(h.check()) == {"garbage-read"}
    h2 = H(tmp_path / "h2")
    h2.send(1, [(A, 0, "v0")])
    h2.poll(9, [(A, 0, "v0")])
    assert names(h2.check()) == set()


# ---------------------------------------------------------------------------------------------- polls


def test_poll_skip_by_position(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.send(1, [(A, 1, "v1")])
    h.poll(8, [(A, 0, "v0"), (A, 1, "v1")])
    h.poll(9, [(A, 0, "v0")], positions={A: 1})
    h.poll(9, [], positions={A: 2})
    assert names(h.check()) == {"poll-skip"}


def test_poll_skip_near_miss_position_over_marker(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.txn(1, "tx", [(A, 0, "v0")])
    h.poll(9, [(A, 0, "v0")], positions={A: 1})
    h.poll(9, [], positions={A: 2})  # past the commit marker at offset 1
    r = h.check()
    assert names(r) == set() and r.verdict == VALID


def test_poll_skip_allowed_in_subscribe_mode(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0"), (A, 1, "v1"), (A, 2, "v2")])
    h.poll(8, [(A, 0, "v0"), (A, 1, "v1"), (A, 2, "v2")])
    h.poll(9, [(A, 0, "v0")], mode="subscribe")
    h.poll(9, [(A, 2, "v2")], mode="subscribe")
    r = h.check()
    assert names(r) == set() and "poll-skip" in names(r, allowed=True)


def test_nonmonotonic_poll_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0"), (A, 1, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v1")])
    h.poll(9, [(A, 1, "v1")])
    assert names(h.check()) == {"nonmonotonic-poll"}


def test_nonmonotonic_poll_near_miss_seek(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0"), (A, 1, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v1")])
    h.seek(9, A, 1)
    h.poll(9, [(A, 1, "v1")])
    assert names(h.check()) == set()


def test_nonmonotonic_poll_allowed_in_subscribe_mode(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0"), (A, 1, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 1, "v1")], mode="subscribe")
    h.poll(9, [(A, 0, "v0")], mode="subscribe")
    r = h.check()
    assert names(r) == set() and "nonmonotonic-poll" in names(r, allowed=True)


def test_int_poll_skip_fires_and_near_miss(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0"), (A, 1, "v1"), (A, 2, "v2")])
    h.poll(9, [(A, 0, "v0"), (A, 2, "v2")])
    assert "int-poll-skip" in names(h.check())
    h2 = H(tmp_path / "h2")
    h2.send(1, [(A, 0, "v0"), (A, 2, "v2")])
    h2.poll(9, [(A, 0, "v0"), (A, 2, "v2")])  # nothing known at offset 1
    assert names(h2.check()) == set()


def test_int_nonmonotonic_poll_fires_and_near_miss(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0"), (A, 1, "v1")])
    h.poll(9, [(A, 1, "v1"), (A, 0, "v0")])
    assert "int-nonmonotonic-poll" in names(h.check())
    h2 = H(tmp_path / "h2")
    h2.send(1, [(A, 0, "v0"), (A, 1, "v1")])
    h2.poll(9, [(A, 0, "v0"), (A, 1, "v1")])
    assert names(h2.check()) == set()


# ---------------------------------------------------------------------------------------------- sends


def test_nonmonotonic_send_fires_and_near_miss(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 5, "v0")])
    h.send(1, [(A, 3, "v1")])
    h.poll(9, [(A, 3, "v1"), (A, 5, "v0")])
    assert "nonmonotonic-send" in names(h.check())
    h2 = H(tmp_path / "h2")
    h2.send(1, [(A, 5, "v0")])
    h2.send(2, [(A, 3, "v1")])  # another producer: concurrent appends may interleave any way
    h2.poll(9, [(A, 3, "v1"), (A, 5, "v0")])
    assert names(h2.check()) == set()


def test_int_nonmonotonic_send_fires_and_allowed(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 1, "v0"), (A, 0, "v1")])
    h.poll(9, [(A, 0, "v1"), (A, 1, "v0")])
    assert "int-nonmonotonic-send" in names(h.check())
    h2 = H(tmp_path / "h2")
    h2.send(1, [(A, 1, "v0"), (A, 0, "v1")], idem=False)
    h2.poll(9, [(A, 0, "v1"), (A, 1, "v0")])
    r = h2.check()
    assert names(r) == set() and "int-nonmonotonic-send" in names(r, allowed=True)


# ---------------------------------------------------------------------------------------------- zombies and offsets


def test_zombie_commit_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.init(1, "tx")
    h.init(2, "tx")
    h.txn(1, "tx", [(A, 0, "v0")])
    h.poll(9, [(A, 0, "v0")])
    r = h.check()
    assert names(r) == {"zombie-commit"}
    (z,) = [f for f in r.findings.findings() if f.name == "zombie-commit"]
    assert z.witnesses == (2, 4, 6)


def test_zombie_commit_near_misses(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.init(1, "tx")
    h.init(2, "tx")
    h.txn(1, "tx", [(A, None, "v0")], typ="fail")  # fenced: PRODUCER_FENCED
    h.txn(2, "tx", [(A, 0, "v1")])
    h.init(1, "tx")  # the old process re-initialises: it fences 2 and may commit again
    h.txn(1, "tx", [(A, 2, "v2")])
    h.poll(9, [(A, 0, "v1"), (A, 2, "v2")])
    r = h.check()
    assert names(r) == set() and r.verdict == VALID


def test_txn_offsets_visible_early_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.txn(1, "tx", [(A, 0, "v0")], end="abort", offsets={"group": "g", "offsets": {B: 42}})
    h.fetch(3, {B: 42})
    assert "txn-offsets-visible-early" in names(h.check())


def test_txn_offsets_visible_early_near_misses(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.commit(3, {B: 42})
    h.txn(1, "tx", [(A, 0, "v0")], end="abort", offsets={"group": "g", "offsets": {B: 42}})
    h.fetch(3, {B: 42})  # the plain commit wrote 42 too
    h.txn(1, "tx", [(A, 2, "v1")], offsets={"group": "g", "offsets": {B: 50}})
    h.fetch(3, {B: 50})  # committed
    h.fetch(3, {B: 7})  # written outside the history: not judged
    assert names(h.check()) == set()


# ---------------------------------------------------------------------------------------------- verdicts


def test_unknown_when_no_read_covers_the_writes(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    h.send(1, [(A, 1, "v1")])
    r = h.check()
    assert r.verdict == UNKNOWN and "unseen" in names(r, allowed=True)


def test_unknown_when_only_acks_0(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.send(1, [(A, None, "v0")], acks="0")
    h.poll(9, [(A, 0, "v0")])
    assert h.check().verdict == UNKNOWN


def test_every_catalogued_anomaly_has_a_test() -> None:
    text = Path(__file__).read_text()
    for name in ANOMALIES:
        assert f'"{name}"' in text, f"no test mentions {name}"


def test_non_atomic_txn_seen_only_by_read_uncommitted(tmp_path: Path) -> None:
    """The torn half sits in the log (read_uncommitted reads it) but read_committed consumers skip it."""
    h = H(tmp_path / "h")
    h.txn(1, "tx", [(A, 0, "a0"), (B, 0, "b0")])
    h.send(2, [(B, 2, "b1")])
    h.poll(8, [(B, 0, "b0"), (B, 2, "b1")], iso="read_uncommitted")
    h.poll(9, [(A, 0, "a0")], positions={A: 2, B: 0})
    h.poll(9, [(B, 2, "b1")])
    assert "non-atomic-txn" in names(h.check())


# ---------------------------------------------------------------------------------------------- offset commits


def test_lost_offset_commit_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.commit(3, {B: 10})
    h.commit(3, {B: 20})
    h.fetch(4, {B: 10})  # 20 completed before this fetch began
    assert names(h.check()) == {"lost-offset-commit"}
    h2 = H(tmp_path / "h2")
    h2.commit(3, {B: 10})
    h2.fetch(4, {B: None})
    assert names(h2.check()) == {"lost-offset-commit"}


def test_lost_offset_commit_near_misses(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.commit(3, {B: 10})
    h.fetch(4, {B: 10})
    h.invoke(3, "commit", {"group": "g", "offsets": {B: 20}})
    h.fetch(4, {B: 10})  # the commit of 20 is still in flight: either answer is right
    h.complete(3, "commit", "ok", {"group": "g", "offsets": {B: 20}})
    h.fetch(4, {B: 20})
    h.fetch(4, {B: 99})  # written outside the history (auto-commit): not judged
    assert names(h.check()) == set()


def test_lost_offset_commit_not_judged_for_subscribe_groups(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    h.commit(3, {B: 10})
    h.commit(3, {B: 20})
    h.op(5, "subscribe", {"topics": ["t"], "group": "g"})
    h.fetch(4, {B: 10})
    assert names(h.check()) == set()


def test_lost_offset_commit_allowed_with_volatile_storage(tmp_path: Path) -> None:
    h = H(tmp_path / "h", volatile_storage=True)
    h.commit(3, {B: 10})
    h.fetch(4, {B: None})
    r = h.check()
    assert names(r) == set() and "lost-offset-commit" in names(r, allowed=True)


def _concurrent_inits(h: H) -> None:
    h.invoke(1, "init", {"transactional_id": "tx"})
    h.invoke(2, "init", {"transactional_id": "tx"})
    h.complete(1, "init", "ok", {"transactional_id": "tx"})
    h.complete(2, "init", "ok", {"transactional_id": "tx"})


def test_zombie_commit_with_concurrent_inits_fires(tmp_path: Path) -> None:
    """Either init may have fenced the other; both instances committing proves a zombie (librdkafka's mock
    cluster never fences: rdkafka_mock_handlers.c gives each InitProducerId a fresh pid)."""
    h = H(tmp_path / "h")
    _concurrent_inits(h)
    h.txn(1, "tx", [(A, 0, "v0")])
    h.txn(2, "tx", [(A, 2, "v1")])
    h.poll(9, [(A, 0, "v0"), (A, 2, "v1")])
    r = h.check()
    assert names(r) == {"zombie-commit"}
    (z,) = [f for f in r.findings.findings() if f.name == "zombie-commit"]
    assert z.witnesses == (3, 4, 6, 8)  # both inits, both commits


def test_zombie_commit_with_concurrent_inits_near_misses(tmp_path: Path) -> None:
    h = H(tmp_path / "h")
    _concurrent_inits(h)
    h.txn(1, "tx", [(A, None, "v0")], typ="fail")  # this one was fenced
    h.txn(2, "tx", [(A, 0, "v1")])
    h.poll(9, [(A, 0, "v1")])
    assert names(h.check()) == set()
    h2 = H(tmp_path / "h2")
    h2.invoke(1, "init", {"transactional_id": "tx"})
    h2.complete(1, "init", "ok", {"transactional_id": "tx"})
    h2.invoke(2, "init", {"transactional_id": "tx"})
    h2.txn(1, "tx", [(A, 0, "v0")])  # began before the second init completed: it may precede the fence
    h2.complete(2, "init", "ok", {"transactional_id": "tx"})
    h2.txn(2, "tx", [(A, 2, "v1")])
    h2.poll(9, [(A, 0, "v0"), (A, 2, "v1")])
    assert names(h2.check()) == set()


# ---------------------------------------------------------------------------------------------- delivery semantics
# (history version 2: config.delivery, the process operation, a transaction's inputs)


def _delivered(h: H, group: str, iso: str = "read_uncommitted") -> None:
    """Two acknowledged input records and a member (process 10) that polled both."""
    h.send(1, [(A, 0, "v0")])
    h.send(1, [(A, 1, "v1")])
    h.assign(10, [A])
    h.poll(10, [(A, 0, "v0"), (A, 1, "v1")], {A: 2}, iso=iso, group=group)


def test_delivery_duplicate_allowed_after_a_crash_before_the_commit(tmp_path: Path) -> None:
    h = H(tmp_path / "h", delivery={"ga": "commit-after"})
    _delivered(h, "ga")
    h.process(10, "ga", [(A, 0, "v0"), (A, 1, "v1")])
    h.crash(10)  # before its commit: at-least-once re-delivers
    h.assign(11, [A])
    h.poll(11, [(A, 0, "v0"), (A, 1, "v1")], {A: 2}, iso="read_uncommitted", group="ga")
    h.process(11, "ga", [(A, 0, "v0"), (A, 1, "v1")])
    h.commit(11, {A: 2}, group="ga")
    r = h.check()
    assert "delivery-duplicate" in names(r, allowed=True) and "delivery-duplicate" not in names(r)
    found = next(f for f in r.findings.findings() if f.name == "delivery-duplicate")
    assert "v0" in found.explanation and "v1" in found.explanation and "__consumer_offsets-" in found.explanation
    assert r.verdict == VALID


def test_delivery_duplicate_fires_when_the_work_was_already_committed(tmp_path: Path) -> None:
    h = H(tmp_path / "h", delivery={"ga": "commit-after"})
    _delivered(h, "ga")
    h.process(10, "ga", [(A, 0, "v0"), (A, 1, "v1")])
    h.commit(10, {A: 2}, group="ga")
    h.crash(10)
    h.assign(11, [A])
    h.poll(11, [(A, 1, "v1")], {A: 2}, iso="read_uncommitted", group="ga")
    h.process(11, "ga", [(A, 1, "v1")])
    r = h.check()
    assert "delivery-duplicate" in names(r) and r.verdict == INVALID


def test_delivery_duplicate_fires_under_at_most_once(tmp_path: Path) -> None:
    h = H(tmp_path / "h", delivery={"gb": "commit-before"})
    _delivered(h, "gb")
    h.process(10, "gb", [(A, 0, "v0")])
    h.crash(10)
    h.assign(11, [A])
    h.poll(11, [(A, 0, "v0"), (A, 1, "v1")], {A: 2}, iso="read_uncommitted", group="gb")
    h.commit(11, {A: 2}, group="gb")
    h.process(11, "gb", [(A, 0, "v0"), (A, 1, "v1")])
    assert "delivery-duplicate" in names(h.check())


def test_delivery_loss_fires_when_commit_after_commits_beyond_processing(tmp_path: Path) -> None:
    h = H(tmp_path / "h", delivery={"ga": "commit-after"})
    _delivered(h, "ga")
    h.process(10, "ga", [(A, 0, "v0")])
    h.commit(10, {A: 2}, group="ga")  # v1 never processed
    r = h.check()
    assert "delivery-loss" in names(r) and r.verdict == INVALID
    loss = next(f for f in r.findings.findings() if f.name == "delivery-loss" and not f.allowed)
    assert "v1" in loss.explanation


def test_delivery_loss_allowed_under_at_most_once_after_a_crash(tmp_path: Path) -> None:
    h = H(tmp_path / "h", delivery={"gb": "commit-before"})
    _delivered(h, "gb")
    h.commit(10, {A: 2}, group="gb")
    h.process(10, "gb", [(A, 0, "v0")])
    h.crash(10)  # v1 committed, not processed: at-most-once
    r = h.check()
    assert names(r) == set() and "delivery-loss" in names(r, allowed=True)


def test_delivery_loss_near_miss_unknown_processing_is_not_a_loss(tmp_path: Path) -> None:
    h = H(tmp_path / "h", delivery={"ga": "commit-after"})
    _delivered(h, "ga")
    h.process(10, "ga", [(A, 0, "v0")])
    h.process(10, "ga", [(A, 1, "v1")], typ="info")
    h.commit(10, {A: 2}, group="ga")
    assert names(h.check()) == set()


def _auto(h: H, crash_after_ms: int) -> H:
    _delivered(h, "gc")
    h.process(10, "gc", [(A, 0, "v0"), (A, 1, "v1")])
    h.pause(crash_after_ms)
    h.crash(10)
    h.assign(11, [A])
    h.poll(11, [(A, 0, "v0"), (A, 1, "v1")], {A: 2}, iso="read_uncommitted", group="gc")
    h.process(11, "gc", [(A, 0, "v0"), (A, 1, "v1")])
    h.fetch(11, {A: 2}, group="gc")
    return h


def test_auto_commit_duplicates_within_the_interval_are_allowed(tmp_path: Path) -> None:
    r = _auto(H(tmp_path / "h", delivery={"gc": "auto-commit"}), crash_after_ms=4000).check()
    assert names(r) == set() and "delivery-duplicate" in names(r, allowed=True)


def test_auto_commit_duplicates_older_than_the_interval_fire(tmp_path: Path) -> None:
    r = _auto(H(tmp_path / "h", delivery={"gc": "auto-commit"}), crash_after_ms=6000).check()
    assert "delivery-duplicate" in names(r)


def test_exactly_once_output_duplicate_fires_and_an_aborted_attempt_does_not(tmp_path: Path) -> None:
    def run(first_end: str) -> set[str]:
        h = H(tmp_path / f"h-{first_end}", delivery={"ge": "exactly-once"})
        _delivered(h, "ge", iso="read_committed")
        offs = {"group": "ge", "offsets": {A: 2}}
        h.txn(10, "tx", [("o:0", 0, "w0"), ("o:0", 1, "w1")], end=first_end, offsets=offs, inputs=["v0", "v1"])
        h.crash(10)
        h.assign(11, [A])
        h.poll(11, [(A, 0, "v0"), (A, 1, "v1")], {A: 2}, group="ge")
        h.txn(11, "tx", [("o:0", 2, "w2"), ("o:0", 3, "w3")], offsets=offs, inputs=["v0", "v1"])
        return names(h.check())

    assert "delivery-duplicate" in run("commit")
    assert "delivery-duplicate" not in run("abort")


def test_exactly_once_loss_fires(tmp_path: Path) -> None:
    h = H(tmp_path / "h", delivery={"ge": "exactly-once"})
    _delivered(h, "ge", iso="read_committed")
    h.txn(10, "tx", [("o:0", 0, "w0")], offsets={"group": "ge", "offsets": {A: 2}}, inputs=["v0"])
    assert "delivery-loss" in names(h.check())


def test_delivery_findings_are_allowed_with_volatile_storage(tmp_path: Path) -> None:
    h = H(tmp_path / "h", delivery={"ga": "commit-after"}, volatile_storage=True)
    _delivered(h, "ga")
    h.process(10, "ga", [(A, 0, "v0")])
    h.commit(10, {A: 2}, group="ga")
    r = h.check()
    assert names(r) == set() and "delivery-loss" in names(r, allowed=True)


def test_a_version_1_history_may_not_use_the_process_operation(tmp_path: Path) -> None:
    from kconform.conformance.probe.history import HistoryError

    h = H(tmp_path / "h")
    h.send(1, [(A, 0, "v0")])
    try:
        h.process(10, "g", [(A, 0, "v0")])
    except HistoryError as e:
        assert "version 2" in str(e)
    else:
        raise AssertionError("a version-1 history accepted a process operation")
