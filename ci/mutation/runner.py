"""Mutation testing of impl/ with the gate as the test: which mutants the gate kills.

Each mutant runs in a child process (``ci.mutation.child``) with a wall-clock timeout; the tree
on disk is never edited. A mutant is classified:

- ``killed``: the gate found a non-conformance or invariant violation (``how`` says which and in
  which configuration, "(zoo)" when a zoo scenario found it);
- ``crashed``: the mutated reference raised or hung past the adapter timeout; the gate stops
  with "the implementation failed" (exit 2): it does not pass the implementation, so this counts
  as killed;
- ``survived``: every campaign passed;
- ``unreached``: the mutated statement never ran in the unmutated gate with the same seed and
  budget (coverage.py); the mutated run is then the same run event for event, so the mutant
  survives without being run (counted as survived; ``--run-unreached`` runs them anyway);
- ``timeout``: the child ran past ``timeout_s`` (counted as not killed);
- ``equivalent``: listed with a written argument in ``equivalent_mutants.toml`` (not run, not
  counted).

Score = (killed + crashed) / (mutants - equivalent).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kconform.ci.options import GATE_ENGINE

from .child import ROOT, module_name, module_path
from .operators import Mutant, sites

KILLED = "killed"
CRASHED = "crashed"
SURVIVED = "survived"
UNREACHED = "unreached"
TIMEOUT = "timeout"
EQUIVALENT = "equivalent"
STATUSES = (KILLED, CRASHED, SURVIVED, UNREACHED, TIMEOUT, EQUIVALENT)
DETECTED = frozenset({KILLED, CRASHED})

SKIPPED_FILES = frozenset({"__init__.py", "mutants.py"})
"""Not mutated: package markers and the registries of the named mutants (name → description)."""

TARGET_GROUPS: dict[str, tuple[str, ...]] = {
    "broker": ("kconform.impl.replication.broker", "kconform.impl.txn.broker"),
    "partition": ("kconform.impl.replication.partition",),
    "log": ("kconform.impl.replication.log",),
    "fetcher": ("kconform.impl.replication.fetcher",),
    "coordinator": ("kconform.impl.txn.coordinator",),
    "transaction-log": ("kconform.impl.txn.log",),
}
"""The code issue 17's target (>= 90 % killed) is about, by the name the issue gives it."""


class EquivalentsError(ValueError):
    """The equivalent-mutants file is malformed (names the file and the entry)."""


def impl_modules(root: Path = ROOT) -> list[str]:
    """Every module of impl/ that gets mutants, sorted."""
    files = sorted(p for p in (root / "impl").rglob("*.py") if p.name not in SKIPPED_FILES)
    return [module_name(p) for p in files]


def all_mutants(modules: Iterable[str]) -> list[Mutant]:
    """Every mutant of ``modules``, module by module in source order."""
    out: list[Mutant] = []
    for module in modules:
        out.extend(sites(module_path(module).read_text(encoding="utf-8"), module))
    return out


def load_equivalents(path: Path) -> dict[str, str]:
    """Mutant id → the written argument that it is equivalent (``[mutant."ID"] argument = "..."``)."""
    if not path.exists():
        return {}
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise EquivalentsError(f"{path}: {exc}") from exc
    out = {}
    for mid, entry in doc.get("mutant", {}).items():
        argument = entry.get("argument") if isinstance(entry, dict) else None
        if not isinstance(argument, str) or len(argument.split()) < 8:
            raise EquivalentsError(f"{path}: mutant {mid!r}: 'argument' must say why (a sentence, 8+ words)")
        out[mid] = argument
    return out


def sample(mutants: Sequence[Mutant], per_module: int | None, seed: int) -> list[Mutant]:
    """``per_module`` mutants of each module drawn with ``random.Random(seed)`` (all of a module
    that has fewer), in the input order; every mutant if ``per_module`` is None."""
    if per_module is None:
        return list(mutants)
    rng = random.Random(seed)
    by_module: dict[str, list[Mutant]] = {}
    for m in mutants:
        by_module.setdefault(m.module, []).append(m)
    chosen: set[str] = set()
    for module in sorted(by_module):
        ms = by_module[module]
        chosen.update(x.mid for x in (ms if len(ms) <= per_module else rng.sample(ms, per_module)))
    return [m for m in mutants if m.mid in chosen]


@dataclass(frozen=True)
class Outcome:
    """What the gate did to one mutant."""

    mutant: Mutant
    status: str
    how: str
    seconds: float


def run_child(args: Sequence[str], timeout_s: float) -> tuple[int | None, str, str]:
    """Run the child (``ci.mutation.child``) with ``args`` and PYTHONHASHSEED=0 (see run_command)."""
    return run_command([sys.executable, "-m", "kconform.ci.mutation.child", *args], timeout_s)


def run_command(argv: Sequence[str], timeout_s: float) -> tuple[int | None, str, str]:
    """Run ``argv``; (exit code or None on timeout, stdout, stderr). On timeout, error or Ctrl-C
    the process and its whole process group are killed and reaped."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.Popen(
        list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return proc.returncode, out, err


def classify(code: int | None, stdout: str, stderr: str) -> tuple[str, str]:
    """(status, how) from the child's exit code and output."""
    if code is None:
        return TIMEOUT, "child ran past its timeout"
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if code != 0 or not lines:
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        return CRASHED, f"the mutated reference failed to load or run: {last[:200]}"
    result = json.loads(lines[-1])
    status = {"failed": KILLED, "error": CRASHED, "passed": SURVIVED}[result["status"]]
    how = f"{result['config']}: {result['how']}" if result["config"] else f"passed {','.join(result['configs'])}"
    return status, how


def run_mutant(m: Mutant, examples: int, seed: int, timeout_s: float, engine: str = GATE_ENGINE) -> Outcome:
    args = ["--module", m.module, "--mutant", m.mid, "--examples", str(examples), "--seed", str(seed)]
    args += ["--engine", engine]
    code, out, err = run_child(args, timeout_s)
    status, how = classify(code, out, err)
    seconds = 0.0
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if lines:
        seconds = float(json.loads(lines[-1]).get("seconds", 0.0))
    return Outcome(m, status, how, seconds)


def reached_lines(coverage_file: Path) -> dict[str, set[int]]:
    """Source file → first lines of the statements the covered run executed.

    coverage.py records the lines the interpreter reported, and a statement spread over several
    lines may never report its first one (``if (`` on its own line: the test's code sits on the
    lines below); the mutants name a statement by its first line (``Mutant.stmt_line``), so every
    recorded line is mapped to the first line of its statement, as coverage.py's own analysis does
    (coverage.parser.PythonParser.first_lines). Without it such statements looked unreached and their mutants were
    counted as survivors without being run."""
    import coverage
    from coverage.parser import PythonParser

    data = coverage.CoverageData(basename=str(coverage_file))
    data.read()
    reached: dict[str, set[int]] = {}
    for f in data.measured_files():
        lines = set(data.lines(f) or ())
        parser = PythonParser(filename=f)
        parser.parse_source()
        reached[str(Path(f).resolve())] = lines | set(parser.first_lines(lines))
    return reached


def is_reached(m: Mutant, reached: dict[str, set[int]]) -> bool:
    """Whether the statement the mutant changes ran in the covered run (module-level and class-level
    statements run at import, so they count as reached)."""
    if m.function == "<module>":
        return True
    lines = reached.get(str(module_path(m.module).resolve()), set())
    return m.stmt_line in lines


def run_all(
    mutants: Sequence[Mutant],
    *,
    examples: int,
    seed: int,
    timeout_s: float,
    jobs: int,
    equivalents: dict[str, str],
    reached: dict[str, set[int]] | None,
    progress: Callable[[Outcome], None] | None = None,
    engine: str = GATE_ENGINE,
) -> list[Outcome]:
    """Classify every mutant (in parallel ``jobs`` children, campaigns by ``engine``); outcomes in
    the input order."""
    outcomes: dict[str, Outcome] = {}
    to_run = []
    for m in mutants:
        if m.mid in equivalents:
            outcomes[m.mid] = Outcome(m, EQUIVALENT, equivalents[m.mid], 0.0)
        elif reached is not None and not is_reached(m, reached):
            outcomes[m.mid] = Outcome(m, UNREACHED, "the statement never runs in the gate", 0.0)
        else:
            to_run.append(m)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for outcome in pool.map(lambda m: run_mutant(m, examples, seed, timeout_s, engine), to_run):
            outcomes[outcome.mutant.mid] = outcome
            if progress is not None:
                progress(outcome)
    return [outcomes[m.mid] for m in mutants]


@dataclass(frozen=True)
class Score:
    """Counts per status of one module (or group) and the score over its non-equivalent mutants."""

    name: str
    counts: dict[str, int]

    @property
    def scored(self) -> int:
        return sum(self.counts.values()) - self.counts.get(EQUIVALENT, 0)

    @property
    def detected(self) -> int:
        return sum(self.counts.get(s, 0) for s in DETECTED)

    @property
    def percent(self) -> float:
        return 100.0 * self.detected / self.scored if self.scored else 100.0

    @property
    def shown(self) -> str:
        """The score as a table shows it: ``-`` when no mutant was scored (nothing measured is not 100 %)."""
        return f"{self.percent:.1f}" if self.scored else "-"


def score(name: str, outcomes: Iterable[Outcome]) -> Score:
    counts = {s: 0 for s in STATUSES}
    for o in outcomes:
        counts[o.status] += 1
    return Score(name, counts)


def scores_by_module(outcomes: Sequence[Outcome]) -> list[Score]:
    modules = sorted({o.mutant.module for o in outcomes})
    return [score(mod, (o for o in outcomes if o.mutant.module == mod)) for mod in modules]


def target_score(outcomes: Sequence[Outcome]) -> Score:
    """The score over the issue's target code (TARGET_GROUPS)."""
    modules = {m for group in TARGET_GROUPS.values() for m in group}
    return score(
        "target (broker, partition, log, fetcher, coordinator, txn log)",
        (o for o in outcomes if o.mutant.module in modules),
    )
