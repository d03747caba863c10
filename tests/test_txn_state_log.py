"""impl.txn.runtime.StateLog keeps the last value of every transactional id as records are appended:
``replay`` gives the same dict, in the same order, as replaying the whole log one entry after
another (compaction's view: a tombstone removes the id, a later record brings it back at the end)."""

from __future__ import annotations

import random

from kconform.impl.txn.runtime import StateLog, TxnRecord


def _naive(log: StateLog) -> dict[str, TxnRecord]:
    out: dict[str, TxnRecord] = {}
    for txn_id, values in log.entries:
        if values is None:
            out.pop(txn_id, None)
        else:
            out[txn_id] = TxnRecord._make(values)
    return out


def _record(rng: random.Random) -> TxnRecord:
    return TxnRecord(rng.randrange(5), -1, -1, rng.randrange(3), -1, 60_000, rng.choice(["Empty", "Ongoing"]), (), 0, 0)


def test_replay_is_the_whole_log_replayed_in_order() -> None:
    rng = random.Random(3)
    log = StateLog()
    for _ in range(400):
        txn_id = rng.choice(["a", "b", "c", "d"])
        log.append(txn_id, None if rng.random() < 0.3 else _record(rng))
        replayed = log.replay()
        assert replayed == _naive(log)
        assert list(replayed) == list(_naive(log))


def test_a_log_built_from_entries_replays_them() -> None:
    rng = random.Random(5)
    entries = [("x", tuple(_record(rng))), ("y", tuple(_record(rng))), ("x", None), ("x", tuple(_record(rng)))]
    log = StateLog(entries=list(entries))
    assert list(log.replay()) == ["y", "x"]
    assert log.replay() == _naive(log)


def test_a_tombstone_removes_the_id() -> None:
    """Near miss of the ordering rule: the id comes back after a tombstone, at the end."""
    rng = random.Random(7)
    log = StateLog()
    log.append("a", _record(rng))
    log.append("b", _record(rng))
    log.append("a", None)
    assert list(log.replay()) == ["b"]
    log.append("a", _record(rng))
    assert list(log.replay()) == ["b", "a"]
