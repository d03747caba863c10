"""The invariant memo's cost alone, before / after: ``model.guarantees.Registry``'s memoised checks
of git revision ``REV`` against this tree's, side by side in one process.

Run: ``python -m kconform.ci.benchmarks.memo --against REV [--examples 300] [--rounds 20]``.

One seeded walk campaign of the replication slice (no zoo) records every ``check_state`` call that
goes through a memo (state, config, names, which memo). Those calls are then replayed, each round
with fresh memos, through ``REV``'s ``Registry.check_state`` and the memo methods it calls
(``model/guarantees.py`` of ``REV``, loaded beside this tree's) and through this tree's,
alternately, the order swapped every round, and the process CPU time of each replay is printed:
the medians and their ratio, the minima and theirs (on a loaded machine the minima are the steadier
figure), with machine, date and load. Both sides' verdicts must be equal, call by call, or no figure
is printed (exit 2). The throughput benchmark measures the whole judge; this one isolates the memo,
whose share of a campaign (about a tenth of its CPU) is within that benchmark's noise on a shared
machine. The replication slice's registry checks through ``Parts``, which runs the whole memo loop;
the exactly-once slice's checks go through its own check plan (model.txn_invariants), and a
campaign of it makes no call to the registry's memo (none to replay), nor does the fetch-session
slice's.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS
from kconform.conformance.hunt import run_campaign
from kconform.model import guarantees
from kconform.model.configs import config_from_json
from kconform.traces.replay import make_adapter

METHODS = ("check_state", "_check_parts", "_memo_loop", "_states")
"""The Registry methods a memoised check runs: swapped whole between the sides (a side lacking one
runs without it)."""

Call = tuple[guarantees.Registry[Any, Any], object, object, frozenset[str] | None, int]
"""(registry, state, config, names, the memo's id)."""


@dataclass(frozen=True)
class Figures:
    """The replays' CPU seconds, side by side: ``calls`` replayed per round."""

    calls: int
    before: list[float]
    after: list[float]


def record(examples: int, seed: int = 1) -> list[Call]:
    """Every memoised ``check_state`` call of one seeded walk campaign of the replication slice (no zoo)."""
    cfg = config_from_json({})
    calls: list[Call] = []
    real = guarantees.Registry.check_state

    def recording(self: Any, s: Any, c: Any, names: Any = None, memo: Any = None) -> Any:
        if memo is not None:
            calls.append((self, s, c, names, id(memo)))
        return real(self, s, c, names, memo)

    guarantees.Registry.check_state = recording  # type: ignore[method-assign,assignment]
    try:
        run_campaign(
            lambda: make_adapter("reference", cfg),
            cfg,
            frozenset(),
            seed=seed,
            examples=examples,
            engine="walk",
            zoo=False,
        )
    finally:
        guarantees.Registry.check_state = real  # type: ignore[method-assign]
    return calls


def load_before(source: str) -> dict[str, Callable[..., Any] | None]:
    """The memo methods of a ``model/guarantees.py`` source (None: the side has no such method),
    compiled as a module of their own whose ``equal_inputs`` / ``same_inputs`` are this tree's (a
    registry's ``same`` is this tree's function, which the memo compares by identity)."""
    module = types.ModuleType("kconform_memo_before")
    sys.modules[module.__name__] = module  # dataclasses look their module up while the class is made
    try:
        exec(compile(source, "before/model/guarantees.py", "exec"), vars(module))
    finally:
        del sys.modules[module.__name__]
    module.equal_inputs = guarantees.equal_inputs  # type: ignore[attr-defined]
    module.same_inputs = guarantees.same_inputs  # type: ignore[attr-defined]
    registry = vars(module)["Registry"]
    return {name: vars(registry).get(name) for name in METHODS}


def _methods_here() -> dict[str, Callable[..., Any] | None]:
    return {name: vars(guarantees.Registry).get(name) for name in METHODS}


def _use(methods: dict[str, Callable[..., Any] | None], registries: Sequence[guarantees.Registry[Any, Any]]) -> None:
    for name, fn in methods.items():
        if fn is None:
            if name in vars(guarantees.Registry):
                delattr(guarantees.Registry, name)
        else:
            setattr(guarantees.Registry, name, fn)
    for reg in registries:
        reg._state_entries = (-1, ())  # built again by the side's own _states


def replay(calls: Sequence[Call]) -> list[list[guarantees.Violation]]:
    """Every call again, with fresh memos (one per memo of the campaign)."""
    memos: dict[int, guarantees.Memo] = {}
    return [reg.check_state(s, c, names, memos.setdefault(m, {})) for reg, s, c, names, m in calls]


def compare(calls: Sequence[Call], before: dict[str, Callable[..., Any] | None], rounds: int) -> Figures:
    """CPU seconds of each side's replay of ``calls``, alternately (the order swapped every round).
    Raises ValueError when the sides' verdicts differ (then there is nothing to compare)."""
    here = _methods_here()
    registries = list({id(c[0]): c[0] for c in calls}.values())  # a registry is not hashable
    times: dict[str, list[float]] = {"before": [], "after": []}
    verdicts: dict[str, list[list[guarantees.Violation]]] = {}
    try:
        for r in range(rounds):
            for side in ("before", "after") if r % 2 == 0 else ("after", "before"):
                _use(before if side == "before" else here, registries)
                start = time.process_time()
                verdicts[side] = replay(calls)
                times[side].append(time.process_time() - start)
                if "before" in verdicts and "after" in verdicts and verdicts["before"] != verdicts["after"]:
                    raise ValueError("the two sides' verdicts differ: no figure")
    finally:
        _use(here, registries)
    return Figures(len(calls), times["before"], times["after"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--against", metavar="REV", required=True, help="the git revision of the before side")
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=20, help="replays per side, alternating")
    args = parser.parse_args(argv)
    repo = Path(__file__).resolve().parents[2]
    try:
        source = subprocess.run(
            ["git", "-C", str(repo), "show", f"{args.against}:model/guarantees.py"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        before = load_before(source)
        calls = record(args.examples)
        if not calls:
            raise ValueError("the campaign made no memoised check: nothing to replay")
        figures = compare(calls, before, args.rounds)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
        print(f"memo: {e}", file=sys.stderr)
        return EXIT_ERROR
    b, a = statistics.median(figures.before), statistics.median(figures.after)
    print(
        f"{figures.calls:,} memoised check_state calls (replication, {args.examples} examples, seed 1, no zoo), "
        f"{args.rounds} alternated replays per side: CPU s median {args.against} {b:.4f}, this tree {a:.4f} "
        f"(this tree / {args.against} {a / b:.3f}); minimum {min(figures.before):.4f}, {min(figures.after):.4f} "
        f"({min(figures.after) / min(figures.before):.3f})"
    )
    print(
        f"machine {platform.machine()}, python {platform.python_version()}, {os.cpu_count()} cores, "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    return EXIT_PASS


if __name__ == "__main__":
    raise SystemExit(main())
