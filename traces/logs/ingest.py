"""Observations as a Parquet corpus, and the same checks run over it per partition on DuckDB or Spark.

``write_corpus`` streams the observations of the inputs into ``CORPUS/observations.parquet`` (row
groups of :data:`ROWS_PER_BATCH`, bounded memory) with two extra columns: ``seq``, the
observation's place in the single-process parse order, and ``grp``, the unit the checks' state is
keyed by: the partition for partition facts, the stream (a client, a dump chain, a checkpoint file)
for the others (every check keeps its state per stream and/or per partition, and a dump chain
holds one partition). Partition-less unclean-election lines, which permit truncations of every
partition, are given to every group.

``check_corpus`` then runs a fresh set of the single-process checks over each group in ``seq``
order (DuckDB: one ordered scan; Spark: ``repartition(grp)`` and ``sortWithinPartitions``, the
checks run in the executors) and adds the groups' verdicts up, so both engines give the verdicts
of ``kconform logs check`` on the same inputs (tests/test_logs_ingest.py compares them).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kconform.traces.atomicfile import atomic_write_bytes
from kconform.traces.logs.checks import Check, Finding, all_checks, run_checks
from kconform.traces.logs.checks.base import ADVISORY, MAX_FINDINGS, NOT_OBSERVED, PASSED, VIOLATED
from kconform.traces.logs.checks.txn import DEFAULT_MAX_TXN_TIMEOUT_MS
from kconform.traces.logs.observations import (
    BROKER_START,
    FETCH_REQUEST,
    FETCH_RESPONSE,
    FETCH_SESSION,
    FIELD_NAMES,
    KRAFT_PARTITION,
    SCHEMA_VERSION,
    UNCLEAN_ELECTION,
    Obs,
    column_type,
    from_row,
    to_row,
)
from kconform.traces.logs.parse import ParseStats, parse_paths
from kconform.traces.logs.reader import InputError

ROWS_PER_BATCH = 65_536
OBSERVATIONS = "observations.parquet"
MANIFEST = "manifest.json"
BROADCAST = "*"
"""``grp`` of observations every group receives (partition-less unclean elections, broker starts: a
restart ends what a broker's lines showed of its partitions' epoch caches)."""

_STREAM_KINDS = frozenset({FETCH_REQUEST, FETCH_RESPONSE, FETCH_SESSION, KRAFT_PARTITION})
"""Kinds grouped by stream although they name a partition: a client's Fetch lines (sessions span
partitions) and a metadata-log dump's records (topic records name the topic of later partitions)."""


class IngestError(Exception):
    """The corpus cannot be written or read (the message names the path)."""


def _arrow_type(name: str) -> pa.DataType:
    kind = column_type(name)
    return pa.int64() if kind == "int" else pa.bool_() if kind == "bool" else pa.string()


SCHEMA = pa.schema([(name, _arrow_type(name)) for name in FIELD_NAMES] + [("seq", pa.int64()), ("grp", pa.string())])


def group_of(obs: Obs) -> str:
    """The group whose check state the observation belongs to (see the module docstring)."""
    if (obs.kind == UNCLEAN_ELECTION and obs.partition is None) or obs.kind == BROKER_START:
        return BROADCAST
    if obs.partition is not None and obs.kind not in _STREAM_KINDS:
        return f"p:{obs.partition}"
    return f"s:{obs.stream}"


@dataclass
class IngestSummary:
    rows: int
    lines: int
    problems: int
    first_problem: str


def write_corpus(paths: Sequence[str | os.PathLike[str]], out: Path, lenient: bool = False) -> IngestSummary:
    """Parse ``paths`` into ``out/observations.parquet`` and ``out/manifest.json``."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise IngestError(f"{out}: {e.strerror or e}") from e
    stats = ParseStats()
    rows = 0
    target = out / OBSERVATIONS
    with pq.ParquetWriter(str(target), SCHEMA) as writer:
        buffer: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
        for obs in parse_paths(paths, stats):
            row = to_row(obs)
            for name in FIELD_NAMES:
                buffer[name].append(row[name])
            buffer["seq"].append(rows)
            buffer["grp"].append(group_of(obs))
            rows += 1
            if len(buffer["seq"]) >= ROWS_PER_BATCH:
                writer.write_table(pa.table(buffer, schema=SCHEMA))
                buffer = {name: [] for name in SCHEMA.names}
        if buffer["seq"] or rows == 0:
            writer.write_table(pa.table(buffer, schema=SCHEMA))
    first = f"{stats.problems[0].file}:{stats.problems[0].line}" if stats.problems else ""
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "inputs": [str(p) for p in paths],
        "rows": rows,
        "lines": stats.read.lines,
        "problems": stats.problem_count,
        "unreadable": stats.unreadable,
        "lenient": lenient,
        "unknown_lines_per_logger": dict(stats.unknown.most_common()),
    }
    atomic_write_bytes(out / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode())
    if stats.unreadable:
        raise InputError(
            f"{stats.unreadable[0]} ({len(stats.unreadable)} input file(s) could not be read to their end)"
        )
    return IngestSummary(rows, stats.read.lines, stats.problem_count, first)


@dataclass
class CheckTotals:
    """One check's verdict added up over every group."""

    name: str
    advisory: bool
    judged: int = 0
    findings: int = 0
    allowed: int = 0
    shown: list[Finding] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.findings:
            return ADVISORY if self.advisory else VIOLATED
        return PASSED if self.judged else NOT_OBSERVED

    def add(self, check: Check) -> None:
        self.judged += check.judged
        self.findings += check.finding_count
        self.allowed += check.allowed
        room = MAX_FINDINGS - len(self.shown)
        if room > 0:
            self.shown.extend(check.findings[:room])


@dataclass
class CorpusResult:
    totals: list[CheckTotals]

    @property
    def violations(self) -> int:
        return sum(t.findings for t in self.totals if not t.advisory)

    def rows(self) -> list[tuple[str, str, int, int]]:
        return [(t.name, t.status, t.judged, t.findings) for t in self.totals]


def _fresh_totals(max_txn_timeout_ms: int) -> list[CheckTotals]:
    return [CheckTotals(c.name, c.advisory) for c in all_checks(max_txn_timeout_ms)]


def check_groups(
    groups: Iterator[tuple[str, list[tuple[int, Obs]]]],
    broadcast: Sequence[tuple[int, Obs]],
    max_txn_timeout_ms: int = DEFAULT_MAX_TXN_TIMEOUT_MS,
) -> list[tuple[str, int, int, int, list[Finding]]]:
    """(check, judged, findings, allowed, shown findings) per check, for each group run on its own
    (what an engine's workers run; ``broadcast`` observations are given to every group)."""
    totals = _fresh_totals(max_txn_timeout_ms)
    for _grp, observations in groups:
        checks = all_checks(max_txn_timeout_ms)
        run_checks(checks, (obs for _seq, obs in sorted([*broadcast, *observations], key=_first)))
        for total, check in zip(totals, checks, strict=True):
            total.add(check)
    return [(t.name, t.judged, t.findings, t.allowed, t.shown) for t in totals]


def _first(pair: tuple[int, Obs]) -> int:
    return pair[0]


def _obs_of(row: dict[str, Any]) -> tuple[int, Obs]:
    return int(row["seq"]), from_row(row)


def _merge(
    parts: Sequence[Sequence[tuple[str, int, int, int, list[Finding]]]], max_txn_timeout_ms: int
) -> CorpusResult:
    totals = _fresh_totals(max_txn_timeout_ms)
    by_name = {t.name: t for t in totals}
    for part in parts:
        for name, judged, findings, allowed, shown in part:
            t = by_name[name]
            t.judged += judged
            t.findings += findings
            t.allowed += allowed
            t.shown.extend(shown[: max(0, MAX_FINDINGS - len(t.shown))])
    return CorpusResult(totals)


def check_corpus(
    corpus: Path, engine: str = "duckdb", master: str = "local[*]", max_txn_timeout_ms: int = DEFAULT_MAX_TXN_TIMEOUT_MS
) -> CorpusResult:
    """The checks over a corpus written by :func:`write_corpus`, on ``duckdb`` or ``spark``."""
    target = corpus / OBSERVATIONS
    if not target.is_file():
        raise IngestError(f"{corpus}: no {OBSERVATIONS} (write it with 'kconform logs ingest')")
    try:
        pq.read_schema(str(target))
    except (OSError, pa.ArrowException) as e:
        raise IngestError(f"{target}: not a readable Parquet file: {e}") from e
    if engine == "duckdb":
        return _merge([_duckdb_pass(target, max_txn_timeout_ms)], max_txn_timeout_ms)
    if engine == "spark":
        return _merge(_spark_pass(target, master, max_txn_timeout_ms), max_txn_timeout_ms)
    raise IngestError(f"unknown engine {engine!r}")


def _duckdb_pass(target: Path, max_txn_timeout_ms: int) -> list[tuple[str, int, int, int, list[Finding]]]:
    import duckdb

    con = duckdb.connect()
    try:
        path = str(target).replace("'", "''")
        rel = con.sql(f"SELECT * FROM read_parquet('{path}') WHERE grp = '{BROADCAST}'")
        table = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
        broadcast = [_obs_of(r) for r in table.to_pylist()]
        ordered = con.sql(f"SELECT * FROM read_parquet('{path}') WHERE grp <> '{BROADCAST}' ORDER BY grp, seq")
        # the reader's name changed across DuckDB versions
        to_reader = getattr(ordered, "to_arrow_reader", None) or ordered.fetch_arrow_reader
        reader = to_reader(ROWS_PER_BATCH)
        return check_groups(_grouped(reader), broadcast, max_txn_timeout_ms)
    finally:
        con.close()


def _grouped(reader: Any) -> Iterator[tuple[str, list[tuple[int, Obs]]]]:
    current: str | None = None
    bucket: list[tuple[int, Obs]] = []
    for batch in reader:
        for row in batch.to_pylist():
            grp = row["grp"]
            if grp != current:
                if current is not None:
                    yield current, bucket
                current, bucket = grp, []
            bucket.append(_obs_of(row))
    if current is not None:
        yield current, bucket


def _spark_pass(
    target: Path, master: str, max_txn_timeout_ms: int
) -> list[list[tuple[str, int, int, int, list[Finding]]]]:
    from pyspark.sql import SparkSession

    from kconform.traces.mine.loopback import loopback_conf, pin_loopback

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers need this environment's packages
    pin_loopback(master)  # a local master listens on 127.0.0.1 only; a cluster's keeps its network
    builder = (
        SparkSession.builder.master(master)
        .appName("kconform-logs")
        .config("spark.ui.enabled", "false")
        .config("spark.pyspark.python", sys.executable)  # the workers import kconform from this environment
    )
    for name, value in loopback_conf(master).items():
        builder = builder.config(name, value)
    spark = builder.getOrCreate()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            spark.sparkContext.addPyFile(str(_package_zip(Path(tmp))))
            return _spark_job(spark, target, max_txn_timeout_ms)
    finally:
        spark.stop()


def _package_zip(tmp: Path) -> Path:
    """The model and traces packages as one zip the Spark workers import kconform from (an
    editable install's import hook does not reach them)."""
    import importlib
    import zipfile

    target = tmp / "kconform.zip"
    with zipfile.ZipFile(target, "w") as z:
        z.writestr("kconform/__init__.py", "")
        for sub in ("model", "traces"):
            root = Path(importlib.import_module(f"kconform.{sub}").__path__[0])
            for file in root.rglob("*.py"):
                z.write(file, f"kconform/{sub}/{file.relative_to(root).as_posix()}")
    return target


def _spark_job(
    spark: Any, target: Path, max_txn_timeout_ms: int
) -> list[list[tuple[str, int, int, int, list[Finding]]]]:
    df = spark.read.parquet(str(target))
    broadcast = [_obs_of(r.asDict()) for r in df.where(f"grp = '{BROADCAST}'").collect()]
    timeout = max_txn_timeout_ms

    def run_partition(rows: Iterable[Any]) -> Iterator[list[tuple[str, int, int, int, list[Finding]]]]:
        def groups() -> Iterator[tuple[str, list[tuple[int, Obs]]]]:
            current: str | None = None
            bucket: list[tuple[int, Obs]] = []
            for r in rows:
                row = r.asDict()
                if row["grp"] != current:
                    if current is not None:
                        yield current, bucket
                    current, bucket = row["grp"], []
                bucket.append(_obs_of(row))
            if current is not None:
                yield current, bucket

        yield check_groups(groups(), broadcast, timeout)

    parts = (
        df.where(f"grp <> '{BROADCAST}'")
        .repartition("grp")
        .sortWithinPartitions("grp", "seq")
        .rdd.mapPartitions(run_partition)
        .collect()
    )
    return list(parts)
