"""One live probe run: start the target, run the workload with faults, write the history, tear down.

:func:`run_probe` is what ``kconform probe --target FILE`` / ``--bootstrap-server`` runs. It guarantees
that every process it started (nodes, helper, client workers) is gone when it returns or raises,
including on SIGINT/SIGTERM (:func:`~kconform.conformance.probe.procs.install_signal_teardown`) and at
interpreter exit (atexit). Problems of the harness or the target's start-up raise :class:`ProbeError`
(exit 2); the verdict on the history is the checker's.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconform.conformance.probe.cluster import Cluster, ClusterError
from kconform.conformance.probe.history import (
    DELIVERY_VERSION,
    VERSION,
    DeliveryConfig,
    HistoryError,
    HistoryHeader,
    HistoryWriter,
    ProbeConfig,
    Skipped,
)
from kconform.conformance.probe.nemesis import Nemesis
from kconform.conformance.probe.procs import Interrupted, ProcessGroup, ProcessGroupError, install_signal_teardown
from kconform.conformance.probe.target_file import Target, TargetError, load_target, parse_capabilities
from kconform.conformance.probe.workers import Worker, WorkerError
from kconform.conformance.probe.workload import OP_TIMEOUT_S, WORKER_START_S, Names, Workload, make_roles

DEFAULT_CAPABILITIES: dict[str, Any] = {
    "transactions": True,
    "idempotence": True,
    "groups": True,
    "replication_factor": 1,
}


class ProbeError(Exception):
    """The run could not decide: bad target, a target that did not start, a harness failure (exit 2)."""


@dataclass
class ProbeOptions:
    """What ``kconform probe`` was asked to run (the live half)."""

    target: str | None = None
    bootstrap_server: str | None = None
    client: str = "confluent-kafka"
    capabilities: str | None = None
    seed: int = 7
    ops: int | None = None
    seconds: float | None = None
    out_dir: Path = Path("kconform-probe")
    nemesis: bool = True


@dataclass
class ProbeRun:
    """What a finished run produced."""

    history: Path
    target: str
    client: str
    ops: int
    completed: dict[str, int]
    elapsed_s: float
    faults: dict[str, int] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def run_probe(options: ProbeOptions) -> ProbeRun:
    """Run the probe; see the module docstring."""
    if (options.target is None) == (options.bootstrap_server is None):
        raise ProbeError("give exactly one of --target FILE and --bootstrap-server HOST:PORT")
    target: Target | None = None
    try:
        if options.target is not None:
            target = load_target(options.target)
        caps = dict(target.capabilities if target else DEFAULT_CAPABILITIES)
        if options.capabilities:
            caps = parse_capabilities(options.capabilities, caps)
    except (TargetError, ValueError) as e:
        raise ProbeError(str(e)) from None
    if options.bootstrap_server is not None:
        for hostport in options.bootstrap_server.split(","):
            if not hostport.strip().startswith(("127.0.0.1:", "localhost:")):
                raise ProbeError(f"--bootstrap-server {hostport!r}: the probe connects to 127.0.0.1 only")
    out = options.out_dir
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    name = target.name if target else "bootstrap"
    history_path = out / f"history-{name}-{options.client}-{options.seed}.jsonl"

    # Fresh names per run (topics, transactional ids, groups): a cluster may hold earlier runs' data.
    names = Names(f"kc-{uuid.uuid4().hex[:8]}")
    group = ProcessGroup()
    undo = install_signal_teardown(group) if threading.current_thread() is threading.main_thread() else None
    cluster: Cluster | None = None
    started = dt.datetime.now(dt.UTC)
    try:
        if target is not None:
            cluster = Cluster(target, group, logs)
            bootstrap = cluster.start()
        else:
            assert options.bootstrap_server is not None
            bootstrap = options.bootstrap_server
        setup = Worker(group, options.client, "setup", logs)
        hello = setup.wait_ready(WORKER_START_S)
        answer = setup.call(
            "topics",
            {
                "bootstrap": bootstrap,
                "topics": names.topics,
                "replication_factor": int(caps.get("replication_factor", 1)),
                "create": target is None or target.topic_creation == "admin",
            },
            OP_TIMEOUT_S * 2,
        )
        setup.close()
        if answer.get("outcome") != "ok":
            raise ProbeError(f"could not create or find the probe's topics on {bootstrap}: {answer.get('error')}")
        topics = {str(t): int(n) for t, n in answer["value"]["topics"].items()}
        roles, skipped = make_roles(options.seed, caps, names)
        if target is None:
            skipped.append(("faults (nemesis)", "no target file: kconform does not manage the nodes"))
        elif not options.nemesis:
            skipped.append(("faults (nemesis)", "--no-nemesis"))
        else:
            for fault, allowed in target.faults.items():
                if not allowed:
                    skipped.append((f"fault {fault}", target.fault_why.get(fault, "the target file does not allow it")))
        # the consume-transform-produce group is judged exactly-once (history version 2)
        delivery = {
            r.group: DeliveryConfig(r.group, "exactly-once", output=names.output_topic)
            for r in roles
            if r.kind == "ctp" and r.group is not None and names.output_topic in topics
        }
        header = HistoryHeader(
            seed=options.seed,
            target=name,
            client=options.client,
            client_version=str(hello.get("client_version", "?")),
            started=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            topics=topics,
            capabilities=caps,
            config=ProbeConfig(
                acks="all",
                unclean_leader_election=False,
                min_insync_replicas=1,
                consumption="at-least-once",
                volatile_storage=bool(target and target.volatile_storage),
                delivery=delivery,
            ),
            skipped=tuple(Skipped(w, y) for w, y in skipped),
            extra={"bootstrap": bootstrap},
            version=DELIVERY_VERSION if delivery else VERSION,
        )
        with HistoryWriter(history_path, header, durable=False) as history:
            workload = Workload(
                group=group,
                client=options.client,
                bootstrap=bootstrap,
                history=history,
                roles=roles,
                topics=topics,
                names=names,
                log_dir=logs,
                max_ops=options.ops,
                seconds=options.seconds if options.seconds or options.ops else 10.0,
            )
            nemesis = None
            if cluster is not None and options.nemesis:
                nemesis = Nemesis(
                    cluster,
                    history,
                    options.seed,
                    lambda: {r.process: r.worker.pid for r in roles if r.worker is not None},
                )
                workload.nemesis = nemesis
            workload.run()
        elapsed = (dt.datetime.now(dt.UTC) - started).total_seconds()
        return ProbeRun(
            history_path,
            name,
            options.client,
            workload.ops,
            workload.completed,
            elapsed,
            dict(nemesis.counts) if nemesis else {},
            skipped,
        )
    except (ClusterError, WorkerError, ProcessGroupError, TargetError, HistoryError) as e:
        raise ProbeError(f"{e} (logs: {logs})") from None
    except Interrupted:
        raise
    finally:
        if cluster is not None:
            cluster.close()
        group.close()
        if undo is not None:
            undo()
