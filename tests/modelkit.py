"""Helpers for model tests: a booted partition and atomic replication steps."""

from __future__ import annotations

import pytest

from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.state import RemoteReplica, Replica, State, initial_state


def every_leader_new(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the model forget its followers' LEOs on every new leader epoch, re-elected or new (the
    rule before Kafka's Replica.resetReplicaState(isNewLeader = false) was modelled: a re-elected
    leader keeps them, model.replication.reset_remotes)."""
    kafka = R.reset_remotes

    def always_new(
        cfg: ReplicationConfig, r: Replica, isr: tuple[int, ...], now_ms: int, is_new_leader: bool
    ) -> tuple[RemoteReplica, ...]:
        return kafka(cfg, r, isr, now_ms, is_new_leader=True)

    monkeypatch.setattr(R, "reset_remotes", always_new)


def booted(cfg: ReplicationConfig) -> State:
    """Every broker registered, broker 0 leads epoch 0, every broker applied the metadata."""
    s = initial_state(cfg)
    for b in cfg.brokers:
        s, _ = R.controller_unfence(s, cfg, b)
    for b in cfg.brokers:
        s, _ = R.apply_metadata(s, cfg, b, s.controller)
    return s


def replicate(s: State, cfg: ReplicationConfig, follower: int) -> State:
    """One atomic fetch round trip for ``follower``."""
    q = R.fetch_request(s, cfg, follower)
    s, resp = R.handle_fetch(s, cfg, q.leader, follower, q)
    s, _ = R.apply_fetch_response(s, cfg, follower, q, resp)
    return s


def spread_metadata(s: State, cfg: ReplicationConfig) -> State:
    for b in cfg.brokers:
        if s.replica(b).alive:
            s, _ = R.apply_metadata(s, cfg, b, s.controller)
    return s
