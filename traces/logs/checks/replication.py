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

from kconform.model.epochs import EpochCache, assign
from kconform.traces.logs.checks.base import Check
from kconform.traces.logs.observations import (
    EPOCH_ENTRY,
    FOLLOWER_START,
    ISR_EXPAND,
    ISR_SHRINK,
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
        self._leader: dict[str, dict[int, Obs]] = {}
        self._topic_id: dict[str, str] = {}

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
            epochs[obs.leader_epoch] = obs
            return
        self.judged += 1
        if seen.leader != obs.leader:
            self.flag(
                f"{part} leader epoch {obs.leader_epoch} has two leaders: {seen.leader} and {obs.leader}",
                [obs, seen],
                part,
            )


class LeaderEpochsIncreasePerBroker(Check):
    """A broker's successive leader / follower starts of a partition have non-decreasing leader
    epochs: the broker takes a new state only for a newer epoch (Partition.makeLeader /
    makeFollower; stale LeaderAndIsr requests are rejected with STALE_CONTROLLER_EPOCH / ignored).
    Judged per broker in its own line order; reset when the partition's log is deleted."""

    name = "leader-epochs-increase-per-broker"
    guarantee = "each broker sees a partition's leader epochs only increase"
    cite = "KIP-101; kafka.cluster.Partition.makeLeader / makeFollower, ReplicaManager.becomeLeaderOrFollower"
    kinds = frozenset({LEADER_START, FOLLOWER_START, LOG_DELETED})

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[tuple[str, str], Obs] = {}

    def observe(self, obs: Obs) -> None:
        if obs.partition is None:
            return
        key = (obs.stream, obs.partition)
        if obs.kind == LOG_DELETED:
            self._last.pop(key, None)
            return
        if obs.leader_epoch is None:
            return
        prev = self._last.get(key)
        self._last[key] = obs
        if prev is None or prev.leader_epoch is None:
            return
        if prev.topic_id is not None and obs.topic_id is not None and prev.topic_id != obs.topic_id:
            return  # a recreated topic
        self.judged += 1
        if obs.leader_epoch < prev.leader_epoch:
            self.flag(
                f"{obs.partition}: broker {obs.node} starts at leader epoch {obs.leader_epoch} "
                f"after epoch {prev.leader_epoch}",
                [obs, prev],
                obs.partition,
            )


class LeaderEpochsIncreaseAcrossStateChanges(Check):
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

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[tuple[str, str], Obs] = {}

    def observe(self, obs: Obs) -> None:
        if obs.partition is None:
            return
        if obs.kind == LOG_DELETED:
            for key in [k for k in self._last if k[1] == obs.partition]:
                del self._last[key]
            return
        if obs.state != "controller" or obs.leader_epoch is None or obs.leader_epoch < 0:
            return
        key = (obs.stream, obs.partition)
        prev = self._last.get(key)
        self._last[key] = obs
        if prev is None or obs.prev_state in ("NewPartition", "NonExistentPartition"):
            return
        if prev.topic_id is not None and obs.topic_id is not None and prev.topic_id != obs.topic_id:
            return  # a topic deleted and created again under the same name
        assert prev.leader_epoch is not None
        self.judged += 1
        if obs.leader_epoch < prev.leader_epoch:
            self.flag(
                f"{obs.partition}: controller {obs.node} moved leader epoch {prev.leader_epoch} back to "
                f"{obs.leader_epoch}",
                [obs, prev],
                obs.partition,
            )
        elif obs.leader_epoch == prev.leader_epoch and obs.leader != prev.leader:
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
    maybeExpandIsr; the leader never removes itself)."""

    name = "isr-changes-consistent"
    guarantee = "ISR shrinks remove, expansions add, and the leader stays in the ISR"
    cite = "kafka.cluster.Partition.maybeShrinkIsr / maybeExpandIsr"
    kinds = frozenset({ISR_SHRINK, ISR_EXPAND})

    def observe(self, obs: Obs) -> None:
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


class TruncationAgreesWithEpochAnswer(Check):
    """A follower's epoch-based truncation point is at most the end offset the leader answered for
    the epoch (KIP-279: truncate to min(leader's end offset, own end offset for that epoch, LEO)),
    and that end offset is not before the epoch's start as the epoch's leader announced it
    ("Leader tp starts at leader epoch E from offset S"; the epoch cache's rules,
    kconform.model.epochs.end_offset_for)."""

    name = "truncation-agrees-with-epoch-cache"
    guarantee = (
        "a follower truncates to no more than the leader's end offset for the epoch, "
        "itself not before the epoch's start"
    )
    cite = (
        "KIP-101, KIP-279; kafka.server.AbstractFetcherThread.getOffsetTruncationState, "
        "LeaderEpochFileCache.endOffsetFor"
    )
    kinds = frozenset({TRUNCATION, LEADER_START})

    def __init__(self) -> None:
        super().__init__()
        self._starts: dict[tuple[str, int], Obs] = {}
        self._pending: list[Obs] = []

    def observe(self, obs: Obs) -> None:
        if obs.kind == LEADER_START:
            if obs.partition is not None and obs.leader_epoch is not None and obs.leo is not None:
                # a broker restarted within an epoch prints it again with a later offset: keep the least
                key = (obs.partition, obs.leader_epoch)
                known = self._starts.get(key)
                if known is None or (known.leo is not None and obs.leo < known.leo):
                    self._starts[key] = obs
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
        if len(self._pending) < 100_000:
            self._pending.append(obs)

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
        self._unclean: set[str | None] = set()
        self._candidates: list[Obs] = []

    def observe(self, obs: Obs) -> None:
        if obs.kind == UNCLEAN_ELECTION:
            self._unclean.add(obs.partition)
            return
        if obs.kind == TRUNCATION:
            self.judged += 1
            return
        self.judged += 1
        if len(self._candidates) < 100_000:
            self._candidates.append(obs)

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
        self._cache: dict[str, tuple[EpochCache, Obs | None]] = {}

    def observe(self, obs: Obs) -> None:
        if obs.leader_epoch is None or obs.offset is None:
            return
        cache, prev = self._cache.get(obs.stream, ((), None))
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
