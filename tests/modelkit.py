"""Helpers for model tests: a booted partition and atomic replication steps."""

from __future__ import annotations

from kconform.model import replication as R
from kconform.model.config import ReplicationConfig
from kconform.model.state import State, initial_state


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
