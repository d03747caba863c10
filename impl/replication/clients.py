"""The producer and the read_uncommitted consumer, each with a metadata cache.

Guarantees: a client sends to the leader it has cached (nothing when it knows none); the cache is
refreshed from the controller's current state at start, on every error response and every
CLIENT_METADATA_REFRESH_MS (metadata.max.age.ms, shortened for the simulation); the consumer
sends its cached leader epoch as currentLeaderEpoch from KIP-320 on.
"""

from __future__ import annotations

from kconform.traces.events import (
    NO_LEADER,
    NONE,
    OFFSET_OUT_OF_RANGE,
    UNKNOWN_LEADER_EPOCH,
    ReplicaFetchApplied,
    ReplicaFetchSent,
)

from ..messages import Message
from ..network import CONSUMER_NODE, PRODUCER_NODE
from . import mutants
from .controller import Controller
from .messages import (
    ConsumerFetchRequest,
    ConsumerFetchResponse,
    ProduceRequest,
    ProduceResponse,
    ReplicaFetchRequest,
    ReplicaFetchResponse,
)
from .runtime import Runtime

CLIENT_METADATA_REFRESH_MS = 5_000


class _Client:
    """Metadata cache shared by both clients."""

    def __init__(self, node: int, rt: Runtime, controller: Controller) -> None:
        self.node = node
        self.rt = rt
        self.controller = controller
        self.leader = NO_LEADER
        self.leader_epoch = -1

    def refresh_metadata(self) -> None:
        record = self.controller.record
        self.leader = record.leader
        self.leader_epoch = record.leader_epoch

    def start_timers(self) -> None:
        self.rt.scheduler.schedule(CLIENT_METADATA_REFRESH_MS, self.node, "metadata-refresh", self._on_refresh)

    def _on_refresh(self) -> None:
        self.refresh_metadata()
        self.start_timers()


class Producer(_Client):
    """Sends Produce requests; one record (rid) per request."""

    def __init__(self, rt: Runtime, controller: Controller) -> None:
        super().__init__(PRODUCER_NODE, rt, controller)

    def produce(self, rid: int, acks: int) -> None:
        if self.leader != NO_LEADER:
            self.rt.network.send(self.node, self.leader, ProduceRequest(rid, acks))

    def receive(self, msg: Message) -> None:
        payload = msg.payload
        assert isinstance(payload, ProduceResponse), f"producer got {type(payload).__name__}"
        if payload.error != NONE:
            self.refresh_metadata()


class Consumer(_Client):
    """Sends read_uncommitted Fetch requests from a given offset. The same node also runs the
    follower-fetching consumer (KIP-392, config ``follower_fetching``): ``position``, the
    ``preferred`` read replica and its expiry, as SubscriptionState's TopicPartitionState keeps
    them, one Fetch in flight at a time."""

    def __init__(self, rt: Runtime, controller: Controller) -> None:
        super().__init__(CONSUMER_NODE, rt, controller)
        self.position = 0
        self.preferred = -1
        self.preferred_expires_ms = -1
        self.in_flight = -1
        """The follower-fetching consumer's Fetch awaiting its answer (-1: none)."""
        self.in_flight_deadline_ms = -1

    def consume_replica(self) -> None:
        """Operation ``consume_replica``: a Fetch from the position to the preferred read replica
        while it is set and unexpired (an expired one is dropped), else to the cached leader
        (AbstractFetch.selectReadReplica); nothing while no leader is known, and nothing while a
        Fetch is awaiting its answer (AbstractFetch.fetchablePartitions skips a node with a pending
        request) until request.timeout.ms after it was sent, when the client gives it up (the
        NetworkClient disconnects). Answers to an older position are discarded too."""
        if self.in_flight >= 0 and self.rt.now_ms < self.in_flight_deadline_ms:
            return
        if self.preferred >= 0 and self.rt.now_ms > self.preferred_expires_ms:
            self.preferred, self.preferred_expires_ms = -1, -1
        from_preferred = self.preferred >= 0
        target = self.preferred if from_preferred else self.leader
        if target == NO_LEADER:
            return
        epoch = self.leader_epoch if self.rt.config.protocol.fenced else -1
        msg_id = self.rt.network.send(self.node, target, ReplicaFetchRequest(self.position, epoch))
        self.in_flight, self.in_flight_deadline_ms = msg_id, self.rt.now_ms + self.rt.config.request_timeout_ms
        self.rt.events.emit(ReplicaFetchSent(target, msg_id, self.position, epoch, from_preferred))

    def _on_replica_answer(self, msg: Message, answer: ReplicaFetchResponse) -> None:
        """FetchCollector for the follower-fetching consumer: records move the position; a named
        preferred replica is kept for metadata.max.age.ms; OFFSET_OUT_OF_RANGE clears the
        preferred replica, or resets to the earliest offset when there was none (KAFKA-8365);
        UNKNOWN_LEADER_EPOCH is only logged; other errors refresh metadata and clear it. Only the
        answer to the Fetch awaiting one is handled: a second copy of a duplicated answer, or the
        answer to a Fetch given up, matches no pending request and is dropped (NetworkClient)."""
        if answer.req != self.in_flight:
            return
        self.in_flight = -1
        reset_to = 0
        if answer.fetch_offset == self.position:
            if answer.error == NONE:
                if answer.preferred >= 0 and answer.preferred != self.preferred:
                    self.preferred = answer.preferred
                    self.preferred_expires_ms = self.rt.now_ms + self.rt.config.metadata_max_age_ms
                if answer.entries:
                    self.position = answer.entries[-1].offset + 1
            elif answer.error == OFFSET_OUT_OF_RANGE:
                if self.preferred < 0 or self.rt.mutant(mutants.RESET_ON_FOLLOWER_OUT_OF_RANGE):
                    self.position = reset_to
                self.preferred, self.preferred_expires_ms = -1, -1
            elif answer.error != UNKNOWN_LEADER_EPOCH:
                self.preferred, self.preferred_expires_ms = -1, -1
                self.refresh_metadata()
        self.rt.events.emit(ReplicaFetchApplied(msg.src, answer.req, self.position, self.preferred, reset_to))

    def consume(self, offset: int) -> None:
        if self.leader == NO_LEADER:
            return
        current_leader_epoch = self.leader_epoch if self.rt.config.protocol.fenced else -1
        self.rt.network.send(self.node, self.leader, ConsumerFetchRequest(offset, current_leader_epoch))

    def rogue_fetch(self, broker: int, offset: int, epoch_delta: int) -> None:
        """Operation ``rogue_fetch``: a Fetch to ``broker`` (leader or not) with the controller's
        current leader epoch shifted by ``epoch_delta`` (-1, no epoch, when that is below 0 or the
        protocol rung predates KIP-320)."""
        fenced = self.rt.config.protocol.fenced  # before KIP-320 (Fetch < v9) no client can send one
        epoch = max(-1, self.controller.record.leader_epoch + epoch_delta) if fenced else -1
        self.rt.network.send(self.node, broker, ConsumerFetchRequest(offset, epoch))

    def consume_wait(self, offset: int, min_bytes: int, max_wait_ms: int) -> None:
        """A Fetch with fetch.min.bytes / fetch.max.wait.ms: the broker may park it (DelayedFetch)."""
        if self.leader == NO_LEADER:
            return
        current_leader_epoch = self.leader_epoch if self.rt.config.protocol.fenced else -1
        request = ConsumerFetchRequest(offset, current_leader_epoch, True, min_bytes, max_wait_ms)
        self.rt.network.send(self.node, self.leader, request)

    def receive(self, msg: Message) -> None:
        payload = msg.payload
        if isinstance(payload, ReplicaFetchResponse):
            self._on_replica_answer(msg, payload)
            return
        assert isinstance(payload, ConsumerFetchResponse), f"consumer got {type(payload).__name__}"
        if payload.error != NONE:
            self.refresh_metadata()
