"""The fetch-session slice's stream invariants (traces.mine.invariants merges every slice's; the
module docstring there says what each query yields). They need no view: each reads the events
of one client (``node``) in trace order.

Two of the slice's handler rules are stream properties of the client's own events and are mined;
the others (which partitions a request sends or forgets, what an answer carries, which session is
evicted) need the session's state, which the lockstep oracle (traces.oracle) rebuilds, so they are
checked there only.
"""

from __future__ import annotations

from kconform.traces.mine.sql import MinedInvariant

SLICE = "fetch"
"""The slice (model.configs.slice_of) whose traces these invariants judge."""

INVARIANTS: list[MinedInvariant] = []
"""The slice's invariants, in the order the miner runs them."""
_register = INVARIANTS.append

_register(
    MinedInvariant(
        "OneFetchInFlight",
        "A client sends its next fetch request to a broker only after it handled the answer to the previous "
        "one (or gave up on it: request.timeout.ms), or closed: two requests in flight would carry the same "
        "session epoch and the second is answered INVALID_FETCH_SESSION_EPOCH.",
        "KAFKA-8052 (apache/kafka#6582, 2.3): Fetcher's nodesWithPendingFetchRequests; KIP-227",
        "handler rule session_fetch_sent (model.fetch_state.send: one request in flight)",
        """
        SELECT 'OneFetchInFlight' AS invariant, trace, pos, prev_pos AS wpos,
          concat('client ', {STR(node)}, ' sent request ', {STR(msg)}, ' while its request ', {STR(prev_msg)},
                 ' was in flight') AS detail
        FROM (
          SELECT trace, pos, node, kind, msg,
            LAG(kind) OVER w AS prev_kind, LAG(pos) OVER w AS prev_pos, LAG(msg) OVER w AS prev_msg
          FROM ev
          WHERE kind IN ('session_fetch_sent', 'session_closing')
            OR (kind = 'session_fetch_applied' AND outcome <> 'ignored')
          WINDOW w AS (PARTITION BY trace, node ORDER BY pos)
        ) WHERE kind = 'session_fetch_sent' AND prev_kind = 'session_fetch_sent'""",
    )
)

_register(
    MinedInvariant(
        "FullRequestAfterSessionError",
        "After a top-level fetch error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH) or a request "
        "that timed out, the client's next request is a full one (epoch 0): it never repeats the failing "
        "session epoch.",
        "KIP-227; FetchSessionHandler.handleResponse and handleError; redpanda-data/redpanda#27749",
        "handler rule session_fetch_applied (model.fetch_client.handle_response / handle_error)",
        """
        SELECT 'FullRequestAfterSessionError' AS invariant, trace, pos, CAST(NULL AS BIGINT) AS wpos,
          concat('client ', {STR(node)}, ' keeps epoch ', {STR(epoch)}, ' of session ', {STR(session_id)},
                 ' after request ', {STR(msg)}, ' ended ', outcome) AS detail
        FROM ev WHERE kind = 'session_fetch_applied' AND outcome IN ('error', 'timed-out') AND epoch <> 0""",
    )
)


def views(dialect: str, given: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """The slice has no views (``given``: views the engine provides; none of this slice's)."""
    del dialect, given
    return []
