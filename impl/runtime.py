"""What every simulated node shares: configuration, switched-on mutants, clock, network, event log.

Guarantee: events are recorded in the order handlers run them; ``drain`` hands them out once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.model.config import ReplicationConfig
from kconform.traces.events import Event

from .clock import Scheduler
from .network import Network


@dataclass
class EventLog:
    """Events emitted since the last ``drain``, in handler order."""

    _events: list[Event] = field(default_factory=list)

    def emit(self, event: Event) -> None:
        self._events.append(event)

    def drain(self) -> list[Event]:
        out, self._events = self._events, []
        return out


@dataclass
class Runtime:
    """The shared world of one cluster run."""

    config: ReplicationConfig
    mutants: frozenset[str]
    scheduler: Scheduler
    network: Network
    events: EventLog

    @property
    def now_ms(self) -> int:
        return self.scheduler.now_ms

    def mutant(self, name: str) -> bool:
        """Whether mutant ``name`` (impl/mutants.py) is switched on."""
        return name in self.mutants
