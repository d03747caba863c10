"""What every slice's stream invariants are written in: the SQL dialects the miner runs on, the
macros that spell their differences, and the shape of an invariant.

One text per invariant runs unchanged on Spark SQL (the miner) and on DuckDB (the benchmark's
single-machine comparison): the few spellings the two dialects disagree on are macros
(``DIALECTS``), expanded before a query runs (``expand``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DIALECTS: dict[str, dict[str, str]] = {
    "spark": {
        "LAST": "last_value({0}) IGNORE NULLS",
        "SIZE": "size({0})",
        "STR": "CAST({0} AS STRING)",
    },
    "duckdb": {
        "LAST": "last_value({0} IGNORE NULLS)",
        "SIZE": "len({0})",
        "STR": "CAST({0} AS VARCHAR)",
    },
}
"""Spellings that differ between Spark SQL and DuckDB: ``{{LAST(x)}}`` (last non-null value in the
window frame), ``{{SIZE(list)}}``, ``{{STR(x)}}``."""

_MACRO = re.compile(r"\{(LAST|SIZE|STR)\(([^(){}]*(?:\([^(){}]*\)[^(){}]*)*)\)\}")


@dataclass(frozen=True)
class MinedInvariant:
    """A stream invariant: ``name``, the guarantee in one sentence (``doc``), where it comes from
    (``cite``), the model invariant or handler rule it mirrors (``mirrors``) and its ``sql``
    (macros unexpanded) returning (invariant, trace, pos, wpos, detail)."""

    name: str
    doc: str
    cite: str
    mirrors: str
    sql: str


def expand(sql: str, dialect: str) -> str:
    """``sql`` with the dialect's spellings of the macros; ValueError for an unknown dialect."""
    spellings = DIALECTS.get(dialect)
    if spellings is None:
        raise ValueError(f"unknown SQL dialect {dialect!r} (known: {', '.join(DIALECTS)})")
    previous = None
    while previous != sql:  # macros may nest
        previous = sql
        sql = _MACRO.sub(lambda m: spellings[m.group(1)].format(m.group(2)), sql)
    return sql
