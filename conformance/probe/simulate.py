"""A seeded simulation of a correct Kafka cluster and its clients that writes probe histories.

It exists to validate the checker (a correct simulation must give no forbidden anomaly; each planted
bug must be found) and to make large histories for the checker's benchmark. The model is Kafka's
client-visible behaviour, not its protocol: per partition an append-only log whose entries are
records or control markers (KIP-98: a marker takes an offset and is never returned); a transaction's
records are appended when it starts and stay unstable (above the LSO) until its marker;
read_committed consumers read up to the LSO and skip aborted records and markers (CompletedFetch),
read_uncommitted ones read up to the log end (one replica: log end = HW); positions move past what
was returned or skipped (KafkaConsumer.position). Producers are idempotent (no duplicates) or not
(this simulation never retries, so none either); a second InitProducerId for a transactional.id
fences the first producer (KIP-98): its open transaction is aborted and its next one fails with
PRODUCER_FENCED. Transactional offsets (KIP-447) become visible with the commit marker; explicit
offset commits are durable. Unknown outcomes (``info``) are simulated as timeouts after which the
write did or did not happen.

``plant`` names one bug to build in (PLANTS); the history then holds the anomaly the checker must
report.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Any

from kconform.conformance.probe.history import ErrorInfo, HistoryHeader, HistoryWriter, ProbeConfig

PLANTS: dict[str, str] = {
    "lost-write": "an acknowledged record silently disappears from the log (later reads skip it)",
    "duplicate": "an idempotent send is appended twice",
    "inconsistent-offsets": "a send is acknowledged with the offset of another record",
    "G1a": "read_committed consumers do not filter aborted records",
    "non-atomic-txn": "a committed transaction's records on its last partition are aborted instead",
    "nonmonotonic-poll": "a consumer's position sometimes moves back by one record",
    "poll-skip": "a consumer's position sometimes jumps over one record",
    "zombie-commit": "InitProducerId does not fence the older producer",
    "txn-offsets-visible-early": "offsets sent to an aborted transaction become visible",
    "lost-offset-commit": "an acknowledged offset commit is sometimes not applied",
}
"""Bugs the simulation can build in, by the anomaly the checker must then report."""

_MARK = ""  # a control marker in the simulated log


@dataclass
class _Txn:
    process: int
    tid: str
    records: list[tuple[str, str]]
    offsets: dict[str, int] | None
    end: str
    placed: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class _Log:
    entries: list[str] = field(default_factory=list)
    aborted: set[int] = field(default_factory=set)
    lost: set[int] = field(default_factory=set)  # planted: gone for every reader
    open_first: dict[int, int] = field(default_factory=dict)  # txn key -> first offset

    def lso(self) -> int:
        return min(self.open_first.values(), default=len(self.entries))


class Simulation:
    """One seeded run: ``run(ops)`` writes ``ops`` operations (invoke + completion each)."""

    def __init__(self, path: str | os.PathLike[str], seed: int, partitions: int = 4, plant: str | None = None,
                 durable: bool = False, validate: bool = True) -> None:  # fmt: skip
        if plant is not None and plant not in PLANTS:
            raise ValueError(f"unknown plant {plant!r}; known: {', '.join(PLANTS)}")
        self.rng = random.Random(seed)
        self.plant = plant
        self.tps = [f"kc-0:{p}" for p in range(partitions)]
        self.logs = {tp: _Log() for tp in self.tps}
        header = HistoryHeader(
            seed=seed,
            target=f"simulation{'+' + plant if plant else ''}",
            client="kconform-simulation",
            client_version="1",
            started="2026-11-25T00:00:00Z",
            topics={"kc-0": partitions},
            capabilities={"transactions": True, "idempotence": True, "groups": True, "replication_factor": 1},
            config=ProbeConfig(acks="all", consumption="at-least-once"),
        )
        self.w = HistoryWriter(path, header, durable=durable, validate=validate)
        self.ns = 0
        self.seq = 0
        self.txn_no = 0
        self.next_process = 0
        self.inflight: dict[int, Any] = {}
        self.committed: dict[tuple[str, str], int] = {}  # (group, tp) -> offset
        self.pending_offsets: dict[int, tuple[str, dict[str, int]]] = {}
        self.tid_owner: dict[str, int] = {}
        self.fenced: set[int] = set()
        self.planted_done = False
        self.workers: list[tuple[str, int, dict[str, Any]]] = []
        for kind, n in (("send", 2), ("txn", 2), ("rc", 2), ("ru", 1), ("sub", 1)):
            for _ in range(n):
                self._new_worker(kind)

    # ----------------------------------------------------------------- plumbing

    def _new_worker(self, kind: str, state: dict[str, Any] | None = None) -> None:
        p = self.next_process
        self.next_process += 1
        st: dict[str, Any] = state if state is not None else {}
        st.setdefault("pos", {})
        if kind == "txn":
            st.setdefault("tid", f"tx-{len(self.workers)}")
            st["inited"] = False
        if kind == "send":
            st["idem"] = self.rng.random() < 0.7
        self.workers.append((kind, p, st))

    def _t(self) -> dict[str, Any]:
        self.ns += 1000 + self.rng.randrange(1000)
        return {"wall_s": 1_764_000_000 + self.ns / 1e9, "mono_ns": self.ns}

    def _value(self, p: int, txn: int | None) -> str:
        self.seq += 1
        return f"p{p}.t{'-' if txn is None else txn}.s{self.seq}"

    @staticmethod
    def _rec(tp: str, value: str, offset: int | None = None, with_offset: bool = False) -> dict[str, Any]:
        topic, part = tp.rsplit(":", 1)
        r: dict[str, Any] = {"topic": topic, "partition": int(part), "value": value}
        if with_offset:
            r["offset"] = offset
        return r

    def _plant_now(self, name: str, chance: float = 0.02) -> bool:
        return self.plant == name and self.rng.random() < chance

    # ----------------------------------------------------------------- the run

    def run(self, ops: int) -> None:
        """Write ``ops`` operations, then complete whatever is in flight and close the file."""
        done = 0
        while done < ops:
            kind, p, st = self.rng.choice(self.workers)
            if p in self.inflight:
                self._complete(kind, p, st)
                done += 1
            else:
                self._invoke(kind, p, st)
        for kind, p, st in list(self.workers):
            if p in self.inflight:
                self._complete(kind, p, st)
        # a final read of everything, so that acknowledged writes are judged
        for kind, p, st in list(self.workers):
            if kind in ("rc", "ru"):
                for _ in range(64):
                    self._invoke(kind, p, st)
                    self._complete(kind, p, st)
        self.w.close()

    def _invoke(self, kind: str, p: int, st: dict[str, Any]) -> None:
        rng = self.rng
        if kind == "send":
            acks = rng.choice(("all", "all", "all", "1", "0"))
            recs = [(rng.choice(self.tps), self._value(p, None)) for _ in range(rng.randint(1, 3))]
            inv = {"acks": acks, "idempotent": st["idem"], "records": [self._rec(tp, v) for tp, v in recs]}
            self.w.invoke(p, "send", inv, **self._t())
            self.inflight[p] = ("send", acks, recs, inv)
        elif kind == "txn":
            if not st["inited"]:
                self.w.invoke(p, "init", {"transactional_id": st["tid"]}, **self._t())
                self.inflight[p] = ("init",)
                return
            self.txn_no += 1
            tps = rng.sample(self.tps, rng.randint(1, 3))
            recs = [(tp, self._value(p, self.txn_no)) for tp in tps for _ in range(rng.randint(1, 2))]
            end = "commit" if rng.random() < 0.75 else "abort"
            offsets = {rng.choice(self.tps): rng.randrange(1000)} if rng.random() < 0.3 else None
            inv = {
                "transactional_id": st["tid"],
                "records": [self._rec(tp, v) for tp, v in recs],
                "offsets": None if offsets is None else {"group": "g-eos", "offsets": offsets},
                "end": end,
            }
            self.w.invoke(p, "txn", inv, **self._t())
            txn = _Txn(p, st["tid"], recs, offsets, end)
            if p in self.fenced and self.plant != "zombie-commit":
                self.inflight[p] = ("txn", txn, inv, "fenced")
                return
            for tp, v in recs:  # appended now, unstable until the marker
                log = self.logs[tp]
                txn.placed.setdefault(tp, []).append(len(log.entries))
                log.open_first.setdefault(id(txn), len(log.entries))
                log.entries.append(v)
            if offsets is not None and self.plant == "txn-offsets-visible-early" and end == "abort":
                for tp, off in offsets.items():
                    self.committed[("g-eos", tp)] = off
            self.inflight[p] = ("txn", txn, inv, "open")
        elif kind in ("rc", "ru", "sub"):
            r = rng.random()
            if r < 0.02 and kind != "sub":
                tp = rng.choice(self.tps)
                off = rng.randrange(len(self.logs[tp].entries) + 1)
                self.w.invoke(p, "seek", {"partition": tp, "offset": off}, **self._t())
                self.inflight[p] = ("seek", tp, off)
            elif r < 0.05 and kind in ("sub", "rc"):
                group = "g1" if kind == "sub" else "g-assign"  # g-assign: explicit commits only
                offsets = {tp: st["pos"][tp] for tp in self.tps if tp in st["pos"]}
                self.w.invoke(p, "commit", {"group": group, "offsets": offsets}, **self._t())
                self.inflight[p] = ("commit", group, offsets)
            elif r < 0.07:
                group = "g1" if kind == "sub" else rng.choice(("g-eos", "g-assign"))
                self.w.invoke(p, "fetch-offsets", {"group": group, "partitions": self.tps}, **self._t())
                self.inflight[p] = ("fetch", group)
            else:
                iso = "read_uncommitted" if kind == "ru" else "read_committed"
                mode = "subscribe" if kind == "sub" else "assign"
                inv = {"isolation": iso, "group": "g1" if kind == "sub" else None, "mode": mode}
                self.w.invoke(p, "poll", inv, **self._t())
                self.inflight[p] = ("poll", iso)

    def _complete(self, kind: str, p: int, st: dict[str, Any]) -> None:
        op = self.inflight.pop(p)
        rng = self.rng
        t = self._t
        if op[0] == "send":
            _, acks, recs, inv = op
            timeout = rng.random() < 0.03
            out = []
            for tp, v in recs:
                log = self.logs[tp]
                if timeout and rng.random() < 0.5:
                    out.append(self._rec(tp, v, None, True))
                    continue
                off = len(log.entries)
                log.entries.append(v)
                if self._plant_now("duplicate", 0.05) and st["idem"]:
                    log.entries.append(v)
                shown = off
                if self._plant_now("inconsistent-offsets") and off > 0:
                    shown = off - 1
                if self._plant_now("lost-write", 0.05) and acks == "all":
                    log.lost.add(off)  # hidden from every reader: the write is gone
                out.append(self._rec(tp, v, None if acks == "0" or timeout else shown, True))
            done = dict(inv, records=out)
            if timeout:
                err = ErrorInfo(7, "REQUEST_TIMED_OUT", "timeout")
                self.w.complete(p, "info", "send", None if rng.random() < 0.5 else done, err, **t())
            else:
                self.w.complete(p, "ok", "send", done, **t())
        elif op[0] == "init":
            tid = st["tid"]
            old = self.tid_owner.get(tid)
            self.tid_owner[tid] = p
            st["inited"] = True
            if old is not None and old != p and self.plant != "zombie-commit":
                self.fenced.add(old)
                oldop = self.inflight.get(old)
                if oldop is not None and oldop[0] == "txn" and oldop[3] == "open":
                    self._end_txn(oldop[1], "abort")
                    self.inflight[old] = ("txn", oldop[1], oldop[2], "aborted-by-fence")
            self.w.complete(p, "ok", "init", {"transactional_id": tid}, **t())
        elif op[0] == "txn":
            _, txn, inv, state = op
            if state in ("fenced", "aborted-by-fence"):
                err = ErrorInfo(90, "PRODUCER_FENCED", "fenced by a newer instance")
                self.w.complete(p, "fail", "txn", None, err, **t())
                self.w.invoke(p, "crash", None, **t())
                self.w.complete(p, "info", "crash", None, **t())
                self.workers = [w for w in self.workers if w[1] != p]
                return
            self._end_txn(txn, txn.end)
            recs = []
            k: dict[str, int] = {}
            for tp, v in txn.records:
                n = k.get(tp, 0)
                k[tp] = n + 1
                recs.append(self._rec(tp, v, txn.placed[tp][n], True))
            self.w.complete(p, "ok", "txn", dict(inv, records=recs), **t())
            if rng.random() < 0.03 and self.tid_owner.get(txn.tid) == p:
                self._new_worker("txn", {"tid": txn.tid})  # a new instance of this transactional.id: fences p
        elif op[0] == "seek":
            _, tp, off = op
            st["pos"][tp] = off
            self.w.complete(p, "ok", "seek", {"partition": tp, "offset": off}, **t())
        elif op[0] == "commit":
            _, group, offsets = op
            if not self._plant_now("lost-offset-commit", 0.2):
                for tp, off in offsets.items():
                    self.committed[(group, tp)] = off
            self.w.complete(p, "ok", "commit", {"group": group, "offsets": offsets}, **t())
        elif op[0] == "fetch":
            group = op[1]
            offsets = {tp: self.committed.get((group, tp)) for tp in self.tps}
            self.w.complete(p, "ok", "fetch-offsets", {"offsets": offsets}, **t())
        elif op[0] == "poll":
            self._poll(kind, p, st, op[1] == "read_committed")

    def _end_txn(self, txn: _Txn, end: str) -> None:
        tps = list(txn.placed)
        for n, tp in enumerate(tps):
            log = self.logs[tp]
            log.open_first.pop(id(txn), None)
            this_end = end
            last = len(tps) > 1 and n == len(tps) - 1
            if self.plant == "non-atomic-txn" and end == "commit" and last and self.rng.random() < 0.2:
                this_end = "abort"
            if this_end == "abort":
                log.aborted.update(txn.placed[tp])
            log.entries.append(_MARK)
        if end == "commit" and txn.offsets is not None:
            for tp, off in txn.offsets.items():
                self.committed[("g-eos", tp)] = off

    def _poll(self, kind: str, p: int, st: dict[str, Any], rc: bool) -> None:
        rng = self.rng
        pos: dict[str, int] = st["pos"]
        if kind == "sub" and rng.random() < 0.02:  # a rebalance: restart from the committed offsets
            for tp in self.tps:
                pos[tp] = self.committed.get(("g1", tp), 0)
        out = []
        positions = {}
        for tp in rng.sample(self.tps, rng.randint(1, len(self.tps))):
            log = self.logs[tp]
            at = pos.get(tp, 0)
            end = log.lso() if rc else len(log.entries)
            budget = rng.randint(1, 8)
            while at < end and budget > 0:
                v = log.entries[at]
                hidden = v == _MARK or at in log.lost or (rc and at in log.aborted and self.plant != "G1a")
                if not hidden:
                    out.append(self._rec(tp, v, at, True))
                    budget -= 1
                at += 1
            if self._plant_now("nonmonotonic-poll", 0.01) and at > 1:
                at -= 1
            if self._plant_now("poll-skip", 0.01) and at < end:
                at += 1
            pos[tp] = at
            positions[tp] = at
        self.w.complete(p, "ok", "poll", {"records": out, "positions": positions}, **self._t())


def simulate(path: str | os.PathLike[str], ops: int, seed: int = 1, plant: str | None = None,
             partitions: int = 4, validate: bool = True) -> None:  # fmt: skip
    """Write a simulated history of ``ops`` operations to ``path``."""
    Simulation(path, seed, partitions=partitions, plant=plant, validate=validate).run(ops)
