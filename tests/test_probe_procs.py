"""Process groups of a probe run: teardown reaches grandchildren, and SIGINT tears down and raises."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from kconform.conformance.probe.procs import Interrupted, ProcessGroup, install_signal_teardown

# A child that starts a grandchild and ignores SIGTERM: only the group SIGKILL ends both.
STUBBORN = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print(p.pid, flush=True)\n"
    "time.sleep(60)\n"
)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_close_kills_the_whole_group_even_if_sigterm_is_ignored() -> None:
    group = ProcessGroup()
    child = group.start("stubborn", [sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE)
    assert child.popen.stdout is not None
    grandchild = int(child.popen.stdout.readline())
    assert not _gone(grandchild)
    t = time.monotonic()
    group.close()
    assert time.monotonic() - t < 10
    assert _gone(child.pid) and _gone(grandchild)
    group.close()  # idempotent


def test_sigint_tears_down_and_raises() -> None:
    before = signal.getsignal(signal.SIGINT)  # not always the default: an earlier test may have started Spark
    group = ProcessGroup()
    undo = install_signal_teardown(group)
    try:
        child = group.start("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"])
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises before this ends
        assert _gone(child.pid)
    finally:
        undo()
        group.close()
    assert signal.getsignal(signal.SIGINT) is before
