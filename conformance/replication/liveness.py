"""Replication progress conditioned on delivery: what a healthy network owes a run, judged after each
operation (gate power: the last hand-planted bugs in which no safety invariant breaks and only
progress stops).

Two promises of Kafka, each demanded only while the network delivers:

- **RequestAnswered**: a follower's Fetch or OffsetsForLeaderEpoch, or the follower-fetching
  consumer's Fetch (KIP-392), sent to a running broker is answered, and the answer reaches its
  sender. KafkaApis answers every request; ReplicaManager.fetchMessages answers a Fetch at once
  unless it may wait (maxWaitMs > 0, too few bytes), and then the DelayedFetch in the fetch
  purgatory (tryCompleteElseWatch) completes at the latest when it expires after maxWaitMs
  (replica.fetch.wait.max.ms for a follower, fetch.max.wait.ms for a consumer); a throttled
  follower gets an empty answer (ReplicaManager.readFromLog, shouldLeaderThrottle), never none.
  Bound: the longer of the two waits + ``DELIVERY_SLACK_MS`` of healthy time after the send. What
  the judge sees of the answer is its sender applying it (FetchApplied, EpochQueryApplied,
  ReplicaFetchApplied: the reference's fetcher reports every answer it gets, an ignored one
  included; the consumer reports the answer to its pending Fetch).
- **FollowerStartsFetching**: a running, registered broker that the controller's record makes a
  follower of a running, unfenced leader L in leader epoch E sends L a Fetch or an
  OffsetsForLeaderEpoch in epoch E. ReplicaManager.applyDelta → applyLocalFollowersDelta (makeFollowers
  before KRaft) → ReplicaFetcherManager.addFetcherForPartitions, and AbstractFetcherThread.doWork
  fetches the added partition at once (maybeTruncate, then maybeFetch); only a leader absent from
  the metadata image is not fetched from ("Unable to start fetching ... because it is not alive").
  Bound: ``METADATA_BOUND_MS`` of healthy time after the record changed (or the broker registered).
  Once the fetcher runs, model.fetch_pacing's FollowerKeepsFetching bounds its next requests.

When the network is healthy is the harness's knowledge, not the events' (as model.txn_answers for
the exactly-once slice): the judge is told each operation. Time counts only inside a Run with no
cut in place (the network delivers everything in flight before each clock step); an Advance holds
every message while the clock moves, so its time never counts, and Settle, Deliver, DeliverTo and
Duplicate move no time. What is owed is forgotten (never reported) on:

- an operation that may lose a message or change who leads: Crash, Restart, Isolate, Drop,
  MoveLeader (and any operation this module does not know);
- any change of the controller's leader or leader epoch (elections by fencing, unfencing, a
  leader move), and an event saying a broker crashed or restarted;
- for RequestAnswered: its sender or receiver applying new leadership (MetadataApplied
  become_leader / become_follower) or being fenced, and a newer request of the same sender (the
  consumer and the fetcher give a request up after request.timeout.ms, and the answer to a given-up
  request may be dropped: NetworkClient);
- for FollowerStartsFetching: the broker fenced.

Nothing is owed when it would be opened with a cut in place, or with an endpoint down (or, for
FollowerStartsFetching, unregistered or fenced), or for a broker that is the leader itself.
Windows left unchecked on purpose: time under Advance (delays the network injects), anything
across a crash, restart, isolation, drop or leader change. The replication slice has no fetch
sessions (the fetch slice judges those) and no quotas.

Guarantee of this module: ``Progress.late`` reports an obligation only when, since it was opened,
none of the above happened and more than its bound of healthy time (Run time with no cut) passed
without its discharge; without operations (events judged alone: corpora, hand-built lists) no time
is ever healthy and nothing is ever reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.config import ReplicationConfig
from kconform.model.state import State
from kconform.traces import operations as o

DELIVERY_SLACK_MS = 2_000
"""Healthy time an answer may take beyond the purgatory's wait: the request's and the answer's
delivery and the handling around them. The reference delivers within its 100 ms Run step
(impl.simulation.RUN_STEP_MS) each way; a real broker on loopback within milliseconds. Twice the
model's FENCE_SLACK_MS (a periodic check a second late), so that a loaded machine's pauses stay
inside it."""

METADATA_BOUND_MS = 10_000
"""Healthy time within which a broker made a follower sends its leader a first request. Kafka
states no bound on metadata propagation (KRaft brokers fetch the metadata log continuously; a
fetch waits at most 500 ms); once applied, the fetcher asks at once. Chosen where Kafka is
silent: broker.session.timeout.ms (9 s) + the model's fencing slack (1 s), the time in which the
controller itself gives up on a broker it does not hear from. The reference applies a record at
the next delivery and republishes it every second."""

BENIGN = (
    o.Boot,
    o.Run,
    o.Advance,
    o.Settle,
    o.Deliver,
    o.DeliverTo,
    o.Duplicate,
    o.Heal,
    o.Produce,
    o.Consume,
    o.ConsumeWait,
    o.ConsumeReplica,
    o.RogueFetch,
    o.DeleteRecordsAt,
    o.Retention,
)
"""Operations that neither lose a message nor change who leads: owed requests survive them (any
other operation forgets every one)."""

CONSUMER = -3
"""The follower-fetching consumer as a sender (impl.network.CONSUMER_NODE)."""


@dataclass(slots=True)
class Owed:
    """Something owed since ``opened_ms``: an answer to request ``msg`` of ``sender`` to ``dst``
    (RequestAnswered) or broker ``sender``'s first request to leader ``dst`` in epoch ``epoch``
    (FollowerStartsFetching); ``healthy_ms`` of healthy time counted so far."""

    what: str
    sender: int
    dst: int
    opened_ms: int
    epoch: int = -1
    healthy_ms: int = 0


class Progress:
    """The obligations of one run and the healthy time each has seen (see the module docstring)."""

    def __init__(self, cfg: ReplicationConfig) -> None:
        self.answer_bound_ms = max(cfg.replica_fetch_wait_max_ms, cfg.fetch_max_wait_ms) + DELIVERY_SLACK_MS
        self.follow_bound_ms = METADATA_BOUND_MS
        self.answers: dict[int, Owed] = {}
        """Requests owed an answer, by message id."""
        self.follows: dict[int, Owed] = {}
        """Brokers owed a first request to their leader, by broker id."""
        self.cut = False
        """An Isolate not healed yet: nothing is owed while a cut may lose messages."""
        self._run_from_ms: int | None = None
        """The clock at the start of the current operation when it is a Run with no cut."""
        self._leader = (-1, -1)
        """The controller's (leader, leader epoch) last seen."""

    # ------------------------------------------------------------------------------ operations

    def operation(self, op: o.Operation, now_ms: int) -> None:
        """Before the events of ``op``: forget everything unless it is benign; note a cut or a heal
        and whether its time is healthy."""
        if not isinstance(op, BENIGN):
            self.answers.clear()
            self.follows.clear()
        if isinstance(op, o.Isolate):
            self.cut = True
        elif isinstance(op, o.Heal):
            self.cut = False
        self._run_from_ms = now_ms if isinstance(op, o.Run) and not self.cut else None

    def late(self, now_ms: int) -> list[tuple[str, str]]:
        """After the events of an operation: count its healthy time and report (then forget) every
        obligation past its bound."""
        start = self._run_from_ms
        self._run_from_ms = None
        if start is None or not (self.answers or self.follows):
            return []
        out: list[tuple[str, str]] = []
        for owed, bound, answer in (
            (self.answers, self.answer_bound_ms, True),
            (self.follows, self.follow_bound_ms, False),
        ):
            for key, item in list(owed.items()):
                item.healthy_ms += now_ms - max(start, item.opened_ms)
                if item.healthy_ms > bound:
                    del owed[key]
                    out.append(_message(key, item, bound, now_ms, answer))
        return out

    # ---------------------------------------------------------------------------------- events

    def void(self) -> None:
        """A broker crashed or restarted: forget everything owed."""
        self.answers.clear()
        self.follows.clear()

    def request_sent(self, s: State, what: str, msg: int, sender: int, dst: int, epoch: int) -> None:
        """``sender`` sent request ``msg`` to ``dst`` (a follower in leader epoch ``epoch``; the
        consumer with -1): it supersedes the sender's earlier ones, discharges a follower's first
        request in that epoch, and is owed an answer when both ends run and no cut is in place."""
        answers = self.answers
        if answers:
            for key in [k for k, a in answers.items() if a.sender == sender]:
                del answers[key]
        follows = self.follows
        if follows:
            follow = follows.get(sender)
            if follow is not None and follow.dst == dst and follow.epoch == epoch:
                del follows[sender]
        if self.cut or sender == dst or not _running(s, dst) or (sender != CONSUMER and not _running(s, sender)):
            return
        answers[msg] = Owed(what, sender, dst, s.now_ms, epoch)

    def answered(self, msg: int) -> None:
        """The sender applied an answer to ``msg``."""
        self.answers.pop(msg, None)

    def leadership_applied(self, node: int) -> None:
        """``node`` became leader or follower: requests to or from it are no longer owed answers."""
        if not self.answers:
            return
        for key in [k for k, a in self.answers.items() if node in (a.sender, a.dst)]:
            del self.answers[key]

    def controller_changed(self, s: State, fenced: int | None = None, unfenced: int | None = None) -> None:
        """A controller event left record ``s.controller``: a new leader or leader epoch forgets
        everything and makes every running, registered, unfenced broker but the leader owe it a
        first request; ``fenced`` no longer owes or is owed anything; ``unfenced`` (registered now)
        owes one when its view is older than the record's epoch."""
        rec = s.controller
        if fenced is not None:
            self.follows.pop(fenced, None)
            self.leadership_applied(fenced)
        if (rec.leader, rec.leader_epoch) != self._leader:
            self._leader = (rec.leader, rec.leader_epoch)
            self.void()
            for b in range(len(s.replicas)):
                self._owe_follow(s, b)
        elif unfenced is not None:
            self._owe_follow(s, unfenced)

    def _owe_follow(self, s: State, b: int) -> None:
        rec = s.controller
        leader = rec.leader
        if self.cut or b == leader or not 0 <= leader < len(s.replicas) or leader in s.fenced or b in s.fenced:
            return
        r = s.replicas[b]
        if not (r.alive and r.registered and s.replicas[leader].alive) or r.leader_epoch >= rec.leader_epoch:
            return
        self.follows[b] = Owed("first request", b, leader, s.now_ms, rec.leader_epoch)


def _running(s: State, b: int) -> bool:
    return 0 <= b < len(s.replicas) and s.replicas[b].alive


def _message(key: int, item: Owed, bound_ms: int, now_ms: int, answer: bool) -> tuple[str, str]:
    """(name, message) of an obligation past its bound."""
    who = "the follower-fetching consumer" if item.sender == CONSUMER else f"broker {item.sender}"
    if answer:
        return "RequestAnswered", (
            f"{item.what} {key} that {who} sent to running broker {item.dst} at "
            f"{item.opened_ms} ms has no answer applied at {now_ms} ms after {item.healthy_ms} ms of healthy "
            f"network (bound {bound_ms} ms: the longest fetch wait + {DELIVERY_SLACK_MS} ms; "
            "KafkaApis answers every request, DelayedFetch at the latest when maxWaitMs expires)"
        )
    return "FollowerStartsFetching", (
        f"broker {item.sender}, running and registered, made a follower of running "
        f"broker {item.dst} in leader epoch {item.epoch} at {item.opened_ms} ms, sent it no Fetch or "
        f"OffsetsForLeaderEpoch in that epoch by {now_ms} ms after {item.healthy_ms} ms of healthy network "
        f"(bound {bound_ms} ms; ReplicaManager.applyDelta → ReplicaFetcherManager.addFetcherForPartitions, "
        "AbstractFetcherThread fetches at once)"
    )


__all__ = ["BENIGN", "DELIVERY_SLACK_MS", "METADATA_BOUND_MS", "Owed", "Progress"]
