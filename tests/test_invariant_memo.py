"""The replication judge re-runs a state invariant only when the values it reads changed
(model.invariants.check_state with a memo, issue 17): its findings are those of re-running every
invariant after every event, each invariant's declared inputs cover everything it reads, and the
faster prefix comparisons inside the checks report what the offset-by-offset loops report."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kconform.conformance.judge import ALLOWED, NON_CONFORMANCE
from kconform.conformance.replication.lockstep import Judge
from kconform.impl.mutants import MUTANT_CONFIG, mutants_of
from kconform.model import invariants as I
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
