"""The fetch-session slice's stream invariants (traces.mine.invariants merges every slice's; the
module docstring there says what each query yields). They need no view: each reads the events
of one client (``node``) in trace order.

Two of the slice's handler rules are stream properties of the client's own events and are mined
(OneFetchInFlight, FullRequestAfterSessionError). A third, IncrementalAnswerCarriesChanges, is a
property of one broker session's answers against the partitions' HW and log start events: the views
below rebuild, per session, which partitions it holds (those some answer of this incarnation carried
or some request added, and no request forgot since) and the HW and log start it last told the client;
an incremental answer that leaves out a partition whose HW or log start moved since then, or that the
broker no longer leads (an error is always answered), lost the update.
The other rules (which partitions a request sends or forgets, the answer's round-robin order, which
session is evicted) need the whole session state the lockstep oracle (traces.oracle) rebuilds, so they
are checked there only (docs/traces.md).

Views, in creation order (``views``): ``fs_told`` (one row per partition of an answer within a
session: what it told), ``fs_request`` (one row per partition an incremental request sent or forgot, at the
position of its answer), ``fs_incr`` (incremental answers with the position of their session's
latest creation), ``fs_member`` (per incremental answer, each partition of the session it leaves out,
with the HW and log start last told).
"""

from __future__ import annotations

from kconform.traces.mine.sql import MinedInvariant, expand

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


_register(
    MinedInvariant(
        "IncrementalAnswerCarriesChanges",
        "An incremental fetch answer leaves out a partition of its session only if the broker still leads "
        "it and its high watermark and log start offset are those the session last answered: a moved HW or "
        "log start, and NOT_LEADER_OR_FOLLOWER, are always carried, so the client never keeps a stale view.",
        "KIP-227; FetchSession.scala CachedPartition.maybeUpdateResponseData (and the size pass's "
        "non-updating PartitionIterator); redpanda-data/redpanda#29304 (CORE-14617)",
        "model invariant NoUpdateLost (its HW and log start part); handler rule session_fetch_handled",
        """
        SELECT 'IncrementalAnswerCarriesChanges' AS invariant, trace, pos, member_pos AS wpos,
          concat('incremental answer of session ', {STR(session_id)}, ' leaves out ', p,
                 CASE WHEN cur_leads THEN '' ELSE ' (not led: NOT_LEADER_OR_FOLLOWER)' END, ': HW ', {STR(cur_hw)},
                 ' and log start ', {STR(cur_ls)}, ', last told ', {STR(told_hw)}, ' and ', {STR(told_ls)}) AS detail
        FROM (
          SELECT *,
            COALESCE({LAST(hw_set)} OVER w, 0) AS cur_hw,
            COALESCE({LAST(ls_set)} OVER w, 0) AS cur_ls,
            COALESCE({LAST(leads_set)} OVER w, true) AS cur_leads
          FROM (
            SELECT trace, pos, node, partition_ AS p, 0 AS ord, hw AS hw_set, CAST(NULL AS BIGINT) AS ls_set,
              CAST(NULL AS BOOLEAN) AS leads_set, false AS probe, CAST(NULL AS BIGINT) AS session_id,
              CAST(NULL AS BIGINT) AS member_pos, CAST(NULL AS BIGINT) AS told_hw, CAST(NULL AS BIGINT) AS told_ls
            FROM ev WHERE kind = 'hw_advanced'
            UNION ALL
            SELECT trace, pos, node, partition_, 0, NULL, log_start, NULL, false, NULL, NULL, NULL, NULL
            FROM ev WHERE kind = 'log_start_advanced'
            UNION ALL
            SELECT trace, pos, node, partition_, 0, NULL, NULL, leads, false, NULL, NULL, NULL, NULL
            FROM ev WHERE kind = 'leadership_changed'
            UNION ALL
            SELECT trace, pos, node, p, 1, NULL, NULL, NULL, true, session_id, member_pos, told_hw, told_ls
            FROM fs_member
          )
          WINDOW w AS (PARTITION BY trace, node, p ORDER BY pos, ord ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        ) WHERE probe AND (NOT cur_leads OR cur_hw <> told_hw OR cur_ls <> told_ls)""",
    )
)

_ANSWERED = "kind = 'session_fetch_handled' AND outcome IN ('full-new', 'incremental')"
"""An answer within a session: its partitions are what the session caches (a full one creates it)."""

TOLD_VIEW: dict[str, str] = {
    "spark": f"""
        SELECT trace, pos, node, session_id, x AS p, hws[i] AS told_hw, log_starts[i] AS told_ls
        FROM ev LATERAL VIEW posexplode(partitions_) t AS i, x WHERE {_ANSWERED}""",
    "duckdb": f"""
        SELECT trace, pos, node, session_id, partitions_[i] AS p, hws[i] AS told_hw, log_starts[i] AS told_ls
        FROM (SELECT trace, pos, node, session_id, partitions_, hws, log_starts,
                unnest(range(1, len(partitions_) + 1)) AS i
              FROM ev WHERE {_ANSWERED})""",
}
"""One row per partition of an answer within a session: the HW and log start it told (-1 for a
partition answered with an error: the session caches HW -1 then, so it answers it again)."""

_REQUEST_PARTS: dict[str, str] = {
    "spark": """
        SELECT trace, msg, x AS p, true AS forgot FROM ev LATERAL VIEW explode(forgotten) t AS x
        WHERE kind = 'session_fetch_sent'
        UNION ALL
        SELECT trace, msg, x.partition AS p, false FROM ev LATERAL VIEW explode(fetches) t AS x
        WHERE kind = 'session_fetch_sent'""",
    "duckdb": """
        SELECT trace, msg, unnest(forgotten) AS p, true AS forgot FROM ev WHERE kind = 'session_fetch_sent'
        UNION ALL
        SELECT trace, msg, x."partition" AS p, false
        FROM (SELECT trace, msg, unnest(fetches) AS x FROM ev WHERE kind = 'session_fetch_sent')""",
}

REQUEST_VIEW: dict[str, str] = {
    dialect: f"""
        SELECT h.trace, h.pos, h.node, h.session_id, f.p, f.forgot
        FROM ({parts}) f
        JOIN ev h ON h.trace = f.trace AND h.msg = f.msg
        WHERE h.kind = 'session_fetch_handled' AND h.outcome = 'incremental'"""
    for dialect, parts in _REQUEST_PARTS.items()
}
"""One row per partition an incremental request sent (``forgot`` false: FetchSession.update adds it
with no cached answer, HW -1, if the session lacks it) or forgot (removed), at its answer's position."""

INCR_VIEW = """
    SELECT trace, pos, node, session_id, partitions_ AS included, inc FROM (
      SELECT trace, pos, node, session_id, outcome, partitions_,
        {LAST(CASE WHEN outcome = 'full-new' THEN pos END)}
          OVER (PARTITION BY trace, node, session_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
          AS inc
      FROM ev WHERE kind = 'session_fetch_handled' AND session_id <> 0
    ) WHERE outcome = 'incremental' AND inc IS NOT NULL"""
"""Incremental answers with ``inc``, the position of the full answer that created their session (a
session id the cache hands out again after an eviction or a restart starts a new incarnation)."""

MEMBER_VIEW = """
    SELECT trace, pos, node, session_id, p, member_pos,
      CASE WHEN told_ok THEN told_hw ELSE -1 END AS told_hw,
      CASE WHEN told_ok THEN told_ls ELSE -1 END AS told_ls
    FROM (
      SELECT *, COALESCE(told_pos >= inc AND (forgot_pos IS NULL OR told_pos > forgot_pos), false) AS told_ok
      FROM (
        SELECT *,
          {LAST(CASE WHEN kind = 'told' THEN pos END)} OVER w AS told_pos,
          {LAST(t_hw)} OVER w AS told_hw,
          {LAST(t_ls)} OVER w AS told_ls,
          {LAST(CASE WHEN kind = 'forgot' THEN pos END)} OVER w AS forgot_pos,
          {LAST(CASE WHEN kind <> 'probe' THEN kind END)} OVER w AS member_kind,
          {LAST(CASE WHEN kind <> 'probe' THEN pos END)} OVER w AS member_pos
        FROM (
          SELECT trace, pos, node, session_id, p, 'told' AS kind, 2 AS ord, told_hw AS t_hw, told_ls AS t_ls,
            CAST(NULL AS BIGINT) AS inc
          FROM fs_told
          UNION ALL
          SELECT trace, pos, node, session_id, p, CASE WHEN forgot THEN 'forgot' ELSE 'sent' END,
            CASE WHEN forgot THEN 1 ELSE 0 END, NULL, NULL, NULL
          FROM fs_request
          UNION ALL
          SELECT a.trace, a.pos, a.node, a.session_id, c.p, 'probe', 3, NULL, NULL, a.inc
          FROM fs_incr a JOIN (
            SELECT DISTINCT trace, node, session_id, p FROM fs_told
            UNION SELECT DISTINCT trace, node, session_id, p FROM fs_request WHERE NOT forgot
          ) c ON a.trace = c.trace AND a.node = c.node AND a.session_id = c.session_id
          WHERE NOT array_contains(a.included, c.p)
        )
        WINDOW w AS (PARTITION BY trace, node, session_id, p ORDER BY pos, ord
                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
      )
    ) WHERE kind = 'probe' AND member_kind IN ('told', 'sent') AND member_pos >= inc"""
"""Per incremental answer, each partition of its session it leaves out, with what the session caches
for it: a partition is in the session if its latest request or answer row of this incarnation (a full
answer, ``inc``, starts one) sent or carried it, and not a forgetting request; the cache holds the HW
and log start of the latest answer that carried it since it joined, or -1 if none did (FetchSession.
update adds a partition with no cached answer, so the next answer must carry it). At one position a
request's sent partitions come before its forgotten ones (FetchSession.update), then the answer."""


def views(dialect: str, given: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """The slice's views in creation order (``given``: views the engine provides; none of this slice's)."""
    del given
    return [
        ("fs_told", TOLD_VIEW[dialect]),
        ("fs_request", REQUEST_VIEW[dialect]),
        ("fs_incr", expand(INCR_VIEW, dialect)),
        ("fs_member", expand(MEMBER_VIEW, dialect)),
    ]
