"""A running target: its nodes started from the target file, proxies in front, faults on demand.

:class:`Cluster` starts every node of a :class:`~kconform.conformance.probe.targets.Target` in its own
process group (:mod:`kconform.conformance.probe.procs`), waits (bounded) until each is ready, and knows
the bootstrap servers the clients use: the proxies' ports when the target sits behind kconform's proxy,
else the nodes' advertised listeners (or what a node printed, for ``bootstrap_from_stdout``). The fault
methods are what the nemesis may call; each refuses a fault the target file does not allow.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from kconform.conformance.probe.ports import free_ports, wait_tcp
from kconform.conformance.probe.procs import Child, ProcessGroup
from kconform.conformance.probe.proxy import Proxy
from kconform.conformance.probe.target_file import Target, TargetError, expand


class ClusterError(Exception):
    """The target could not be started or did not become ready in time (a harness error, exit 2)."""


@dataclass
class NodeRun:
    """One node's live state: ports, its process, its proxy, and its log file."""

    name: str
    argv: list[str]
    port: int | None
    advertised_port: int | None
    log: Path
    child: Child | None = None
    proxy: Proxy | None = None
    bootstrap: str | None = None
    paused: bool = False
    down: bool = False
    starts: int = 0
    extra: dict[str, str] = field(default_factory=dict)


class Cluster:
    """Start, fault and tear down a target's nodes. Use as a context manager, or call ``close``."""

    def __init__(self, target: Target, group: ProcessGroup, log_dir: Path) -> None:
        self.target = target
        self.group = group
        self.log_dir = log_dir
        self.nodes: dict[str, NodeRun] = {}
        self._scratch = tempfile.TemporaryDirectory(prefix="kconform-probe-")

    # -- start ---------------------------------------------------------------------------------------
    def start(self) -> str:
        """Start every node and its proxy; return the bootstrap servers once all are ready."""
        for node in self.target.nodes:
            port = advertised = None
            if node.listener is not None:
                port, advertised = free_ports(2)
                if not self.target.proxy:
                    advertised = port
            scratch = Path(self._scratch.name) / node.name
            scratch.mkdir(parents=True, exist_ok=True)
            values = {
                "python": sys.executable,
                "port": str(port),
                "advertised_port": str(advertised),
                "node": node.name,
                "dir": str(scratch),
            }
            try:
                argv = [expand(a, values, self.target.executables, self.target.path) for a in node.start]
            except TargetError:
                raise
            run = NodeRun(node.name, argv, port, advertised, self.log_dir / f"{node.name}.log")
            self.nodes[node.name] = run
            if self.target.proxy and port is not None and advertised is not None:
                run.proxy = Proxy(advertised, port)
            self._launch(run)
        return self.bootstrap()

    def _launch(self, run: NodeRun) -> None:
        node = next(n for n in self.target.nodes if n.name == run.name)
        run.starts += 1
        log = open(run.log, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            if node.bootstrap_from_stdout:
                run.child = self.group.start(run.name, run.argv, stdout=subprocess.PIPE, stderr=log)
            else:
                run.child = self.group.start(run.name, run.argv, stdout=log, stderr=log)
        finally:
            log.close()
        deadline = time.monotonic() + self.target.ready_timeout_s
        if node.bootstrap_from_stdout:
            run.bootstrap = self._read_bootstrap(run, re.compile(node.bootstrap_from_stdout), deadline)
        elif run.port is not None and not self._wait_port(run, deadline):
            raise ClusterError(
                f"{run.name} did not accept connections on 127.0.0.1:{run.port} "
                f"within {self.target.ready_timeout_s:g} s (log: {run.log})"
            )
        run.down = False
        run.paused = False

    def _wait_port(self, run: NodeRun, deadline: float) -> bool:
        assert run.port is not None and run.child is not None
        while time.monotonic() < deadline:
            if not run.child.alive():
                raise ClusterError(
                    f"{run.name} exited with code {run.child.popen.returncode} while starting (log: {run.log})"
                )
            if wait_tcp("127.0.0.1", run.port, min(0.5, max(0.05, deadline - time.monotonic()))):
                return True
        return False

    def _read_bootstrap(self, run: NodeRun, rx: re.Pattern[str], deadline: float) -> str:
        assert run.child is not None and run.child.popen.stdout is not None
        out = run.child.popen.stdout
        buf = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], min(0.5, max(0.0, deadline - time.monotonic())))
            if not ready:
                if not run.child.alive():
                    break
                continue
            chunk = os.read(out.fileno(), 4096)
            if not chunk:
                break
            buf += chunk
            for line in buf.decode(errors="replace").splitlines():
                m = rx.match(line)
                if m:
                    servers = m.group(1)
                    for hostport in servers.split(","):
                        if not hostport.startswith(("127.0.0.1:", "localhost:")):
                            raise ClusterError(f"{run.name} announced {hostport}: the probe connects to loopback only")
                    return servers
        raise ClusterError(
            f"{run.name} printed no line matching {rx.pattern!r} within the ready timeout (log: {run.log})"
        )

    def bootstrap(self) -> str:
        """The bootstrap servers clients use (proxies when present)."""
        servers: list[str] = []
        for run in self.nodes.values():
            if run.bootstrap:
                servers.append(run.bootstrap)
            elif run.advertised_port is not None:
                servers.append(f"127.0.0.1:{run.advertised_port}")
        return ",".join(servers)

    # -- faults --------------------------------------------------------------------------------------
    def _allowed(self, fault: str) -> None:
        if not self.target.faults.get(fault, False):
            raise ClusterError(f"target {self.target.name} does not allow {fault}")

    def pause(self, name: str) -> None:
        """SIGSTOP the node's process group."""
        self._allowed("pause")
        run = self.nodes[name]
        if run.child is not None and run.child.signal_group(signal.SIGSTOP):
            run.paused = True

    def resume(self, name: str) -> None:
        """SIGCONT the node's process group."""
        run = self.nodes[name]
        if run.child is not None:
            run.child.signal_group(signal.SIGCONT)
        run.paused = False

    def kill(self, name: str) -> None:
        """SIGKILL the node's process group (it stays down until ``restart``)."""
        self._allowed("kill")
        run = self.nodes[name]
        if run.child is not None:
            run.child.kill()
            self.group.forget(run.child)
        run.down = True

    def restart(self, name: str) -> None:
        """Stop the node (its stop signal, bounded, then SIGKILL) and start it again on the same ports."""
        self._allowed("restart")
        run = self.nodes[name]
        if run.child is not None:
            self.group.forget(run.child)
            run.child = None
        self._launch(run)

    def proxy_of(self, name: str) -> Proxy:
        self._allowed("proxy")
        proxy = self.nodes[name].proxy
        if proxy is None:
            raise ClusterError(f"node {name} has no proxy")
        return proxy

    def heal_all(self) -> None:
        """Undo every fault still in force (resume paused nodes, heal and undelay proxies)."""
        for run in self.nodes.values():
            if run.paused:
                self.resume(run.name)
            if run.proxy is not None:
                run.proxy.heal()
                run.proxy.delay(0)

    # -- teardown ------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every proxy and node; idempotent."""
        for run in self.nodes.values():
            if run.proxy is not None:
                run.proxy.close()
                run.proxy = None
            if run.child is not None:
                self.group.forget(run.child)
                run.child = None
        with contextlib.suppress(OSError):
            self._scratch.cleanup()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
