"""The benchmarks' side-by-side outputs: the mining benchmark's before / after table puts each size's
before and after figures on one row (issue 18's acceptance), and the generation benchmark's content
hash sees rows, not the columns no row uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console

from kconform.ci.benchmarks.generate import content_hash
from kconform.ci.benchmarks.mine import before_after_table
from kconform.model.config import ReplicationConfig
from kconform.traces.corpus import EVENTS_DIR, bucket_path
from kconform.traces.generate import Plan, generate


def _render(runs: list[tuple[int, dict[str, dict[str, Any]]]]) -> list[str]:
    console = Console(record=True, width=400)
    console.print(before_after_table(runs))
    return console.export_text().splitlines()


def _fig(events: int, seconds: float, cpu: float) -> dict[str, Any]:
    return {"events": events, "seconds": seconds, "cpu_s": cpu}


def test_each_size_has_its_before_and_after_on_one_row() -> None:
    runs = [
        (
            1_000_000,
            {
                "spark-before": _fig(1_000_000, 10.0, 20.0),
                "spark": _fig(1_000_000, 2.0, 4.0),
                "duckdb-before": _fig(1_000_000, 4.0, 8.0),
                "duckdb": _fig(1_000_000, 1.0, 2.0),
            },
        ),
        # The other checkout's figure is preferred to the in-tree before plan when both were measured.
        (
            10_000_000,
            {
                "spark@before": _fig(10_000_000, 50.0, 100.0),
                "spark-before": _fig(10_000_000, 99.0, 99.0),
                "spark": _fig(10_000_000, 10.0, 25.0),
            },
        ),
    ]
    lines = _render(runs)
    row_1m = next(line for line in lines if "1,000,000" in line)
    assert "100,000 (50,000) [spark-before]" in row_1m and "500,000 (250,000)" in row_1m
    assert "5.00 (5.00)" in row_1m  # Spark after / before, by CPU (by wall clock)
    assert "250,000 (125,000) [duckdb-before]" in row_1m and "4.00 (4.00)" in row_1m
    row_10m = next(line for line in lines if "10,000,000" in line)
    assert "[spark@before]" in row_10m and "[spark-before]" not in row_10m
    assert "4.00 (5.00)" in row_10m
    assert row_10m.count(" - ") >= 3  # DuckDB measured neither before nor after at 10M


def test_content_hash_sees_rows_not_unused_columns(tmp_path: Path) -> None:
    root = tmp_path / "c"
    generate(root, Plan(events=400, seed=3, trace_events=200, config=ReplicationConfig()), 1)
    first = content_hash(root)
    path = bucket_path(root, EVENTS_DIR, 0)
    table = pq.read_table(path, partitioning=None)
    # An all-null column more (a newer schema's column for an event kind the corpus never emits):
    # other bytes, the same content.
    widened = table.append_column("not_used", pa.nulls(table.num_rows, pa.int64()))
    pq.write_table(widened, path)
    assert content_hash(root) == first
    # One value changed: another content.
    changed = table.set_column(
        table.column_names.index("pos"), "pos", pa.array([p + (i == 5) for i, p in enumerate(table["pos"].to_pylist())])
    )
    pq.write_table(changed, path)
    assert content_hash(root) != first
