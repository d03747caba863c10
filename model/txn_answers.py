"""The answers a healthy network owes between brokers of the exactly-once slice: each WriteTxnMarkers
request a coordinator sends and each KIP-890 verification a partition leader sends is answered, and
the answer handled by its sender, within request.timeout.ms while the network delivers.

Kafka's sources: the partition leader answers every WriteTxnMarkers request once its markers are
appended (KafkaApis.handleWriteTxnMarkersRequest: the response is sent when every partition's
append completed, with an error per partition), and the coordinator processes every answer
(TransactionMarkerRequestCompletionHandler.onComplete). The coordinator's inter-broker client
(TransactionMarkerChannelManager's NetworkClient) times a request out after request.timeout.ms
(30 s) and re-enqueues its markers: Kafka retries markers for ever and nothing times a Prepare*
transaction out, so "a marker is answered" holds only where the network delivers. Likewise the
leader's verification (AddPartitionsToTxnManager, an AddPartitionsToTxn request with verifyOnly,
answered by TransactionCoordinator.handleVerifyPartitionsInTransaction) is sent by an inter-broker
client with request.timeout.ms. Appends are atomic with their handler here (the slice abstracts
replication: docs/transactions.md), so an answer leaves as soon as its request is handled.

When the network is healthy is the harness's knowledge, not the events': the lockstep judge is told
each operation (conformance.runner.LockstepRun) and calls ``network`` with whether the operation
lets the network deliver. Only an Advance (the clock moves while every message stays in flight) and
a Drop (a message is lost) do not; every operation that moves the clock otherwise (Run, Quiesce)
delivers everything in flight before each timer fires, so on a healthy network an answer comes back
at the time its request was sent (Run: within its 100 ms step).

Guarantee of this module: ``late`` names a request only when it was sent while the network was
healthy, the network stayed healthy since (``network(False)`` forgets every request owed), its
answer has not been handled by its sender, and the clock has passed its send time +
request.timeout.ms. Without a ``network(True)`` call (corpora judged without their operations, hand
-built states) nothing is ever owed, so nothing is ever late.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.frozen_map import FrozenMap

REQUEST_TIMEOUT_MS = 30_000
"""request.timeout.ms, Kafka's default (CommonClientConfigs; the brokers' inter-broker clients use the
broker's request.timeout.ms): the coordinator's marker channel re-sends an unanswered marker after it."""

MARKER = "WriteTxnMarkers"
VERIFICATION = "verification"


@dataclass(frozen=True)
class Owed:
    """Request ``msg`` (a ``MARKER`` or a ``VERIFICATION``) that ``sender`` sent to ``dst`` at
    ``sent_ms`` on a healthy network, whose answer ``sender`` has not handled yet."""

    what: str
    sender: int
    dst: int
    sent_ms: int
    about: str
    """What it carries, for the message (transactional id and partition)."""


def owe(owed: FrozenMap[int, Owed], healthy: bool, msg: int, request: Owed) -> FrozenMap[int, Owed]:
    """``request`` (message ``msg``) was sent: owed an answer when the network is healthy."""
    return owed.set(msg, request) if healthy else owed


def paid(owed: FrozenMap[int, Owed], msg: int) -> FrozenMap[int, Owed]:
    """The sender handled an answer to ``msg`` (any answer: a duplicate or a stale one pays too)."""
    return owed.remove(msg) if msg in owed else owed


_FIRST_DUE: list[tuple[object, int | None]] = []
"""The last ``owed`` map ``first_due`` saw and its answer (one slot, replaced whole; the map is
held, so its id is not reused)."""


def first_due(owed: FrozenMap[int, Owed]) -> int | None:
    """The earliest send time + request.timeout.ms of the requests ``owed`` (None: none), computed
    once for the very same map in a row."""
    if _FIRST_DUE and _FIRST_DUE[0][0] is owed:
        return _FIRST_DUE[0][1]
    first = min((r.sent_ms + REQUEST_TIMEOUT_MS for r in owed.values()), default=None)
    _FIRST_DUE[:] = [(owed, first)]
    return first


def late(owed: FrozenMap[int, Owed], now_ms: int) -> tuple[str, ...]:
    """One message per request still owed on the clock ``now_ms`` past its send time +
    request.timeout.ms (none before the earliest)."""
    first = first_due(owed)
    if first is None or now_ms <= first:
        return ()
    return tuple(
        f"{r.what} request {msg} ({r.about}) that broker {r.sender} sent to broker {r.dst} at {r.sent_ms} ms "
        f"on a healthy network is unanswered at {now_ms} ms (request.timeout.ms {REQUEST_TIMEOUT_MS})"
        for msg, r in sorted(owed.items())
        if now_ms > r.sent_ms + REQUEST_TIMEOUT_MS
    )
