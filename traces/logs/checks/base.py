"""What every log check is: a streaming judge over observations, with a verdict per check.

A check consumes the observation kinds it names, keeps bounded state keyed by stream / partition /
producer, counts how many judgements it made (``judged``) and keeps its findings with their
witness observations. Its verdict is *violated* (a finding), *passed* (judged at least once, no
finding) or *not observed* (the input never exercised it: never "passed"). Advisory checks report
what they see but never fail the gate (their guarantee has a permitted exception the input cannot
rule out, e.g. compaction removing offsets).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from kconform.traces.logs.observations import Obs

MAX_FINDINGS = 200
"""Findings kept per check (all are counted)."""

MAX_KEYS = 1_000_000
"""Keys one state table of a check remembers (partitions, streams, producers, sessions, epochs of a
partition, ...). A new key arriving at a full table is not remembered: the observation is counted in
the check's ``overflow`` (and noted in the report), and lines about that key are then judged as if
it had not been seen, which never raises a finding on its own (every rule needs the remembered
predecessor). What a check holds per key is bounded (one or two observations, each with its text cut
at ``TEXT_LIMIT``, or a fixed-size tuple), so a check's memory is bounded by its tables' caps
whatever the input's size."""

VIOLATED = "violated"
PASSED = "passed"
NOT_OBSERVED = "not observed"
ADVISORY = "advisory"


@dataclass(frozen=True)
class Witness:
    """A line that shows a finding: where it is and what it says."""

    file: str
    line: int
    text: str

    @staticmethod
    def of(obs: Obs) -> Witness:
        return Witness(obs.file, obs.line, obs.text)


@dataclass(frozen=True)
class Finding:
    """One violation of a check's guarantee, with the lines that witness it (first = where it shows)."""

    check: str
    message: str
    witnesses: tuple[Witness, ...]
    partition: str | None = None


class Check:
    """Base class: subclasses set ``name``, ``guarantee``, ``cite``, ``kinds`` (and ``advisory``)
    and implement :meth:`observe` (and :meth:`finish` when a verdict needs the whole input)."""

    name: ClassVar[str] = ""
    guarantee: ClassVar[str] = ""
    cite: ClassVar[str] = ""
    kinds: ClassVar[frozenset[str]] = frozenset()
    advisory: ClassVar[bool] = False

    def __init__(self) -> None:
        self.judged = 0
        self.allowed = 0
        self.finding_count = 0
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        self.lists_overflow = 0
        """Observations a capped list of this check (end-of-input candidates) could not keep."""
        self._tables: list[Table[Any, Any]] = []

    def table(self, cap: int | None = None) -> Table[Any, Any]:
        """A new state table of this check, holding at most ``cap`` (default :data:`MAX_KEYS`) keys."""
        made: Table[Any, Any] = Table(MAX_KEYS if cap is None else cap)
        self._tables.append(made)
        return made

    def keep(self, items: list[Any], item: Any, cap: int) -> None:
        """Append ``item`` to one of this check's lists unless it holds ``cap`` items (then count it)."""
        if len(items) < cap:
            items.append(item)
        else:
            self.lists_overflow += 1

    @property
    def overflow(self) -> int:
        """Observations this check could not remember because a state table or list was full."""
        return self.lists_overflow + sum(t.overflow for t in self._tables)

    def overflow_note(self) -> str | None:
        """The report's note when state was full (None when nothing overflowed)."""
        if not self.overflow:
            return None
        return (
            f"{self.overflow:,} observation(s) not remembered: a state table was full ({MAX_KEYS:,} keys) or a "
            "list of end-of-input candidates was; lines about them were not judged"
        )

    def observe(self, obs: Obs) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Called once after the last observation."""

    def flag(self, message: str, witnesses: Sequence[Obs], partition: str | None = None) -> None:
        self.finding_count += 1
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append(Finding(self.name, message, tuple(Witness.of(w) for w in witnesses), partition))

    def judge(
        self, holds: bool, message: Callable[[], str], witnesses: Sequence[Obs], partition: str | None = None
    ) -> bool:
        """Count one judgement; flag ``message()`` (built only then) with ``witnesses`` unless it
        ``holds``. Returns ``holds``."""
        self.judged += 1
        if not holds:
            self.flag(message(), witnesses, partition)
        return holds

    @property
    def status(self) -> str:
        if self.finding_count:
            return ADVISORY if self.advisory else VIOLATED
        return PASSED if self.judged else NOT_OBSERVED

    @property
    def fails(self) -> bool:
        return self.finding_count > 0 and not self.advisory


K = TypeVar("K", bound=Hashable)


class KeyedCheck(Check, Generic[K]):
    """A check that judges an observation against the latest one of the same key (a broker's
    partition, a producer in a segment, a transactional id): ``last`` holds the latest per key,
    kept as long as the check lives (bounded by the keys the input names)."""

    def __init__(self) -> None:
        super().__init__()
        self.last: Table[K, Obs] = self.table()

    def swap(self, key: K, obs: Obs) -> Obs | None:
        """Record ``obs`` as the latest of ``key``; return the one it replaces (None: the first)."""
        prev = self.last.get(key)
        self.last[key] = obs
        return prev


KT = TypeVar("KT", bound=Hashable)
VT = TypeVar("VT")


class Table(dict[KT, VT]):
    """A dict that holds at most ``cap`` keys: storing a new key in a full table (by ``[]=`` or
    ``setdefault``) stores nothing and counts one ``overflow``; existing keys are updated as usual.
    ``setdefault`` on a full table returns the default, unstored, so callers' updates of it vanish."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap
        self.overflow = 0

    def __setitem__(self, key: KT, value: VT) -> None:
        if len(self) >= self.cap and key not in self:
            self.overflow += 1
            return
        super().__setitem__(key, value)

    def setdefault(self, key: KT, default: VT) -> VT:
        if key in self:
            return self[key]
        self[key] = default
        return default


def run_checks(checks: Sequence[Check], observations: Iterable[Obs]) -> None:
    """Feed every observation to the checks that consume its kind, then finish them."""
    by_kind: dict[str, list[Check]] = {}
    for check in checks:
        for kind in check.kinds:
            by_kind.setdefault(kind, []).append(check)
    for obs in observations:
        for check in by_kind.get(obs.kind, ()):
            check.observe(obs)
    for check in checks:
        check.finish()
        note = check.overflow_note()
        if note is not None:
            check.notes.append(note)
