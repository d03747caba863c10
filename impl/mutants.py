"""Known protocol bugs the reference brokers can be switched into, by name: the registry of every
slice's mutants.

Each slice declares its own (``impl/<slice>/mutants.py``: names, descriptions naming the KIP or Kafka
issue that fixed the bug and the symptom a checker should see, and the configuration a mutant needs);
this module merges them and answers which slice a mutant belongs to. A new slice registers its
mutants in ``_SLICES``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TypeVar, cast

from .fetch import mutants as _fetch
from .replication import mutants as _replication
from .txn import mutants as _txn

REPLICATION = "replication"
TXN = "txn"
FETCH = "fetch"

C = TypeVar("C")

_SLICES: dict[str, tuple[dict[str, str], dict[str, dict[str, int | bool]]]] = {
    REPLICATION: (_replication.MUTANTS, _replication.MUTANT_CONFIG),
    TXN: (_txn.MUTANTS, _txn.MUTANT_CONFIG),
    FETCH: (_fetch.MUTANTS, _fetch.MUTANT_CONFIG),
}
"""Slice name → (its mutants: name → description, their MUTANT_CONFIG), in registry order."""

MUTANTS: dict[str, str] = {name: doc for mutants, _ in _SLICES.values() for name, doc in mutants.items()}
"""Every slice's mutants (name → description), slice by slice in registry order."""

TXN_MUTANT_NAMES = frozenset(_txn.MUTANTS)
SLICE_OF: dict[str, str] = {name: slice_name for slice_name, (mutants, _) in _SLICES.items() for name in mutants}
"""The slice each mutant belongs to: ``replication`` (impl/replication/), ``txn`` (impl/txn/) or
``fetch`` (impl/fetch/)."""

MUTANT_CONFIG: dict[str, dict[str, int | bool]] = {
    name: overrides for _, config in _SLICES.values() for name, overrides in config.items()
}
"""Configuration a mutant needs to be observable at all, as field overrides of its slice's config.

``late-endtxn-next-txn`` breaks a rule that exists only with transaction version 2 (KIP-890 part 2's
epoch bump on every EndTxn): under TV0 the late EndTxn ending the next transaction is Kafka's own
behaviour (KAFKA-17754, classified allowed), so the mutant is the reference there. The gate's
``--self-check`` runs each mutant's campaign (zoo, random search and replay) with the gate's config
updated by these overrides (``config_for``); every other mutant runs with the gate's config."""


def config_for(name: str, config: C) -> C:
    """``config`` with mutant ``name``'s MUTANT_CONFIG overrides applied (a copy of the frozen
    dataclass); ``config`` itself when the mutant needs none or the config has none of the fields
    (another slice's config)."""
    overrides = MUTANT_CONFIG.get(name, {})
    if not overrides or not dataclasses.is_dataclass(config) or isinstance(config, type):
        return config
    known = {f.name for f in dataclasses.fields(config)}
    applicable = {key: value for key, value in overrides.items() if key in known}
    return cast(C, dataclasses.replace(config, **applicable)) if applicable else config


def mutants_of(slice_name: str) -> dict[str, str]:
    """The mutants of one slice (name → description), in registry order."""
    return {name: doc for name, doc in MUTANTS.items() if SLICE_OF[name] == slice_name}


def check_mutants(names: Iterable[str], slice_name: str | None = None) -> frozenset[str]:
    """The mutant names as a frozenset; a name unknown (to ``slice_name``, when given) raises
    ValueError listing the known ones."""
    chosen = frozenset(names)
    unknown = sorted(n for n in chosen if n not in MUTANTS or (slice_name is not None and SLICE_OF[n] != slice_name))
    if unknown:
        known = MUTANTS if slice_name is None else mutants_of(slice_name)
        raise ValueError(f"unknown mutant(s) {unknown}; known mutants: {sorted(known)}")
    return chosen
