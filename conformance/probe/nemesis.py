"""The nemesis: seeded faults from what the target file allows, each recorded as a history op.

At most one fault is in force at a time; each is undone after a bounded while (0.5 to 2.5 s): a paused
node is resumed, a killed node restarted, a partition healed, a delay removed. Faults:
``pause``/``resume`` (SIGSTOP/SIGCONT of a node's process group), ``kill`` + ``restart`` (SIGKILL, then
the node's start command on the same ports), ``restart`` alone (stop signal, then start), and through the
proxy ``delay``, ``reset`` (RST every connection) and ``partition``/``heal`` (one client process cut from
one broker, or every client). Operations are written as process ``nemesis`` with a value naming the node
(and the client process or delay). Called with a negative time it undoes whatever is in force.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from kconform.conformance.probe.cluster import Cluster, ClusterError
from kconform.conformance.probe.history import HistoryWriter

NEMESIS = "nemesis"


class Nemesis:
    """Schedules faults on ``cluster``; call it from the workload loop with the run's elapsed time."""

    def __init__(
        self,
        cluster: Cluster,
        history: HistoryWriter,
        seed: int,
        clients: Callable[[], dict[int, int]],
        interval_s: tuple[float, float] = (1.0, 3.0),
    ) -> None:
        self.cluster, self.history = cluster, history
        self.rng = random.Random(f"{seed}:nemesis")
        self.clients = clients  # history process id -> worker pid
        self.interval_s = interval_s
        allowed = cluster.target.faults
        self.kinds: list[str] = []
        if allowed.get("pause"):
            self.kinds.append("pause")
        if allowed.get("kill") and allowed.get("restart"):
            self.kinds.append("kill")
        if allowed.get("restart"):
            self.kinds.append("restart")
        if allowed.get("proxy"):
            self.kinds += ["delay", "reset", "partition"]
        self.next_at: float | None = None  # the first fault comes one interval after the workload starts
        self.undo: tuple[float, str, dict[str, Any]] | None = None
        self.counts: dict[str, int] = {}

    def _op(self, f: str, value: dict[str, Any], action: Callable[[], None]) -> None:
        self.history.invoke(NEMESIS, f, value)
        try:
            action()
        except ClusterError as e:
            self.history.complete(NEMESIS, "info", f, value, {"code": None, "name": "NEMESIS", "message": str(e)})
            return
        self.history.complete(NEMESIS, "ok", f, value)
        self.counts[f] = self.counts.get(f, 0) + 1

    def __call__(self, elapsed: float) -> None:
        now = time.monotonic()
        if self.next_at is None:
            self.next_at = now + self.rng.uniform(*self.interval_s)
        if self.undo is not None and (elapsed < 0 or now >= self.undo[0]):
            _, f, value = self.undo
            self.undo = None
            self._do(f, value)
            self.next_at = now + self.rng.uniform(*self.interval_s)
        if elapsed < 0 or self.undo is not None or now < self.next_at or not self.kinds:
            return
        nodes = sorted(self.cluster.nodes)
        node = self.rng.choice(nodes)
        kind = self.rng.choice(self.kinds)
        hold = self.rng.uniform(0.5, 2.5)
        if kind == "pause":
            self._do("pause", {"node": node})
            self.undo = (now + hold, "resume", {"node": node})
        elif kind == "kill":
            self._do("kill", {"node": node})
            self.undo = (now + hold, "restart", {"node": node})
        elif kind == "restart":
            self._do("restart", {"node": node})
            self.next_at = now + self.rng.uniform(*self.interval_s)
        elif kind == "delay":
            ms = self.rng.choice([20, 100, 300])
            self._do("delay", {"node": node, "ms": ms})
            self.undo = (now + hold, "delay", {"node": node, "ms": 0})
        elif kind == "reset":
            self._do("reset", {"node": node})
            self.next_at = now + self.rng.uniform(*self.interval_s)
        elif kind == "partition":
            clients = self.clients()
            process = self.rng.choice(sorted(clients)) if clients and self.rng.random() < 0.7 else None
            self._do("partition", {"node": node, "process": process})
            self.undo = (now + hold, "heal", {"node": node})

    def _do(self, f: str, value: dict[str, Any]) -> None:
        node = str(value["node"])
        cluster = self.cluster
        if f == "pause":
            self._op(f, value, lambda: cluster.pause(node))
        elif f == "resume":
            self._op(f, value, lambda: cluster.resume(node))
        elif f == "kill":
            self._op(f, value, lambda: cluster.kill(node))
        elif f == "restart":
            self._op(f, value, lambda: cluster.restart(node))
        elif f == "delay":
            self._op(f, value, lambda: cluster.proxy_of(node).delay(float(value["ms"])))
        elif f == "reset":
            self._op(f, value, lambda: _discard(cluster.proxy_of(node).reset()))
        elif f == "partition":
            process = value.get("process")
            pid = self.clients().get(process) if isinstance(process, int) else None
            self._op(f, value, lambda: cluster.proxy_of(node).partition(None if pid is None else [pid]))
        elif f == "heal":
            self._op(f, value, lambda: cluster.proxy_of(node).heal())


def _discard(_: object) -> None:
    """Drop a fault method's return value (the op records only that it ran)."""
