"""The known-bug zoo's shared runner: fixed operation sequences, run as ordinary lockstep runs.

Each slice has a zoo (conformance/replication/scenarios.py, conformance/txn/scenarios.py):
operation sequences that steer a cluster into historically dangerous interleavings, each named
after the bug it is about (CCF-style scenario files; prior-art §7). Random search reaches most
bugs within seconds; some need a long, precise shape. The gate runs a slice's zoo before its
random campaign (Slice.zoo), judged by the same model: a scenario encodes a
situation, never an expected verdict, so it passes on a correct implementation and fails on a
buggy one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar, runtime_checkable

from kconform.conformance.adapter import Adapter
from kconform.conformance.runner import LockstepRun
from kconform.model.configs import AnyConfig
from kconform.traces import operations as o


class HasOps(Protocol):
    """Any slice's scenario: what the run needs of it is its operations."""

    @property
    def ops(self) -> tuple[o.Operation, ...]: ...


@runtime_checkable
class Configures(Protocol):
    """A scenario that runs on a configuration of its own derived from the gate's (the replication
    zoo's scenarios pinned to an older protocol rung): its run, and so its counterexample file,
    carries that configuration."""

    def configure(self, cfg: Any) -> Any: ...


def scenario_config(scenario: HasOps, cfg: AnyConfig) -> AnyConfig:
    """The configuration ``scenario`` runs on when the gate runs ``cfg``."""
    return scenario.configure(cfg) if isinstance(scenario, Configures) else cfg


def run_scenario(
    adapter: Adapter, scenario: HasOps, cfg: AnyConfig, mutants: frozenset[str], seed: int = 0
) -> LockstepRun:
    """One lockstep run of ``scenario`` (of any slice) on ``scenario_config(scenario, cfg)``; it
    stops at the first failing finding."""
    run = LockstepRun(adapter, scenario_config(scenario, cfg), seed, mutants)
    run.boot()
    for op in scenario.ops:
        if run.failed:
            break
        run.apply(op)
    return run


def first_failing_run(
    adapter_factory: Callable[[], Adapter], cfg: AnyConfig, mutants: frozenset[str], scenarios: Iterable[HasOps]
) -> LockstepRun | None:
    """Run ``scenarios`` in order, each on a fresh adapter; the first failing run, or None."""
    for scenario in scenarios:
        adapter = adapter_factory()
        try:
            run = run_scenario(adapter, scenario, cfg, mutants)
        finally:
            adapter.close()
        if run.failed:
            return run
    return None


S = TypeVar("S")


def declare(kind: Callable[..., S], name: str, **fields: Any) -> Callable[[Callable[[], Iterable[o.Operation]]], S]:
    """A decorator that makes a zoo scenario of a slice's scenario type ``kind`` from a function:
    ``name``, the function's docstring (its words on one line) as the ``doc`` naming the bug, what
    the function returns as the ``ops``, and the slice's own ``fields`` (the replicas a scenario
    needs, the mutants it exposes). The name it is bound to is the scenario, not the function."""

    def make(build: Callable[[], Iterable[o.Operation]]) -> S:
        if not build.__doc__:
            raise ValueError(f"scenario {name!r} has no docstring naming its bug")
        return kind(name=name, doc=" ".join(build.__doc__.split()), ops=tuple(build()), **fields)

    return make


__all__ = ["Configures", "HasOps", "declare", "first_failing_run", "run_scenario", "scenario_config"]
