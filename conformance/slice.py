"""The slice interface: everything a slice of Kafka's protocols gives the suite, in one value.

A **slice** is one protocol area checked end to end (replication of one partition; the
exactly-once producer, coordinator and consumer; later fetch sessions). The judge, the Hypothesis
machine, the gate, replay, the model search, coverage and the trace tools never name a slice:
they ask the registry (conformance.registry) for the ``Slice`` of a configuration and call its
parts. Adding a slice is writing its parts and one ``Slice`` value, and naming its module in
``registry.BUILTIN_SLICES``. The parts that sit above the judge (its report, replay view, trace
workload, coverage pictures) are the slice's ``SliceTools``, registered the same way in
traces.tools.

Every part is a plain value or callable; a part a slice does not have is ``None`` (and the
command that needs it says so, naming the slices that have it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, Required, TypedDict, TypeVar, Unpack

from kconform.impl.mutants import mutants_of
from kconform.traces.events import Event
from kconform.traces.operations import Operation

if TYPE_CHECKING:
    from kconform.conformance.adapter import Adapter
    from kconform.conformance.judge import Finding
    from kconform.conformance.machine import MachineRules, SliceMachine, Swarm
    from kconform.conformance.scenarios import HasOps

C = TypeVar("C")


class SliceJudge(Protocol):
    """What a run needs of a judge: one event in, findings out, and the counters the gate prints.

    Guarantees: ``observe`` judges events in the order given against the judge's own model state;
    ``checks`` / ``violations`` / ``allowed`` count per invariant name, ``actions`` per event kind,
    ``covered`` per coverage key (conformance.coverage) of the events judged conformant."""

    events_judged: int
    violations: Counter[str]
    allowed: Counter[str]
    actions: Counter[str]
    covered: Counter[str]

    @property
    def checks(self) -> Counter[str]: ...
    @property
    def state(self) -> Any: ...

    def observe(self, e: Event) -> list[Finding]: ...

    def note_operation(self, op: Operation) -> None: ...

    def operation_done(self, op: Operation) -> list[Finding]: ...


@dataclass(frozen=True)
class Slice(Generic[C]):
    """One slice's parts. ``C`` is its configuration type (a frozen dataclass of model/)."""

    name: str
    """The name on the command line (``--slice NAME``) and in a config's ``slice`` key."""
    title: str
    """What the slice checks, in a few words (help texts, tables)."""
    config_type: type[C]
    """The slice's configuration class; the registry finds a config's slice by its exact type."""
    parse_config: Callable[[dict[str, Any]], C]
    """The config a JSON object (with its ``slice`` key) describes; raises model.config.ConfigError."""
    gate_configs: Callable[[], tuple[tuple[str, C], ...]]
    """The configurations ``kconform gate --slice all`` runs, each with a part name."""
    describe: Callable[[C], str]
    """A configuration in one line (the gate's header)."""

    # The model and the judge
    make_judge: Callable[[C, frozenset[str] | None], SliceJudge]
    """A fresh judge of a run under a config, checking the named invariants (None: all)."""
    invariants: Callable[[], Mapping[str, Any]]
    """The slice's named invariants (name -> registry entry with ``doc``), in registry order."""

    # The reference implementation
    make_reference: Callable[[], Adapter]
    """The bundled reference implementation (an Adapter)."""
    mutants: Callable[[], Mapping[str, str]]
    """The reference's mutants of this slice (name -> description)."""

    # Search
    swarm: Callable[[C], Swarm]
    """The shape of the shared machine's rules under a config (conformance.machine.Swarm: the rule
    families each run enables a random subset of, delivery, clock jumps, the target)."""
    machine_rules: MachineRules
    """The slice's own rules of the Hypothesis state machine, on top of the shared base."""
    zoo: Callable[[C], Sequence[HasOps]]
    """The known-bug zoo's scenarios that apply to a config, in the order they run (before random
    search; conformance.scenarios runs them)."""
    reachable_keys: Callable[[C], frozenset[str]]
    """The coverage keys the model can produce under a config (the coverage denominator)."""
    search: str | None = None
    """The module of the slice's searches of its model alone (``kconform explore``, ``kconform bmc``):
    it defines ``SEARCH``, a ``ModelSearch``; None: the slice has none (the commands say so). Named,
    not imported, so that the solver (z3) loads only when a search runs (registry.search_of)."""


@dataclass(frozen=True)
class ModelSearch(Generic[C]):
    """A slice's searches of its model alone, over atomic actions within bounds (today
    model.actions.SearchBounds): breadth-first exploration and z3 bounded model checking, both
    ending in the suite's ordinary counterexample file, which ``kconform replay --model-only`` judges.

    Guarantees: ``explore`` returns the first violation at minimal depth with a shortest path;
    ``bmc`` decides lengths 0, 1, ... in turn, so its first violating run is proven minimal;
    ``counterexample`` turns either one's violation into the events of the same handler calls, so the
    lockstep judge replays it to the same invariant violation."""

    explore: Callable[..., Any]
    """``explore(cfg, bounds, invariants, max_depth, max_states, progress=...)``: the BFS result
    (``violation``, ``states_per_depth``, ``distinct_states``, ``edges``, ``exhausted``, ``seconds``)."""
    bmc: Callable[..., Any]
    """``bmc(cfg, bounds, invariants, max_steps, report, solving, reduce)``: the BMC result (``found``)."""
    inductive: Callable[..., Any]
    """``inductive(cfg, bounds, invariant, strengthening, slots)``: one induction attempt."""
    check_bmc: Callable[[C, Any], None]
    """Raises ValueError (saying what) unless the SMT encoding covers the config and bounds."""
    counterexample: Callable[..., Any]
    """``counterexample(cfg, bounds, found, invariants)``: a violation as a counterexample file."""
    label: Callable[[C], str]
    """The config in a file name (``explore-<label>.jsonl``): for replication its protocol rung."""
    header: Callable[[C], str]
    """The config in the searches' first line (rung, replicas, ...)."""


class MachineModule(Protocol):
    """A slice's ``machine.py``: the shape of its Hypothesis machine and its own rules."""

    def swarm(self, cfg: Any) -> Swarm: ...
    def rules(self, base: type[SliceMachine], cfg: Any) -> type[SliceMachine]: ...


class ZooModule(Protocol):
    """A slice's ``scenarios.py``: its known-bug zoo."""

    def zoo(self, cfg: Any) -> Sequence[HasOps]: ...


class CoverageModule(Protocol):
    """A slice's ``coverage.py``: the coverage keys its model can produce."""

    def reachable_keys(self, cfg: Any) -> frozenset[str]: ...


class InvariantsModule(Protocol):
    """A slice's invariants module in model/: its registry of named invariants."""

    @property
    def INVARIANTS(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class SliceModules:
    """The modules of a slice's package under conformance/ that hold its search parts by the
    suite's layout (``machine.py``: ``swarm``, ``rules``; ``scenarios.py``: ``zoo``;
    ``coverage.py``: ``reachable_keys``), and its invariants module in model/ (``INVARIANTS``).
    mypy checks each module against its protocol."""

    machine: MachineModule
    scenarios: ZooModule
    coverage: CoverageModule
    invariants: InvariantsModule


class OwnParts(TypedDict, Generic[C], total=False):
    """What is a slice's own in its ``Slice`` (the fields of that name; ``search`` optional)."""

    name: Required[str]
    title: Required[str]
    config_type: Required[type[C]]
    parse_config: Required[Callable[[dict[str, Any]], C]]
    gate_configs: Required[Callable[[], tuple[tuple[str, C], ...]]]
    describe: Required[Callable[[C], str]]
    make_judge: Required[Callable[[C, frozenset[str] | None], SliceJudge]]
    make_reference: Required[Callable[[], Adapter]]
    search: str | None


def slice_of(modules: SliceModules, **own: Unpack[OwnParts[C]]) -> Slice[C]:
    """The ``Slice`` of a slice laid out as the suite lays its slices out: its search parts from
    ``modules``, its mutants from the reference's registry of mutants under its name
    (impl.mutants), the rest its ``own``
    parts. A slice laid out otherwise (a test's fake) builds its ``Slice`` directly."""
    name = own["name"]
    return Slice(
        **own,
        invariants=lambda: modules.invariants.INVARIANTS,
        mutants=lambda: mutants_of(name),
        swarm=modules.machine.swarm,
        machine_rules=modules.machine.rules,
        zoo=modules.scenarios.zoo,
        reachable_keys=modules.coverage.reachable_keys,
    )


__all__ = [
    "CoverageModule",
    "InvariantsModule",
    "MachineModule",
    "ModelSearch",
    "OwnParts",
    "Slice",
    "SliceJudge",
    "SliceModules",
    "ZooModule",
    "slice_of",
]
