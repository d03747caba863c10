"""A large corpus built cheaply and honestly from a generated one: K copies of its files with fresh
trace ids (the benchmark's 100M-event corpus is ten copies of the generated 10M one).

Generating 100M events takes hours on two cores (10,000 to 20,000 events/s, traces/generate.py); the
miner's throughput does not depend on whether two traces are alike. Copy ``k`` of a trace ``t`` is
trace ``k * stride + t`` (``stride``: one more than the largest id of the source) in bucket ``k *
B + b`` (``B``: one more than the largest bucket), with the source's seed, configuration, mutants
and counts; every other column of every row is the source's, byte for byte. Every invariant and
view of the miner is keyed by trace first and reads nothing across traces (the manifest's tables
are per trace too), so each copy gets exactly its source trace's verdicts: a miner's per-invariant
counts on the copy are exactly ``copies`` times those on the source, which the benchmark checks.
The copy passes the corpus check (traces.inputs.corpus) like the source: sorted by (trace,
position), ids unique, sealed manifest.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kconform.traces.atomicfile import atomic_write_bytes
from kconform.traces.corpus import (
    EVENTS_DIR,
    STEPS_DIR,
    Manifest,
    TraceMeta,
    bucket_path,
    read_manifest,
    write_manifest,
)


def _retraced(table: pa.Table, shift: int) -> pa.Table:
    """``table`` with ``shift`` added to its ``trace`` column (kept first and non-null)."""
    index = table.schema.get_field_index("trace")
    moved = pc.add(table.column("trace"), pa.scalar(shift, pa.int64()))
    return table.set_column(index, table.schema.field("trace"), moved)


def _write(path: Path, table: pa.Table) -> None:
    """One part file, written as traces.corpus.write_bucket writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", row_group_size=1 << 20, write_page_checksum=True)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def replicate_corpus(source: str | os.PathLike[str], target: str | os.PathLike[str], copies: int) -> Manifest:
    """Write ``copies`` copies of the corpus at ``source`` to ``target`` (module docstring); returns
    the new manifest as read back (sealed), whose ``generator`` says how it was made. ValueError for ``copies`` < 1."""
    if copies < 1:
        raise ValueError(f"copies must be at least 1, not {copies}")
    src = read_manifest(source)
    stride = max(t.trace for t in src.traces) + 1
    bucket_stride = max(src.buckets) + 1
    metas: list[TraceMeta] = []
    for k in range(copies):
        for bucket in src.buckets:
            for table_dir in (EVENTS_DIR, STEPS_DIR):
                table = pq.read_table(bucket_path(source, table_dir, bucket))
                _write(bucket_path(target, table_dir, k * bucket_stride + bucket), _retraced(table, k * stride))
        metas.extend(replace(t, trace=k * stride + t.trace, bucket=k * bucket_stride + t.bucket) for t in src.traces)
    generator = {
        **src.generator,
        "replicated": {
            "source": str(source),
            "copies": copies,
            "trace_stride": stride,
            "bucket_stride": bucket_stride,
            "note": "copy k of trace t is trace k * trace_stride + t (ci/benchmarks/replicate.py)",
        },
    }
    write_manifest(target, Manifest(tuple(sorted(metas, key=lambda m: m.trace)), generator))
    return read_manifest(target)
