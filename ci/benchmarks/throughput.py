"""Lockstep throughput: operations and events per second, model and implementation together, one core.

Run: ``python -m kconform.ci.benchmarks.throughput [--slice replication|txn|txn-tv2|fetch] [--examples 200]``. Also
reports the share of time spent in the judge (model + invariants) versus the implementation,
measured in the same run.

``--against REV`` measures before/after side by side: the same seeded campaign runs in a child
process on the code of git revision ``REV`` (exported to a temporary directory) and on the working
tree, alternately ``--rounds`` times, the sides' order rotating every round (so load from other work
on the machine falls on both), and prints each round and the medians, per wall-clock second and per
CPU second of the child (the steadier figure on a shared machine), events and operations.
The working tree's side runs the gate's engine (``ci.options.GATE_ENGINE``, the walk) unless
``--engine hypothesis`` says otherwise; the ``REV`` sides run ``--before-engine`` (default
Hypothesis, every revision's default before the walk became the gate's). ``--against`` is
repeatable: every revision and the working tree side by side in one run (e.g. the issue's baseline
and the branch's start), each side first in turn. Each child first runs a
two-example warm-up campaign, so that module loading (which differs between revisions) is not
counted. The child uses only entry points both sides have (``run_campaign``, ``make_adapter``,
``config_from_json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kconform.ci.benchmarks.child import json_child
from kconform.ci.exitcodes import EXIT_ERROR
from kconform.ci.options import GATE_ENGINE
from kconform.conformance import judge
from kconform.conformance.hunt import ENGINES, run_campaign
from kconform.model.configs import config_from_json
from kconform.traces.replay import make_adapter

FOLDERS = ("model", "impl", "conformance", "traces", "ci")
"""The top-level folders mapped under ``kconform`` (pyproject.toml's package-dir)."""

_CHILD = """
import inspect, json, sys, time
from kconform.conformance.hunt import run_campaign
from kconform.model.configs import config_from_json
from kconform.traces.replay import make_adapter
name, examples, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cfg = config_from_json(json.loads(sys.argv[4]))
accepted = inspect.signature(run_campaign).parameters
more = {} if sys.argv[5] == "hypothesis" else {"engine": sys.argv[5]}  # older trees have no engine argument
if sys.argv[6] == "random-only":
    more["zoo"] = False
missing = sorted(set(more) - set(accepted))
if missing:
    asked = "random search only (no zoo)" if sys.argv[6] == "random-only" else "with its zoo"
    sys.exit(f"this revision's run_campaign takes no {' or '.join(map(repr, missing))} argument, "
             f"so it cannot run what was asked: the {sys.argv[5]} engine, {asked}")
run_campaign(lambda: make_adapter("reference", cfg), cfg, frozenset(), seed=0, examples=2, steps=steps, **more)
from kconform.conformance.judge import LockstepJudge
judged = [0]
plain = LockstepJudge.observe
def counted(self, event):
    judged[0] += 1
    return plain(self, event)
LockstepJudge.observe = counted  # every judge of the campaign, zoo scenarios included
cpu = time.process_time()
result = run_campaign(
    lambda: make_adapter("reference", cfg), cfg, frozenset(), seed=1, examples=examples, steps=steps, **more
)
cpu = time.process_time() - cpu
print(json.dumps({"runs": result.log.runs, "steps": result.log.steps, "events": sum(result.log.actions.values()),
                  "judged": judged[0], "seconds": result.seconds, "cpu": cpu, "passed": result.passed}))
"""
"""The measurement a side's child runs (argv: slice name, examples, steps, config JSON, engine,
``zoo`` or ``random-only``). ``judged`` counts every event any judge of the measured campaign
judged (``LockstepJudge.observe``, which every slice's judge inherits since c2114f8), the zoo's
scenarios included, where ``events`` counts the runs of the machine only; the counting wrapper costs
both sides one call per event. It uses only entry points every revision since c2114f8 has, and
exits non-zero naming the argument when the revision's ``run_campaign`` lacks one asked for (the
walk engine before 2026-11-27), so a side never silently measures something else."""


SLICES: dict[str, dict[str, object]] = {
    "replication": {},
    "txn": {"slice": "txn"},
    "txn-tv2": {"slice": "txn", "transaction_version": 2},
    "fetch": {"slice": "fetch"},
}
"""The campaigns one can measure: the gate's four parts (its config JSON)."""


def _config(name: str) -> object:
    return config_from_json(SLICES[name])


def measure_here(name: str, examples: int, steps: int, console: Console, engine: str = "hypothesis") -> int:
    """One campaign in this process, with the judge's share of the time."""
    cfg = _config(name)
    judge_seconds = 0.0
    original = judge.LockstepJudge.observe

    def timed(self: judge.LockstepJudge[object, object], event: object) -> list[judge.Finding]:
        nonlocal judge_seconds
        t0 = time.perf_counter()
        try:
            return original(self, event)  # type: ignore[arg-type]
        finally:
            judge_seconds += time.perf_counter() - t0

    judge.LockstepJudge.observe = timed  # type: ignore[method-assign,assignment]
    try:
        result = run_campaign(
            lambda: make_adapter("reference", cfg),  # type: ignore[arg-type]
            cfg,  # type: ignore[arg-type]
            frozenset(),
            seed=1,
            examples=examples,
            steps=steps,
            engine=engine,
        )
    finally:
        judge.LockstepJudge.observe = original  # type: ignore[method-assign]
    events = sum(result.log.actions.values())
    console.print(f"machine: {platform.machine()} python {platform.python_version()} (one process, one core)")
    console.print(
        f"{name}: {result.log.runs} runs, {result.log.steps} operations, {events} events in {result.seconds:.1f} s: "
        f"{result.log.steps / result.seconds:.0f} operations/s, {events / result.seconds:.0f} events/s"
    )
    console.print(
        f"judge (model + invariants) {judge_seconds:.1f} s = {judge_seconds / result.seconds:.0%} of the run; "
        f"implementation, Hypothesis and the rest {result.seconds - judge_seconds:.1f} s"
    )
    return 0 if result.passed else 1


def _package_tree(source: Path, into: Path) -> Path:
    """A directory whose ``kconform/<folder>`` links to ``source/<folder>`` (the package-dir
    mapping), to put first on PYTHONPATH."""
    root = into / "pkg"
    (root / "kconform").mkdir(parents=True)
    for folder in FOLDERS:
        (root / "kconform" / folder).symlink_to(source / folder, target_is_directory=True)
    return root


def _export(rev: str, into: Path) -> Path:
    """The tree of git revision ``rev`` of this repository, exported under ``into``."""
    repo = Path(__file__).resolve().parents[2]
    src = into / "src"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev], capture_output=True, check=True, timeout=120)
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True, timeout=120)
    return src


def _child(pythonpath: Path, name: str, examples: int, steps: int, engine: str, zoo: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    mode = "zoo" if zoo else "random-only"
    argv = [sys.executable, "-c", _CHILD, name, str(examples), str(steps), json.dumps(SLICES[name]), engine, mode]
    result: dict[str, float] = json_child(argv, env=env)
    return result


def compare(
    revs: Sequence[str],
    name: str,
    examples: int,
    steps: int,
    rounds: int,
    console: Console,
    engine: str = "hypothesis",
    before_engine: str = "hypothesis",
    zoo: bool = True,
) -> int:
    """Before (each of ``revs``, with ``before_engine``) / after (working tree, ``engine``) side by
    side: ``rounds`` runs each, the sides' order rotating every round so that no side always runs
    first; each round's figures, then the medians and each before side's after/before ratios.

    With ``zoo`` (the gate's campaign) a side's CPU-seconds include its known-bug zoo, whose
    judged events are not counted (a passing scenario is not a run of the machine): a revision with
    a larger zoo reads slower. ``zoo=False`` measures the random search alone on every side, CPU and
    events of the same runs."""
    here = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="kconform-throughput-") as tmp:
        sides: list[tuple[str, Path, str]] = [
            (rev, _package_tree(_export(rev, Path(tmp) / f"before{i}"), Path(tmp) / f"before{i}"), before_engine)
            for i, rev in enumerate(revs)
        ]
        sides.append(("working tree", _package_tree(here, Path(tmp) / "after"), engine))
        what = "with each side's zoo" if zoo else "random search only, no zoo"
        title = f"lockstep throughput, {name} ({what}): {', '.join(revs)} ({before_engine}) vs working tree ({engine})"
        table = Table(title=title)
        columns = (
            "round",
            "side",
            "runs",
            "operations",
            "events",
            "seconds",
            "events/s",
            "CPU s",
            "events/CPU-s",
            "ops/CPU-s",
            "judged, zoo incl.",
            "judged/CPU-s",
        )
        for column in columns:
            table.add_column(column, justify="right")
        rates: dict[str, list[float]] = {side: [] for side, _t, _e in sides}
        cpu_rates: dict[str, list[float]] = {side: [] for side, _t, _e in sides}
        op_rates: dict[str, list[float]] = {side: [] for side, _t, _e in sides}
        judged_rates: dict[str, list[float]] = {side: [] for side, _t, _e in sides}
        for i in range(rounds):
            shift = i % len(sides)
            for side, tree, side_engine in sides[shift:] + sides[:shift]:  # no side always runs first
                r = _child(tree, name, examples, steps, side_engine, zoo)
                rates[side].append(r["events"] / r["seconds"])
                cpu_rates[side].append(r["events"] / r["cpu"])
                op_rates[side].append(r["steps"] / r["cpu"])
                judged_rates[side].append(r["judged"] / r["cpu"])
                table.add_row(
                    str(i + 1),
                    side,
                    f"{r['runs']:.0f}",
                    f"{r['steps']:.0f}",
                    f"{r['events']:.0f}",
                    f"{r['seconds']:.1f}",
                    f"{r['events'] / r['seconds']:.0f}",
                    f"{r['cpu']:.1f}",
                    f"{r['events'] / r['cpu']:.0f}",
                    f"{r['steps'] / r['cpu']:.0f}",
                    f"{r['judged']:.0f}",
                    f"{r['judged'] / r['cpu']:.0f}",
                )
        console.print(table)
    after = "working tree"
    for rev in revs:
        before_w, after_w = statistics.median(rates[rev]), statistics.median(rates[after])
        cpu_before, cpu_after = statistics.median(cpu_rates[rev]), statistics.median(cpu_rates[after])
        ops_before, ops_after = statistics.median(op_rates[rev]), statistics.median(op_rates[after])
        judged_before, judged_after = statistics.median(judged_rates[rev]), statistics.median(judged_rates[after])
        console.print(
            f"against {rev}: median events/s: before {before_w:.0f}, after {after_w:.0f} "
            f"(after/before {after_w / before_w:.2f}); "
            f"events per CPU-second: before {cpu_before:.0f}, after {cpu_after:.0f} "
            f"(after/before {cpu_after / cpu_before:.2f}); "
            f"operations per CPU-second: before {ops_before:.0f}, after {ops_after:.0f} "
            f"(after/before {ops_after / ops_before:.2f}); "
            f"events judged per CPU-second, the zoo's included: before {judged_before:.0f}, after {judged_after:.0f} "
            f"(after/before {judged_after / judged_before:.2f})"
        )
    console.print(
        f"machine {platform.machine()}, python {platform.python_version()}, "
        f"{os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--slice", default="replication", choices=tuple(SLICES))
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument(
        "--against",
        metavar="REV",
        action="append",
        help="compare with git revision REV (before/after); repeatable: every REV side by side in one run",
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs per side with --against")
    parser.add_argument(
        "--engine",
        default=GATE_ENGINE,
        choices=ENGINES,
        help="the working tree's search engine (the after side; default: the gate's)",
    )
    parser.add_argument(
        "--before-engine",
        default="hypothesis",
        choices=ENGINES,
        help="the search engine of the --against sides (a revision without the walk engine runs only hypothesis)",
    )
    parser.add_argument(
        "--random-only",
        action="store_true",
        help="with --against: every side runs its random search without its zoo (whose CPU the default "
        "campaign counts but whose events it does not), so both sides' CPU and events are of the same runs",
    )
    args = parser.parse_args(argv)
    console = Console()
    if args.against is None:
        return measure_here(args.slice, args.examples, args.steps, console, args.engine)
    try:
        return compare(
            args.against,
            args.slice,
            args.examples,
            args.steps,
            args.rounds,
            console,
            args.engine,
            args.before_engine,
            zoo=not args.random_only,
        )
    except (OSError, subprocess.CalledProcessError, RuntimeError) as e:
        console.print(f"[red]throughput: {e}[/red]")
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
