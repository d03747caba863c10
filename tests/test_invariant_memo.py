"""The replication judge re-runs a state invariant only when the values it reads changed
(model.invariants.check_state with a memo, issue 17): its findings are those of re-running every
invariant after every event, each invariant's declared inputs cover everything it reads, and the
faster prefix comparisons inside the checks report what the offset-by-offset loops report."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

import pytest

from kconform.conformance.judge import ALLOWED, NON_CONFORMANCE
from kconform.conformance.replication.lockstep import Judge
from kconform.impl.mutants import MUTANT_CONFIG, mutants_of
from kconform.model import invariants as I
from kconform.model import state_parts
from kconform.model.config import ReplicationConfig
from kconform.model.replication import advance_clock
from kconform.model.state import DelayedFetch, State
from kconform.traces.events import Entry
from kconform.traces.generate import Plan
from tests.memokit import Trace, clock_readers, findings_agree, generated_traces, memo_agrees, reads
from tests.test_invariants import BAD_STATES, _committed, _set

_NEEDS_FEATURE = ("follower_fetching", "eligible_leader_replicas_version", "log_start_moves")
PLANTED = tuple(
    (m, 1) for m in mutants_of("replication") if not any(MUTANT_CONFIG.get(m, {}).get(k) for k in _NEEDS_FEATURE)
)
"""Every replication mutant, one trace each: runs that break invariants, then go on being judged
(but those that need a feature the corpora do not run: KIP-392 follower fetching, whose consumer
the corpus workload does not drive, and the KIP-966 ELR rung)."""
CONFIGS = (
    ReplicationConfig(),
    ReplicationConfig(unclean_leader_election=True, flush_interval_ms=1_000),
)
"""The defaults, and a configuration whose losses are allowed (allowed findings are memoised too)."""


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Trace]:
    out: list[Trace] = []
    for i, cfg in enumerate(CONFIGS):
        root = tmp_path_factory.mktemp("memo") / f"c{i}"
        plan = Plan(
            events=max(12_000, 1_000 * len(PLANTED)), seed=11 + i, trace_events=1_000, config=cfg, plant=PLANTED
        )
        out += generated_traces(root, plan, ReplicationConfig)
    return out


def _no_memo(judge: Any) -> None:
    judge._memo = None  # every invariant re-run after every event


def test_memoised_judging_finds_what_rechecking_everything_finds(traces: list[Trace]) -> None:
    verdicts = findings_agree(traces, Judge, _no_memo)
    # Conformant models break no guarantee: violations through the memo are the bad states' test below.
    assert verdicts[NON_CONFORMANCE] > 0 and verdicts[ALLOWED] > 0, verdicts


class _Recorder:
    """Stands for a State, its ghost, its controller or one of its replicas and records which of
    their fields are read (``leo`` reads the log)."""

    def __init__(self, obj: Any, path: tuple[str, ...], seen: set[tuple[str, ...]]) -> None:
        self._obj, self._path, self._seen = obj, path, seen

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._obj, name)
        if name == "replicas":
            return tuple(_Recorder(r, ("replica",), self._seen) for r in value)
        if name in ("ghost", "controller"):
            return _Recorder(value, (name,), self._seen)
        if name == "presumes_leadership":
            return lambda b: _presumes(self.replicas[b])
        self._seen.add((*self._path, "log" if name == "leo" else name))
        return value


def _presumes(r: Any) -> bool:
    return bool(r.alive and r.registered and r.leader == r._obj.leader)  # reads alive, registered, leader


def _record(state: Any, seen: set[tuple[str, ...]]) -> _Recorder:
    return _Recorder(state, (), seen)


def _reads(fn: Any, state: State, *args: Any) -> set[tuple[str, ...]]:
    return reads(_record, fn, state, *args)


@pytest.mark.parametrize("name", sorted(BAD_STATES))
def test_each_invariant_declares_what_it_reads_and_a_memo_recomputes_what_changed(name: str) -> None:
    """Through one memo, good → bad → good → bad gives the verdicts of checking each state afresh;
    on the bad state and the good one the check reads only the inputs it declares."""
    cfg = ReplicationConfig()
    good = _committed()
    bad = BAD_STATES[name](good)
    memo_agrees(I.check_state, (good, bad, good, bad), cfg, {})
    inv = I.INVARIANTS[name]
    if inv.state_check is None:
        return  # a step invariant: not memoised
    assert inv.inputs is not None, f"{name} declares no inputs"
    for s in (good, bad):
        assert _reads(inv.state_check, s, cfg) <= _reads(inv.inputs, s), name


CLOCK_READERS = frozenset({"PurgatoryDeadlines"})
"""The one invariant that reads the clock: only on states that track the purgatory (the lockstep
judge's, State.tracks_purgatory) and only while something is parked; it declares the clock among
its inputs (model.invariants._parked_and_clock)."""


def test_no_invariant_reads_the_clock_but_the_purgatory_deadlines() -> None:
    """The judge skips the checks after a step that changes nothing they read, a clock tick among
    them (Judge.unchanged): no invariant, of states or of steps, reads ``now_ms``, except
    PurgatoryDeadlines where the purgatory is tracked and something is parked."""
    cfg = ReplicationConfig()
    for s in [_committed(), *(bad(_committed()) for bad in BAD_STATES.values())]:
        for name in clock_readers(_record, I.INVARIANTS.values(), s, cfg):
            inv = I.INVARIANTS[name]
            assert name in CLOCK_READERS and s.tracks_purgatory, name
            assert inv.inputs is not None and ("now_ms",) in _reads(inv.inputs, s), name


def test_a_tick_past_a_deadline_is_not_skipped_by_the_judge() -> None:
    """Judge.unchanged skips a step whose replicas, controller and ghost are the same objects: a
    tick that brings or passes a parked operation's deadline changes a replica (model.purgatory's
    pass_time), so PurgatoryDeadlines is judged on it; a tick on an empty purgatory changes nothing
    it could find."""
    cfg = ReplicationConfig()
    judge = Judge(cfg)
    parked = _set(_committed(), 0, purgatory=(DelayedFetch(9, -1, 1, 1, -1, 0, 1, 500),))
    s = replace(parked, now_ms=400, tracks_purgatory=True)
    at_deadline = advance_clock(s, 500)
    assert not judge.unchanged(s, at_deadline) and I.check_state(at_deadline, cfg, frozenset(CLOCK_READERS)) == []
    past = advance_clock(at_deadline, 501)
    assert not judge.unchanged(at_deadline, past)
    assert [v.invariant for v in I.check_state(past, cfg, frozenset(CLOCK_READERS))] == ["PurgatoryDeadlines"]
    empty = replace(_committed(), now_ms=400, tracks_purgatory=True)
    assert judge.unchanged(empty, advance_clock(empty, 10_000))


def test_every_state_invariant_declares_inputs() -> None:
    assert all(inv.inputs is not None for inv in I.INVARIANTS.values() if inv.state_check is not None)


def test_an_equal_input_reuses_the_verdict_and_a_changed_one_reruns() -> None:
    """The memo is keyed on the values read: a state that differs only where the invariant does not
    read (the clock, a follower's fetch state) is not re-checked; a changed log is."""
    cfg = ReplicationConfig()
    s = _committed()
    memo: I.Memo = {}
    assert I.check_state(s, cfg, memo=memo) == []
    ran: list[State] = []
    original = I.INVARIANTS["WeakIsr"]
    assert original.state_check is not None
    check = original.state_check

    def counting(state: State, c: ReplicationConfig) -> Any:
        ran.append(state)
        return check(state, c)

    I.INVARIANTS["WeakIsr"] = replace(original, state_check=counting)
    try:
        assert I.check_state(replace(s, now_ms=s.now_ms + 100), cfg, memo=memo) == []
        assert I.check_state(_set(s, 1, fetch_state="truncating"), cfg, memo=memo) == []
        assert ran == []  # neither the clock nor a fetch state is read by WeakIsr: its verdict is reused
        bad = _set(s, 1, log=())
        assert [v.invariant for v in I.check_state(bad, cfg, frozenset({"WeakIsr"}), memo=memo)] == ["WeakIsr"]
        assert ran == [bad]
    finally:
        I.INVARIANTS["WeakIsr"] = original


def test_prefix_comparison_reports_the_first_differing_offset() -> None:
    """NoDivergenceBelowHw / WeakIsr compare log prefixes at once and fall back to the loop only
    when they differ: the message names the first offset that differs, as the loop alone did."""
    cfg = ReplicationConfig()
    e0, e1, other = Entry(0, 0, 7), Entry(1, 0, 8), Entry(1, 0, 99)
    s = _committed()
    for b in (0, 1, 2):
        s = _set(s, b, log=(e0, e1), hw=2)
    assert I.check_state(s, cfg) == []
    diverged = _set(s, 2, log=(e0, other))
    assert [v.message for v in I.check_state(diverged, cfg, frozenset({"NoDivergenceBelowHw"}))] == [
        f"offset 1: broker 0 has {e1}, broker 2 has {other} (HWs 2, 2)",
        f"offset 1: broker 1 has {e1}, broker 2 has {other} (HWs 2, 2)",
    ]
    shorter = _set(s, 1, log=(e0,))
    assert [v.message for v in I.check_state(shorter, cfg, frozenset({"WeakIsr"}))] == [
        f"leader 0 (epoch 0, HW 2) has {e1} at offset 1 but its ISR member 1 has None"
    ]


# The parts each state check declares (model.state_parts, ``over``): through the judge's memo a check
# is re-run only when one of its parts differs from the state checked before, so each must read
# only the parts it names, ``changed`` must name every part that differs, and the values it compares
# must compare every field they hold.


def _part_of(path: tuple[str, ...], s: State) -> str:
    """The part (model.state_parts.NAMES) a read recorded by ``_Recorder`` belongs to."""
    if path[0] in ("replica", "ghost"):
        return f"{path[0]}.{path[1]}"
    if path == ("now_ms",):
        return state_parts.CLOCK if s.tracks_purgatory else "now_ms where the purgatory is not tracked"
    return path[0]


def _undeclared_reads(s: State, cfg: ReplicationConfig) -> dict[str, set[str]]:
    """Per state invariant, the parts its check reads on ``s`` that it does not declare."""
    out: dict[str, set[str]] = {}
    for name, inv in I.INVARIANTS.items():
        if inv.state_check is None:
            continue
        read = {_part_of(p, s) for p in _reads(inv.state_check, s, cfg)}
        if not read <= (inv.over or frozenset()):
            out[name] = read - (inv.over or frozenset())
    return out


Pair = tuple[ReplicationConfig, State, State]


@pytest.fixture(scope="module")
def judged(traces: list[Trace]) -> list[Pair]:
    """Two successive states the judge checks along every other trace (mutants planted), with their
    config, at every tenth state checked."""
    out: list[Pair] = []
    for cfg, events in traces[::2]:
        judge = Judge(cfg)
        last, n = judge.state, 0
        for event in events:
            pre = judge.state
            judge.observe(event)
            if not judge.unchanged(pre, judge.state):
                n += 1
                if n % 10 == 0:
                    out.append((cfg, last, judge.state))
                last = judge.state
    return out


def test_every_state_invariant_declares_its_parts() -> None:
    assert all(inv.over is not None for inv in I.INVARIANTS.values() if inv.state_check is not None)
    assert all(inv.over <= set(state_parts.NAMES) for inv in I.INVARIANTS.values() if inv.over is not None)


@pytest.mark.parametrize("name", sorted(BAD_STATES))
def test_each_check_reads_only_the_parts_it_declares(name: str) -> None:
    cfg = ReplicationConfig()
    good = _committed()
    for s in (good, BAD_STATES[name](good), replace(BAD_STATES[name](good), tracks_purgatory=True)):
        assert _undeclared_reads(s, cfg) == {}


def test_checks_read_only_their_parts_on_judged_states(judged: list[Pair]) -> None:
    states = [(cfg, s) for cfg, _, s in judged[::2]]
    assert len(states) > 200
    for cfg, s in states:
        assert _undeclared_reads(s, cfg) == {}


def _naive_changed(a: State, b: State) -> int:
    """model.state_parts.changed written out part by part."""
    bits = 0
    for i, name in enumerate(state_parts.NAMES):
        kind, _, f = name.partition(".")
        if kind == "replica":
            differ = [getattr(r, f) for r in a.replicas] != [getattr(r, f) for r in b.replicas]
        elif kind == "ghost":
            differ = getattr(a.ghost, f) != getattr(b.ghost, f)
        elif name == state_parts.CLOCK:
            differ = (a.tracks_purgatory or b.tracks_purgatory) and a.now_ms != b.now_ms
        else:
            differ = getattr(a, name) != getattr(b, name)
        bits |= differ << i
    return bits


def _bits(*names: str) -> int:
    return sum(1 << state_parts.NAMES.index(n) for n in names)


def test_changed_names_exactly_the_parts_that_differ(judged: list[Pair]) -> None:
    s = _committed()
    assert state_parts.changed(s, replace(s, now_ms=500)) == 0  # the clock, the purgatory untracked
    assert state_parts.changed(s, _set(s, 1, fetch_state="truncating", remotes=())) == 0  # read by no check
    assert state_parts.changed(s, _set(s, 1, hw=0)) == _bits("replica.hw")
    tracked = replace(s, tracks_purgatory=True)
    assert state_parts.changed(s, tracked) == _bits("tracks_purgatory")
    assert state_parts.changed(tracked, replace(tracked, now_ms=1)) == _bits(state_parts.CLOCK)
    late = replace(s, ghost=replace(s.ghost, late_shrinks=("late",)))  # a field the ghost's == ignores
    assert late == s and state_parts.changed(s, late) == _bits("ghost.late_shrinks")
    assert len(judged) > 300
    for _, a, b in judged:
        assert state_parts.changed(a, b) == _naive_changed(a, b)
        assert state_parts.changed(a, a) == 0


def _uncompared_fields(value: object, seen: set[int]) -> set[str]:
    """The fields with ``compare=False`` of the dataclasses held in ``value``."""
    if id(value) in seen:
        return set()
    seen.add(id(value))
    out: set[str] = set()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if not f.compare:
                out.add(f"{type(value).__name__}.{f.name}")
            out |= _uncompared_fields(getattr(value, f.name), seen)
    elif isinstance(value, tuple | frozenset | list):
        for item in value:
            out |= _uncompared_fields(item, seen)
    return out


def test_the_values_of_the_parts_compare_every_field(judged: list[Pair]) -> None:
    """``changed`` compares each part with ``==``: a value holding a field its equality ignores could
    differ unseen (the ghost's own uncompared fields are parts of their own)."""
    states = [s for _, _, s in judged[::5]] + [bad(_committed()) for bad in BAD_STATES.values()]
    seen: set[int] = set()
    for s in states:
        for r in s.replicas:
            for f in state_parts.REPLICA_FIELDS:
                assert _uncompared_fields(getattr(r, f), seen) == set(), f
        for f in state_parts.GHOST_FIELDS:
            assert _uncompared_fields(getattr(s.ghost, f), seen) == set(), f
        for f in state_parts.STATE_FIELDS:
            assert _uncompared_fields(getattr(s, f), seen) == set(), f


def test_an_undeclared_part_is_caught_and_would_hide_a_violation() -> None:
    """A near miss of the declarations: WeakIsr declaring every part but the logs reads one it does not
    declare, and through a memo it then misses the violation a log change brings."""
    cfg, weak = ReplicationConfig(), frozenset({"WeakIsr"})
    good = _committed()
    bad = BAD_STATES["WeakIsr"](good)
    assert state_parts.changed(good, bad) == _bits("replica.log")
    original = I.INVARIANTS["WeakIsr"]
    assert original.over is not None
    I.INVARIANTS["WeakIsr"] = replace(original, over=original.over - {"replica.log"})
    try:
        assert _undeclared_reads(bad, cfg) == {"WeakIsr": {"replica.log"}}
        memo: I.Memo = {}
        assert I.check_state(good, cfg, weak, memo) == []
        assert I.check_state(bad, cfg, weak, memo) == []  # the memo kept the verdict of the good state
        assert [v.invariant for v in I.check_state(bad, cfg, weak)] == ["WeakIsr"]
    finally:
        I.INVARIANTS["WeakIsr"] = original
    memo = {}
    assert I.check_state(good, cfg, weak, memo) == []
    assert [v.invariant for v in I.check_state(bad, cfg, weak, memo)] == ["WeakIsr"]
