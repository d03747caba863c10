"""traces.mine.worker_path: the Spark Python daemon drops PySpark's bundled zips only when they are
copies of the PySpark (and same-version Py4J) installed on the rest of its path."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pyspark

from kconform.traces.mine.worker_path import redundant_zips


def _site(tmp: Path, py4j_version: str | None = "0.10.9.9") -> tuple[str, str, str]:
    """A site directory with ``pyspark`` (and ``py4j`` of ``py4j_version``) and the two zips inside
    ``pyspark/python/lib``, as pip installs them; returns (site, pyspark zip, py4j zip)."""
    site = tmp / "site"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    if py4j_version is not None:
        (site / "py4j").mkdir()
        (site / "py4j" / "__init__.py").write_text("")
        (site / "py4j" / "version.py").write_text(f"__version__ = '{py4j_version}'\n")
    zips = []
    for name, package in (("pyspark.zip", "pyspark"), ("py4j-0.10.9.9-src.zip", "py4j")):
        with zipfile.ZipFile(lib / name, "w") as z:
            z.writestr(f"{package}/__init__.py", "")
        zips.append(str(lib / name))
    return str(site), zips[0], zips[1]


def test_the_zips_of_the_installed_pyspark_are_dropped(tmp_path: Path) -> None:
    site, spark_zip, py4j_zip = _site(tmp_path)
    assert redundant_zips([spark_zip, py4j_zip, site]) == [spark_zip, py4j_zip]


def test_a_py4j_zip_of_another_version_than_the_installed_one_is_kept(tmp_path: Path) -> None:
    site, spark_zip, py4j_zip = _site(tmp_path, py4j_version="0.10.9.7")
    assert redundant_zips([spark_zip, py4j_zip, site]) == [spark_zip]
    site_without, spark_zip2, py4j_zip2 = _site(tmp_path / "no-py4j", py4j_version=None)
    assert redundant_zips([spark_zip2, py4j_zip2, site_without]) == [spark_zip2]


def test_the_zips_of_another_spark_or_with_no_pyspark_installed_are_kept(tmp_path: Path) -> None:
    site, _spark_zip, _py4j_zip = _site(tmp_path / "a")
    other = tmp_path / "spark-home" / "python" / "lib"
    other.mkdir(parents=True)
    with zipfile.ZipFile(other / "pyspark.zip", "w") as z:
        z.writestr("pyspark/__init__.py", "")
    tarball_zip = str(other / "pyspark.zip")
    assert redundant_zips([tarball_zip, site]) == []  # a Spark from a tarball: its zip is its PySpark
    assert redundant_zips([tarball_zip, str(tmp_path / "empty")]) == []  # no PySpark on the rest


def test_the_daemon_imports_pyspark_from_its_installation_with_spark_s_path() -> None:
    """The daemon module under the path Spark gives it (its installation's zips first): PySpark
    comes from the installed package, no zip importer is left, and the daemon's imports are done."""
    lib = Path(pyspark.__file__).parent / "python" / "lib"
    zips = sorted(str(p) for p in lib.glob("*.zip"))
    assert any(p.endswith("pyspark.zip") for p in zips), "pip's PySpark ships its zips"
    code = (
        "import sys, zipimport, importlib\n"
        "import kconform.traces.mine.daemon\n"
        "import pyspark\n"
        "print(pyspark.__file__)\n"
        "print(any(isinstance(f, zipimport.zipimporter) for f in sys.path_importer_cache.values()))\n"
        "print(all(m in sys.modules for m in ('duckdb', 'pyarrow.parquet', 'pyspark.worker')))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [*zips, os.environ.get("PYTHONPATH")] if p)}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    where, zipped, imported = run.stdout.split()
    assert ".zip" not in where and Path(where).parent == Path(pyspark.__file__).parent
    assert zipped == "False"
    assert imported == "True"
