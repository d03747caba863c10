"""Checks on KRaft partition registrations: the ``__cluster_metadata`` records that a
--cluster-metadata-decoder dump shows, replayed per partition the way the controller and brokers
replay them (``PartitionRegistration.merge`` of a ``PartitionChangeRecord``: only the fields the record
sets change, the partition epoch is bumped by one per change record and the leader epoch by one when
the record names a leader, KIP-631; ``ReplicationControlManager.replay``).

A dump that starts in the middle of the log (a later segment) shows change records of partitions
whose registration it never saw: only what those records set is known, and a rule is judged only
when every value it needs is known (so an excerpt never raises a false alarm).

Sources: KIP-631 (the quorum-based controller's records), KIP-966 (eligible leader replicas: the ISR
may shrink to empty and leave the leader at -1, the ELR holds replicas that are not in the ISR),
``org.apache.kafka.controller.PartitionChangeBuilder`` (an unclean or ELR election sets the ISR to the
new leader alone), ``org.apache.kafka.metadata.PartitionRegistration``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kconform.traces.logs.checks.base import Check
from kconform.traces.logs.kraft import PARTITION_CHANGE_RECORD, PARTITION_RECORD, REMOVE_TOPIC_RECORD, TOPIC_RECORD
from kconform.traces.logs.observations import KRAFT_PARTITION, Obs

MAX_BUMPS = 200
"""Change records kept per partition as witnesses of its epochs (the state itself is O(1))."""


def _set(ids: str | None) -> frozenset[int] | None:
    if ids is None:
        return None
    return frozenset(int(i) for i in ids.split(",") if i)


@dataclass
class _Registration:
    """What the dump shows of one partition's registration (None: not known from this dump)."""

    replicas: frozenset[int] | None = None
    isr: frozenset[int] | None = None
    elr: frozenset[int] | None = None
    leader: int | None = None
    leader_epoch: int | None = None
    partition_epoch: int | None = None
    replicas_from: Obs | None = None
    isr_from: Obs | None = None
    elr_from: Obs | None = None
    leader_from: Obs | None = None
    epochs_from: Obs | None = None
    topic_from: Obs | None = None
    bumps: tuple[Obs, ...] = ()
    """Change records since ``epochs_from`` (at most :data:`MAX_BUMPS`: the witnesses of an epoch)."""


class _PartitionReplay(Check):
    """Replays partition records per (dump stream, topic id, partition); subclasses judge each state."""

    kinds: ClassVar[frozenset[str]] = frozenset({KRAFT_PARTITION})

    def __init__(self) -> None:
        super().__init__()
        self._parts: dict[tuple[str, str, str], _Registration] = self.table()
        self._topics: dict[tuple[str, str], Obs] = self.table()

    def observe(self, obs: Obs) -> None:
        topic_id = obs.topic_id or ""
        if obs.state == TOPIC_RECORD:
            self._topics[(obs.stream, topic_id)] = obs
            return
        if obs.state == REMOVE_TOPIC_RECORD:
            self._topics.pop((obs.stream, topic_id), None)
            for key in [k for k in self._parts if k[0] == obs.stream and k[1] == topic_id]:
                del self._parts[key]
            return
        if obs.state not in (PARTITION_RECORD, PARTITION_CHANGE_RECORD) or obs.partition is None:
            return
        key = (obs.stream, topic_id, obs.partition)
        before = self._parts.get(key)
        reg = _Registration() if before is None else _Registration(**vars(before))
        reg.topic_from = self._topics.get((obs.stream, topic_id))
        if obs.state == PARTITION_RECORD:
            self.judge_record(before, obs)
            reg.leader_epoch, reg.partition_epoch, reg.epochs_from = obs.leader_epoch, obs.partition_epoch, obs
            reg.bumps = ()
        else:
            if reg.partition_epoch is not None:
                reg.partition_epoch += 1
            if obs.leader is not None and reg.leader_epoch is not None:
                reg.leader_epoch += 1
            if reg.epochs_from is not None and len(reg.bumps) < MAX_BUMPS:
                reg.bumps = (*reg.bumps, obs)
        if obs.replicas is not None:
            reg.replicas, reg.replicas_from = _set(obs.replicas), obs
        if obs.isr is not None:
            reg.isr, reg.isr_from = _set(obs.isr), obs
        if obs.elr is not None:
            reg.elr, reg.elr_from = _set(obs.elr), obs
        if obs.leader is not None:
            reg.leader, reg.leader_from = obs.leader, obs
        self._parts[key] = reg
        self.judge_state(reg, obs)

    def expect(self, holds: bool, message: str, obs: Obs, reg: _Registration, *sources: Obs | None) -> None:
        """One judgement of ``obs``'s partition: a finding with ``message`` unless it ``holds``."""
        self.judged += 1
        if not holds:
            self.flag(f"{obs.partition}: {message}", _witnesses(obs, reg, *sources), obs.partition)

    def judge_record(self, before: _Registration | None, obs: Obs) -> None:
        """A full PARTITION_RECORD arrives for a partition (``before``: its replayed state, if any)."""

    def judge_state(self, reg: _Registration, obs: Obs) -> None:
        """The partition's state after ``obs`` was applied."""


def _witnesses(obs: Obs, reg: _Registration, *others: Obs | None) -> list[Obs]:
    """``obs`` first, then the records that set the values judged, and the topic record naming it."""
    out = [obs]
    for other in (*others, reg.topic_from):
        if other is not None and other is not obs and other not in out:
            out.append(other)
    return out


class KraftIsrWithinReplicas(_PartitionReplay):
    """The ISR and the leader of a partition are among its replicas (``PartitionRegistration``: the
    ISR is a subset of the assigned replicas, a reassignment's adding replicas included, and the
    controller elects a leader only from the replicas; ``ReplicationControlManager`` rejects an
    AlterPartition whose ISR names a non-replica with INVALID_REQUEST)."""

    name = "kraft-isr-within-replicas"
    guarantee = "a partition's ISR and leader are among its replicas"
    cite = "KIP-631; org.apache.kafka.metadata.PartitionRegistration, ReplicationControlManager (AlterPartition)"

    def judge_state(self, reg: _Registration, obs: Obs) -> None:
        if reg.replicas is None:
            return
        if reg.isr is not None:
            outside = sorted(reg.isr - reg.replicas)
            message = f"ISR {sorted(reg.isr)} holds {outside}, not among the replicas {sorted(reg.replicas)}"
            self.expect(not outside, message, obs, reg, reg.isr_from, reg.replicas_from)
        if reg.leader is not None and reg.leader >= 0:
            message = f"leader {reg.leader} is not among the replicas {sorted(reg.replicas)}"
            self.expect(reg.leader in reg.replicas, message, obs, reg, reg.leader_from, reg.replicas_from)


class KraftLeaderInIsr(_PartitionReplay):
    """A partition with a leader has it in its ISR. A clean election picks an ISR member; an unclean
    one, and an election from the ELR (KIP-966), set the ISR to the new leader alone
    (``PartitionChangeBuilder.tryElection``); when the last ISR member goes, the leader becomes -1
    (no leader), which this rule permits."""

    name = "kraft-leader-in-isr"
    guarantee = "a partition's leader is in its ISR (or the partition has no leader)"
    cite = "KIP-631; KIP-966; org.apache.kafka.controller.PartitionChangeBuilder"

    def judge_state(self, reg: _Registration, obs: Obs) -> None:
        if reg.leader is None or reg.leader < 0 or reg.isr is None:
            return
        message = f"leader {reg.leader} is not in the ISR {sorted(reg.isr)}"
        self.expect(reg.leader in reg.isr, message, obs, reg, reg.leader_from, reg.isr_from)


class KraftElrOutsideIsr(_PartitionReplay):
    """Eligible leader replicas are replicas that left the ISR while it was at or below
    min.insync.replicas: a replica is never in both (KIP-966; ``PartitionChangeBuilder`` removes the
    target ISR from the ELR), and the ELR holds only assigned replicas."""

    name = "kraft-elr-outside-isr"
    guarantee = "no replica is both in the ISR and in the eligible leader replicas (KIP-966)"
    cite = "KIP-966; org.apache.kafka.controller.PartitionChangeBuilder (populateTargetElr)"

    def judge_state(self, reg: _Registration, obs: Obs) -> None:
        if reg.elr is None or reg.isr is None or not reg.elr:
            return
        both = sorted(reg.elr & reg.isr)
        message = f"replicas {both} are both in the ISR {sorted(reg.isr)} and in the ELR {sorted(reg.elr)}"
        self.expect(not both, message, obs, reg, reg.elr_from, reg.isr_from)


class KraftEpochsIncrease(_PartitionReplay):
    """A partition's leader epoch and partition epoch never go back: a PARTITION_RECORD for a
    partition the dump already registered (a re-registration, as a snapshot or a migration writes)
    carries epochs at least those the change records since its registration reached (each change
    bumps the partition epoch, and the leader epoch when it names a leader: KIP-631,
    ``PartitionRegistration.merge``; brokers fence requests of older epochs, KIP-101 / KIP-320)."""

    name = "kraft-partition-epochs-increase"
    guarantee = "a partition's leader epoch and partition epoch never decrease in the metadata log"
    cite = "KIP-631; KIP-320; org.apache.kafka.metadata.PartitionRegistration.merge"

    def judge_record(self, before: _Registration | None, obs: Obs) -> None:
        if before is None:
            return
        for label, old, new in (
            ("leader epoch", before.leader_epoch, obs.leader_epoch),
            ("partition epoch", before.partition_epoch, obs.partition_epoch),
        ):
            if old is None or new is None:
                continue
            self.judged += 1
            if new < old:
                self.flag(
                    f"{obs.partition}: registered again with {label} {new}, below the {old} it had reached",
                    _witnesses(obs, before, before.epochs_from, *before.bumps),
                    obs.partition,
                )
