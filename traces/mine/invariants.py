"""The stream invariants of the miner, as SQL over a corpus, in a registry.

One text per invariant runs unchanged on Spark SQL (the miner) and on DuckDB (the benchmark's
single-machine comparison): the few spellings the two dialects disagree on are macros
(``DIALECTS``), expanded before a query runs. Every query is window functions, joins and
aggregations keyed by trace (then node, epoch, message or offset); there is no user-defined
function anywhere, and a query returns violations only.

The queries read views, built in order by ``VIEWS``:

- ``ev``: the events table of the corpus (kconform.traces.corpus), one row per event;
- ``tr``: one row per trace from the manifest: ``min_isr`` (the effective min.insync.replicas)
  and ``strict`` (the configuration permits no loss: no unclean election, every append flushed);
- ``st``: every event with the state of its node *after* it, carried forward within one broker
  incarnation (a restart starts a new one): ``node_hw``, ``node_leo``, ``node_role`` (L leader,
  F follower, D down, N none yet), ``node_epoch``, ``isr_size`` (the node's ISR view), the previous ``prev_hw``
  and, for answers, the request's ``req_offset`` / ``req_epoch`` and position ``req_pos``;
- ``ent``: one row per log entry carried in a Fetch or consumer Fetch answer.

How a kind's fields become node state is the only per-kind knowledge, and it lives in the
``HW_AFTER`` / ``LEO_AFTER`` tables below, next to the event docstrings they transcribe.

Each query yields ``(invariant, trace, pos, wpos, detail)``: the position where the violation is
evident, the position of the other witness event (or null) and a sentence of evidence. Add an
invariant with ``@register``-style entries in ``INVARIANTS`` (the transactions slice will add its
own, over the same views plus its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


DIALECTS: dict[str, dict[str, str]] = {
    "spark": {
        "LAST": "last_value({0}) IGNORE NULLS",
        "SIZE": "size({0})",
        "STR": "CAST({0} AS STRING)",
    },
    "duckdb": {
        "LAST": "last_value({0} IGNORE NULLS)",
        "SIZE": "len({0})",
        "STR": "CAST({0} AS VARCHAR)",
    },
}
"""Spellings that differ between Spark SQL and DuckDB: ``{{LAST(x)}}`` (last non-null value in the
window frame), ``{{SIZE(list)}}``, ``{{STR(x)}}``."""

_MACRO = re.compile(r"\{(LAST|SIZE|STR)\(([^(){}]*(?:\([^(){}]*\)[^(){}]*)*)\)\}")

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

RECORDS_VIEW: dict[str, str] = {
    "spark": """
        SELECT trace, pos, node, kind, req, error, partition_, read_committed, hw, lso, x.offset AS r_offset,
          x.pid AS r_pid, x.rid AS r_rid, x.control AS r_control
        FROM ev LATERAL VIEW explode(records) t AS x
        WHERE kind = 'txn_consumer_fetch_handled'""",
    "duckdb": """
        SELECT trace, pos, node, kind, req, error, partition_, read_committed, hw, lso, x."offset" AS r_offset,
          x.pid AS r_pid, x.rid AS r_rid, x.control AS r_control
        FROM (SELECT trace, pos, node, kind, req, error, partition_, read_committed, hw, lso, unnest(records) AS x
              FROM ev WHERE kind = 'txn_consumer_fetch_handled')""",
}
"""Exactly-once slice: one row per record of a consumer Fetch answer on a data partition."""

RESERVED_COLUMNS: frozenset[str] = frozenset(
    {"offset", "group", "commit", "partition", "partitions", "state", "order", "limit", "range", "rows", "end"}
)
"""Event fields that are (or may be) SQL keywords in Spark or DuckDB: the engines expose them in
``ev`` with a trailing ``_`` (``offset_``, ``group_``, ...)."""

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
        FROM st c JOIN st h ON c.trace = h.trace AND c.node = h.node AND c.req = h.req
        JOIN tr ON tr.trace = c.trace
        WHERE c.kind = 'produce_completed' AND c.error = 0 AND h.kind = 'produce_handled' AND h.acks = -1
          AND h.error = 0 AND tr.strict""",
    ),
)
"""Shared views, in creation order (``ent`` and ``crossings`` come from ENTRIES_VIEW / CROSSINGS_VIEW)."""


@dataclass(frozen=True)
class MinedInvariant:
    """A stream invariant: ``name``, the guarantee in one sentence (``doc``), where it comes from
    (``cite``), the model invariant or handler rule it mirrors (``mirrors``) and its ``sql``
    (macros unexpanded) returning (invariant, trace, pos, wpos, detail)."""

    name: str
    doc: str
    cite: str
    mirrors: str
    sql: str


INVARIANTS: dict[str, MinedInvariant] = {}


def register(inv: MinedInvariant) -> MinedInvariant:
    """Add ``inv`` to the registry (names are unique)."""
    if inv.name in INVARIANTS:
        raise ValueError(f"invariant {inv.name!r} registered twice")
    INVARIANTS[inv.name] = inv
    return inv


register(
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

register(
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

register(
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

register(
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

register(
    MinedInvariant(
        "NoCommittedDataLoss",
        "A record acknowledged to an acks=all producer stays at its offset on every leader of its "
        "epoch or a later one: after the acknowledgement no such leader shows another record there, "
        "and no leader of a later epoch is last seen with a log that ends before it (checked on "
        "traces whose configuration permits no loss).",
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

register(
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
          SELECT c.trace, c.o, c.e_epoch, c.e_rid, MIN(c.pos) AS first_pos
          FROM (
            SELECT x.trace, x.o, x.pos, w.e_epoch, w.e_rid,
              ROW_NUMBER() OVER (PARTITION BY x.trace, x.node, x.o, x.pos ORDER BY w.pos DESC) AS latest
            FROM crossings x JOIN writes w ON w.trace = x.trace AND w.node = x.node AND w.o = x.o AND w.pos <= x.pos
          ) c JOIN tr ON tr.trace = c.trace
          WHERE c.latest = 1 AND tr.strict
          GROUP BY c.trace, c.o, c.e_epoch, c.e_rid)
        GROUP BY trace, o HAVING COUNT(*) > 1""",
    )
)

register(
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

register(
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

register(
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

# --------------------------------------------------------------------------------------------
# Exactly-once slice (its events carry the partition's HW and LSO in each consumer answer)
# --------------------------------------------------------------------------------------------

register(
    MinedInvariant(
        "LsoBounds",
        "Every last stable offset a partition leader serves, in either isolation level, is at most the "
        "partition's high watermark; and a read_uncommitted answer's last stable offset never passes the first "
        "offset of a transaction on the partition that is still open, or whose marker is not yet below the HW "
        "it reports (read_committed answers: TxnAtomicVisibility). The LSO is a property of the partition, "
        "not of the fetch: a consumer in read_uncommitted sees it too (it bounds its lag metrics).",
        "KIP-98 last stable offset (FetchResponse last_stable_offset in every isolation level); "
        "UnifiedLog.lastStableOffset; kafka-facts §2.4, §4",
        "model invariant LsoBounds; handler rule txn_consumer_fetch_handled (the LSO of a read_uncommitted answer)",
        """
        SELECT 'LsoBounds' AS invariant, trace, pos, CAST(NULL AS BIGINT) AS wpos,
          concat(partition_, ': LSO ', {STR(lso)}, ' served with HW ', {STR(hw)}) AS detail
        FROM ev WHERE kind = 'txn_consumer_fetch_handled' AND error = 0 AND lso > hw
        UNION ALL
        SELECT 'LsoBounds' AS invariant, trace, pos, wpos,
          concat(part, ': read_uncommitted answer with LSO ', {STR(lso)}, ' and HW ', {STR(hw)},
                 ' while the transaction of producer ', {STR(pid)}, ' from offset ', {STR(first_o)}, ' is unstable')
            AS detail
        FROM unstable_lso WHERE NOT read_committed AND lso <= hw""",
    )
)

register(
    MinedInvariant(
        "ReadCommittedBelowLso",
        "A read_committed Fetch answer holds no record at or above the last stable offset it reports.",
        "KIP-98 read_committed (FetchIsolation.TXN_COMMITTED); kafka-facts §4; Redpanda #3036",
        "handler rule txn_consumer_fetch_handled; model invariant NoUncommittedRead",
        """
        SELECT 'ReadCommittedBelowLso' AS invariant, trace, pos, CAST(NULL AS BIGINT) AS wpos,
          concat(MIN(partition_), ': read_committed answer holds offset ', {STR(MAX(r_offset))}, ' with LSO ',
                 {STR(MIN(lso))}) AS detail
        FROM recs WHERE read_committed AND error = 0 AND r_offset >= lso
        GROUP BY trace, pos""",
    )
)

# --------------------------------------------------------------------------------------------
# Exactly-once slice: shared views
# --------------------------------------------------------------------------------------------


def _txn_edge_rows() -> list[tuple[int, str, str]]:
    """(transaction version, from, to) of every state change a coordinator may show between two of
    its answers: an edge of model.txn_graph, or the two edges of a TV2 empty abort (Prepare and
    Complete in one handler, which the model records as ``from → PrepareAbort → Complete*``)."""
    from kconform.model import txn_graph as G

    rows = []
    for tv in (0, 2):
        for src in G.STATES:
            for dst in G.STATES:
                if src == dst:
                    continue
                through_abort = (
                    dst in G.COMPLETED
                    and src not in G.PREPARED
                    and G.is_valid_transition(src, G.PREPARE_ABORT, tv)
                    and G.is_valid_transition(G.PREPARE_ABORT, dst, tv)
                )
                if G.is_valid_transition(src, dst, tv) or through_abort:
                    rows.append((tv, src, dst))
    return rows


def _txn_edges_view(dialect: str) -> str:
    values = ", ".join(f"({tv}, '{a}', '{b}')" for tv, a, b in _txn_edge_rows())
    if dialect == "spark":
        return f"SELECT * FROM VALUES {values} AS txn_edges(tv, src, dst)"
    return f"SELECT * FROM (VALUES {values}) AS txn_edges(tv, src, dst)"


POLLED_VIEW: dict[str, str] = {
    "spark": """
        SELECT trace, pos, req, partition_, read_committed, x AS rid
        FROM ev LATERAL VIEW explode(rids) t AS x WHERE kind = 'consumer_polled'""",
    "duckdb": """
        SELECT trace, pos, req, partition_, read_committed, unnest(rids) AS rid
        FROM ev WHERE kind = 'consumer_polled'""",
}
"""One row per record id a consumer handed to the application."""

_OFFSET_KINDS = "('offset_fetch_handled', 'offset_commit_handled', 'txn_offset_commit_handled')"

OFFSETS_VIEW: dict[str, str] = {
    "spark": f"""
        SELECT trace, pos, kind, group_, pid, error, base_offset, x.partition AS tp, x.offset AS off
        FROM ev LATERAL VIEW explode(offsets) t AS x WHERE kind IN {_OFFSET_KINDS}""",
    "duckdb": f"""
        SELECT trace, pos, kind, group_, pid, error, base_offset, x."partition" AS tp, x."offset" AS off
        FROM (SELECT trace, pos, kind, group_, pid, error, base_offset, unnest(offsets) AS x
              FROM ev WHERE kind IN {_OFFSET_KINDS})""",
}
"""One row per (partition, offset) of a group offset commit or OffsetFetch answer."""

_STATE_KINDS = (
    "('init_producer_id_handled', 'add_partitions_handled', 'add_offsets_handled', 'end_txn_handled', "
    "'txn_timed_out', 'txn_id_expired', 'marker_sent', 'marker_response_handled', 'clock_advanced', "
    "'coordinator_loaded', 'coordinator_moved', 'quiesced')"
)

TXN_VIEWS: tuple[tuple[str, str], ...] = (
    (
        "appends",
        """
        SELECT p.trace, p.partition_ AS part, p.pid, p.epoch, p.base_seq, {SIZE(p.rids)} AS n, p.txn_id, p.ctxn,
          p.transactional, COALESCE(v.base_offset, p.base_offset) AS o, COALESCE(v.pos, p.pos) AS pos
        FROM (SELECT trace, pos, partition_, pid, epoch, base_seq, rids, txn_id, ctxn, transactional, outcome,
                base_offset, verify_msg
              FROM ev WHERE kind = 'txn_produce_handled' AND outcome IN ('appended', 'verifying')) p
        LEFT JOIN (SELECT trace, pos, msg, base_offset FROM ev WHERE kind = 'verify_applied' AND outcome = 'appended') v
          ON v.trace = p.trace AND v.msg = p.verify_msg AND p.outcome = 'verifying'
        WHERE p.outcome = 'appended' OR v.pos IS NOT NULL""",
    ),
    (
        "markers",
        """
        SELECT trace, pos, partition_ AS part, pid, epoch, commit_ AS committed, coordinator_epoch, offset_ AS o
        FROM ev WHERE kind = 'marker_handled' AND error = 0""",
    ),
    (
        "expiries",
        """SELECT trace, pos, partition_ AS part, pid FROM ev WHERE kind = 'producer_expired'""",
    ),
    (
        "txns",
        """
        SELECT b.trace, b.part, b.pid, MIN(b.o) AS first_o, MIN(b.pos) AS spos, b.end_o, m.pos AS mpos,
          m.committed
        FROM (
          SELECT *, MIN(mo) OVER (PARTITION BY trace, part, pid ORDER BY o
                                  ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS end_o
          FROM (SELECT trace, part, pid, o, pos, 1 AS batch, CAST(NULL AS BIGINT) AS mo FROM appends WHERE transactional
                UNION ALL
                SELECT trace, part, pid, o, pos, 0 AS batch, o AS mo FROM markers)) b
        LEFT JOIN markers m ON m.trace = b.trace AND m.part = b.part AND m.o = b.end_o
        WHERE b.batch = 1
        GROUP BY b.trace, b.part, b.pid, b.end_o, m.pos, m.committed""",
    ),
    (
        "unstable_lso",
        """
        SELECT f.trace, f.pos, f.read_committed, MIN(f.partition_) AS part, MIN(f.lso) AS lso, MIN(f.hw) AS hw,
          MIN(t.spos) AS wpos, MIN(t.pid) AS pid, MIN(t.first_o) AS first_o
        FROM (SELECT trace, pos, partition_, lso, hw, read_committed FROM ev
              WHERE kind = 'txn_consumer_fetch_handled' AND error = 0) f
        JOIN txns t ON t.trace = f.trace AND t.part = f.partition_
        WHERE t.spos < f.pos AND t.first_o < f.lso AND (t.mpos IS NULL OR t.mpos > f.pos OR t.end_o >= f.hw)
        GROUP BY f.trace, f.pos, f.read_committed""",
    ),
    (
        "clk",
        """
        SELECT trace, pos, kind, node, txn_id, state_ AS state, error, epoch, timeout_ms, msg, state_partition, quiet,
          COALESCE({LAST(CASE WHEN kind = 'clock_advanced' THEN now_ms END)}
                     OVER (PARTITION BY trace ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), 0) AS now
        FROM ev WHERE kind IN """
        + _STATE_KINDS,
    ),
    (
        "tstates",
        """
        SELECT trace, pos, now, kind, error, epoch, txn_id,
          CASE WHEN kind = 'txn_id_expired' THEN 'Dead' ELSE state END AS state,
          CASE WHEN kind = 'init_producer_id_handled' AND error = 0 THEN timeout_ms END AS timeout_ms
        FROM clk
        WHERE kind IN ('init_producer_id_handled', 'add_partitions_handled', 'add_offsets_handled', 'end_txn_handled',
                       'txn_timed_out', 'txn_id_expired')
          AND txn_id <> '' AND (state <> '' OR kind = 'txn_id_expired')
        UNION ALL
        SELECT r.trace, r.pos, r.now, 'marker_response_handled' AS kind, r.error, CAST(NULL AS BIGINT) AS epoch,
          s.txn_id, r.state, CAST(NULL AS BIGINT) AS timeout_ms
        FROM (SELECT trace, pos, now, msg, error, state FROM clk
              WHERE kind = 'marker_response_handled' AND state <> '') r
        JOIN (SELECT trace, msg, txn_id FROM clk WHERE kind = 'marker_sent') s
          ON s.trace = r.trace AND s.msg = r.msg""",
    ),
    (
        "tchanges",
        """
        SELECT trace, pos, now, txn_id, state, prev, ppos, tmo,
          LEAD(pos) OVER (PARTITION BY trace, txn_id ORDER BY pos) AS npos,
          LEAD(now) OVER (PARTITION BY trace, txn_id ORDER BY pos) AS nnow
        FROM (
          SELECT *,
            LAG(state) OVER (PARTITION BY trace, txn_id ORDER BY pos) AS prev,
            LAG(pos) OVER (PARTITION BY trace, txn_id ORDER BY pos) AS ppos,
            {LAST(timeout_ms)} OVER (PARTITION BY trace, txn_id ORDER BY pos
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS tmo
          FROM tstates)
        WHERE prev IS NULL OR prev <> state""",
    ),
    (
        "otxns",
        """
        SELECT c.trace, c.pos, c.grp, c.opart, c.pid, c.base_offset, c.end_o, m.pos AS mpos, m.committed
        FROM (
          SELECT c.trace, c.pos, c.grp, c.opart, c.pid, c.base_offset, MIN(m.o) AS end_o
          FROM (SELECT DISTINCT e.trace, e.pos, e.group_ AS grp, g.opart, e.pid, e.base_offset
                FROM ev e JOIN tgrp g ON g.trace = e.trace AND g.grp = e.group_
                WHERE e.kind = 'txn_offset_commit_handled' AND e.error = 0) c
          LEFT JOIN markers m ON m.trace = c.trace AND m.part = c.opart AND m.pid = c.pid AND m.o > c.base_offset
          GROUP BY c.trace, c.pos, c.grp, c.opart, c.pid, c.base_offset) c
        LEFT JOIN markers m ON m.trace = c.trace AND m.part = c.opart AND m.o = c.end_o""",
    ),
    (
        "ovis",
        """
        SELECT o.trace, o.pos, o.group_, o.tp, o.off, o.base_offset,
          CASE WHEN o.kind = 'offset_commit_handled' THEN o.pos WHEN x.committed THEN x.mpos END AS vis
        FROM offs o LEFT JOIN otxns x ON x.trace = o.trace AND x.pos = o.pos AND o.kind = 'txn_offset_commit_handled'
        WHERE o.kind IN ('offset_commit_handled', 'txn_offset_commit_handled') AND o.error = 0""",
    ),
)
"""The exactly-once views, in creation order after ``recs``, ``polled`` and ``offs``:

- ``appends``: one row per batch a partition leader appended to a data partition (at the position
  of TxnProduceHandled, or of VerifyApplied after a verification), with its producer identity,
  sequences (``base_seq``, ``n`` records) and offset ``o``;
- ``markers``: every control record a leader wrote (MarkerHandled NONE);
- ``txns``: one row per transaction of a producer on a data partition: the maximal run of its
  transactional batches up to its next marker there (``first_o``, first append ``spos``), and that
  marker (``end_o``, ``mpos``, ``committed``; null while the transaction is open);
- ``unstable_lso``: every consumer Fetch answer whose LSO passes the first offset of a transaction
  that was still unstable when it was served (open, or its marker not yet below the answer's HW),
  with that transaction (the earliest one);
- ``clk``: the coordinator-side events with the simulated clock ``now`` they happened at;
- ``tstates``: every state a coordinator reported for a transactional id (the state after the
  handler; a non-coordinator's answer reports none; an expiry is Dead);
- ``tchanges``: the rows of ``tstates`` where the state changed, with the previous one, the next
  change (``npos``, ``nnow``) and the transaction timeout last granted by InitProducerId (``tmo``);
- ``otxns``: every TxnOffsetCommit with the marker that ended its batch on the group's offsets
  partition (``mpos``, ``committed``; null while pending).
- ``ovis``: every group offset write (plain or transactional, one row per partition) with its
  record's ``base_offset`` and the position ``vis`` from which it is committed (the write itself,
  or its transaction's COMMIT marker; null while pending or once aborted).
"""


# --------------------------------------------------------------------------------------------
# Exactly-once slice: producer state, coordinator, visibility
# --------------------------------------------------------------------------------------------

register(
    MinedInvariant(
        "ProducerSequencesContiguous",
        "On each partition the batches a leader appends for one producer id have contiguous sequence "
        "numbers within an epoch and never a lower epoch than the one before (unless the producer's "
        "state expired in between).",
        "KIP-98 sequence numbers; KIP-360, KIP-854 (expiry); kafka-facts §2.2",
        "model invariant PerProducerOrder",
        """
        SELECT 'ProducerSequencesContiguous' AS invariant, a.trace, a.pos, a.ppos AS wpos,
          concat(a.part, ': producer ', {STR(a.pid)}, ' appended (epoch ', {STR(a.pe)}, ', seq ', {STR(a.ps)}, '+',
                 {STR(a.pn)}, ') at ', {STR(a.po)}, ' then (epoch ', {STR(a.epoch)}, ', seq ', {STR(a.base_seq)},
                 ') at ', {STR(a.o)}) AS detail
        FROM (
          SELECT trace, part, pid, epoch, base_seq, n, o, pos,
            LAG(epoch) OVER w AS pe, LAG(base_seq) OVER w AS ps, LAG(n) OVER w AS pn, LAG(o) OVER w AS po,
            LAG(pos) OVER w AS ppos
          FROM appends WHERE pid >= 0
          WINDOW w AS (PARTITION BY trace, part, pid ORDER BY o)) a
        LEFT JOIN expiries x ON x.trace = a.trace AND x.part = a.part AND x.pid = a.pid AND x.pos > a.ppos
          AND x.pos < a.pos
        WHERE a.pe IS NOT NULL AND x.pos IS NULL
          AND NOT (a.epoch = a.pe AND a.base_seq = a.ps AND a.n = a.pn)
          AND (a.epoch < a.pe OR (a.epoch = a.pe AND a.base_seq <> (a.ps + a.pn) % 2147483648))""",
    )
)

register(
    MinedInvariant(
        "NoDuplicateAppends",
        "No partition gets the same batch of a producer (producer id, epoch and sequence range) "
        "appended twice: a retried or duplicated produce is answered as a duplicate (unless the "
        "producer's state expired in between).",
        "KIP-98 idempotent producer; KAFKA-5494; kafka-facts §2.2",
        "model invariant NoDuplicateAppends",
        """
        SELECT 'NoDuplicateAppends' AS invariant, a.trace, a.pos, a.ppos AS wpos,
          concat(a.part, ': producer ', {STR(a.pid)}, ' epoch ', {STR(a.epoch)}, ' sequences ', {STR(a.base_seq)},
                 '+', {STR(a.n)}, ' appended at offsets ', {STR(a.po)}, ' and ', {STR(a.o)}) AS detail
        FROM (
          SELECT trace, part, pid, epoch, base_seq, n, o, pos, LAG(pos) OVER w AS ppos, LAG(o) OVER w AS po
          FROM appends WHERE pid >= 0
          WINDOW w AS (PARTITION BY trace, part, pid, epoch, base_seq, n ORDER BY pos)) a
        LEFT JOIN expiries x ON x.trace = a.trace AND x.part = a.part AND x.pid = a.pid AND x.pos > a.ppos
          AND x.pos < a.pos
        WHERE a.ppos IS NOT NULL AND x.pos IS NULL""",
    )
)

register(
    MinedInvariant(
        "ValidTxnTransitions",
        "Every change of a transactional id's state that its coordinators report is an edge of Kafka's "
        "valid-previous-state table for the trace's transaction version.",
        "kafka-facts §1.1 TransactionState.validPreviousStates; KIP-890 part 2 (TV2 edges)",
        "model invariant ValidTxnTransitions (edges from model.txn_graph)",
        """
        SELECT 'ValidTxnTransitions' AS invariant, c.trace, c.pos, c.ppos AS wpos,
          concat(c.txn_id, ': ', c.prev, ' -> ', c.state, ' under transaction version ', {STR(t.tv)}) AS detail
        FROM tchanges c JOIN ttr t ON t.trace = c.trace
        LEFT JOIN txn_edges e ON e.tv = t.tv AND e.src = c.prev AND e.dst = c.state
        WHERE c.prev IS NOT NULL AND c.prev <> 'Dead' AND e.src IS NULL""",
    )
)

register(
    MinedInvariant(
        "TxnAtomicVisibility",
        "A read_committed Fetch answer's last stable offset never passes the first offset of a "
        "transaction on the partition that is still open, or whose marker is not yet below the HW "
        "it reports: a transaction's records become readable all together, never some before others.",
        "KIP-98 last stable offset and read_committed; kafka-facts §2.4, §4; Redpanda #3036",
        "model invariants LsoBounds (first unstable offset part) and NoUncommittedRead",
        """
        SELECT 'TxnAtomicVisibility' AS invariant, trace, pos, wpos,
          concat(part, ': read_committed answer with LSO ', {STR(lso)}, ' and HW ', {STR(hw)},
                 ' while the transaction of producer ', {STR(pid)}, ' from offset ', {STR(first_o)}, ' is unstable')
            AS detail
        FROM unstable_lso WHERE read_committed""",
    )
)

register(
    MinedInvariant(
        "NoAbortedRead",
        "A read_committed consumer never hands the application a record of a transaction that was "
        "aborted on its partition (Adya G1a).",
        "KIP-98 read_committed (aborted transactions list); Jepsen/Adya G1a; kafka-facts §4",
        "model invariant NoAbortedRead",
        """
        SELECT 'NoAbortedRead' AS invariant, p.trace, GREATEST(p.pos, MAX(t.mpos)) AS pos,
          LEAST(p.pos, MAX(t.mpos)) AS wpos,
          concat(MIN(p.partition_), ': read_committed consumer got record ', {STR(MIN(r.r_rid))}, ' at offset ',
                 {STR(MIN(r.r_offset))}, ' of an aborted transaction') AS detail
        FROM polled p
        JOIN recs r ON r.trace = p.trace AND r.req = p.req AND r.r_rid = p.rid AND r.r_control < 0
        JOIN txns t ON t.trace = r.trace AND t.part = r.partition_ AND t.pid = r.r_pid AND r.r_offset >= t.first_o
          AND r.r_offset < t.end_o
        WHERE p.read_committed AND NOT t.committed
        GROUP BY p.trace, p.pos""",
    )
)

register(
    MinedInvariant(
        "TxnEndsWithinBound",
        "A transaction does not stay Ongoing once its coordinator's clock has passed its start plus "
        "transaction.timeout.ms plus one abort-check interval (counted from the coordinator's load if "
        "later), and once the world has quiesced no transaction is Ongoing or Prepare* at its "
        "coordinator or open on a partition.",
        "KIP-98 transaction timeouts (KAFKA-6119); kafka-facts §1.6; KIP-890 part 1 (hanging transactions)",
        "coordinator rule txn_timed_out; model invariant NoHangingTransaction",
        """
        SELECT 'TxnEndsWithinBound' AS invariant, v.trace, MIN(k.pos) AS pos, v.spos AS wpos,
          concat(v.txn_id, ': Ongoing since ', {STR(v.snow)}, ' ms (timeout ', {STR(v.tmo)}, ' ms) at ',
                 {STR(MIN(k.now))}, ' ms, past the bound ', {STR(v.bound)}, ' ms') AS detail
        FROM (
          SELECT c.trace, c.txn_id, c.pos AS spos, c.now AS snow, c.tmo, c.npos,
            GREATEST(c.now + c.tmo, MAX_BY(l.now, l.pos)) + t.abort_interval_ms AS bound,
            COALESCE(c.nnow, MAX(e.last_now)) AS end_now, MAX_BY(l.kind, l.pos) AS last_kind
          FROM tchanges c
          JOIN ttr t ON t.trace = c.trace
          JOIN ttid i ON i.trace = c.trace AND i.txn_id = c.txn_id
          JOIN clk l ON l.trace = c.trace AND l.state_partition = i.spart
            AND l.kind IN ('coordinator_loaded', 'coordinator_moved') AND l.pos < COALESCE(c.npos, 9223372036854775807)
          JOIN (SELECT trace, MAX(now) AS last_now FROM clk GROUP BY trace) e ON e.trace = c.trace
          WHERE c.state = 'Ongoing' AND c.tmo IS NOT NULL
          GROUP BY c.trace, c.txn_id, c.pos, c.now, c.tmo, c.npos, c.nnow, t.abort_interval_ms) v
        JOIN clk k ON k.trace = v.trace AND k.kind = 'clock_advanced' AND k.pos > v.spos
          AND k.pos < COALESCE(v.npos, 9223372036854775807) AND k.now > v.bound
        WHERE v.last_kind = 'coordinator_loaded' AND v.end_now > v.bound
        GROUP BY v.trace, v.txn_id, v.spos, v.snow, v.tmo, v.bound
        UNION ALL
        SELECT 'TxnEndsWithinBound' AS invariant, q.trace, q.pos, MAX(s.pos) AS wpos,
          concat('after quiescence ', s.txn_id, ' is ', MAX_BY(s.state, s.pos)) AS detail
        FROM (SELECT trace, pos FROM clk WHERE kind = 'quiesced' AND quiet) q
        JOIN tstates s ON s.trace = q.trace AND s.pos < q.pos
        GROUP BY q.trace, q.pos, s.txn_id
        HAVING MAX_BY(s.state, s.pos) IN ('Ongoing', 'PrepareCommit', 'PrepareAbort')
        UNION ALL
        SELECT 'TxnEndsWithinBound' AS invariant, q.trace, q.pos, o.spos AS wpos,
          concat('after quiescence ', o.part, ': the transaction of producer ', {STR(o.pid)}, ' from offset ',
                 {STR(o.first_o)}, ' is open') AS detail
        FROM (SELECT trace, pos FROM clk WHERE kind = 'quiesced' AND quiet) q
        JOIN (SELECT trace, part, pid, first_o, spos, mpos FROM txns
              UNION ALL
              SELECT trace, opart AS part, pid, base_offset AS first_o, pos AS spos, mpos FROM otxns) o
          ON o.trace = q.trace AND o.spos < q.pos AND (o.mpos IS NULL OR o.mpos > q.pos)""",
    )
)

register(
    MinedInvariant(
        "TxnOffsetsVisibleOnCommit",
        "OffsetFetch returns a group's offset only once it is committed: written by a plain "
        "OffsetCommit, or by a TxnOffsetCommit whose transaction's COMMIT marker has landed on the "
        "group's offsets partition; and of the committed writes it returns the one from the latest "
        "record of the offsets partition (a transaction's offsets committed after a later plain commit "
        "do not replace it).",
        "KIP-98 transactional offset commits; KIP-447; GroupMetadata.completePendingTxnOffsetCommit "
        "(olderThan); kafka-facts §1.10",
        "model invariant NoUncommittedOffsetRead; handler rule offset_fetch_handled",
        """
        SELECT 'TxnOffsetsVisibleOnCommit' AS invariant, g.trace, g.pos, MIN(l.pos) AS wpos,
          CASE WHEN g.last_b IS NULL
            THEN concat('group ', g.group_, ' read offset ', {STR(g.off)}, ' of ', g.tp,
                        ' that no committed write had set')
            ELSE concat('group ', g.group_, ' read offset ', {STR(g.off)}, ' of ', g.tp,
                        ' while its committed offset was ', {STR(MIN(l.off))}) END AS detail
        FROM (
          SELECT f.trace, f.pos, f.group_, f.tp, f.off, MAX(w.base_offset) AS last_b
          FROM (SELECT trace, pos, group_, tp, off FROM offs WHERE kind = 'offset_fetch_handled' AND error = 0) f
          LEFT JOIN ovis w ON w.trace = f.trace AND w.group_ = f.group_ AND w.tp = f.tp AND w.vis < f.pos
          GROUP BY f.trace, f.pos, f.group_, f.tp, f.off) g
        LEFT JOIN ovis l ON l.trace = g.trace AND l.group_ = g.group_ AND l.tp = g.tp AND l.base_offset = g.last_b
        GROUP BY g.trace, g.pos, g.group_, g.tp, g.off, g.last_b
        HAVING g.last_b IS NULL OR MIN(l.off) <> g.off""",
    )
)


register(
    MinedInvariant(
        "DuplicateBatchesRecognised",
        "A produce of a batch that is one of the producer's last 5 batches appended to the partition "
        "(same epoch and sequence range, no expiry since) is never answered OUT_OF_ORDER_SEQUENCE_NUMBER: "
        "it is a duplicate, answered with the original offset.",
        "KAFKA-5494 (max.in.flight 5 dedup window); KIP-98; kafka-facts §2.2",
        "handler rule txn_produce_handled (model.producer_state duplicate check)",
        """
        SELECT 'DuplicateBatchesRecognised' AS invariant, trace, pos, MAX(mpos) AS wpos,
          concat(MIN(part), ': producer ', {STR(MIN(pid))}, ' batch at sequence ', {STR(MIN(base_seq))},
                 ' rejected as out of order though appended at offset ', {STR(MAX(mo))}) AS detail
        FROM (
          SELECT r.trace, r.pos, r.part, r.pid, r.base_seq, MAX(a.k) AS last_k,
            MAX(CASE WHEN a.epoch = r.epoch AND a.base_seq = r.base_seq AND a.n = r.n THEN a.k END) AS match_k,
            MAX(CASE WHEN a.epoch = r.epoch AND a.base_seq = r.base_seq AND a.n = r.n THEN a.pos END) AS mpos,
            MAX(CASE WHEN a.epoch = r.epoch AND a.base_seq = r.base_seq AND a.n = r.n THEN a.o END) AS mo,
            MAX(a.epoch) AS last_epoch, MAX(x.pos) AS xpos
          FROM (SELECT trace, pos, partition_ AS part, pid, epoch, base_seq, {SIZE(rids)} AS n FROM ev
                WHERE kind = 'txn_produce_handled' AND outcome = 'rejected' AND error = 45 AND pid >= 0) r
          JOIN (SELECT *, ROW_NUMBER() OVER (PARTITION BY trace, part, pid ORDER BY pos) AS k FROM appends) a
            ON a.trace = r.trace AND a.part = r.part AND a.pid = r.pid AND a.pos < r.pos
          LEFT JOIN expiries x ON x.trace = r.trace AND x.part = r.part AND x.pid = r.pid AND x.pos < r.pos
          GROUP BY r.trace, r.pos, r.part, r.pid, r.epoch, r.base_seq)
        WHERE match_k IS NOT NULL AND match_k > last_k - 5 AND (xpos IS NULL OR xpos < mpos)
        GROUP BY trace, pos""",
    )
)

register(
    MinedInvariant(
        "MarkerCoordinatorFencing",
        "A partition never writes a transaction marker from a coordinator epoch older than one it "
        "already wrote a marker from for the same producer (unless the producer's state expired since).",
        "KIP-98 coordinator fencing (TRANSACTION_COORDINATOR_FENCED); ProducerAppendInfo.appendEndTxnMarker; "
        "kafka-facts §1.8",
        "handler rule marker_handled (model.txn_partition write_marker)",
        """
        SELECT 'MarkerCoordinatorFencing' AS invariant, trace, pos, CAST(NULL AS BIGINT) AS wpos,
          concat(part, ': marker of producer ', {STR(pid)}, ' from coordinator epoch ', {STR(coordinator_epoch)},
                 ' written after one from epoch ', {STR(seen)}) AS detail
        FROM (
          SELECT *, MAX(coordinator_epoch) OVER (PARTITION BY trace, part, pid, seg ORDER BY pos
                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS seen
          FROM (
            SELECT *, SUM(expiry) OVER (PARTITION BY trace, part, pid ORDER BY pos
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS seg
            FROM (SELECT trace, pos, part, pid, coordinator_epoch, 0 AS expiry FROM markers
                  UNION ALL
                  SELECT trace, pos, part, pid, CAST(NULL AS BIGINT) AS coordinator_epoch, 1 AS expiry FROM expiries)))
        WHERE expiry = 0 AND coordinator_epoch < seen""",
    )
)


register(
    MinedInvariant(
        "TxnWritesVerified",
        "With partition verification on, a leader never answers a transactional batch of a producer "
        "that has no open transaction on the partition (appended or rejected) before asking the "
        "coordinator whether the partition is in the producer's transaction, unless it is a duplicate.",
        "KIP-890 part 1 (transaction.partition.verification.enable); KAFKA-14402; kafka-facts §1.9, §2.2",
        "handler rule txn_produce_handled (outcome verifying)",
        """
        SELECT 'TxnWritesVerified' AS invariant, p.trace, p.pos, CAST(NULL AS BIGINT) AS wpos,
          concat(MIN(p.part), ': transactional batch of producer ', {STR(MIN(p.pid))}, ' with no open transaction ',
                 MIN(p.outcome), ' without verification') AS detail
        FROM (SELECT trace, pos, partition_ AS part, pid, outcome FROM ev
              WHERE kind = 'txn_produce_handled' AND transactional AND outcome NOT IN ('verifying', 'duplicate')
                AND error <> 6) p
        JOIN ttr t ON t.trace = p.trace AND t.verification
        LEFT JOIN txns o ON o.trace = p.trace AND o.part = p.part AND o.pid = p.pid AND o.spos < p.pos
          AND (o.mpos IS NULL OR o.mpos > p.pos)
        WHERE o.spos IS NULL
        GROUP BY p.trace, p.pos""",
    )
)

register(
    MinedInvariant(
        "EndTxnEpochFencing",
        "An EndTxn that takes a transaction out of Ongoing carries the producer epoch its "
        "AddPartitionsToTxn/AddOffsetsToTxn were accepted with: a late EndTxn of an earlier "
        "transaction never ends a later one under a newer epoch.",
        "KIP-890 part 2 (epoch bump per transaction); KAFKA-17754; kafka-facts §1.5",
        "handler rule end_txn_handled (model.coordinator end_txn)",
        """
        SELECT 'EndTxnEpochFencing' AS invariant, trace, pos, apos AS wpos,
          concat(txn_id, ': EndTxn at epoch ', {STR(epoch)}, ' moved Ongoing to ', state,
                 ' though the transaction was opened at epoch ', {STR(add_epoch)}) AS detail
        FROM (
          SELECT *, LAG(state) OVER (PARTITION BY trace, txn_id ORDER BY pos) AS prev,
            {LAST(CASE WHEN kind IN ('add_partitions_handled', 'add_offsets_handled') AND error = 0 THEN epoch END)}
              OVER wf AS add_epoch,
            {LAST(CASE WHEN kind IN ('add_partitions_handled', 'add_offsets_handled') AND error = 0 THEN pos END)}
              OVER wf AS apos
          FROM tstates
          WINDOW wf AS (PARTITION BY trace, txn_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))
        WHERE kind = 'end_txn_handled' AND error = 0 AND prev = 'Ongoing' AND state <> 'Ongoing'
          AND epoch <> add_epoch""",
    )
)


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


def expand(sql: str, dialect: str) -> str:
    """``sql`` with the dialect's spellings of the macros; ValueError for an unknown dialect."""
    spellings = DIALECTS.get(dialect)
    if spellings is None:
        raise ValueError(f"unknown SQL dialect {dialect!r} (known: {', '.join(DIALECTS)})")
    previous = None
    while previous != sql:  # macros may nest
        previous = sql
        sql = _MACRO.sub(lambda m: spellings[m.group(1)].format(m.group(2)), sql)
    return sql


def view_sql(dialect: str) -> list[tuple[str, str]]:
    """(name, SELECT) of every shared view in creation order, macros expanded, ``ev`` and ``tr``
    excluded (the engine provides them)."""
    views = [(name, expand(sql, dialect)) for name, sql in VIEWS[:3]]
    views.append(("ent", ENTRIES_VIEW[dialect]))
    views.append(("acked", expand(VIEWS[3][1], dialect)))
    views.append(("writes", expand(WRITES_VIEW, dialect)))
    views.append(("crossings", CROSSINGS_VIEW[dialect]))
    views.append(("recs", RECORDS_VIEW[dialect]))
    views.append(("polled", POLLED_VIEW[dialect]))
    views.append(("offs", OFFSETS_VIEW[dialect]))
    views.append(("txn_edges", _txn_edges_view(dialect)))
    views += [(name, expand(sql, dialect)) for name, sql in TXN_VIEWS]
    return views


def violations_sql(dialect: str, names: list[str] | None = None) -> str:
    """One query: the union of the chosen invariants' queries (default: all), macros expanded."""
    chosen = [INVARIANTS[n] for n in (names if names is not None else list(INVARIANTS))]
    return "\nUNION ALL\n".join(f"SELECT * FROM ({expand(inv.sql, dialect)})" for inv in chosen)
