"""Parallel generation through one spawned host that forks its workers (traces.generate._hosted): a
bucket's error reaches the caller with its type, and a caller that stops early (an error, Ctrl-C,
closing the generator) leaves no host and no worker behind. That the bytes are those of one worker
is tests/test_corpus.py's and tests/test_generate_txn.py's (same seed whatever the workers)."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from kconform.model.config import ReplicationConfig
from kconform.traces.generate import _hosted, _Task


def _tasks(root: Path, buckets: int, trace_events: int = 50, traces: int = 2) -> list[_Task]:
    config = ReplicationConfig().to_json()
    return [
        _Task(str(root), b, tuple(range(b * traces, (b + 1) * traces)), 0, config, (), trace_events)
        for b in range(buckets)
    ]


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        out.update(int(c) for c in task.read_text().split())
    return out


def _gone(pid: int, seconds: float = 20.0) -> bool:
    """Whether ``pid`` has exited (or is a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def test_a_bucket_error_reaches_the_caller_with_its_type(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    with pytest.raises(OSError):
        list(_hosted(_tasks(not_a_dir, 2), 2))
    assert not multiprocessing.active_children()


def test_stopping_early_ends_the_host_and_its_workers_at_once(tmp_path: Path) -> None:
    # One small bucket, then two of 1M events that keep both workers busy for many seconds: they must be ended,
    # not left to finish (or to run on as orphans).
    tasks = _tasks(tmp_path, 1) + _tasks(tmp_path, 3, trace_events=5_000, traces=200)[1:]
    running = _hosted(tasks, 2)
    assert sorted(m["trace"] for m in next(running)) == [0, 1]
    (host,) = multiprocessing.active_children()
    workers = _children(host.pid or 0)
    assert len(workers) == 2, "the host forks its two workers"
    running.close()  # what an exception or Ctrl-C in the caller does to the generator
    assert not host.is_alive()
    assert all(_gone(pid, seconds=5.0) for pid in workers), "a worker outlived its host"
