"""Child processes of a probe run: each in its own process group, always torn down.

A :class:`ProcessGroup` starts every child with ``start_new_session=True`` (so a SIGKILL of the group
reaches whatever the child itself started, and a Ctrl-C in the terminal reaches only kconform), keeps
them in one registry, and guarantees that :meth:`ProcessGroup.close` leaves none running: SIGTERM to
each group, a bounded wait, then SIGKILL. ``close`` runs from ``try/finally`` in the runner, from
``atexit`` and from the SIGINT/SIGTERM handlers :func:`install_signal_teardown` installs, so a normal
exit, an exception and an interrupt all tear down. Every wait here is bounded.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import IO

TERM_GRACE_S = 3.0
"""How long a process group gets between SIGTERM and SIGKILL on teardown."""


class ProcessGroupError(Exception):
    """A child could not be started (missing executable, bad working directory)."""


class Child:
    """One started child: a ``subprocess.Popen`` leading its own process group."""

    def __init__(self, name: str, popen: subprocess.Popen[bytes]) -> None:
        self.name = name
        self.popen = popen
        self.pgid = popen.pid  # start_new_session: the child leads a new session and group

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal_group(self, sig: int) -> bool:
        """Send ``sig`` to the child's whole process group; False if the group is already gone."""
        try:
            os.killpg(self.pgid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def kill(self) -> None:
        """SIGKILL the group, reap the leader and wait for the group to be empty (bounded)."""
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=TERM_GRACE_S)
        self.wait_group_gone(TERM_GRACE_S)

    def wait_group_gone(self, timeout_s: float) -> bool:
        """True once no process of the group is left (SIGKILL is asynchronous for the leader's descendants)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                os.killpg(self.pgid, 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
            time.sleep(0.02)
        return False

    def stop(self, grace_s: float = TERM_GRACE_S) -> None:
        """SIGCONT (a paused group cannot die of SIGTERM), SIGTERM, bounded wait, then SIGKILL."""
        if self.popen.poll() is None:
            self.signal_group(signal.SIGCONT)
            self.signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=grace_s)
        # The leader may be gone while members of its group linger: SIGKILL the group regardless.
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=grace_s)
        self.wait_group_gone(grace_s)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class ProcessGroup:
    """The registry of every child of one probe run; ``close`` is idempotent and thread-safe."""

    def __init__(self) -> None:
        self._children: list[Child] = []
        self._lock = threading.Lock()
        self._closed = False
        atexit.register(self.close)

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        stdin: int | IO[bytes] | None = subprocess.DEVNULL,
        stdout: int | IO[bytes] | None = subprocess.DEVNULL,
        stderr: int | IO[bytes] | None = subprocess.DEVNULL,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Child:
        """Start ``argv`` as the leader of a new process group and register it."""
        with self._lock:
            if self._closed:
                raise ProcessGroupError(f"cannot start {name}: the run is tearing down")
            try:
                popen = subprocess.Popen(
                    list(argv), stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=cwd, start_new_session=True
                )
            except OSError as e:
                raise ProcessGroupError(f"cannot start {name} ({argv[0]}): {e.strerror or e}") from None
            child = Child(name, popen)
            self._children.append(child)
            return child

    def forget(self, child: Child) -> None:
        """Stop ``child`` now and drop it from the registry (a worker replaced after a crash)."""
        child.stop()
        with self._lock:
            if child in self._children:
                self._children.remove(child)

    def children(self) -> list[Child]:
        with self._lock:
            return list(self._children)

    def close(self) -> None:
        """Tear every child down: SIGCONT + SIGTERM to all groups at once, one bounded wait, SIGKILL."""
        with self._lock:
            self._closed = True
            children, self._children = self._children, []
        for child in children:
            child.signal_group(signal.SIGCONT)
            child.signal_group(signal.SIGTERM)
        deadline = time.monotonic() + TERM_GRACE_S
        for child in children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
        for child in children:
            child.stop(grace_s=1.0)
        atexit.unregister(self.close)


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived; raised in the main thread so ``finally`` blocks tear down."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def install_signal_teardown(group: ProcessGroup) -> Callable[[], None]:
    """Make SIGINT / SIGTERM tear ``group`` down and raise :class:`Interrupted`; return the undo.

    The handler closes the group first (so even code that swallows the exception cannot leave a
    child behind), then raises in the main thread. Only callable from the main thread.
    """
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, frame: FrameType | None) -> None:
        group.close()
        raise Interrupted(signum)

    for sig in previous:
        signal.signal(sig, handler)

    def undo() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return undo
