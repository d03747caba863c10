"""Known protocol bugs the reference brokers can be switched into, by name.

Each mutant is a small branch in the broker code guarded by ``runtime.mutant(NAME)``. The
docstrings name the KIP or Kafka issue that fixed the bug and the symptom a checker should see.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TypeVar, cast

TRUNCATE_TO_HW = "truncate-to-hw"
KIP_101_TRUNCATION = "kip-101-truncation"
NO_EPOCH_FENCING = "no-epoch-fencing"
HW_BELOW_MIN_ISR = "hw-below-min-isr"
EARLY_ISR_EXPAND = "early-isr-expand"
HW_IGNORES_PENDING_ISR = "hw-ignores-pending-isr"
ACKS_ALL_NO_WAIT = "acks-all-no-wait"

# The exactly-once slice (impl/txn_*.py): each a branch guarded by ``TxnWorld.mutant(NAME)``.
NO_SEQUENCE_DEDUP = "no-sequence-dedup"
SMALL_DEDUP_WINDOW = "small-dedup-window"
LSO_IGNORES_ONGOING = "lso-ignores-ongoing"
LSO_OFF_BY_ONE = "lso-off-by-one"
NO_ABORTED_FILTER = "no-aborted-filter"
NO_PRODUCE_EPOCH_FENCING = "no-produce-epoch-fencing"
NO_VERIFICATION = "no-verification"
LATE_ENDTXN_NEXT_TXN = "late-endtxn-next-txn"
STALE_COORDINATOR_EPOCH_MARKER = "stale-coordinator-epoch-marker"
TXN_OFFSETS_VISIBLE_EARLY = "txn-offsets-visible-early"
FAILOVER_FORGETS_PREPARE = "failover-forgets-prepare"
EPOCH_OVERFLOW = "epoch-overflow"

REPLICATION = "replication"
TXN = "txn"

C = TypeVar("C")

MUTANTS: dict[str, str] = {
    TRUNCATE_TO_HW: (
        "A new follower (and a restarted broker becoming follower) truncates to its local HW instead "
        "of following the configured protocol: pre-KIP-101 (< 0.11) behaviour. Symptom: a follower "
        "whose HW lagged drops committed records and can later lead without them (KIP-101 data loss "
        "scenario 1), or keeps divergent records above the HW (scenario 2)."
    ),
    KIP_101_TRUNCATION: (
        "On a diverging epoch or an OffsetsForLeaderEpoch answer the follower truncates to "
        "min(leader end offset, LEO) without looking up its own end offset for that epoch: the hole "
        "KIP-279 (2.0) fixed. Symptom: after fast leader failovers the follower keeps records of an "
        "epoch the leader never had, so replicas diverge below the HW."
    ),
    NO_EPOCH_FENCING: (
        "The leader ignores currentLeaderEpoch on follower fetches, epoch queries and consumer "
        "fetches (pre-KIP-320, < 2.1). Symptom: a broker in a stale or newer epoch answers instead of "
        "FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, so a zombie leader keeps serving."
    ),
    HW_BELOW_MIN_ISR: (
        "The leader advances the HW while the ISR is smaller than min.insync.replicas (before "
        "KAFKA-15583, 3.7). Symptom: records written with acks=1 become committed (visible to "
        "consumers) with fewer than min.insync.replicas copies."
    ),
    EARLY_ISR_EXPAND: (
        "ISR expansion does not wait for the follower to reach the start offset of the leader's "
        "current epoch (KAFKA-7128; hachikuji kafka-specification Kip320 note 4). Symptom: a follower "
        "joins the ISR while still holding records of an older epoch that the leader may truncate "
        "away, so an ISR member can lack committed records."
    ),
    HW_IGNORES_PENDING_ISR: (
        "The leader computes the HW over the committed ISR only: a follower whose ISR expansion is "
        "pending (KIP-497 maximal ISR) or that is caught up but not yet a member is not waited for. "
        "Symptom: the HW passes an offset that a replica the controller is about to add to the ISR "
        "does not have; once the expansion commits, an ISR member lacks committed records."
    ),
    ACKS_ALL_NO_WAIT: (
        "The leader answers acks=all (-1) with NONE right after the local append instead of waiting "
        "in the produce purgatory (DelayedProduce) for the HW to pass the record (kafka-facts §3.4, §6; "
        "the guarantee KIP-679 made the producer default in 3.0). Symptom: an acknowledged record is "
        "lost when the leader fails before the followers fetched it."
    ),
    NO_SEQUENCE_DEDUP: (
        "The partition leader ignores producer sequence numbers: no duplicate check, no sequence "
        "validation, as every broker before idempotence (KIP-98, 0.11). Symptom: a retried or "
        "duplicated produce request is appended twice (NoDuplicateAppends)."
    ),
    SMALL_DEDUP_WINDOW: (
        "The producer state caches only the last batch, as 0.11 did; KAFKA-5494 (1.0) keeps the last "
        "5 so that every in-flight request (max.in.flight 5) can be recognised as a duplicate. "
        "Symptom: a duplicate of an older in-flight batch is rejected with OUT_OF_ORDER_SEQUENCE_NUMBER "
        "instead of answered with its original offset."
    ),
    LSO_IGNORES_ONGOING: (
        "The last stable offset is the high watermark: open transactions do not hold it back "
        "(Redpanda #3036; kafka-facts §4, KIP-98's LSO). Symptom: a read_committed consumer reads "
        "records of a transaction that is still open (NoUncommittedRead, LsoBounds)."
    ),
    LSO_OFF_BY_ONE: (
        "The last stable offset is one past the first unstable offset (KIP-98 LSO computed off by "
        "one, the class of Redpanda #3036). Symptom: read_committed returns the first record of an "
        "open transaction (NoUncommittedRead, LsoBounds)."
    ),
    NO_ABORTED_FILTER: (
        "The read_committed consumer does not skip the batches of aborted transactions listed in the "
        "fetch response (KIP-98 consumer filter; librdkafka #3020 class, Tansu). Symptom: aborted "
        "records reach the application (NoAbortedRead, G1a)."
    ),
    NO_PRODUCE_EPOCH_FENCING: (
        "The partition leader does not check the producer epoch on produce (the fencing of KIP-98, "
        "INVALID_PRODUCER_EPOCH since KIP-588). Symptom: a fenced zombie producer's write is appended "
        "(NoZombieCommit)."
    ),
    NO_VERIFICATION: (
        "The partition leader appends a transactional batch without asking the coordinator whether "
        "the partition is in the transaction, as before KIP-890 part 1 (3.6; KAFKA-14402). Symptom: "
        "a late produce after an abort starts a transaction nobody ends, the LSO is stuck "
        "(NoHangingTransaction)."
    ),
    LATE_ENDTXN_NEXT_TXN: (
        "With transaction version 2 the coordinator accepts an EndTxn whose epoch is one below the "
        "current one as current even when a new transaction is Ongoing (KAFKA-17754, found by "
        "Jepsen; the hole KIP-890 part 2 closes). Symptom: a delayed EndTxn of the previous "
        "transaction commits or aborts the next one (TxnAtomicity, lost writes, aborted reads)."
    ),
    STALE_COORDINATOR_EPOCH_MARKER: (
        "The partition accepts a WriteTxnMarkers from a coordinator epoch older than the one it "
        "stored (TRANSACTION_COORDINATOR_FENCED, KIP-98 coordinator fencing; kafka-facts §1.8). "
        "Symptom: a delayed marker of a deposed coordinator ends a later transaction."
    ),
    TXN_OFFSETS_VISIBLE_EARLY: (
        "TxnOffsetCommit offsets are committed at once instead of pending until the COMMIT marker "
        "(KIP-98 transactional offsets; KIP-447 require_stable). Symptom: OffsetFetch returns offsets "
        "of an open or later aborted transaction (NoUncommittedOffsetRead)."
    ),
    FAILOVER_FORGETS_PREPARE: (
        "A coordinator loading __transaction_state does not re-send markers for transactions found "
        "in PrepareCommit/PrepareAbort (KIP-98 coordinator failover; "
        "TransactionStateManager.loadTransactionsForTxnTopicPartition). Symptom: the transaction "
        "never completes, its partitions' LSO is stuck (NoHangingTransaction)."
    ),
    EPOCH_OVERFLOW: (
        "At producer epoch 32766 InitProducerId bumps the epoch to 32767 instead of rotating the "
        "producer id (the overflow handling of KIP-360; 32767 is reserved for fencing, "
        "kafka-facts §1.3). Symptom: the producer holds the fencing epoch; it can no longer be fenced."
    ),
}

TXN_MUTANT_NAMES = frozenset(
    {
        NO_SEQUENCE_DEDUP,
        SMALL_DEDUP_WINDOW,
        LSO_IGNORES_ONGOING,
        LSO_OFF_BY_ONE,
        NO_ABORTED_FILTER,
        NO_PRODUCE_EPOCH_FENCING,
        NO_VERIFICATION,
        LATE_ENDTXN_NEXT_TXN,
        STALE_COORDINATOR_EPOCH_MARKER,
        TXN_OFFSETS_VISIBLE_EARLY,
        FAILOVER_FORGETS_PREPARE,
        EPOCH_OVERFLOW,
    }
)
SLICE_OF: dict[str, str] = {name: TXN if name in TXN_MUTANT_NAMES else REPLICATION for name in MUTANTS}
"""The slice each mutant belongs to: ``replication`` (impl/cluster.py) or ``txn`` (impl/txn_cluster.py)."""


MUTANT_CONFIG: dict[str, dict[str, int | bool]] = {
    LATE_ENDTXN_NEXT_TXN: {"transaction_version": 2},
}
"""Configuration a mutant needs to be observable at all, as field overrides of its slice's config.

``late-endtxn-next-txn`` breaks a rule that exists only with transaction version 2 (KIP-890 part 2's
epoch bump on every EndTxn): under TV0 the late EndTxn ending the next transaction is Kafka's own
behaviour (KAFKA-17754, classified allowed), so the mutant is the reference there. The gate's
``--self-check`` runs each mutant's campaign (zoo, random search and replay) with the gate's config
updated by these overrides (``config_for``); every other mutant runs with the gate's config."""


def config_for(name: str, config: C) -> C:
    """``config`` with mutant ``name``'s MUTANT_CONFIG overrides applied (a copy of the frozen
    dataclass); ``config`` itself when the mutant needs none or the config has none of the fields
    (another slice's config)."""
    overrides = MUTANT_CONFIG.get(name, {})
    if not overrides or not dataclasses.is_dataclass(config) or isinstance(config, type):
        return config
    known = {f.name for f in dataclasses.fields(config)}
    applicable = {key: value for key, value in overrides.items() if key in known}
    return cast(C, dataclasses.replace(config, **applicable)) if applicable else config


def mutants_of(slice_name: str) -> dict[str, str]:
    """The mutants of one slice (name → description), in registry order."""
    return {name: doc for name, doc in MUTANTS.items() if SLICE_OF[name] == slice_name}


def check_mutants(names: Iterable[str], slice_name: str | None = None) -> frozenset[str]:
    """The mutant names as a frozenset; a name unknown (to ``slice_name``, when given) raises
    ValueError listing the known ones."""
    chosen = frozenset(names)
    known = MUTANTS if slice_name is None else mutants_of(slice_name)
    unknown = sorted(chosen - set(known))
    if unknown:
        raise ValueError(f"unknown mutant(s) {unknown}; known mutants: {sorted(known)}")
    return chosen
