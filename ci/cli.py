"""The ``kconform`` command line: ``gate``, ``replay``, ``explore``, ``bmc``, ``generate``, ``convert``,
``mine``, ``probe``, ``serve``, ``logs``, ``scenarios``, ``mutants``, ``--version``.

This module only turns argv into validated options and hands them to the engines
(kconform.ci.gate.run_gate, kconform.traces.replay.run_replay, kconform.ci.explore.run_explore),
imported lazily so that ``kconform --version`` or a bad flag never pays for (or trips over)
loading them.

Every user error (bad flag, config file or value, unknown mutant, unreadable trace file) is one
line on stderr starting with ``kconform: error:`` and exit code 2 (EXIT_ERROR); an unexpected
exception is an internal error: traceback, then exit code 2, never 1, which means "violation".
"""

from __future__ import annotations

import argparse
import difflib
import math
import sys
import traceback
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.ci.options import (
    DEFAULT_OUT_DIR,
    GATE_ENGINE,
    IMPLEMENTATIONS,
    ExploreOptions,
    GateOptions,
    ReplayOptions,
)
from kconform.conformance import registry
from kconform.conformance.hunt import ENGINES
from kconform.model.actions import SearchBounds
from kconform.model.config import ConfigError
from kconform.model.configs import AnyConfig, slice_of
from kconform.model.settings import kafka_names
from kconform.traces.counterexample import MODEL_IMPLEMENTATION, TraceFileError, read_counterexample
from kconform.traces.inputs import jsontext
from kconform.traces.inputs.config import parse_config
from kconform.traces.inputs.errors import InputError
from kconform.traces.operations import ModelAction

PROG = "kconform"
DISTRIBUTION = "kafka-conformance"

_KAFKA_CONFIG_NAMES: dict[str, str] = kafka_names()
"""Kafka property names --set accepts besides the config's own field names, from the settings
table (``min.insync.replicas`` and the other dotted names map mechanically: dots and dashes become
underscores)."""

_Options = TypeVar("_Options")

ALL_SLICES = "all"
"""``--slice all``: every slice, one after the other, one verdict."""


class UserError(Exception):
    """A problem with what the user gave us; reported as one ``kconform: error:`` line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors become UserError instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see '{self.prog} --help')")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (kconform.ci.exitcodes)."""
    try:
        if any("\x00" in arg for arg in (sys.argv[1:] if argv is None else argv)):
            raise UserError("an argument holds a NUL byte (no path or value can)")
        try:
            args = _parser().parse_args(argv)
        except SystemExit as e:  # --help and --version print and "exit" with 0
            return e.code if isinstance(e.code, int) else EXIT_PASS
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except (UserError, InputError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; no verdict", file=sys.stderr)
        return EXIT_ERROR
    except OSError as e:
        if e.filename is None:
            raise
        # A path the user gave cannot be used (too long, not a directory, no permission, ...).
        print(f"{PROG}: error: {e.filename}: {e.strerror or e}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:
        traceback.print_exc()
        print(
            f"{PROG}: internal error (a bug in kconform, please report it): {type(e).__name__}: {e}",
            file=sys.stderr,
        )
        return EXIT_ERROR


# --------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------


def _parser() -> _Parser:
    parser = _Parser(prog=PROG, description="Conformance suite for Apache Kafka's replication protocol.")
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    commands = parser.add_subparsers(title="commands", dest="command", required=True, metavar="COMMAND")

    gate = commands.add_parser(
        "gate",
        help="run the conformance gate (exit 0 pass, 1 violation, 2 error)",
        description="Drive the implementation with generated operations, judge every event against the model "
        "and check the invariants; on failure write a counterexample file.",
    )
    budget = gate.add_mutually_exclusive_group()
    budget.add_argument("--examples", type=_positive_int, metavar="N", help="number of generated runs")
    budget.add_argument("--seconds", type=_positive_float, metavar="S", help="time budget instead of --examples")
    gate.add_argument("--seed", type=_non_negative_int, metavar="N", help="random seed (default: chosen and printed)")
    _add_config_arguments(gate)
    gate.add_argument(
        "--slice",
        choices=(*registry.names(), ALL_SLICES),
        help="which protocols to check: replication (default), txn (idempotent producer, transactions, "
        "read_committed; same as --set slice=txn), fetch (KIP-227 fetch sessions; same as --set slice=fetch) "
        "or all (replication, then txn with transaction versions 0 and 2, then fetch, each with the whole "
        "budget and its default configuration)",
    )
    gate.add_argument("--implementation", choices=IMPLEMENTATIONS, default=IMPLEMENTATIONS[0])
    gate.add_argument(
        "--mutant",
        dest="mutants",
        action="append",
        default=[],
        metavar="NAME",
        help="inject a known bug into the implementation (repeatable; see 'kconform mutants')",
    )
    gate.add_argument("--self-check", action="store_true", help="also check that the suite catches every mutant")
    gate.add_argument("--junit", type=Path, metavar="PATH", help="write a JUnit XML report")
    gate.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT_DIR,
        metavar="DIR",
        help=f"counterexample files (default: {DEFAULT_OUT_DIR})",
    )
    gate.add_argument("--steps", type=_positive_int, metavar="N", help="maximum operations per run")
    gate.add_argument(
        "--min-coverage",
        type=_percentage,
        metavar="PERCENT",
        help="fail (exit 1) a passing run that exercised fewer of the model's reachable handler outcomes",
    )
    gate.add_argument(
        "--engine",
        choices=ENGINES,
        default=GATE_ENGINE,
        help="random search by a seeded random walk over the slice's rules (walk, the default: 2-3x the events per "
        "CPU-second, its own shrinker) or by Hypothesis (targeting, Hypothesis' shrinker; docs/benchmarks.md)",
    )
    gate.add_argument(
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="--slice all: run the configurations in N worker processes at once (default: one per core, at most "
        "one per configuration; 1: one after the other in this process); the output, files, table and exit code "
        "are the same",
    )
    gate.add_argument("--no-progress", action="store_true", help="no progress display")
    gate.set_defaults(handler=_cmd_gate)

    replay = commands.add_parser(
        "replay",
        help="replay a counterexample file",
        description="Re-run a counterexample file's operations and show the first step where implementation "
        "and model diverge.",
    )
    replay.add_argument("file", type=Path, metavar="FILE")
    replay.add_argument(
        "--implementation", choices=IMPLEMENTATIONS, default=None, help="default: the one the file names"
    )
    replay.add_argument(
        "--model-only", action="store_true", help="judge the recorded events; do not run any implementation"
    )
    replay.add_argument(
        "--timeout",
        type=_positive_float,
        default=ReplayOptions.step_timeout_s,
        metavar="S",
        help="the longest one step may take, running and judging (default: %(default)s s; past it: exit 2 "
        "naming the step)",
    )
    replay.add_argument(
        "--run-timeout",
        type=_positive_float,
        default=ReplayOptions.run_timeout_s,
        metavar="S",
        help="the longest the whole replay may take (default: %(default)s s)",
    )
    replay.set_defaults(handler=_cmd_replay)

    _add_explore_parser(commands)
    _add_bmc_parser(commands)

    # Trace corpora (docs/traces.md): generate, convert, mine. Their engines are imported on use.
    from kconform.ci import convert, generate, logs, mine, probe, scenarios, serve

    generate.add_parser(commands, _add_config_arguments, _load_any_config)
    convert.add_parser(commands)
    mine.add_parser(commands)
    probe.add_parser(commands)
    serve.add_parser(commands)  # the reference cluster on the wire (docs/serve.md)
    logs.add_parser(commands)
    scenarios.add_parser(commands)  # Kafka's own tests as the yardstick (docs/yardstick.md)

    mutants = commands.add_parser("mutants", help="list the known mutants", description="List the known mutants.")
    mutants.set_defaults(handler=_cmd_mutants)
    return parser


def _add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """--config and --set, shared by the commands that search a slice's model (_load_config)."""
    parser.add_argument("--config", type=Path, metavar="FILE.json", help="replication config as a JSON object")
    parser.add_argument(
        "--set",
        dest="settings",
        type=_setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config key; VALUE is JSON if it parses (e.g. --set min.insync.replicas=3 "
        "--set protocol=kip-101); repeatable, applied after --config",
    )


def _add_search_slice_argument(parser: argparse.ArgumentParser) -> None:
    """``--slice`` of explore and bmc: any registered slice name, so that a slice without a model
    search is refused by _load_config with a sentence (exit 2) rather than by argparse."""
    parser.add_argument(
        "--slice",
        choices=registry.names(),
        help="the slice whose model to search (default: replication, today the only one with a model "
        "search; same as --set slice=NAME)",
    )


def _slice_setting(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """``--slice NAME`` as the ``slice`` setting (the config's slice key), or nothing."""
    return [("slice", args.slice)] if args.slice else []


def _add_explore_parser(commands: Any) -> None:
    defaults = SearchBounds()
    explore = commands.add_parser(
        "explore",
        help="breadth-first search of the model alone (exit 0 none within the bounds, 1 violation, 2 error)",
        description="Explore every interleaving of the model's atomic actions from the booted cluster, breadth "
        "first; on an invariant violation print a shortest path and write it as a counterexample file "
        "(replay it with 'kconform replay FILE --model-only').",
    )
    _add_config_arguments(explore)
    _add_search_slice_argument(explore)
    explore.add_argument("--replicas", type=_positive_int, metavar="N", help="replicas (same as --set replicas=N)")
    explore.add_argument(
        "--records",
        type=_non_negative_int,
        default=defaults.max_records,
        metavar="N",
        help="records written at most (default: %(default)s)",
    )
    explore.add_argument(
        "--max-epoch",
        type=_non_negative_int,
        default=defaults.max_leader_epoch,
        metavar="N",
        help="highest leader epoch the controller may publish (default: %(default)s)",
    )
    explore.add_argument(
        "--max-partition-epoch",
        type=_non_negative_int,
        metavar="N",
        help="highest partition epoch (default: none; a bound makes the space finite)",
    )
    explore.add_argument("--crash", action="store_true", help="also crash, restart and checkpoint brokers")
    explore.add_argument("--tick", action="store_true", help="also jump the clock past replica.lag.time.max.ms")
    explore.add_argument(
        "--invariant",
        dest="invariants",
        action="append",
        default=[],
        metavar="NAME",
        help="check only this invariant (repeatable; default: all)",
    )
    explore.add_argument(
        "--max-depth",
        type=_positive_int,
        default=ExploreOptions.max_depth,
        metavar="N",
        help="deepest level explored (default: %(default)s)",
    )
    explore.add_argument(
        "--max-states",
        type=_positive_int,
        default=ExploreOptions.max_states,
        metavar="N",
        help="distinct states at most (default: %(default)s)",
    )
    explore.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT_DIR,
        metavar="DIR",
        help=f"counterexample file directory (default: {DEFAULT_OUT_DIR}; the file is explore-<protocol>.jsonl)",
    )
    explore.add_argument("--no-progress", action="store_true", help="no progress display")
    explore.set_defaults(handler=_cmd_explore)


def _add_bmc_parser(commands: Any) -> None:
    """``kconform bmc`` (issue 5): z3 bounded model checking; flags mirror ``explore``."""
    defaults = SearchBounds()
    bmc = commands.add_parser(
        "bmc",
        help="z3 bounded model checking of the model (exit 0 UNSAT up to --steps, 1 violation, 2 error)",
        description="Ask z3 for a run of 0, 1, ... --steps atomic actions from the booted cluster that breaks an "
        "invariant; the first found is proven shortest and written as a counterexample file (replay it with "
        "'kconform replay FILE --model-only'). --inductive instead checks which invariants are inductive.",
    )
    _add_config_arguments(bmc)
    _add_search_slice_argument(bmc)
    bmc.add_argument("--policy", metavar="RUNG", help="protocol rung (same as --set protocol=RUNG)")
    bmc.add_argument("--replicas", type=_positive_int, metavar="N", help="replicas (same as --set replicas=N)")
    bmc.add_argument("--records", type=_non_negative_int, default=defaults.max_records, metavar="N")
    bmc.add_argument("--max-leader-epoch", type=_non_negative_int, default=defaults.max_leader_epoch, metavar="N")
    bmc.add_argument("--max-partition-epoch", type=_non_negative_int, metavar="N")
    bmc.add_argument("--crash", action="store_true", help="not encoded: refused")
    bmc.add_argument("--tick", action="store_true", help="not encoded: refused")
    bmc.add_argument("--invariant", dest="invariants", action="append", default=[], metavar="NAME")
    bmc.add_argument("--steps", type=_positive_int, default=12, metavar="K", help="longest run (default: %(default)s)")
    bmc.add_argument("--inductive", action="store_true", help="print which invariants are inductive instead")
    bmc.add_argument(
        "--solving",
        choices=("fresh", "incremental"),
        default="fresh",
        help="a fresh preprocessed solver per length, or one incremental solver (default: %(default)s)",
    )
    bmc.add_argument(
        "--no-reduction", dest="reduce", action="store_false", help="search every run, not only normal forms"
    )
    bmc.add_argument(
        "--out", type=Path, default=DEFAULT_OUT_DIR, metavar="DIR", help="the file is bmc-<protocol>.jsonl"
    )
    bmc.set_defaults(handler=_cmd_bmc)


def _cmd_bmc(args: argparse.Namespace) -> int:
    settings = _slice_setting(args) + list(args.settings)
    if args.policy is not None:
        settings.append(("protocol", args.policy))
    if args.replicas is not None:
        settings.append(("replicas", args.replicas))
    config = _load_config(args.config, settings, "bmc")
    names = tuple(dict.fromkeys(args.invariants))
    _check_names(names, list(registry.for_config(config).invariants()), "invariant")
    _check_output_paths(args.out, None)
    bounds = SearchBounds(
        max_records=args.records,
        max_leader_epoch=args.max_leader_epoch,
        max_partition_epoch=args.max_partition_epoch,
        allow_crash=args.crash,
        allow_tick=args.tick,
    )
    from kconform.ci.bmc import BmcOptions, run_bmc

    try:
        registry.search_of(registry.for_config(config)).check_bmc(config, bounds)
    except ValueError as e:
        raise UserError(str(e)) from None
    options = BmcOptions(
        config, bounds, frozenset(names) or None, args.steps, args.out, args.inductive, args.solving, args.reduce
    )
    return _run_engine("bmc", run_bmc, options)


N = TypeVar("N", int, float)


def _number(parse: Callable[[str], N], accept: Callable[[N], bool], what: str) -> Callable[[str], N]:
    """An argparse type: ``parse`` the text and require ``accept``; errors say "expected ``what``"."""

    def check(text: str) -> N:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return check


_positive_int = _number(int, lambda v: v >= 1, "a positive integer")
_non_negative_int = _number(int, lambda v: v >= 0, "a non-negative integer")
_positive_float = _number(float, lambda v: math.isfinite(v) and v > 0, "a positive number of seconds")
_percentage = _number(float, lambda v: math.isfinite(v) and 0 <= v <= 100, "a percentage between 0 and 100")


def _setting(text: str) -> tuple[str, Any]:
    """``key=value`` → (config field name, value parsed as JSON, or the raw string if it is not JSON)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    field = _KAFKA_CONFIG_NAMES.get(key, key.replace(".", "_").replace("-", "_"))
    try:
        value: Any = jsontext.loads(raw)
    except jsontext.JsonTextError as e:
        if not str(e).startswith("not valid JSON"):
            raise argparse.ArgumentTypeError(f"{key}: {e}") from None
        value = raw  # not JSON at all: the text itself (e.g. --set protocol=kip-101)
    return field, value


def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def _cmd_gate(args: argparse.Namespace) -> int:
    mutants = tuple(dict.fromkeys(args.mutants))  # de-duplicated, in the order given
    if mutants:
        _check_mutants(mutants, _known_mutants(), where="")
    _check_output_paths(args.out, args.junit)
    if args.slice == ALL_SLICES:
        if args.config is not None or args.settings or mutants:
            raise UserError(
                "--slice all runs each slice's default configuration: --config, --set and --mutant "
                f"need one slice (--slice {' or --slice '.join(registry.names())})"
            )
        configs: list[tuple[str, AnyConfig]] = [part for s in registry.all_slices() for part in s.gate_configs()]
        from kconform.ci.gate import run_all_gates
        from kconform.ci.gate_jobs import default_jobs

        jobs = args.jobs if args.jobs is not None else default_jobs(len(configs))
        return _run_engine(
            "the gate",
            lambda parts: run_all_gates(parts, jobs=jobs),
            [(name, _gate_options(args, cfg, (), name)) for name, cfg in configs],
        )
    if args.jobs is not None and args.jobs > 1:
        raise UserError("--jobs runs the configurations of --slice all in parallel; one slice is one campaign")
    settings = ([("slice", args.slice)] if args.slice else []) + list(args.settings)
    config = _load_any_config(args.config, settings)
    from kconform.ci.gate import run_gate

    return _run_engine("the gate", run_gate, _gate_options(args, config, mutants, None))


def _gate_options(
    args: argparse.Namespace, config: AnyConfig, mutants: tuple[str, ...], part: str | None
) -> GateOptions:
    """The gate's options from the command line; ``part`` names one slice of ``--slice all``, whose
    files go to a sub-directory of --out (and a JUnit file named after it)."""
    junit = (
        args.junit
        if part is None or args.junit is None
        else args.junit.with_name(f"{args.junit.stem}-{part}{args.junit.suffix}")
    )
    return GateOptions(
        config=config,
        examples=args.examples,
        seconds=args.seconds,
        seed=args.seed,
        implementation=args.implementation,
        mutants=mutants,
        self_check=args.self_check,
        junit=junit,
        out=args.out if part is None else args.out / part,
        steps=args.steps,
        progress=not args.no_progress,
        min_coverage=args.min_coverage,
        engine=args.engine,
    )


def _cmd_replay(args: argparse.Namespace) -> int:
    try:
        cx = read_counterexample(args.file)
    except TraceFileError as e:
        raise UserError(str(e)) from None
    implementation: str = args.implementation or cx.implementation
    if not args.model_only and (
        cx.implementation == MODEL_IMPLEMENTATION or any(isinstance(s.op, ModelAction) for s in cx.steps)
    ):
        raise UserError(
            f"{args.file}: written by the model search (implementation {MODEL_IMPLEMENTATION!r}); its steps are "
            "model actions no implementation can run: replay it with --model-only"
        )
    if not args.model_only:
        if implementation not in IMPLEMENTATIONS:
            known = ", ".join(IMPLEMENTATIONS)
            raise UserError(
                f"{args.file}: unknown implementation {implementation!r} (known: {known}); "
                "pass --implementation or --model-only"
            )
        if cx.mutants:
            _check_mutants(cx.mutants, _known_mutants(), where=f"{args.file}: ")
    options = ReplayOptions(
        implementation=implementation,
        model_only=args.model_only,
        step_timeout_s=args.timeout,
        run_timeout_s=args.run_timeout,
    )
    from kconform.traces.replay import run_replay

    return _run_engine("replay", lambda o: run_replay(cx, o), options)


def _cmd_explore(args: argparse.Namespace) -> int:
    settings = _slice_setting(args) + list(args.settings)
    if args.replicas is not None:
        settings.append(("replicas", args.replicas))
    config = _load_config(args.config, settings, "explore")
    names = tuple(dict.fromkeys(args.invariants))  # de-duplicated, in the order given
    _check_names(names, list(registry.for_config(config).invariants()), "invariant")
    _check_output_paths(args.out, None)
    options = ExploreOptions(
        config=config,
        bounds=SearchBounds(
            max_records=args.records,
            max_leader_epoch=args.max_epoch,
            max_partition_epoch=args.max_partition_epoch,
            allow_crash=args.crash,
            allow_tick=args.tick,
        ),
        invariants=frozenset(names) if names else None,
        max_depth=args.max_depth,
        max_states=args.max_states,
        out=args.out,
        progress=not args.no_progress,
    )
    from kconform.ci.explore import run_explore

    return _run_engine("explore", run_explore, options)


def _cmd_mutants(args: argparse.Namespace) -> int:
    known = _known_mutants()
    if not known:
        print("no mutants are defined")
        return EXIT_PASS
    width = max(len(name) for name in known)
    for name in sorted(known):
        summary = (known[name] or "").strip().splitlines()
        print(f"{name:<{width}}  {summary[0] if summary else ''}".rstrip())
    return EXIT_PASS


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _load_config(path: Path | None, settings: Sequence[tuple[str, Any]], command: str) -> AnyConfig:
    """A config of a slice whose model ``command`` (explore or bmc) searches (``Slice.search``, a
    ModelSearch: today the replication slice's). Any other slice is refused (exit 2) naming the
    slices the command serves and the gate, which checks every slice."""
    config = _load_any_config(path, settings)
    if registry.for_config(config).search is None:
        name, searchable = slice_of(config), " and ".join(registry.searchable())
        raise UserError(
            f"kconform {command} searches the model of the {searchable} slice only; the {name} "
            f"slice has no model search: check it with 'kconform gate --slice {name}'"
        )
    return config


def _load_any_config(path: Path | None, settings: Sequence[tuple[str, Any]]) -> AnyConfig:
    """The config file's JSON object (or ``{}``), with the --set overrides merged in, validated;
    its ``slice`` key picks the slice (model.configs)."""
    obj: dict[str, Any] = {}
    if path is not None:
        try:
            text = jsontext.read_bytes(path, limit=1 << 20).decode("utf-8")
        except (OSError, UnicodeDecodeError, jsontext.JsonTextError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise UserError(f"cannot read config file {path}: {reason}") from None
        try:
            loaded = jsontext.loads(text)
        except jsontext.JsonTextError as e:
            raise UserError(f"config file {path}: {e}") from None
        if not isinstance(loaded, dict):
            raise UserError(f"config file {path}: expected a JSON object, got {type(loaded).__name__}")
        obj.update(loaded)
    obj.update(settings)
    try:
        return parse_config(obj)
    except ConfigError as e:
        source = f" (from {path} and --set)" if path is not None and settings else f" (from {path})" if path else ""
        raise UserError(f"invalid config{source}: {e}") from None


def _known_mutants() -> dict[str, str]:
    """Every slice's mutants (name -> description), from the slice registry."""
    try:
        return {name: doc for part in registry.all_slices() for name, doc in part.mutants().items()}
    except Exception as e:
        raise UserError(f"cannot load the mutant list: {type(e).__name__}: {e}") from e


def _check_mutants(names: Sequence[str], known: dict[str, str], where: str) -> None:
    _check_names(names, sorted(known), "mutant", where, f" (see '{PROG} mutants')")


def _check_names(names: Sequence[str], known: Sequence[str], what: str, where: str = "", see: str = "") -> None:
    """UserError for the first of ``names`` not in ``known``, with the closest known name."""
    for name in names:
        if name in known:
            continue
        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        listing = ", ".join(known) if known else "none are defined"
        raise UserError(f"{where}unknown {what} {name!r}; {hint}known {what}s: {listing}{see}")


def _check_output_paths(out: Path, junit: Path | None) -> None:
    """Fail before a long run, not after it, when the results could not be written."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")
    if junit is not None:
        if junit.is_dir():
            raise UserError(f"--junit {junit}: is a directory; give a file name such as {junit / 'kconform.xml'}")
        if not junit.parent.is_dir():
            raise UserError(f"--junit {junit}: the directory {junit.parent} does not exist")


def _run_engine(what: str, run: Callable[[_Options], int], options: _Options) -> int:
    try:
        code = run(options)
    except NotImplementedError as e:
        raise UserError(f"{what} is not available in this build: {e}") from None
    except OSError as e:
        if e.filename is None:
            raise
        raise UserError(f"{e.filename}: {e.strerror or e}") from None  # e.g. --out cannot be written
    if code not in (EXIT_PASS, EXIT_VIOLATION, EXIT_ERROR):
        raise RuntimeError(f"{what} returned {code!r}, not an exit code from kconform.ci.exitcodes")
    return code


if __name__ == "__main__":
    sys.exit(main())
