"""The replication slice's stream invariants and the views they read (traces.mine.invariants
merges every slice's; the module docstring there says what each query yields).

Views, in creation order (``views``):

- ``st``: every event with the state of its node *after* it, carried forward within one broker
  incarnation (a restart starts a new one): ``node_hw``, ``node_leo``, ``node_role`` (L leader,
  F follower, D down, N none yet), ``node_epoch``, ``isr_size`` (the node's ISR view), the previous ``prev_hw``
  and, for answers, the request's ``req_offset`` / ``req_epoch`` and position ``req_pos`` (built
  through ``s1`` and ``s2``);
- ``ent``: one row per log entry carried in a Fetch or consumer Fetch answer;
- ``acked``: acks=all writes acknowledged on a strict configuration; ``writes``: every record a
  broker put into its log; ``crossings``: every (node, offset) the HW moved past.

How a kind's fields become node state is the only per-kind knowledge, and it lives in the
``HW_AFTER`` / ``LEO_AFTER`` tables below, next to the event docstrings they transcribe.
"""

from __future__ import annotations

from kconform.traces.mine.sql import MinedInvariant, expand

SLICE = "replication"
"""The slice (model.configs.slice_of) whose traces these invariants judge."""

STATE_VIEWS = ("s1", "s2", "st")
"""The views that build ``st`` in SQL (the reference plan); an engine that computes ``st`` with
traces.mine.state leaves them out."""

INVARIANTS: list[MinedInvariant] = []
"""The slice's invariants, in the order the miner runs them."""
_register = INVARIANTS.append

HW_AFTER: dict[str, str] = {
    "fetch_handled": "CASE WHEN error = 0 THEN leader_hw END",
    "consumer_fetch_handled": "CASE WHEN error = 0 THEN hw END",
    "produce_handled": "hw",
    "metadata_applied": "hw",
    "fetch_applied": "hw",
    "epoch_query_applied": "hw",
    "isr_change_proposed": "hw",
    "alter_partition_applied": "hw",
    "broker_restarted": "hw",
    "checkpointed": "hw",
}
"""Event kind → SQL for the node's HW after the event (null: the event does not say)."""

LEO_AFTER: dict[str, str] = {
    "produce_handled": "CASE WHEN offset_ >= 0 THEN offset_ + 1 END",
    "fetch_handled": "CASE WHEN error = 0 THEN leader_leo END",
    "fetch_applied": "CASE WHEN truncated_to >= 0 THEN truncated_to WHEN appended > 0 THEN req_offset + appended END",
    "metadata_applied": "CASE WHEN truncated_to >= 0 THEN truncated_to END",
    "epoch_query_applied": "CASE WHEN truncated_to >= 0 THEN truncated_to END",
    "broker_restarted": "log_end",
    "checkpointed": "log_end",
}
"""Event kind → SQL for the node's LEO after the event (a follower's append starts at the fetch
offset of its request, ``req_offset``; a truncation to ``t`` leaves LEO = t)."""


def _case(table: dict[str, str]) -> str:
    arms = " ".join(f"WHEN '{kind}' THEN {expr}" for kind, expr in table.items())
    return f"CASE kind {arms} END"


ENTRIES_VIEW: dict[str, str] = {
    "spark": """
        SELECT trace, pos, node, kind, error, hw, x.offset AS e_offset, x.epoch AS e_epoch, x.rid AS e_rid
        FROM ev LATERAL VIEW explode(entries) t AS x
        WHERE kind IN ('fetch_handled', 'consumer_fetch_handled')""",
    "duckdb": """
        SELECT trace, pos, node, kind, error, hw, x."offset" AS e_offset, x.epoch AS e_epoch, x.rid AS e_rid
        FROM (SELECT trace, pos, node, kind, error, hw, unnest(entries) AS x FROM ev
              WHERE kind IN ('fetch_handled', 'consumer_fetch_handled'))""",
}
"""The one view whose text differs by dialect: exploding the entries lists."""

CROSSINGS_VIEW: dict[str, str] = {
    "spark": """
        SELECT trace, node, inc, pos, o FROM (
          SELECT trace, node, inc, pos, hw_set, COALESCE(prev_hw, 0) AS lo FROM st
          WHERE hw_set IS NOT NULL AND hw_set > COALESCE(prev_hw, 0))
        LATERAL VIEW explode(sequence(lo, hw_set - 1)) t AS o""",
    "duckdb": """
        SELECT trace, node, inc, pos, unnest(range(COALESCE(prev_hw, 0), hw_set)) AS o FROM st
        WHERE hw_set IS NOT NULL AND hw_set > COALESCE(prev_hw, 0)""",
}
"""Every (node, offset) whose HW moved past it, at the position it did (the offset became committed
on that node there)."""

VIEWS: tuple[tuple[str, str], ...] = (
    (
        "s1",
        f"""
        SELECT *,
          {_case(HW_AFTER)} AS hw_set,
          {_case(LEO_AFTER)} AS leo_set,
          CASE WHEN kind = 'metadata_applied' AND outcome = 'become_leader' THEN 'L'
               WHEN kind = 'metadata_applied' AND outcome = 'become_follower' THEN 'F'
               WHEN kind IN ('broker_crashed', 'broker_restarted') THEN 'D' END AS role_set,
          CASE WHEN kind = 'metadata_applied' AND outcome <> 'ignored' THEN leader_epoch END AS epoch_set,
          CASE WHEN kind = 'metadata_applied' AND outcome <> 'ignored' THEN partition_epoch
               WHEN kind = 'alter_partition_applied' AND error = 0 THEN partition_epoch END AS pe_cand
        FROM (
          SELECT trace, pos, node, kind, outcome, error, leader_epoch, {{SIZE(isr)}} AS isr_len, partition_epoch, req,
            acks, offset_, epoch, rid, msg, current_leader_epoch, leader_leo, leader_hw, hw, appended, truncated_to,
            log_end,
            SUM(CASE WHEN kind = 'broker_restarted' THEN 1 ELSE 0 END)
              OVER (PARTITION BY trace, node ORDER BY pos ROWS UNBOUNDED PRECEDING) AS inc,
            MAX(CASE WHEN kind = 'fetch_sent' THEN fetch_offset END) OVER (PARTITION BY trace, msg) AS req_offset,
            MAX(CASE WHEN kind IN ('fetch_sent', 'epoch_query_sent') THEN current_leader_epoch END)
              OVER (PARTITION BY trace, msg) AS req_epoch,
            MAX(CASE WHEN kind IN ('fetch_sent', 'epoch_query_sent') THEN pos END)
              OVER (PARTITION BY trace, msg) AS req_pos
          FROM ev)""",
    ),
    (
        "s2",
        """
        SELECT *,
          {LAST(hw_set)} OVER w AS node_hw,
          COALESCE({LAST(leo_set)} OVER w, 0) AS node_leo,
          {LAST(CASE WHEN leo_set IS NOT NULL THEN pos END)} OVER w AS leo_pos,
          COALESCE({LAST(role_set)} OVER w, 'N') AS node_role,
          COALESCE({LAST(role_set)} OVER wp, 'N') AS prev_role,
          COALESCE({LAST(epoch_set)} OVER w, -1) AS node_epoch,
          {LAST(hw_set)} OVER wp AS prev_hw,
          MAX(pe_cand) OVER wp AS prev_pe_max
        FROM s1
        WINDOW w AS (PARTITION BY trace, node, inc ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
               wp AS (PARTITION BY trace, node, inc ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)""",
    ),
    (
        "st",
        """
        SELECT *,
          {LAST(isr_adopted)} OVER w AS isr_size,
          {LAST(CASE WHEN isr_adopted IS NOT NULL THEN pos END)} OVER w AS isr_pos
        FROM (
          SELECT *,
            CASE WHEN kind = 'metadata_applied' AND outcome <> 'ignored' THEN isr_len
                 WHEN kind = 'alter_partition_applied' AND error = 0 AND prev_role = 'L'
                      AND partition_epoch > COALESCE(prev_pe_max, -1) THEN isr_len END AS isr_adopted
          FROM s2)
        WINDOW w AS (PARTITION BY trace, node, inc ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)""",
    ),
    (
        "acked",
        """
        SELECT c.trace, c.pos AS ack_pos, h.pos AS write_pos, h.offset_ AS o, h.epoch AS e, h.rid AS r
        FROM (SELECT trace, node, inc, req, pos, error,
                ROW_NUMBER() OVER (PARTITION BY trace, node, inc, req ORDER BY pos) AS k
              FROM st WHERE kind = 'produce_completed') c
        JOIN (SELECT trace, node, inc, req, pos, offset_, epoch, rid,
                ROW_NUMBER() OVER (PARTITION BY trace, node, inc, req ORDER BY pos) AS k
              FROM st WHERE kind = 'produce_handled' AND acks = -1 AND error = 0) h
          ON c.trace = h.trace AND c.node = h.node AND c.inc = h.inc AND c.req = h.req AND c.k = h.k
        JOIN tr ON tr.trace = c.trace
        WHERE c.error = 0 AND tr.strict""",
    ),
)
"""The first views, in creation order (``ent``, ``writes`` and ``crossings`` come from ENTRIES_VIEW,
WRITES_VIEW and CROSSINGS_VIEW; ``views`` gives them all in order)."""


WRITES_VIEW = """
    SELECT trace, node, pos, offset_ AS o, epoch AS e_epoch, rid AS e_rid FROM st
    WHERE kind = 'produce_handled' AND offset_ >= 0
    UNION ALL
    SELECT a.trace, a.node, a.pos, n.e_offset AS o, n.e_epoch, n.e_rid
    FROM (
      SELECT a.trace, a.node, a.pos, a.appended, a.req_offset, h.pos AS hpos,
        ROW_NUMBER() OVER (PARTITION BY a.trace, a.pos ORDER BY h.pos DESC) AS k
      FROM (SELECT trace, node, pos, msg, appended, req_offset FROM st WHERE kind = 'fetch_applied' AND appended > 0) a
      JOIN (SELECT trace, pos, msg, {SIZE(entries)} AS n FROM ev WHERE kind = 'fetch_handled' AND error = 0) h
        ON h.trace = a.trace AND h.msg = a.msg AND h.pos < a.pos AND h.n = a.appended
    ) a JOIN ent n ON n.trace = a.trace AND n.pos = a.hpos
    WHERE a.k = 1 AND n.e_offset >= a.req_offset AND n.e_offset < a.req_offset + a.appended"""
"""Every record a broker put into its log, at the position it did: a leader's append, a follower's
append of the entries of the (latest) answer to its Fetch."""


def views(dialect: str, given: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(name, SELECT) of the slice's views in creation order, macros expanded, without the
    ``given`` ones (views the engine provides as tables, e.g. ``st`` from traces.mine.state)."""
    out = [(name, expand(sql, dialect)) for name, sql in VIEWS[:3] if not ({name, "st"} & given)]
    out.append(("ent", ENTRIES_VIEW[dialect]))
    out.append(("acked", expand(VIEWS[3][1], dialect)))
    out.append(("writes", expand(WRITES_VIEW, dialect)))
    out.append(("crossings", CROSSINGS_VIEW[dialect]))
    return out


_register(
    MinedInvariant(
        "HwBelowLeo",
        "Every broker's high watermark is at most its log end offset.",
        "KIP-101; UnifiedLog.maybeIncrementHighWatermark",
        "model invariant HwBelowLeo",
        """
        SELECT 'HwBelowLeo' AS invariant, trace, pos, leo_pos AS wpos,
          concat('broker ', {STR(node)}, ' HW ', {STR(hw_set)}, ' > LEO ', {STR(node_leo)}) AS detail
        FROM st WHERE node >= 0 AND hw_set IS NOT NULL AND hw_set > node_leo""",
    )
)

_register(
    MinedInvariant(
        "LeaderHwMonotonic",
        "A leader's high watermark never decreases within one leader epoch.",
        "KIP-101; UnifiedLog.maybeIncrementHighWatermark is monotonic",
        "model invariant LeaderHwMonotonic",
        """
        SELECT 'LeaderHwMonotonic' AS invariant, trace, pos, ppos AS wpos,
          concat('leader ', {STR(node)}, ' epoch ', {STR(node_epoch)}, ': HW ', {STR(phw)}, ' -> ',
                 {STR(hw_set)}) AS detail
        FROM (
          SELECT trace, pos, node, node_epoch, hw_set,
            LAG(hw_set) OVER (PARTITION BY trace, node, inc, node_epoch ORDER BY pos) AS phw,
            LAG(pos) OVER (PARTITION BY trace, node, inc, node_epoch ORDER BY pos) AS ppos
          FROM st WHERE node_role = 'L' AND hw_set IS NOT NULL)
        WHERE hw_set < phw""",
    )
)

_register(
    MinedInvariant(
        "LeaderEpochsMonotonic",
        "Neither the controller's leader epoch nor a running broker's ever decreases.",
        "KIP-101 (leader epochs), KIP-320",
        "model invariant LeaderEpochsMonotonic",
        """
        SELECT 'LeaderEpochsMonotonic' AS invariant, trace, pos, ppos AS wpos,
          concat(CASE WHEN node < 0 THEN 'controller' ELSE concat('broker ', {STR(node)}) END,
                 ': leader epoch ', {STR(pe)}, ' -> ', {STR(le)}) AS detail
        FROM (
          SELECT trace, pos, node, leader_epoch AS le,
            LAG(leader_epoch) OVER (PARTITION BY trace ORDER BY pos) AS pe,
            LAG(pos) OVER (PARTITION BY trace ORDER BY pos) AS ppos
          FROM st WHERE node < 0 AND kind IN ('broker_fenced', 'broker_unfenced', 'leader_moved')
          UNION ALL
          SELECT trace, pos, node, epoch_set AS le,
            LAG(epoch_set) OVER (PARTITION BY trace, node, inc ORDER BY pos) AS pe,
            LAG(pos) OVER (PARTITION BY trace, node, inc ORDER BY pos) AS ppos
          FROM st WHERE node >= 0 AND epoch_set IS NOT NULL)
        WHERE le < pe""",
    )
)

_register(
    MinedInvariant(
        "ConsumerReadsBelowHw",
        "A read_uncommitted consumer never receives a record at or above the serving leader's HW.",
        "KIP-101; FetchIsolation.HIGH_WATERMARK",
        "model invariant ConsumerReadsBelowHw",
        """
        SELECT 'ConsumerReadsBelowHw' AS invariant, trace, pos, CAST(NULL AS BIGINT) AS wpos,
          concat('broker ', {STR(MIN(node))}, ' served offset ', {STR(MAX(e_offset))}, ' with HW ',
                 {STR(MIN(hw))}) AS detail
        FROM ent WHERE kind = 'consumer_fetch_handled' AND error = 0 AND e_offset >= hw
        GROUP BY trace, pos""",
    )
)

_register(
    MinedInvariant(
        "NoCommittedDataLoss",
        "A record acknowledged to an acks=all producer stays at its offset on every leader of its "
        "epoch or a later one: after the acknowledgement no such leader shows another record there, "
        "and no leader of a later epoch is last seen with a log that ends before it (checked on "
        "traces whose configuration permits no loss). A request delivered twice leaves two copies and "
        "two answers: each answer acknowledges its own copy, in order (DelayedProduce per request; "
        "model.replication.complete_produce).",
        "KIP-101, KIP-279, KIP-320; Kafka's durability contract for acks=all",
        "model invariant NoCommittedDataLoss",
        """
        SELECT 'NoCommittedDataLoss' AS invariant, a.trace, x.pos, a.ack_pos AS wpos,
          concat('record ', {STR(a.r)}, ' acked at offset ', {STR(a.o)}, ' epoch ', {STR(a.e)}, ' is (epoch ',
                 {STR(x.e_epoch)}, ', record ', {STR(x.e_rid)}, ') on leader ', {STR(x.node)}, ' of epoch ',
                 {STR(x.node_epoch)}) AS detail
        FROM acked a JOIN (
          SELECT n.trace, n.pos, n.node, s.node_epoch, n.e_offset, n.e_epoch, n.e_rid
          FROM ent n JOIN st s ON n.trace = s.trace AND n.pos = s.pos
          WHERE n.error = 0 AND s.node_role = 'L'
          UNION ALL
          SELECT trace, pos, node, node_epoch, offset_ AS e_offset, epoch AS e_epoch, rid AS e_rid
          FROM st WHERE kind = 'produce_handled' AND offset_ >= 0
        ) x ON x.trace = a.trace AND x.e_offset = a.o
        WHERE x.pos > a.ack_pos AND x.node_epoch >= a.e AND (x.e_epoch <> a.e OR x.e_rid <> a.r)
        UNION ALL
        SELECT 'NoCommittedDataLoss' AS invariant, a.trace, l.last_pos AS pos, a.ack_pos AS wpos,
          concat('record ', {STR(a.r)}, ' acked at offset ', {STR(a.o)}, ' epoch ', {STR(a.e)}, ' but broker ',
                 {STR(l.node)}, ' leading epoch ', {STR(l.le)}, ' afterwards has LEO ', {STR(l.last_leo)}) AS detail
        FROM (
          SELECT trace, node, node_epoch AS le, MAX(pos) AS last_pos, MAX_BY(lv, pos) AS last_leo
          FROM (SELECT trace, node, inc, node_epoch, pos,
                  CASE WHEN kind = 'produce_handled' THEN offset_ + 1 ELSE leader_leo END AS lv
                FROM st WHERE node_role = 'L' AND ((kind = 'produce_handled' AND offset_ >= 0)
                                              OR (kind = 'fetch_handled' AND error = 0)))
          GROUP BY trace, node, inc, node_epoch) l
        JOIN acked a ON a.trace = l.trace AND a.e < l.le AND l.last_pos > a.ack_pos AND a.o >= l.last_leo""",
    )
)

_register(
    MinedInvariant(
        "NoDivergenceBelowHw",
        "Replicas agree below the HW: every offset that some broker's HW passed holds one and the "
        "same record on every broker whose HW passed it (checked on traces whose configuration "
        "permits no loss).",
        "KIP-101, KIP-279 (log divergence)",
        "model invariant NoDivergenceBelowHw",
        """
        SELECT 'NoDivergenceBelowHw' AS invariant, trace, MAX(first_pos) AS pos, MIN(first_pos) AS wpos,
          concat('offset ', {STR(MIN(o))}, ' committed as ', {STR(COUNT(*))}, ' different records') AS detail
        FROM (
          SELECT x.trace, x.o, w.e_epoch, w.e_rid, MIN(x.pos) AS first_pos
          FROM crossings x JOIN (
            SELECT w.trace, w.node, w.o, w.pos, w.e_epoch, w.e_rid,
              LEAD(w.pos) OVER (PARTITION BY w.trace, w.node, w.o ORDER BY w.pos) AS next_pos
            FROM writes w JOIN tr ON tr.trace = w.trace WHERE tr.strict) w
            ON w.trace = x.trace AND w.node = x.node AND w.o = x.o AND w.pos <= x.pos
               AND (w.next_pos IS NULL OR x.pos < w.next_pos)
          GROUP BY x.trace, x.o, w.e_epoch, w.e_rid)
        GROUP BY trace, o HAVING COUNT(*) > 1""",
    )
)

_register(
    MinedInvariant(
        "AcksAllCommitted",
        "An acks=all produce is answered NONE only once the leader's HW has passed the record (the "
        "first copy of it, when the request was delivered twice).",
        "kafka-facts §3.4, §6 (DelayedProduce); KIP-679",
        "handler rule produce_completed (model.replication.complete_produce)",
        """
        SELECT 'AcksAllCommitted' AS invariant, trace, pos, wpos,
          concat('broker ', {STR(node)}, ' answered request ', {STR(req)}, ' (offset ', {STR(o)},
                 ') with HW ', {STR(COALESCE(node_hw, 0))}) AS detail
        FROM (
          SELECT c.trace, c.pos, c.node, c.req, c.node_hw, MIN(h.offset_) AS o, MAX(h.pos) AS wpos
          FROM st c JOIN st h ON c.trace = h.trace AND c.node = h.node AND c.req = h.req AND h.pos < c.pos
          WHERE c.kind = 'produce_completed' AND c.error = 0 AND h.kind = 'produce_handled' AND h.acks = -1
            AND h.error = 0
          GROUP BY c.trace, c.pos, c.node, c.req, c.node_hw)
        WHERE COALESCE(node_hw, 0) <= o""",
    )
)

_register(
    MinedInvariant(
        "EpochFencing",
        "A broker answers a Fetch, OffsetsForLeaderEpoch or consumer Fetch carrying a "
        "currentLeaderEpoch other than its own with FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH.",
        "KIP-320; Partition.checkCurrentLeaderEpoch",
        "handler rules fetch_handled, epoch_query_handled, consumer_fetch_handled",
        """
        SELECT 'EpochFencing' AS invariant, trace, pos, req_pos AS wpos,
          concat('broker ', {STR(node)}, ' in epoch ', {STR(node_epoch)}, ' answered a ', kind,
                 ' request of epoch ', {STR(cle)}, ' with error ', {STR(error)}) AS detail
        FROM (SELECT *, CASE WHEN kind = 'consumer_fetch_handled' THEN current_leader_epoch ELSE req_epoch END AS cle
              FROM st WHERE kind IN ('fetch_handled', 'epoch_query_handled', 'consumer_fetch_handled'))
        WHERE cle >= 0 AND cle <> node_epoch AND error NOT IN (74, 75)""",
    )
)

_register(
    MinedInvariant(
        "HwFrozenBelowMinIsr",
        "A leader's HW does not advance while its ISR is smaller than min.insync.replicas.",
        "KAFKA-15583 (3.7); Partition.maybeIncrementLeaderHW",
        "model rule leader_hw_target (frozen below min ISR)",
        """
        SELECT 'HwFrozenBelowMinIsr' AS invariant, s.trace, s.pos, s.isr_pos AS wpos,
          concat('leader ', {STR(s.node)}, ' HW ', {STR(COALESCE(s.prev_hw, 0))}, ' -> ', {STR(s.hw_set)},
                 ' with ISR size ', {STR(s.isr_size)}, ' < min ISR ', {STR(tr.min_isr)}) AS detail
        FROM st s JOIN tr ON tr.trace = s.trace
        WHERE s.node_role = 'L' AND s.hw_set IS NOT NULL AND s.hw_set > COALESCE(s.prev_hw, 0)
          AND s.isr_size < tr.min_isr""",
    )
)
