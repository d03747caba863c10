"""The partial-order reduction of bounded model checking keeps a shortest violating run.

conformance.replication.bmc searches only runs in which no two adjacent independent steps are out of label
order (bmc_encoding.out_of_order). That is sound because such steps commute
(conformance.replication.bmc.commute_lemma, proven here by z3 for every label pair from every well-formed
bounded state) and it is not vacuous: the reduction does exclude runs. A footprint that forgets
what an action touches is caught by the lemma.
"""

from __future__ import annotations

import os

import pytest
import z3  # type: ignore[import-untyped]

from kconform.conformance.replication import bmc_encoding as enc
from kconform.conformance.replication.bmc import bmc, commute_lemma
from kconform.conformance.replication.explore import canonical
from kconform.model.actions import SearchBounds, booted_state
from kconform.model.config import Protocol, ReplicationConfig

SMALL = SearchBounds(max_records=1, max_leader_epoch=2)


def _cfg(protocol: Protocol, replicas: int = 2) -> ReplicationConfig:
    return ReplicationConfig(replicas=replicas, min_insync_replicas=1, protocol=protocol)


def test_independent_steps_commute() -> None:
    assert commute_lemma(_cfg(Protocol.DIVERGING_EPOCH), SMALL) is None


def test_a_footprint_that_forgets_the_published_record_is_refuted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the published-record parts, a controller action that publishes record p and a
    metadata delivery of p look independent; they do not commute (the delivery needs the record)."""
    real = enc.footprint

    def forgetful(d: enc.Dims, pre: dict[str, enc.Term], act: enc.Term) -> dict[str, enc.Term]:
        return {name: part for name, part in real(d, pre, act).items() if not name.startswith("pub")}

    monkeypatch.setattr(enc, "footprint", forgetful)
    pair = commute_lemma(_cfg(Protocol.DIVERGING_EPOCH), SMALL)
    assert pair is not None and "metadata" in pair


def test_the_reduction_excludes_runs_from_the_booted_cluster() -> None:
    """Two steps from the booted cluster that the reduction forbids exist (it is not vacuous), and
    both orders of such a pair reach one state."""
    cfg = _cfg(Protocol.KIP_320)
    d = enc.dims_for(SMALL, cfg, 3)
    s0, s1, s2 = (enc.variables(d, f"s{i}") for i in range(3))
    a1, a2 = enc.action_variable("a1"), enc.action_variable("a2")
    solver = z3.SolverFor("QF_BV")
    solver.add(enc.equal(s0, enc.constants(enc.project(canonical(booted_state(cfg), cfg), cfg, d))))
    solver.add(enc.transition(cfg, d, s0, s1, a1), enc.transition(cfg, d, s1, s2, a2))
    solver.add(enc.out_of_order(d, s0, a1, s1, a2))
    assert solver.check() == z3.sat


@pytest.mark.parametrize(
    ("protocol", "steps"), [(Protocol.TRUNCATE_TO_HW, 8), (Protocol.KIP_101, 5)], ids=["truncate-to-hw", "kip-101"]
)
def test_reduced_and_full_search_find_the_same_minimal_length(protocol: Protocol, steps: int) -> None:
    """A violation (truncate-to-hw, at 6) or UNSAT up to the bound (kip-101): the same either way;
    with a step invariant among the checked ones (the last pair of steps stays unconstrained)."""
    cfg = _cfg(protocol)
    invariants = ["StrongIsr", "NoDivergenceBelowHw", "LeaderHwMonotonic"]
    reduced = bmc(cfg, SMALL, invariants, max_steps=steps, reduce=True)
    full = bmc(cfg, SMALL, invariants, max_steps=steps, reduce=False)
    assert (reduced.found is None) == (full.found is None) == (protocol is Protocol.KIP_101)
    assert reduced.checked_steps == full.checked_steps


BUDGET_SMALL = os.environ.get("KCONFORM_BUDGET") == "small"


@pytest.mark.slow
@pytest.mark.parametrize(
    "protocol",
    # With the small budget the bounds are the fast tier's, where test_independent_steps_commute
    # has proven the default rung already: CI does not compute that lemma twice.
    [p for p in Protocol if not (BUDGET_SMALL and p is Protocol.DIVERGING_EPOCH)],
    ids=lambda p: p.value,
)
def test_independent_steps_commute_at_the_bounds_of_docs(protocol: Protocol) -> None:
    assert commute_lemma(_cfg(protocol), SMALL if BUDGET_SMALL else SearchBounds()) is None


@pytest.mark.slow
@pytest.mark.skipif(BUDGET_SMALL, reason="about 4 minutes: not in CI's budget")
def test_independent_steps_commute_with_three_replicas() -> None:
    assert commute_lemma(_cfg(Protocol.KIP_279, replicas=3), SMALL) is None
