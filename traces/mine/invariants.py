"""The stream invariants of the miner, as SQL over a corpus, in a registry.

One text per invariant runs unchanged on Spark SQL (the miner) and on DuckDB (the benchmark's
single-machine comparison): the few spellings the two dialects disagree on are macros
(``DIALECTS``), expanded before a query runs. Every query is window functions, joins and
aggregations keyed by trace (then node, epoch, message or offset); there is no user-defined
function anywhere, and a query returns violations only.

The queries read views the engine provides (``ev``: the events table of the corpus,
kconform.traces.corpus, one row per event; ``tr``: one row per trace from the manifest, ``min_isr``
(the effective min.insync.replicas) and ``strict`` (the configuration permits no loss: no unclean
election, every append flushed); the txn slice's tables of traces.mine.txn_tables) and the views
of every slice, built in slice order: each slice's module (traces.mine.replication,
traces.mine.txn, traces.mine.fetch) gives its views and its invariants, and the slice names it as the
``miner`` of its trace tools (traces.tools.SliceTools); ``SLICES`` below gathers them from that
registry, in conformance.registry's order.

Each query yields ``(invariant, trace, pos, wpos, detail)``: the position where the violation is
evident, the position of the other witness event (or null) and a sentence of evidence. Add an
invariant to its slice's module (``_register(MinedInvariant(...))``); a new slice names its module in
its ``SliceTools.miner``: nothing here changes.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Collection
from types import ModuleType

from kconform.conformance.registry import names
from kconform.traces.events import EVENT_TYPES
from kconform.traces.mine.sql import DIALECTS, MinedInvariant, expand
from kconform.traces.tools import tools_of

__all__ = [
    "DIALECTS",
    "INVARIANTS",
    "RESERVED_COLUMNS",
    "SLICES",
    "SLICE_KINDS",
    "SLICE_OF",
    "MinedInvariant",
    "expand",
    "view_sql",
    "violations_sql",
]


def _miners() -> tuple[ModuleType, ...]:
    out = []
    for name in names():
        try:
            module = tools_of(name).miner
        except LookupError:  # a slice without trace tools has no miner either
            continue
        if module is not None:
            out.append(importlib.import_module(module))
    return tuple(out)


SLICES: tuple[ModuleType, ...] = _miners()
"""Every slice's mining module (its ``SliceTools.miner``), in the order its views are built and its
invariants run: conformance.registry's order of the slices."""


def _merge() -> dict[str, MinedInvariant]:
    out: dict[str, MinedInvariant] = {}
    for module in SLICES:
        for inv in module.INVARIANTS:
            if inv.name in out:
                raise ValueError(f"invariant {inv.name!r} registered twice")
            out[inv.name] = inv
    return out


INVARIANTS: dict[str, MinedInvariant] = _merge()
"""Every slice's invariants by name, slice by slice."""

RESERVED_COLUMNS: frozenset[str] = frozenset(
    {"offset", "group", "commit", "partition", "partitions", "state", "order", "limit", "range", "rows", "end"}
)
"""Event fields that are (or may be) SQL keywords in Spark or DuckDB: the engines expose them in
``ev`` with a trailing ``_`` (``offset_``, ``group_``, ...)."""


SLICE_OF: dict[str, str] = {inv.name: module.SLICE for module in SLICES for inv in module.INVARIANTS}
"""Invariant name → the slice whose traces it judges."""


def view_sql(
    dialect: str, slices: Collection[str] | None = None, given: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """(name, SELECT) of the views of the chosen slices (default: all) in creation order, macros
    expanded, ``ev`` and ``tr`` excluded (the engine provides them), and so are the ``given``
    views (e.g. ``st`` computed by traces.mine.state)."""
    chosen = [m for m in SLICES if slices is None or m.SLICE in slices]
    return [view for module in chosen for view in module.views(dialect, given)]


WORLD_KINDS: frozenset[str] = frozenset({"clock_advanced"})
"""Kinds every slice's simulated world emits (impl.simulation): they tell no slice apart."""


def _slice_kinds(module: ModuleType) -> frozenset[str]:
    texts = [sql for dialect in DIALECTS for _name, sql in module.views(dialect)]
    texts += [inv.sql for inv in module.INVARIANTS]
    named = {k for text in texts for k in re.findall(r"'([a-z_]+)'", text)}
    return frozenset(named & set(EVENT_TYPES)) - WORLD_KINDS


SLICE_KINDS: dict[str, frozenset[str]] = {module.SLICE: _slice_kinds(module) for module in SLICES}
"""Slice → the event kinds its views and invariants name, the world's clock aside (an engine leaves
out a slice none of whose kinds a corpus holds: each of its invariants needs a row of one of them;
the exactly-once ones read the clock only beside a transaction's or a quiescence's events)."""

_NO_VIOLATION: dict[str, str] = {
    "spark": "SELECT CAST(NULL AS STRING) AS invariant, CAST(NULL AS BIGINT) AS trace, CAST(NULL AS BIGINT) AS pos, "
    "CAST(NULL AS BIGINT) AS wpos, CAST(NULL AS STRING) AS detail WHERE false",
    "duckdb": "SELECT CAST(NULL AS VARCHAR) AS invariant, CAST(NULL AS BIGINT) AS trace, CAST(NULL AS BIGINT) AS pos, "
    "CAST(NULL AS BIGINT) AS wpos, CAST(NULL AS VARCHAR) AS detail WHERE false",
}


def violations_sql(dialect: str, names: list[str] | None = None, slices: Collection[str] | None = None) -> str:
    """One query: the union of the chosen invariants' queries (default: all) of the chosen slices
    (default: all), macros expanded; a typed empty relation when none is left."""
    chosen = [INVARIANTS[n] for n in (names if names is not None else list(INVARIANTS))]
    chosen = [inv for inv in chosen if slices is None or SLICE_OF[inv.name] in slices]
    if not chosen:
        return _NO_VIOLATION[dialect]
    return "\nUNION ALL\n".join(f"SELECT * FROM ({expand(inv.sql, dialect)})" for inv in chosen)
