"""The SMT encoding (conformance.replication.bmc_encoding) and the executable model agree on every action.

Issue 5: "the two encodings must agree; a test proves they do on every action". For each state of
a sample (random walks in the fast tier, every state breadth-first search reaches within a bound
in the slow tier) and every label of the alphabet, z3's step is enabled iff model.actions.successors
offers the label, leads to the projection of the model's successor, and every invariant formula
gives model.invariants' verdict on the state and on each step. The action kinds seen enabled are
checked too, so a sample that never exercised an action cannot pass silently.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from kconform.conformance.replication import bmc_encoding as enc
from kconform.conformance.replication.bmc import disagreements, well_formed_is_inductive
from kconform.conformance.replication.explore import canonical, explore
from kconform.model.actions import SearchBounds, booted_state, successors
from kconform.model.config import Protocol, ReplicationConfig
from kconform.model.state import State

BOUNDS = SearchBounds(max_records=2, max_leader_epoch=3)


def _cfg(protocol: Protocol, replicas: int = 2, min_isr: int = 1) -> ReplicationConfig:
    return ReplicationConfig(replicas=replicas, min_insync_replicas=min_isr, protocol=protocol)


def _walks(cfg: ReplicationConfig, bounds: SearchBounds, walks: int, length: int, seed: int) -> list[State]:
    """Distinct states of seeded random walks from the booted cluster."""
    rng = random.Random(seed)
    seen: dict[State, None] = {}
    for _ in range(walks):
        s = canonical(booted_state(cfg), cfg)
        for _ in range(length):
            seen.setdefault(s)
            nxt = list(successors(s, cfg, bounds))
            if not nxt:
                break
            s = canonical(rng.choice(nxt)[1], cfg)
    return list(seen)


# The kinds each rung must have exercised: a follower fetch, an epoch query on the rungs that
# truncate through OffsetsForLeaderEpoch, elections, metadata, writes.
_COMMON = {"fence", "unfence", "move_leader", "metadata", "write", "replicate"}


@pytest.mark.parametrize("protocol", list(Protocol), ids=lambda p: p.value)
def test_encoding_agrees_with_the_model_on_random_walks(protocol: Protocol) -> None:
    cfg = _cfg(protocol)
    states = _walks(cfg, BOUNDS, walks=2, length=12, seed=5)
    problems, kinds = disagreements(cfg, BOUNDS, states)
    assert problems == []
    assert set(kinds) >= _COMMON, kinds
    if protocol.uses_epoch_query:
        assert "truncate" in kinds


def test_encoding_agrees_on_acknowledgements_and_isr_changes() -> None:
    """Acknowledgements and ISR expansions are rare on random walks: walks that write with
    min.insync.replicas=2, keeping the states where one is possible."""
    cfg = _cfg(Protocol.DIVERGING_EPOCH, min_isr=2)
    states = _walks(cfg, BOUNDS, walks=40, length=12, seed=3)
    wanted = [
        s
        for s in states
        if any(lab.split("(")[0] in {"ack", "shrink", "expand"} for lab, _ in successors(s, cfg, BOUNDS))
    ]
    problems, kinds = disagreements(cfg, BOUNDS, wanted[:40])
    assert problems == []
    assert {"ack", "expand"} <= set(kinds), kinds


def test_a_model_that_differs_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a model whose writes are not flushed (durable LEO kept), and one
    that offers an extra label, both disagree with the encoding."""
    from dataclasses import replace

    from kconform.conformance.replication import bmc

    cfg = _cfg(Protocol.KIP_101)
    states = _walks(cfg, BOUNDS, walks=1, length=6, seed=1)

    def unflushed(s: State, c: ReplicationConfig, b: SearchBounds) -> Iterator[tuple[str, State]]:
        for label, post in successors(s, c, b):
            kept = replace(post.replica(0), durable_leo=s.replica(0).durable_leo)
            yield label, (post.with_replica(0, kept) if label == "write(0)" else post)

    monkeypatch.setattr(bmc, "successors", unflushed)
    assert any("write(0)" in p for p in disagreements(cfg, BOUNDS, states)[0])

    def extra(s: State, c: ReplicationConfig, b: SearchBounds) -> Iterator[tuple[str, State]]:
        yield from successors(s, c, b)
        yield "move_leader(0)", s

    monkeypatch.setattr(bmc, "successors", extra)
    assert any("move_leader(0)" in p for p in disagreements(cfg, BOUNDS, states)[0])


def test_project_refuses_states_outside_the_alphabet() -> None:
    cfg = _cfg(Protocol.KIP_320)
    s = canonical(booted_state(cfg), cfg)
    d = enc.dims_for(BOUNDS, cfg, 4)
    from dataclasses import replace

    crashed = s.with_replica(1, replace(s.replica(1), alive=False))
    with pytest.raises(enc.Unsupported, match="down"):
        enc.project(crashed, cfg, d)
    with pytest.raises(enc.Unsupported, match="crash"):
        enc.check_supported(cfg, SearchBounds(allow_crash=True))


@pytest.mark.parametrize(
    "protocol",
    [
        Protocol.TRUNCATE_TO_HW,
        Protocol.DIVERGING_EPOCH,
        *(pytest.param(p, marks=pytest.mark.slow) for p in (Protocol.KIP_101, Protocol.KIP_279, Protocol.KIP_320)),
    ],
    ids=lambda p: p.value,
)
def test_well_formed_states_stay_well_formed(protocol: Protocol) -> None:
    """The structural facts assumed of every state (bmc_encoding.well_formed) are themselves
    inductive, so assuming them in the induction checks is sound."""
    assert well_formed_is_inductive(_cfg(protocol), BOUNDS) is None


@pytest.mark.slow
@pytest.mark.parametrize("protocol", list(Protocol), ids=lambda p: p.value)
def test_encoding_agrees_on_every_state_bfs_reaches(protocol: Protocol) -> None:
    cfg = _cfg(protocol)
    depth = 3 if __import__("os").environ.get("KCONFORM_BUDGET") == "small" else 5
    res = explore(cfg, BOUNDS, max_depth=depth, stop_at_first=False, keep_graph=True)
    assert res.graph is not None
    problems, _kinds = disagreements(cfg, BOUNDS, list(res.graph.nodes))
    assert problems == []


@pytest.mark.slow
@pytest.mark.parametrize("protocol", [Protocol.KIP_279, Protocol.DIVERGING_EPOCH], ids=lambda p: p.value)
def test_encoding_agrees_with_three_replicas(protocol: Protocol) -> None:
    cfg = _cfg(protocol, replicas=3, min_isr=2)
    states = _walks(cfg, SearchBounds(max_records=2, max_leader_epoch=2), walks=4, length=14, seed=2)
    problems, kinds = disagreements(cfg, SearchBounds(max_records=2, max_leader_epoch=2), states)
    assert problems == []
    assert set(kinds) >= _COMMON
