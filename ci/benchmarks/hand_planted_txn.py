"""The exactly-once gate's power against hand-planted bugs (issue 17, acceptance: "unseen bugs will
be planted in the reference implementation"): 44 small bugs a Kafka developer makes in impl/txn
(partition log, broker, coordinator, clients), none of them a named mutant nor a mechanical
operator of ``ci.mutation.operators``.

Run: ``python -m kconform.ci.benchmarks.hand_planted_txn [--examples 200] [--seed 1]
[--timeout 900] [--only NAME ...] [--out planted.json]``.

Each plant is put in place of the reference's function in a child process (``ci.mutation.planted``),
which runs the exactly-once gate's two configurations of ``kconform gate --slice all`` (TV0; TV2 with
waiting consumers, ``--set transaction_version=2 --set fetch_max_wait_ms=5000``) at ``--examples``
runs each (the zoo first) and exits with the gate's code: 1 killed, 0 survived. The table lists
every plant with its verdict per configuration, then the score (killed by either configuration) and
the plants left alive. Machine, date and load are printed with it. A census of 2026-11-27 (seed 1,
200 examples): 21 / 36 of the first 36 killed on ce58386, 34 / 36 after the zoo scenarios of
tests/test_txn_zoo_boundaries.py (docs/transactions.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kconform.ci.exitcodes import EXIT_ERROR
from kconform.ci.mutation import census
from kconform.ci.mutation.planted import Plant

MODULE = "kconform.ci.benchmarks.hand_planted_txn"
GATES: dict[str, tuple[str, ...]] = {
    "txn-tv0": (),
    "txn-tv2": ("transaction_version=2", "fetch_max_wait_ms=5000"),
}
"""The exactly-once configurations of ``--slice all`` (conformance.txn.slice.GATE_CONFIGS), as ``--set``."""

PLANTS: tuple[Plant, ...] = (
    Plant(
        "lso-latest-open-txn",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "lso",
        "    first_unstable = min(unstable)\n",
        "    first_unstable = max(unstable)\n",
        (
            "LSO from the latest first-unstable offset, not the earliest"
            " (UnifiedLog.lastStableOffset: the earliest first-unstable offset, KIP-98)"
        ),
    ),
    Plant(
        "aborted-list-marker-boundary",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "fetch",
        "        if a.last_offset >= fetch_offset and a.first_offset < bound\n",
        "        if a.last_offset > fetch_offset and a.first_offset < bound\n",
        (
            "aborted-txn list drops an entry whose marker is at the fetch offset"
            " (TransactionIndex.collectAbortedTxns: lastOffset >= fetchOffset)"
        ),
    ),
    Plant(
        "lso-ignores-unreplicated-markers",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "lso",
        "    unstable += [first for first, _ in self.unreplicated]\n",
        "",
        (
            "LSO forgets completed txns whose marker is not yet below the HW"
            " (ProducerStateManager's unreplicated transactions, UnifiedLog.lastStableOffset)"
        ),
    ),
    Plant(
        "new-epoch-any-sequence",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "_sequence_ok",
        "        return entry.epoch == -1 or base_seq == 0\n",
        "        return True\n",
        (
            "a bumped epoch does not require sequence 0 (ProducerAppendInfo.checkSequence: a"
            " new epoch starts at 0, KIP-98)"
        ),
    ),
    Plant(
        "client-epoch-bump-keeps-sequences",
        "txn",
        "kconform.impl.txn.clients:TxnProducer",
        "_on_init",
        ("    self.pid, self.epoch = p.pid, p.epoch\n    self.partitions = {}\n"),
        "    self.pid, self.epoch = p.pid, p.epoch\n",
        (
            "producer keeps its sequence numbers across an InitProducerId epoch bump"
            " (TransactionManager.bumpIdempotentProducerEpoch resets sequences, KIP-360)"
        ),
    ),
    Plant(
        "sequence-gap-of-one-accepted",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "_sequence_ok",
        ("    return base_seq == last_seq + 1 or (base_seq == 0 and last_seq == INT32_MAX)\n"),
        ("    return last_seq < base_seq <= last_seq + 2 or (base_seq == 0 and last_seq == INT32_MAX)\n"),
        (
            "sequence check accepts seq+2 (a one-batch gap)"
            " (ProducerAppendInfo.checkSequence: OUT_OF_ORDER_SEQUENCE_NUMBER)"
        ),
    ),
    Plant(
        "endtxn-commit-in-complete-abort-ok",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_end_by_state",
        ("    if meta.state == done:\n        return NONE\n"),
        ("    if meta.state in COMPLETE:\n        return NONE\n"),
        (
            "EndTxn(commit) retried after CompleteAbort answered NONE"
            " (TransactionCoordinator.handleEndTransaction: INVALID_TXN_STATE)"
        ),
    ),
    Plant(
        "endtxn-commit-in-prepare-abort-concurrent",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_end_by_state",
        ("    if meta.state == same:\n        return CONCURRENT_TRANSACTIONS\n"),
        ("    if meta.state in PREPARE:\n        return CONCURRENT_TRANSACTIONS\n"),
        (
            "EndTxn(commit) in PrepareAbort answered CONCURRENT_TRANSACTIONS (retry) instead"
            " of INVALID_TXN_STATE (TransactionCoordinator.handleEndTransaction:"
            " INVALID_TXN_STATE)"
        ),
    ),
    Plant(
        "complete-before-all-markers",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "handle_marker_response",
        ("        del meta.markers[partition]\n        if not meta.markers:\n"),
        ("        del meta.markers[partition]\n        if len(meta.markers) <= 1:\n"),
        (
            "Complete* written while one marker is still unacknowledged"
            " (TransactionMarkerChannelManager: Complete* once every marker is acknowledged)"
        ),
    ),
    Plant(
        "add-partitions-fast-path-before-epoch",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_add",
        (
            "    if epoch != meta.epoch:\n"
            "        return PRODUCER_FENCED, meta.state\n"
            "    if meta.state in PREPARE:\n"
            "        return CONCURRENT_TRANSACTIONS, meta.state\n"
            "    if meta.state == ONGOING and partitions <= meta.partitions:\n"
            "        return NONE, meta.state\n"
        ),
        (
            "    if meta.state == ONGOING and partitions <= meta.partitions:\n"
            "        return NONE, meta.state\n"
            "    if epoch != meta.epoch:\n"
            "        return PRODUCER_FENCED, meta.state\n"
            "    if meta.state in PREPARE:\n"
            "        return CONCURRENT_TRANSACTIONS, meta.state\n"
        ),
        (
            "AddPartitions of an already-added partition answered NONE before the epoch"
            " check (fenced epoch accepted)"
            " (TransactionCoordinator.handleAddPartitionsToTransaction: epoch first)"
        ),
    ),
    Plant(
        "init-pid-ongoing-abort-no-bump",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_init_pid",
        (
            "        meta.last_epoch, meta.epoch = -1, meta.epoch + 1  #"
            " prepareFenceProducerEpoch\n"
            "        self._prepare(req.txn_id, meta, commit=False)\n"
        ),
        "        self._prepare(req.txn_id, meta, commit=False)\n",
        (
            "InitProducerId aborting an Ongoing txn does not bump the epoch"
            " (TransactionMetadata.prepareFenceProducerEpoch, KIP-98 fencing)"
        ),
    ),
    Plant(
        "abort-keeps-pending-offsets",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "append_marker",
        "    pending = self.pending_offsets.pop(pid, {})\n",
        "    pending = self.pending_offsets.pop(pid, {}) if commit else {}\n",
        (
            "ABORT marker leaves the txn's pending offsets (materialised by a later commit)"
            " (GroupMetadata.completePendingTxnOffsetCommit drops them on ABORT, KIP-98)"
        ),
    ),
    Plant(
        "timeout-from-last-update",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_abort_timed_out",
        "        if meta.state == ONGOING and meta.start_ms + meta.timeout_ms < now_ms:\n",
        ("        if meta.state == ONGOING and meta.last_update_ms + meta.timeout_ms < now_ms:\n"),
        (
            "txn timeout measured from the last state change, not the txn start"
            " (TransactionStateManager.timedOutTransactions: txnStartTimestamp)"
        ),
    ),
    Plant(
        "verification-skipped-for-known-producer",
        "txn",
        "kconform.impl.txn.broker:TxnBroker",
        "_on_produce",
        "        and not log.has_ongoing(req.pid)\n",
        "        and req.pid not in log.producers\n",
        (
            "KIP-890 verification skipped when the partition knows the producer"
            " (UnifiedLog.maybeStartTransactionVerification, KIP-890 part 1)"
        ),
    ),
    Plant(
        "failover-resends-only-commit",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "load",
        ("            if meta.state in PREPARE:\n                self._send_markers(txn_id, meta)\n"),
        ("            if meta.state == PREPARE_COMMIT:\n                self._send_markers(txn_id, meta)\n"),
        (
            "coordinator load re-sends markers of PrepareCommit only (PrepareAbort lost)"
            " (TransactionStateManager.loadTransactionsForTxnTopicPartition)"
        ),
    ),
    Plant(
        "expiry-removes-ongoing-producer",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "expire_producers",
        ("        if e.txn_first_offset < 0 and self.world.now_ms - e.last_timestamp_ms >= limit\n"),
        "        if self.world.now_ms - e.last_timestamp_ms >= limit\n",
        (
            "producer-state expiry removes a producer with an open transaction"
            " (ProducerStateManager.isProducerExpired, KIP-854)"
        ),
    ),
    Plant(
        "epoch-bump-keeps-batch-metadata",
        "txn",
        "kconform.impl.txn.log:ProducerEntry",
        "set_epoch",
        ("    if epoch != self.epoch:\n        self.batches.clear()\n        self.epoch = epoch\n"),
        ("    if epoch != self.epoch:\n        self.epoch = epoch\n"),
        (
            "ProducerStateEntry keeps the old epoch's batch metadata on a bump"
            " (ProducerStateEntry.maybeUpdateProducerEpoch clears the batches)"
        ),
    ),
    Plant(
        "marker-clears-batches",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "append_marker",
        ("    entry.set_epoch(epoch)\n    entry.coordinator_epoch = coordinator_epoch\n"),
        ("    entry.set_epoch(epoch)\n    entry.batches.clear()\n    entry.coordinator_epoch = coordinator_epoch\n"),
        (
            "a same-epoch marker clears the cached batches (retry after commit not a"
            " duplicate) (ProducerAppendInfo.appendEndTxnMarker keeps the batch metadata)"
        ),
    ),
    Plant(
        "delayed-fetch-counts-from-fetch-offset",
        "txn",
        "kconform.impl.txn.broker:TxnBroker",
        "_fetch_ready",
        "    return op.start_offset > end or end - op.start_offset >= op.min_bytes\n",
        "    return op.fetch_offset > end or end - op.fetch_offset >= op.min_bytes\n",
        (
            "DelayedFetch counts bytes from the fetch offset, not from min(fetch offset,"
            " bound) (DelayedFetch.tryComplete: bytes from the read's start offset)"
        ),
    ),
    Plant(
        "verify-ongoing-any-partition",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "handle_verify",
        "    elif meta.state == ONGOING and req.partition in meta.partitions:\n",
        "    elif meta.state == ONGOING:\n",
        (
            "verification confirms any partition of an Ongoing txn, added or not"
            " (TransactionCoordinator.handleVerifyPartitionsInTransaction)"
        ),
    ),
    Plant(
        "timeout-abort-not-strict",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_abort_timed_out",
        "        if meta.state == ONGOING and meta.start_ms + meta.timeout_ms < now_ms:\n",
        "        if meta.state == ONGOING and meta.start_ms + meta.timeout_ms <= now_ms:\n",
        (
            "timedOutTransactions compares <= (aborts at exactly start + timeout)"
            " (TransactionStateManager.timedOutTransactions: start + timeout < now)"
        ),
    ),
    Plant(
        "verify-response-ignores-guard",
        "txn",
        "kconform.impl.txn.broker:TxnBroker",
        "_on_verify_response",
        (
            "        result = log.append_client(req.pid, req.epoch, req.base_seq, req.rids,"
            " req.transactional, waiting.guard)\n"
        ),
        ("        result = log.append_client(req.pid, req.epoch, req.base_seq, req.rids, req.transactional, None)\n"),
        (
            "a verified batch is appended without re-checking the verification guard (marker"
            " raced in) (UnifiedLog.analyzeAndValidateProducerState: VerificationGuard,"
            " KIP-890)"
        ),
    ),
    Plant(
        "verification-new-guard-each-time",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "start_verification",
        "    return entry.guard\n",
        ("    entry.guard = guard\n    return entry.guard\n"),
        (
            "every verification replaces the guard (an earlier pipelined batch's answer no"
            " longer matches) (UnifiedLog.maybeStartTransactionVerification keeps the"
            " entry's guard)"
        ),
    ),
    Plant(
        "add-resets-start-time",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_add",
        ("    if meta.state != ONGOING:\n        meta.start_ms = self.world.now_ms\n"),
        "    meta.start_ms = self.world.now_ms\n",
        (
            "every AddPartitions restarts the transaction's timeout clock"
            " (TransactionMetadata.prepareAddPartitions: start time only from Empty /"
            " Complete*)"
        ),
    ),
    Plant(
        "out-of-range-against-hw",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "fetch",
        "    if not 0 <= fetch_offset <= self.leo:\n",
        "    if not 0 <= fetch_offset <= self.hw:\n",
        (
            "fetch out-of-range check against the HW instead of the LEO (LocalLog.read:"
            " OffsetOutOfRangeException above the log end offset)"
        ),
    ),
    Plant(
        "init-timeout-max-exclusive",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_init_pid",
        "    if not 0 < req.timeout_ms <= cfg.transaction_max_timeout_ms:\n",
        "    if not 0 < req.timeout_ms < cfg.transaction_max_timeout_ms:\n",
        ("transaction.max.timeout.ms itself refused (TransactionCoordinator.validateTransactionTimeoutMs)"),
    ),
    Plant(
        "init-no-invalid-request-check",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_init_pid",
        (
            "    if (req.expected_pid == -1) != (req.expected_epoch == -1):\n"
            '        return INVALID_REQUEST, -1, -1, meta.state if meta else ""\n'
        ),
        "",
        (
            "InitProducerId with an expected pid but no epoch is not refused"
            " (TransactionCoordinator.handleInitProducerId: INVALID_REQUEST, KIP-360)"
        ),
    ),
    Plant(
        "txn-offset-commit-no-epoch-check",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "txn_offset_commit",
        (
            "    entry = self.producers.get(pid, ProducerEntry())\n"
            "    if epoch < entry.epoch:\n"
            "        return INVALID_PRODUCER_EPOCH, -1\n"
            "    base_offset = self.leo\n"
            "    pending"
        ),
        ("    entry = self.producers.get(pid, ProducerEntry())\n    base_offset = self.leo\n    pending"),
        (
            "TxnOffsetCommit of a fenced epoch accepted (ProducerAppendInfo epoch check on"
            " the offsets batch: INVALID_PRODUCER_EPOCH)"
        ),
    ),
    Plant(
        "fetch-wait-parks-on-error",
        "txn",
        "kconform.impl.txn.broker:TxnBroker",
        "_fetch_wait",
        "    parked = error == NONE and len(records) < req.min_bytes\n",
        "    parked = len(records) < req.min_bytes\n",
        (
            "a fetch answered with an error is parked anyway (ReplicaManager.fetchMessages:"
            " errorReadingData answers at once)"
        ),
    ),
    Plant(
        "marker-resets-coordinator-epoch-only-on-commit",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "append_marker",
        "    entry.coordinator_epoch = coordinator_epoch\n",
        ("    if commit:\n        entry.coordinator_epoch = coordinator_epoch\n"),
        (
            "an ABORT marker does not store its coordinator epoch"
            " (ProducerAppendInfo.appendEndTxnMarker: coordinator epoch of either marker)"
        ),
    ),
    Plant(
        "end-txn-v0-epoch-lower-only",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_end_txn_v0",
        (
            "    if req.epoch != meta.epoch:\n"
            "        return PRODUCER_FENCED, -1, -1, meta.state\n"
            "    error = self._end_by_state"
        ),
        (
            "    if req.epoch < meta.epoch:\n"
            "        return PRODUCER_FENCED, -1, -1, meta.state\n"
            "    error = self._end_by_state"
        ),
        ("TV0 EndTxn with a future epoch accepted (TransactionCoordinator.handleEndTransaction: PRODUCER_FENCED)"),
    ),
    Plant(
        "verify-prepare-abortable",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "handle_verify",
        ("    elif meta.state in PREPARE:\n        error = CONCURRENT_TRANSACTIONS\n"),
        "",
        (
            "verification during Prepare* answers TRANSACTION_ABORTABLE instead of"
            " CONCURRENT_TRANSACTIONS"
            " (TransactionCoordinator.handleVerifyPartitionsInTransaction:"
            " CONCURRENT_TRANSACTIONS)"
        ),
    ),
    Plant(
        "producer-expiry-strict",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "expire_producers",
        ("        if e.txn_first_offset < 0 and self.world.now_ms - e.last_timestamp_ms >= limit\n"),
        ("        if e.txn_first_offset < 0 and self.world.now_ms - e.last_timestamp_ms > limit\n"),
        ("producer expiry strict > instead of >= (ProducerStateManager.isProducerExpired: >=)"),
    ),
    Plant(
        "fetch-non-leader-empty",
        "txn",
        "kconform.impl.txn.broker:TxnBroker",
        "_on_fetch",
        "        error, hw, lso = NOT_LEADER_OR_FOLLOWER, -1, -1\n",
        "        error, hw, lso = NONE, -1, -1\n",
        (
            "a fetch to a non-leader answered NONE with no records"
            " (ReplicaManager.readFromLocalLog: NOT_LEADER_OR_FOLLOWER)"
        ),
    ),
    Plant(
        "offset-fetch-require-stable-ignored-for-committed",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "offset_fetch",
        "        if require_stable and (g, p) in pending:\n",
        ("        if require_stable and (g, p) in pending and (g, p) not in self.committed_offsets:\n"),
        (
            "require_stable answers the old committed offset while a new one is pending"
            " (OffsetMetadataManager.fetchAllOffsets: UNSTABLE_OFFSET_COMMIT, KIP-447)"
        ),
    ),
    Plant(
        "marker-keeps-verification",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "append_marker",
        ("    self.verifications.pop(pid, None)\n    self.producers[pid] = entry\n    pending"),
        ("    self.producers[pid] = entry\n    pending"),
        (
            "a marker does not clear the producer's verification entry (kafka-facts 1.9: any"
            " transactional batch, marker included, clears the verification entry)"
        ),
    ),
    Plant(
        "consumer-filter-first-offset-strict",
        "txn",
        "kconform.impl.txn.clients",
        "delivered_rids",
        "            while pending and pending[0].first_offset <= record.offset:\n",
        "            while pending and pending[0].first_offset < record.offset:\n",
        (
            "consumer starts skipping an aborted txn one record late (CompletedFetch's"
            " aborted-transaction filter, KIP-98)"
        ),
    ),
    Plant(
        "tv2-prepare-retry-current-epoch",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_end_txn_v2",
        ("    elif meta.state in PREPARE:\n        valid = retry_on_bump\n"),
        ("    elif meta.state in PREPARE:\n        valid = retry_on_bump or current\n"),
        (
            "TV2 EndTxn at the (bumped) current epoch accepted as a retry in Prepare*"
            " (TransactionCoordinator.handleEndTransaction under TV2, KIP-890 part 2)"
        ),
    ),
    Plant(
        "offset-fetch-pending-any-group",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "offset_fetch",
        ("    pending = {key for offsets in self.pending_offsets.values() for key in offsets}\n"),
        ("    pending = {key for offsets in list(self.pending_offsets.values())[:1] for key in offsets}\n"),
        (
            "require_stable looks at the first producer's pending offsets only"
            " (OffsetMetadataManager.fetchAllOffsets, KIP-447)"
        ),
        equivalent=(
            "the slice has one transactional id, so at most one producer id holds pending transactional"
            " offsets at a time (instances share the id and a rotated id's offsets were completed by"
            " its last marker): the first producer's pending offsets are all of them"
        ),
    ),
    Plant(
        "abort-index-lso-wrong",
        "txn",
        "kconform.impl.txn.log:TxnPartitionLog",
        "_stable_after",
        "    return min(others) if others else marker_offset + 1\n",
        "    return marker_offset + 1\n",
        ("aborted-index LSO ignores other open txns (ProducerStateManager.lastStableOffset(completedTxn))"),
        equivalent=(
            "AbortedEntry.last_stable_offset is written and never read (the fetch lists entries by firs"
            "t and last offset; Kafka uses it to stop the index search early)"
        ),
    ),
    Plant(
        "marker-response-stale-completes",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "handle_marker_response",
        ("    if meta is None or meta.state not in PREPARE or meta.markers.get(partition) != resp.msg:\n"),
        ("    if meta is None or meta.state not in PREPARE or partition not in meta.markers:\n"),
        (
            "a stale marker answer (older message) is taken for the current one"
            " (TransactionMarkerRequestCompletionHandler)"
        ),
    ),
    Plant(
        "hw-advance-no-delayed-completion",
        "txn",
        "kconform.impl.txn.broker:TxnBroker",
        "advance_hw",
        ("        self._complete_delayed_fetches(partition)  # LeaderHwChange.INCREASED: the LSO may move too\n"),
        "",
        (
            "an HW advance does not complete parked fetches (only their timeout does)"
            " (Partition.tryCompleteDelayedRequests on an HW increase)"
        ),
    ),
    Plant(
        "init-pid-prepare-not-concurrent",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_init_pid",
        (
            "    if meta.state in PREPARE:\n"
            "        return CONCURRENT_TRANSACTIONS, -1, -1, meta.state\n"
            "    if meta.state == ONGOING:"
        ),
        "    if meta.state == ONGOING:",
        (
            "InitProducerId during Prepare* bumps instead of CONCURRENT_TRANSACTIONS"
            " (TransactionCoordinator.prepareInitProducerIdTransit: CONCURRENT_TRANSACTIONS)"
        ),
    ),
    Plant(
        "empty-abort-no-bump",
        "txn",
        "kconform.impl.txn.coordinator:TxnCoordinator",
        "_empty_abort",
        (
            "    meta.last_epoch, meta.epoch = meta.epoch, meta.epoch + 1\n"
            "    meta.partitions = set()\n"
            "    meta.start_ms = self.world.now_ms\n"
        ),
        ("    meta.partitions = set()\n    meta.start_ms = self.world.now_ms\n"),
        ("TV2 empty abort does not bump the epoch (TV2 empty abort bumps the epoch, KIP-890 part 2)"),
    ),
)
BY_NAME = {p.name: p for p in PLANTS}


def child(name: str, gate: str, examples: int, seed: int, out: str) -> int:
    """Plant ``name`` in this process and run the txn gate under ``gate``; the gate's exit code."""
    argv = ["gate", "--slice", "txn", "--examples", str(examples), "--seed", str(seed)]
    argv += [arg for setting in GATES[gate] for arg in ("--set", setting)]
    return census.gate_child("hand_planted_txn", BY_NAME[name], argv, out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--gate", choices=sorted(GATES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.gate or "txn-tv0", args.examples, args.seed, str(args.out or "kconform-out"))
    unknown = [n for n in args.only if n not in BY_NAME]
    if unknown:
        print(f"hand_planted_txn: --only: unknown plants {unknown}", file=sys.stderr)
        return EXIT_ERROR
    chosen = [p for p in PLANTS if not args.only or p.name in args.only]
    console = Console()
    table = Table(title=f"hand-planted exactly-once bugs, gate --examples {args.examples} --seed {args.seed}")
    for column in ("plant", *GATES, "s"):
        table.add_column(column)
    results: dict[str, dict[str, str]] = {}
    for p in chosen:
        row: dict[str, str] = {}
        seconds = 0.0
        for gate in GATES:  # stop at the first configuration that kills it
            verdict, took = census.run_one(MODULE, p, gate, args.examples, args.seed, args.timeout)
            row[gate], seconds = verdict, seconds + took
            if verdict == "killed":
                break
        results[p.name] = row
        table.add_row(p.name, *(row.get(g, "-") for g in GATES), f"{seconds:.1f}")
    console.print(table)
    counted = [p for p in chosen if not p.equivalent]
    killed = [p for p in counted if "killed" in results[p.name].values()]
    census.print_score(console, counted, killed, after=f" ({len(chosen) - len(counted)} argued)")
    console.print(census.machine())
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
