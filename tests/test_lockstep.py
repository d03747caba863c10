"""The judge accepts what the model allows and flags anything else as non-conformance."""

from __future__ import annotations

from dataclasses import replace

from kconform.conformance.judge import ALLOWED, NON_CONFORMANCE
from kconform.conformance.replication.lockstep import Judge, judge_events
from kconform.conformance.runner import LockstepRun
from kconform.impl import ReferenceCluster
from kconform.model.config import ReplicationConfig
from kconform.traces import events as ev
from kconform.traces import operations as o

CFG = ReplicationConfig()


def _events(ops: list[o.Operation], cfg: ReplicationConfig = CFG) -> list[ev.Event]:
    cluster = ReferenceCluster()
    out = cluster.reset(cfg, 0, frozenset())
    for op in ops:
        out += cluster.apply(op)
    return out


HAPPY = [o.Run(1000), o.Produce(1, -1), o.Run(1000), o.Consume(0), o.Produce(2, 1), o.Run(1000)]


def test_reference_events_conform() -> None:
    events = _events(HAPPY)
    assert any(isinstance(e, ev.ProduceCompleted) and e.error == ev.NONE for e in events)
    assert [f for f in judge_events(CFG, events) if f.failing] == []


def test_a_tampered_outcome_is_non_conformance() -> None:
    events = _events(HAPPY)
    i = next(i for i, e in enumerate(events) if isinstance(e, ev.FetchHandled) and e.entries)
    fetch = events[i]
    assert isinstance(fetch, ev.FetchHandled)
    events[i] = replace(fetch, hw=fetch.hw + 1)
    findings = [f for f in judge_events(CFG, events) if f.failing]
    assert findings[0].verdict == NON_CONFORMANCE and findings[0].name == "fetch_handled"
    assert "hw: implementation says" in findings[0].message


def test_an_answer_to_an_unsent_request_is_non_conformance() -> None:
    judge = Judge(CFG)
    for e in _events([]):
        judge.observe(e)
    bogus = ev.FetchApplied(node=1, msg=999_999, outcome="appended", truncated_to=-1, appended=0, hw=0)
    (finding,) = judge.observe(bogus)
    assert finding.verdict == NON_CONFORMANCE and "999999" in finding.message


def test_acks_1_loss_after_unclean_election_is_reported_as_allowed() -> None:
    cfg = ReplicationConfig(unclean_leader_election=True, min_insync_replicas=1, replicas=2)
    run = LockstepRun(ReferenceCluster(), cfg, 0, frozenset())
    run.boot()
    ops = [
        o.Run(1000),
        o.Isolate(1),
        o.Run(3000),
        o.Advance(31_000),
        o.Run(1000),
        o.Produce(1, 1),
        o.Run(1000),
        o.Crash(0),
        o.Heal(),
        o.Run(1000),
        o.Advance(10_000),
        o.Run(1000),
    ]
    for op in ops:
        run.apply(op)
    assert run.failure is None, run.failure
    allowed = [f for s in run.steps for f in s.findings if f.verdict == ALLOWED]
    assert allowed and "acks=1" in allowed[0].message
