"""The Hypothesis stateful test of the fetch-session slice: clients polling, assignments changing,
sessions closed, records appended (plain, committed and aborted transactions), HWs and log starts
moving, leadership moving away and back, the broker restarting (its session cache lost), the
cache's eviction time passing, and the shared network faults (reordered, dropped, duplicated
requests and answers), judged in lockstep.

The shared swarm machine (conformance.machine) plus the slice's rules; each rule is one operation.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from kconform.conformance.fetch.rule_constants import EVICTION_MS, FAMILIES, SETTLE
from kconform.conformance.machine import RUN_MS, Jumps, SliceMachine, Swarm, Target, family_on
from kconform.conformance.runner import LockstepRun
from kconform.model.fetch_config import BROKER, FetchConfig
from kconform.traces import operations as ops


def _distinct_outcomes(run: LockstepRun) -> float:
    """Targeted search toward runs that reach many session outcomes."""
    return float(len(run.judge.covered))


TARGET = Target("distinct handler outcomes in one run", _distinct_outcomes)


def swarm(cfg: FetchConfig) -> Swarm:
    """The shared rules' shape: ``deliver_to`` picks the broker or a client."""
    nodes = st.sampled_from((BROKER, *(100 + c for c in cfg.client_ids)))
    return Swarm(FAMILIES, nodes, SETTLE, Jumps("eviction", EVICTION_MS), TARGET)


def rules(base: type[SliceMachine], cfg: FetchConfig) -> type[SliceMachine]:
    """The fetch-session machine: the shared swarm machine ``base`` plus clients and the broker."""
    clients = st.sampled_from(cfg.client_ids)
    partitions = st.sampled_from(cfg.names)

    class FetchMachine(base):  # type: ignore[valid-type,misc]
        def after_boot(self) -> None:
            for c in cfg.client_ids:
                self._do(ops.Assign(client=c, partition=cfg.names[c % len(cfg.names)], assigned=True))

        @rule(client=clients)
        def poll(self, client: int) -> None:
            self._do(ops.Poll(client=client))

        @rule(client=clients, ms=st.sampled_from(RUN_MS))
        def poll_and_run(self, client: int, ms: int) -> None:
            self._do(ops.Poll(client=client))
            self._do(ops.Run(ms=ms))

        @rule(client=clients, rounds=st.integers(2, 4), partition=partitions)
        def fetch_rounds(self, client: int, rounds: int, partition: str) -> None:
            """A consumer's steady state: new records on a partition, then several fetch round
            trips in a row, each an incremental answer of the same session."""
            self._do(ops.AppendRecords(partition=partition, count=1, txn=0))
            self._do(ops.AdvanceHw(partition=partition, offset=-1))
            for _ in range(rounds):
                self._do(ops.Poll(client=client))
                self._do(ops.Run(ms=RUN_MS[0]))

        @rule(client=clients, partition=partitions, assigned=st.booleans())
        def assign(self, client: int, partition: str, assigned: bool) -> None:
            self._do(ops.Assign(client=client, partition=partition, assigned=assigned))

        @rule(client=clients)
        def assign_all(self, client: int) -> None:
            """Every partition for one client: sessions of several partitions, whose round-robin
            order and selective answers are what KIP-227 is about."""
            for name in cfg.names:
                self._do(ops.Assign(client=client, partition=name, assigned=True))

        @rule(client=clients)
        def unassign_all(self, client: int) -> None:
            """Every partition taken away, then a fetch: an incremental request that forgets the
            session's last partitions closes the session (FetchManager.newContext)."""
            for name in cfg.names:
                self._do(ops.Assign(client=client, partition=name, assigned=False))
            self._do(ops.Poll(client=client))
            self._do(ops.Run(ms=RUN_MS[0]))

        @rule(partition=partitions, count=st.integers(1, 3), txn=st.sampled_from([0, 0, 1, 2]))
        def append(self, partition: str, count: int, txn: int) -> None:
            self._do(ops.AppendRecords(partition=partition, count=count, txn=txn))

        @rule(partition=partitions, offset=st.sampled_from([-1, -1, 1, 3]))
        def advance_hw(self, partition: str, offset: int) -> None:
            self._do(ops.AdvanceHw(partition=partition, offset=offset))

        @precondition(family_on("deletes"))
        @rule(partition=partitions, offset=st.integers(1, 8))
        def delete_records(self, partition: str, offset: int) -> None:
            self._do(ops.DeleteRecords(partition=partition, offset=offset))

        @precondition(family_on("leaders"))
        @rule(partition=partitions)
        def toggle_leadership(self, partition: str) -> None:
            self._do(ops.ToggleLeadership(partition=partition))

        @precondition(family_on("restarts"))
        @rule()
        def bounce(self) -> None:
            self._do(ops.Bounce(broker=BROKER))

        @precondition(family_on("closes"))
        @rule(client=clients)
        def close_session(self, client: int) -> None:
            self._do(ops.CloseSession(client=client))

    FetchMachine.__name__ = "FetchMachine"
    return FetchMachine
