"""A seeded simulation of consumer groups processing records under the four delivery settings, written
as a probe history of version 2 (docs/probe.md "Delivery semantics"); it validates the delivery judge
(conformance/probe/delivery.py): a correct run has only the duplicates and losses each setting allows,
each planted bug (DELIVERY_PLANTS) a forbidden one.

The model is the client-visible behaviour of KafkaConsumer and its group offsets: a consumer
assigned to the input partitions starts at the group's committed offset (0 when none), a poll
returns the next records and moves the position past them, a commit stores positions durably,
auto-commit (enable.auto.commit) stores the positions of the records returned by earlier polls when
a poll finds auto.commit.interval.ms elapsed since the last one (ConsumerCoordinator
.maybeAutoCommitOffsetsAsync), and a consume-transform-produce consumer (read_committed) writes one
output per input in a transaction that also commits its position (KIP-98 / KIP-447), so that an
aborted or never-ended transaction leaves neither outputs nor offsets. A member crashes at random
points of its loop (after the poll, between processing and committing); the group goes on in a new
process.
"""

from __future__ import annotations

import os
import random
from typing import Any

from kconform.conformance.probe.history import (
    DELIVERY_VERSION,
    DeliveryConfig,
    HistoryHeader,
    HistoryWriter,
    ProbeConfig,
)

DELIVERY_PLANTS: dict[str, str] = {
    "commit-beyond-processed": "a commit-after (at-least-once) consumer commits its whole poll, processes half of it "
    "and crashes: committed offsets beyond what was processed (a forbidden delivery-loss)",
    "eos-redelivery": "after a crash the exactly-once consumer resumes up to four records below its "
    "transactionally committed offset and transforms them again (a forbidden delivery-duplicate in the output)",
    "at-most-once-redelivery": "after a crash the commit-before (at-most-once) consumer resumes up to four records "
    "below its committed offset and processes records again (a forbidden delivery-duplicate)",
    "auto-commit-stale": "the auto-commit consumer stops committing after its first commit, so a crash repeats more "
    "than one interval of work (a forbidden delivery-duplicate)",
}
"""Bugs the delivery simulation can build in, by what the judge must then report."""

GROUPS: dict[str, str] = {
    "g-after": "commit-after",
    "g-before": "commit-before",
    "g-auto": "auto-commit",
    "g-eos": "exactly-once",
}
AUTO_COMMIT_INTERVAL_MS = 1000
_PLANT_OF = {
    "g-after": "commit-beyond-processed",
    "g-eos": "eos-redelivery",
    "g-before": "at-most-once-redelivery",
    "g-auto": "auto-commit-stale",
}
_INPUTS = ("in:0", "in:1")


class DeliverySimulation:
    """One seeded run: ``records`` input records, then each group consumes them all."""

    def __init__(self, path: str | os.PathLike[str], seed: int, plant: str | None = None, records: int = 40) -> None:
        if plant is not None and plant not in DELIVERY_PLANTS:
            raise ValueError(f"unknown plant {plant!r}; known: {', '.join(DELIVERY_PLANTS)}")
        self.rng = random.Random(seed)
        self.plant = plant
        self.records = records
        delivery = {
            g: DeliveryConfig(g, mode, AUTO_COMMIT_INTERVAL_MS, "out" if mode == "exactly-once" else None)
            for g, mode in GROUPS.items()
        }
        header = HistoryHeader(
            seed=seed,
            target=f"delivery-simulation{'+' + plant if plant else ''}",
            client="kconform-simulation",
            client_version="1",
            started="2026-11-26T00:00:00Z",
            topics={"in": 2, "out": 1},
            capabilities={"transactions": True, "idempotence": True, "groups": True, "replication_factor": 1},
            config=ProbeConfig(acks="all", consumption="at-least-once", delivery=delivery),
            version=DELIVERY_VERSION,
        )
        self.w = HistoryWriter(path, header, durable=False)
        self.ns = 0
        self.next_process = 0
        self.logs: dict[str, list[str]] = {tp: [] for tp in (*_INPUTS, "out:0")}
        self.committed: dict[tuple[str, str], int] = {}
        self.seq = 0
        self.planted = False
        self.processed: dict[str, set[str]] = {g: set() for g in GROUPS}

    # ----------------------------------------------------------------- plumbing

    def _t(self) -> dict[str, Any]:
        self.ns += 50_000_000 + self.rng.randrange(100_000_000)  # 50-150 ms per step
        return {"wall_s": 1_764_100_000 + self.ns / 1e9, "mono_ns": self.ns}

    def _op(self, p: int, f: str, value: Any, result: Any = None, outcome: str = "ok") -> None:
        self.w.invoke(p, f, value, **self._t())
        self.w.complete(p, outcome, f, value if result is None else result, **self._t())

    @staticmethod
    def _rec(tp: str, value: str, offset: int | None = None) -> dict[str, Any]:
        topic, part = tp.rsplit(":", 1)
        out: dict[str, Any] = {"topic": topic, "partition": int(part), "value": value}
        if offset is not None:
            out["offset"] = offset
        return out

    def _process_id(self) -> int:
        self.next_process += 1
        return self.next_process - 1

    def _value(self, p: int, txn: int | None = None) -> str:
        self.seq += 1
        return f"p{p}.t{'-' if txn is None else txn}.s{self.seq}"

    # ----------------------------------------------------------------- the run

    def run(self) -> None:
        """Produce the input, run every group to the end of it, read everything back, close."""
        producer = self._process_id()
        for n in range(self.records):
            tp = _INPUTS[n % 2]
            value = self._value(producer)
            inv = {"acks": "all", "idempotent": True, "records": [self._rec(tp, value)]}
            res = {"acks": "all", "idempotent": True, "records": [self._rec(tp, value, len(self.logs[tp]))]}
            self.logs[tp].append(value)
            self._op(producer, "send", inv, res)
        for group, mode in GROUPS.items():
            self._group(group, mode)
        for group in GROUPS:
            reader = self._process_id()
            parts = [*_INPUTS]
            got = {tp: self.committed.get((group, tp), 0) for tp in parts}
            self._op(reader, "fetch-offsets", {"group": group, "partitions": parts}, {"offsets": got})
        for tp in (*_INPUTS, "out:0"):
            reader = self._process_id()
            self._op(reader, "assign", {"partitions": [tp]})
            recs = [self._rec(tp, v, o) for o, v in enumerate(self.logs[tp])]
            poll = {"isolation": "read_committed", "group": None, "mode": "assign"}
            self._op(reader, "poll", poll, {"records": recs, "positions": {tp: len(self.logs[tp])}})
        self.w.close()

    def _group(self, group: str, mode: str) -> None:
        """Members of ``group`` in turn, each from the committed offsets, until all input is done."""
        for _member in range(50):
            if all(self.committed.get((group, tp), 0) >= len(self.logs[tp]) for tp in _INPUTS):
                return
            self._member(group, mode)

    def _start(self, group: str) -> dict[str, int]:
        """Where a restarted member resumes: the committed offsets (planted: up to four records
        below a committed offset when one of them was processed)."""
        pos = {tp: self.committed.get((group, tp), 0) for tp in _INPUTS}
        tp = _INPUTS[0]
        back = max(pos[tp] - 4, 0)
        done = self.logs[tp][back : pos[tp]]
        if any(v in self.processed[group] for v in done) and self._bug_once(_PLANT_OF.get(group, "")):
            pos[tp] = back
        return pos

    def _pending_plant(self, group: str) -> bool:
        """The plant of ``group`` still has to happen (its members then crash more often)."""
        return not self.planted and self.plant is not None and _PLANT_OF.get(group) == self.plant

    def _bug_once(self, name: str) -> bool:
        if self.plant != name or self.planted or not name:
            return False
        self.planted = name != "auto-commit-stale"
        return True

    def _member(self, group: str, mode: str) -> None:
        p = self._process_id()
        rc = mode == "exactly-once"
        self._op(p, "assign", {"partitions": list(_INPUTS)})
        restarted = any((group, tp) in self.committed for tp in _INPUTS)
        pos = self._start(group) if restarted else {tp: 0 for tp in _INPUTS}
        polled: dict[str, int] = dict(pos)  # positions as of the previous poll (auto-commit commits these)
        last_auto_ns = self.ns
        stale = False
        stale_rounds = 0
        for _round in range(40):
            batch = [
                (tp, o, self.logs[tp][o])
                for tp in _INPUTS
                for o in range(pos[tp], min(pos[tp] + 2, len(self.logs[tp])))
            ]
            if mode == "auto-commit" and self.ns - last_auto_ns >= AUTO_COMMIT_INTERVAL_MS * 1_000_000 and not stale:
                for tp, off in polled.items():  # inside poll(): the previous polls' positions
                    self.committed[(group, tp)] = max(self.committed.get((group, tp), 0), off)
                last_auto_ns = self.ns
                stale = self._bug_once("auto-commit-stale")
            poll = {"isolation": "read_committed" if rc else "read_uncommitted", "group": group, "mode": "assign"}
            for tp, o, _v in batch:
                pos[tp] = max(pos[tp], o + 1)
            self._op(p, "poll", poll, {"records": [self._rec(tp, v, o) for tp, o, v in batch], "positions": dict(pos)})
            if not batch:
                if mode == "auto-commit":
                    for tp, off in pos.items():  # KafkaConsumer.close commits the final positions
                        self.committed[(group, tp)] = max(self.committed.get((group, tp), 0), off)
                return
            crash = self.rng.random() < (0.5 if self._pending_plant(group) else 0.15)
            if stale:  # planted: crash only once far more than an interval of work is uncommitted
                stale_rounds += 1
                crash = stale_rounds >= 6
            if mode == "commit-after":
                if self._bug_once("commit-beyond-processed"):
                    self._commit(p, group, pos)
                    self._process(p, group, batch[: len(batch) // 2])
                    self._crash(p)
                    return
                self._process(p, group, batch)
                if crash:
                    self._crash(p)
                    return
                self._commit(p, group, pos)
            elif mode == "commit-before":
                self._commit(p, group, pos)
                if crash:
                    self._crash(p)
                    return
                self._process(p, group, batch)
            elif mode == "auto-commit":
                self._process(p, group, batch)
                polled = dict(pos)
                if crash:
                    self._crash(p)
                    return
            else:
                if crash:
                    self._crash(p)
                    return
                self._transform(p, group, batch, pos)
        self._crash(p)

    def _process(self, p: int, group: str, batch: list[tuple[str, int, str]]) -> None:
        self.processed[group].update(v for _tp, _o, v in batch)
        if batch:
            self._op(p, "process", {"group": group, "records": [self._rec(tp, v, o) for tp, o, v in batch]})

    def _commit(self, p: int, group: str, pos: dict[str, int]) -> None:
        self._op(p, "commit", {"group": group, "offsets": dict(pos)})
        for tp, off in pos.items():
            self.committed[(group, tp)] = off

    def _crash(self, p: int) -> None:
        self._op(p, "crash", None)

    def _transform(self, p: int, group: str, batch: list[tuple[str, int, str]], pos: dict[str, int]) -> None:
        """One consume-transform-produce transaction: an output per input, the positions with it."""
        self.seq += 1
        txn = self.seq
        outs = [self._value(p, txn) for _ in batch]
        inv = {
            "transactional_id": f"tx-{group}",
            "records": [self._rec("out:0", v) for v in outs],
            "offsets": {"group": group, "offsets": dict(pos)},
            "end": "commit",
            "inputs": [v for _tp, _o, v in batch],
        }
        self.w.invoke(p, "txn", inv, **self._t())
        done = dict(inv)
        done["records"] = [self._rec("out:0", v, len(self.logs["out:0"]) + n) for n, v in enumerate(outs)]
        self.logs["out:0"].extend(outs)
        self.processed[group].update(v for _tp, _o, v in batch)
        self.w.complete(p, "ok", "txn", done, **self._t())
        for tp, off in pos.items():
            self.committed[(group, tp)] = off


def simulate_delivery(path: str | os.PathLike[str], seed: int = 1, plant: str | None = None, records: int = 40) -> None:
    """Write one delivery-simulation history to ``path``."""
    DeliverySimulation(path, seed, plant, records).run()
