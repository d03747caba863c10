"""The exactly-once slice's mutants: known protocol bugs the exactly-once brokers, coordinators and
clients can be switched into.

Each is a small branch in impl/txn/ guarded by ``TxnWorld.mutant(NAME)``; the description names the
KIP or Kafka issue that fixed the bug and the symptom a checker should see. The registry of every
slice's mutants is impl.mutants.
"""

from __future__ import annotations

from kconform.impl.mutant_table import MutantTable

_TABLE = MutantTable()

NO_SEQUENCE_DEDUP = _TABLE.add(
    "no-sequence-dedup",
    "The partition leader ignores producer sequence numbers: no duplicate check, no sequence "
    "validation, as every broker before idempotence (KIP-98, 0.11). Symptom: a retried or "
    "duplicated produce request is appended twice (NoDuplicateAppends).",
)

SMALL_DEDUP_WINDOW = _TABLE.add(
    "small-dedup-window",
    "The producer state caches only the last batch, as 0.11 did; KAFKA-5494 (1.0) keeps the last "
    "5 so that every in-flight request (max.in.flight 5) can be recognised as a duplicate. "
    "Symptom: a duplicate of an older in-flight batch is rejected with OUT_OF_ORDER_SEQUENCE_NUMBER "
    "instead of answered with its original offset.",
)

LSO_IGNORES_ONGOING = _TABLE.add(
    "lso-ignores-ongoing",
    "The last stable offset is the high watermark: open transactions do not hold it back "
    "(Redpanda #3036; kafka-facts §4, KIP-98's LSO). Symptom: a read_committed consumer reads "
    "records of a transaction that is still open (NoUncommittedRead, LsoBounds).",
)

LSO_OFF_BY_ONE = _TABLE.add(
    "lso-off-by-one",
    "The last stable offset is one past the first unstable offset (KIP-98 LSO computed off by "
    "one, the class of Redpanda #3036). Symptom: read_committed returns the first record of an "
    "open transaction (NoUncommittedRead, LsoBounds).",
)

NO_ABORTED_FILTER = _TABLE.add(
    "no-aborted-filter",
    "The read_committed consumer does not skip the batches of aborted transactions listed in the "
    "fetch response (KIP-98 consumer filter; librdkafka #3020 class, Tansu). Symptom: aborted "
    "records reach the application (NoAbortedRead, G1a).",
)

NO_PRODUCE_EPOCH_FENCING = _TABLE.add(
    "no-produce-epoch-fencing",
    "The partition leader does not check the producer epoch on produce (the fencing of KIP-98, "
    "INVALID_PRODUCER_EPOCH since KIP-588). Symptom: a fenced zombie producer's write is appended "
    "(NoZombieCommit).",
)

NO_VERIFICATION = _TABLE.add(
    "no-verification",
    "The partition leader appends a transactional batch without asking the coordinator whether "
    "the partition is in the transaction, as before KIP-890 part 1 (3.6; KAFKA-14402). Symptom: "
    "a late produce after an abort starts a transaction nobody ends, the LSO is stuck "
    "(NoHangingTransaction).",
)

LATE_ENDTXN_NEXT_TXN = _TABLE.add(
    "late-endtxn-next-txn",
    "With transaction version 2 the coordinator accepts an EndTxn whose epoch is one below the "
    "current one as current even when a new transaction is Ongoing (KAFKA-17754, found by "
    "Jepsen; the hole KIP-890 part 2 closes). Symptom: a delayed EndTxn of the previous "
    "transaction commits or aborts the next one (TxnAtomicity, lost writes, aborted reads).",
    config={"transaction_version": 2},
)

STALE_COORDINATOR_EPOCH_MARKER = _TABLE.add(
    "stale-coordinator-epoch-marker",
    "The partition accepts a WriteTxnMarkers from a coordinator epoch older than the one it "
    "stored (TRANSACTION_COORDINATOR_FENCED, KIP-98 coordinator fencing; kafka-facts §1.8). "
    "Symptom: a delayed marker of a deposed coordinator ends a later transaction.",
)

TXN_OFFSETS_VISIBLE_EARLY = _TABLE.add(
    "txn-offsets-visible-early",
    "TxnOffsetCommit offsets are committed at once instead of pending until the COMMIT marker "
    "(KIP-98 transactional offsets; KIP-447 require_stable). Symptom: OffsetFetch returns offsets "
    "of an open or later aborted transaction (NoUncommittedOffsetRead).",
)

FAILOVER_FORGETS_PREPARE = _TABLE.add(
    "failover-forgets-prepare",
    "A coordinator loading __transaction_state does not re-send markers for transactions found "
    "in PrepareCommit/PrepareAbort (KIP-98 coordinator failover; "
    "TransactionStateManager.loadTransactionsForTxnTopicPartition). Symptom: the transaction "
    "never completes, its partitions' LSO is stuck (NoHangingTransaction).",
)

EPOCH_OVERFLOW = _TABLE.add(
    "epoch-overflow",
    "At producer epoch 32766 InitProducerId bumps the epoch to 32767 instead of rotating the "
    "producer id (the overflow handling of KIP-360; 32767 is reserved for fencing, "
    "kafka-facts §1.3). Symptom: the producer holds the fencing epoch; it can no longer be fenced.",
)

DELAYED_FETCH_DROPS_ISOLATION = _TABLE.add(
    "delayed-fetch-drops-isolation",
    "A parked read_committed Fetch loses its isolation level in the purgatory: DelayedFetch counts "
    "and reads up to the high watermark instead of the last stable offset, as in KAFKA-5355 "
    "(0.11.0, Blocker: the broker returned messages beyond the LSO to read_committed consumers "
    "because the isolation level was not propagated to the delayed fetch). Symptom: a delayed "
    "fetch completes with records of an open transaction and no aborted list (its answer differs "
    "from the model's TXN_COMMITTED read; DelayedFetchIsolation, NoUncommittedRead). Needs waiting "
    "consumer fetches (fetch_max_wait_ms > 0).",
    config={"fetch_max_wait_ms": 5000},
)

MUTANTS: dict[str, str] = _TABLE.descriptions
"""Name → description, in the order the gate's self-check runs them."""

MUTANT_CONFIG: dict[str, dict[str, int | bool]] = _TABLE.configs
"""Configuration a mutant needs to be observable at all, as field overrides of its slice's config.

``late-endtxn-next-txn`` breaks a rule that exists only with transaction version 2 (KIP-890 part 2's
epoch bump on every EndTxn): under TV0 the late EndTxn ending the next transaction is Kafka's own
behaviour (KAFKA-17754, classified allowed), so the mutant is the reference there. The gate's
``--self-check`` runs each mutant's campaign (zoo, random search and replay) with the gate's config
updated by these overrides (``config_for``); every other mutant runs with the gate's config."""
