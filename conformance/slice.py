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
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from kconform.traces.events import Event

if TYPE_CHECKING:
    from kconform.conformance.adapter import Adapter
    from kconform.conformance.judge import Finding
    from kconform.conformance.machine import MachineRules, Swarm
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


__all__ = ["ModelSearch", "Slice", "SliceJudge"]
