"""The Spark driver JVM's class data sharing archive (traces.mine.jvm_archive): which options a
session gets, when an archive counts as usable, and how the dump at exit is checked, moved into
place or thrown away (with the JVM stood in for by a small process)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kconform.traces.mine import jvm_archive


@pytest.fixture
def installation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake JDK and Spark home, an empty cache, no pending dump and no KCONFORM_SPARK_CDS."""
    java_home, spark_home = tmp_path / "jdk", tmp_path / "spark"
    (java_home / "bin").mkdir(parents=True)
    (java_home / "lib").mkdir()
    (java_home / "bin" / "java").write_text("#!/bin/sh\n")
    (java_home / "lib" / "modules").write_bytes(b"m" * 10)
    (spark_home / "jars").mkdir(parents=True)
    for name in ("spark-core.jar", "scala-library.jar"):
        (spark_home / "jars" / name).write_bytes(b"j" * 20)
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    monkeypatch.setenv("KCONFORM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KCONFORM_SPARK_CDS", raising=False)
    monkeypatch.setattr(jvm_archive, "_spark_home", lambda: spark_home)
    monkeypatch.setattr(jvm_archive, "_pending", None)
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_gateway", None)  # as in a process whose JVM has not started
    return spark_home


def _archive(spark_home: Path, options: str, content: bytes = b"archive") -> Path:
    """An archive in the cache for ``options``, recorded as checked."""
    key = jvm_archive.archive_key(spark_home, options)
    assert key is not None
    final = jvm_archive.cache_dir() / f"{key}.jsa"
    final.parent.mkdir(parents=True, exist_ok=True)
    final.write_bytes(content)
    st = final.stat()
    final.with_suffix(".json").write_text(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    return final


def test_the_key_follows_java_spark_and_the_options(installation: Path) -> None:
    key = jvm_archive.archive_key(installation, "-XX:+UseSerialGC")
    assert key is not None
    assert jvm_archive.archive_key(installation, "-XX:+UseSerialGC") == key
    assert jvm_archive.archive_key(installation, "-XX:+UseParallelGC") != key
    (installation / "jars" / "spark-core.jar").write_bytes(b"j" * 21)  # another Spark
    assert jvm_archive.archive_key(installation, "-XX:+UseSerialGC") != key


def test_a_checked_archive_is_mapped_and_nothing_is_dumped(installation: Path) -> None:
    final = _archive(installation, "-Xss1m")
    options = jvm_archive.driver_options("-Xss1m", "auto")
    assert options.startswith("-Xss1m -XX:SharedArchiveFile=")
    assert str(final) in options and "ArchiveClassesAtExit" not in options
    assert jvm_archive._pending is None


def test_a_changed_archive_is_removed_and_made_anew(installation: Path) -> None:
    final = _archive(installation, "-Xss1m")
    with final.open("ab") as f:  # no longer the file that was checked (e.g. truncated, rewritten)
        f.write(b"x")
    options = jvm_archive.driver_options("-Xss1m", "auto")
    assert not final.exists() and not final.with_suffix(".json").exists()
    assert "-XX:ArchiveClassesAtExit=" in options and "SharedArchiveFile" not in options
    assert jvm_archive._pending is not None and jvm_archive._pending.final == final


def test_a_missing_archive_is_made_only_in_auto_mode(installation: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert jvm_archive.driver_options("-Xss1m") == "-Xss1m"  # the library's default: use, never make
    assert jvm_archive._pending is None
    monkeypatch.setenv("KCONFORM_SPARK_CDS", "off")
    _archive(installation, "-Xss1m")
    assert jvm_archive.driver_options("-Xss1m", "auto") == "-Xss1m"  # the variable overrides the caller
    monkeypatch.setenv("KCONFORM_SPARK_CDS", "use")
    assert "SharedArchiveFile" in jvm_archive.driver_options("-Xss1m", "auto")


def test_no_archive_options_when_java_is_not_found(installation: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(installation / "nowhere"))
    assert jvm_archive.driver_options("-Xss1m", "auto") == "-Xss1m"


class _Gateway:
    """Stands in for py4j's gateway: ``proc`` is the "JVM", which writes ``content`` to the dump
    path once its standard input closes (as the driver JVM dumps when it exits)."""

    def __init__(self, tmp: Path, content: bytes, ignore_eof: bool = False) -> None:
        code = (
            "import sys, time\n"
            + ("time.sleep(60)\n" if ignore_eof else "sys.stdin.read()\n")
            + f"open({str(tmp)!r}, 'wb').write({content!r})\n"
        )
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)


def _pending_dump(installation: Path, content: bytes, ignore_eof: bool = False) -> Any:
    options = jvm_archive.driver_options("-Xss1m", "auto")
    pending = jvm_archive._pending
    assert pending is not None and str(pending.tmp) in options
    gateway = _Gateway(pending.tmp, content, ignore_eof)
    pending.gateway, pending.class_path = gateway, "/nowhere.jar"
    return pending, gateway


def test_a_dump_that_passes_the_check_is_moved_into_place(installation: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[Path] = []

    def check(p: Any) -> bool:
        checked.append(p.tmp)
        return True

    monkeypatch.setattr(jvm_archive, "_check", check)
    pending, gateway = _pending_dump(installation, b"classes")
    jvm_archive._finish()
    assert gateway.proc.poll() == 0 and checked == [pending.tmp]
    assert pending.final.read_bytes() == b"classes" and not pending.tmp.exists()
    assert jvm_archive._usable(pending.final)
    monkeypatch.setattr(jvm_archive, "_pending", None)  # the next process
    assert "SharedArchiveFile" in jvm_archive.driver_options("-Xss1m", "auto")


def test_a_dump_the_jvm_cannot_map_is_thrown_away(installation: Path) -> None:
    """The real check: ``java -Xshare:on`` refuses a file that is no archive (a truncated one would
    crash a JVM that maps it with the default ``-Xshare:auto``)."""
    real = shutil.which("java")
    if real is None:
        pytest.skip("no java on the PATH")
    pending, gateway = _pending_dump(installation, b"not an archive")
    pending.java = Path(real)
    jvm_archive._finish()
    assert gateway.proc.poll() == 0
    assert not pending.final.exists() and not pending.tmp.exists()


def test_a_jvm_that_does_not_finish_its_dump_is_killed(installation: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jvm_archive, "DUMP_SECONDS", 0.5)
    pending, gateway = _pending_dump(installation, b"classes", ignore_eof=True)
    started = time.monotonic()
    jvm_archive._finish()
    assert time.monotonic() - started < 30
    assert gateway.proc.poll() is not None  # killed and reaped
    assert not pending.final.exists() and not pending.tmp.exists()


def test_old_temporary_dumps_and_surplus_archives_are_tidied(installation: Path) -> None:
    folder = jvm_archive.cache_dir()
    folder.mkdir(parents=True)
    old_tmp, new_tmp = folder / "k.1.1.tmp", folder / "k.2.2.tmp"
    for path in (old_tmp, new_tmp):
        path.write_bytes(b"partial")
    os.utime(old_tmp, (time.time() - 2 * jvm_archive.STALE_TMP_SECONDS,) * 2)
    archives = []
    for i in range(jvm_archive.KEEP + 1):
        archive = folder / f"a{i}.jsa"
        archive.write_bytes(b"a")
        archive.with_suffix(".json").write_text("{}")
        os.utime(archive, (time.time() - 100 * (jvm_archive.KEEP + 1 - i),) * 2)
        archives.append(archive)
    jvm_archive._tidy(folder)
    assert not old_tmp.exists() and new_tmp.exists()  # a dump in progress is left alone
    kept = sorted(p.name for p in folder.glob("*.jsa"))
    assert kept == [a.name for a in archives[-(jvm_archive.KEEP - 1) :]]
    assert not (folder / "a0.json").exists()
