"""The fetch-session slice as the registry sees it: one ``Slice`` naming each of its parts."""

from __future__ import annotations

from kconform.conformance.fetch.coverage import reachable_keys
from kconform.conformance.fetch.lockstep import FetchJudge
from kconform.conformance.fetch.machine import rules, swarm
from kconform.conformance.fetch.scenarios import zoo
from kconform.conformance.slice import Slice
from kconform.impl.fetch.cluster import FetchCluster
from kconform.impl.mutants import FETCH, mutants_of
from kconform.model import fetch_invariants
from kconform.model.fetch_config import FetchConfig


def describe(cfg: FetchConfig) -> str:
    """The gate's one-line description of a fetch-session configuration."""
    return (
        f"slice=fetch partitions={cfg.partitions} clients={cfg.clients} followers={list(cfg.followers)} "
        f"read_committed={list(cfg.read_committed)} cache.slots={cfg.max_slots} eviction_ms={cfg.eviction_ms}"
    )


SLICE: Slice[FetchConfig] = Slice(
    name=FETCH,
    title="incremental fetch sessions (KIP-227: session cache, FetchSessionHandler)",
    config_type=FetchConfig,
    parse_config=FetchConfig.from_json,
    gate_configs=lambda: ((FETCH, FetchConfig()),),
    describe=describe,
    make_judge=FetchJudge,
    invariants=lambda: fetch_invariants.INVARIANTS,
    make_reference=FetchCluster,
    mutants=lambda: mutants_of(FETCH),
    swarm=swarm,
    machine_rules=rules,
    zoo=zoo,
    reachable_keys=reachable_keys,
)
