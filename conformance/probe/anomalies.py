"""The anomaly catalogue of the probe checker: Jepsen's Kafka-workload names, what each means, why
Kafka forbids it, and which configuration permits it.

Names follow jepsen.tests.kafka (Jepsen's Kafka workload, /work/shared/prior-art.md §1.3) so results
read like published Jepsen reports; the rows that Jepsen does not have are marked "kconform".
A :class:`Finding` is one instance with its minimal witness operations; :class:`FindingLog` counts
every instance and keeps the first few of each kind (a 10M-operation history may hold millions of
allowed ones).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Anomaly:
    """One anomaly class: ``name``, what it ``means`` (the guarantee it breaks), the Kafka source
    that states the guarantee (``cite``) and which configuration permits it (``allowed_by``)."""

    name: str
    means: str
    cite: str
    allowed_by: str


ANOMALIES: dict[str, Anomaly] = {
    a.name: a
    for a in (
        Anomaly(
            "lost-write",
            "an acknowledged write (a send acked with an offset, or a record of a committed transaction) was never "
            "read, although a consumer read across its offset",
            "KIP-98 / Kafka's acks=all contract (ProducerConfig acks; ReplicaManager.appendRecords waits for the ISR)",
            "acks=0 or acks=1 writes; unclean.leader.election.enable; volatile_storage (a restart loses data)",
        ),
        Anomaly(
            "non-atomic-txn",
            "part of a committed transaction was read and another of its records was not, although a consumer read "
            "across that record's offset (a torn transaction)",
            "KIP-98 (a transaction's writes to several partitions are all visible or none)",
            "unclean.leader.election.enable; volatile_storage",
        ),
        Anomaly(
            "inconsistent-offsets",
            "two different values at one offset of a partition (from acknowledgements and reads)",
            "the log is append-only: one record per offset (UnifiedLog; Jepsen kafka.clj analysis 2)",
            "unclean.leader.election.enable; volatile_storage; or only one of the values was ever read and the "
            "others were acknowledged by an acks=0/1 send (the leader acked and lost them before they replicated)",
        ),
        Anomaly(
            "duplicate",
            "one value at more than one offset (written twice, or acknowledged at one offset and read at another)",
            "KIP-98 idempotent producer: a retried batch is deduplicated by (producer id, epoch, sequence)",
            "sends of a non-idempotent producer (retries may write a batch twice)",
        ),
        Anomaly(
            "G1a",
            "aborted read: a value of an aborted transaction read by a read_committed consumer, or a value of a "
            "send that definitely failed read by anyone",
            "KIP-98 read_committed (Fetch isolation TXN_COMMITTED; CompletedFetch skips aborted batches)",
            "read_uncommitted consumers may read aborted transactional data (Kafka's isolation.level default)",
        ),
        Anomaly(
            "precommitted-read",
            "a read_committed consumer read a record of a transaction before that transaction could have committed "
            "(the poll returned before the transaction began)",
            "KIP-98 read_committed: records become visible at the LSO, which passes a transaction only after its "
            "commit marker",
            "never",
        ),
        Anomaly(
            "future-read",
            "a consumer read a value before the send that writes it began (kconform)",
            "causality: a record exists only after its produce request",
            "never",
        ),
        Anomaly(
            "garbage-read",
            "a consumer read a value no operation of the history wrote (Elle's garbage read; also data left in the "
            "topic by another run)",
            "the log holds only what producers wrote",
            "never",
        ),
        Anomaly(
            "poll-skip",
            "a consumer's successive polls of a partition skipped over a record it should have seen (a value read "
            "or acknowledged at an offset in between, visible in the consumer's isolation level)",
            "KafkaConsumer: each poll continues at the position after the last returned record",
            "subscribe mode (a rebalance may hand the partition to another member, who consumes what this one "
            "skips); unclean.leader.election.enable; volatile_storage",
        ),
        Anomaly(
            "nonmonotonic-poll",
            "a consumer's successive polls of a partition went backwards (read an offset at or below one it had "
            "already read or passed) without a seek or assign in between",
            "KafkaConsumer: positions only move forward unless seek() is called",
            "subscribe mode (a rebalance restarts from the last committed offset: at-least-once redelivery); "
            "unclean.leader.election.enable; volatile_storage (a truncated log resets positions, KIP-320)",
        ),
        Anomaly(
            "int-poll-skip",
            "within one poll, the records of a partition skip over a record the consumer should have seen",
            "a fetch returns a contiguous run of the log (control records and, under read_committed, aborted "
            "batches are the only records filtered: CompletedFetch)",
            "never",
        ),
        Anomaly(
            "int-nonmonotonic-poll",
            "within one poll, the records of a partition are not in increasing offset order",
            "a fetch returns the log in offset order",
            "never",
        ),
        Anomaly(
            "nonmonotonic-send",
            "a producer's later send to a partition got a lower offset than its earlier acknowledged send",
            "appends are ordered: a record produced after another was acknowledged lands after it",
            "acks=0/1 writes, unclean.leader.election.enable, volatile_storage (a truncated log reuses offsets)",
        ),
        Anomaly(
            "int-nonmonotonic-send",
            "within one send (or transaction), records to one partition got offsets out of their send order",
            "KIP-98: the idempotent producer keeps order per partition (max.in.flight <= 5 with sequences)",
            "non-idempotent sends (with retries and several requests in flight a batch may overtake another)",
        ),
        Anomaly(
            "zombie-commit",
            "a producer fenced by a newer InitProducerId of the same transactional.id still committed a "
            "transaction (its commit succeeded, or read_committed consumers read it)",
            "KIP-98 zombie fencing: InitProducerId bumps the epoch; the old epoch gets PRODUCER_FENCED / "
            "INVALID_PRODUCER_EPOCH (TransactionCoordinator.handleInitProducerId)",
            "never",
        ),
        Anomaly(
            "txn-offsets-visible-early",
            "consumer offsets sent with a transaction (sendOffsetsToTransaction) were fetched before the "
            "transaction began, or although the transaction aborted",
            "KIP-447 / GroupMetadata: transactional offsets stay pending until the commit marker; abort drops them",
            "never",
        ),
        Anomaly(
            "lost-offset-commit",
            "a consumer group's offset fetch returned an offset that a later commit (completed before the fetch "
            "began) had replaced, or nothing although a commit had completed (kconform; groups of subscribe-mode "
            "consumers, which may auto-commit, are not judged)",
            "OffsetCommit is durable (written with acks=all to __consumer_offsets; GroupMetadataManager); the "
            "latest committed offset wins",
            "unclean.leader.election.enable; volatile_storage",
        ),
        Anomaly(
            "delivery-duplicate",
            "a consumer group's application processed one record more than once (kconform; history version 2, "
            "config.delivery)",
            "KafkaConsumer resumes at the committed offset (ConsumerCoordinator); KIP-98 / KIP-447 "
            "consume-transform-produce commits outputs and offsets atomically",
            "commit after processing (at-least-once) when the member crashed before committing the record; "
            "auto-commit when the member crashed within the interval (plus twice its longest poll gap) after "
            "processing it; unclean.leader.election.enable; volatile_storage",
        ),
        Anomaly(
            "delivery-loss",
            "a consumer group committed an offset past a record its application never processed (kconform; "
            "history version 2, config.delivery)",
            "KafkaConsumer resumes at the committed offset: what lies below it is never delivered again",
            "commit before processing (at-most-once) when the member crashed after committing and before "
            "processing; auto-commit when it crashed within the interval (plus twice its longest poll gap) after "
            "the record's delivery; unclean.leader.election.enable; volatile_storage",
        ),
        Anomaly(
            "unseen",
            "an acknowledged write that no consumer read and no consumer read across: lost or merely not read yet "
            "(Jepsen's unseen); counted, never a failure",
            "Jepsen kafka.clj analysis 'unseen'",
            "always (cannot be told from a write not yet read)",
        ),
    )
}
"""Every anomaly the checker reports, by name."""


@dataclass(frozen=True)
class Finding:
    """One anomaly instance: its ``name`` (a key of ANOMALIES), a one-line ``explanation`` with the
    concrete values and offsets, the minimal ``witnesses`` (line numbers ``i`` of the operations'
    completions, or invocations when they never completed), the ``partition`` it is about, and
    whether the history's configuration ``allowed`` it (and ``why``)."""

    name: str
    explanation: str
    witnesses: tuple[int, ...]
    partition: str | None = None
    allowed: bool = False
    why: str = ""

    def __post_init__(self) -> None:
        assert self.name in ANOMALIES, f"unknown anomaly {self.name!r}"
        assert self.witnesses, "a finding has at least one witness operation"


@dataclass
class FindingLog:
    """Every finding counted by (name, allowed); the first ``keep`` of each kept in full."""

    keep: int = 20
    counts: dict[tuple[str, bool], int] = field(default_factory=dict)
    kept: dict[tuple[str, bool], list[Finding]] = field(default_factory=dict)

    def add(self, finding: Finding) -> None:
        key = (finding.name, finding.allowed)
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        if n < self.keep:
            self.kept.setdefault(key, []).append(finding)

    def count(self, name: str, allowed: bool | None = None) -> int:
        if allowed is None:
            return self.counts.get((name, False), 0) + self.counts.get((name, True), 0)
        return self.counts.get((name, allowed), 0)

    def violations(self) -> int:
        """Instances the configuration does not allow."""
        return sum(n for (_, allowed), n in self.counts.items() if not allowed)

    def findings(self) -> Iterator[Finding]:
        """The kept findings: not-allowed ones first, then by catalogue order."""
        order = list(ANOMALIES)
        for key in sorted(self.kept, key=lambda k: (k[1], order.index(k[0]))):
            yield from self.kept[key]
