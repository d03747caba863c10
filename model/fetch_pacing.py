"""The replica fetcher's pacing: how long a following replica may go without asking its leader.

Replication progress needs two things: every answer a follower applies is the right one (the
lockstep judge compares each Fetch and OffsetsForLeaderEpoch round trip with the model), and the
follower keeps asking. The second is a bound on the follower's own timers, which Kafka states:

- AbstractFetcherThread.doWork runs maybeTruncate then maybeFetch in a loop, so a partition added
  to the fetcher (ReplicaFetcherManager.addFetcherForPartitions, after makeFollower) is asked for
  at once, and after an answer without error the next request goes out at once;
- an answer with a partition error (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, an unhandled
  OFFSET_OUT_OF_RANGE, ...) delays the partition by ``fetchBackOffMs``
  (handlePartitionsWithErrors → delayPartitions), which ReplicaFetcherThread sets to
  ``replica.fetch.backoff.ms``;
- a request that finds no answer: BrokerBlockingSender's NetworkClient is built with
  ``request.timeout.ms`` (brokerConfig.requestTimeoutMs); the timed-out request disconnects,
  NetworkClientUtils.sendAndReceive throws, and processFetchRequest (or fetchEpochEndOffsets)
  treats every partition as failed: the same ``fetchBackOffMs`` delay.

So a running, registered follower whose fetcher follows a leader sends its next Fetch or
OffsetsForLeaderEpoch (i) at once when its fetcher starts, (ii) at once after applying an answer to
its latest request that appended records or truncated its log (or one the leader waited for), and
within replica.fetch.backoff.ms of any other answer but FENCED_LEADER_EPOCH (after which Kafka
awaits the new leader's metadata: nothing is due until the fetcher starts again), (iii) within request.timeout.ms +
replica.fetch.backoff.ms of sending a request that found no answer. Sending earlier stays
permitted: with replica.fetch.wait.max.ms 0, Kafka fetches again at once after an empty answer; the
reference pauses replica.fetch.backoff.ms there, as if the leader had waited, within the bound.

What is demanded is only the follower's own act, never a delivery: the network (driven by the
test, not by the implementation) may lose, hold back or duplicate every message, and the bound
tightens from (iii) to (ii) only when an answer was actually delivered and applied. Together with
the lockstep judging of every answer, this is replication progress conditioned on delivery: each
round trip the network completes brings the follower to the leader's log end as of the leader's
read, and the follower never stops starting round trips.

The lower side is Kafka's as well: after an answer with an error the partition is not fetchable
for replica.fetch.backoff.ms (delayPartitions) unless new metadata restarts the fetcher; ``sent``
records a request sent sooner (FollowerBacksOff). Only errors carry it: Kafka fetches again at once
after an ignored or out-of-range answer, and the reference resends at once after a timeout.

Guarantee of this module: ``stalled`` names a follower only when the model's state says its
fetcher follows a leader (alive, registered, fetch state fetching or truncating, a leader other
than itself) and the deadline of its latest obligation (start, answer or send, recorded by
``started`` / ``answered`` / ``sent``) has passed. Judge bookkeeping only (``State.tracks_fetchers``:
the lockstep judge, which sees a ClockAdvanced event at every time a timer fires); the model
searches send requests as atomic actions of their own choosing and do not track it.
"""

from __future__ import annotations

from kconform.model.config import ReplicationConfig
from kconform.model.evolve import evolve
from kconform.model.state import IDLE, NO_REQUEST, FetcherClock, State
from kconform.model.timer_bounds import NEVER


def _with(s: State, node: int, clock: FetcherClock) -> State:
    clocks = s.fetchers or tuple(FetcherClock() for _ in s.replicas)
    return evolve(s, fetchers=(*clocks[:node], clock, *clocks[node + 1 :]))


def started(s: State, node: int) -> State:
    """``node`` began following a leader (MetadataApplied become_follower with a leader): its
    fetcher asks at once (AbstractFetcherThread.addPartitions; the next doWork)."""
    if not s.tracks_fetchers:
        return s
    return _with(s, node, FetcherClock(s.now_ms))


def sent(s: State, cfg: ReplicationConfig, node: int, msg: int) -> State:
    """``node`` sent request ``msg`` (FetchSent, EpochQuerySent): without an answer, the next one is
    due after request.timeout.ms (NetworkClient's timeout) + replica.fetch.backoff.ms. A request sent
    before the backoff after an error answer ran out is recorded (``Ghost.hasty_fetches``)."""
    if not s.tracks_fetchers:
        return s
    if s.fetchers:
        before = s.fetchers[node].not_before_ms
        if before is not None and s.now_ms < before:
            hasty = (
                f"broker {node} sent request {msg} at {s.now_ms} ms, before {before} ms: within "
                f"replica.fetch.backoff.ms {cfg.replica_fetch_backoff_ms} of an answer with an error to request "
                f"{s.fetchers[node].latest}"
            )
            s = evolve(s, ghost=evolve(s.ghost, hasty_fetches=(*s.ghost.hasty_fetches, hasty)))
    return _with(s, node, FetcherClock(s.now_ms + cfg.request_timeout_ms + cfg.replica_fetch_backoff_ms, msg))


def after_fetch(cfg: ReplicationConfig, outcome: str, truncated_to: int, appended: int, fenced: bool) -> int | None:
    """How long a follower may wait after applying a Fetch answer (FetchApplied's outcome; ``fenced``:
    the answer was FENCED_LEADER_EPOCH), None: until new metadata restarts its fetcher. Not at all
    after records appended or a truncation (AbstractFetcherThread.doWork loops at once after an
    answer without error; truncateOnFetchResponse and handleOutOfRangeError move the fetch offset
    without delay), nor after an answer the leader waited for (replica.fetch.wait.max.ms > 0:
    ReplicaManager.fetchMessages parked it). After FENCED_LEADER_EPOCH Kafka marks the partition
    failed and awaits the new leader's metadata (onPartitionFenced: "Will await the new LeaderAndIsr
    state before resuming fetching"), so nothing is demanded until the fetcher starts again.
    replica.fetch.backoff.ms after any other error (handlePartitionsWithErrors → delayPartitions),
    an answer it ignored, and an empty one the leader did not wait for (with replica.fetch.wait.max.ms
    0 the reference's pause stands in for the leader's wait)."""
    if appended > 0 or truncated_to != -1:
        return 0
    if outcome == "appended" and cfg.replica_fetch_wait_max_ms > 0:
        return 0
    if outcome == "error" and fenced:
        return None
    return cfg.replica_fetch_backoff_ms


def after_epoch_answer(cfg: ReplicationConfig, outcome: str, fenced: bool) -> int | None:
    """How long a follower may wait after applying an OffsetsForLeaderEpoch answer: not at all after a
    truncation (maybeTruncateToEpochEndOffsets → updateFetchOffsetAndMaybeMarkTruncationComplete; the
    next doWork fetches, or asks again for a ``retry``); after FENCED_LEADER_EPOCH nothing until new
    metadata (onPartitionFenced, as for a Fetch); replica.fetch.backoff.ms after another error or an
    answer it ignored (handlePartitionsWithErrors)."""
    if outcome in ("truncated", "retry"):
        return 0
    if outcome == "error" and fenced:
        return None
    return cfg.replica_fetch_backoff_ms


def backoff_after(cfg: ReplicationConfig, outcome: str) -> int | None:
    """The least pause after applying an answer (FetchApplied's or EpochQueryApplied's outcome):
    replica.fetch.backoff.ms after an error (handlePartitionsWithErrors → delayPartitions: the
    partition is not fetchable until the delay passes; after FENCED_LEADER_EPOCH not until new
    metadata, of which the backoff is the part the reference keeps); None after any other answer
    (Kafka fetches again at once)."""
    return cfg.replica_fetch_backoff_ms if outcome == "error" else None


def answered(s: State, node: int, msg: int, pause_ms: int | None, backoff_ms: int | None = None) -> State:
    """``node`` applied an answer to request ``msg`` (FetchApplied, EpochQueryApplied): when ``msg`` is
    its latest request and no answer to it was applied before, the next request is due within
    ``pause_ms`` (``after_fetch``, ``after_epoch_answer``; None: nothing is due until the fetcher
    starts again or sends) and, with ``backoff_ms`` (``backoff_after``), no request is sent before
    that pause. An answer to an older request, or a second copy, demands nothing and lifts that
    lower bound."""
    if not s.tracks_fetchers or not s.fetchers:
        return s
    clock = s.fetchers[node]
    if clock.latest != msg or clock.answered:
        # A second answer (the network duplicated the request) or a late one (after a timeout) is
        # the simulated network's doing: Kafka reads one response per request on one connection.
        # The follower may act on it at once, so it lifts the lower bound; it demands nothing.
        return s if clock.not_before_ms is None else _with(s, node, evolve(clock, not_before_ms=None))
    due = None if pause_ms is None else s.now_ms + pause_ms
    not_before = None if backoff_ms is None else s.now_ms + backoff_ms
    return _with(s, node, FetcherClock(due, msg, True, not_before))


def follows(s: State, node: int) -> bool:
    """Whether ``node``'s fetcher follows a leader in the model's state: running, registered, a
    leader other than itself, fetching or truncating (the state in which it sends)."""
    r = s.replicas[node]
    return r.alive and r.registered and r.fetch_state != IDLE and 0 <= r.leader != node


def _since(clock: FetcherClock, cfg: ReplicationConfig) -> str:
    """What started the overdue obligation ``clock``."""
    if clock.latest == NO_REQUEST:
        return "its fetcher started"
    if clock.answered:
        return f"it applied the answer to request {clock.latest}"
    return (
        f"request {clock.latest} found no answer (request.timeout.ms {cfg.request_timeout_ms} "
        f"+ replica.fetch.backoff.ms {cfg.replica_fetch_backoff_ms})"
    )


def quiet_until(s: State) -> int:
    """The latest time up to which ``stalled`` is empty on ``s`` with its clock moved there
    (timer_bounds.NEVER: at every time): the earliest due time of a following replica."""
    return min((c.due_ms for b, c in enumerate(s.fetchers) if c.due_ms is not None and follows(s, b)), default=NEVER)


def stalled(s: State, cfg: ReplicationConfig) -> tuple[str, ...]:
    """One message per following replica whose next request is overdue on ``s``'s clock."""
    return tuple(
        f"broker {b} follows leader {s.replicas[b].leader} ({s.replicas[b].fetch_state}) but sent no request "
        f"by {clock.due_ms} ms, after {_since(clock, cfg)} (now {s.now_ms} ms)"
        for b, clock in enumerate(s.fetchers)
        if clock.due_ms is not None and s.now_ms > clock.due_ms and follows(s, b)
    )
