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
from typing import ClassVar, Generic, TypeVar

from kconform.traces.logs.observations import Obs

MAX_FINDINGS = 200
"""Findings kept per check (all are counted)."""

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
        self.last: dict[K, Obs] = {}

    def swap(self, key: K, obs: Obs) -> Obs | None:
        """Record ``obs`` as the latest of ``key``; return the one it replaces (None: the first)."""
        prev = self.last.get(key)
        self.last[key] = obs
        return prev


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
