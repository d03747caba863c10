"""The slices the suite checks, each as the same five parts: judge, machine, zoo, coverage, mutants.

Everything above this module (runner, campaigns, gate, replay) asks the slice of a configuration
for its parts instead of naming replication or transactions. Each slice's modules are imported
only when a configuration of that slice is used.
"""

from __future__ import annotations

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


def make_judge(cfg: AnyConfig, checked: frozenset[str] | None = None) -> SliceJudge:
    """A fresh judge for ``cfg``'s slice, checking ``checked`` invariants (None: all)."""
    if isinstance(cfg, TxnConfig):
        from kconform.conformance.txn_lockstep import TxnJudge

        return TxnJudge(cfg, checked)
    from kconform.conformance.lockstep import Judge

    return Judge(cfg, checked)


def invariant_names(slice_name: str) -> tuple[str, ...]:
    """The named invariants of a slice, in registry order."""
    if slice_name == TXN:
        from kconform.model.txn_invariants import INVARIANTS as TXN_INVARIANTS

        return tuple(TXN_INVARIANTS)
    from kconform.model.invariants import INVARIANTS

    return tuple(INVARIANTS)


def mutants_of_slice(slice_name: str) -> dict[str, str]:
    """The reference implementation's mutants of a slice (name → description)."""
    from kconform.impl.mutants import mutants_of

    return mutants_of(slice_name)


def make_reference(cfg: AnyConfig) -> Adapter:
    """The bundled reference implementation of ``cfg``'s slice."""
    if isinstance(cfg, TxnConfig):
        from kconform.impl.txn_cluster import TxnCluster

        return TxnCluster()
    from kconform.impl import ReferenceCluster

    return ReferenceCluster()


def reachable_keys(cfg: AnyConfig) -> frozenset[str]:
    """The handler outcomes the slice's model can produce under ``cfg`` (the coverage denominator)."""
    if isinstance(cfg, TxnConfig):
        from kconform.conformance.txn_coverage import reachable_keys as txn_keys

        return txn_keys(cfg)
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
        from kconform.conformance.txn_machine import make_txn_machine

        return make_txn_machine(adapter_factory, cfg, mutants, log, clock, adapter_timeout_s)
    from kconform.conformance.machine import make_machine as replication_machine

    return replication_machine(adapter_factory, cfg, mutants, log, clock, adapter_timeout_s)


def first_failing_scenario(
    adapter_factory: Callable[[], Adapter], cfg: AnyConfig, mutants: frozenset[str]
) -> LockstepRun | None:
    """The first scenario of the slice's known-bug zoo that fails under ``mutants``, or None."""
    if isinstance(cfg, TxnConfig):
        from kconform.conformance.txn_scenarios import first_failing_scenario as txn_zoo

        return txn_zoo(adapter_factory, cfg, mutants)
    from kconform.conformance.scenarios import first_failing_scenario as replication_zoo

    return replication_zoo(adapter_factory, cfg, mutants)


__all__ = ["REPLICATION", "TXN", "SliceJudge", "make_judge", "slice_of"]
