"""A class data sharing (AppCDS) archive of the Spark driver JVM's classes, kept in the user's cache.

A Spark driver JVM loads and links some 15,000 classes before the miner's first job, most of its
start-up CPU (5-8 CPU-seconds here). Java's class data sharing maps classes dumped by an earlier
JVM instead (JEP 350, dynamic CDS archives, Java 13+): ``-XX:ArchiveClassesAtExit=F`` makes a JVM
write the classes it loaded to F when it exits, ``-XX:SharedArchiveFile=F`` makes a later one map
them (measured 2026-11-27: start-up 7.4-8.0 -> 3.5 CPU-seconds). Java 19's
``-XX:+AutoCreateSharedArchive`` does both in one flag; Java 17 has neither it nor a check that
would make a damaged archive harmless: a truncated archive crashes the JVM at start-up. So:

- ``driver_options`` (called by engine.spark_session before the driver JVM starts) returns the
  options for the driver JVM: ``-XX:SharedArchiveFile`` when an archive of this Java and Spark
  installation is in the cache and unchanged since it was checked (its size and modification time
  are those recorded beside it), else ``-XX:ArchiveClassesAtExit`` to a temporary file of this
  process, and an ``atexit`` hook that, when this Python process exits, ends the JVM (closing the
  gateway's standard input, as PySpark's own exit does), waits for the dump (bounded:
  ``DUMP_SECONDS``; the JVM is killed past it), has a fresh JVM map the dump with
  ``-Xshare:on`` (which fails instead of falling back when the archive is unusable), and only
  then moves it into place. Any failure leaves no archive: the next run tries again.
- The archive's name is a digest of what makes it valid (``archive_key``): the Java installation
  (the ``java`` binary and the JDK's module image: path, size, modification time), the Spark
  installation (its home and every jar's name, size and modification time) and the driver's Java
  options. A new Java or Spark gives a new name; older archives beyond the ``KEEP`` newest are
  removed. A stale archive the key did not catch (a jar replaced in place with the same size and
  time) is refused by the JVM itself, which checks the class path's jars, and falls back to
  loading classes normally (silently: ``QUIET``).
- The cache is ``$KCONFORM_CACHE_DIR`` or ``$XDG_CACHE_HOME/kconform`` or ``~/.cache/kconform``
  (``spark-cds/`` below it), never the repository. Who starts the session says whether a missing
  archive is made (``MODES``): the library's default is ``use`` (a test's session never waits for
  a dump), ``kconform mine`` and the benchmark ask for ``auto``; ``KCONFORM_SPARK_CDS`` (``auto``,
  ``use``, ``off``) overrides both.

Only the driver JVM gets the archive: in local mode it is also the executor; a cluster's executors
are other JVMs with another class path (``local-cluster``, ``spark://``), started as before.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

QUIET = "-Xlog:cds*=off -Xlog:class+path*=off"
"""JVM logging of class data sharing off: an archive the JVM cannot use (another class path, a
changed jar) is skipped without a warning, and dumping one does not list the classes it skips."""

DUMP_SECONDS = 300.0
"""How long the exiting Python process waits for the JVM to write its archive before killing it."""

CHECK_SECONDS = 60.0
"""How long the check of a fresh archive (a JVM started with it, ``-Xshare:on -version``) may take."""

KEEP = 3
"""Archives kept in the cache (the newest; each is about 120 MB)."""

STALE_TMP_SECONDS = 3600.0
"""A temporary dump older than this is left over from a process that was killed: removed."""


def cache_dir() -> Path:
    """Where the archives live: ``$KCONFORM_CACHE_DIR``, ``$XDG_CACHE_HOME/kconform`` or
    ``~/.cache/kconform``, then ``spark-cds``."""
    base = os.environ.get("KCONFORM_CACHE_DIR")
    if base:
        return Path(base) / "spark-cds"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kconform" / "spark-cds"


MODES = ("auto", "use", "off")
"""``auto``: map the archive, make it when missing; ``use``: map it, never make it; ``off``."""


def mode(default: str = "use") -> str:
    """``KCONFORM_SPARK_CDS`` if set (anything but ``MODES`` counts as ``off``), else ``default``."""
    value = os.environ.get("KCONFORM_SPARK_CDS")
    if value is None:
        return default
    value = value.strip().lower()
    return value if value in MODES else "off"


def _java_home() -> Path | None:
    """The JDK the Spark launcher will run: ``$JAVA_HOME``, else the ``java`` on the PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        return Path(home)
    java = shutil.which("java")
    if java is None:
        return None
    return Path(java).resolve().parent.parent


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def archive_key(spark_home: Path, options: str) -> str | None:
    """A digest of what an archive is valid for: the JDK (its ``java`` and module image), Spark's
    jars and the driver's Java ``options``; None when the JDK or Spark's jars are not found."""
    java_home = _java_home()
    jars = spark_home / "jars"
    if java_home is None or not jars.is_dir():
        return None
    digest = hashlib.sha256(options.encode())
    try:
        for part in (java_home / "bin" / "java", java_home / "lib" / "modules"):
            digest.update(_stamp(part.resolve()).encode())
        for jar in sorted(jars.iterdir()):
            digest.update(_stamp(jar).encode())
    except OSError:
        return None
    return digest.hexdigest()[:24]


@dataclass
class _Pending:
    """A dump this process asked its driver JVM for: where it goes, and where it lands if good."""

    tmp: Path
    final: Path
    java: Path
    gateway: Any = None
    class_path: str | None = None


_pending: _Pending | None = None


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(os.environ.get("SPARK_HOME") or _find_spark_home())


def driver_options(options: str, default: str = "use") -> str:
    """``options`` (the driver JVM's Java options) with the archive's: map the cached archive, or
    dump one when this process's JVM exits (``mode(default)`` is ``auto``). Unchanged when the
    archive is off, this process's JVM runs already (its options are set), or the JDK or Spark is
    not found."""
    global _pending
    chosen = mode(default)
    if chosen == "off" or _pending is not None:
        return options
    from pyspark import SparkContext

    if SparkContext._gateway is not None:  # the JVM runs already: its options are set
        return options
    spark_home = _spark_home()
    key = archive_key(spark_home, options)
    java_home = _java_home()
    if key is None or java_home is None:
        return options
    folder = cache_dir()
    final = folder / f"{key}.jsa"
    if _usable(final):
        return f"{options} -XX:SharedArchiveFile={final} {QUIET}".strip()
    if chosen != "auto":
        return options
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _tidy(folder)
    except OSError:
        return options
    tmp = folder / f"{key}.{os.getpid()}.{time.time_ns()}.tmp"
    _pending = _Pending(tmp, final, java_home / "bin" / "java")
    atexit.register(_finish)
    return f"{options} -XX:ArchiveClassesAtExit={tmp} {QUIET}".strip()


def started(gateway: Any) -> None:
    """Called once the session runs: remembers the JVM's gateway (whose process ``_finish`` ends)
    and its class path (which the check of the dump must repeat)."""
    if _pending is None or _pending.gateway is not None:
        return
    _pending.gateway = gateway
    try:
        _pending.class_path = str(gateway.jvm.java.lang.System.getProperty("java.class.path"))
    except Exception:  # no class path, no check: the dump is discarded
        _pending.class_path = None


def _record(path: Path) -> Path:
    return path.with_suffix(".json")


def _usable(final: Path) -> bool:
    """The archive exists and is the file that was checked (size and modification time as recorded);
    a damaged or half-written one is removed (the JVM would crash on a truncated archive)."""
    try:
        st = final.stat()
        recorded = json.loads(_record(final).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        _remove(final)
        return False
    if recorded.get("size") == st.st_size and recorded.get("mtime_ns") == st.st_mtime_ns:
        return True
    _remove(final)
    return False


def _remove(final: Path) -> None:
    for path in (final, _record(final)):
        with contextlib.suppress(OSError):
            path.unlink()


def _tidy(folder: Path) -> None:
    """Remove temporary dumps left by killed processes and all but the ``KEEP`` newest archives."""
    now = time.time()
    for tmp in folder.glob("*.tmp"):
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime > STALE_TMP_SECONDS:
                tmp.unlink()
    archives = sorted(folder.glob("*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in archives[KEEP - 1 :]:  # room for the one this process makes
        _remove(old)


def _finish() -> None:
    """At this process's exit: end the driver JVM, wait for its dump, check it and move it into
    place; on any failure (or a timeout, after which the JVM is killed) remove it."""
    pending = _pending
    if pending is None or pending.gateway is None:
        return
    proc = getattr(pending.gateway, "proc", None)
    try:
        if proc is not None:
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.close()  # PythonGatewayServer exits at EOF on its standard input
            try:
                proc.wait(timeout=DUMP_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
                return
        if pending.class_path is None or not pending.tmp.is_file() or not _check(pending):
            return
        st = pending.tmp.stat()
        _record(pending.final).write_text(
            json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "made": time.time()}), encoding="utf-8"
        )
        os.replace(pending.tmp, pending.final)
    except BaseException:  # Ctrl-C while waiting: the JVM goes, the dump with it
        if proc is not None and proc.poll() is None:
            proc.kill()
        raise
    finally:
        with contextlib.suppress(OSError):
            pending.tmp.unlink()


def _check(pending: _Pending) -> bool:
    """A fresh JVM maps the dump with ``-Xshare:on`` (an error, not a fallback, when it cannot) and
    the same class path."""
    assert pending.class_path is not None
    try:
        run = subprocess.run(
            [str(pending.java), f"-XX:SharedArchiveFile={pending.tmp}", "-Xshare:on", *QUIET.split(), "-version"],
            env={**os.environ, "CLASSPATH": pending.class_path},
            capture_output=True,
            timeout=CHECK_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0
