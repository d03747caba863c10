"""The runner's side of a client worker: start it, send one command, collect its answer without blocking.

A :class:`Worker` is one ``python -m kconform.conformance.probe.worker`` process in its own process group
(registered with the run's :class:`~kconform.conformance.probe.procs.ProcessGroup`), with its stdin and
stdout as pipes. At most one command is outstanding per worker (a probe process is single-threaded);
:meth:`Worker.poll_answer` reads whatever arrived and returns the answer once its line is complete. A
worker that misses its deadline is killed by the caller: its operation's outcome is unknown.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kconform.conformance.probe.procs import Child, ProcessGroup

GRACE_S = 5.0
"""How long after a command's own timeout its worker may still answer before it is killed."""


class WorkerError(Exception):
    """A worker that died, answered garbage or did not start."""


class Worker:
    """One client process; see the module docstring."""

    def __init__(self, group: ProcessGroup, client: str, name: str, log_dir: Path) -> None:
        self.group = group
        self.name = name
        log = open(log_dir / f"worker-{name}.log", "ab")  # noqa: SIM115 - handed to the child
        try:
            self.child: Child = group.start(
                f"worker-{name}",
                [sys.executable, "-m", "kconform.conformance.probe.worker", "--client", client],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
            )
        finally:
            log.close()
        self._buf = b""
        self.pending: dict[str, Any] | None = None
        self.deadline = 0.0
        self.hello: dict[str, Any] | None = None

    @property
    def pid(self) -> int:
        return self.child.pid

    def fileno(self) -> int:
        out = self.child.popen.stdout
        assert out is not None
        return out.fileno()

    def wait_ready(self, timeout_s: float) -> dict[str, Any]:
        """Block (bounded) for the worker's hello line."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            line = self._read_line(max(0.0, deadline - time.monotonic()))
            if line is not None:
                self.hello = line
                return line
            if not self.child.alive():
                break
        raise WorkerError(f"worker {self.name} did not start within {timeout_s:g} s (see worker-{self.name}.log)")

    def send(self, cmd: str, args: dict[str, Any], timeout_s: float) -> None:
        """Send one command; its answer is due by ``timeout_s`` + GRACE_S."""
        if self.pending is not None:
            raise WorkerError(f"worker {self.name} is busy")
        stdin = self.child.popen.stdin
        assert stdin is not None
        data = json.dumps({"cmd": cmd, "args": args, "timeout": timeout_s}) + "\n"
        try:
            stdin.write(data.encode())
            stdin.flush()
        except OSError as e:
            raise WorkerError(f"worker {self.name} is gone: {e}") from None
        self.pending = {"cmd": cmd, "args": args}
        self.deadline = time.monotonic() + timeout_s + GRACE_S

    def call(self, cmd: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send and wait (bounded) for the answer."""
        self.send(cmd, args, timeout_s)
        while True:
            answer = self.poll_answer(max(0.0, self.deadline - time.monotonic()))
            if answer is not None:
                return answer
            if time.monotonic() >= self.deadline or not self.child.alive():
                raise WorkerError(f"worker {self.name} gave no answer to {cmd} in time")

    def poll_answer(self, wait_s: float = 0.0) -> dict[str, Any] | None:
        """The pending command's answer if its line is complete (waits up to ``wait_s``)."""
        line = self._read_line(wait_s)
        if line is None:
            return None
        self.pending = None
        return line

    def _read_line(self, wait_s: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + wait_s
        while True:
            if b"\n" in self._buf:
                raw, _, self._buf = self._buf.partition(b"\n")
                try:
                    obj = json.loads(raw)
                except ValueError:
                    raise WorkerError(f"worker {self.name} wrote an unreadable line: {raw[:200]!r}") from None
                if not isinstance(obj, dict):
                    raise WorkerError(f"worker {self.name} wrote a non-object line")
                return obj
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.fileno()], [], [], max(0.0, left))
            if not ready:
                return None
            chunk = os.read(self.fileno(), 65536)
            if not chunk:
                raise WorkerError(f"worker {self.name} closed its output (exit code {self.child.popen.poll()})")
            self._buf += chunk

    def close(self) -> None:
        """Ask the worker to close its clients (bounded), then tear its process group down."""
        if self.child.alive() and self.pending is None:
            with contextlib.suppress(WorkerError):
                self.call("close", {}, 2.0)
        self.group.forget(self.child)


def close_workers(workers: list[Worker], timeout_s: float = 3.0) -> None:
    """Close many workers at once: ask each to close its clients, wait (bounded) together, tear down."""
    asked = []
    for w in workers:
        if w.child.alive() and w.pending is None:
            try:
                w.send("close", {}, timeout_s)
                asked.append(w)
            except WorkerError:
                pass
    deadline = time.monotonic() + timeout_s
    for w in asked:
        with contextlib.suppress(WorkerError):
            w.poll_answer(max(0.0, deadline - time.monotonic()))
    for w in workers:
        w.group.forget(w.child)
