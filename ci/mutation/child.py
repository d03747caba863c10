"""One mutant through the gate, in its own process (``python -m kconform.ci.mutation.child``).

The mutant is applied by an import hook before anything of ``kconform.impl`` is imported: the
module is compiled from its mutated tree, under its real file name; the tree on disk is never
touched. Then the gate's campaigns run (the zoo, then ``--examples`` Hypothesis runs, the gate's
own ``run_campaign``) for every gate configuration that imports the module, stopping at the first
failure; the process prints one JSON line: what killed the mutant, or that nothing did.

With ``--coverage FILE`` and no mutant it runs the same campaigns on the unmutated reference
under coverage.py (branch coverage of impl/) and writes the data file: which lines the gate
reaches.

Guarantees: the same arguments and the same code give the same JSON (seeded campaigns,
``database=None``, no time budget); nothing but the named module is mutated.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from .operators import mutate

ROOT = Path(__file__).resolve().parents[2]
"""The checkout: module ``kconform.impl.a.b`` is the file ``ROOT/impl/a/b.py``."""


def module_path(module: str) -> Path:
    """The source file of ``kconform.<folder>.<...>`` in this checkout (package-dir maps folders)."""
    parts = module.split(".")
    if parts[0] != "kconform" or len(parts) < 3:
        raise ValueError(f"{module}: not a kconform module")
    return ROOT.joinpath(*parts[1:]).with_suffix(".py")


def module_name(path: Path) -> str:
    """The import name of a source file of this checkout."""
    rel = path.resolve().relative_to(ROOT).with_suffix("")
    return "kconform." + ".".join(rel.parts)


class _MutatedLoader(importlib.abc.Loader):
    def __init__(self, code: CodeType) -> None:
        self.code = code

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(self.code, module.__dict__)


class MutantFinder(importlib.abc.MetaPathFinder):
    """Serves one module's mutated code; every other import goes the usual way."""

    def __init__(self, module: str, code: CodeType, path: Path) -> None:
        self.module = module
        self.code = code
        self.path = path

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _MutatedLoader(self.code), origin=str(self.path))
        spec.has_location = True
        return spec


def install(module: str, mid: str) -> None:
    """Make the next import of ``module`` load mutant ``mid`` of it (before anything imports it)."""
    if module in sys.modules:
        raise RuntimeError(f"{module} is already imported: the mutant would not take effect")
    path = module_path(module)
    code = mutate(path.read_text(encoding="utf-8"), module, mid, str(path))
    sys.meta_path.insert(0, MutantFinder(module, code, path))


def every_slice() -> tuple[str, ...]:
    """Every built-in slice, in the gate's order (conformance.registry.BUILTIN_SLICES)."""
    from kconform.conformance.registry import BUILTIN_SLICES

    return tuple(BUILTIN_SLICES)


def slices_for(module: str) -> tuple[str, ...]:
    """The slices whose gate runs the module: its own slice's, or every slice's for shared code
    (impl/clock.py, network.py, ...: the fetch-session cluster runs on them too)."""
    parts = module.split(".")
    if len(parts) > 3 and parts[1] == "impl":
        return (parts[2],)
    return every_slice()


def run_gate(
    slices: Sequence[str], examples: int, seed: int, adapter_timeout_s: float, engine: str | None = None
) -> dict[str, Any]:
    """The gate's campaigns (zoo + ``examples`` runs per gate configuration of each slice, without
    shrinking, by ``engine``: conformance.hunt.ENGINES, None for the gate's own GATE_ENGINE),
    stopping at the first failure: what found it, or that none did. (The project's modules are
    imported here, not at the top: the mutant's import hook must come first.)"""
    from kconform.ci.options import GATE_ENGINE
    from kconform.conformance.hunt import run_campaign
    from kconform.conformance.registry import get
    from kconform.traces.replay import make_adapter

    started = time.perf_counter()
    checked: list[str] = []
    for slice_name in slices:
        for name, cfg in get(slice_name).gate_configs():

            def factory(cfg: Any = cfg) -> Any:
                return make_adapter("reference", cfg)

            result = run_campaign(
                factory,
                cfg,
                frozenset(),
                seed=seed,
                examples=examples,
                adapter_timeout_s=adapter_timeout_s,
                shrink=False,
                engine=engine or GATE_ENGINE,
            )
            checked.append(name)
            if result.error is not None:
                return _outcome("error", name, str(result.error).splitlines()[0][:300], started, checked)
            if result.failure is not None and result.failure.failure is not None:
                f = result.failure.failure
                zoo = result.examples == 0
                how = f"{f.verdict}: {f.name}" + (" (zoo)" if zoo else "")
                return _outcome("failed", name, how, started, checked)
    return _outcome("passed", None, None, started, checked)


def _outcome(status: str, config: str | None, how: str | None, started: float, checked: list[str]) -> dict[str, Any]:
    return {
        "status": status,
        "config": config,
        "how": how,
        "seconds": round(time.perf_counter() - started, 2),
        "configs": checked,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kconform.ci.mutation.child")
    parser.add_argument("--module", help="the module to mutate (kconform.impl....)")
    parser.add_argument("--mutant", help="the mutant id (ci.mutation.operators.sites)")
    parser.add_argument("--slices", default="", help="comma-separated slices (default: those running the module)")
    parser.add_argument("--examples", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--adapter-timeout", type=float, default=10.0)
    parser.add_argument(
        "--engine", help="the campaigns' search engine (conformance.hunt.ENGINES; default: the gate's, GATE_ENGINE)"
    )
    parser.add_argument("--coverage", type=Path, help="run unmutated under coverage.py, data to this file")
    args = parser.parse_args(argv)
    slices = tuple(s for s in args.slices.split(",") if s)
    if args.coverage is not None:
        import coverage

        cov = coverage.Coverage(data_file=str(args.coverage), branch=True, source=[str(ROOT / "impl")])
        cov.start()
        try:
            outcome = run_gate(slices or every_slice(), args.examples, args.seed, args.adapter_timeout, args.engine)
        finally:
            cov.stop()
            cov.save()
    else:
        if not args.module or not args.mutant:
            parser.error("--module and --mutant are required without --coverage")
        install(args.module, args.mutant)
        outcome = run_gate(
            slices or slices_for(args.module), args.examples, args.seed, args.adapter_timeout, args.engine
        )
    print(json.dumps(outcome), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
