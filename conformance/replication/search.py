"""The replication slice's searches of its model alone, as the registry sees them (one ``ModelSearch``).

Breadth-first exploration (conformance.replication.explore) and z3 bounded model checking
(conformance.replication.bmc) over model.actions' atomic actions; a violation of either becomes a
counterexample file through conformance.replication.pathevents. ``kconform explore`` and
``kconform bmc`` reach this module through conformance.registry.search_of only.
"""

from __future__ import annotations

from kconform.conformance.replication.bmc import bmc, inductive
from kconform.conformance.replication.bmc_encoding import check_supported
from kconform.conformance.replication.explore import explore
from kconform.conformance.replication.pathevents import path_counterexample
from kconform.conformance.slice import ModelSearch
from kconform.model.config import ReplicationConfig


def label(cfg: ReplicationConfig) -> str:
    """The protocol rung: counterexample files are ``explore-<rung>.jsonl`` / ``bmc-<rung>.jsonl``."""
    return cfg.protocol.value


def header(cfg: ReplicationConfig) -> str:
    """The rung, the replicas and min.insync.replicas, as the searches' first line names them."""
    return f"{cfg.protocol.value}: {cfg.replicas} replicas, min.insync.replicas {cfg.min_insync_replicas}"


SEARCH: ModelSearch[ReplicationConfig] = ModelSearch(
    explore=explore,
    bmc=bmc,
    inductive=inductive,
    check_bmc=check_supported,
    counterexample=path_counterexample,
    label=label,
    header=header,
)
