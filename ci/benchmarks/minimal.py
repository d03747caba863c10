"""Proven-minimal counterexample lengths (z3 BMC) against Hypothesis-shrunk lengths, per historic bug.

Issue 5: "report the minimal length for each historic bug and compare with the Hypothesis-shrunk
length (target: shrunk <= 1.2 x minimal)". What is compared, honestly: both sides run over the
*same alphabet*, the atomic model actions of model.actions.successors, on the same configuration,
bounds and invariant. BMC (conformance.replication.bmc) gives the proven-minimal number of actions. Hypothesis
drives a RuleBasedStateMachine whose one rule draws action labels from a fixed list (every label a
breadth-first search meets) until one is enabled in the current state, applies it, checks the
invariant after every step, and shrinks the first failing run; the shrunk run's number of actions
is the other figure. (The gate's shrunk lengths in docs/benchmarks.md count implementation
operations, a different alphabet, and are not compared here.)

Run: ``python -m kconform.ci.benchmarks.minimal [--examples 3000] [--bug NAME ...] [--seeds N]``:
derandomized by default (the figures repeat); with ``--seeds N``
Hypothesis seeds 0..N-1, reporting every shrunk length, the median and the max.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
from rich.console import Console
from rich.table import Table

from kconform.conformance.replication.bmc import bmc
from kconform.conformance.replication.explore import canonical
from kconform.model.actions import SearchBounds, booted_state, successors
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.invariants import check_state, check_step
from kconform.model.state import State


@dataclass(frozen=True)
class Bug:
    """A historic bug as a model-level search: the rung, the cluster, the bounds, the invariant."""

    name: str
    protocol: Protocol
    replicas: int
    invariant: str
    bounds: SearchBounds
    max_steps: int


BUGS = (
    Bug("truncate-to-hw (pre-KIP-101)", Protocol.TRUNCATE_TO_HW, 2, "StrongIsr", SearchBounds(), 10),
    Bug("kip-101 divergence (KIP-279)", Protocol.KIP_101, 2, "NoDivergenceBelowHw", SearchBounds(), 12),
)


STEPS = 40
"""Steps per Hypothesis example."""
DRAWS = 50
"""Label draws per step before the step gives up (a no-op): each draw keeps its meaning when
shrinking deletes earlier steps, unlike an index into the current state's enabled list."""


class _Found(Exception):
    pass


def label_universe(cfg: ReplicationConfig, bounds: SearchBounds, max_states: int = 20_000) -> list[str]:
    """Every action label enabled somewhere in the first ``max_states`` states of a breadth-first
    search, sorted: the machine draws labels from this fixed list, so a label means the same action
    wherever it sits in a run and deleting a step does not change what the later steps do (drawing
    from each state's own enabled list does, which defeats shrinking)."""
    start = canonical(booted_state(cfg), cfg)
    seen, frontier, labels = {start}, [start], set()
    while frontier and len(seen) < max_states:
        nxt = []
        for s in frontier:
            for label, post in successors(s, cfg, bounds):
                labels.add(label)
                c = canonical(post, cfg)
                if c not in seen:
                    seen.add(c)
                    nxt.append(c)
        frontier = nxt
    return sorted(labels)


def shrunk_run(bug: Bug, examples: int, seed: int | None = None) -> tuple[str, ...] | None:
    """Hypothesis' shrunk failing run over the model actions (its labels); None if none failed.
    ``seed``: Hypothesis' seed (None: derandomized, the same figures every time)."""
    cfg = ReplicationConfig(replicas=bug.replicas, min_insync_replicas=1, protocol=bug.protocol)
    names = frozenset({bug.invariant})
    universe = label_universe(cfg, bug.bounds)
    last: list[str] = []

    class Actions(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.state: State = canonical(booted_state(cfg), cfg)
            last.clear()

        @rule(data=st.data())
        def act(self, data: st.DataObject) -> None:
            enabled = dict(successors(self.state, cfg, bug.bounds))
            for _ in range(DRAWS):
                label = data.draw(st.sampled_from(universe), label="action")
                if label in enabled:
                    break
            else:
                return  # nothing enabled was drawn: a no-op step, which shrinking deletes
            post = canonical(enabled[label], cfg)
            last.append(label)
            broken = [
                v for v in (*check_step(self.state, post, cfg, names), *check_state(post, cfg, names)) if not v.allowed
            ]
            self.state = post
            if broken:
                raise _Found(broken[0].message)

    machine: type[RuleBasedStateMachine] = Actions if seed is None else hypothesis_seed(seed)(Actions)
    failed = False
    try:
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=examples,
                stateful_step_count=STEPS,
                database=None,
                derandomize=seed is None,  # reproducible figures
                deadline=None,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.generate, Phase.shrink],
                print_blob=False,
            ),
        )
    except _Found:
        failed = True
    return tuple(last) if failed else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=3000, help="Hypothesis examples per bug")
    parser.add_argument("--bug", action="append", default=[], help="only bugs whose name starts with this")
    parser.add_argument(
        "--seeds", type=int, default=0, help="N > 0: Hypothesis seeds 0..N-1 (median and max); 0: derandomized"
    )
    args = parser.parse_args()
    console = Console()
    console.print(f"{platform.machine()}, Python {platform.python_version()}; one process")
    table = Table(title="minimal (z3, proven) vs shrunk (Hypothesis) counterexample lengths, model actions")
    columns = ("bug", "invariant", "BMC minimal", "BMC s", "shrunk", "median", "max", "Hypothesis s", "ratio")
    for col in columns:
        table.add_column(col)
    seeds: list[int | None] = list(range(args.seeds)) if args.seeds > 0 else [None]
    for bug in BUGS:
        if args.bug and not any(bug.name.startswith(b) for b in args.bug):
            continue
        cfg = ReplicationConfig(replicas=bug.replicas, min_insync_replicas=1, protocol=bug.protocol)
        res = bmc(cfg, bug.bounds, [bug.invariant], bug.max_steps)
        minimal = res.found.depth if res.found is not None else None
        lengths: list[int] = []
        tick = time.perf_counter()
        for seed in seeds:
            run = shrunk_run(bug, args.examples, seed)
            if run is not None:
                lengths.append(len(run))
                console.print(f"{bug.name}, seed {seed}: shrunk to {len(run)}: {' -> '.join(run)}")  # progress
        hyp = (time.perf_counter() - tick) / len(seeds)
        median = statistics.median(lengths) if lengths else None
        ratio = f"{median / minimal:.2f} (max {max(lengths) / minimal:.2f})" if median and minimal else "-"
        table.add_row(
            bug.name,
            bug.invariant,
            str(minimal) if minimal is not None else f"none <= {bug.max_steps}",
            f"{res.seconds:.1f}",
            " ".join(map(str, lengths)) or "not found",
            f"{median:g}" if median is not None else "-",
            str(max(lengths)) if lengths else "-",
            f"{hyp:.0f} per seed",
            ratio,
        )
    console.print(table)


if __name__ == "__main__":
    main()
