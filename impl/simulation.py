"""The simulation core every slice's reference cluster runs on, and the adapter shell around it.

A slice's cluster (``impl/<slice>/cluster.py``) derives from ``Simulation``: it builds its nodes
over a ``World`` (impl.runtime), says which node a network address is (``node``), runs the
operations that are its own (``apply_slice``) and boots (``boot``). Everything else is here, once:
the operations on the network and the clock (Deliver, DeliverTo, Drop, Duplicate, Advance, Settle,
Run), message delivery, the bounded time advance and the event hand-out. Its adapter derives from
``SimulationAdapter`` (reset / apply / close of kconform.conformance.adapter).

Guarantees: ``apply`` runs one operation to completion and returns the events its handlers emitted,
in order; the same configuration, mutants and operations give the same events (no wall clock, no
unordered iteration, no random choice); every loop is bounded (MAX_TIMER_FIRINGS,
MAX_SETTLE_DELIVERIES): a larger Advance is refused with RuntimeError, not truncated; a message
whose destination is down or cut off when it is picked is lost without running any handler; time
moves forward only, with one ClockAdvanced event at each new time.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from kconform.model.configs import AnyConfig
from kconform.traces.events import CONTROLLER, ClockAdvanced, Event
from kconform.traces.operations import (
    Advance,
    Deliver,
    DeliverTo,
    Drop,
    Duplicate,
    ModelAction,
    Operation,
    Run,
    Settle,
)

from .messages import Message
from .mutants import check_mutants
from .runtime import World

MAX_TIMER_FIRINGS = 200_000
"""Upper bound on timers fired by one Advance (a larger Advance is refused, not truncated)."""
MAX_SETTLE_DELIVERIES = 100_000
"""Upper bound on deliveries by one Settle, whatever ``max_messages`` says."""
RUN_SETTLE_DELIVERIES = 1_000
"""Deliveries per settle inside Run: enough for any quiet cluster, bounded for a chatty one."""
RUN_STEP_MS = 100
"""Clock step of Run: below every timer period of either cluster (fetch backoff 500 ms)."""

_WORLD_OPERATIONS = frozenset((Deliver, DeliverTo, Drop, Duplicate, Advance, Settle, Run))
"""The operations ``Simulation._apply_world`` runs, whatever the slice (disjoint classes)."""


class Node(Protocol):
    """Anything a message can be delivered to: a broker, the controller, a client."""

    def receive(self, msg: Message) -> None: ...


W = TypeVar("W", bound=World[Any])


class Simulation(ABC, Generic[W]):
    """One running cluster of some slice over the world ``W``."""

    label: ClassVar[str]
    """How errors name the cluster ("the reference cluster", ...)."""

    def __init__(self, world: W) -> None:
        self.world = world

    # ------------------------------------------------------------------ what a slice gives

    @abstractmethod
    def boot(self) -> list[Event]:
        """Bring the fresh cluster up; the events of bring-up."""

    @abstractmethod
    def node(self, address: int) -> Node | None:
        """The node at network ``address`` (None: nobody listens there, the message is lost)."""

    @abstractmethod
    def apply_slice(self, op: Operation) -> bool:
        """Run ``op`` if it is one of the slice's own operations; False when it is not. The
        network and clock operations (Deliver, DeliverTo, Drop, Duplicate, Advance, Settle, Run)
        never reach it: the core runs them."""

    @abstractmethod
    def snapshot(self) -> dict[int, dict[str, Any]]:
        """Each broker's observable state by broker id, for replay's side-by-side view."""

    def before_operation(self) -> None:
        """Called before every operation runs (default: nothing)."""

    def on_clock_moved(self) -> None:
        """Called after the clock moved and ClockAdvanced was emitted (default: nothing)."""

    # ------------------------------------------------------------------------- operations

    def apply(self, op: Operation) -> list[Event]:
        """Run ``op`` to completion; return its events. A model-search action (ModelAction) is
        refused with ValueError before anything runs: the cluster cannot be driven by it; an
        operation neither the slice nor the network and clock know raises ValueError."""
        if isinstance(op, ModelAction):
            raise ValueError(
                f"{self.label} cannot be driven by model actions ({op.label}): a file of the model "
                "search (implementation 'model') is judged model-only"
            )
        self.before_operation()
        # The network and clock operations are the core's (no slice's apply_slice takes them):
        # looked up by their class first, instead of after every isinstance test of the slice's.
        if type(op) in _WORLD_OPERATIONS or not self.apply_slice(op):
            self._apply_world(op)
        return self.world.events.drain()

    def _apply_world(self, op: Operation) -> None:
        """The operations on the network and the clock, which every slice has."""
        network = self.world.network
        if isinstance(op, Run):
            self.run(op.ms)
        elif isinstance(op, Deliver):
            msg = network.take(op.index)
            if msg is not None:
                self.deliver(msg)
        elif isinstance(op, DeliverTo):
            index = next((i for i, m in enumerate(network.queue) if m.dst == op.node), None)
            if index is not None:
                self.deliver(network.queue.pop(index))
        elif isinstance(op, Drop):
            network.take(op.index)
        elif isinstance(op, Duplicate):
            copy = network.peek(op.index)
            if copy is not None:
                self.deliver(copy)
        elif isinstance(op, Advance):
            self.advance(op.ms)
        elif isinstance(op, Settle):
            self.settle(op.max_messages)
        else:
            raise ValueError(f"{self.label} does not know operation {op!r}")

    def index_of(self, payload_type: type, src: int | None = None, dst: int | None = None) -> int | None:
        """Queue position of the oldest in-flight message of ``payload_type`` (optionally from
        ``src`` / to ``dst``), for steering directed scenarios with Deliver/Drop/Duplicate."""
        for index, msg in enumerate(self.world.network.queue):
            if (
                isinstance(msg.payload, payload_type)
                and (src is None or msg.src == src)
                and (dst is None or msg.dst == dst)
            ):
                return index
        return None

    # ---------------------------------------------------------------------- the network

    def deliver(self, msg: Message) -> None:
        """Run the destination's handler, unless the message is lost (destination down or cut, or
        nobody at its address)."""
        if not self.world.network.can_deliver(msg):
            return
        node = self.node(msg.dst)
        if node is not None:
            node.receive(msg)

    def settle(self, max_messages: int) -> None:
        """Deliver the oldest in-flight message, at most ``max_messages`` (and MAX_SETTLE_DELIVERIES) times."""
        network, deliver = self.world.network, self.deliver
        for _ in range(min(max_messages, MAX_SETTLE_DELIVERIES)):
            queue = network.queue  # read anew: a delivery may replace it (Network.set_down)
            if not queue:  # network.take(0), inlined (a settle runs for most messages)
                return
            deliver(queue.pop(0))

    # ------------------------------------------------------------------------ the clock

    def advance(self, ms: int) -> None:
        """Fire due timers in time order up to now + ``ms``; ClockAdvanced at each new time."""
        if ms <= 0:
            return
        scheduler = self.world.scheduler
        target_ms = scheduler.now_ms + ms
        next_due_ms, fire_next = scheduler.next_due_ms, self.fire_next
        for _ in range(MAX_TIMER_FIRINGS):
            due_ms = next_due_ms()
            if due_ms is None or due_ms > target_ms:
                break
            fire_next(due_ms)
        else:
            raise RuntimeError(f"Advance({ms}) fires more than {MAX_TIMER_FIRINGS} timers; use shorter steps")
        if target_ms > scheduler.now_ms:
            self._move_clock(target_ms)

    def fire_next(self, due_ms: int) -> None:
        """Move the clock to ``due_ms`` (if later) and fire the earliest timer due then."""
        scheduler = self.world.scheduler
        if due_ms > scheduler.now_ms:
            self._move_clock(due_ms)
        timer = scheduler.pop_due(due_ms)
        assert timer is not None
        timer.action()

    def _move_clock(self, now_ms: int) -> None:
        self.world.scheduler.move_to(now_ms)
        self.world.events.emit(ClockAdvanced(CONTROLLER, now_ms))
        self.on_clock_moved()

    def run(self, ms: int) -> None:
        """A healthy network for ``ms``: settle, then step the clock by at most RUN_STEP_MS."""
        remaining = ms
        for _ in range(ms // RUN_STEP_MS + 2):
            self.settle(RUN_SETTLE_DELIVERIES)
            if remaining <= 0:
                return
            step = min(RUN_STEP_MS, remaining)
            self.advance(step)
            remaining -= step


S = TypeVar("S", bound=Simulation[Any])


class SimulationAdapter(ABC, Generic[S]):
    """A slice's reference implementation behind the Adapter protocol: ``reset`` starts a fresh
    simulation, ``apply`` runs one operation on it, ``close`` drops it. ``seed`` is recorded for
    the adapter contract; no behaviour of a reference cluster is random."""

    name: str
    """The implementation's name in counterexample files."""
    label: ClassVar[str]
    """How errors name the implementation."""
    mutant_slice: ClassVar[str | None]
    """The slice whose mutants ``reset`` accepts (None: any registered mutant)."""
    config_type: ClassVar[type]
    """The configuration class of the slice; ``reset`` refuses any other with TypeError."""

    def __init__(self) -> None:
        self._sim: S | None = None
        self.seed: int | None = None

    @property
    def running(self) -> S:
        """The running simulation (for white-box tests); reset() must have been called."""
        if self._sim is None:
            raise RuntimeError(f"{self.label} is not running: call reset(config, seed, mutants) first")
        return self._sim

    @abstractmethod
    def start(self, config: Any, mutants: frozenset[str]) -> S:
        """A fresh simulation of ``config`` (a ``config_type``) with ``mutants`` (checked)."""

    def reset(self, config: AnyConfig, seed: int, mutants: frozenset[str]) -> list[Event]:
        """Start a fresh cluster; returns the bring-up events. A configuration of another slice
        raises TypeError; unknown mutants raise ValueError."""
        if not isinstance(config, self.config_type):
            raise TypeError(f"{self.label} cannot run a {type(config).__name__}")
        chosen = check_mutants(mutants, self.mutant_slice)
        sim = self.start(config, chosen)
        self.seed = seed
        self._sim = sim
        return sim.boot()

    def apply(self, op: Operation) -> list[Event]:
        return self.running.apply(op)

    def snapshot(self) -> dict[int, dict[str, Any]]:
        """Each broker's observable state, for replay's side-by-side view (optional in adapters)."""
        return self.running.snapshot()

    def close(self) -> None:
        """Drop the simulation, and its timers (impl.clock.Scheduler.clear): a closed cluster runs nothing."""
        if self._sim is not None:
            self._sim.world.scheduler.clear()
        self._sim = None
