"""The fetch-session slice's mutants: known bugs of fetch sessions (KIP-227) in Kafka and in
Kafka-compatible brokers and clients, each a small branch in impl/fetch/ guarded by
``World.mutant(NAME)``. The description names the Kafka issue (or the fix in another
implementation of the protocol) and the symptom a checker should see; impl.mutants merges them
with every other slice's.
"""

from __future__ import annotations

STALE_LAST_USED = "stale-last-used"
FETCH_BEFORE_RESPONSE = "fetch-before-response"
MOVES_ALL_INCLUDED = "moves-all-included"
SIZE_PASS_UPDATES_CACHE = "size-pass-updates-cache"
NO_FORGET = "no-forget"
NO_RESET_ON_SESSION_ERROR = "no-reset-on-session-error"

MUTANTS: dict[str, str] = {
    STALE_LAST_USED: (
        "The session cache does not move a session's last-used time when an incremental request "
        "touches it, so the LRU order is the creation order (KAFKA-9137, fixed in 2.4 by "
        "apache/kafka#7640: FETCH_SESSION_ID_NOT_FOUND caused by incorrect FetchSessionCache "
        "eviction). Symptom: a full cache evicts a session in active use instead of the idle one."
    ),
    FETCH_BEFORE_RESPONSE: (
        "The client sends its next fetch before the answer to the previous one was handled, reusing "
        "the epoch (KAFKA-8052, fixed in 2.3 by apache/kafka#6582: one request in flight per node). "
        "Symptom: a second request in flight with the same session epoch, answered "
        "INVALID_FETCH_SESSION_EPOCH."
    ),
    MOVES_ALL_INCLUDED: (
        "An incremental answer moves every partition it includes to the end of the session's "
        "round-robin order, also those included only for a new HW or log start (KAFKA-12330, fixed "
        "in 3.0 by apache/kafka#10318: partitions that returned no records starved). Symptom: the "
        "partitions of later answers come in another order."
    ),
    SIZE_PASS_UPDATES_CACHE: (
        "The broker's first pass over an incremental answer (computing its size, as KafkaApis does "
        "for quotas) already updates the cached HW and log start, so the pass that builds the answer, "
        "which by KIP-227 must carry every changed partition, "
        "finds nothing changed (Kafka keeps the two passes apart: PartitionIterator(updateFetch"
        "ContextAndRemoveUnselected = false); Redpanda's CORE-14617, redpanda-data/redpanda#29304, "
        "was this bug). Symptom: an HW or log-start change is left out of the answer for good."
    ),
    NO_FORGET: (
        "The client never lists partitions it stopped fetching as forgotten_topics_data in an incremental "
        "request (KIP-227; platformatic/kafka#321, its KIP-227 support). Symptom: the broker keeps the partitions in "
        "the session and keeps answering them."
    ),
    NO_RESET_ON_SESSION_ERROR: (
        "The client keeps its session id and epoch after a top-level FETCH_SESSION_ID_NOT_FOUND or "
        "INVALID_FETCH_SESSION_EPOCH instead of falling back to a full request "
        "(KIP-227: FetchSessionHandler.handleResponse resets; redpanda-data/redpanda#27749, its Kafka "
        "client's fetcher). Symptom: the client repeats the failing request and stops making progress."
    ),
}
"""Name → description, in the order the gate's self-check runs them."""

MUTANT_CONFIG: dict[str, dict[str, int | bool]] = {}
"""No fetch mutant needs a configuration of its own."""
