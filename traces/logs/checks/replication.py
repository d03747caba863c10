"""Replication checks on broker and controller logs and on checkpoint files.

Lines of several brokers may be interleaved in one file with slightly disordered timestamps, so no
check orders lines of different brokers by time: order-dependent rules are judged per printing
broker in its own line order (``Obs.stream``), cross-broker rules are order-free (one leader per
epoch, bounds within one line).

Sources: kafka.cluster.Partition (makeLeader / makeFollower, ISR changes), KIP-101 / KIP-279
(truncation by leader epoch: AbstractFetcherThread.getOffsetTruncationState), the leader-epoch
cache (LeaderEpochFileCache; its rules are kconform.model.epochs), kafka.controller (one leader per
leader epoch, KIP-320 fencing relies on it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from kconform.model.epochs import EpochCache, assign
from kconform.traces.logs.checks.base import Check, KeyedCheck
from kconform.traces.logs.observations import (
    BROKER_START,
    EPOCH_ENTRY,
    FOLLOWER_START,
    ISR_EXPAND,
    ISR_SHRINK,
    ISR_UPDATED,
    LEADER_START,
    LOG_DELETED,
    PARTITION_STATE,
    TRUNCATION,
    TRUNCATION_BELOW_HW,
    UNCLEAN_ELECTION,
    Obs,
)


class OneLeaderPerEpoch(Check):
    """A partition's leader epoch names one leader: every line that says who leads a partition at
    a leader epoch (a broker becoming leader, a follower naming its leader, a LeaderAndIsr /
    UpdateMetadata state) agrees. Two leaders with one epoch break the fencing every other rule
    relies on (KIP-101, KIP-320). A new topic id for a partition name (a deleted and recreated
    topic) or a log deletion starts the partition afresh."""

    name = "one-leader-per-leader-epoch"
    guarantee = "leader epochs increase with every leader change: one leader per (partition, leader epoch)"
    cite = "KIP-101, KIP-320; kafka.controller (leader epoch bumped on every election), kafka.cluster.Partition"
    kinds = frozenset({LEADER_START, FOLLOWER_START, PARTITION_STATE, LOG_DELETED})

    def __init__(self) -> None:
        super().__init__()
        self._leader: dict[str, dict[int, Obs]] = self.table()
        self._topic_id: dict[str, str] = self.table()

    def observe(self, obs: Obs) -> None:
        part = obs.partition
        if part is None:
            return
        if obs.kind == LOG_DELETED:
            self._leader.pop(part, None)
            self._topic_id.pop(part, None)
            return
        if obs.topic_id is not None and obs.topic_id not in ("None", ""):
            known = self._topic_id.get(part)
            if known is not None and known != obs.topic_id:
                self._leader.pop(part, None)  # the topic was deleted and created again: epochs restart
            self._topic_id[part] = obs.topic_id
        if obs.leader_epoch is None or obs.leader is None or obs.leader < 0:
            return
        epochs = self._leader.setdefault(part, {})
        seen = epochs.get(obs.leader_epoch)
        if seen is None:
            if len(epochs) < MAX_EPOCHS:
                epochs[obs.leader_epoch] = obs
            else:
                self.lists_overflow += 1
            return
        self.judged += 1
        if seen.leader != obs.leader:
            self.flag(
                f"{part} leader epoch {obs.leader_epoch} has two leaders: {seen.leader} and {obs.leader}",
                [obs, seen],
                part,
            )


class LeaderEpochsIncreasePerBroker(KeyedCheck[tuple[str, str]]):
    """A broker's successive leader / follower starts of a partition have non-decreasing leader
    epochs: the broker takes a new state only for a newer epoch (Partition.makeLeader /
    makeFollower; stale LeaderAndIsr requests are rejected with STALE_CONTROLLER_EPOCH / ignored).
    Judged per broker in its own line order; reset when the partition's log is deleted."""

    name = "leader-epochs-increase-per-broker"
    guarantee = "each broker sees a partition's leader epochs only increase"
    cite = "KIP-101; kafka.cluster.Partition.makeLeader / makeFollower, ReplicaManager.becomeLeaderOrFollower"
    kinds = frozenset({LEADER_START, FOLLOWER_START, LOG_DELETED})

    def observe(self, obs: Obs) -> None:
        if obs.partition is None:
            return
        key = (obs.stream, obs.partition)
        if obs.kind == LOG_DELETED:
            self.last.pop(key, None)
            return
        if obs.leader_epoch is None:
            return
        prev = self.swap(key, obs)
        if prev is None or prev.leader_epoch is None:
            return
        if prev.topic_id is not None and obs.topic_id is not None and prev.topic_id != obs.topic_id:
            return  # a recreated topic
        epoch = prev.leader_epoch
        self.judge(
            obs.leader_epoch >= prev.leader_epoch,
            lambda: f"{obs.partition}: broker {obs.node} starts at leader epoch {obs.leader_epoch} after epoch {epoch}",
            [obs, prev],
            obs.partition,
        )


class LeaderEpochsIncreaseAcrossStateChanges(KeyedCheck[tuple[str, str]]):
    """The controller's successive decisions about a partition never lower its leader epoch, and a
    new leader always comes with a higher one: every election (ZooKeeper controller:
    PartitionStateMachine / PartitionLeaderElectionAlgorithms, ``LeaderAndIsr.newLeaderAndIsr``
    bumps the epoch; KRaft: PartitionChangeBuilder bumps it whenever the leader changes) raises the
    leader epoch, and a controller never goes back to an older partition state. Judged per
    controller in its own line order on the lines that print its decision (``Changed partition tp
    from A to B with state LeaderAndIsr(...)``, ``Replayed PartitionRecord ...``); a partition
    created again (ZooKeeper ``from NewPartition``, a new topic id) or whose log was deleted starts
    afresh. Requests a broker received are not judged: a broker logs stale requests before it
    rejects them (ReplicaManager.becomeLeaderOrFollower)."""

    name = "leader-epochs-increase-across-state-changes"
    guarantee = "a controller's state changes never lower a partition's leader epoch; a leader change raises it"
    cite = (
        "KIP-101, KIP-631; kafka.controller.PartitionStateMachine (LeaderAndIsr.newLeaderAndIsr), "
        "org.apache.kafka.controller.PartitionChangeBuilder"
    )
    kinds = frozenset({PARTITION_STATE, LOG_DELETED})

    def observe(self, obs: Obs) -> None:
        if obs.partition is None:
            return
        if obs.kind == LOG_DELETED:
            for key in [k for k in self.last if k[1] == obs.partition]:
                del self.last[key]
            return
        if obs.state != "controller" or obs.leader_epoch is None or obs.leader_epoch < 0:
            return
        prev = self.swap((obs.stream, obs.partition), obs)
        if prev is None or obs.prev_state in ("NewPartition", "NonExistentPartition"):
            return
        if prev.topic_id is not None and obs.topic_id is not None and prev.topic_id != obs.topic_id:
            return  # a topic deleted and created again under the same name
        assert prev.leader_epoch is not None
        epoch = prev.leader_epoch
        if not self.judge(
            obs.leader_epoch >= prev.leader_epoch,
            lambda: f"{obs.partition}: controller {obs.node} moved leader epoch {epoch} back to {obs.leader_epoch}",
            [obs, prev],
            obs.partition,
        ):
            return
        if obs.leader_epoch == prev.leader_epoch and obs.leader != prev.leader:
            self.flag(
                f"{obs.partition}: controller {obs.node} changed the leader from {prev.leader} to {obs.leader} "
                f"without raising leader epoch {obs.leader_epoch}",
                [obs, prev],
                obs.partition,
            )


class HighWatermarkBelowLogEnd(Check):
    """The high watermark never exceeds the log end offset on the broker that reports both: the
    leader in its ISR-shrink line, a leader or follower in its start line (the HW is bounded by the
    LEO: UnifiedLog.updateHighWatermark)."""

    name = "hw-le-leo"
    guarantee = "HW <= LEO wherever a broker prints both"
    cite = (
        "KIP-101; kafka.log.UnifiedLog.updateHighWatermark, "
        "kafka.cluster.Partition (ISR shrink, makeLeader/makeFollower lines)"
    )
    kinds = frozenset({ISR_SHRINK, LEADER_START, FOLLOWER_START})

    def observe(self, obs: Obs) -> None:
        if obs.hw is None or obs.leo is None or obs.hw < 0 or obs.leo < 0:
            return
        self.judged += 1
        if obs.hw > obs.leo:
            self.flag(f"{obs.partition}: high watermark {obs.hw} above log end offset {obs.leo}", [obs], obs.partition)


class IsrChangesKeepLeader(Check):
    """An ISR change printed by a leader keeps the leader in the ISR and changes it in the stated
    direction: a shrink only removes replicas, an expansion only adds (Partition.maybeShrinkIsr /
    maybeExpandIsr; the leader never removes itself); an ISR the leader reports committed (``ISR
    updated to ...``) holds the leader."""

    name = "isr-changes-consistent"
    guarantee = "ISR shrinks remove, expansions add, and the leader stays in the ISR"
    cite = "kafka.cluster.Partition.maybeShrinkIsr / maybeExpandIsr"
    kinds = frozenset({ISR_SHRINK, ISR_EXPAND, ISR_UPDATED})

    def observe(self, obs: Obs) -> None:
        if obs.kind == ISR_UPDATED:
            # the leader prints its committed ISR: it is in it (the controller never commits an ISR
            # without its leader, PartitionChangeBuilder / the ZK leaderAndIsr update)
            if obs.isr is None or obs.node is None or not obs.isr:
                return
            self.judged += 1
            if str(obs.node) not in obs.isr.split(","):
                self.flag(
                    f"{obs.partition}: leader {obs.node} committed an ISR without itself: {obs.isr}",
                    [obs],
                    obs.partition,
                )
            return
        if obs.isr is None or obs.prev_state is None:
            return
        before = {int(x) for x in obs.prev_state.split(",") if x}
        after = {int(x) for x in obs.isr.split(",") if x}
        self.judged += 1
        if obs.kind == ISR_SHRINK and not after < before:
            self.flag(
                f"{obs.partition}: ISR 'shrink' from {sorted(before)} to {sorted(after)} removes nothing or adds",
                [obs],
                obs.partition,
            )
        elif obs.kind == ISR_EXPAND and not after > before:
            self.flag(
                f"{obs.partition}: ISR 'expansion' from {sorted(before)} to {sorted(after)} adds nothing or removes",
                [obs],
                obs.partition,
            )
        elif obs.node is not None and before and obs.node in before and obs.node not in after:
            self.flag(f"{obs.partition}: leader {obs.node} removed itself from the ISR", [obs], obs.partition)


MAX_EPOCHS = 100_000
"""Leader epochs one-leader-per-leader-epoch remembers per partition (a partition's leader epoch grows
by one per election: real partitions stay far below it)."""
MAX_CANDIDATES = 100_000
"""Truncations kept for the end-of-input judgements (the leader's answer against the epoch's
announced start, truncations below the HW against unclean elections seen later)."""
MAX_CHECKPOINT_ENTRIES = 10_000
"""Entries of one leader-epoch-checkpoint replayed (a real cache holds one per leader epoch still in
the log)."""
MAX_CACHE_EVENTS = 200_000
"""Lines the own-cache rule of truncation-agrees-with-epoch-cache keeps for its end-of-input pass
(as compact tuples: a few hundred bytes each, so memory stays bounded whatever the input's size)."""
WITNESS_TEXT = 240
"""Characters of a kept line's text (the witness a finding shows)."""


@dataclass(frozen=True, slots=True)
class _Line:
    """What the own-cache rule needs of one line, without the rest of its observation."""

    kind: str
    stream: str
    partition: str | None
    node: int | None
    leader_epoch: int | None
    leo: int | None
    has_hw: bool
    offset: int | None
    error: int | None
    file: str
    line: int
    text: str

    @staticmethod
    def of(obs: Obs) -> _Line:
        witness = obs.kind in (TRUNCATION, LEADER_START)
        return _Line(
            obs.kind,
            sys.intern(obs.stream),
            obs.partition,
            obs.node,
            obs.leader_epoch,
            obs.leo,
            obs.hw is not None,
            obs.offset,
            obs.error,
            sys.intern(obs.file),
            obs.line,
            obs.text[:WITNESS_TEXT] if witness else "",
        )

    def obs(self) -> Obs:
        """A witness observation (file, line, text) for a finding."""
        return Obs(kind=self.kind, file=self.file, line=self.line, text=self.text, stream=self.stream, node=self.node)


class TruncationAgreesWithEpochAnswer(Check):
    """A follower's epoch-based truncation point agrees with the epoch caches (KIP-101, KIP-279:
    truncate to min(leader's end offset for the epoch, own end offset for that epoch, LEO)):

    - it is at most the end offset the leader answered for the epoch;
    - that end offset is not before the epoch's start as the epoch's leader announced it
      ("Leader tp starts at leader epoch E from offset S");
    - it is at most the follower's own end offset for the answered epoch A, as far as the lines show
      the follower's cache: it holds (E, S) with E > A, so its end offset for A is at most S, when
      the broker itself led at epoch E from offset S (2.1+ assigns it at once, KAFKA-7415; judged on
      start lines that print the high watermark, 2.4+), or when it followed epoch E from an offset
      at or below the epoch's announced start S and had passed S by its next start line (with
      KIP-320 fencing it fetched only from the epoch-E leader, whose records from S on are of epoch
      E). A truncation to T drops what it shows of entries starting at or after T; a new own leader
      start drops entries at or after its offset; a restart, a log deletion or a fetch-offset reset
      drops everything the broker showed. Truncating past S keeps records of an epoch the new leader
      never had: the divergence KIP-279 (KAFKA-6361) fixed. With an unclean election of the
      partition in the input (or one naming no partition) the own-cache rule's findings are allowed,
      not violations (retention may then have moved an entry's start past S unseen).
    """

    name = "truncation-agrees-with-epoch-cache"
    guarantee = (
        "a follower truncates to no more than the leader's end offset for the epoch nor its own, and the "
        "leader's end offset is not before the epoch's start"
    )
    cite = (
        "KIP-101, KIP-279 (KAFKA-6361), KIP-320; kafka.server.AbstractFetcherThread.getOffsetTruncationState, "
        "LeaderEpochFileCache.endOffsetFor / assign, KAFKA-7415"
    )
    kinds = frozenset({TRUNCATION, LEADER_START, FOLLOWER_START, BROKER_START, LOG_DELETED, UNCLEAN_ELECTION})

    def __init__(self) -> None:
        super().__init__()
        self._starts: dict[tuple[str, int], Obs] = self.table()
        self._pending: list[Obs] = []
        self._events: list[_Line] = []
        self._unclean: dict[str | None, bool] = self.table()
        """Partitions with an unclean election in the input (None: one that names no partition)."""

    def observe(self, obs: Obs) -> None:
        if obs.kind == UNCLEAN_ELECTION:
            self._unclean[obs.partition] = True
            return
        self.keep(self._events, _Line.of(obs), MAX_CACHE_EVENTS)  # every kind this check takes but UNCLEAN_ELECTION
        if obs.kind == LEADER_START:
            if obs.partition is not None and obs.leader_epoch is not None and obs.leo is not None:
                # a broker restarted within an epoch prints it again with a later offset: keep the least
                key = (obs.partition, obs.leader_epoch)
                known = self._starts.get(key)
                if known is None or (known.leo is not None and obs.leo < known.leo):
                    self._starts[key] = obs
            return
        if obs.kind != TRUNCATION:
            return
        if (
            obs.end_offset is None
            or obs.leader_epoch is None
            or obs.leader_epoch < 0
            or obs.end_offset < 0
            or obs.error
        ):
            return
        if obs.completed and obs.offset is not None:
            self.judged += 1
            if obs.offset > obs.end_offset:
                self.flag(
                    f"{obs.partition}: truncated to {obs.offset}, beyond the leader's end offset {obs.end_offset} "
                    f"for epoch {obs.leader_epoch}",
                    [obs],
                    obs.partition,
                )
        self.keep(self._pending, obs, MAX_CANDIDATES)

    def finish(self) -> None:
        for obs in self._pending:
            assert obs.partition is not None and obs.leader_epoch is not None and obs.end_offset is not None
            start = self._starts.get((obs.partition, obs.leader_epoch))
            if start is None or start.leo is None:
                continue
            self.judged += 1
            if obs.end_offset < start.leo:
                self.flag(
                    f"{obs.partition}: the leader answered end offset {obs.end_offset} for epoch {obs.leader_epoch}, "
                    f"which started at offset {start.leo}",
                    [obs, start],
                    obs.partition,
                )
        self._own_caches()

    def _own_caches(self) -> None:
        """The own-end-offset rule, replayed per broker in its own line order once every epoch's
        announced start is known (brokers' files may come in any order)."""
        known: dict[tuple[str, str], list[tuple[int, int, Obs]]] = {}
        """(stream, partition) -> (epoch, start, witness) entries the lines show in the cache."""
        following: dict[tuple[str, str], _Line] = {}
        """(stream, partition) -> the broker's latest follower start."""
        for obs in self._events:
            if obs.kind == BROKER_START:
                for key in [k for k in known if k[0] == obs.stream]:
                    del known[key]
                for key in [k for k in following if k[0] == obs.stream]:
                    del following[key]
                continue
            if obs.partition is None:
                continue
            key = (obs.stream, obs.partition)
            if obs.kind == LOG_DELETED:
                known.pop(key, None)
                following.pop(key, None)
            elif obs.kind == LEADER_START:
                following.pop(key, None)
                if obs.leader_epoch is None or obs.leo is None:
                    known.pop(key, None)
                    continue
                kept = [e for e in known.get(key, []) if e[0] < obs.leader_epoch and e[1] < obs.leo]
                if obs.has_hw and obs.leader_epoch >= 0:
                    kept.append((obs.leader_epoch, obs.leo, obs.obs()))
                known[key] = kept
            elif obs.kind == FOLLOWER_START:
                prev = following.get(key)
                following[key] = obs
                if prev is None or prev.leader_epoch is None or prev.leo is None or obs.leo is None:
                    continue
                start = self._starts.get((obs.partition, prev.leader_epoch))
                if start is None or start.leo is None or start.hw is None:
                    continue
                if prev.leo <= start.leo < obs.leo:
                    kept = [e for e in known.get(key, []) if e[0] < prev.leader_epoch and e[1] < start.leo]
                    kept.append((prev.leader_epoch, start.leo, start))
                    known[key] = kept
            elif obs.kind == TRUNCATION:
                self._judge_own(obs, known.get(key, []))
                if obs.offset is None:  # the log started afresh at an offset the line does not state
                    known.pop(key, None)
                    following.pop(key, None)
                else:
                    known[key] = [e for e in known.get(key, []) if e[1] < obs.offset]

    def _judge_own(self, obs: _Line, entries: list[tuple[int, int, Obs]]) -> None:
        if obs.leader_epoch is None or obs.leader_epoch < 0 or obs.offset is None or obs.error:
            return
        above = [e for e in entries if e[0] > obs.leader_epoch]
        if not above:
            return
        epoch, bound, witness = min(above, key=lambda e: e[1])
        self.judged += 1
        if obs.offset <= bound:
            return
        if None in self._unclean or obs.partition in self._unclean:
            self.allowed += 1
            return
        self.flag(
            f"{obs.partition}: broker {obs.node} truncated to {obs.offset} on the leader's answer for epoch "
            f"{obs.leader_epoch}, past offset {bound} where its own cached epoch {epoch} begins (its end offset for "
            f"epoch {obs.leader_epoch} is at most {bound}; KIP-279)",
            [obs.obs(), witness],
            obs.partition,
        )


class NoTruncationBelowHighWatermark(Check):
    """A follower never truncates below its high watermark: records below the HW were on every ISR
    member, so a clean new leader has them (KIP-101). Allowed (counted, not a violation) when the
    logs show an unclean leader election for the partition."""

    name = "no-truncation-below-hw"
    guarantee = "no follower truncates committed records (below its HW) without an unclean election"
    cite = "KIP-101; kafka.server.ReplicaFetcherThread.truncate ('Truncating ... below high watermark')"
    kinds = frozenset({TRUNCATION_BELOW_HW, UNCLEAN_ELECTION, TRUNCATION})

    def __init__(self) -> None:
        super().__init__()
        self._unclean: dict[str | None, bool] = self.table()
        self._candidates: list[Obs] = []

    def observe(self, obs: Obs) -> None:
        if obs.kind == UNCLEAN_ELECTION:
            self._unclean[obs.partition] = True
            return
        if obs.kind == TRUNCATION:
            self.judged += 1
            return
        self.judged += 1
        self.keep(self._candidates, obs, MAX_CANDIDATES)

    def finish(self) -> None:
        for obs in self._candidates:
            if None in self._unclean or obs.partition in self._unclean:
                self.allowed += 1
                continue
            self.flag(
                f"{obs.partition}: truncated to {obs.offset}, below its high watermark {obs.hw} (committed records "
                "removed, and no unclean election in the input)",
                [obs],
                obs.partition,
            )


class EpochCheckpointValid(Check):
    """A leader-epoch-checkpoint holds what the epoch cache can hold: applying its entries in order
    with the cache's own rule (kconform.model.epochs.assign, LeaderEpochFileCache.assign) keeps every
    entry, i.e. epochs and start offsets strictly increase."""

    name = "epoch-checkpoint-valid"
    guarantee = "leader-epoch-checkpoint entries have strictly increasing epochs and start offsets"
    cite = "KIP-101, KIP-279; LeaderEpochFileCache.assign, LeaderEpochCheckpointFile"
    kinds = frozenset({EPOCH_ENTRY})

    def __init__(self) -> None:
        super().__init__()
        self._cache: dict[str, tuple[EpochCache, Obs | None]] = self.table()

    def observe(self, obs: Obs) -> None:
        if obs.leader_epoch is None or obs.offset is None:
            return
        cache, prev = self._cache.get(obs.stream, ((), None))
        if len(cache) >= MAX_CHECKPOINT_ENTRIES:
            self.lists_overflow += 1
            return
        self.judged += 1
        if obs.leader_epoch < 0 or obs.offset < 0:
            self.flag(f"negative epoch or offset in ({obs.leader_epoch}, {obs.offset})", [obs], obs.partition)
            return
        after = assign(cache, obs.leader_epoch, obs.offset)
        if after != (*cache, (obs.leader_epoch, obs.offset)):
            witnesses = [obs] if prev is None else [obs, prev]
            self.flag(
                f"entry ({obs.leader_epoch}, {obs.offset}) does not follow {cache[-1] if cache else '()'}: "
                "epochs and start offsets must strictly increase",
                witnesses,
                obs.partition,
            )
        self._cache[obs.stream] = (after, obs)
