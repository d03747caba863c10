"""The slices the suite checks, each as the same five parts: judge, machine, zoo, coverage, mutants.

Everything above this module (runner, campaigns, gate, replay) asks the slice of a configuration
for its parts instead of naming replication or transactions. The exactly-once slice's parts are
imported only when a txn configuration is used.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from kconform.model.configs import REPLICATION, TXN, AnyConfig, slice_of
from kconform.model.txn_config import TxnConfig
from kconform.traces.events import Event

if TYPE_CHECKING:
    from hypothesis.stateful import RuleBasedStateMachine

    from kconform.conformance.adapter import Adapter
    from kconform.conformance.lockstep import Finding
    from kconform.conformance.machine import RunLog
    from kconform.conformance.runner import LockstepRun


class SliceJudge(Protocol):
    """What a run needs of a judge: one event in, findings out, and the counters the gate prints."""

    events_judged: int
    checks: Counter[str]
    violations: Counter[str]
    allowed: Counter[str]
    actions: Counter[str]
    covered: Counter[str]

    @property
    def state(self) -> Any: ...

    def observe(self, e: Event) -> list[Finding]: ...


def _txn_module(name: str) -> Any:
    try:
        return importlib.import_module(f"kconform.{name}")
    except ModuleNotFoundError as e:
        raise NotImplementedError(f"the exactly-once slice needs kconform.{name}, which is not built yet") from e


def make_judge(cfg: AnyConfig, checked: frozenset[str] | None = None) -> SliceJudge:
    """A fresh judge for ``cfg``'s slice, checking ``checked`` invariants (None: all)."""
    if isinstance(cfg, TxnConfig):
        judge: SliceJudge = _txn_module("conformance.txn_lockstep").TxnJudge(cfg, checked)
        return judge
    from kconform.conformance.lockstep import Judge

    return Judge(cfg, checked)


def invariant_names(slice_name: str) -> tuple[str, ...]:
    """The named invariants of a slice, in registry order."""
    if slice_name == TXN:
        return tuple(_txn_module("model.txn_invariants").INVARIANTS)
    from kconform.model.invariants import INVARIANTS

    return tuple(INVARIANTS)


def mutants_of_slice(slice_name: str) -> dict[str, str]:
    """The reference implementation's mutants of a slice (name → description)."""
    from kconform.impl import mutants as registry

    by_slice: Callable[[str], dict[str, str]] | None = getattr(registry, "mutants_of", None)
    if by_slice is not None:
        return by_slice(slice_name)
    return dict(registry.MUTANTS) if slice_name == REPLICATION else {}


def make_reference(cfg: AnyConfig) -> Adapter:
    """The bundled reference implementation of ``cfg``'s slice."""
    if isinstance(cfg, TxnConfig):
        adapter: Adapter = _txn_module("impl.txn_cluster").TxnCluster()
        return adapter
    from kconform.impl import ReferenceCluster

    return ReferenceCluster()


def reachable_keys(cfg: AnyConfig) -> frozenset[str]:
    """The handler outcomes the slice's model can produce under ``cfg`` (the coverage denominator)."""
    if isinstance(cfg, TxnConfig):
        keys: frozenset[str] = _txn_module("conformance.txn_coverage").reachable_keys(cfg)
        return keys
    from kconform.conformance.coverage import reachable_keys as replication_keys

    return replication_keys(cfg)


def make_machine(
    adapter_factory: Callable[[], Adapter],
    cfg: AnyConfig,
    mutants: frozenset[str],
    log: RunLog,
    clock: Callable[[], float],
    adapter_timeout_s: float,
) -> type[RuleBasedStateMachine]:
    """The Hypothesis state machine of ``cfg``'s slice, driving a fresh adapter per example."""
    if isinstance(cfg, TxnConfig):
        machine: type[RuleBasedStateMachine] = _txn_module("conformance.txn_machine").make_txn_machine(
            adapter_factory, cfg, mutants, log, clock, adapter_timeout_s
        )
        return machine
    from kconform.conformance.machine import make_machine as replication_machine

    return replication_machine(adapter_factory, cfg, mutants, log, clock, adapter_timeout_s)


def first_failing_scenario(
    adapter_factory: Callable[[], Adapter], cfg: AnyConfig, mutants: frozenset[str]
) -> LockstepRun | None:
    """The first scenario of the slice's known-bug zoo that fails under ``mutants``, or None."""
    if isinstance(cfg, TxnConfig):
        try:
            zoo = importlib.import_module("kconform.conformance.txn_scenarios")
        except ModuleNotFoundError:
            return None
        run: LockstepRun | None = zoo.first_failing_scenario(adapter_factory, cfg, mutants)
        return run
    from kconform.conformance.scenarios import first_failing_scenario as replication_zoo

    return replication_zoo(adapter_factory, cfg, mutants)


__all__ = ["REPLICATION", "TXN", "SliceJudge", "make_judge", "slice_of"]
