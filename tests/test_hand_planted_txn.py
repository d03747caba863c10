"""The exactly-once hand-planted bugs (ci/benchmarks/hand_planted_txn.py): each applies once to the
reference's current source and compiles, and unplanting restores the real function; the zoo
catches the ones of the 2026-11-27 census that the gate's random search missed
(tests/test_txn_zoo_boundaries.py shows each with its near miss)."""

from __future__ import annotations

from kconform.ci.benchmarks.hand_planted_txn import BY_NAME, PLANTS
from kconform.ci.mutation.planted import owner_of, plant
from kconform.conformance.txn import scenarios as zoo
from kconform.impl.txn.cluster import TxnCluster
from kconform.model.txn_config import TxnConfig


def test_every_plant_applies_once_compiles_and_unplants() -> None:
    assert len(BY_NAME) == len(PLANTS)
    for p in PLANTS:
        assert p.slice == "txn" and p.what
        owner = owner_of(p.owner)
        original = getattr(owner, p.function)
        unplant = plant(p)
        assert getattr(owner, p.function) is not original
        unplant()
        assert getattr(owner, p.function) is original


def test_a_zoo_killed_plant_is_caught_and_the_clean_run_passes() -> None:
    """verify-response-ignores-guard survived the gate's random search on ce58386; the zoo's
    marker-before-verification-answer catches it (the clean run is the near miss)."""
    scenario, cfg = zoo.MARKER_BEFORE_VERIFICATION_ANSWER, TxnConfig()
    assert zoo.run_scenario(TxnCluster(), scenario, cfg, frozenset()).failure is None
    unplant = plant(BY_NAME["verify-response-ignores-guard"])
    try:
        failure = zoo.run_scenario(TxnCluster(), scenario, cfg, frozenset()).failure
    finally:
        unplant()
    assert failure is not None and failure.name == "verify_applied"
