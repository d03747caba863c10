"""Coverage of the exactly-once slice: handler outcomes and coordinator state transitions.

Keys are those of conformance.coverage (``kind:outcome`` / ``kind:ERROR``) plus one per coordinator
transition, ``txn_edge:From->To``, counted by the judge from the model's transaction-log writes.
What is **reachable** is a reviewed table, not a search (the exactly-once model has no
model-checking front end yet): every valid transition of model.txn_graph that the slice can take
within a campaign's clock, and every handler outcome Kafka's rules give for the requests the
conformance machine sends, each listed with why it happens. Transitions into Dead and producer
expiry need days of simulated time (transactional.id.expiration.ms, producer.id.expiration.ms) and
are left out; a campaign that covers them anyway shows them as "not reachable".
"""

from __future__ import annotations

from kconform.model import txn_graph as tg
from kconform.model.txn_config import TxnConfig
from kconform.model.txn_delayed_fetch import TxnDelayedFetch

EDGE_PREFIX = "txn_edge:"
"""Coverage keys of coordinator transitions: ``txn_edge:Ongoing->PrepareCommit``."""


def edge_key(src: str, dst: str) -> str:
    """The coverage key of the coordinator transition ``src → dst``."""
    return f"{EDGE_PREFIX}{src}->{dst}"


def edge_counts(covered: dict[str, int]) -> dict[tuple[str, str], int]:
    """The transitions among coverage keys, with their counts."""
    out: dict[tuple[str, str], int] = {}
    for key, n in covered.items():
        if key.startswith(EDGE_PREFIX):
            src, _, dst = key[len(EDGE_PREFIX) :].partition("->")
            out[(src, dst)] = out.get((src, dst), 0) + n
    return out


_COORDINATOR_LOOKUP = ("NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS")
_MOVED = "a request reaching a moved or loading coordinator"

REACHABLE_OUTCOMES: tuple[tuple[str, str], ...] = (
    ("coordinator_moved", "boot and every coordinator failover"),
    ("coordinator_loaded", "the new coordinator finished loading"),
    ("clock_advanced", "time"),
    ("quiesced", "the liveness check point"),
    ("hw_advanced", "the HW follows the LEO"),
    ("init_producer_id_handled:NONE", "a producer starts"),
    ("init_producer_id_handled:CONCURRENT_TRANSACTIONS", "a new instance fences an Ongoing transaction (§1.3)"),
    ("init_producer_id_handled:PRODUCER_FENCED", "a wrong KIP-360 expected producer id (rogue_init_producer)"),
    *(
        (f"init_producer_id_handled:{e}", "a request reaching a moved or loading coordinator")
        for e in _COORDINATOR_LOOKUP
    ),
    ("add_partitions_handled:NONE", "a transaction adds a partition"),
    ("add_partitions_handled:PRODUCER_FENCED", "a zombie (older epoch) adds a partition"),
    ("add_partitions_handled:CONCURRENT_TRANSACTIONS", "adding while the transaction is in Prepare*"),
    *(
        (f"add_partitions_handled:{e}", "a request reaching a moved or loading coordinator")
        for e in _COORDINATOR_LOOKUP
    ),
    ("add_offsets_handled:NONE", "sendOffsetsToTransaction"),
    ("end_txn_handled:NONE", "commit or abort"),
    ("end_txn_handled:PRODUCER_FENCED", "a fenced or timed-out producer ends its transaction"),
    *((f"end_txn_handled:{e}", _MOVED) for e in _COORDINATOR_LOOKUP),
    ("txn_timed_out", "a transaction open longer than transaction.timeout.ms"),
    ("marker_sent", "markers after Prepare*"),
    ("marker_handled:NONE", "a partition writes a marker"),
    ("marker_response_handled:NONE", "the coordinator learns a marker was written"),
    ("txn_produce_handled:appended", "a batch of an open transaction or an idempotent producer"),
    ("txn_produce_handled:duplicate", "a retried or duplicated batch (dedup window of 5)"),
    ("txn_produce_handled:rejected", "a zombie's or out-of-sequence batch"),
    ("txn_produce_handled:verifying", "the first transactional batch of a producer on a partition (KIP-890)"),
    ("verify_handled:NONE", "the partition is in the transaction"),
    ("verify_applied:appended", "verified, then appended"),
    ("txn_consumer_fetch_handled:NONE", "consumers"),
    ("consumer_polled", "consumers"),
    ("txn_offset_commit_handled:NONE", "offsets in a transaction"),
    ("txn_offset_commit_handled:INVALID_PRODUCER_EPOCH", "a zombie commits offsets in its transaction"),
    ("verify_handled:PRODUCER_FENCED", "a zombie's first transactional batch on a partition"),
    ("verify_applied:rejected", "the verification failed (fenced, not in the transaction, coordinator moved)"),
    ("offset_commit_handled:NONE", "plain offset commits"),
    ("offset_fetch_handled:NONE", "offset fetches"),
    ("offset_fetch_handled:UNSTABLE_OFFSET_COMMIT", "require_stable with pending transactional offsets (KIP-447)"),
)
"""(coverage key, why the slice produces it) for every configuration of the slice."""

_LONG_CLOCK = frozenset({tg.DEAD})
"""States only reached after days of simulated time (transactional-id expiry)."""


def reachable_edges(cfg: TxnConfig) -> frozenset[tuple[str, str]]:
    """The valid transitions (model.txn_graph) a campaign can take. PrepareEpochFence is a pending
    state Kafka never persists (the fence is written as PrepareAbort), and Dead needs the expiry."""
    return frozenset(
        (src, dst)
        for src, dst in tg.edges(cfg.transaction_version)
        if dst not in _LONG_CLOCK and tg.PREPARE_EPOCH_FENCE not in (src, dst)
    )


DELAYED_FETCH_OUTCOMES: tuple[tuple[str, str], ...] = (
    ("txn_fetch_wait_handled:NONE", "a waiting fetch finds minBytes below its bound"),
    ("txn_fetch_wait_handled:parked", "a waiting fetch finds less and parks (DelayedFetch)"),
    ("txn_fetch_completed:read_committed", "an HW advance moves the LSO past minBytes, or the deadline"),
    ("txn_fetch_completed:read_uncommitted", "an HW advance past minBytes, or the deadline"),
    ("txn_fetch_completed_by:lso", "a read_committed fetch completed by the LSO moving (the HW passing a marker)"),
    ("txn_fetch_completed_by:hw", "a read_uncommitted fetch completed by an HW advance"),
    ("txn_fetch_completed_by:expiry", "a parked fetch answered at its deadline with what is there"),
)
"""With ``fetch_max_wait_ms`` > 0 every consumer fetch waits (model.txn_delayed_fetch): these keys
replace ``txn_consumer_fetch_handled:NONE``."""


def completed_by_key(df: TxnDelayedFetch, now_ms: int) -> str:
    """What completed the parked fetch ``df`` at ``now_ms``: its deadline, else the bound moving
    (the LSO for read_committed, the HW otherwise: nothing else makes a parked fetch ready here)."""
    if now_ms >= df.deadline_ms:
        return "txn_fetch_completed_by:expiry"
    return "txn_fetch_completed_by:lso" if df.read_committed else "txn_fetch_completed_by:hw"


def reachable_keys(cfg: TxnConfig) -> frozenset[str]:
    """The handler outcomes and transitions the exactly-once slice can produce under ``cfg``."""
    outcomes = {key for key, _why in REACHABLE_OUTCOMES}
    if cfg.delayed_fetch:
        outcomes = (outcomes - {"txn_consumer_fetch_handled:NONE"}) | {key for key, _why in DELAYED_FETCH_OUTCOMES}
    if not cfg.verification:
        outcomes = {k for k in outcomes if not k.startswith(("verify_", "txn_produce_handled:verifying"))}
    return frozenset(outcomes | {edge_key(src, dst) for src, dst in reachable_edges(cfg)})
