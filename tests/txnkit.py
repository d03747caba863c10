"""Helpers for tests of the exactly-once reference cluster: run operations, pick events."""

from __future__ import annotations

from typing import TypeVar

from kconform.impl.txn.cluster import TxnCluster
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

E = TypeVar("E", bound=ev.Event)


def run(
    steps: list[ops.Operation], cfg: TxnConfig | None = None, mutants: frozenset[str] = frozenset()
) -> tuple[TxnCluster, list[ev.Event]]:
    """Boot a cluster and apply ``steps``; returns it and every event (boot events first)."""
    cluster = TxnCluster()
    events = cluster.reset(cfg or TxnConfig(), 0, mutants)
    for op in steps:
        events += cluster.apply(op)
    return cluster, events


def of(events: list[ev.Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def committed_txn(client: int, sends: list[tuple[str, int]], commit: bool = True) -> list[ops.Operation]:
    """Init (if needed by the caller), begin, send the batches, end, settle."""
    out: list[ops.Operation] = [ops.BeginTxn(client)]
    out += [ops.Send(client, p, n) for p, n in sends]
    out += [ops.Settle(1000), ops.CommitTxn(client) if commit else ops.AbortTxn(client), ops.Settle(1000)]
    return out


INIT = [ops.InitProducer(0, "txn-1"), ops.Settle(100)]
HW_ALL = [ops.AdvanceHw("t-0", -1), ops.AdvanceHw("t-1", -1)]
