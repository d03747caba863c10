"""The lockstep judge's core, shared by every slice: verdicts, findings, outcome comparison, the
per-event loop and the classification of invariant results.

A slice's judge (conformance.replication.lockstep.Judge, conformance.txn.lockstep.TxnJudge) subclasses
``LockstepJudge`` and gives only its own rules: one handler per event type that runs the same
handler in the model and compares the outcome the implementation claims (``compare``), and how its
invariants are checked (``find_violations``). Everything else is here, written once:

- **non-conformance**: the model has no handler for the event, would not run it now (the slice's
  ``NotEnabled``), or computes another outcome (``Mismatch``);
- after each conformant event, every checked invariant is counted and evaluated: a broken
  guarantee is an **invariant violation**, or **allowed** when the configuration permits it
  (reported once per distinct message);
- requests travel through a network between send and handle events, so judges keep what was sent
  and answered by message id (``own_request``); a duplicated message may be answered twice and a
  response is accepted if any answer given to its request justifies it (``first_match``).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from kconform.conformance.coverage import outcome_key
from kconform.traces import events as ev
from kconform.traces.operations import Operation

NON_CONFORMANCE = "non-conformance"
INVARIANT_VIOLATION = "invariant-violation"
ALLOWED = "allowed"

S = TypeVar("S")
"""A slice's (immutable) model state."""
Cfg = TypeVar("Cfg")
Q = TypeVar("Q")
A = TypeVar("A")
X = TypeVar("X")


@dataclass(frozen=True)
class Finding:
    """One verdict about one event: which rule or invariant, and why."""

    verdict: str
    name: str
    message: str
    event: ev.Event | None = None

    @property
    def failing(self) -> bool:
        return self.verdict in (NON_CONFORMANCE, INVARIANT_VIOLATION)


class Mismatch(Exception):
    """The implementation's claimed outcome differs from the model's, field by field."""

    def __init__(self, diffs: list[str]) -> None:
        super().__init__("; ".join(diffs))
        self.diffs = diffs


def compare(claimed: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """Raise Mismatch naming every field of ``expected`` whose claimed value differs."""
    diffs = [
        f"{k}: implementation says {claimed[k]!r}, model says {expected[k]!r}"
        for k in expected
        if claimed[k] != expected[k]
    ]
    if diffs:
        raise Mismatch(diffs)


_GETTERS: dict[tuple[str, ...], Callable[[object], object]] = {}
"""``operator.attrgetter`` of each field list ``compare_fields`` was given (as a tuple)."""


def compare_fields(claimed: object, expected: object, fields: Sequence[str]) -> None:
    """``compare`` of the same-named ``fields`` of an event and of the model's outcome."""
    key = tuple(fields)
    get = _GETTERS.get(key)
    if get is None:
        get = _GETTERS[key] = operator.attrgetter(*key)
    if get(claimed) == get(expected):
        return  # every field equal (compared at once): no difference to name
    diffs = [
        f"{k}: implementation says {getattr(claimed, k)!r}, model says {getattr(expected, k)!r}"
        for k in fields
        if getattr(claimed, k) != getattr(expected, k)
    ]
    if diffs:
        raise Mismatch(diffs)


class Violation(Protocol):
    """What a slice's invariant check reports (model.invariants.Violation, model.txn_invariants')."""

    @property
    def invariant(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def allowed(self) -> bool: ...
    @property
    def allowed_because(self) -> str: ...


class Documented(Protocol):
    """An invariant registry entry: its guarantee in one sentence."""

    @property
    def doc(self) -> str: ...


class LockstepJudge(Generic[S, Cfg]):
    """Holds the model state of one run and judges each event as it arrives.

    Subclasses set ``invariant_registry`` (name -> entry with ``doc``) and ``not_enabled`` (the
    model's exception for a handler it would not run), fill ``handlers`` in their ``__init__``
    and implement ``find_violations``. ``checked`` names the invariants checked after each event
    (None: all of them); a model-search counterexample found for some invariants only is judged
    against those.
    """

    invariant_registry: ClassVar[Mapping[str, Documented]]
    not_enabled: ClassVar[tuple[type[Exception], ...]]
    report_violations_once: ClassVar[bool] = False
    """A state invariant stays broken once broken: report each distinct violation once (True), or
    at every event that leaves it broken (False)."""
    keep_state_of_first_mismatch: ClassVar[bool] = False
    """On a response no answer justifies, continue from the model's state after the first answer
    (True) or leave the state as it was (False)."""

    def __init__(self, cfg: Cfg, checked: frozenset[str] | None, state: S) -> None:
        known = self.invariant_registry
        if checked is not None and not checked <= set(known):
            raise ValueError(f"unknown invariant(s) {sorted(checked - set(known))}")
        self.cfg = cfg
        self.checked = checked
        self._checked_names = tuple(n for n in known if checked is None or n in checked)
        self.state: S = state
        self.events_judged = 0
        self._checked_events = 0
        """Events after which every checked invariant was counted as checked (``checks``)."""
        self.violations: Counter[str] = Counter()
        self.allowed: Counter[str] = Counter()
        self.actions: Counter[str] = Counter()
        self.covered: Counter[str] = Counter()
        """Coverage keys (conformance.coverage) of the events judged conformant."""
        self._allowed_seen: set[str] = set()
        self._violations_seen: set[str] = set()
        self._after: S | None = None
        self.handlers: dict[type[ev.Event], Callable[[Any], S]] = {}
        self._counts_more = type(self).count_coverage is not LockstepJudge.count_coverage

    @property
    def checks(self) -> Counter[str]:
        """How many times each checked invariant was checked: after every conformant event, each
        of them (counted once per event, materialised here rather than per name per event)."""
        n = self._checked_events
        return Counter(dict.fromkeys(self._checked_names, n)) if n else Counter()

    # ------------------------------------------------------------------------------------------
    # What a slice gives

    def find_violations(self, pre: S, post: S) -> Sequence[Violation]:
        """Every checked invariant broken by the step ``pre`` -> ``post`` or in ``post``."""
        raise NotImplementedError

    def unchanged(self, pre: S, post: S) -> bool:
        """Whether the invariants' inputs are the very same objects in ``post`` as in ``pre`` (then
        nothing new can be broken and the checks are counted, not re-run)."""
        return post is pre

    def coverage_key(self, event: ev.Event) -> str:
        """The coverage key an accepted event counts under (conformance.coverage.outcome_key); a
        slice's judge refines it by overriding this method (and may call it through ``super()``)."""
        return outcome_key(event)

    def count_coverage(self, event: ev.Event, pre: S) -> None:
        """Count the slice's coverage keys of an accepted event beyond its handler outcome (which
        ``observe`` counts: ``coverage_key``)."""

    # ------------------------------------------------------------------------------------------

    def observe(self, event: ev.Event) -> list[Finding]:
        """Judge one event; returns its findings (empty when it conforms and nothing broke)."""
        self.events_judged += 1
        self.actions[event.kind] += 1
        pre = self.state
        self._after = None
        handler = self.handlers.get(type(event))
        if handler is None:
            return [Finding(NON_CONFORMANCE, event.kind, f"the model has no handler for {event.kind}", event)]
        try:
            self.state = handler(event)
        except self.not_enabled as exc:
            return [Finding(NON_CONFORMANCE, event.kind, f"not allowed here: {exc}", event)]
        except Mismatch as exc:
            if self._after is not None:
                self.state = self._after  # what the model says the handler leaves behind
            return [Finding(NON_CONFORMANCE, event.kind, f"outcome differs: {exc}", event)]
        self.covered[self.coverage_key(event)] += 1
        if self._counts_more:
            self.count_coverage(event, pre)
        self._checked_events += 1
        post = self.state
        if self.unchanged(pre, post):
            return []
        return self._check_invariants(pre, post, event)

    def note_operation(self, op: Operation) -> None:
        """Told operation ``op`` before any event it caused is judged: what the environment does
        during it that no event shows (the exactly-once judge: whether the network delivers,
        model.txn_answers). Nothing unless a slice says otherwise."""

    def operation_done(self, op: Operation) -> list[Finding]:
        """Findings about operation ``op`` as a whole, asked after every event it caused was judged
        without a failure: whether the implementation did what an operation of the environment asks
        (a slice's harness stand-ins: the fetch-session slice's AdvanceHw, appends, leadership moves),
        judged against the judge's model state. None unless a slice says otherwise."""
        return []

    def _check_invariants(self, pre: S, post: S, event: ev.Event) -> list[Finding]:
        """The findings of the invariants on a conformant step that changed what they read."""
        out: list[Finding] = []
        for v in self.find_violations(pre, post):
            key = f"{v.invariant}: {v.message}"
            if v.allowed:
                if key not in self._allowed_seen:
                    self._allowed_seen.add(key)
                    self.allowed[v.invariant] += 1
                    out.append(Finding(ALLOWED, v.invariant, f"{v.message} — allowed: {v.allowed_because}", event))
            elif not self.report_violations_once or key not in self._violations_seen:
                self._violations_seen.add(key)
                self.violations[v.invariant] += 1
                doc = self.invariant_registry[v.invariant].doc
                out.append(Finding(INVARIANT_VIOLATION, v.invariant, f"{v.message} (guarantee: {doc})", event))
        return out

    # ------------------------------------------------------------------------------------------
    # Helpers for the slices' handlers

    def keep(self, result: tuple[S, X]) -> tuple[S, X]:
        """Remember the model's state after a handler, kept if its outcome then differs."""
        self._after = result[0]
        return result

    def first_match(self, answers: Iterable[A], run: Callable[[A], tuple[S, Any]], claimed: dict[str, Any]) -> S:
        """Accept the claim if any answer given to the request justifies it (duplicates may differ)."""
        mismatch: Mismatch | None = None
        for answer in answers:
            s, out = run(answer)
            try:
                compare(claimed, {k: getattr(out, k) for k in claimed})
                return s
            except Mismatch as exc:
                if mismatch is None:
                    mismatch = exc
                    if self.keep_state_of_first_mismatch:
                        self._after = s
        assert mismatch is not None
        raise mismatch

    def judge_all(self, events: Iterable[ev.Event]) -> list[Finding]:
        """Judge a whole event list in order; returns every finding."""
        out: list[Finding] = []
        for e in events:
            out.extend(self.observe(e))
        return out


def only_clock_moved(pre: object, post: object, clock: str = "now_ms") -> bool:
    """Whether ``post`` is ``pre`` with at most its ``clock`` field changed: every other field is
    the very same object (a clock tick, which no invariant reads; the slices' invariant tests
    check that no invariant's declared inputs include the clock)."""
    if type(pre) is not type(post):
        return False
    before, after = vars(pre), vars(post)
    return all(value is after[name] for name, value in before.items() if name != clock)


def own_request(
    sent: Mapping[int, tuple[int, Q]],
    answers: Mapping[int, list[A]],
    msg: int,
    node: int,
    what: str,
    not_enabled: Callable[[str], Exception],
) -> tuple[Q, list[A]]:
    """The request ``node`` sent as ``msg`` and every answer it got; ``not_enabled(why)`` is
    raised when ``node`` sent no such request or got no answer to it."""
    sender, request = sent.get(msg, (-1, None))
    given = answers.get(msg, [])
    if sender != node or request is None or not given:
        raise not_enabled(f"broker {node} got no answer to {what} {msg} of its own")
    return request, given


__all__ = [
    "ALLOWED",
    "INVARIANT_VIOLATION",
    "NON_CONFORMANCE",
    "Finding",
    "LockstepJudge",
    "Mismatch",
    "compare",
    "compare_fields",
    "only_clock_moved",
    "own_request",
]
