"""The gate's power: mutation score of impl/ with the default gate as the test, and the branch
coverage of impl/ the gate reaches (issue 17).

Run: ``python -m kconform.ci.benchmarks.mutation [--per-module 8 | --all] [--seed 7]
[--examples 200] [--jobs 2] [--timeout 900] [--out mutation.json] [--same-as before.json] [--run-unreached]``.

What it does, in one run:

1. the default gate's campaigns on the unmutated reference (zoo + ``--examples`` runs of every
   gate configuration: replication, exactly-once TV0 and TV2, fetch sessions; ``--seed``; the same code the gate
   runs, without shrinking) under coverage.py with ``branch=True``: the branch coverage of impl/
   per module and in total;
2. the mutants of every module of impl/ (``ci.mutation.operators``: relational swaps, constants
   +/-1, negated conditions, removed guards, min/max swaps, dropped statements), ``--per-module``
   of each module drawn with ``random.Random(--seed)`` (``--all``: every one), each through the
   same campaigns of the configurations that import its module, in a child process with
   ``--timeout``;
3. prints the score per module, the score of the issue's target code (broker, partition, log,
   fetcher, coordinator, transaction log) and every survivor (id, line, the change).

``--engines hypothesis,walk`` classifies the same mutants once per search engine (conformance.hunt)
and prints their scores side by side, with the mutants on which they disagree.

Budget: ``--examples 200`` is the gate's default (``kconform gate`` with no budget). The README's
command runs 2,000; with the same seed its first 200 examples are these (the campaign's rounds
of 100 are seeded by seed and round number), so a mutant killed here is killed there, and
``--examples 2000`` measures the survivors at the README budget. Equivalent mutants are listed
with their argument in ``ci/benchmarks/equivalent_mutants.toml``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kconform.ci.exitcodes import EXIT_ERROR
from kconform.ci.mutation.child import ROOT, module_path
from kconform.ci.mutation.operators import Mutant, after_text
from kconform.ci.mutation.runner import (
    DETECTED,
    STATUSES,
    SURVIVED,
    TIMEOUT,
    UNREACHED,
    Outcome,
    Score,
    all_mutants,
    impl_modules,
    load_equivalents,
    reached_lines,
    run_all,
    run_child,
    sample,
    score,
    scores_by_module,
    target_score,
)
from kconform.ci.options import GATE_ENGINE
from kconform.conformance.hunt import ENGINES

EQUIVALENTS = ROOT / "ci" / "benchmarks" / "equivalent_mutants.toml"
"""In the checkout (ROOT follows the strict editable install's links back to it; next to this
module's link in the install's build tree there is no .toml, and the list would silently be empty)."""


def branch_coverage(data_file: Path) -> tuple[list[tuple[str, float, str]], float]:
    """Per impl/ file: (file, percent, 'covered/total lines+branches'); and the total percent."""
    import coverage

    cov = coverage.Coverage(data_file=str(data_file), branch=True, source=[str(ROOT / "impl")])
    cov.load()
    rows = []
    with open(os.devnull, "w") as sink:
        total = cov.report(file=sink, show_missing=False)
    for f in sorted(cov.get_data().measured_files()):
        analysis = cov._analyze(f)  # the public report API only prints; this is what it reads
        n = analysis.numbers
        rows.append(
            (
                str(Path(f).relative_to(ROOT)),
                n.pc_covered,
                f"{n.n_executed + n.n_executed_branches}/{n.n_statements + n.n_branches}",
            )
        )
    return rows, total


def _score_row(table: Table, s: Score) -> None:
    table.add_row(s.name.removeprefix("kconform."), *(str(s.counts[x]) for x in STATUSES), s.shown)


def _compare_engines(console: Console, by_engine: dict[str, list[Outcome]]) -> None:
    """The same mutants' scores per engine side by side, per module and for the target code, and
    the mutants one engine detected and another did not."""
    engines = list(by_engine)
    first = by_engine[engines[0]]
    table = Table(title="mutation score per engine, same mutants (killed + crashed) / (all - equivalent)")
    table.add_column("module")
    for engine in engines:
        table.add_column(f"{engine} %", justify="right")
        table.add_column(f"{engine} detected", justify="right")
    rows = {engine: {r.name: r for r in scores_by_module(o)} for engine, o in by_engine.items()}
    totals = {engine: target_score(o) for engine, o in by_engine.items()}
    alls = {engine: score("all of impl/", o) for engine, o in by_engine.items()}
    groups = [(name, {e: rows[e][name] for e in engines}) for name in rows[engines[0]]]
    for label, group in [*groups, ("target code", totals), ("all of impl/", alls)]:
        table.add_row(label, *[x for e in engines for x in (group[e].shown, str(group[e].detected))])
    console.print(table)
    for i, o in enumerate(first):
        statuses = [by_engine[e][i].status for e in engines]
        if len({s in DETECTED for s in statuses}) > 1:
            pairs = ", ".join(f"{e}: {st}" for e, st in zip(engines, statuses, strict=True))
            console.print(f"  differs: {o.mutant.mid} ({pairs})", highlight=False)


def same_as(mutants: Sequence[Mutant], path: Path) -> tuple[list[Mutant], int]:
    """The mutants of ``mutants`` that the earlier ``--out`` file ``path`` classified, in order, and
    how many that file held; ValueError naming the file when it is not such a file."""
    try:
        earlier = {str(o["id"]) for o in json.loads(path.read_text(encoding="utf-8"))["outcomes"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"--same-as {path}: not an --out file of this benchmark ({exc!r})") from exc
    return [m for m in mutants if m.mid in earlier], len(earlier)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kconform.ci.benchmarks.mutation", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--per-module", type=int, default=8, help="mutants drawn per module (default 8)")
    parser.add_argument("--all", action="store_true", help="every mutant (hours on 2 cores)")
    parser.add_argument("--seed", type=int, default=7, help="gate seed and sampling seed (default 7)")
    parser.add_argument(
        "--examples", type=int, default=200, help="Hypothesis runs per gate configuration (default: the gate's 200)"
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant before 'timeout'")
    parser.add_argument("--module", action="append", default=[], help="only these modules (kconform.impl....)")
    parser.add_argument(
        "--run-unreached", action="store_true", help="also run mutants whose statement the gate never reaches"
    )
    parser.add_argument("--out", type=Path, help="write every outcome as JSON")
    parser.add_argument(
        "--same-as",
        type=Path,
        metavar="OUT.json",
        help="run the mutants an earlier --out file classified (those that still exist) instead of a draw: "
        "the same mutants side by side after the module's code changed (which changes a draw)",
    )
    parser.add_argument(
        "--engines",
        default=GATE_ENGINE,
        help="comma-separated search engines (conformance.hunt.ENGINES), each over the same mutants; with two "
        "or more the scores are printed side by side (the first engine's outcomes are the tables' and --out's)",
    )
    args = parser.parse_args(argv)
    unknown = [e for e in args.engines.split(",") if e not in ENGINES]
    if unknown or not args.engines:
        parser.error(f"--engines: expected some of {', '.join(ENGINES)}, got {args.engines!r}")
    console = Console(width=200)
    started = time.perf_counter()
    cpu_started = os.times()
    console.print(
        f"mutation score of impl/: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()[0]:.1f}; seed {args.seed}, "
        f"{args.examples} examples per gate configuration"
    )
    modules = args.module or impl_modules()
    mutants = all_mutants(modules)
    if args.same_as is not None:
        try:
            chosen, earlier = same_as(mutants, args.same_as)
        except ValueError as exc:
            console.print(f"[red]{exc}[/red]")
            return EXIT_ERROR
        console.print(f"--same-as {args.same_as}: {len(chosen)} of its {earlier} mutants still exist")
    else:
        chosen = sample(mutants, None if args.all else args.per_module, args.seed)
    equivalents = load_equivalents(EQUIVALENTS)
    with tempfile.TemporaryDirectory(prefix="kconform-mutation-") as tmp:
        data = Path(tmp) / "coverage.data"
        code, out, err = run_child(
            ["--coverage", str(data), "--examples", str(args.examples), "--seed", str(args.seed)], args.timeout * 3
        )
        if code != 0:
            console.print(f"[red]the unmutated gate did not run: {err.strip().splitlines()[-1:]}[/red]")
            return 2
        if json.loads(out.splitlines()[-1])["status"] != "passed":
            console.print(f"[red]the unmutated gate does not pass: {out}[/red]")
            return 2
        reached = None if args.run_unreached else reached_lines(data)
        rows, total = branch_coverage(data)
    cov_table = Table(title=f"branch coverage of impl/ by the default gate (statements + branches): {total:.1f} %")
    cov_table.add_column("file")
    cov_table.add_column("%", justify="right")
    cov_table.add_column("covered/total", justify="right")
    for f, pc, frac in rows:
        cov_table.add_row(f, f"{pc:.1f}", frac)
    console.print(cov_table)
    console.print(
        f"{len(mutants)} mutants in {len(set(m.module for m in mutants))} modules; "
        + (
            "all run"
            if args.all
            else f"{len(chosen)} of {args.same_as}"
            if args.same_as is not None
            else f"{len(chosen)} drawn ({args.per_module} per module, random.Random({args.seed}))"
        )
    )

    def progress(o: Outcome) -> None:
        console.print(f"  {o.status:9} {o.seconds:6.1f} s  {o.mutant.mid}  {o.how}", highlight=False)

    engines = [e for e in args.engines.split(",") if e]
    by_engine: dict[str, list[Outcome]] = {}
    for engine in engines:
        if len(engines) > 1:
            console.print(f"engine {engine}:")
        by_engine[engine] = run_all(
            chosen,
            examples=args.examples,
            seed=args.seed,
            timeout_s=args.timeout,
            jobs=args.jobs,
            equivalents=equivalents,
            reached=reached,
            progress=progress,
            engine=engine,
        )
    outcomes = by_engine[engines[0]]
    table = Table(title="mutation score per module (killed + crashed) / (all - equivalent)")
    table.add_column("module")
    for status in STATUSES:
        table.add_column(status, justify="right")
    table.add_column("score %", justify="right")
    for row in scores_by_module(outcomes):
        _score_row(table, row)
    _score_row(table, target_score(outcomes))
    _score_row(table, score("all of impl/", outcomes))
    console.print(table)
    survivors = [o for o in outcomes if o.status in (SURVIVED, UNREACHED, TIMEOUT)]
    console.print(f"survivors ({len(survivors)}):")
    sources: dict[str, str] = {}
    for o in survivors:
        m = o.mutant
        src = sources.setdefault(m.module, module_path(m.module).read_text(encoding="utf-8"))
        console.print(f"  [{o.status}] {m.mid} line {m.line}: {m.before!r} -> {after_text(src, m)!r}", highlight=False)
    if len(engines) > 1:
        _compare_engines(console, by_engine)
    wall = time.perf_counter() - started
    cpu = os.times()
    children_cpu = (cpu.children_user + cpu.children_system) - (cpu_started.children_user + cpu_started.children_system)
    console.print(f"{wall:.0f} s wall, {children_cpu:.0f} CPU-s in the children, {len(outcomes)} mutants classified")
    if args.out is not None:
        doc = {
            "seed": args.seed,
            "examples": args.examples,
            "coverage_percent": total,
            "outcomes": [
                {
                    "id": o.mutant.mid,
                    "module": o.mutant.module,
                    "line": o.mutant.line,
                    "status": o.status,
                    "how": o.how,
                    "seconds": o.seconds,
                }
                for o in outcomes
            ],
            "detected": sum(1 for o in outcomes if o.status in DETECTED),
        }
        args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
