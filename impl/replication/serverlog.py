"""The replication reference brokers' run printed as Kafka 3.x (KRaft mode) prints it: each broker's
``server.log`` and ``state-change.log`` lines, and the controller's line for the partition it
creates, in Kafka's log4j layout ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)``.

This is ground truth for ``kconform logs`` (traces/logs/groundtruth.py): a run with a named mutant
prints what the mutant did as Kafka would have printed it, and the log checks must find every
anomaly the lines can show; a clean run must raise nothing.

The printer is an ``EventLog``: the cluster's handlers emit their events through it (impl.runtime),
and at each event it reads the state the handler just left (the broker's log end offset, high
watermark, view of the partition) and prints the lines Kafka prints at that point. Messages, their
loggers and prefixes follow Kafka 3.x sources:

- ``Partition.makeLeader`` / ``makeFollower`` (state.change.logger): ``[Broker id=N] Leader tp with
  topic id Some(X) starts at leader epoch E from offset S with partition epoch P, high watermark H,
  ISR [..], adding replicas [] and removing replicas []. Previous leader epoch was E0.`` and
  ``[Broker id=N] Follower tp starts at leader epoch E from offset S with partition epoch P and high
  watermark H. Current leader is L. Previous leader epoch was E0.``;
- ``Partition.maybeShrinkIsr`` / ``maybeExpandIsr`` / AlterPartition success (kafka.cluster.Partition):
  ``Shrinking ISR from A to B. Leader: (highWatermark: H, endOffset: L). Out of sync replicas: ...``,
  ``Expanding ISR from A to B``, ``ISR updated to B  and version updated to P``;
- ``AbstractFetcherThread`` (kafka.server.ReplicaFetcherThread): ``Truncating partition tp with
  TruncationState(offset=T, completed=C) due to leader epoch and offset EpochEndOffset(errorCode=0,
  partition=p, leaderEpoch=E, endOffset=O)`` (an OffsetsForLeaderEpoch answer or a Fetch answer's
  diverging epoch), ``... due to local high watermark T`` (truncation to the HW), ``Reset fetch offset
  for partition tp from X to current leader's latest offset Y`` (an out-of-range answer), and the
  warning ``Truncating tp to offset T below high watermark H``;
- ``ReplicationControlManager`` (the controller): ``Replayed PartitionRecord for new partition tp with
  topic ID X and PartitionRegistration(...)`` when the partition gets its first leader, and
  ``PartitionChangeBuilder``'s ``Setting new leader ... using an unclean election``;
- ``KafkaRaftServer``: ``Kafka Server started`` when a broker (re)starts.

Guarantees: the text is a function of the run (deterministic: times are the simulated clock from a
fixed origin); every value printed is read from the broker's state or the event at that moment,
nothing is invented; lines are kept per broker (``server.log`` and ``state-change.log``) and for
the controller (``controller.log``). A broker's state-change and server lines go to one file,
``broker-N/server.log``, as a broker container's standard output has them (Confluent, Bitnami and
Strimzi images log every logger to the console): rules that follow one broker through both
(truncation-agrees-with-epoch-cache's own-cache rule) need its lines in one stream.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kconform.traces.events import (
    NO_LEADER,
    NONE,
    AlterPartitionApplied,
    BrokerFenced,
    BrokerRestarted,
    BrokerUnfenced,
    EpochQueryApplied,
    EpochQueryHandled,
    Event,
    FetchApplied,
    FetchHandled,
    FetchSent,
    IsrChangeProposed,
    MetadataApplied,
)

from ..runtime import EventLog

if TYPE_CHECKING:
    from .cluster import SimulatedCluster

TOPIC = "replicated"
PARTITION = 0
TP = f"{TOPIC}-{PARTITION}"
TOPIC_ID = "kConformReplicaTopicAA"
CONTROLLER_ID = 3000
"""The KRaft controller's node id in the printed lines (the slice's controller has no broker id)."""
ORIGIN = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
"""The wall-clock time of simulated time 0."""

STATE_CHANGE = "state.change.logger"
PARTITION_LOGGER = "kafka.cluster.Partition"
FETCHER_LOGGER = "kafka.server.ReplicaFetcherThread"
CONTROLLER_LOGGER = "org.apache.kafka.controller.ReplicationControlManager"
ELECTION_LOGGER = "org.apache.kafka.controller.PartitionChangeBuilder"
SERVER_LOGGER = "kafka.server.KafkaRaftServer"


def _ids(isr: tuple[int, ...]) -> str:
    return ",".join(str(b) for b in isr)


@dataclass(frozen=True)
class Truncation:
    """One truncation of a broker's log: where to, on which leader answer (-1 when none), whether the
    fetcher called it complete, and the broker's HW, epoch cache and LEO just before."""

    broker: int
    offset: int
    answer_epoch: int
    answer_end: int
    hw_before: int
    cache_before: tuple[tuple[int, int], ...]
    leo_before: int


class ServerLog(EventLog):
    """An event log that also prints the Kafka log lines of each event (see the module docstring)."""

    def __init__(self, cluster: SimulatedCluster) -> None:
        super().__init__()
        self.cluster = cluster
        self.lines: dict[str, list[str]] = {}
        """File name (``broker-N/server.log``, ``controller.log``) -> lines."""
        self._hw: dict[int, int] = {}
        """Each broker's HW as the last event left it (the HW before a truncation)."""
        self._epoch: dict[int, int] = {}
        """Each broker's leader epoch before its latest start (``Previous leader epoch was``)."""
        self._answers: dict[int, tuple[int, int]] = {}
        """Epoch query / fetch message id -> the (epoch, end offset) the leader answered."""
        self._fetch_offsets: dict[int, int] = {}
        """Fetch message id -> its fetch offset (the follower's LEO when it sent it)."""
        self._registered = False
        self._cache: dict[int, tuple[tuple[tuple[int, int], ...], int]] = {}
        """Each broker's epoch cache entries and LEO as the last event left them (before a truncation)."""
        self.truncations: list[Truncation] = []
        """Every truncation the run made, with the state before it (the ground truth's input)."""
        self.unclean = False
        """Whether the controller elected a leader uncleanly during the run."""
        self._handlers: dict[type[Event], Callable[[Event], None]] = {
            MetadataApplied: self._metadata,  # type: ignore[dict-item]
            IsrChangeProposed: self._isr_proposed,  # type: ignore[dict-item]
            AlterPartitionApplied: self._isr_applied,  # type: ignore[dict-item]
            EpochQueryHandled: self._epoch_answer,  # type: ignore[dict-item]
            EpochQueryApplied: self._epoch_applied,  # type: ignore[dict-item]
            FetchSent: self._fetch_sent,  # type: ignore[dict-item]
            FetchHandled: self._fetch_answer,  # type: ignore[dict-item]
            FetchApplied: self._fetch_applied,  # type: ignore[dict-item]
            BrokerRestarted: self._restarted,  # type: ignore[dict-item]
            BrokerFenced: self._controller,  # type: ignore[dict-item]
            BrokerUnfenced: self._controller,  # type: ignore[dict-item]
        }

    # ---------------------------------------------------------------------------- plumbing

    def emit(self, event: Event) -> None:
        super().emit(event)
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)
        for broker in self.cluster.brokers:
            if broker.alive:
                self._hw[broker.broker_id] = broker.log.hw
                self._cache[broker.broker_id] = (broker.log.epochs.snapshot(), broker.log.leo)

    def _ts(self) -> str:
        at = ORIGIN + dt.timedelta(milliseconds=self.cluster.rt.now_ms)
        return at.strftime("%Y-%m-%d %H:%M:%S,") + f"{at.microsecond // 1000:03d}"

    def _print(self, file: str, level: str, message: str, logger: str) -> None:
        self.lines.setdefault(file, []).append(f"[{self._ts()}] {level} {message} ({logger})")

    def _fetcher(self, broker: int) -> str:
        leader = self.cluster.brokers[broker].partition.view.leader
        return f"[ReplicaFetcher replicaId={broker}, leaderId={leader}, fetcherId=0]"

    # ---------------------------------------------------------------------------- handlers

    def _metadata(self, e: MetadataApplied) -> None:
        b = e.node
        server = state = f"broker-{b}/server.log"  # one stream per broker, as a container's stdout has it
        log = self.cluster.brokers[b].log
        previous = self._epoch.get(b, -1)
        if e.outcome == "become_leader":
            self._epoch[b] = e.leader_epoch
            self._print(
                state,
                "INFO",
                f"[Broker id={b}] Leader {TP} with topic id Some({TOPIC_ID}) starts at leader epoch {e.leader_epoch} "
                f"from offset {log.leo} with partition epoch {e.partition_epoch}, high watermark {log.hw}, "
                f"ISR [{_ids(e.isr)}], adding replicas [] and removing replicas []. "
                f"Previous leader epoch was {previous}.",
                STATE_CHANGE,
            )
        elif e.outcome == "become_follower":
            self._epoch[b] = e.leader_epoch
            if e.truncated_to >= 0:  # truncation to the local HW at once (pre-KIP-101, truncate-to-hw)
                self._record(b, e.truncated_to, -1, -1)
                self._print(
                    server,
                    "INFO",
                    f"[ReplicaFetcher replicaId={b}, leaderId={e.leader}, fetcherId=0] Truncating partition {TP} "
                    f"with TruncationState(offset={e.truncated_to}, completed=true) due to local high watermark "
                    f"{e.truncated_to}",
                    FETCHER_LOGGER,
                )
            self._print(
                state,
                "INFO",
                f"[Broker id={b}] Follower {TP} starts at leader epoch {e.leader_epoch} from offset {log.leo} with "
                f"partition epoch {e.partition_epoch} and high watermark {log.hw}. Current leader is {e.leader}. "
                f"Previous leader epoch was {previous}.",
                STATE_CHANGE,
            )

    def _isr_proposed(self, e: IsrChangeProposed) -> None:
        b = e.node
        broker = self.cluster.brokers[b]
        before = broker.partition.view.isr
        file = f"broker-{b}/server.log"
        prefix = f"[Partition {TP} broker={b}]"
        if set(e.isr) < set(before):
            leading = broker.partition.leading
            out = []
            for r in (x for x in before if x not in e.isr):
                remote = leading.remotes.get(r) if leading is not None else None
                leo = remote.leo if remote is not None else -1
                caught = remote.last_caught_up_ms if remote is not None and remote.last_caught_up_ms is not None else -1
                out.append(f"(brokerId: {r}, endOffset: {leo}, lastCaughtUpTimeMs: {caught})")
            self._print(
                file,
                "INFO",
                f"{prefix} Shrinking ISR from {_ids(before)} to {_ids(e.isr)}. Leader: (highWatermark: {e.hw}, "
                f"endOffset: {broker.log.leo}). Out of sync replicas: {' '.join(out)}.",
                PARTITION_LOGGER,
            )
        elif set(e.isr) > set(before):
            self._print(file, "INFO", f"{prefix} Expanding ISR from {_ids(before)} to {_ids(e.isr)}", PARTITION_LOGGER)

    def _isr_applied(self, e: AlterPartitionApplied) -> None:
        if e.error != NONE:
            return
        b = e.node
        view = self.cluster.brokers[b].partition.view
        if view.partition_epoch != e.partition_epoch or view.isr != tuple(sorted(e.isr)):
            return  # a stale answer: the broker kept its state
        under = "(under-min-isr)" if len(e.isr) < self.cluster.rt.config.effective_min_isr else ""
        self._print(
            f"broker-{b}/server.log",
            "INFO",
            f"[Partition {TP} broker={b}] ISR updated to {_ids(tuple(sorted(e.isr)))} {under} and version updated "
            f"to {e.partition_epoch}",
            PARTITION_LOGGER,
        )

    def _epoch_answer(self, e: EpochQueryHandled) -> None:
        if e.error == NONE:
            self._answers[e.msg] = (e.epoch, e.end_offset)

    def _fetch_answer(self, e: FetchHandled) -> None:
        if e.error == NONE and e.diverging_epoch >= 0:
            self._answers[e.msg] = (e.diverging_epoch, e.diverging_end_offset)

    def _epoch_applied(self, e: EpochQueryApplied) -> None:
        if e.outcome not in ("truncated", "retry") or e.truncated_to < 0:
            return
        epoch, end = self._answers.pop(e.msg, (-1, -1))
        self._truncation(e.node, e.truncated_to, e.outcome == "truncated", epoch, end)

    def _fetch_sent(self, e: FetchSent) -> None:
        self._fetch_offsets[e.msg] = e.fetch_offset

    def _fetch_applied(self, e: FetchApplied) -> None:
        answer = self._answers.pop(e.msg, None)
        fetch_offset = self._fetch_offsets.pop(e.msg, -1)
        if e.truncated_to < 0:
            return
        if answer is None:  # OFFSET_OUT_OF_RANGE with the leader's LEO below ours: truncate to it
            self._print(
                f"broker-{e.node}/server.log",
                "WARN",
                f"{self._fetcher(e.node)} Reset fetch offset for partition {TP} from {fetch_offset} to current "
                f"leader's latest offset {e.truncated_to}",
                FETCHER_LOGGER,
            )
            self._record(e.node, e.truncated_to, -1, -1)
            self._below_hw(e.node, e.truncated_to)
            return
        self._truncation(e.node, e.truncated_to, True, answer[0], answer[1])

    def _truncation(self, b: int, offset: int, completed: bool, epoch: int, end: int) -> None:
        self._print(
            f"broker-{b}/server.log",
            "INFO",
            f"{self._fetcher(b)} Truncating partition {TP} with TruncationState(offset={offset}, "
            f"completed={str(completed).lower()}) due to leader epoch and offset EpochEndOffset(errorCode=0, "
            f"partition={PARTITION}, leaderEpoch={epoch}, endOffset={end})",
            FETCHER_LOGGER,
        )
        self._record(b, offset, epoch, end)
        self._below_hw(b, offset)

    def _record(self, b: int, offset: int, epoch: int, end: int) -> None:
        cache, leo = self._cache.get(b, ((), offset))
        self.truncations.append(Truncation(b, offset, epoch, end, self._hw.get(b, 0), cache, leo))

    def _below_hw(self, b: int, offset: int) -> None:
        hw = self._hw.get(b, 0)
        if offset < hw:
            self._print(
                f"broker-{b}/server.log",
                "WARN",
                f"{self._fetcher(b)} Truncating {TP} to offset {offset} below high watermark {hw}",
                FETCHER_LOGGER,
            )

    def _restarted(self, e: BrokerRestarted) -> None:
        self._epoch.pop(e.node, None)
        self._print(
            f"broker-{e.node}/server.log",
            "INFO",
            f"[KafkaRaftServer nodeId={e.node}] Kafka Server started",
            SERVER_LOGGER,
        )

    def _controller(self, e: BrokerFenced | BrokerUnfenced) -> None:
        if e.leader != NO_LEADER and not self._registered:
            self._registered = True
            replicas = ", ".join(str(b) for b in self.cluster.controller.replicas)
            self._print(
                "controller.log",
                "INFO",
                f"[QuorumController id={CONTROLLER_ID}] Replayed PartitionRecord for new partition {TP} with topic ID "
                f"{TOPIC_ID} and PartitionRegistration(replicas=[{replicas}], isr=[{', '.join(map(str, e.isr))}], "
                f"removingReplicas=[], addingReplicas=[], leader={e.leader}, leaderRecoveryState=RECOVERED, "
                f"leaderEpoch={e.leader_epoch}, partitionEpoch={e.partition_epoch}).",
                CONTROLLER_LOGGER,
            )
        if e.unclean:
            self.unclean = True
            self._print(
                "controller.log",
                "INFO",
                f"[QuorumController id={CONTROLLER_ID}] Setting new leader for topicId {TOPIC_ID}, partition "
                f"{PARTITION} to {e.leader} using an unclean election",
                ELECTION_LOGGER,
            )

    def text(self) -> dict[str, str]:
        """Each printed file's text."""
        return {name: "".join(f"{line}\n" for line in lines) for name, lines in sorted(self.lines.items())}
