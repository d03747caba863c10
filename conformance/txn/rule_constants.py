"""The exactly-once gate machine's draw ranges and rule families (conformance.txn.machine) that the
corpus workload (traces.txn.workload) shares, in a module of their own: a corpus generator reads
them without importing the Hypothesis machine."""

from __future__ import annotations

IDEMPOTENT_CLIENT = 15
"""An idempotent (non-transactional) producer."""
CONSUMERS = (0, 1, 2, 3)
"""Consumers read from their position (0 at first, then past what they got): four of them keep a
read from offset 0 likely after aborts and commits happened (the aborted-read check needs one)."""
OVERTAKE = (1, 2, 3, 6)
"""How many messages an ``overtake`` delivers behind the head of the queue (the delayed request,
marker or EndTxn of the historic bugs: KAFKA-17754, KIP-890's late produce, a zombie's batch)."""
TIMEOUT_MS = (10_000, 61_000)
"""Clock jumps past the abort-check interval and the producers' transaction.timeout.ms (60 s)."""
QUIESCE_MS = 200_000
"""Simulated time a Quiesce may take: the transaction timeout + abort interval + marker retries."""
FAMILIES = (
    "zombie",
    "idempotent",
    "consume",
    "offsets",
    "coordinator",
    "message-faults",
    "scheduling",
    "timeouts",
    "liveness",
    "adversarial",
)
"""Rule families switched on or off per run (swarm testing, Groce et al. 2012). Transactions,
sends, commits and aborts, new producer instances, consumers, healthy runs, HW advances and small
clock steps are always on; "zombie" lets older instances keep acting after being fenced,
"liveness" adds Quiesce (deliver everything, then every transaction must have ended);
"adversarial" adds the batches a buggy, old or malicious client sends (``rogue_produce``), its
EndTxn requests out of order with a stale or future epoch (``rogue_end_txn``), its stale
AddPartitionsToTxn (``rogue_add_partitions``) and its InitProducerId with a wrong KIP-360 expected
producer id (``rogue_init_producer``)."""
