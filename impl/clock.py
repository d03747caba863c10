"""Simulated time: one clock and one timer queue.

Guarantees: time never goes backwards; due timers fire in (due time, scheduling order), so two
runs that schedule the same timers fire them identically; a cancelled timer never fires; every
timer belongs to an owner (a broker id, the controller or a client) so that a crashed broker's
timers can be dropped at once.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush

TimerAction = Callable[[], None]


class _Timer:
    """One scheduled action (a plain class with slots: one is made per timer scheduled)."""

    __slots__ = ("action", "due_ms", "name", "owner", "seq")

    def __init__(self, due_ms: int, seq: int, owner: int, name: str, action: TimerAction) -> None:
        self.due_ms = due_ms
        self.seq = seq
        self.owner = owner
        self.name = name
        self.action = action

    def __repr__(self) -> str:
        return f"_Timer(due_ms={self.due_ms}, seq={self.seq}, owner={self.owner}, name={self.name!r})"


class Scheduler:
    """The simulated clock (``now_ms``, starting at 0) and the timers due on it."""

    def __init__(self) -> None:
        self.now_ms = 0
        self._heap: list[tuple[int, int, _Timer]] = []
        """(due_ms, seq, timer): ordered by due time then scheduling order, compared as tuples in C
        (seq is unique, so the timers themselves are never compared)."""
        self._next_seq = 0
        self._live: dict[int, _Timer] = {}

    def schedule(self, delay_ms: int, owner: int, name: str, action: TimerAction) -> int:
        """Run ``action`` at now + ``delay_ms``; returns a handle for ``cancel``."""
        assert delay_ms >= 0, f"timer {name} scheduled in the past ({delay_ms} ms)"
        seq = self._next_seq
        self._next_seq = seq + 1
        due_ms = self.now_ms + delay_ms
        timer = _Timer(due_ms, seq, owner, name, action)
        heappush(self._heap, (due_ms, seq, timer))
        self._live[seq] = timer
        return seq

    def cancel(self, handle: int | None) -> None:
        """Forget the timer ``handle`` (no-op if it already fired or is None)."""
        if handle is not None:
            self._live.pop(handle, None)

    def cancel_owner(self, owner: int) -> None:
        """Forget every timer of ``owner`` (a crashed broker's timers stop)."""
        for seq in sorted(s for s, t in self._live.items() if t.owner == owner):
            del self._live[seq]

    def clear(self) -> None:
        """Forget every timer (the cluster is closed: nothing fires any more). A timer's action refers
        to its node, which refers to this scheduler: cleared, a closed cluster is freed by reference
        counting instead of waiting for the cyclic collector."""
        self._heap.clear()
        self._live.clear()

    def next_due_ms(self) -> int | None:
        """Due time of the earliest live timer, None when no timer is pending."""
        heap, live = self._heap, self._live
        while heap and heap[0][1] not in live:  # a cancelled timer leaves the heap here
            heappop(heap)
        return heap[0][0] if heap else None

    def pop_due(self, until_ms: int) -> _Timer | None:
        """Remove and return the earliest live timer due at or before ``until_ms``."""
        heap, live = self._heap, self._live
        while heap and heap[0][1] not in live:  # a cancelled timer leaves the heap here
            heappop(heap)
        if not heap or heap[0][0] > until_ms:
            return None
        timer = heappop(heap)[2]
        del live[timer.seq]
        return timer

    def move_to(self, now_ms: int) -> None:
        """Set the clock; it never goes backwards."""
        assert now_ms >= self.now_ms, f"time went backwards: {self.now_ms} -> {now_ms}"
        self.now_ms = now_ms
