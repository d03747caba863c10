"""Breadth-first exploration of the model's state space (a small explicit-state model checker).

Starting from the booted cluster (model.actions.booted_state) every interleaving of the atomic
actions in model.actions is explored level by level, like TLC's breadth-first search over
hachikuji/kafka-specification. Every new state is checked against the state invariants and every
edge against the step invariants (model.invariants); only violations the configuration does not
permit count. Breadth-first order makes the first violation's path a shortest one.

States are canonical (``canonical``): absolute time is replaced by ages, so two states that differ
only in when things happened, not in what any handler can observe, are one node.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import networkx as nx

from kconform.model.actions import SearchBounds, booted_state, successors
from kconform.model.config import ConfigError, ReplicationConfig
from kconform.model.invariants import Violation, check_state, check_step
from kconform.model.state import DelayedProduce, RemoteReplica, Replica, State


def canonical(s: State, cfg: ReplicationConfig) -> State:
    """``s`` with the clock at 0: every timestamp becomes minus its age, ages capped at
    replica.lag.time.max.ms + 1; every produce deadline becomes its remaining time, floored at 0;
    acknowledgements are sorted; a follower the leader never saw fetch (``last_fetch_leader_leo``
    -1, e.g. after a crash or on becoming leader) has ``last_fetch_ms`` at its default 0.

    This is exact (a bisimulation): the handlers only compare ``now - t`` with the lag time or
    ``now`` with a deadline, take maxima of timestamps, and time never goes back, so an age past
    the lag time stays past it and an expired deadline stays expired; ``last_fetch_ms`` is read
    only once a fetch has set it together with ``last_fetch_leader_leo``.
    """
    now = s.now_ms
    ghost = s.ghost
    acked = ghost.acked
    if len(acked) > 1:
        ordered = tuple(sorted(acked, key=lambda a: (a.rid, a.offset, a.epoch, a.acks, a.guaranteed)))
        if ordered != acked:
            ghost = replace(ghost, acked=ordered)
    if now == 0:
        return s if ghost is s.ghost else replace(s, ghost=ghost)
    floor = -(cfg.replica_lag_time_max_ms + 1)

    def ts(t: int) -> int:
        return max(t - now, floor)

    def remote(rem: RemoteReplica) -> RemoteReplica:
        caught = rem.last_caught_up_ms
        return RemoteReplica(
            leo=rem.leo,
            last_caught_up_ms=None if caught is None else ts(caught),
            last_fetch_leader_leo=rem.last_fetch_leader_leo,
            last_fetch_ms=ts(rem.last_fetch_ms) if rem.last_fetch_leader_leo >= 0 else 0,
            broker_epoch=rem.broker_epoch,
        )

    def delayed(dp: DelayedProduce) -> DelayedProduce:
        return DelayedProduce(dp.req, dp.rid, dp.offset, max(dp.deadline_ms - now, 0))

    def replica(r: Replica) -> Replica:
        return replace(
            r,
            remotes=tuple(remote(rem) for rem in r.remotes),
            purgatory=tuple(delayed(dp) for dp in r.produces),
        )

    return replace(s, replicas=tuple(replica(r) for r in s.replicas), now_ms=0, ghost=ghost)


@dataclass(frozen=True)
class Found:
    """The first violation: which invariant, its message, its depth and a shortest path to it."""

    invariant: str
    message: str
    depth: int
    path: tuple[str, ...]
    """Action labels from the booted state; ``len(path) == depth``."""
    state: State
    """The violating state (for a step invariant, the state after the violating step)."""


@dataclass
class ExploreResult:
    """What one exploration saw."""

    states_per_depth: list[int]
    """Distinct states first reached at each depth (the last level is partial when the search
    stopped inside it: at the first violation or at ``max_states``)."""
    distinct_states: int
    max_depth: int
    exhausted: bool
    """True when every reachable state within the bounds was explored (no depth/state cut-off)."""
    seconds: float
    violation: Found | None = None
    edges: int = 0
    graph: nx.DiGraph[State] | None = field(default=None, repr=False)
    """The explored graph when kept: nodes are canonical states (attribute ``depth``), edges carry
    one action ``label`` (when two actions lead to the same state, the last one explored)."""

    @property
    def found(self) -> bool:
        return self.violation is not None

    def summary(self) -> str:
        head = (
            f"{self.distinct_states} distinct states, {self.edges} edges, depth {self.max_depth}, "
            f"{'exhausted' if self.exhausted else 'not exhausted'}, {self.seconds:.2f} s"
        )
        v = self.violation
        if v is None:
            return f"no violation; {head}"
        return f"{v.invariant} at depth {v.depth}: {v.message}; {head}\n  path: {' -> '.join(v.path)}"


Progress = Callable[[int, int, int], None]
"""Called after each level: (depth, states first seen at that depth, distinct states so far)."""


def _failing(found: list[Violation]) -> Violation | None:
    return next((v for v in found if not v.allowed), None)


def refuse_delayed_fetch(cfg: ReplicationConfig) -> None:
    """The model searches' Fetch round trips are atomic: they do not model delayed fetches."""
    if cfg.delayed_fetch:
        raise ConfigError(
            "the model searches (explore, bmc) do not model delayed fetches: set replica_fetch_wait_max_ms "
            "and fetch_max_wait_ms to 0 (the lockstep gate checks the purgatory)"
        )


def explore(
    cfg: ReplicationConfig,
    bounds: SearchBounds,
    invariants: frozenset[str] | None = None,
    max_depth: int = 50,
    max_states: int = 1_000_000,
    stop_at_first: bool = True,
    progress: Progress | None = None,
    keep_graph: bool = False,
) -> ExploreResult:
    """Explore breadth-first from the booted cluster, at most ``max_depth`` steps deep and until
    ``max_states`` distinct states are known.

    ``invariants``: the names to check (None: all). With ``stop_at_first`` the search ends at the
    first violation, which is at minimal depth and comes with a shortest path; otherwise the first
    one is recorded and the search goes on. ``keep_graph`` keeps the explored networkx graph
    (memory grows with the edges).
    """
    refuse_delayed_fetch(cfg)
    # States are acyclic immutable values: the cyclic collector only costs time here.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _explore(cfg, bounds, invariants, max_depth, max_states, stop_at_first, progress, keep_graph)
    finally:
        if was_enabled:
            gc.enable()


def _explore(
    cfg: ReplicationConfig,
    bounds: SearchBounds,
    invariants: frozenset[str] | None,
    max_depth: int,
    max_states: int,
    stop_at_first: bool,
    progress: Progress | None,
    keep_graph: bool,
) -> ExploreResult:
    start = time.perf_counter()
    init = canonical(booted_state(cfg), cfg)
    parent: dict[State, tuple[State, str] | None] = {init: None}
    graph: nx.DiGraph[State] | None = nx.DiGraph() if keep_graph else None
    if graph is not None:
        graph.add_node(init, depth=0)
    per_depth = [1]
    edges = 0
    found: Found | None = None

    def path_to(s: State) -> tuple[str, ...]:
        labels: list[str] = []
        link = parent[s]
        while link is not None:
            prev, label = link
            labels.append(label)
            link = parent[prev]
        return tuple(reversed(labels))

    v = _failing(check_state(init, cfg, invariants))
    if v is not None:
        found = Found(v.invariant, v.message, 0, (), init)
    frontier = [init]
    depth = 0
    cut = False
    stopped = found is not None and stop_at_first
    while frontier and not stopped and not cut:
        if depth >= max_depth:
            cut = True
            break
        nxt: list[State] = []
        for pre in frontier:
            for label, raw in successors(pre, cfg, bounds):
                post = canonical(raw, cfg)
                if post == pre:
                    continue
                edges += 1
                known = len(parent)
                parent.setdefault(post, (pre, label))  # one hash per edge
                new = len(parent) > known
                if new:
                    nxt.append(post)
                if graph is not None:
                    if new:
                        graph.add_node(post, depth=depth + 1)
                    graph.add_edge(pre, post, label=label)
                if found is None:
                    v = _failing(check_step(pre, post, cfg, invariants))
                    if v is not None:
                        found = Found(v.invariant, v.message, depth + 1, (*path_to(pre), label), post)
                    elif new:
                        v = _failing(check_state(post, cfg, invariants))
                        if v is not None:
                            found = Found(v.invariant, v.message, depth + 1, path_to(post), post)
                    stopped = found is not None and stop_at_first
                if stopped or len(parent) >= max_states:
                    break
            if stopped or len(parent) >= max_states:
                cut = cut or not stopped
                break
        depth += 1
        per_depth.append(len(nxt))
        frontier = nxt
        if progress is not None:
            progress(depth, len(nxt), len(parent))
    while len(per_depth) > 1 and per_depth[-1] == 0:
        per_depth.pop()
    return ExploreResult(
        states_per_depth=per_depth,
        distinct_states=len(parent),
        max_depth=len(per_depth) - 1,
        exhausted=not cut and not stopped and not frontier,
        seconds=time.perf_counter() - start,
        violation=found,
        edges=edges,
        graph=graph,
    )


def replay(cfg: ReplicationConfig, bounds: SearchBounds, path: tuple[str, ...] | list[str]) -> list[State]:
    """The canonical states along ``path`` (action labels from the booted state), first the booted
    state; a label not enabled where it stands raises ValueError."""
    states = [canonical(booted_state(cfg), cfg)]
    for i, label in enumerate(path):
        here = states[-1]
        post = next((p for lab, p in successors(here, cfg, bounds) if lab == label), None)
        if post is None:
            enabled = ", ".join(lab for lab, _ in successors(here, cfg, bounds))
            raise ValueError(f"step {i + 1}: {label} is not enabled (enabled: {enabled})")
        states.append(canonical(post, cfg))
    return states
