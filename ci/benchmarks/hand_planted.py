"""The gate's power against hand-planted bugs of the replication and fetch-session slices (issue 17,
acceptance: "unseen bugs will be planted in the reference implementation").

Run: ``python -m kconform.ci.benchmarks.hand_planted [--examples 2000] [--seed 7] [--timeout 1500]
[--only NAME ...] [--gates all fetch replication] [--out planted.json]``.

Each plant (``PLANTS``: a small bug a Kafka developer makes, none of them a named mutant nor one of
``ci.mutation.operators``' mechanical changes) is put in place of the reference's function in a
child process (``ci.mutation.planted``), which runs ``kconform gate --slice S --examples N --seed
K --jobs 1`` (the README budget, the zoo first) and exits with the gate's code: 1 killed, 0
survived. The table lists every plant with its verdict and time, then the score over the plants
that are not argued equivalent (an equivalent plant carries its argument: no run of the reference
can show it). Machine, date and load are printed with it.
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

R = "kconform.impl.replication"
F = "kconform.impl.fetch.broker"

PLANTS: tuple[Plant, ...] = (
    Plant(
        "epoch-query-leadership-first",
        "replication",
        f"{R}.broker:Broker",
        "_on_epoch_query",
        "error = self.partition.check_current_leader_epoch(req.current_leader_epoch)\n"
        "    if error is None and not self.partition.is_leader:\n"
        "        error = NOT_LEADER_OR_FOLLOWER",
        "error = None if self.partition.is_leader else NOT_LEADER_OR_FOLLOWER\n"
        "    if error is None:\n"
        "        error = self.partition.check_current_leader_epoch(req.current_leader_epoch)",
        "OffsetsForLeaderEpoch checks leadership before the KIP-320 epoch (Partition.lastOffsetForLeaderEpoch "
        "checks the epoch first): a fenced non-leader answers NOT_LEADER_OR_FOLLOWER, not FENCED_LEADER_EPOCH",
    ),
    Plant(
        "caught-up-strictly-past-leo",
        "replication",
        f"{R}.partition:RemoteReplica",
        "record_fetch",
        "if fetch_offset >= leader_leo:",
        "if fetch_offset > leader_leo:",
        "a follower fetching at the leader's LEO is not caught up now (Replica.updateFetchStateOrThrow: "
        "fetchOffset >= leaderEndOffset)",
    ),
    Plant(
        "caught-up-at-fetch-time",
        "replication",
        f"{R}.partition:RemoteReplica",
        "record_fetch",
        "_latest(self.last_caught_up_ms, self.last_fetch_ms)",
        "_latest(self.last_caught_up_ms, now_ms)",
        "ISR shrink reads the wrong timestamp: a follower reaching the leader's LEO of its previous Fetch is "
        "caught up now instead of as of that Fetch (Replica.updateFetchStateOrThrow, lastFetchTimeMs)",
    ),
    Plant(
        "reelected-leader-keeps-follower-state",
        "replication",
        f"{R}.partition:Partition",
        "make_leader",
        "now = self.rt.now_ms\n",
        "now = self.rt.now_ms\n    if self.leading is not None:\n        return\n",
        "a leader elected again in a later epoch keeps its followers' state (Partition.makeLeader: "
        "Replica.resetReplicaState, lastCaughtUpTime 0 for a follower out of the ISR)",
    ),
    Plant(
        "diverging-truncation-ignores-own-end",
        "replication",
        f"{R}.fetcher",
        "diverging_epoch_truncation",
        "return min(end_offset, own_end, log.leo)",
        "return min(end_offset, log.leo)",
        "truncation on a diverging epoch forgets the follower's own end offset of that epoch "
        "(KIP-595 style, AbstractFetcherThread.getOffsetTruncationState)",
    ),
    Plant(
        "undefined-epoch-answer-keeps-leo",
        "replication",
        f"{R}.fetcher",
        "epoch_answer_truncation",
        "return log.hw, True",
        "return log.leo, True",
        "an UNDEFINED_EPOCH_OFFSET answer truncates to the LEO (nothing) instead of the HW (KIP-101; "
        "AbstractFetcherThread.getOffsetTruncationState, 0.11-2.0)",
    ),
    Plant(
        "delete-records-answers-requested-offset",
        "replication",
        f"{R}.broker:Broker",
        "delete_records",
        "DeleteRecordsHandled(self.broker_id, offset, NONE, log.log_start)",
        "DeleteRecordsHandled(self.broker_id, offset, NONE, target)",
        "DeleteRecords below the log start answers the requested offset as low watermark (KIP-107; "
        "Partition.deleteRecordsOnLeader answers lowWatermarkIfLeader)",
    ),
    Plant(
        "consumer-fetch-past-hw-out-of-range",
        "replication",
        f"{R}.broker:Broker",
        "_consumer_read",
        "fetch_offset <= self.log.leo:",
        "fetch_offset <= self.log.hw:",
        "a consumer Fetch between the HW and the LEO answers OFFSET_OUT_OF_RANGE instead of no records "
        "(UnifiedLog.read checks the offset against the log end, the isolation bounds the records)",
    ),
    Plant(
        "acks-all-ignores-min-isr-after-append",
        "replication",
        f"{R}.purgatory:Purgatory",
        "complete_ready",
        "error = NONE if maximal_isr_size >= min_isr else NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "error = NONE",
        "acks=all completes NONE though the maximal ISR is below min.insync.replicas "
        "(Partition.checkEnoughReplicasReachOffset: NOT_ENOUGH_REPLICAS_AFTER_APPEND)",
        equivalent="the purgatory completes produces only when the HW increased, which "
        "Partition.maybe_increment_hw allows only with the committed ISR at least min ISR (KAFKA-15583); "
        "the maximal ISR contains the committed one, so the error branch cannot be taken",
    ),
    Plant(
        "follower-hw-before-append",
        "replication",
        f"{R}.fetcher:ReplicaFetcher",
        "on_fetch_response",
        "for entry in resp.entries:\n            log.append(entry)\n        appended = len(resp.entries)\n"
        "        log.set_follower_hw(resp.hw)",
        "log.set_follower_hw(resp.hw)\n        for entry in resp.entries:\n            log.append(entry)\n"
        "        appended = len(resp.entries)",
        "the follower bounds its new HW by its LEO before appending the answer's records "
        "(ReplicaFetcherThread.processPartitionData appends first)",
    ),
    Plant(
        "alter-partition-bumps-leader-epoch",
        "replication",
        f"{R}.controller:Controller",
        "_on_alter_partition",
        "record.leader, record.leader_epoch, tuple(sorted(req.isr))",
        "record.leader, record.leader_epoch + 1, tuple(sorted(req.isr))",
        "an ISR change by AlterPartition bumps the leader epoch (KAFKA-15021: only the partition epoch moves)",
    ),
    Plant(
        "start-at-leader-log-start-on-equal",
        "replication",
        f"{R}.fetcher:ReplicaFetcher",
        "_out_of_range",
        "if resp.leader_log_start > log.leo:",
        "if resp.leader_log_start >= log.leo:",
        "a follower whose LEO equals its leader's log start empties its log on OFFSET_OUT_OF_RANGE "
        "(AbstractFetcherThread.fetchOffsetAndTruncate: only below the leader's log start)",
        equivalent="the leader answers OFFSET_OUT_OF_RANGE to a Fetch at its log start only for a "
        "lastFetchedEpoch its cache cannot place (end epoch -1), which needs an epoch above the leader's "
        "latest: the follower's epochs are at most the leader epoch it fetches in, which an unfenced leader "
        "caches at election (and before KAFKA-7415 no lastFetchedEpoch is sent)",
    ),
    Plant(
        "recover-keeps-epochs-past-leo",
        "replication",
        f"{R}.log:ReplicaLog",
        "recover",
        "\n    log.epochs.truncate_from_end(log.leo)",
        "",
        "a restart does not truncate the leader-epoch cache at the recovered log end "
        "(UnifiedLog's recovery: leaderEpochCache.truncateFromEnd(logEndOffset))",
    ),
    Plant(
        "acks-all-completes-at-hw",
        "replication",
        f"{R}.purgatory:Purgatory",
        "complete_ready",
        "hw > op.offset",
        "hw >= op.offset",
        "acks=all completes when the HW reaches the record's offset, not past it "
        "(DelayedProduce: leaderHW >= requiredOffset, requiredOffset = last offset + 1)",
    ),
    Plant(
        "stale-alter-partition-commits",
        "replication",
        f"{R}.broker:Broker",
        "_on_alter_partition_response",
        "if partition.is_leader and resp.partition_epoch >= partition.view.partition_epoch:",
        "if partition.is_leader:",
        "an AlterPartition success older than the partition state the leader holds still commits its ISR "
        "(Partition.handleAlterPartitionUpdate ignores a stale partition epoch)",
        equivalent="a proposal stays pending only while the leader's partition epoch is the one it proposed "
        "at (new metadata clears it: Partition.update_isr, make_leader, make_follower), and its success "
        "carries that epoch + 1",
    ),
    Plant(
        "follower-log-start-past-hw",
        "replication",
        f"{R}.fetcher:ReplicaFetcher",
        "on_fetch_response",
        "if min(resp.leader_log_start, log.hw) > log.log_start:  # never past its own HW (KAFKA-5634)\n"
        "            log.increment_log_start(min(resp.leader_log_start, log.hw))",
        "if min(resp.leader_log_start, log.leo) > log.log_start:\n"
        "            log.hw = max(log.hw, min(resp.leader_log_start, log.leo))\n"
        "            log.increment_log_start(min(resp.leader_log_start, log.leo))",
        "the follower takes its leader's log start up to its LEO and lifts its HW with it "
        "(KAFKA-5634: the log start never passes the HW)",
        equivalent="an answer's log start is at most its HW (the leader keeps log start <= HW, KAFKA-5634, and "
        "reads both at once), and after appending the follower's HW is min(answer HW, own LEO): so "
        "min(log start, HW) = min(log start, LEO) and the lifted HW is the HW already",
    ),
    Plant(
        "elect-fenced-isr-member",
        "replication",
        f"{R}.controller:Controller",
        "_elect",
        "if broker in isr and broker not in self.fenced:",
        "if broker in isr:",
        "the election takes the first ISR member even when fenced (PartitionChangeBuilder: "
        "isAcceptableLeader needs an unfenced broker)",
    ),
    Plant(
        "same-partition-epoch-reapplied",
        "replication",
        f"{R}.broker:Broker",
        "_on_metadata",
        "update.partition_epoch <= view.partition_epoch",
        "update.partition_epoch < view.partition_epoch",
        "a broker applies the controller's re-published record again (same partition epoch), dropping its "
        "AlterPartition in flight (Partition.makeLeader/updateAssignmentAndIsr skip a partition epoch not newer)",
    ),
    Plant(
        "expand-needs-leo-past-hw",
        "replication",
        f"{R}.partition:Partition",
        "isr_expand_proposal",
        "if remote.leo < self.log.hw:",
        "if remote.leo <= self.log.hw:",
        "ISR expansion wants the follower strictly past the HW (Partition.isFollowerInSync: "
        "followerEndOffset >= leaderLog.highWatermark)",
    ),
    Plant(
        "read-replica-at-fetch-offset-refused",
        "replication",
        f"{R}.broker:Broker",
        "_preferred_read_replica",
        "leading.remotes[rack].leo < fetch_offset",
        "leading.remotes[rack].leo <= fetch_offset",
        "the KIP-392 selector refuses a follower whose LEO equals the fetch offset "
        "(ReplicaManager.findPreferredReadReplica: replica.logEndOffset >= fetchOffset)",
    ),
    Plant(
        "hw-min-isr-counts-pending",
        "replication",
        f"{R}.partition:Partition",
        "maybe_increment_hw",
        "if len(self.view.isr) < cfg.effective_min_isr",
        "if len(self.maximal_isr()) < cfg.effective_min_isr",
        "the KAFKA-15583 min-ISR check of the HW counts a pending expansion (Partition.maybeIncrementLeaderHW "
        "checks the committed ISR: isUnderMinIsr)",
    ),
    Plant(
        "retention-stops-below-hw",
        "replication",
        f"{R}.broker:Broker",
        "retention",
        "log.log_start < offset <= bound",
        "log.log_start < offset < bound",
        "retention never deletes up to the HW (UnifiedLog.deleteOldSegments: "
        "the log start may reach the HW, KAFKA-5634)",
    ),
    Plant(
        "truncation-not-durable",
        "replication",
        f"{R}.log:ReplicaLog",
        "truncate_to",
        "\n    self.disk.truncate(offset)",
        "",
        "truncation is not written through to disk, so a crash brings truncated records back "
        "(UnifiedLog.truncateTo deletes the segments at once)",
    ),
    Plant(
        "replica-fetch-answer-not-sent",
        "replication",
        f"{R}.broker:Broker",
        "_on_replica_fetch",
        "self.rt.network.send(self.broker_id, msg.src, response)",
        "pass",
        "the broker handles the follower-fetching consumer's Fetch (KIP-392) and reports it, but never "
        "sends the answer (KafkaApis.handleFetchRequest answers every Fetch: processResponseCallback; "
        "a Tansu-based broker did this, nisshi-io/nisshi#668); only progress conditioned on delivery "
        "shows it (conformance.replication.liveness, RequestAnswered)",
    ),
    Plant(
        "metadata-without-become-follower",
        "replication",
        f"{R}.broker:Broker",
        "_on_metadata",
        "self._become_follower(update)",
        "pass",
        "a broker given a record that makes it a follower does nothing and reports nothing, so it never "
        "fetches (ReplicaManager.applyDelta → applyLocalFollowersDelta → ReplicaFetcherManager."
        "addFetcherForPartitions; the fetcher state not following the delta is KAFKA-13161's class); only "
        "progress conditioned on delivery shows it (conformance.replication.liveness, FollowerStartsFetching)",
    ),
    Plant(
        "fetch-error-not-answered",
        "replication",
        f"{R}.broker:Broker",
        "_on_fetch",
        "self._answer_fetch(msg.msg_id, msg.src, req, error, (), hw, diverging_epoch, diverging_end_offset, hw)",
        "if error == NONE:\n"
        "            self._answer_fetch("
        "msg.msg_id, msg.src, req, error, (), hw, diverging_epoch, diverging_end_offset, hw)",
        "a follower's Fetch refused with a partition error (FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, "
        "OFFSET_OUT_OF_RANGE) gets no answer at all (KafkaApis.handleFetchRequest answers every Fetch, an "
        "error per partition: FetchResponse.partitionResponse); the follower resends after request.timeout.ms, "
        "so only progress conditioned on delivery shows it (conformance.replication.liveness, RequestAnswered)",
    ),
    Plant(
        "log-start-change-not-answered",
        "fetch",
        f"{F}:CachedPartition",
        "maybe_update_response_data",
        "if self.local_log_start != data.log_start:\n        must = True\n",
        "if self.local_log_start != data.log_start:\n",
        "an incremental answer leaves out a partition whose log start changed "
        "(KIP-227, CachedPartition.maybeUpdateResponseData)",
    ),
    Plant(
        "epoch-moves-on-error",
        "fetch",
        f"{F}:FetchBroker",
        "on_fetch",
        "if session.epoch != req.epoch:\n",
        "if session.epoch != req.epoch:\n        session.epoch = next_epoch(session.epoch)\n",
        "the session epoch moves on INVALID_FETCH_SESSION_EPOCH (KIP-227: FetchManager.newContext "
        "leaves the session untouched)",
    ),
    Plant(
        "full-request-keeps-old-session",
        "fetch",
        f"{F}:FetchBroker",
        "on_fetch",
        "if req.session_id != 0:",
        "if req.session_id != 0 and req.epoch == -1:",
        "a full request naming its old session does not remove it (KIP-227: FetchManager.newContext "
        "removes the session of a full request)",
    ),
    Plant(
        "epoch-wraps-to-zero",
        "fetch",
        F,
        "next_epoch",
        "1 if epoch == INT32_MAX",
        "0 if epoch == INT32_MAX",
        "the broker's session epoch wraps to 0 instead of 1 (FetchMetadata.nextEpoch)",
    ),
    Plant(
        "old-privileged-session-never-evictable",
        "fetch",
        f"{F}:FetchSessionCache",
        "touch",
        "if not session.privileged or old_enough:",
        "if not session.privileged:",
        "a privileged session older than the eviction time is never evictable by another privileged "
        "one (FetchSessionCacheShard.touch)",
    ),
    Plant(
        "below-log-start-answered",
        "fetch",
        f"{F}:PartitionLog",
        "read",
        "fetch_offset < self.log_start or fetch_offset > self.log.leo",
        "fetch_offset > self.log.leo",
        "a Fetch below the log start is answered with records (KIP-107: OFFSET_OUT_OF_RANGE)",
    ),
    Plant(
        "hw-decrease-not-answered",
        "fetch",
        f"{F}:CachedPartition",
        "maybe_update_response_data",
        "if self.high_watermark != data.hw:",
        "if self.high_watermark < data.hw:",
        "an incremental answer leaves out a partition whose HW went down (KIP-227, "
        "CachedPartition.maybeUpdateResponseData compares for inequality)",
        equivalent="the slice's HW never goes down: AdvanceHw clamps to [HW, LEO] (TxnPartitionLog.advance_hw), "
        "a restart keeps the logs and drops every session, and an error caches HW -1, below any HW; Kafka's "
        "HW can go down across a leader change, which this slice's ToggleLeadership (same log) does not model",
    ),
    Plant(
        "error-keeps-cached-hw",
        "fetch",
        f"{F}:CachedPartition",
        "maybe_update_response_data",
        "if data.error != NONE:\n        if update:\n            self.high_watermark = -1\n",
        "if data.error != NONE:\n",
        "a partition answered with an error keeps its cached HW (CachedPartition.maybeUpdateResponseData "
        "sets it to -1 so the partition is answered again)",
        equivalent="every error answer carries HW -1 (PartitionLog.read; Kafka's FetchResponse.partitionResponse "
        "with an error: INVALID_HIGH_WATERMARK), so the HW comparison above already caches -1",
    ),
    Plant(
        "every-session-evictable-by-all",
        "fetch",
        f"{F}:FetchSessionCache",
        "touch",
        "if old_enough:\n        self.evictable_by_all",
        "if True:\n        self.evictable_by_all",
        "every session is evictable by any newcomer, not only those older than the eviction time "
        "(FetchSessionCacheShard.touch: evictableByAll)",
    ),
)
"""Every hand-planted bug, in the order the benchmark runs them."""

BY_NAME = {p.name: p for p in PLANTS}
MODULE = "kconform.ci.benchmarks.hand_planted"
GATE_SETTINGS: dict[str, tuple[str, ...]] = {
    "replication": (),
    "all": (
        "replica.fetch.wait.max.ms=500",
        "fetch.max.wait.ms=500",
        "fetch.min.bytes=2",
        "eligible.leader.replicas.version=1",
        "follower_fetching=true",
        "log_start_moves=true",
    ),
    "fetch": (),
}
"""The gates a plant runs under: ``kconform gate --slice replication`` (the default configuration),
the replication configuration of ``--slice all`` (the README's command: conformance.replication.slice
.GATE_CONFIG, spelled as ``--set``), and ``--slice fetch``."""
CONFIGS = {"replication": ("replication", "all"), "fetch": ("fetch",)}


def child(name: str, gate: str, examples: int, seed: int, out: str) -> int:
    """Plant ``name`` in this process and run ``gate`` (a key of GATE_SETTINGS); the gate's exit code."""
    p = BY_NAME[name]
    argv = ["gate", "--slice", p.slice, "--examples", str(examples), "--seed", str(seed)]
    argv += [arg for setting in GATE_SETTINGS[gate] for arg in ("--set", setting)]
    return census.gate_child("hand_planted", p, argv, out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=1500.0)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--gates", nargs="*", choices=sorted(GATE_SETTINGS), default=sorted(GATE_SETTINGS))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--gate", choices=sorted(GATE_SETTINGS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        gate = args.gate or BY_NAME[args.child].slice
        return child(args.child, gate, args.examples, args.seed, str(args.out or "kconform-out"))
    unknown = [n for n in args.only if n not in BY_NAME]
    if unknown:
        print(f"hand_planted: --only: unknown plants {unknown}", file=sys.stderr)
        return EXIT_ERROR
    chosen = [p for p in PLANTS if not args.only or p.name in args.only]
    console = Console()
    table = Table(title=f"hand-planted bugs, gate --examples {args.examples} --seed {args.seed}")
    for column in ("plant", "slice", "gate", "verdict", "s"):
        table.add_column(column)
    results: dict[str, dict[str, dict[str, object]]] = {}
    for p in chosen:
        for gate in (g for g in CONFIGS[p.slice] if g in args.gates):
            verdict, seconds = census.run_one(MODULE, p, gate, args.examples, args.seed, args.timeout)
            shown = f"{verdict} (equivalent)" if p.equivalent else verdict
            table.add_row(p.name, p.slice, gate, shown, f"{seconds:.1f}")
            results.setdefault(p.name, {})[gate] = {"verdict": verdict, "seconds": round(seconds, 1)}
            print(f"{p.name} [{gate}]: {verdict}, {seconds:.1f} s", file=sys.stderr, flush=True)
    console.print(table)
    counted = [p for p in chosen if not p.equivalent]
    for gate in GATE_SETTINGS:
        under = [p for p in counted if gate in results.get(p.name, {})]
        if not under:
            continue
        killed = [p for p in under if results[p.name][gate]["verdict"] == "killed"]
        census.print_score(console, under, killed, before=f"gate {gate}: ")
    console.print(f"{len(chosen) - len(counted)} argued equivalent; {census.machine()}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
