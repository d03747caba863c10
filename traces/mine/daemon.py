"""The Python daemon Spark's executors fork their Python workers from, with the miner's task
modules imported once beforehand (``spark.python.daemon.module``, set by engine.SPARK_DEFAULTS).

PySpark's own daemon (``pyspark.daemon``) forks a fresh worker per task slot, and each worker then
imports what its first task unpickles: pyarrow, numpy, DuckDB and the light task modules
(traces.mine.tasks, traces.mine.state): about a CPU-second per worker. Importing them here, in the
process the workers are forked from, pays that once per executor: the forked workers share the
loaded modules (2026-11-27, a job of 10 tasks on ``local[2]``, load 20: the workers' CPU 2.95 →
2.09 s). The imports leave two helper threads in the daemon (OpenBLAS's, through numpy, and
jemalloc's background thread); a forked worker has only the forking thread, and both libraries
re-initialise in the child through their at-fork handlers (the pools of pyarrow and DuckDB start
on first use, in the worker). The daemon itself is PySpark's, unchanged.

Before any of that, the daemon drops PySpark's bundled zips from its import path when they are a
copy of the installed PySpark (traces.mine.worker_path): imported from the zip, PySpark is compiled
from source in every daemon, and each worker's first task re-reads the zip's directory once per
package in it. PySpark's worker module (``pyspark.worker``, which each forked worker imports for
its first task) is imported here too.
"""

from __future__ import annotations

from kconform.traces.mine.worker_path import drop_redundant_zips

drop_redundant_zips()

import duckdb  # noqa: E402, F401
import numpy  # noqa: E402, F401
import pyarrow.parquet  # noqa: E402, F401
import pyspark.worker  # noqa: E402, F401
from pyspark import daemon  # noqa: E402

import kconform.traces.mine.tasks  # noqa: E402, F401

if __name__ == "__main__":
    daemon.manager()
