"""Hand-built probe histories for the checker's tests: a tiny builder over HistoryWriter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kconform.conformance.probe.checker import CheckResult, check_history
from kconform.conformance.probe.history import (
    DELIVERY_VERSION,
    DeliveryConfig,
    HistoryHeader,
    HistoryWriter,
    ProbeConfig,
)

Rec = tuple[str, int | None, str]  # (tp, offset or None, value)


def header(**config: Any) -> HistoryHeader:
    """A hand-built history's header; ``delivery={group: mode or DeliveryConfig}`` makes it version 2."""
    delivery = config.pop("delivery", None)
    if delivery:
        config["delivery"] = {
            g: d if isinstance(d, DeliveryConfig) else DeliveryConfig(g, d, output="o" if d == "exactly-once" else None)
            for g, d in delivery.items()
        }
    return HistoryHeader(
        seed=1,
        target="hand-built",
        client="test",
        client_version="0",
        started="2026-11-25T16:00:00Z",
        topics={"t": 2, "o": 1} if delivery else {"t": 2},
        capabilities={"transactions": True},
        config=ProbeConfig(**config),
        version=DELIVERY_VERSION if delivery else 1,
    )


def _recs(recs: list[Rec], offsets: bool) -> list[dict[str, Any]]:
    out = []
    for tp, off, value in recs:
        topic, part = tp.rsplit(":", 1)
        r: dict[str, Any] = {"topic": topic, "partition": int(part), "value": value}
        if offsets:
            r["offset"] = off
        out.append(r)
    return out


class H:
    """Writes operations (invoke + completion) with increasing monotonic time; ``check()`` judges."""

    def __init__(self, path: Path, **config: Any) -> None:
        self.path = path
        self.w = HistoryWriter(path, header(**config), durable=False)
        self.ns = 0

    def _t(self) -> dict[str, Any]:
        self.ns += 1000
        return {"wall_s": 1.0 + self.ns / 1e9, "mono_ns": self.ns}

    def op(self, p: int, f: str, inv: Any, typ: str = "ok", done: Any = "same", error: Any = None) -> int:
        """Invoke and complete; returns the completion's line index i."""
        self.w.invoke(p, f, inv, **self._t())
        ev = self.w.complete(p, typ, f, inv if done == "same" else done, error, **self._t())
        return ev.i

    def invoke(self, p: int, f: str, inv: Any) -> int:
        return self.w.invoke(p, f, inv, **self._t()).i

    def complete(self, p: int, f: str, typ: str, done: Any, error: Any = None) -> int:
        return self.w.complete(p, typ, f, done, error, **self._t()).i

    def send(self, p: int, recs: list[Rec], typ: str = "ok", acks: str = "all", idem: bool = True) -> int:
        inv = {"acks": acks, "idempotent": idem, "records": _recs(recs, False)}
        done = {"acks": acks, "idempotent": idem, "records": _recs(recs, True)}
        return self.op(p, "send", inv, typ, done)

    def txn(
        self,
        p: int,
        tid: str,
        recs: list[Rec],
        end: str = "commit",
        typ: str = "ok",
        offsets: Any = None,
        inputs: list[str] | None = None,
    ) -> int:
        inv = {"transactional_id": tid, "records": _recs(recs, False), "offsets": offsets, "end": end}
        done = {"transactional_id": tid, "records": _recs(recs, True), "offsets": offsets, "end": end}
        if inputs is not None:
            inv["inputs"] = done["inputs"] = inputs
        return self.op(p, "txn", inv, typ, done)

    def process(self, p: int, group: str, recs: list[Rec], typ: str = "ok") -> int:
        """The application of ``group`` processed ``recs`` (history version 2)."""
        return self.op(p, "process", {"group": group, "records": _recs(recs, True)}, typ)

    def crash(self, p: int) -> int:
        return self.op(p, "crash", None)

    def pause(self, ms: int) -> None:
        """Let ``ms`` milliseconds of monotonic time pass."""
        self.ns += ms * 1_000_000

    def poll(
        self,
        p: int,
        recs: list[Rec],
        positions: dict[str, int] | None = None,
        iso: str = "read_committed",
        mode: str = "assign",
        group: str | None = None,
    ) -> int:
        inv = {"isolation": iso, "group": group or ("g" if mode == "subscribe" else None), "mode": mode}
        return self.op(p, "poll", inv, done={"records": _recs(recs, True), "positions": positions or {}})

    def assign(self, p: int, tps: list[str]) -> int:
        return self.op(p, "assign", {"partitions": tps})

    def seek(self, p: int, tp: str, off: int) -> int:
        return self.op(p, "seek", {"partition": tp, "offset": off})

    def init(self, p: int, tid: str) -> int:
        return self.op(p, "init", {"transactional_id": tid})

    def commit(self, p: int, offsets: dict[str, int], group: str = "g") -> int:
        return self.op(p, "commit", {"group": group, "offsets": offsets})

    def fetch(self, p: int, offsets: dict[str, int | None], group: str = "g") -> int:
        return self.op(p, "fetch-offsets", {"group": group, "partitions": list(offsets)}, done={"offsets": offsets})

    def check(self) -> CheckResult:
        self.w.close()
        return check_history(self.path)


def names(result: CheckResult, allowed: bool = False) -> set[str]:
    """Anomaly names found, of the given allowed-ness."""
    return {name for (name, a), n in result.findings.counts.items() if a == allowed and n}
