"""The fetch-session slice as the registry sees it: one ``Slice`` naming each of its parts."""

from __future__ import annotations

from kconform.conformance.fetch import coverage, machine, scenarios
from kconform.conformance.fetch.lockstep import FetchJudge
from kconform.conformance.slice import Slice, SliceModules, slice_of
from kconform.impl.fetch.cluster import FetchCluster
from kconform.impl.mutants import FETCH
from kconform.model import fetch_invariants
from kconform.model.fetch_config import FetchConfig


def describe(cfg: FetchConfig) -> str:
    """The gate's one-line description of a fetch-session configuration."""
    return (
        f"slice=fetch partitions={cfg.partitions} clients={cfg.clients} followers={list(cfg.followers)} "
        f"read_committed={list(cfg.read_committed)} cache.slots={cfg.max_slots} eviction_ms={cfg.eviction_ms}"
    )


SLICE: Slice[FetchConfig] = slice_of(
    SliceModules(machine, scenarios, coverage, fetch_invariants),
    name=FETCH,
    title="incremental fetch sessions (KIP-227: session cache, FetchSessionHandler)",
    config_type=FetchConfig,
    parse_config=FetchConfig.from_json,
    gate_configs=lambda: ((FETCH, FetchConfig()),),
    describe=describe,
    make_judge=FetchJudge,
    make_reference=FetchCluster,
)
