"""Bounded model checking of the model with z3: proven-shortest counterexamples and induction.

Issue 5. Over the SMT encoding of conformance.replication.bmc_encoding (the atomic actions of model.actions,
same labels), ``bmc`` unrolls the transition relation from the booted cluster one step at a time
(each length decided by its own solver behind z3's bit-vector preprocessing, or incrementally:
``SOLVING``) and asks z3 for a state (or step) that breaks one of the named
invariants. What it guarantees:

- a run it returns has the minimal number of actions of any violating run within the bounds: every
  shorter length was proven UNSAT first (so it equals the depth breadth-first search finds);
- the run is re-executed on the executable model (conformance.replication.explore.replay) and the violation
  re-checked there by model.invariants before it is returned, so it is a ``Found`` that
  conformance.replication.pathevents turns into the suite's ordinary counterexample file; a disagreement
  raises EncodingDisagreement (a bug in kconform, never a verdict);
- "none up to K" means no run of at most K actions violates the invariants (a proof for the
  bounded system, not a sample).

``inductive`` checks whether an invariant (conjoined with named strengthenings) is preserved by
every action from *any* well-formed bounded state, not only reachable ones, and shows a
counterexample to induction when it is not. ``disagreements`` is the cross-check of the encoding
against the executable model used by tests/test_bmc_agreement.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import z3  # type: ignore[import-untyped]

from kconform.conformance.replication import bmc_encoding as enc
from kconform.conformance.replication.explore import Found, canonical, refuse_delayed_fetch, replay
from kconform.model.actions import SearchBounds, booted_state, successors
from kconform.model.config import ReplicationConfig
from kconform.model.invariants import INVARIANTS, Violation, check_state, check_step
from kconform.model.state import State

Term = enc.Term


class EncodingDisagreement(AssertionError):
    """The SMT encoding and the executable model disagree (a bug in kconform, never a verdict)."""


def _value(model: z3.ModelRef, x: Term) -> enc.Value:
    v = model.eval(x, model_completion=True)
    return bool(z3.is_true(v)) if z3.is_bool(x) else int(v.as_signed_long())


def _index(model: z3.ModelRef, act: Term) -> int:
    return int(model.eval(act, model_completion=True).as_long())


def decode(model: z3.ModelRef, t: Mapping[str, Term]) -> enc.Vector:
    """The concrete vector a z3 model gives the state variables ``t``."""
    return {name: _value(model, x) for name, x in t.items()}


# ---------------------------------------------------------------------------------------------
# Bounded model checking


@dataclass
class BmcResult:
    """One bounded model checking run: per-k solve times, and the shortest violation if any."""

    invariants: tuple[str, ...]
    max_steps: int
    solve_seconds: list[float] = field(default_factory=list)
    """Seconds z3 took to decide length k, for k = 0, 1, ... (the last one is the violation's)."""
    found: Found | None = None
    seconds: float = 0.0
    """Wall time of the whole run, encoding included."""

    @property
    def checked_steps(self) -> int:
        """The largest length decided (UNSAT up to it when nothing was found)."""
        return len(self.solve_seconds) - 1


StepReport = Callable[[int, bool, float], None]
"""Called after each length k is decided: (k, violation found, seconds)."""


def _names(invariants: Iterable[str] | None) -> tuple[str, ...]:
    names = tuple(INVARIANTS) if invariants is None else tuple(dict.fromkeys(invariants))
    unknown = [n for n in names if n not in INVARIANTS]
    if unknown:
        raise ValueError(f"unknown invariant(s) {unknown}")
    return names


def partition_slots(bounds: SearchBounds, steps: int) -> int:
    """Published-record slots a run of ``steps`` actions needs: the boot publishes partition
    epoch 0 and each action publishes at most one record."""
    top = steps if bounds.max_partition_epoch is None else min(steps, bounds.max_partition_epoch)
    return top + 1


SOLVING = ("fresh", "incremental")
"""How ``bmc`` solves each length: ``fresh`` (default) gives each length its own solver behind
z3's full bit-vector preprocessing (FRESH_TACTIC); ``incremental`` keeps one solver for all lengths
(the prefix stays asserted, each length's goal under a fresh assumption literal), which keeps
learned clauses but runs without most preprocessing. ci/benchmarks/bmc_solving.py measures both."""

FRESH_TACTIC = ("simplify", "propagate-values", "solve-eqs", "elim-uncnstr", "simplify", "bit-blast", "aig", "sat")
"""The tactic of a fresh per-length solver: word-level simplification and elimination of the
variables the transition defines, bit-blasting, and-inverter-graph compression, then SAT."""


def bmc(
    cfg: ReplicationConfig,
    bounds: SearchBounds,
    invariants: Iterable[str] | None = None,
    max_steps: int = 12,
    report: StepReport | None = None,
    solving: str = "fresh",
    reduce: bool = True,
) -> BmcResult:
    """Search runs of 0, 1, ..., ``max_steps`` actions from the booted cluster for a violation of
    any of ``invariants`` (None: all), stopping at the first length that has one. ``solving``:
    one of SOLVING; ``reduce``: search only runs in which no two adjacent independent steps are
    out of label order (bmc_encoding.out_of_order). Neither changes the verdicts, only the time.

    Why the reduction keeps a shortest violating run: let k be the minimal violating length and
    take, among the violating runs of length k, the one whose sequence of label indices is
    lexicographically least. If two adjacent steps of it were out of order and independent, they
    commute (commute_lemma): swapping them gives a run of length k through the same states except
    the one between them, so it ends in the same violating state, and it is lexicographically
    smaller - a contradiction. With a step invariant the last step's pre-state matters, so the
    last pair of steps is left unconstrained then. Shorter lengths only lose runs, so stay UNSAT."""
    refuse_delayed_fetch(cfg)
    enc.check_supported(cfg, bounds)
    if solving not in SOLVING:
        raise ValueError(f"unknown solving mode {solving!r}: one of {SOLVING}")
    names = _names(invariants)
    start = time.perf_counter()
    d = enc.dims_for(bounds, cfg, partition_slots(bounds, max_steps))
    labels = [a.label for a in enc.alphabet(d)]
    init = canonical(booted_state(cfg), cfg)
    states = [enc.variables(d, "s0")]
    acts: list[Term] = []
    steps: list[Term] = []
    in_order: list[Term] = []
    """in_order[j - 2]: steps j - 1 and j are not out of order (j >= 2)."""
    lag = 1 if any(n in enc.STEP_INVARIANTS for n in names) else 0
    booted = enc.equal(states[0], enc.constants(enc.project(init, cfg, d)))
    solver = z3.SolverFor("QF_BV")
    solver.add(booted)
    added = 0  # order constraints the incremental solver holds
    result = BmcResult(names, max_steps)
    for k in range(max_steps + 1):
        if k > 0:
            states.append(enc.variables(d, f"s{k}"))
            acts.append(enc.action_variable(f"act{k}"))
            # Step k starts in a state of partition epoch <= k - 1 (the boot publishes 0, an action
            # at most one record): a hint that keeps the early steps' formulas small.
            steps.append(enc.transition(cfg, d, states[k - 1], states[k], acts[-1], pe_hint=k - 1))
        if reduce and k >= 2:
            in_order.append(z3.Not(enc.out_of_order(d, states[k - 2], acts[k - 2], states[k - 1], acts[k - 1])))
        ordered = in_order[: max(0, len(in_order) - lag)]
        bad = [z3.Not(enc.state_invariant(n, d, states[k])) for n in names if n in enc.STATE_INVARIANTS]
        if k > 0:
            bad += [
                z3.Not(enc.step_invariant(n, d, states[k - 1], states[k])) for n in names if n in enc.STEP_INVARIANTS
            ]
        violation = z3.Or(bad) if bad else z3.BoolVal(False)
        tick = time.perf_counter()
        if solving == "fresh":
            solver = z3.Then(*FRESH_TACTIC).solver()
            solver.add(booted, *steps, *ordered, violation)
            verdict = solver.check()
        else:
            # The prefix stays asserted; this length's goal is guarded by a fresh literal and
            # checked under it (z3 keeps its incremental SAT solver and learned clauses, which
            # push/pop on bit-vectors would give up for a slower general solver).
            if k > 0:
                solver.add(steps[-1])
            if len(ordered) > added:
                solver.add(*ordered[added:])
                added = len(ordered)
            goal = z3.Bool(f"violation@{k}")
            solver.add(z3.Implies(goal, violation))
            verdict = solver.check(goal)
        model = solver.model() if verdict == z3.sat else None
        seconds = time.perf_counter() - tick
        if verdict == z3.unknown:
            raise RuntimeError(f"z3 could not decide length {k}: {solver.reason_unknown()}")
        result.solve_seconds.append(seconds)
        if report is not None:
            report(k, model is not None, seconds)
        if model is not None:
            path = tuple(labels[_index(model, a)] for a in acts)
            result.found = _confirm(cfg, bounds, names, path)
            break
    result.seconds = time.perf_counter() - start
    return result


def _confirm(cfg: ReplicationConfig, bounds: SearchBounds, names: tuple[str, ...], path: tuple[str, ...]) -> Found:
    """Re-run ``path`` on the executable model and find the violation there."""
    try:
        states = replay(cfg, bounds, path)
    except ValueError as e:
        raise EncodingDisagreement(f"z3's run {' -> '.join(path)} is not a run of the model: {e}") from None
    wanted = frozenset(names)
    found: list[Violation] = list(check_state(states[-1], cfg, wanted))
    if len(states) > 1:
        found = [*check_step(states[-2], states[-1], cfg, wanted), *found]
    failing = next((v for v in found if not v.allowed), None)
    if failing is None:
        raise EncodingDisagreement(f"z3's run {' -> '.join(path)} violates none of {sorted(names)} on the model")
    return Found(failing.invariant, failing.message, len(path), path, states[-1])


# ---------------------------------------------------------------------------------------------
# Agreement with the executable model


def disagreements(
    cfg: ReplicationConfig, bounds: SearchBounds, states: Sequence[State], limit: int = 5
) -> tuple[list[str], dict[str, int]]:
    """Where the encoding and model.actions disagree on ``states`` (search states), and how many
    times each action kind was enabled (evidence the check was not vacuous).

    For each state, two z3 queries decide agreement on every label at once: (1) every label
    successors() offers is enabled in the encoding; (2) every encoded step is a label successors()
    offers and leads to the projection of its state. The invariant formulas are also compared
    with model.invariants on each state and each step. A disagreement is diagnosed label by label.
    """
    enc.check_supported(cfg, bounds)
    slots = max(s.controller.partition_epoch for s in states) + 3
    d = enc.dims_for(bounds, cfg, slots)
    pre, post = enc.variables(d, "pre"), enc.variables(d, "post")
    act = enc.action_variable("act")
    steps = enc.encode_actions(cfg, d, pre, act)
    index = {label: i for i, (label, _en, _nxt) in enumerate(steps)}
    solver = z3.SolverFor("QF_BV")
    solver.add(enc.transition(cfg, d, pre, post, act, steps))
    pre_packed, post_packed = enc.packed(pre), enc.packed(post)
    state_inv = {n: z3.Bool(f"holds.{n}") for n in enc.STATE_INVARIANTS}
    step_inv = {n: z3.Bool(f"holds.{n}") for n in enc.STEP_INVARIANTS}
    solver.add(*(state_inv[n] == enc.state_invariant(n, d, pre) for n in state_inv))
    solver.add(*(step_inv[n] == enc.step_invariant(n, d, pre, post) for n in step_inv))
    problems: list[str] = []
    kinds: dict[str, int] = {}
    for s in states:
        v = enc.project(s, cfg, d)
        model_steps = {label: canonical(nxt, cfg) for label, nxt in successors(s, cfg, bounds)}
        expected = {label: enc.project(nxt, cfg, d) for label, nxt in model_steps.items()}
        unknown = set(expected) - set(index)
        if unknown:
            problems.append(f"labels {sorted(unknown)} are not in the encoded alphabet")
            continue
        for label in expected:
            kind = label.split("(")[0] + ("!" if "NOT_ENOUGH" in label else "")
            kinds[kind] = kinds.get(kind, 0) + 1
        holds = z3.And([x == _holds(n, cfg, s, None) for n, x in state_inv.items()])
        enabled = z3.And([steps[index[label]][1] for label in expected])
        agreeing = z3.Or(
            [
                z3.And(
                    act == index[label],
                    post_packed == enc.packed_value(d, x),
                    *(y == _holds(n, cfg, s, model_steps[label]) for n, y in step_inv.items()),
                )
                for label, x in expected.items()
            ]
        )
        solver.push()
        solver.add(pre_packed == enc.packed_value(d, v))
        # (1) the state invariants agree and every label the model offers is enabled in the
        # encoding; (2) every encoded step is one the model takes, to the same state, with the
        # same step-invariant verdicts.
        if solver.check(z3.Not(z3.And(holds, enabled))) != z3.unsat or solver.check(z3.Not(agreeing)) != z3.unsat:
            problems += _diagnose(solver, steps, expected, post, act, s)
            problems += [
                f"invariant {n} disagrees in {s}" for n, x in state_inv.items() if _disagrees(solver, x, n, cfg, s)
            ]
        solver.pop()
        if len(problems) >= limit:
            break
    return problems, kinds


def _holds(name: str, cfg: ReplicationConfig, pre: State, post: State | None) -> bool:
    """model.invariants' verdict: no failing violation of ``name`` in the state or step."""
    names = frozenset({name})
    found = check_state(pre, cfg, names) if post is None else check_step(pre, post, cfg, names)
    return not [v for v in found if not v.allowed]


def _disagrees(solver: z3.Solver, holds: Term, name: str, cfg: ReplicationConfig, s: State) -> bool:
    return bool(solver.check(holds != _holds(name, cfg, s, None)) == z3.sat)


def _diagnose(
    solver: z3.Solver,
    steps: enc.Steps,
    expected: Mapping[str, enc.Vector],
    post: Mapping[str, Term],
    act: Term,
    s: State,
) -> list[str]:
    out = []
    for i, (label, _en, _nxt) in enumerate(steps):
        sat = solver.check(act == i) == z3.sat
        if sat != (label in expected):
            out.append(f"{label}: enabled {sat} in the encoding, {label in expected} in the model, in {s}")
        elif sat:
            got = decode(solver.model(), post)
            diff = {k: (got[k], expected[label][k]) for k in got if got[k] != expected[label][k]}
            if diff:
                out.append(f"{label}: successor differs (encoding, model) {diff} from {s}")
    return out or [f"the encoding disagrees with the model in {s}"]


# ---------------------------------------------------------------------------------------------
# Induction


@dataclass(frozen=True)
class InductionResult:
    """Whether ``invariant`` ∧ ``strengthening`` is inductive for one step of every action."""

    invariant: str
    strengthening: tuple[str, ...]
    inductive: bool
    initial: bool
    """The booted state satisfies the conjunction (with ``inductive``: an invariant of the system)."""
    seconds: float
    cti_label: str = ""
    """A counterexample to induction: the action and the two states, when not inductive."""
    cti_pre: enc.Vector | None = None
    cti_post: enc.Vector | None = None
    broken: tuple[str, ...] = ()
    """The conjuncts the counterexample's successor breaks."""


def inductive(
    cfg: ReplicationConfig, bounds: SearchBounds, invariant: str, strengthening: Sequence[str] = (), slots: int = 4
) -> InductionResult:
    """Is invariant ∧ strengthening preserved by one step from every well-formed bounded state
    (conformance.replication.bmc_encoding.well_formed, partition epochs < ``slots``) that satisfies it?

    The bounded system is the model with ``max_partition_epoch`` = ``slots`` - 1 (and the bounds'
    records and leader epochs), so "inductive" is a proof for every state of that bounded system,
    reachable or not. A step invariant is its own obligation over the step (nothing assumed of
    it before). Also checks the booted state satisfies the state conjuncts.
    """
    enc.check_supported(cfg, bounds)
    start = time.perf_counter()
    cap = slots - 1 if bounds.max_partition_epoch is None else min(slots - 1, bounds.max_partition_epoch)
    d = enc.Dims(cfg.replicas, bounds.max_records, bounds.max_leader_epoch, slots, cap)
    conj = _names([invariant, *strengthening])
    pre, post = enc.variables(d, "pre"), enc.variables(d, "post")
    act = enc.action_variable("act")
    solver = z3.SolverFor("QF_BV")
    solver.add(enc.well_formed(cfg, d, pre), enc.transition(cfg, d, pre, post, act))
    state_names = [n for n in conj if n in enc.STATE_INVARIANTS]
    for n in state_names:
        solver.add(enc.state_invariant(n, d, pre))
    kept = {n: enc.state_invariant(n, d, post) for n in state_names}
    kept |= {n: enc.step_invariant(n, d, pre, post) for n in conj if n in enc.STEP_INVARIANTS}
    verdict = solver.check(z3.Not(z3.And(list(kept.values()))))
    if verdict == z3.unknown:
        raise RuntimeError(f"z3 could not decide induction of {invariant}: {solver.reason_unknown()}")
    init_state = canonical(booted_state(cfg), cfg)
    initial = not [v for v in check_state(init_state, cfg, frozenset(state_names)) if not v.allowed]
    if verdict == z3.unsat:
        return InductionResult(invariant, tuple(strengthening), True, initial, time.perf_counter() - start)
    model = solver.model()
    labels = [a.label for a in enc.alphabet(d)]
    broken = tuple(n for n, f in kept.items() if not z3.is_true(model.eval(f, model_completion=True)))
    return InductionResult(
        invariant,
        tuple(strengthening),
        False,
        initial,
        time.perf_counter() - start,
        cti_label=labels[_index(model, act)],
        cti_pre=decode(model, pre),
        cti_post=decode(model, post),
        broken=broken,
    )


def commute_lemma(cfg: ReplicationConfig, bounds: SearchBounds, slots: int = 4) -> str | None:
    """None when every two adjacent steps that bmc_encoding.out_of_order calls out of order commute,
    from every well-formed bounded state (partition epochs < ``slots``): the swapped steps are
    enabled and reach the same state. Else the two labels of a pair that does not. This is the
    fact the reduction of ``bmc`` rests on, proven for all label pairs at once."""
    cap = slots - 1 if bounds.max_partition_epoch is None else min(slots - 1, bounds.max_partition_epoch)
    d = enc.Dims(cfg.replicas, bounds.max_records, bounds.max_leader_epoch, slots, cap)
    s0, s1, s2 = enc.variables(d, "s0"), enc.variables(d, "s1"), enc.variables(d, "s2")
    t1, t2 = enc.variables(d, "t1"), enc.variables(d, "t2")
    a1, a2 = enc.action_variable("a1"), enc.action_variable("a2")
    solver = z3.SolverFor("QF_BV")
    solver.add(enc.well_formed(cfg, d, s0))
    solver.add(enc.transition(cfg, d, s0, s1, a1), enc.transition(cfg, d, s1, s2, a2))
    solver.add(enc.out_of_order(d, s0, a1, s1, a2))
    # The swapped order: a2 from s0 to t1, then a1 from t1 to t2; enabled, and t2 is s2.
    swapped_steps = enc.encode_actions(cfg, d, s0, a2)
    solver.add(enc.transition(cfg, d, s0, t1, a2, swapped_steps, enabling=False))
    later_steps = enc.encode_actions(cfg, d, t1, a1)
    solver.add(enc.transition(cfg, d, t1, t2, a1, later_steps, enabling=False))
    enabled = z3.And(
        z3.Or([z3.And(a2 == i, en) for i, (_l, en, _n) in enumerate(swapped_steps)]),
        z3.Or([z3.And(a1 == i, en) for i, (_l, en, _n) in enumerate(later_steps)]),
    )
    verdict = solver.check(z3.Not(z3.And(enabled, enc.equal(t2, s2))))
    if verdict == z3.unsat:
        return None
    if verdict == z3.unknown:
        raise RuntimeError(f"z3 could not decide the commutation lemma: {solver.reason_unknown()}")
    labels = [a.label for a in enc.alphabet(d)]
    model = solver.model()
    return f"{labels[_index(model, a1)]} then {labels[_index(model, a2)]}"


def well_formed_is_inductive(cfg: ReplicationConfig, bounds: SearchBounds, slots: int = 4) -> str | None:
    """None when every action keeps conformance.replication.bmc_encoding.well_formed; else the action breaking it."""
    cap = slots - 1 if bounds.max_partition_epoch is None else min(slots - 1, bounds.max_partition_epoch)
    d = enc.Dims(cfg.replicas, bounds.max_records, bounds.max_leader_epoch, slots, cap)
    pre, post = enc.variables(d, "pre"), enc.variables(d, "post")
    act = enc.action_variable("act")
    solver = z3.SolverFor("QF_BV")
    solver.add(enc.well_formed(cfg, d, pre), enc.transition(cfg, d, pre, post, act))
    if solver.check(z3.Not(enc.well_formed(cfg, d, post))) == z3.unsat:
        return None
    labels = [a.label for a in enc.alphabet(d)]
    return labels[_index(solver.model(), act)]
