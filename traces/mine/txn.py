"""The exactly-once slice's stream invariants and the views they read (traces.mine.invariants
merges every slice's; the module docstring there says what each query yields). Its per-trace
facts from the manifest are tables of traces.mine.txn_tables.

Views, in creation order (``views``): ``recs`` (one row per record of a consumer Fetch answer),
``polled`` (record ids handed to the application), ``offs`` (group offsets committed or fetched),
``txn_edges`` (the coordinator's valid transitions, from model.txn_graph), then ``TXN_VIEWS``.
"""

from __future__ import annotations

from kconform.traces.mine.sql import MinedInvariant, expand

SLICE = "txn"
"""The slice (model.configs.slice_of) whose traces these invariants judge."""

INVARIANTS: list[MinedInvariant] = []
"""The slice's invariants, in the order the miner runs them."""
_register = INVARIANTS.append

RECORDS_VIEW: dict[str, str] = {
    "spark": """
        SELECT trace, pos, node, kind, req, error, partition_, read_committed, hw, lso, x.offset AS r_offset,
          x.pid AS r_pid, x.rid AS r_rid, x.control AS r_control
        FROM ev LATERAL VIEW explode(records) t AS x
        WHERE kind IN ('txn_consumer_fetch_handled', 'txn_fetch_wait_handled', 'txn_fetch_completed')""",
    "duckdb": """
        SELECT trace, pos, node, kind, req, error, partition_, read_committed, hw, lso, x."offset" AS r_offset,
          x.pid AS r_pid, x.rid AS r_rid, x.control AS r_control
        FROM (SELECT trace, pos, node, kind, req, error, partition_, read_committed, hw, lso, unnest(records) AS x
              FROM ev WHERE kind IN ('txn_consumer_fetch_handled', 'txn_fetch_wait_handled', 'txn_fetch_completed'))""",
}
"""Exactly-once slice: one row per record of a consumer Fetch answer on a data partition: answered at
once, or by a delayed fetch's completion (txn_fetch_completed: the read at completion time)."""


# --------------------------------------------------------------------------------------------
# Exactly-once slice (its events carry the partition's HW and LSO in each consumer answer)
# --------------------------------------------------------------------------------------------

_register(
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

_register(
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

_register(
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

_register(
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

_register(
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

_register(
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

_register(
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

_register(
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

_register(
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


_register(
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

_register(
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


_register(
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

_register(
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


def views(dialect: str, given: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(name, SELECT) of the slice's views in creation order, macros expanded (``given``: views
    the engine provides; none of this slice's)."""
    del given
    out = [("recs", RECORDS_VIEW[dialect])]
    out.append(("polled", POLLED_VIEW[dialect]))
    out.append(("offs", OFFSETS_VIEW[dialect]))
    out.append(("txn_edges", _txn_edges_view(dialect)))
    out += [(name, expand(sql, dialect)) for name, sql in TXN_VIEWS]
    return out
