"""One single-process run: parse the inputs and run every check over the observations as they
stream by (nothing is held but the checks' bounded state)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kconform.traces.logs.checks import Check, all_checks, run_checks
from kconform.traces.logs.checks.txn import DEFAULT_MAX_TXN_TIMEOUT_MS
from kconform.traces.logs.observations import Obs
from kconform.traces.logs.parse import ParseStats, parse_paths


@dataclass
class LogRun:
    """The outcome of one run: what was parsed and every check's verdict."""

    paths: list[str]
    stats: ParseStats
    checks: list[Check]
    seconds: float = 0.0
    lenient: bool = False
    selected: list[str] = field(default_factory=list)

    @property
    def violations(self) -> int:
        return sum(c.finding_count for c in self.checks if c.fails)

    @property
    def input_error(self) -> bool:
        """A file could not be read, or known lines did not parse and the run is not lenient: the
        verdict is unknown."""
        return bool(self.stats.unreadable) or (self.stats.problem_count > 0 and not self.lenient)


def check_observations(
    observations: Iterable[Obs], max_txn_timeout_ms: int = DEFAULT_MAX_TXN_TIMEOUT_MS, only: Sequence[str] = ()
) -> list[Check]:
    """Every check (or those named in ``only``) run over ``observations``."""
    checks = [c for c in all_checks(max_txn_timeout_ms) if not only or c.name in only]
    run_checks(checks, observations)
    return checks


def check_paths(
    paths: Sequence[str | os.PathLike[str]],
    lenient: bool = False,
    max_txn_timeout_ms: int = DEFAULT_MAX_TXN_TIMEOUT_MS,
    only: Sequence[str] = (),
) -> LogRun:
    """Parse ``paths`` and check them in one streaming pass."""
    started = time.perf_counter()
    stats = ParseStats()
    checks = check_observations(parse_paths(paths, stats), max_txn_timeout_ms, only)
    return LogRun(
        paths=[str(p) for p in paths],
        stats=stats,
        checks=checks,
        seconds=time.perf_counter() - started,
        lenient=lenient,
        selected=list(only),
    )
