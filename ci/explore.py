"""``kconform explore``: breadth-first search of the model alone, with a replayable counterexample.

Runs the breadth-first search of the config's slice (conformance.registry.search_of: for replication
conformance.replication.explore over the atomic actions of model.actions), shows progress, prints
the states per depth, the distinct states, the time and whether the bound was exhausted. On a
violation it prints the shortest path (one action per line), writes it as a counterexample file
(the slice's ``ModelSearch.counterexample``: the same handler calls as events, judged model-only
by ``kconform replay FILE --model-only``) and exits 1; no violation within the bound exits 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kconform.ci.exitcodes import EXIT_PASS, EXIT_VIOLATION
from kconform.ci.options import ExploreOptions
from kconform.conformance.registry import for_config, search_of
from kconform.conformance.slice import ModelSearch
from kconform.traces.counterexample import write_counterexample


def counterexample_path(options: ExploreOptions) -> Path:
    """Where the counterexample goes: ``<out>/explore-<label>.jsonl`` (replication: the protocol rung)."""
    return options.out / f"explore-{_search(options).label(options.config)}.jsonl"


def _search(options: ExploreOptions) -> ModelSearch[Any]:
    return search_of(for_config(options.config))


def run_explore(options: ExploreOptions, console: Console | None = None) -> int:
    """Explore, print the figures, write the counterexample if any; EXIT_VIOLATION on a violation,
    EXIT_PASS when none exists within the bounds (exhausted or cut off: the output says which)."""
    console = console or Console()
    cfg, bounds, search = options.config, options.bounds, _search(options)
    checked = "all invariants" if options.invariants is None else ", ".join(sorted(options.invariants))
    console.print(
        f"exploring {search.header(cfg)}, "
        f"{bounds.max_records} records, leader epochs <= {bounds.max_leader_epoch}"
        + (f", partition epochs <= {bounds.max_partition_epoch}" if bounds.max_partition_epoch is not None else "")
        + (", crashes" if bounds.allow_crash else "")
        + (", clock jumps" if bounds.allow_tick else "")
        + f"; checking {checked}",
        soft_wrap=True,
    )
    result = _explore(search, options, console)
    console.print(_depth_table(result))
    console.print(_figures(result, options), soft_wrap=True)
    v = result.violation
    if v is None:
        console.print("[green]no violation[/green] within the bounds")
        return EXIT_PASS
    console.print(
        f"[bold red]invariant-violation[/bold red] {v.invariant} at depth {v.depth}: {escape(v.message)}",
        soft_wrap=True,
    )
    return write_violation(
        console,
        "shortest path from the booted cluster (broker 0 leading epoch 0):",
        v.path,
        lambda: search.counterexample(cfg, bounds, v, options.invariants),
        counterexample_path(options),
    )


def write_violation(console: Console, heading: str, labels: Sequence[str], cx: Callable[[], Any], path: Path) -> int:
    """The end of a model search that found a violation (``kconform explore`` and ``kconform bmc``):
    ``heading``, the run's actions one numbered line each, then the counterexample ``cx()`` written
    to ``path`` (its folder made) and the command that replays it; EXIT_VIOLATION."""
    console.print(heading)
    for i, label in enumerate(labels, start=1):
        console.print(f"  {i:>3}. {escape(label)}")
    made = cx()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_counterexample(path, made)
    console.print(
        f"counterexample written to {escape(str(path))}; replay with: kconform replay {escape(str(path))} --model-only",
        soft_wrap=True,
    )
    return EXIT_VIOLATION


def _explore(search: ModelSearch[Any], options: ExploreOptions, console: Console) -> Any:
    def run(progress: Progress | None = None) -> Any:
        if progress is None:
            return search.explore(
                options.config, options.bounds, options.invariants, options.max_depth, options.max_states
            )
        task = progress.add_task("exploring", total=options.max_states, depth=0)
        return search.explore(
            options.config,
            options.bounds,
            options.invariants,
            options.max_depth,
            options.max_states,
            progress=lambda depth, _new, known: progress.update(task, completed=known, depth=depth),
        )

    if not options.progress:
        return run()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,.0f} states (cap {task.total:,.0f}), depth {task.fields[depth]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        return run(progress)


def _depth_table(result: Any) -> Table:
    table = Table(title="distinct states first reached per depth")
    table.add_column("depth", justify="right")
    table.add_column("new states", justify="right")
    table.add_column("total", justify="right")
    total = 0
    for depth, n in enumerate(result.states_per_depth):
        total += n
        table.add_row(str(depth), f"{n:,}", f"{total:,}")
    return table


def _figures(result: Any, options: ExploreOptions) -> str:
    if result.exhausted:
        status = "exhausted: every reachable state within the bounds was explored"
    elif result.violation is not None:
        status = "stopped at the first violation"
    elif result.distinct_states >= options.max_states:
        status = f"not exhausted: stopped at --max-states {options.max_states:,}"
    else:
        status = f"not exhausted: stopped at --max-depth {options.max_depth}"
    return (
        f"{result.distinct_states:,} distinct states, {result.edges:,} transitions, depth {result.max_depth}, "
        f"{result.seconds:.2f} s; {status}"
    )
