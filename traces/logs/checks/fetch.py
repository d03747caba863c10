"""Checks on what clients saw of Fetch: the offsets in every answer and the fetch session protocol.

Sources: KIP-98 (LSO <= HW; aborted transactions returned to read_committed fetches are those
below the fetch's upper bound, itself at most the LSO: UnifiedLog.collectAbortedTransactions,
TransactionIndex.collectAbortedTxns), KIP-227 (fetch sessions: FetchSessionHandler, FetchMetadata:
epoch 0 creates or resets a session, each answered request moves the epoch by one, an error
makes the client start again at epoch 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.traces.logs.checks.base import Check
from kconform.traces.logs.observations import FETCH_REQUEST, FETCH_RESPONSE, FETCH_SESSION, Obs

FINAL_EPOCH = -1
INITIAL_EPOCH = 0
MAX_EPOCH = (1 << 31) - 1
MAX_PENDING_REQUESTS = 100_000
"""FetchMetadata.nextEpoch wraps from Integer.MAX_VALUE to 1."""


class FetchAnswerOffsets(Check):
    """Every partition in a Fetch answer has LSO <= HW and log start <= HW (KIP-98: the LSO is
    bounded by the high watermark; the log start offset never passes it)."""

    name = "fetch-answer-lso-le-hw"
    guarantee = "LSO <= HW and logStartOffset <= HW in every fetch answer"
    cite = "KIP-98; kafka.cluster.Partition.fetchOffsetSnapshot, FetchResponse PartitionData"
    kinds = frozenset({FETCH_RESPONSE})

    def observe(self, obs: Obs) -> None:
        if obs.hw is None or obs.hw < 0 or (obs.partition_error or 0) != 0:
            return
        if obs.lso is not None and obs.lso >= 0:
            self.judged += 1
            if obs.lso > obs.hw:
                self.flag(
                    f"{obs.partition}: last stable offset {obs.lso} above high watermark {obs.hw}", [obs], obs.partition
                )
        if obs.log_start is not None and obs.log_start >= 0:
            self.judged += 1
            if obs.log_start > obs.hw:
                self.flag(
                    f"{obs.partition}: log start offset {obs.log_start} above high watermark {obs.hw}",
                    [obs],
                    obs.partition,
                )


class AbortedTransactionsBelowLso(Check):
    """A read_committed Fetch answer lists only aborted transactions that start below its LSO: the
    broker collects the aborted transactions overlapping the fetched range, whose upper bound is at
    most the LSO (UnifiedLog.collectAbortedTransactions, TransactionIndex.collectAbortedTxns)."""

    name = "read-committed-aborted-below-lso"
    guarantee = "aborted transactions listed in a read_committed answer start below its LSO"
    cite = "KIP-98; kafka.log.UnifiedLog.collectAbortedTransactions, TransactionIndex.collectAbortedTxns"
    kinds = frozenset({FETCH_RESPONSE})

    def observe(self, obs: Obs) -> None:
        if not obs.aborted or obs.lso is None or obs.lso < 0:
            return
        for entry in obs.aborted.split(";"):
            pid, _, first = entry.partition(":")
            self.judged += 1
            if int(first) >= obs.lso:
                self.flag(
                    f"{obs.partition}: aborted transaction of producer {pid} starting at {first} listed in an answer "
                    f"whose LSO is {obs.lso}",
                    [obs],
                    obs.partition,
                )


@dataclass
class _Sent:
    obs: Obs
    outcome: str  # "pending", "ok", "error"
    answered_session: int | None = None


class FetchSessionEpochs(Check):
    """Within a fetch session a client's request epochs advance by one per answered request, and
    restart (epoch 0, or a new session) after an error (KIP-227, FetchSessionHandler): after a
    full request (epoch 0) answered with session S the next request is (S, 1); after an answered
    incremental request (S, e) it is (S, e + 1); after an error it may not continue the session.
    Epoch 0 (new or reset session) and -1 (sessionless / close) may be sent at any time. Judged per
    client and node in the client's own line order; a request whose answer is not in the log only
    allows the next epoch or a restart."""

    name = "fetch-session-epochs"
    guarantee = "fetch session epochs advance by one per request within a session and restart after errors"
    cite = "KIP-227; org.apache.kafka.clients.FetchSessionHandler, FetchMetadata.nextIncremental / nextCloseExisting"
    kinds = frozenset({FETCH_REQUEST, FETCH_RESPONSE, FETCH_SESSION})

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[tuple[str, str, int | None], _Sent] = self.table()
        self._by_corr: dict[tuple[str, int], tuple[str, str, int | None]] = {}
        """Requests awaiting their answer line; emptied at MAX_PENDING_REQUESTS (logs that print requests
        but not answers, 1.1-2.x at DEBUG, would fill it: the answers of requests then forgotten are
        not matched, which only leaves their next epoch unjudged)."""
        self._seen_req = ""

    def observe(self, obs: Obs) -> None:
        client = obs.client or "?"
        if obs.kind == FETCH_REQUEST:
            if obs.session_epoch is None or obs.session_id is None:
                return
            tag = f"{obs.stream}|{obs.line}"
            if tag == self._seen_req:
                return  # the same request's other partitions
            self._seen_req = tag
            self._request(("req", obs.file + "#" + client, obs.node), obs)
            if obs.correlation is not None:
                self._by_corr[(obs.file + "#" + client, obs.correlation)] = ("req", obs.file + "#" + client, obs.node)
                if len(self._by_corr) > MAX_PENDING_REQUESTS:
                    self._by_corr.clear()
            return
        if obs.kind == FETCH_RESPONSE:
            if obs.correlation is None:
                return
            key = self._by_corr.pop((obs.file + "#" + client, obs.correlation), None)
            if key is None:
                return
            sent = self._last.get(key)
            if sent is not None and sent.obs.correlation == obs.correlation:
                sent.outcome = "error" if (obs.error or 0) != 0 else "ok"
                sent.answered_session = obs.session_id
            return
        # FetchSessionHandler lines
        key = ("built", obs.file + "#" + client, obs.node)
        if obs.state == "built":
            if obs.session_id is not None and obs.session_epoch is not None:
                self._request(key, obs)
            return
        for k in (key, ("req", obs.file + "#" + client, obs.node)):
            sent = self._last.get(k)
            if sent is None:
                continue
            if obs.state == "error":
                sent.outcome = "error"
            elif obs.state == "created":
                sent.outcome, sent.answered_session = "ok", obs.session_id
            elif obs.state == "closed":
                sent.outcome, sent.answered_session = "ok", 0

    def _request(self, key: tuple[str, str, int | None], obs: Obs) -> None:
        assert obs.session_id is not None and obs.session_epoch is not None
        prev = self._last.get(key)
        self._last[key] = _Sent(obs, "pending")
        epoch, session = obs.session_epoch, obs.session_id
        if prev is None or epoch in (INITIAL_EPOCH, FINAL_EPOCH) or session == 0:
            return
        p = prev.obs
        assert p.session_epoch is not None and p.session_id is not None
        self.judged += 1
        if prev.outcome == "error":
            self.flag(
                f"client {obs.client} continued session {session} at epoch {epoch} to node {obs.node} after an "
                "error (it must restart at epoch 0)",
                [obs, p],
            )
            return
        if p.session_epoch == INITIAL_EPOCH:
            expected_session = prev.answered_session if prev.answered_session else p.session_id
            if prev.outcome == "ok" and prev.answered_session == 0:
                self.flag(
                    f"client {obs.client} sent epoch {epoch} of session {session} but no session was created",
                    [obs, p],
                )
                return
            if epoch != 1 or (expected_session and session != expected_session):
                self.flag(
                    f"client {obs.client}: after a full fetch the next request to node {obs.node} must be epoch 1 of "
                    f"session {expected_session}, got session {session} epoch {epoch}",
                    [obs, p],
                )
            return
        if p.session_epoch == FINAL_EPOCH or p.session_id == 0:
            self.flag(
                f"client {obs.client} sent epoch {epoch} of session {session} without creating a session first",
                [obs, p],
            )
            return
        expected = 1 if p.session_epoch == MAX_EPOCH else p.session_epoch + 1
        if session != p.session_id or epoch != expected:
            self.flag(
                f"client {obs.client}: session {session} epoch {epoch} to node {obs.node} follows session "
                f"{p.session_id} epoch {p.session_epoch} (expected epoch {expected} of session {p.session_id})",
                [obs, p],
            )
