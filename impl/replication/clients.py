"""The producer and the read_uncommitted consumer, each with a metadata cache.

Guarantees: a client sends to the leader it has cached (nothing when it knows none); the cache is
refreshed from the controller's current state at start, on every error response and every
CLIENT_METADATA_REFRESH_MS (metadata.max.age.ms, shortened for the simulation); the consumer
sends its cached leader epoch as currentLeaderEpoch from KIP-320 on.
"""

from __future__ import annotations

from kconform.traces.events import NO_LEADER, NONE

from ..messages import Message
from ..network import CONSUMER_NODE, PRODUCER_NODE
from .controller import Controller
from .messages import ConsumerFetchRequest, ConsumerFetchResponse, ProduceRequest, ProduceResponse
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
    """Sends read_uncommitted Fetch requests from a given offset."""

    def __init__(self, rt: Runtime, controller: Controller) -> None:
        super().__init__(CONSUMER_NODE, rt, controller)

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
        assert isinstance(payload, ConsumerFetchResponse), f"consumer got {type(payload).__name__}"
        if payload.error != NONE:
            self.refresh_metadata()
