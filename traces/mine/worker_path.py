"""The Python workers' import path: PySpark and Py4J from their installation, not from its zip copies.

Spark starts the executors' Python daemon with ``PYTHONPATH`` led by ``$SPARK_HOME/python/lib/
pyspark.zip`` and ``py4j-<version>-src.zip`` (Spark's ``PythonUtils.sparkPythonPath``). With PySpark
installed by pip, ``$SPARK_HOME`` is the installed ``pyspark`` package itself, so these zips are
copies of code that is also on the path unzipped, with the compiled ``.pyc`` files pip wrote; the zips
hold sources only. Importing PySpark from the zip compiles every module from source in every daemon,
and the zip importers it leaves (one per package directory in the zip) each re-read the zip's
directory of 1,485 entries whenever import caches are invalidated: PySpark's worker does that on
its first task (``worker_util.setup_spark_files`` adds the task's files directory to ``sys.path``).
Measured 2026-11-27 (``local[2]``, a job of two empty tasks, load 7): the daemon 0.86 CPU-s, each
worker's first task 0.4 CPU-s, of which the zip directories were nearly all.

``redundant_zips`` names the zip entries that are the same installation as a package on the rest of
the path, and ``drop_redundant_zips`` removes them (traces.mine.daemon calls it first thing). A zip
is dropped only when it lies inside the directory of the ``pyspark`` package the rest of the path
imports (the same installation, so the same release), and holds a package the rest of the path
also has: ``pyspark.zip`` always, ``py4j-V-src.zip`` only when the installed ``py4j`` is version V.
Anything else (Spark from a tarball with no pip-installed PySpark, as on many clusters) is left as
Spark set it.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from importlib.machinery import PathFinder

_ZIP = re.compile(r"^(?:(pyspark)\.zip|(py4j)-(.+)-src\.zip)$")


def _package_dir(name: str, path: Sequence[str]) -> str | None:
    spec = PathFinder.find_spec(name, list(path))
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(next(iter(spec.submodule_search_locations)))


def _py4j_version(package: str) -> str | None:
    try:
        with open(os.path.join(package, "version.py"), encoding="utf-8") as f:
            found = re.search(r"__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read())
    except OSError:
        return None
    return found.group(1) if found else None


def redundant_zips(path: Sequence[str]) -> list[str]:
    """The entries of ``path`` that are PySpark's bundled zips of the same installation as the
    ``pyspark`` (and ``py4j``, same version) packages on the rest of ``path`` (see the module)."""
    zips = [p for p in path if _ZIP.match(os.path.basename(p))]
    rest = [p for p in path if p not in zips]
    pyspark = _package_dir("pyspark", rest) if zips else None
    if pyspark is None:
        return []
    out = []
    for entry in zips:
        if not os.path.realpath(entry).startswith(pyspark + os.sep):
            continue  # another Spark's zip: keep it
        match = _ZIP.match(os.path.basename(entry))
        assert match is not None
        if match.group(1):
            out.append(entry)
            continue
        py4j = _package_dir("py4j", rest)
        if py4j is not None and _py4j_version(py4j) == match.group(3):
            out.append(entry)
    return out


def drop_redundant_zips() -> list[str]:
    """Remove ``redundant_zips(sys.path)`` from ``sys.path`` and their importers from
    ``sys.path_importer_cache``; returns them. Call before importing PySpark."""
    dropped = redundant_zips(sys.path)
    for entry in dropped:
        sys.path.remove(entry)
    for key in list(sys.path_importer_cache):
        if any(key == entry or key.startswith(entry + os.sep) for entry in dropped):
            del sys.path_importer_cache[key]
    return dropped
