"""The exactly-once slice's per-trace facts from the manifest, as small tables the miner's SQL joins.

A trace's events do not say which transaction version it ran, how often its coordinators look for
timed-out transactions, or which internal partition holds a transactional id's state or a group's
offsets: its configuration (model.txn_config.TxnConfig, in the manifest) does. Kafka derives the
partitions from the names (``abs(hashCode) % partitions``, kafka-facts §7); so does TxnConfig, and
these tables carry the result, one row per trace of the slice (or per trace and name):

- ``ttr``: ``trace``, ``tv`` (transaction version), ``verification`` (KIP-890 part 1) and
  ``abort_interval_ms`` (transaction.abort.timed.out.transaction.cleanup.interval.ms);
- ``ttid``: ``trace``, ``txn_id``, ``spart`` (its ``__transaction_state`` partition);
- ``tgrp``: ``trace``, ``grp``, ``opart`` (the group's ``__consumer_offsets`` partition).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from kconform.model.txn_config import TxnConfig
from kconform.traces.arrow_build import builder
from kconform.traces.corpus import Manifest

_TYPES: dict[str, dict[str, pa.DataType]] = {
    "ttr": {"trace": pa.int64(), "tv": pa.int64(), "verification": pa.bool_(), "abort_interval_ms": pa.int64()},
    "ttid": {"trace": pa.int64(), "txn_id": pa.string(), "spart": pa.string()},
    "tgrp": {"trace": pa.int64(), "grp": pa.string(), "opart": pa.string()},
}


def txn_tables(manifest: Manifest) -> dict[str, pa.Table]:
    """``ttr``, ``ttid`` and ``tgrp`` for the exactly-once traces of ``manifest`` (empty tables,
    typed, when it has none)."""
    rows: dict[str, dict[str, list[Any]]] = {name: {c: [] for c in cols} for name, cols in _TYPES.items()}
    for t in manifest.traces:
        cfg = t.configuration()
        if not isinstance(cfg, TxnConfig):
            continue
        for col, value in (
            ("trace", t.trace),
            ("tv", cfg.transaction_version),
            ("verification", cfg.verification),
            ("abort_interval_ms", cfg.abort_timed_out_interval_ms),
        ):
            rows["ttr"][col].append(value)
        for txn_id in cfg.transactional_ids:
            rows["ttid"]["trace"].append(t.trace)
            rows["ttid"]["txn_id"].append(txn_id)
            rows["ttid"]["spart"].append(cfg.state_partition(txn_id))
        for group in cfg.groups:
            rows["tgrp"]["trace"].append(t.trace)
            rows["tgrp"]["grp"].append(group)
            rows["tgrp"]["opart"].append(cfg.offsets_partition(group))
    # From buffers (traces.arrow_build), not pa.array: that would import pandas.
    return {
        name: pa.Table.from_arrays([builder(typ)(rows[name][c], None) for c, typ in cols.items()], names=list(cols))
        for name, cols in _TYPES.items()
    }


_SPARK_TYPES = {pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN", pa.string(): "STRING"}


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def spark_values(table: pa.Table) -> str:
    """A Spark SQL relation holding ``table``'s rows as literals (a typed empty relation when it has
    none): no Python worker and no driver-side DataFrame is needed to join it."""
    names = table.column_names
    if table.num_rows == 0:
        casts = ", ".join(f"CAST(NULL AS {_SPARK_TYPES[f.type]}) AS {f.name}" for f in table.schema)
        return f"SELECT {casts} WHERE false"
    rows = ", ".join(
        "(" + ", ".join(_literal(v) for v in row) + ")"
        for row in zip(*(table[c].to_pylist() for c in names), strict=True)
    )
    return f"SELECT * FROM VALUES {rows} AS t({', '.join(names)})"
