"""Each slice's trace tools, registered by slice name: its counterexample report, its replay state
table, its trace-generation workload, the pictures the gate draws of its coverage and its miner
invariants.

These sit above the judge (the trace tools run it), so they are not part of the conformance
``Slice`` (conformance.slice): a slice registers its ``SliceTools`` here, in the same way, and the
tools find the slice of a configuration through the conformance registry. Built-in tools are
modules named in ``BUILTIN_TOOLS`` (each defining ``TOOLS``), imported on first use; adding a
slice's tools is one line there.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kconform.model.config import ConfigError
from kconform.model.configs import slice_of
from kconform.traces import operations as ops

if TYPE_CHECKING:
    from rich.console import RenderableType

    from kconform.conformance.adapter import Adapter
    from kconform.traces.counterexample import Counterexample


class TraceWorkload(Protocol):
    """What a trace needs of a workload: the next operation."""

    def next(self) -> ops.Operation: ...


@dataclass(frozen=True)
class CoverageArtifact:
    """A file the gate writes beside coverage.json after a campaign (a picture of what was covered).
    ``write(out_dir, covered, cfg, summary)`` writes it and returns its path; ``label`` is the
    console line shown before the path."""

    label: str
    write: Callable[[Path, dict[str, int], Any, str], Path]


@dataclass(frozen=True)
class SliceTools:
    """One slice's trace tools; ``name`` is the slice's (conformance.registry)."""

    name: str
    report_html: Callable[[Counterexample], str]
    """The HTML report of one counterexample file of the slice (traces.report)."""
    make_workload: Callable[[random.Random, Any], TraceWorkload]
    """The seeded random workload of trace generation (``kconform generate``)."""
    workload_module: str
    """Where the workload is defined (recorded in corpus manifests)."""
    state_table: Callable[[Any, dict[int, dict[str, Any]] | None], RenderableType] | None = None
    """Model state (and the implementation's snapshot) at a failing step, for ``kconform replay``;
    None: the state's repr is printed."""
    coverage_artifacts: tuple[CoverageArtifact, ...] = ()
    miner: str | None = None
    """The module of the slice's stream invariants over a corpus (traces.mine: it defines ``SLICE``
    (this name), ``INVARIANTS`` and ``views(dialect, given)``); None: the miner has none for it.
    traces.mine.invariants gathers them through this registry, in the slices' order."""


BUILTIN_TOOLS: dict[str, str] = {
    "replication": "kconform.traces.replication.tools",
    "txn": "kconform.traces.txn.tools",
    "fetch": "kconform.traces.fetch.tools",
}
"""Slice name -> the module defining its ``TOOLS``. Adding a slice's tools is one line here."""

_tools: dict[str, SliceTools] = {}


def register_tools(tools: SliceTools) -> SliceTools:
    """Add ``tools`` for the slice ``tools.name`` (replacing none: a second entry is an error)."""
    other = _tools.get(tools.name)
    if other is not None and other is not tools:
        raise ValueError(f"the {tools.name!r} slice has trace tools registered already")
    _tools[tools.name] = tools
    return tools


def unregister_tools(name: str) -> None:
    """Forget the tools of slice ``name`` (a test's fake slice cleans up with it)."""
    _tools.pop(name, None)


def tools_of(name: str) -> SliceTools:
    """The trace tools of the slice ``name``; LookupError if it has none."""
    found = _tools.get(name)
    if found is not None:
        return found
    module = BUILTIN_TOOLS.get(name)
    if module is None:
        raise LookupError(f"the {name!r} slice has no trace tools (reports, replay views, workloads)")
    defined = getattr(importlib.import_module(module), "TOOLS", None)
    if not isinstance(defined, SliceTools) or defined.name != name:
        raise TypeError(f"{module} defines no TOOLS for the {name!r} slice (a traces.tools.SliceTools)")
    return register_tools(defined)


def tools_for(cfg: object) -> SliceTools:
    """The trace tools of the slice of configuration ``cfg``."""
    from kconform.conformance.registry import for_config  # the slices' registry: not for generation_for

    return tools_of(for_config(cfg).name)


@dataclass(frozen=True)
class Generation:
    """What trace generation (traces.generate) needs of a slice: its reference cluster (the
    ``Slice``'s ``make_reference``), its workload and the workload's module as manifests record it
    (the ``SliceTools``' ``make_workload`` and ``workload_module``)."""

    make_reference: Callable[[], Adapter]
    make_workload: Callable[[random.Random, Any], TraceWorkload]
    workload_module: str


BUILTIN_GENERATION: dict[str, tuple[str, str, str]] = {
    "replication": (
        "kconform.impl.replication.cluster:ReferenceCluster",
        "kconform.traces.replication.workload:Workload",
        "kconform.traces.generate",
    ),
    "txn": (
        "kconform.impl.txn.cluster:TxnCluster",
        "kconform.traces.txn.workload:TxnWorkload",
        "kconform.traces.txn_workload",
    ),
    "fetch": (
        "kconform.impl.fetch.cluster:FetchCluster",
        "kconform.traces.fetch.workload:FetchWorkload",
        "kconform.traces.fetch.workload",
    ),
}
"""Slice name -> (its reference cluster, its workload, the workload module manifests record): the
same objects as the slice's ``SLICE`` and ``TOOLS`` hold (a test checks it), found without
importing those modules, which bring in the slice's Hypothesis machine, zoo, judge and report
pages (about 0.15 CPU-s a process that only generates does not need)."""

_generation: dict[str, Generation] = {}


def _attribute(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def generation_for(cfg: object) -> Generation:
    """What trace generation needs of the slice of configuration ``cfg``: for a built-in slice from
    ``BUILTIN_GENERATION`` (the cluster and workload modules only), for another (a plug-in, a test's
    fake slice) from the registries (``for_config``, ``tools_for``)."""
    try:
        name = slice_of(cfg)
    except ConfigError:
        name = ""
    found = _generation.get(name)
    if found is not None:
        return found
    if name in BUILTIN_GENERATION:
        reference, workload, module = BUILTIN_GENERATION[name]
        found = Generation(_attribute(reference), _attribute(workload), module)
    else:
        from kconform.conformance.registry import for_config

        tools = tools_for(cfg)
        return Generation(for_config(cfg).make_reference, tools.make_workload, tools.workload_module)
    _generation[name] = found
    return found


__all__ = [
    "BUILTIN_GENERATION",
    "BUILTIN_TOOLS",
    "CoverageArtifact",
    "Generation",
    "SliceTools",
    "TraceWorkload",
    "generation_for",
    "register_tools",
    "tools_for",
    "tools_of",
    "unregister_tools",
]
