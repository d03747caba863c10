"""Lockstep throughput: operations and events per second, model and implementation together, one core.

Run: ``python -m kconform.ci.benchmarks.throughput [--examples 200]``. Also reports the share of time
spent in the judge (model + invariants) versus the implementation, measured in the same run.
"""

from __future__ import annotations

import argparse
import platform
import time

from rich.console import Console

from kconform.conformance import lockstep
from kconform.conformance.hunt import run_campaign
from kconform.impl import ReferenceCluster
from kconform.model.config import ReplicationConfig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args(argv)
    console = Console()
    judge_seconds = 0.0
    original = lockstep.Judge.observe

    def timed(self: lockstep.Judge, event: object) -> list[lockstep.Finding]:
        nonlocal judge_seconds
        t0 = time.perf_counter()
        try:
            return original(self, event)  # type: ignore[arg-type]
        finally:
            judge_seconds += time.perf_counter() - t0

    lockstep.Judge.observe = timed  # type: ignore[method-assign]
    try:
        result = run_campaign(
            ReferenceCluster, ReplicationConfig(), frozenset(), seed=1, examples=args.examples, steps=args.steps
        )
    finally:
        lockstep.Judge.observe = original  # type: ignore[method-assign]
    events = sum(result.log.actions.values())
    console.print(f"machine: {platform.machine()} python {platform.python_version()} (one process, one core)")
    console.print(
        f"{result.log.runs} runs, {result.log.steps} operations, {events} events in {result.seconds:.1f} s: "
        f"{result.log.steps / result.seconds:.0f} operations/s, {events / result.seconds:.0f} events/s"
    )
    console.print(
        f"judge (model + invariants) {judge_seconds:.1f} s = {judge_seconds / result.seconds:.0%} of the run; "
        f"implementation, Hypothesis and the rest {result.seconds - judge_seconds:.1f} s"
    )
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
