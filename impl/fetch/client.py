"""The fetch-session slice's client: a consumer's (or a follower's) fetcher with Kafka's
``FetchSessionHandler`` (``clients/.../FetchSessionHandler.java``), shaped like it: ``next_metadata``,
``session_partitions`` in insertion order, ``build``, ``handle_response``, ``handle_error``,
``notify_close``; and the Fetcher's rules around it: one request in flight (KAFKA-8052), data used
only for a partition whose position is still the request's fetch offset, OFFSET_OUT_OF_RANGE
resetting to the log start (auto.offset.reset=earliest), request.timeout.ms.

Guarantees: every handler run is reported as one event (FetchAssigned, SessionClosing,
SessionFetchSent, SessionFetchApplied); a timed-out request's late answer is ignored.
"""

from __future__ import annotations

from kconform.model.fetch_config import BROKER, FetchConfig, client_node
from kconform.traces.events import (
    FETCH_SESSION_ID_NOT_FOUND,
    NONE,
    OFFSET_OUT_OF_RANGE,
    FetchAssigned,
    SessionClosing,
    SessionFetchApplied,
    SessionFetchSent,
    TopicOffset,
)

from ..messages import Handlers, Message, handles
from ..runtime import World
from ..txn.clients import delivered_rids
from . import mutants as m
from .broker import PartitionLog, next_epoch
from .messages import PartitionAnswer, SessionFetchRequest, SessionFetchResponse

NO_REQUEST = -1


class FetchClient(Handlers):
    """One fetching client (node ``client_node(client)``)."""

    def __init__(self, client: int, world: World[FetchConfig], logs: dict[str, PartitionLog]) -> None:
        self.client = client
        self.node = client_node(client)
        self.world = world
        self.logs = logs
        """The broker's partitions, read only for ListOffsets(EARLIEST) (abstracted as immediate)."""
        self.session_id = 0
        self.epoch = 0
        self.session_partitions: dict[str, int] = {}
        self.assigned: list[str] = []
        self.positions: dict[str, int] = {}
        self.in_flight = NO_REQUEST
        self.in_flight_view: dict[str, int] = {}
        self.timer: int | None = None

    @property
    def read_committed(self) -> bool:
        return self.world.config.is_read_committed(self.client)

    def receive(self, msg: Message) -> None:
        self.dispatch(msg)

    # ------------------------------------------------------------------------- the consumer

    def assign(self, name: str, add: bool) -> None:
        if add == (name in self.assigned) or name not in self.logs:
            return
        if add:
            self.assigned.append(name)
            self.positions[name] = self.logs[name].log_start
        else:
            self.assigned.remove(name)
            del self.positions[name]
        self.world.events.emit(FetchAssigned(self.node, tuple(self.assigned)))

    def close(self) -> None:
        """The consumer closes (AbstractFetch.prepareCloseFetchSessionRequests): notifyClose and the
        close request (no partitions, epoch -1) at once; then a new consumer instance starts at the
        positions: a fresh handler, nothing in flight."""
        self.epoch = -1
        cfg = self.world.config
        request = SessionFetchRequest(self.session_id, self.epoch, (), (), cfg.privileged(self.client))
        msg_id = self.world.network.send(self.node, BROKER, request)
        self.world.events.emit(SessionClosing(self.node, msg_id, self.session_id))
        self.world.scheduler.cancel(self.timer)
        self.timer = None
        self.session_id, self.epoch = 0, 0
        self.session_partitions = {}
        self.in_flight = NO_REQUEST
        self.in_flight_view = {}

    def poll(self) -> None:
        """Build and send a fetch request unless one is in flight (KAFKA-8052's fix)."""
        if self.in_flight != NO_REQUEST and not self.world.mutant(m.FETCH_BEFORE_RESPONSE):
            return
        to_send, forgotten = self._build([(name, self.positions[name]) for name in self.assigned])
        cfg = self.world.config
        request = SessionFetchRequest(self.session_id, self.epoch, to_send, forgotten, cfg.privileged(self.client))
        msg_id = self.world.network.send(self.node, BROKER, request)
        self.in_flight = msg_id
        self.in_flight_view = dict(self.session_partitions)
        self.world.events.emit(
            SessionFetchSent(
                self.node,
                msg_id,
                self.session_id,
                self.epoch,
                tuple(TopicOffset(n, o) for n, o in to_send),
                forgotten,
            )
        )
        self.world.scheduler.cancel(self.timer)
        self.timer = self.world.scheduler.schedule(
            cfg.request_timeout_ms, self.node, "request-timeout", lambda: self._timed_out(msg_id)
        )

    def _build(self, wanted: list[tuple[str, int]]) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
        """FetchSessionHandler.Builder.build."""
        if self.epoch in (0, -1):
            self.session_partitions = dict(wanted)
            return tuple(wanted), ()
        nxt = dict(wanted)
        altered: list[tuple[str, int]] = []
        forgotten: list[str] = []
        for name, offset in list(self.session_partitions.items()):
            if name in nxt:
                new = nxt.pop(name)
                if new != offset:
                    self.session_partitions[name] = new
                    altered.append((name, new))
            else:
                del self.session_partitions[name]
                forgotten.append(name)
        added = [(name, offset) for name, offset in wanted if name in nxt]
        for name, offset in added:
            self.session_partitions[name] = offset
        if self.world.mutant(m.NO_FORGET):
            forgotten = []
        return (*added, *altered), tuple(forgotten)

    # ------------------------------------------------------------------------------ answers

    def _timed_out(self, msg_id: int) -> None:
        if self.in_flight != msg_id:
            return
        self.timer = None
        self.in_flight = NO_REQUEST
        self.epoch = 0  # handleError: close the session and try a new one
        self._report(msg_id, "timed-out", ())

    @handles(SessionFetchResponse)
    def on_response(self, msg: Message, resp: SessionFetchResponse) -> None:
        if resp.req != self.in_flight:
            self._report(resp.req, "ignored", ())
            return
        self.world.scheduler.cancel(self.timer)
        self.timer = None
        self.in_flight = NO_REQUEST
        if not self._handle_response(resp):
            self._report(resp.req, "error" if resp.error != NONE else "rejected", ())
            return
        rids: list[int] = []
        for data in resp.partitions:
            rids.extend(self._use(data))
        self._report(resp.req, "accepted", tuple(rids))

    def _handle_response(self, resp: SessionFetchResponse) -> bool:
        """FetchSessionHandler.handleResponse."""
        if resp.error != NONE:
            if self.world.mutant(m.NO_RESET_ON_SESSION_ERROR):
                return False
            if resp.error == FETCH_SESSION_ID_NOT_FOUND:
                self.session_id, self.epoch = 0, 0
            else:
                self.epoch = 0
            return False
        names = {d.name for d in resp.partitions}
        if self.epoch in (0, -1):
            if names != set(self.session_partitions):
                self.session_id, self.epoch = 0, 0
                return False
            if resp.session_id == 0:
                self.session_id, self.epoch = 0, 0
            else:
                self.session_id, self.epoch = resp.session_id, 1
            return True
        if not names <= set(self.session_partitions):
            self.epoch = 0
            return False
        if resp.session_id == 0:
            self.session_id, self.epoch = 0, 0
        else:
            self.epoch = next_epoch(self.epoch)
        return True

    def _use(self, data: PartitionAnswer) -> list[int]:
        """The Fetcher's use of one partition's data; the record ids the application gets."""
        fetch_offset = self.in_flight_view.get(data.name)
        if data.name not in self.positions or fetch_offset is None or self.positions[data.name] != fetch_offset:
            return []
        if data.error == OFFSET_OUT_OF_RANGE:
            self.positions[data.name] = self.logs[data.name].log_start
            return []
        if data.error != NONE or not data.records:
            return []
        rids = delivered_rids(data.records, data.aborted, self.read_committed)
        self.positions[data.name] = data.records[-1].offset + 1
        return rids

    def _report(self, msg_id: int, outcome: str, rids: tuple[int, ...]) -> None:
        positions = tuple(TopicOffset(n, self.positions[n]) for n in self.assigned)
        self.world.events.emit(
            SessionFetchApplied(self.node, msg_id, outcome, self.session_id, self.epoch, positions, rids)
        )
