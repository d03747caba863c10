"""Spark on one machine listens on loopback only.

A local master (``local``, ``local[N]``, ``local[*]``, ``local-cluster[...]``) runs every JVM of the
job on this machine, yet Spark binds its driver (RPC, block manager) to the address the host name
resolves to, often an outside interface (``Utils.localHostName``, ``spark.driver.bindAddress``'s
default). ``loopback_conf`` pins the driver to 127.0.0.1, and ``pin_loopback`` sets
``SPARK_LOCAL_IP`` for the JVMs the driver starts (local-cluster's master, workers and executors:
``Utils.localIpAddress``) unless the environment already names one. A cluster master
(``spark://``, ``yarn``, ``k8s://``) gets neither: its executors must reach the driver from other
machines, so the operator's network settings stand.
"""

from __future__ import annotations

import os

LOOPBACK = "127.0.0.1"


def is_local(master: str) -> bool:
    """Whether ``master`` runs every JVM of the job on this machine."""
    return master.strip().startswith("local")


def loopback_conf(master: str) -> dict[str, str]:
    """Spark settings that bind the driver to loopback on a local master; none on a cluster master."""
    if not is_local(master):
        return {}
    return {"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK}


def pin_loopback(master: str) -> None:
    """On a local master, make the JVMs Spark starts bind to loopback (``SPARK_LOCAL_IP``), unless
    the environment already chose an address. Call before the driver JVM starts."""
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
