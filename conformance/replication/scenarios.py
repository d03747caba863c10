"""The replication slice's known-bug zoo: fixed operation sequences that steer a cluster into
historically dangerous interleavings, named after the bug they reproduce (CCF-style scenario files;
prior-art §7).

Random search reaches most bugs within seconds; some need a long, precise shape (a leader that
misses a write, a fast failover and back). The gate runs every scenario before its random
campaign (conformance.scenarios runs them), as ordinary lockstep runs judged by the same model: a
scenario encodes a situation, never an expected verdict, so it passes on a correct implementation
and fails on a buggy one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kconform.conformance.scenarios import declare
from kconform.conformance.scenarios import run_scenario as run_scenario  # one run loop for every slice
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces import operations as o


@dataclass(frozen=True)
class Scenario:
    """A named operation sequence and the bug it is about."""

    name: str
    doc: str
    min_replicas: int
    ops: tuple[o.Operation, ...]
    protocol: Protocol | None = None
    """The rung the scenario runs on whatever the gate's (None: the gate's own). The top rung
    truncates on fetch and never sends OffsetsForLeaderEpoch, so the follower's truncation through
    it is only judged when a scenario runs on an older rung. The rungs below KIP-320 (KIP-101,
    KIP-279) have known divergences (docs/protocol.md, model-level search) that an implementation
    whose timing differs from the reference's may walk into: the gate would report the rung's
    invariant violation as the implementation's, so a scenario pinned there must be shown not to."""

    unclean: bool = False
    """Whether the scenario runs with unclean.leader.election.enable (KIP-106) whatever the gate's:
    the losses it permits are then allowed findings, not violations, and the run carries it."""

    def configure(self, cfg: ReplicationConfig) -> ReplicationConfig:
        """The configuration the scenario runs on when the gate runs ``cfg``: ``cfg`` itself, or on
        ``protocol`` without what the rung's Kafka versions did not have (KIP-966 ELR, 4.0; KIP-392
        follower fetching, 2.4), the rest (delays, log start moves, timeouts) kept. The run, and so
        a counterexample file, carries it: replay re-drives the same rung."""
        if self.unclean and not cfg.unclean_leader_election:
            cfg = replace(cfg, unclean_leader_election=True)
        if self.protocol is None or self.protocol is cfg.protocol:
            return cfg
        return replace(cfg, protocol=self.protocol, eligible_leader_replicas_version=0, follower_fetching=False)


@declare(Scenario, "fast-failover", min_replicas=3)
def FAST_FAILOVER() -> tuple[o.Operation, ...]:
    """KIP-279 (KAFKA-6361): broker 0 leads epoch 0 and writes record 2 that nobody else gets; it is
    cut off, broker 1 leads epoch 1 and writes record 4 that broker 2 copies; broker 0 leads again
    (epoch 2) before it ever sees record 4 and writes record 6 while broker 2 is cut off. Broker 2
    must truncate record 4 (its own end offset for epoch 0 is 1), or the logs diverge below the HW.
    The leader's write puts its epoch into its cache, which before KAFKA-7415 (2.1) happens only
    with a write: without it the 0.11/2.0 answer is undefined and the follower falls back to its HW."""
    return (
        o.Run(1000),
        o.Produce(1, 1),
        o.Run(1000),
        o.Produce(2, 1),
        o.DeliverTo(0),
        o.DeliverTo(0),
        o.DeliverTo(0),
        o.Isolate(0),
        o.MoveLeader(1),
        o.Run(1000),
        o.Produce(3, 1),
        o.Run(3000),
        o.Run(3000),
        o.Produce(4, 1),
        o.Run(1000),
        o.MoveLeader(0),
        o.Heal(),
        o.Isolate(2),
        o.Produce(5, 1),
        o.Run(3000),
        o.Produce(6, 1),
        o.Run(1000),
        o.Heal(),
        o.Run(3000),
        o.Run(3000),
    )


@declare(Scenario, "rejoin-before-epoch-start", min_replicas=2)
def REJOIN_BEFORE_EPOCH_START() -> tuple[o.Operation, ...]:
    """KAFKA-7128 / hachikuji Kip320 note 4: follower 1 crashes, broker 0 appends record 1, the
    controller moves leadership to broker 1 before it noticed the crash, so broker 0 leads again in
    a later epoch that starts after record 1. When broker 1 restarts with an empty log it is at the
    HW but not at the epoch's start offset: it must not rejoin the ISR yet."""
    return (
        o.Run(1000),
        o.Crash(1),
        o.Produce(1, -1),
        o.Run(300),
        o.MoveLeader(1),
        o.Restart(1),
        o.Run(1000),
        o.Run(3000),
    )


@declare(Scenario, "adversarial-consumer", min_replicas=2)
def ADVERSARIAL_CONSUMER() -> tuple[o.Operation, ...]:
    """Issue 17 (adversarial clients): after a leader move (epoch 1 on broker 1) a consumer sends what
    a buggy, old or malicious one may: a stale leader epoch (FENCED_LEADER_EPOCH) and a future one
    (UNKNOWN_LEADER_EPOCH) to the leader (KIP-320, Partition.checkCurrentLeaderEpoch), a fetch to
    the old leader (NOT_LEADER_OR_FOLLOWER, ReplicaManager), offsets past and at the LEO
    (OFFSET_OUT_OF_RANGE, an empty answer) and a fetch without an epoch (served unchecked, a
    pre-KIP-320 client). The reference clients always send their cached epoch to their cached
    leader, so no random run of the default gate reaches most of these answers."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.MoveLeader(1),
        o.Run(1000),
        o.Produce(2, -1),
        o.Run(1000),
        o.RogueFetch(1, 0, -1),
        o.RogueFetch(1, 0, 1),
        o.RogueFetch(0, 0, 0),
        o.RogueFetch(1, 9, 0),
        o.RogueFetch(1, 2, 0),
        o.RogueFetch(1, 1, -5),
        o.Run(1000),
    )


@declare(Scenario, "follower-restart", min_replicas=3)
def FOLLOWER_RESTART() -> tuple[o.Operation, ...]:
    """Durability across a restart (log.flush.interval.ms: appends written before they are
    acknowledged; LeaderEpochFileCache.assign flushes the leader-epoch checkpoint file on every new
    epoch, and log recovery reloads it and truncates it at the recovered end, KAFKA-7415's file):
    follower 2 holds records of epochs 0 and 1, crashes and restarts (its recovered end and HW are
    the model's), then
    fetches again (its last fetched epoch comes from the recovered cache, KIP-320) and becomes the
    leader of epoch 2, answering the old leader's epoch query from that cache (KIP-279). Random
    search reaches a follower restart after its writes, then its leadership, rarely."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.MoveLeader(1),
        o.Run(1000),
        o.Produce(2, -1),
        o.Run(1000),
        o.Run(3000),
        o.Crash(2),
        o.Restart(2),
        o.Run(1000),
        o.Run(3000),
        o.MoveLeader(2),
        o.Run(1000),
        o.Run(3000),
        o.Produce(3, -1),
        o.Run(3000),
    )


@declare(Scenario, "delayed-fetch", min_replicas=2)
def DELAYED_FETCH() -> tuple[o.Operation, ...]:
    """DelayedFetch's completion triggers (KAFKA-14334, KAFKA-3159; DelayedFetch.tryComplete): a
    consumer Fetch parks at the HW, an acks=1 write moves only the LEO (must not complete it:
    nothing is committed), replication advances the HW (must complete it at once); a Fetch waiting
    for two records sees two writes in a row; a Fetch waiting for one record sees two writes in a
    row, so the HW at completion trails the LEO (the answer stops at the HW); a Fetch parked with a
    long wait sees its broker lose leadership (must answer FENCED_LEADER_EPOCH at once, not at its
    deadline). Runs only with waiting consumer fetches (fetch_max_wait_ms > 0)."""
    return (
        o.Run(1000),
        o.ConsumeWait(0, 1, 500),
        o.Run(10),
        o.Produce(1, 1),
        o.Run(50),
        o.Run(1000),
        o.ConsumeWait(1, 2, 800),
        o.Run(10),
        o.Produce(2, 1),
        o.Produce(3, 1),
        o.Run(2000),
        o.ConsumeWait(3, 1, 800),
        o.Run(10),
        o.Produce(4, 1),
        o.Produce(5, 1),
        o.Run(2000),
        o.ConsumeWait(5, 1, 5000),
        o.Run(10),
        o.MoveLeader(1),
        o.Run(3000),
    )


def _session_expiry() -> tuple[o.Operation, ...]:
    """Long enough for the controller to fence a silent broker (broker.session.timeout.ms 9 s)."""
    return (o.Run(3000), o.Run(3000), o.Run(3000), o.Run(3000))


def _followers_fenced() -> tuple[o.Operation, ...]:
    """The ELR scenarios' opening: record 1 written with acks=all, then followers 1 and 2 crash
    and are fenced, so the ISR is [0] and the ELR [2]."""
    return (o.Run(1000), o.Produce(1, -1), o.Run(1000), o.Crash(1), o.Crash(2), *_session_expiry())


@declare(Scenario, "elr-last-known-leader", min_replicas=3)
def ELR_LAST_KNOWN_LEADER() -> tuple[o.Operation, ...]:
    """KAFKA-19522 (KIP-966): followers 1 and 2 crash and are fenced (ISR [0], ELR [2]); they
    restart at once, so their unclean shutdowns take them out of the ELR (KAFKA-15586); leader 0
    crashes and is fenced: ISR empty, ELR [0], last known leader 0. When 0 registers after its
    unclean shutdown it first leaves the ELR while still fenced: ISR and ELR are empty and the
    last known leader may be elected only once it is unfenced (canElectLastKnownLeader). Runs only
    on the ELR rung."""
    return (
        *_followers_fenced(),
        o.Restart(1),
        o.Restart(2),
        o.Crash(0),
        *_session_expiry(),
        o.Restart(0),
        o.Run(1000),
        o.Produce(2, -1),
        o.Run(3000),
    )


@declare(Scenario, "elr-unclean-shutdown", min_replicas=3)
def ELR_UNCLEAN_SHUTDOWN() -> tuple[o.Operation, ...]:
    """KAFKA-15586 (KIP-966): followers 1 and 2 crash and are fenced (ISR [0], ELR [2]); broker 2
    restarts after its unclean shutdown and must leave the ELR at registration
    (handleBrokerUncleanShutdown); leader 0 crashes and is fenced. The ELR is then [0] and nobody
    may be elected until 0 returns; a controller that kept 2 in the ELR elects it. Runs only on
    the ELR rung."""
    return (
        *_followers_fenced(),
        o.Restart(2),
        o.Crash(0),
        *_session_expiry(),
        o.Restart(0),
        o.Run(1000),
        o.Restart(1),
        o.Run(3000),
    )


def _read_through_follower() -> tuple[o.Operation, ...]:
    """Two records committed, then the follower-fetching consumer asks the leader, which names
    broker 1 (the consumer's rack), and reads both records there."""
    return (
        o.Run(1000),
        o.Produce(1, 1),
        o.Produce(2, 1),
        o.Run(1000),
        o.ConsumeReplica(),
        o.Run(100),
        o.ConsumeReplica(),
        o.Run(100),
    )


@declare(Scenario, "read-replica-out-of-isr", min_replicas=2)
def READ_REPLICA_OUT_OF_ISR() -> tuple[o.Operation, ...]:
    """KIP-392 follower fetching, KAFKA-14372: the consumer in broker 1's rack reads through its
    preferred read replica 1; broker 1 is cut off long enough to leave the ISR, and the leader
    must then serve the consumer itself instead of naming the lagging follower again. Runs only
    with ``follower_fetching``."""
    return (
        *_read_through_follower(),
        o.Isolate(1),
        o.Produce(3, 1),
        o.Run(20_000),
        o.Run(20_000),
        o.ConsumeReplica(),
        o.Run(100),
        o.ConsumeReplica(),
        o.Run(100),
        o.Heal(),
        o.Run(3000),
    )


@declare(Scenario, "read-replica-truncated", min_replicas=2)
def READ_REPLICA_TRUNCATED() -> tuple[o.Operation, ...]:
    """KIP-392 follower fetching, KAFKA-8365: the consumer reads record 3 through its preferred
    read replica 1, which then crashes with it unflushed (runs with log.flush.interval.ms above
    the run's length) and restarts behind the consumer's position while the leader is cut off.
    Its OFFSET_OUT_OF_RANGE must only send the consumer back to the leader, never reset the
    position. Runs only with ``follower_fetching``."""
    return (
        *_read_through_follower(),
        o.Produce(3, 1),
        o.Run(300),
        o.ConsumeReplica(),
        o.Run(100),
        o.Crash(1),
        o.Restart(1),
        o.Isolate(0),
        o.Run(200),
        o.ConsumeReplica(),
        o.Run(100),
        o.ConsumeReplica(),
        o.Run(100),
        o.Heal(),
        o.Run(3000),
        o.ConsumeReplica(),
        o.Run(100),
        o.ConsumeReplica(),
        o.Run(100),
    )


@declare(Scenario, "elr-stale-incarnation", min_replicas=3)
def ELR_STALE_INCARNATION() -> tuple[o.Operation, ...]:
    """KIP-903 (KAFKA-14139): follower 2 crashes and is fenced (ISR [0, 1]); follower 1 is cut off,
    crashes and restarts while cut off (its registration waits for the heal, so it is still in
    the ISR, with a new broker epoch); broker 2 restarts and catches up, and the leader proposes
    ISR [0, 1, 2] carrying broker 1's epoch from its previous incarnation's fetches: the
    controller must refuse it (INELIGIBLE_REPLICA). Runs only on the ELR rung."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.Crash(2),
        *_session_expiry(),
        o.Isolate(1),
        o.Crash(1),
        o.Restart(1),
        o.Restart(2),
        o.Run(1000),
        o.Run(1000),
        o.Heal(),
        o.Run(3000),
    )


@declare(Scenario, "restart-below-log-start", min_replicas=3)
def RESTART_BELOW_LOG_START() -> tuple[o.Operation, ...]:
    """KAFKA-9491 (and KAFKA-5634, KAFKA-2143, KAFKA-7414): broker 2 crashes empty; the leader
    appends record 1 and retention asks to delete it before it is committed (nothing may go at or
    past the HW, KAFKA-5634); broker 2 leaves the ISR after replica.lag.time.max.ms, brokers 0 and 1
    commit two records and DeleteRecords (KIP-107) moves the leader's log start to its HW.
    Restarted, broker 2 fetches from offset 0, below the leader's log start: OFFSET_OUT_OF_RANGE,
    and it must empty its log and restart at the leader's log start with its HW there too
    (truncateFullyAndStartAt), then copy the rest. Runs only with ``log_start_moves``."""
    return (
        o.Run(1000),
        o.Crash(2),
        o.Produce(1, 1),
        o.DeliverTo(0),
        o.Retention(0, 1),
        o.Produce(2, 1),
        o.Run(1000),
        o.Run(31_000),
        o.Run(1000),
        o.DeleteRecordsAt(0, -1),
        o.Restart(2),
        o.Run(1000),
        o.Produce(3, 1),
        o.Run(3000),
    )


@declare(Scenario, "isr-expiration", min_replicas=3)
def ISR_EXPIRATION() -> tuple[o.Operation, ...]:
    """ReplicaManager's isr-expiration task (every replica.lag.time.max.ms / 2, restarted with the
    broker: ReplicaManager.startup) and Partition.maybeShrinkIsr: broker 1 crashes, restarts and
    becomes the leader of epoch 1; then no message moves for 60 s (``advance`` delivers nothing:
    the followers' fetches stall), so both followers fall out of sync after 30 s and the leader
    must propose them out by 45 s (IsrShrinkBounded). Random search seldom lets a restarted
    broker lead through a long stall."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.Crash(1),
        o.Restart(1),
        o.Run(3000),
        o.MoveLeader(1),
        o.Run(1000),
        o.Produce(2, 1),
        o.Run(1000),
        o.Produce(3, 1),
        o.Deliver(-1),
        o.Advance(20_000),
        o.Advance(20_000),
        o.Advance(20_000),
        o.Run(3000),
    )


@declare(Scenario, "log-start-epoch-cache", min_replicas=3)
def LOG_START_EPOCH_CACHE() -> tuple[o.Operation, ...]:
    """The leader-epoch cache at the log start (issue 17; LeaderEpochFileCache.truncateFromStart,
    which UnifiedLog.maybeIncrementLogStartOffset runs, and clearAndFlush, which
    UnifiedLog.truncateFullyAndStartAt runs): broker 0 leads epoch 0 and writes records 2-5 that
    nobody else gets, then is cut off and fenced; broker 1 leads epoch 1 from offset 1, commits
    records 6-8 with broker 2 and DeleteRecords (KIP-107) moves its log start to 4, so its cache
    [(0, 0), (1, 1)] becomes [(1, 4)]. Healed, broker 0 fetches at 5 with lastFetchedEpoch 0, older
    than every epoch the leader still caches: endOffsetFor answers (0, 4), the start of the first
    later epoch (its "requested epoch smaller than any known epoch" case), and broker 0 diverges at
    4, not at 1. Then broker 2 crashes holding record 9 of epoch 1, the leader's log start passes
    its end, and restarted it fetches below the log start (OFFSET_OUT_OF_RANGE): it must restart
    its log at the leader's log start with an empty cache, so its next Fetch carries no
    lastFetchedEpoch (ReplicaFetcherThread.latestEpoch reads the cache). Runs only with
    ``log_start_moves``; random search seldom moves a log start past a diverging follower's epoch."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.Produce(2, 1),
        o.Produce(3, 1),
        o.Produce(4, 1),
        o.Produce(5, 1),
        o.DeliverTo(0),
        o.DeliverTo(0),
        o.DeliverTo(0),
        o.DeliverTo(0),
        o.Isolate(0),
        *_session_expiry(),
        o.Run(3000),
        o.Run(3000),
        o.Produce(6, 1),
        o.Produce(7, 1),
        o.Produce(8, 1),
        o.Run(3000),
        o.DeleteRecordsAt(1, -1),
        o.Heal(),
        o.Run(3000),
        o.Produce(9, -1),
        o.Run(1000),
        o.Crash(2),
        o.Run(31_000),
        o.Produce(10, 1),
        o.Produce(11, 1),
        o.Run(1000),
        o.DeleteRecordsAt(1, -1),
        o.Restart(2),
        o.Run(3000),
    )


@declare(Scenario, "demoted-leader-hw", min_replicas=3)
def DEMOTED_LEADER_HW() -> tuple[o.Operation, ...]:
    """A demoted leader keeps no leader state (issue 17; Partition.makeFollower: leader-only state
    goes; Partition.maybeIncrementLeaderHW runs only on the leader, leaderLogIfLocal): broker 0 leads
    and both followers copy record 2 (broker 0's HW becomes 2, theirs is still 1); broker 1 takes
    over, broker 2 is cut off, so broker 0, now a follower, is sent HW 1 (UnifiedLog.updateHighWatermark:
    min(leader HW, own LEO), it may go down, kafka-facts §3.2). Broker 2 is fenced and the ISR
    update [0, 1] reaches broker 0: its HW must stay the one its leader sent, not the one its old
    view of the followers' LEOs would give. Random search seldom demotes a leader while a follower's
    HW lags and then changes the ISR before the next Fetch answer."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.Produce(2, 1),
        o.Run(300),
        o.MoveLeader(1),
        o.Isolate(2),
        *_session_expiry(),
    )


def _divergent_epochs() -> tuple[o.Operation, ...]:
    """Brokers 0 and 2 end up holding records of epochs 0 and 2 that leader 1 of epoch 3 never had
    (its log: epochs 0, 1, 1); the operations of the ``divergent-epochs`` scenarios."""
    return (
        o.Run(1000),
        o.Produce(1, 1),
        o.Run(1000),
        o.Produce(2, 1),  # record 2 (epoch 0) reaches broker 0 only
        o.DeliverTo(0),
        o.DeliverTo(0),
        o.DeliverTo(0),
        o.Isolate(0),
        o.MoveLeader(1),
        o.Run(3100),  # the producer's metadata refresh (5 s) finds leader 1
        o.Produce(3, 1),  # records 3 and 4 (epoch 1) on brokers 1 and 2
        o.Produce(4, 1),
        o.Run(500),
        o.Heal(),
        o.Isolate(1),
        o.MoveLeader(0),  # epoch 2: broker 2 truncates record 3 and copies record 2
        o.Run(4500),  # the next refresh (10 s) finds leader 0; broker 1 cut off for 4.5 s (< 9 s session)
        o.Produce(5, 1),  # records 5 and 6 (epoch 2) on brokers 0 and 2
        o.Produce(6, 1),
        o.Run(300),
        o.MoveLeader(1),  # epoch 3: leader 1 (epochs 0, 1, 1) never had epoch 2
        o.Heal(),
        o.Run(1000),
        o.Run(3000),
    )


@declare(Scenario, "divergent-epochs", min_replicas=3)
def DIVERGENT_EPOCHS() -> tuple[o.Operation, ...]:
    """KIP-595-style truncation on fetch (KAFKA-10554, 2.7; AbstractFetcherThread.truncateOnFetchResponse,
    AbstractFetcherThreadTest.testDivergingEpochs): the leader answers a Fetch whose lastFetchedEpoch
    it never had with a divergingEpoch, the follower truncates and fetches again with its new last
    epoch. AbstractFetcherThread.getOffsetTruncationState (KIP-101, KIP-279;
    AbstractFetcherThreadTest.testTruncation: the follower's epochs 0, 2, 4 against the leader's 1,
    3, 5): brokers 0 and 2 hold records of epochs 0, 0, 2, 2 and leader 1 of epoch 3 holds epochs 0,
    1, 1. The leader's end offset for epoch 2 is (1, 3); a follower without epoch 1 truncates to its
    own end of epoch 0 (offset 2) and asks again, and the leader's (0, 1) then cuts its second epoch-0
    record: two divergent epochs in a row, each truncation point the lower of the follower's own end
    offset and the leader's, never the leader's alone. The fast-failover scenario reaches only a
    follower that has the leader's epoch with the longer end."""
    return _divergent_epochs()


@declare(Scenario, "divergent-epochs-kip-320", min_replicas=3, protocol=Protocol.KIP_320)
def DIVERGENT_EPOCHS_KIP_320() -> tuple[o.Operation, ...]:
    """The divergent-epochs operations on the KIP-320 rung (2.1 to 2.6): a new follower truncates
    through OffsetsForLeaderEpoch before it fetches (AbstractFetcherThread.maybeTruncate,
    truncateToEpochEndOffsets; the request carries currentLeaderEpoch, KIP-320). At boot the followers
    have no epoch and the answer is undefined: they truncate to their HW (UNDEFINED_EPOCH_OFFSET,
    AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable). Then the
    answer (1, 3) is an epoch broker 0 never had: it truncates to 2 and is not done
    (truncationCompleted = false: it asks again with epoch 0), and (0, 1) completes it at 1. The top
    rung truncates on fetch and never sends OffsetsForLeaderEpoch, so only a scenario pinned to an
    older rung judges this path."""
    return _divergent_epochs()


@declare(Scenario, "epoch-query-answers", min_replicas=3, protocol=Protocol.KIP_320)
def EPOCH_QUERY_ANSWERS() -> tuple[o.Operation, ...]:
    """OffsetsForLeaderEpoch answers a truncating follower must not apply (KIP-320, 2.1 to 2.6;
    AbstractFetcherThread.truncateToEpochEndOffsets keeps only answers whose request's leader epoch
    is still the partition's, AbstractFetcherThreadTest.testLeaderEpochChangeDuringFencedFetchEpochsFromLeader;
    a fenced answer changes nothing, testFencedTruncation). Two leader moves in a row: the followers'
    queries to leader 1 of epoch 1 are answered FENCED_LEADER_EPOCH after they follow epoch 2 (stale
    answers, ignored). Then broker 1 follows leader 0 of epoch 3 and queries it, and leader 0 learns
    epoch 4 before the query arrives: its FENCED_LEADER_EPOCH reaches broker 1 while broker 1 is still
    in epoch 3 (an error: no truncation; Kafka also stops fetching the partition until new metadata,
    markPartitionFailed, where the reference asks again after replica.fetch.backoff.ms, which the
    model permits: nothing changes either way). Pinned to the KIP-320 rung: the top rung never
    sends OffsetsForLeaderEpoch."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.MoveLeader(1),
        o.MoveLeader(2),
        o.Run(1000),
        o.MoveLeader(0),
        o.DeliverTo(1),  # broker 1 follows 0 in epoch 3 and sends its query
        o.MoveLeader(2),
        o.Deliver(0),  # epoch 3 reaches broker 0,
        o.Deliver(2),  # then epoch 4,
        o.Deliver(1),  # then broker 1's epoch-3 query: FENCED_LEADER_EPOCH,
        o.Deliver(-1),  # which reaches broker 1 before its epoch-4 metadata
        o.Run(1000),
        o.Produce(2, -1),
        o.Run(3000),
    )


@declare(Scenario, "follower-log-start", min_replicas=2)
def FOLLOWER_LOG_START() -> tuple[o.Operation, ...]:
    """KIP-107: a follower takes its leader's log start offset from every Fetch answer
    (ReplicaFetcherThread.processPartitionData: UnifiedLog.maybeIncrementLogStartOffset(
    leaderLogStartOffset, LeaderOffsetIncremented), never past its own HW, KAFKA-5634). Three
    records are committed, DeleteRecords moves leader 0's log start to 2 and the followers fetch
    again; broker 1 then leads and the adversarial consumer reads offsets 1 and 2 from it: offset 1
    was deleted (OFFSET_OUT_OF_RANGE), offset 2 is served. A follower that kept its own log start
    serves the deleted record once it leads. Runs only with ``log_start_moves``; the other log-start
    scenarios move a follower's log start only by restarting it below the leader's."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Produce(2, -1),
        o.Produce(3, -1),
        o.Run(1000),
        o.DeleteRecordsAt(0, 2),
        o.Run(1000),
        o.MoveLeader(1),
        o.Run(1000),
        o.RogueFetch(1, 1, 0),
        o.RogueFetch(1, 2, 0),
        o.Run(100),
    )


def _before_heal(ops: tuple[o.Operation, ...]) -> tuple[o.Operation, ...]:
    """``ops`` up to (without) their last Heal."""
    last = max(i for i, op in enumerate(ops) if isinstance(op, o.Heal))
    return ops[:last]


@declare(Scenario, "elr-refused-proposal-stall", min_replicas=3)
def ELR_REFUSED_PROPOSAL_STALL() -> tuple[o.Operation, ...]:
    """A refused AlterPartition ends the proposal (issue 17; Partition.handleAlterPartitionError:
    INELIGIBLE_REPLICA and OPERATION_NOT_ATTEMPTED reset the leader to the last committed state,
    the controller having said the request was not applied): ``elr-stale-incarnation`` up to the
    leader's refused proposals (KIP-903, broker 1 still cut off), then a record and a 60 s stall of
    every message, so no partition record reaches the leader. Broker 1 falls out of sync and the
    leader must propose it out within one isr-expiration period (IsrShrinkBounded); a leader that
    still counts the refused proposal as in flight never does. Runs only on the ELR rung."""
    return (
        *_before_heal(ELR_STALE_INCARNATION.ops),
        o.Produce(2, 1),
        o.Deliver(-1),
        o.Advance(20_000),
        o.Advance(20_000),
        o.Advance(20_000),
        o.Heal(),
        o.Run(3000),
    )


@declare(Scenario, "log-start-epoch-cache-kip-279", min_replicas=3, protocol=Protocol.KIP_279)
def LOG_START_EPOCH_CACHE_KIP_279() -> tuple[o.Operation, ...]:
    """The log-start-epoch-cache operations on the KIP-279 rung (2.0, before KAFKA-7415): broker 0
    truncates through OffsetsForLeaderEpoch, and the leader's cache follows the 0.11-2.0 rules
    (LeaderEpochFileCache before KAFKA-7415: assign only appends; endOffsetFor of an epoch older
    than every cached one is UNDEFINED_EPOCH_OFFSET, so broker 0 falls back to its HW). Runs only with
    ``log_start_moves``."""
    return LOG_START_EPOCH_CACHE.ops


@declare(Scenario, "unknown-leader-epoch", min_replicas=3)
def UNKNOWN_LEADER_EPOCH() -> tuple[o.Operation, ...]:
    """KIP-320 (Partition.checkCurrentLeaderEpoch): the controller moves leadership to broker 1 and
    follower 2 learns epoch 1 before broker 1 does; its Fetch to broker 1 is answered
    UNKNOWN_LEADER_EPOCH, and the follower must back off replica.fetch.backoff.ms before asking
    again (AbstractFetcherThread.processFetchRequest: partitionsWithError, delayPartitions;
    FollowerBacksOff), and keep fetching once broker 1 leads. The settle first empties the network so
    that the three metadata updates are the only messages in flight."""
    return (
        o.Run(1000),
        o.Produce(1, 1),
        o.Run(1000),
        o.Settle(100),
        o.MoveLeader(1),
        o.Deliver(2),  # metadata to broker 2: it follows broker 1 in epoch 1 and fetches
        o.Deliver(2),  # its Fetch reaches broker 1, still a follower in epoch 0
        o.Deliver(2),  # the UNKNOWN_LEADER_EPOCH answer
        o.Run(3000),
    )


@declare(Scenario, "leader-crash-fenced", min_replicas=2)
def LEADER_CRASH_FENCED() -> tuple[o.Operation, ...]:
    """KRaft broker sessions (BrokerHeartbeatManager, QuorumController.rescheduleMaybeFenceStaleBrokers):
    leader 0 writes record 1 with acks=all and crashes; nobody restarts it, so the controller must
    fence it once broker.session.timeout.ms passes (CrashedBrokerFenced) and elect another ISR member,
    which then takes record 2."""
    return (o.Run(1000), o.Produce(1, -1), o.Run(1000), o.Crash(0), *_session_expiry(), o.Produce(2, -1), o.Run(3000))


@declare(Scenario, "restarted-follower-retention", min_replicas=3)
def RESTARTED_FOLLOWER_RETENTION() -> tuple[o.Operation, ...]:
    """UnifiedLog.truncateFullyAndStartAt (KAFKA-9491) moves the log start too (issue 17's census):
    ``restart-below-log-start`` up to broker 2's restart; once the controller's next publication is
    delivered and the network settles, broker 2 has been answered
    OFFSET_OUT_OF_RANGE, restarted its log at its leader's log start 2, and its next Fetch waits in
    the leader's purgatory. Retention on broker 2 up to offset 1 then deletes nothing and reports
    nothing (UnifiedLog.maybeIncrementLogStartOffset moves a log start forward only); a follower
    that restarted its log at 2 but kept log start 0 deletes to 1 and reports it. Its next Fetch
    answer would hide the difference (the follower adopts its leader's log start), so random search
    does not see it. Runs only with ``log_start_moves``."""
    ops = RESTART_BELOW_LOG_START.ops
    restart = ops.index(o.Restart(2)) + 1
    return (*ops[:restart], o.Advance(1000), o.Settle(50), o.Retention(2, 1), *ops[restart:])


@declare(Scenario, "consume-wait-one-ms", min_replicas=2)
def CONSUME_WAIT_ONE_MS() -> tuple[o.Operation, ...]:
    """A consumer Fetch with fetch.max.wait.ms 1 waits (issue 17's census; ReplicaManager.fetchMessages
    answers at once only when ``params.maxWaitMs <= 0``, no data is wanted, enough is there or an
    error, a diverging epoch or a preferred read replica answers): with nothing committed, a Fetch
    for one record with a 1 ms wait is parked (DelayedFetch) and answers empty at its deadline. The
    random consumer draws waits of 0, 100 and fetch.max.wait.ms only. Runs only with waiting
    consumer fetches (fetch_max_wait_ms > 0)."""
    return (
        o.Run(1000),
        o.ConsumeWait(0, 1, 1),
        o.Run(100),
        o.Produce(1, -1),
        o.Run(1000),
        o.ConsumeWait(1, 1, 1),
        o.Run(100),
    )


@declare(Scenario, "epochs-above-offsets-kip-279", min_replicas=3, protocol=Protocol.KIP_279)
def EPOCHS_ABOVE_OFFSETS_KIP_279() -> tuple[o.Operation, ...]:
    """The 0.11-2.0 leader-epoch cache (LeaderEpochFileCache.assign before KAFKA-7415: an epoch is
    appended when it is later than the latest one and starts at or after the latest start) where
    epochs outrun offsets (issue 17's census): leadership moves three times before the first write,
    so record 1 is written at offset 0 in epoch 3; broker 1 then leads epoch 4 and writes record 2 at
    offset 1, so every cache holds [(3, 0), (4, 1)]. When broker 2 takes over (epoch 5), broker 1
    becomes a follower and asks OffsetsForLeaderEpoch for its latest epoch, 4 (KIP-279); a cache
    that compared the start offset 1 with the epoch 3 instead of its start 0 never recorded epoch 4
    and asks for 3. The runs of 5 s let the producer refresh its cached leader (the reference
    clients' metadata refresh). Pinned to the KIP-279 rung (2.0), where the cache has those rules
    and followers ask before fetching; every replica is in sync throughout, so the rung's own holes
    are not reached."""
    return (
        o.Run(1000),
        o.MoveLeader(1),
        o.Run(1000),
        o.MoveLeader(2),
        o.Run(1000),
        o.MoveLeader(0),
        o.Run(5000),
        o.Produce(1, -1),
        o.Run(1000),
        o.MoveLeader(1),
        o.Run(5000),
        o.Produce(2, -1),
        o.Run(1000),
        o.MoveLeader(2),
        o.Run(5000),
        o.Produce(3, -1),
        o.Run(1000),
    )


@declare(Scenario, "pending-expansion-hw", min_replicas=3)
def PENDING_EXPANSION_HW() -> tuple[o.Operation, ...]:
    """KIP-497 (Partition.maybeIncrementLeaderHW over the maximal ISR): a member the leader proposed
    in counts for its HW while the proposal is in flight, even when it is not caught up (issue 17's
    census). Broker 2 crashes and is fenced out of the ISR; broker 1 leads epoch 1 (starting at
    offset 1) and takes record 2, which broker 0 has not fetched yet; broker 2 restarts with record
    1 only, and its Fetch from offset 1 (at the HW and the epoch's start, not at the LEO, never
    caught up under this leader) makes broker 1 propose ISR [0, 1, 2]. While that AlterPartition is
    in flight broker 0 fetches record 2: the HW must stay 1, at broker 2's LEO; a leader counting
    only the committed ISR and the caught-up followers would move it to 2."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.Crash(2),
        *_session_expiry(),
        o.MoveLeader(1),
        o.Run(5000),
        o.Produce(2, 1),
        o.DeliverTo(1),  # record 2 at broker 1; broker 0's parked Fetch is answered
        o.Restart(2),
        o.Advance(1000),  # the controller publishes: broker 2 learns its leader
        o.DeliverTo(2),
        o.DeliverTo(1),  # broker 1's own copy of the record (ignored)
        o.DeliverTo(1),  # broker 2's Fetch from offset 1: the expansion is proposed
        o.DeliverTo(0),  # broker 0 gets record 2 and asks from offset 2
        o.DeliverTo(1),  # its Fetch waits at broker 1: the HW stays 1 while broker 2 is at 1
        o.Run(3000),
    )


def _one_batch_behind(rid: int) -> tuple[o.Operation, ...]:
    """One round of ``follower-one-batch-behind``: record ``rid`` reaches leader 0 before follower
    1's next Fetch does, 3 s pass (the controller's three publications are delivered and ignored),
    then follower 1 gets its previous answer and asks again, from an offset the new record passed."""
    return (
        o.Produce(rid, 1),
        o.Advance(3000),
        *(o.DeliverTo(0),) * 4,  # the record first, then the publications: nothing else is bound for 0
        *(o.DeliverTo(1),) * 4,  # the previous answer first: broker 1 asks again at once
        o.DeliverTo(0),  # its Fetch, one record behind the LEO
    )


@declare(Scenario, "follower-one-batch-behind", min_replicas=3)
def FOLLOWER_ONE_BATCH_BEHIND() -> tuple[o.Operation, ...]:
    """A follower that keeps reaching the leader's LEO as of its previous Fetch stays in sync
    (issue 17's census; Replica.updateFetchStateOrThrow: a fetch offset at the leader's LEO is
    caught up now, and one at or past the leader's LEO of the previous Fetch is caught up as of that
    Fetch's time; ReplicaState.isCaughtUp; replica.lag.time.max.ms): broker 2 crashes and is fenced;
    then for 48 s every Fetch of follower 1 arrives after the leader appended one more record, so it
    is never at the LEO when it asks, yet it has everything the leader had at its previous Fetch.
    The leader must keep it in the ISR: a leader that counted only the first rule would see it
    out of sync after replica.lag.time.max.ms and propose it out."""
    rounds = tuple(op for rid in range(2, 18) for op in _one_batch_behind(rid))
    return (o.Run(1000), o.Produce(1, 1), o.Run(1000), o.Crash(2), *_session_expiry(), *rounds, o.Run(3000))


@declare(Scenario, "unclean-truncation-below-hw", min_replicas=3, unclean=True)
def UNCLEAN_TRUNCATION_BELOW_HW() -> tuple[o.Operation, ...]:
    """An unclean election makes a follower truncate below its HW (KIP-106; UnifiedLog.truncateTo:
    the HW follows the log end down, ``highWatermark = min(highWatermark, targetOffset)``): broker 2
    crashes empty and is fenced (and after replica.lag.time.max.ms no longer counts for the HW);
    brokers 0 and 1 commit records 1 and 2 and checkpoint their HW 2;
    both crash, broker 2 restarts and is elected uncleanly (unclean.leader.election.enable) with an
    empty log; broker 1 restarts with HW 2 and must truncate to 0, its HW with it. Runs with
    unclean.leader.election.enable whatever the gate's configuration (the losses are allowed
    findings); clean elections never truncate a follower below its HW, so no other run reaches it."""
    return (
        o.Run(1000),
        o.Crash(2),
        o.Run(31_000),  # fenced, and no longer caught up: the HW rule stops counting it
        o.Produce(1, -1),
        o.Produce(2, -1),
        o.Run(6000),
        o.Crash(0),
        o.Crash(1),
        *_session_expiry(),
        o.Restart(2),
        o.Run(3000),
        o.Restart(1),
        o.Run(3000),
    )


@declare(Scenario, "undefined-epoch-answer-kip-279", min_replicas=3, protocol=Protocol.KIP_279)
def UNDEFINED_EPOCH_ANSWER_KIP_279() -> tuple[o.Operation, ...]:
    """An UNDEFINED_EPOCH_OFFSET answer to OffsetsForLeaderEpoch makes the follower truncate to its
    own HW (KIP-101; AbstractFetcherThread.getOffsetTruncationState in 0.11-2.0: "leader replied with
    undefined epoch offset", OffsetTruncationState(highWatermark, truncationCompleted = true)).
    Broker 0 is cut off after record 1 is committed; broker 1 leads epoch 1 and takes record 2 with
    acks=1, which broker 2 copies while the HW stays 1 (broker 0, still in the ISR, has not fetched
    it); leadership moves back to broker 0 (epoch 2) before it heals. On the KIP-279 rung (2.0,
    before KAFKA-7415) broker 0 caches epoch 2 only with its first write, so its cache is
    [(0, 0)] and endOffsetFor(1) is undefined: brokers 1 and 2 must truncate to their HW 1 and drop
    record 2. A follower that kept its log (truncating to its LEO) holds record 2 of epoch 1 at
    offset 1 where the leader will write another record. The run of 3 s lets the producer refresh
    its cached leader. Pinned to the KIP-279 rung: later rungs cache the epoch at election."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.Isolate(0),
        o.MoveLeader(1),
        o.Run(3000),
        o.Produce(2, 1),
        o.Run(300),
        o.MoveLeader(0),
        o.Heal(),
        o.Run(2000),
        o.Produce(3, -1),
        o.Run(2000),
    )


@declare(Scenario, "delete-records-below-log-start", min_replicas=2)
def DELETE_RECORDS_BELOW_LOG_START() -> tuple[o.Operation, ...]:
    """DeleteRecords below the current log start succeeds and changes nothing; its answer's low
    watermark is the log start (KIP-107; Partition.deleteRecordsOnLeader: UnifiedLog
    .maybeIncrementLogStartOffset never moves the log start back, and the response carries
    lowWatermarkIfLeader, not the requested offset). Three records are committed, DeleteRecords
    moves leader 0's log start to 2, then asks for offsets 1 and 2 again (below and at the log
    start) and -1 (the HW, 3). The random walk rarely asks a leader whose log start already moved.
    Runs only with ``log_start_moves``."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Produce(2, -1),
        o.Produce(3, -1),
        o.Run(1000),
        o.DeleteRecordsAt(0, 2),
        o.DeleteRecordsAt(0, 1),
        o.DeleteRecordsAt(0, 2),
        o.DeleteRecordsAt(0, -1),
        o.DeleteRecordsAt(0, 0),
        o.Run(1000),
    )


@declare(Scenario, "reelected-leader-resets-followers", min_replicas=3, unclean=True)
def REELECTED_LEADER_RESETS_FOLLOWERS() -> tuple[o.Operation, ...]:
    """A leader elected again in a later epoch, without having learned it lost leadership in
    between, resets its followers' caught-up times (Partition.makeLeader on a new leader epoch:
    Replica.resetReplicaState, lastCaughtUpTime now for an ISR member and 0 for any other, "to
    ensure that the high watermark is not held back unnecessarily for a follower which is not in the
    ISR anymore"; it keeps their LEOs, isNewLeader being false: reelected-leader-keeps-follower-leo).
    Leader 0 is cut off after record 1 is committed and fenced (broker.session.timeout.ms);
    brokers 1 and 2 lead in turn, crash and are fenced, so the partition has no leader; when the
    network heals broker 0 is elected uncleanly (KIP-106, ISR [0], epoch 4) having never seen epochs
    1 to 3. It takes record 2, broker 1 restarts and joins the ISR, and the HW must reach 2 at once:
    broker 2, down and out of the ISR, no longer counts although it was caught up (as leader 0
    last saw it) less than replica.lag.time.max.ms ago. A leader that kept its epoch-0 view of the
    followers' caught-up times holds the HW at broker 2's old LEO 1. Runs with
    unclean.leader.election.enable whatever the gate's configuration (the losses are allowed findings)."""
    return (
        o.Run(1000),
        o.Produce(1, -1),
        o.Run(1000),
        o.Isolate(0),
        o.Run(5000),
        o.Run(5000),
        o.Crash(1),
        o.Crash(2),
        o.Run(5000),
        o.Run(5000),
        o.Heal(),
        o.Run(3000),
        o.Produce(2, 1),
        o.Run(500),
        o.Restart(1),
        o.Run(3000),
        o.Produce(3, -1),
        o.Run(3000),
    )


def _leader_back(skips_epoch: bool) -> tuple[o.Operation, ...]:
    """Leader 0 of epoch 0 (ISR [0, 1, 2]) takes record 1, which follower 1 copies and follower 2,
    crashed, never gets: the HW stays 0. Broker 0 is cut off; broker 2 is fenced (ISR [0, 1], an
    ISR-only change broker 0 does not hear of); leadership moves to broker 1 (epoch 1) and back to
    broker 0 (epoch 2), all before broker 0's own session expires. When the network heals, broker 0
    hears of epoch 2 before (``skips_epoch``) or after epoch 1."""
    return (
        o.Run(1000),
        o.Crash(2),
        o.Produce(1, 1),
        o.Run(1000),
        o.Run(5000),
        o.Run(1000),
        o.Isolate(0),
        o.Run(1500),
        o.Run(1500),
        o.MoveLeader(1),
        o.MoveLeader(0),
        o.Heal(),
        *((o.Deliver(-2),) if skips_epoch else ()),  # epoch 2's record to broker 0, before epoch 1's
        o.Run(1000),
        o.Produce(2, -1),
        o.Run(3000),
    )


@declare(Scenario, "reelected-leader-keeps-follower-leo", min_replicas=3)
def REELECTED_LEADER_KEEPS_FOLLOWER_LEO() -> tuple[o.Operation, ...]:
    """A leader elected again in a later epoch without having left leadership in between keeps its
    followers' LEOs (Partition.makeLeader: isNewLeader = !isLeader is false, so
    Replica.resetReplicaState keeps the LEO and resets only the caught-up and last fetch times;
    KAFKA-2721, ReplicaTest.testResetReplicaStateWhenLeaderIsReelectedAndReplicaIsInSync) and
    its HW moves at once (maybeIncrementLeaderHW right after). Broker 0 leads epoch 0, follower 1
    copies record 1, follower 2 is down; cut off, broker 0 misses the ISR shrink to [0, 1] and
    epoch 1 (leader 1), and hears epoch 2 (leader 0, ISR [0, 1]) first: it knows follower 1 is at
    LEO 1, so the HW becomes 1 as it becomes leader. A model resetting every follower to an
    unknown LEO holds the HW at 0 until follower 1 fetches, and calls Kafka's answer wrong."""
    return _leader_back(skips_epoch=True)


@declare(Scenario, "new-leader-forgets-follower-leo", min_replicas=3)
def NEW_LEADER_FORGETS_FOLLOWER_LEO() -> tuple[o.Operation, ...]:
    """The near miss of reelected-leader-keeps-follower-leo: the same run, but broker 0 hears of
    epoch 1 (it becomes follower of broker 1) before epoch 2, so it becomes leader anew
    (isNewLeader): every follower's LEO is unknown (KAFKA-351, 0.8: "there could be old LogEndOffset
    from the time when this broker was the leader last time"; Replica.resetReplicaState) and the
    HW stays 0 until follower 1 fetches in epoch 2. Kills new-leader-keeps-follower-leo."""
    return _leader_back(skips_epoch=False)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        FAST_FAILOVER,
        REJOIN_BEFORE_EPOCH_START,
        ADVERSARIAL_CONSUMER,
        FOLLOWER_RESTART,
        DELAYED_FETCH,
        ELR_LAST_KNOWN_LEADER,
        ELR_UNCLEAN_SHUTDOWN,
        READ_REPLICA_OUT_OF_ISR,
        READ_REPLICA_TRUNCATED,
        ELR_STALE_INCARNATION,
        RESTART_BELOW_LOG_START,
        ISR_EXPIRATION,
        LOG_START_EPOCH_CACHE,
        DEMOTED_LEADER_HW,
        DIVERGENT_EPOCHS,
        DIVERGENT_EPOCHS_KIP_320,
        EPOCH_QUERY_ANSWERS,
        FOLLOWER_LOG_START,
        ELR_REFUSED_PROPOSAL_STALL,
        LOG_START_EPOCH_CACHE_KIP_279,
        UNKNOWN_LEADER_EPOCH,
        LEADER_CRASH_FENCED,
        RESTARTED_FOLLOWER_RETENTION,
        CONSUME_WAIT_ONE_MS,
        EPOCHS_ABOVE_OFFSETS_KIP_279,
        PENDING_EXPANSION_HW,
        FOLLOWER_ONE_BATCH_BEHIND,
        UNCLEAN_TRUNCATION_BELOW_HW,
        UNDEFINED_EPOCH_ANSWER_KIP_279,
        DELETE_RECORDS_BELOW_LOG_START,
        REELECTED_LEADER_RESETS_FOLLOWERS,
        REELECTED_LEADER_KEEPS_FOLLOWER_LEO,
        NEW_LEADER_FORGETS_FOLLOWER_LEO,
    )
}

_ELR_ONLY = frozenset(
    {"elr-last-known-leader", "elr-unclean-shutdown", "elr-stale-incarnation", "elr-refused-proposal-stall"}
)


def zoo(cfg: ReplicationConfig) -> list[Scenario]:
    """The scenarios that apply to ``cfg`` (enough replicas; the delayed-fetch one only with waiting
    consumer fetches; the ELR ones only on the ELR rung; the follower-fetching ones only with
    ``follower_fetching``; the log-start ones only with ``log_start_moves``), in the order they run."""
    return [
        s
        for s in SCENARIOS.values()
        if cfg.replicas >= s.min_replicas
        and (s not in (DELAYED_FETCH, CONSUME_WAIT_ONE_MS) or cfg.fetch_max_wait_ms > 0)
        and (s.name not in _ELR_ONLY or cfg.elr)
        and (s not in (READ_REPLICA_OUT_OF_ISR, READ_REPLICA_TRUNCATED) or cfg.follower_fetching)
        and (
            s
            not in (
                RESTART_BELOW_LOG_START,
                LOG_START_EPOCH_CACHE,
                LOG_START_EPOCH_CACHE_KIP_279,
                FOLLOWER_LOG_START,
                RESTARTED_FOLLOWER_RETENTION,
                DELETE_RECORDS_BELOW_LOG_START,
            )
            or cfg.log_start_moves
        )
    ]
