"""What every simulated node of a cluster run shares, whatever the slice: the configuration, the
switched-on mutants, the clock, the network and the event log.

Guarantee: events are recorded in the order handlers run them; ``drain`` hands them out once.
A slice's world (``impl/<slice>/runtime.py``) derives from ``World`` and adds its cluster-wide state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from kconform.traces.events import Event

from .clock import Scheduler
from .network import Network

C = TypeVar("C")


@dataclass
class EventLog:
    """Events emitted since the last ``drain``, in handler order.

    Handlers emit an event per handler run, so ``emit`` is, on an ``EventLog`` itself (not on a
    subclass that overrides it), the ``append`` of its list, bound on the instance once: one Python
    call less per event. ``drain`` hands out a copy and empties that same list."""

    _events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._bind()

    def _bind(self) -> None:
        if type(self).emit is EventLog.emit:
            vars(self)["emit"] = self._events.append

    def emit(self, event: Event) -> None:
        self._events.append(event)

    def drain(self) -> list[Event]:
        events = self._events
        out = events.copy()
        events.clear()
        return out


@dataclass
class World(Generic[C]):
    """The shared world of one cluster run with configuration type ``C``."""

    config: C
    mutants: frozenset[str]
    scheduler: Scheduler
    network: Network
    events: EventLog

    @property
    def now_ms(self) -> int:
        return self.scheduler.now_ms

    def mutant(self, name: str) -> bool:
        """Whether mutant ``name`` (impl/mutants.py; the slice's own in impl/<slice>/mutants.py) is switched on."""
        return name in self.mutants
