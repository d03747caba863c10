"""The slice registry: every slice is found by name and by configuration, through one interface."""

from __future__ import annotations

import pytest

from kconform.conformance import registry
from kconform.conformance.slice import Slice
from kconform.model.config import ReplicationConfig
from kconform.model.configs import SLICES
from kconform.model.fetch_config import FetchConfig
from kconform.model.txn_config import TxnConfig


def test_builtin_slices_in_the_gates_order() -> None:
    assert registry.names()[:3] == SLICES
    assert [s.name for s in registry.all_slices()][:3] == list(SLICES)


@pytest.mark.parametrize("cfg", [ReplicationConfig(), TxnConfig(), TxnConfig(transaction_version=2), FetchConfig()])
def test_for_config_finds_the_slice_of_the_config_type(cfg: object) -> None:
    found = registry.for_config(cfg)
    assert found.config_type is type(cfg)
    assert registry.get(found.name) is found
    assert found.make_judge(cfg, None).events_judged == 0
    assert found.invariants() and found.mutants() and found.zoo(cfg)
    assert found.reachable_keys(cfg)


def test_each_slice_owns_its_mutants_and_invariants() -> None:
    rep, txn, fetch = registry.get("replication"), registry.get("txn"), registry.get("fetch")
    for a, b in ((rep, txn), (rep, fetch), (txn, fetch)):
        assert not set(a.mutants()) & set(b.mutants())
        assert not set(a.invariants()) & set(b.invariants())
    assert rep.search is not None and txn.search is None and fetch.search is None
    assert registry.searchable() == ("replication",)
    assert registry.search_of(rep).label(ReplicationConfig()) == ReplicationConfig().protocol.value
    with pytest.raises(
        registry.UnknownSlice, match="the txn slice has no model search \\(slices with one: replication\\)"
    ):
        registry.search_of(txn)


def test_unknown_name_and_type_are_clear_errors() -> None:
    with pytest.raises(registry.UnknownSlice, match="unknown slice 'share' \\(one of replication, txn, fetch"):
        registry.get("share")
    with pytest.raises(registry.UnknownSlice, match="no slice has configurations of type int"):
        registry.for_config(3)


def test_a_second_slice_with_a_taken_name_is_refused() -> None:
    rep = registry.get("replication")
    clash: Slice[object] = Slice(
        **{**{f: getattr(rep, f) for f in rep.__dataclass_fields__}, "config_type": object}  # same name
    )
    with pytest.raises(ValueError, match="clashes with the registered slice 'replication'"):
        registry.register(clash)
    assert registry.get("replication") is rep
