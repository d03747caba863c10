"""The probe's seeded workload: logical client processes driven concurrently, every step a history line.

Roles (each one logical process at a time, living in its own worker OS process; a process that dies,
times out or is fenced is replaced by a new process id after a ``crash`` op):

- ``send-idem``: idempotent producer, acks=all (KIP-98 idempotence requires acks=all);
- ``send-acks0`` / ``send-acks1`` / ``send-acksall``: plain producers with acks 0, 1 and all;
- ``txn-a`` / ``txn-zombie``: two instances of one ``transactional.id``: ``txn-a`` commits and aborts
  transactions across partitions; ``txn-zombie`` now and then calls InitProducerId, which fences
  ``txn-a`` (KIP-98 zombie fencing), whose next transaction must fail; it is then replaced and re-inits,
  fencing the zombie in turn;
- ``ctp``: consume-transform-produce: a read_committed consumer of the input topic and a transactional
  producer writing one derived record per consumed one to the output topic, with the consumer's
  positions sent by ``sendOffsetsToTransaction`` (KIP-98, KIP-447); its transactions name the
  consumed values (``inputs``) and its group is judged exactly-once (history version 2);
- ``rc-assign`` / ``ru-assign``: read_committed and read_uncommitted consumers by ``assign`` with seeks;
- ``rc-subscribe``: a read_committed consumer by ``subscribe`` (a group) that commits and fetches offsets;
- ``drain-rc`` / ``drain-ru``: after the budget, fresh consumers that read everything from the start,
  so every write is covered by a read (no vacuous verdict).

Values are ``p<process>.t<txn or ->.s<seq>``, unique per write. Roles the target cannot run are left
out and named in the header's ``skipped``. Every client call has a timeout; an operation whose worker
does not answer in time is ``info`` and its worker is killed.
"""

from __future__ import annotations

import random
import select
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconform.conformance.probe.history import HistoryWriter
from kconform.conformance.probe.procs import ProcessGroup
from kconform.conformance.probe.workers import Worker, WorkerError, close_workers


@dataclass(frozen=True)
class Names:
    """The names one run uses: topics, transactional ids and groups, all under a per-run prefix, so a
    run never reads another run's records, offsets or transactions (a cluster kconform did not start may
    hold earlier runs' data)."""

    prefix: str

    @property
    def input_topic(self) -> str:
        return f"{self.prefix}-0"

    @property
    def output_topic(self) -> str:
        return f"{self.prefix}-1"

    @property
    def topics(self) -> dict[str, int]:
        """Topic -> the partition count asked for (the target may choose its own, e.g. on auto-creation)."""
        return {self.input_topic: 3, self.output_topic: 2}

    @property
    def transactional_id(self) -> str:
        return f"{self.prefix}-tx-1"

    @property
    def ctp_transactional_id(self) -> str:
        return f"{self.prefix}-tx-ctp"

    def group(self, name: str) -> str:
        return f"{self.prefix}-g-{name}"


OP_TIMEOUT_S = 10.0
POLL_WAIT_S = 0.5
WORKER_START_S = 30.0
DRAIN_EMPTY_POLLS = 3
DRAIN_MAX_S = 30.0


@dataclass
class Role:
    """One logical client role; see the module docstring."""

    name: str
    kind: str  # "send" | "txn" | "ctp" | "consumer"
    setup: list[tuple[str, dict[str, Any]]]
    rng: random.Random
    acks: str = "all"
    idempotent: bool = False
    transactional_id: str | None = None
    isolation: str = "read_committed"
    mode: str = "assign"
    group: str | None = None
    think_s: tuple[float, float] = (0.0, 0.05)
    drain: bool = False
    # live state
    process: int = -1
    worker: Worker | None = None
    next_at: float = 0.0
    seq: int = 0
    txn_no: int = 0
    initialized: bool = False
    subscribed: bool = False
    positions: dict[str, int] = field(default_factory=dict)
    consumed: list[dict[str, Any]] = field(default_factory=list)
    empty_polls: int = 0
    done: bool = False
    invoke: tuple[str, Any] | None = None


class Workload:
    """Run the roles against ``bootstrap`` and write every operation to ``history``."""

    def __init__(
        self,
        *,
        group: ProcessGroup,
        client: str,
        bootstrap: str,
        history: HistoryWriter,
        roles: list[Role],
        topics: dict[str, int],
        names: Names,
        log_dir: Path,
        max_ops: int | None,
        seconds: float | None,
        nemesis: Callable[[float], None] | None = None,
        on_worker_change: Callable[[list[int]], None] | None = None,
    ) -> None:
        self.group, self.client, self.bootstrap, self.history = group, client, bootstrap, history
        self.roles = roles
        self.topics = topics
        self.names = names
        self.log_dir = log_dir
        self.max_ops, self.seconds = max_ops, seconds
        self.nemesis = nemesis
        self.on_worker_change = on_worker_change
        self.next_process = 0
        self.ops = 0
        self.completed: dict[str, int] = {"ok": 0, "fail": 0, "info": 0}

    # -- processes ---------------------------------------------------------------------------------
    def _partitions(self, topics: list[str] | None = None) -> list[str]:
        return [f"{t}:{p}" for t, n in self.topics.items() if topics is None or t in topics for p in range(n)]

    def start_role(self, role: Role) -> None:
        """A fresh worker and process id for ``role``, with its clients created."""
        self.start_roles([role])

    def start_roles(self, roles: list[Role]) -> None:
        """Fresh workers for ``roles``, started in parallel (their imports take the most time)."""
        for role in roles:
            role.process = self.next_process
            self.next_process += 1
            role.worker = Worker(self.group, self.client, f"{role.name}-p{role.process}", self.log_dir)
            role.initialized = role.subscribed = False
            role.positions = {}
            role.consumed = []
            role.empty_polls = 0
        for role in roles:
            assert role.worker is not None
            role.worker.wait_ready(WORKER_START_S)
        for role in roles:
            assert role.worker is not None
            for cmd, args in role.setup:
                answer = role.worker.call(
                    cmd, dict(args, bootstrap=self.bootstrap, client_id=f"kc-p{role.process}"), OP_TIMEOUT_S
                )
                if answer.get("outcome") != "ok":
                    raise WorkerError(f"{role.name}: {cmd} failed: {answer.get('error')}")
        self._workers_changed()

    def _workers_changed(self) -> None:
        if self.on_worker_change is not None:
            self.on_worker_change([r.worker.pid for r in self.roles if r.worker is not None])

    def crash(self, role: Role, reason: str) -> None:
        """Record that ``role``'s process died; its worker is torn down and replaced before its next op."""
        self.history.invoke(role.process, "crash", {"reason": reason})
        self.history.complete(role.process, "ok", "crash", {"reason": reason})
        if role.worker is not None:
            self.group.forget(role.worker.child)
            role.worker = None
        self._workers_changed()

    # -- operations --------------------------------------------------------------------------------
    def _value(self, role: Role, txn: bool) -> str:
        role.seq += 1
        return f"p{role.process}.t{role.txn_no if txn else '-'}.s{role.seq}"

    def next_op(self, role: Role) -> tuple[str, Any, dict[str, Any]] | None:
        """(f, invoke value, worker args) of ``role``'s next operation, or None to wait."""
        rng = role.rng
        inputs = self._partitions([self.names.input_topic])
        if role.kind == "send":
            records = []
            for _ in range(rng.randint(1, 3)):
                tp = rng.choice(inputs)
                topic, _, p = tp.rpartition(":")
                records.append({"topic": topic, "partition": int(p), "value": self._value(role, False)})
            value = {"acks": role.acks, "idempotent": role.idempotent, "records": records}
            return ("send", value, {"records": records})
        if role.kind in ("txn", "ctp"):
            assert role.transactional_id is not None
            if not role.initialized:
                value = {"transactional_id": role.transactional_id}
                return ("init", value, {})
            if role.kind == "ctp":
                if not role.consumed:
                    if not role.subscribed:
                        value = {"partitions": inputs}
                        return ("assign", value, {"partitions": inputs, "start": "committed"})
                    return ("poll", self._poll_value(role), {"max": 3, "wait": POLL_WAIT_S})
                role.txn_no += 1
                out = self._partitions([self.names.output_topic])
                records = []
                for _ in role.consumed:  # one output per consumed record (judged: history version 2)
                    topic, _, p = rng.choice(out).rpartition(":")
                    records.append({"topic": topic, "partition": int(p), "value": self._value(role, True)})
                offsets: dict[str, Any] = {"group": role.group, "offsets": dict(role.positions)}
                end = "abort" if rng.random() < 0.15 else "commit"
                value = {
                    "transactional_id": role.transactional_id,
                    "records": records,
                    "offsets": offsets,
                    "end": end,
                    "inputs": [str(r["value"]) for r in role.consumed],
                }
                role.consumed = []
                return ("txn", value, {"records": records, "offsets": offsets, "end": end})
            role.txn_no += 1
            records = []
            for tp in rng.sample(inputs, k=min(len(inputs), rng.randint(2, 3))):
                topic, _, p = tp.rpartition(":")
                records.append({"topic": topic, "partition": int(p), "value": self._value(role, True)})
            end = "abort" if rng.random() < 0.3 else "commit"
            value = {"transactional_id": role.transactional_id, "records": records, "offsets": None, "end": end}
            return ("txn", value, {"records": records, "offsets": None, "end": end})
        # consumers
        if not role.subscribed:
            if role.mode == "subscribe":
                topics = list(self.topics)
                return ("subscribe", {"topics": topics, "group": role.group}, {"topics": topics})
            parts = self._partitions()
            return ("assign", {"partitions": parts}, {"partitions": parts, "start": "beginning"})
        roll = rng.random()
        if not role.drain and role.mode == "assign" and roll < 0.08 and role.positions:
            tp = rng.choice(sorted(role.positions))
            offset = rng.randint(0, role.positions[tp])
            return ("seek", {"partition": tp, "offset": offset}, {"partition": tp, "offset": offset})
        if not role.drain and role.group and role.mode == "subscribe" and roll < 0.2 and role.positions:
            offsets = dict(role.positions)
            return ("commit", {"group": role.group, "offsets": offsets}, {"offsets": offsets})
        if not role.drain and role.group and role.mode == "subscribe" and roll < 0.3:
            parts = self._partitions()
            return ("fetch-offsets", {"group": role.group, "partitions": parts}, {"partitions": parts})
        return ("poll", self._poll_value(role), {"max": 50, "wait": POLL_WAIT_S})

    def _poll_value(self, role: Role) -> dict[str, Any]:
        return {
            "isolation": role.isolation,
            "group": role.group if role.mode == "subscribe" or role.kind == "ctp" else None,
            "mode": role.mode,
        }

    def issue(self, role: Role) -> None:
        """Invoke ``role``'s next operation (starting its worker first if it has none)."""
        if role.worker is None:
            self.start_role(role)
        assert role.worker is not None
        op = self.next_op(role)
        if op is None:
            return
        f, value, args = op
        timeout = OP_TIMEOUT_S if f != "poll" else POLL_WAIT_S + 5.0
        self.history.invoke(role.process, f, value)
        role.invoke = (f, value)
        if not role.drain:
            self.ops += 1
        try:
            role.worker.send(f, args, timeout)
        except WorkerError as e:
            self._complete(role, {"outcome": "info", "value": None, "error": _harness_error(str(e), dead=True)})

    def _complete(self, role: Role, answer: dict[str, Any]) -> None:
        assert role.invoke is not None
        f, invoked = role.invoke
        role.invoke = None
        outcome = str(answer.get("outcome"))
        if outcome not in ("ok", "fail", "info"):
            outcome = "info"
        got = answer.get("value")
        err = answer.get("error")
        dead = False
        if isinstance(err, dict):
            dead = bool(err.pop("dead", False))
            err = {"code": err.get("code"), "name": str(err.get("name")), "message": str(err.get("message", ""))}
        value: Any
        if f in ("send", "txn"):
            value = dict(invoked)
            if isinstance(got, dict) and isinstance(got.get("records"), list):
                value["records"] = [_record(r) for r in got["records"]]
                if invoked.get("acks") == "0":
                    # No ProduceResponse with acks=0: an offset a client reports is made up (kafka-python
                    # reports 0, 1, ...), so the history says unknown.
                    for r in value["records"]:
                        r["offset"] = None
        elif f == "poll":
            value = (
                {"records": got.get("records", []), "positions": got.get("positions", {})}
                if (outcome == "ok" and isinstance(got, dict))
                else None
            )
        elif f == "fetch-offsets":
            value = {"offsets": got.get("offsets", {})} if outcome == "ok" and isinstance(got, dict) else None
        else:
            value = invoked
        self.history.complete(role.process, outcome, f, value, err)
        self.completed[outcome] += 1
        # what the role learns
        if f == "init" and outcome == "ok":
            role.initialized = True
        if f in ("assign", "subscribe") and outcome == "ok":
            role.subscribed = True
        if f == "poll" and outcome == "ok" and isinstance(value, dict):
            role.positions.update(value["positions"])
            role.consumed.extend(value["records"])
            role.empty_polls = 0 if value["records"] else role.empty_polls + 1
        if f == "txn" and role.kind == "ctp" and (outcome != "ok" or invoked["end"] == "abort"):
            dead = True  # rewind by restarting from the committed offsets
        if dead or (outcome == "info" and f in ("init", "txn")):
            self.crash(role, f"{f} {outcome}: {err['name'] if isinstance(err, dict) else 'unknown'}")

    # -- the loop ----------------------------------------------------------------------------------
    def run(self) -> None:
        """Main phase until the budget is spent, then the drain phase; every wait is bounded."""
        start = time.monotonic()
        main_roles = [r for r in self.roles if not r.drain]
        drain_roles = [r for r in self.roles if r.drain]
        self.start_roles(main_roles + drain_roles)  # the drain's workers idle until the drain phase
        for role in main_roles:  # the zombie's first InitProducerId comes after the first instance's
            role.next_at = time.monotonic() + role.rng.uniform(*role.think_s)
        phase = "main"
        drain_started = 0.0
        hard_stop = start + (self.seconds or 600.0) + DRAIN_MAX_S + 60.0
        while time.monotonic() < hard_stop:
            now = time.monotonic()
            if phase == "main" and self._spent(now - start):
                phase = "quiesce"
                if self.nemesis is not None:
                    self.nemesis(-1.0)  # heal everything
            if phase == "quiesce" and all(r.invoke is None for r in main_roles):
                phase = "drain"
                drain_started = time.monotonic()
                close_workers([r.worker for r in main_roles if r.worker is not None])
                for role in main_roles:
                    role.worker = None
            if phase == "drain" and (
                all(r.done for r in drain_roles) or time.monotonic() - drain_started > DRAIN_MAX_S
            ):
                break
            active = main_roles if phase == "main" else drain_roles if phase == "drain" else []
            for role in active:
                if role.invoke is None and not role.done and time.monotonic() >= role.next_at:
                    if role.drain and role.empty_polls >= DRAIN_EMPTY_POLLS:
                        role.done = True
                        continue
                    try:
                        self.issue(role)
                    except WorkerError as e:
                        if role.worker is not None:
                            self.crash(role, str(e))
                        role.next_at = time.monotonic() + 1.0
                if phase == "main" and self.max_ops is not None and self.ops >= self.max_ops:
                    break
            if phase == "main" and self.nemesis is not None:
                self.nemesis(time.monotonic() - start)
            # Wait for an answer, but no longer than until the next idle role is due (at most 50 ms).
            due = [r.next_at for r in active if r.invoke is None and not r.done]
            wait = min([0.05, *(max(0.0, d - time.monotonic()) for d in due)])
            self._collect(wait)
        # Operations still open stay open in the history: the checker reads them as info.
        close_workers([r.worker for r in self.roles if r.worker is not None])
        for role in self.roles:
            role.invoke = None
            role.worker = None

    def _spent(self, elapsed: float) -> bool:
        if self.max_ops is not None and self.ops >= self.max_ops:
            return True
        return self.seconds is not None and elapsed >= self.seconds

    def _collect(self, wait_s: float) -> None:
        busy = [r for r in self.roles if r.invoke is not None and r.worker is not None]
        if not busy:
            time.sleep(wait_s)
            return
        fds = {r.worker.fileno(): r for r in busy if r.worker is not None}
        ready, _, _ = select.select(list(fds), [], [], wait_s)
        now = time.monotonic()
        for fd in ready:
            role = fds[fd]
            assert role.worker is not None
            try:
                answer = role.worker.poll_answer(0.0)
            except WorkerError as e:
                self._complete(role, {"outcome": "info", "value": None, "error": _harness_error(str(e), dead=True)})
                continue
            if answer is not None:
                self._complete(role, answer)
                role.next_at = time.monotonic() + role.rng.uniform(*role.think_s)
        for role in busy:
            if role.invoke is not None and role.worker is not None and now > role.worker.deadline:
                self._complete(
                    role,
                    {
                        "outcome": "info",
                        "value": None,
                        "error": _harness_error("no answer before the deadline", dead=True),
                    },
                )


def _record(r: Any) -> dict[str, Any]:
    out = {"topic": r["topic"], "partition": int(r["partition"]), "value": str(r["value"]), "offset": r.get("offset")}
    if r.get("error"):
        e = r["error"]
        out["error"] = {"code": e.get("code"), "name": str(e.get("name")), "message": str(e.get("message", ""))}
    return out


def _harness_error(message: str, dead: bool = False) -> dict[str, Any]:
    return {"code": None, "name": "KCONFORM_TIMEOUT", "message": message, "dead": dead}


def make_roles(seed: int, capabilities: dict[str, Any], names: Names) -> tuple[list[Role], list[tuple[str, str]]]:
    """The roles this target can run, and what was skipped with why."""
    skipped: list[tuple[str, str]] = []

    def rng(name: str) -> random.Random:
        return random.Random(f"{seed}:{name}")

    def producer(acks: str, idem: bool, tid: str | None = None) -> tuple[str, dict[str, Any]]:
        return ("producer", {"acks": acks, "idempotent": idem, "transactional_id": tid})

    roles = [
        Role("send-acks0", "send", [producer("0", False)], rng("send-acks0"), acks="0"),
        Role("send-acks1", "send", [producer("1", False)], rng("send-acks1"), acks="1"),
        Role("send-acksall", "send", [producer("all", False)], rng("send-acksall"), acks="all"),
    ]
    if capabilities.get("idempotence"):
        roles.append(Role("send-idem", "send", [producer("all", True)], rng("send-idem"), acks="all", idempotent=True))
    else:
        skipped.append(("idempotent produce", "target says idempotence=false"))
    if capabilities.get("transactions"):
        roles.append(
            Role(
                "txn-a",
                "txn",
                [producer("all", True, names.transactional_id)],
                rng("txn-a"),
                transactional_id=names.transactional_id,
                think_s=(0.0, 0.1),
            )
        )
        roles.append(
            Role(
                "txn-zombie",
                "txn",
                [producer("all", True, names.transactional_id)],
                rng("txn-zombie"),
                transactional_id=names.transactional_id,
                think_s=(1.0, 2.5),
            )
        )
        if capabilities.get("groups"):
            roles.append(
                Role(
                    "ctp",
                    "ctp",
                    [
                        ("consumer", {"isolation": "read_committed", "group": names.group("ctp")}),
                        producer("all", True, names.ctp_transactional_id),
                    ],
                    rng("ctp"),
                    transactional_id=names.ctp_transactional_id,
                    group=names.group("ctp"),
                )
            )
        else:
            skipped.append(("consume-transform-produce (sendOffsetsToTransaction)", "target says groups=false"))
    else:
        skipped.append(("transactions, zombie fencing, consume-transform-produce", "target says transactions=false"))

    def consumer(name: str, isolation: str, mode: str, group: str | None, drain: bool = False) -> Role:
        cgroup = group or names.group(name)  # librdkafka wants a group.id even for assign-only consumers
        return Role(
            name,
            "consumer",
            [("consumer", {"isolation": isolation, "group": cgroup})],
            rng(name),
            isolation=isolation,
            mode=mode,
            group=group,
            drain=drain,
            think_s=(0.0, 0.1),
        )

    roles.append(consumer("rc-assign", "read_committed", "assign", None))
    roles.append(consumer("ru-assign", "read_uncommitted", "assign", None))
    if capabilities.get("groups"):
        roles.append(consumer("rc-subscribe", "read_committed", "subscribe", names.group("sub")))
    else:
        skipped.append(("subscribe consumers, offset commit / fetch", "target says groups=false"))
    roles.append(consumer("drain-rc", "read_committed", "assign", None, drain=True))
    roles.append(consumer("drain-ru", "read_uncommitted", "assign", None, drain=True))
    return roles, skipped
