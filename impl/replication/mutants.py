"""The replication slice's mutants: known protocol bugs the replication brokers can be switched into.

Each is a small branch in impl/replication/ guarded by ``Runtime.mutant(NAME)``; the description
names the KIP or Kafka issue that fixed the bug and the symptom a checker should see. The registry
of every slice's mutants is impl.mutants.
"""

from __future__ import annotations

from kconform.impl.mutant_table import MutantTable

_DELAYED: dict[str, int | bool] = {"replica_fetch_wait_max_ms": 500, "fetch_max_wait_ms": 500, "fetch_min_bytes": 2}
"""What the delayed-fetch mutants need: followers and consumers that wait in the purgatory."""

_TABLE = MutantTable()

TRUNCATE_TO_HW = _TABLE.add(
    "truncate-to-hw",
    "A new follower (and a restarted broker becoming follower) truncates to its local HW instead "
    "of following the configured protocol: pre-KIP-101 (< 0.11) behaviour. Symptom: a follower "
    "whose HW lagged drops committed records and can later lead without them (KIP-101 data loss "
    "scenario 1), or keeps divergent records above the HW (scenario 2).",
)

KIP_101_TRUNCATION = _TABLE.add(
    "kip-101-truncation",
    "On a diverging epoch or an OffsetsForLeaderEpoch answer the follower truncates to "
    "min(leader end offset, LEO) without looking up its own end offset for that epoch: the hole "
    "KIP-279 (2.0) fixed. Symptom: after fast leader failovers the follower keeps records of an "
    "epoch the leader never had, so replicas diverge below the HW.",
)

NO_EPOCH_FENCING = _TABLE.add(
    "no-epoch-fencing",
    "The leader ignores currentLeaderEpoch on follower fetches, epoch queries and consumer "
    "fetches (pre-KIP-320, < 2.1). Symptom: a broker in a stale or newer epoch answers instead of "
    "FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, so a zombie leader keeps serving.",
)

HW_BELOW_MIN_ISR = _TABLE.add(
    "hw-below-min-isr",
    "The leader advances the HW while the ISR is smaller than min.insync.replicas (before "
    "KAFKA-15583, 3.7). Symptom: records written with acks=1 become committed (visible to "
    "consumers) with fewer than min.insync.replicas copies.",
)

EARLY_ISR_EXPAND = _TABLE.add(
    "early-isr-expand",
    "ISR expansion does not wait for the follower to reach the start offset of the leader's "
    "current epoch (KAFKA-7128; hachikuji kafka-specification Kip320 note 4). Symptom: a follower "
    "joins the ISR while still holding records of an older epoch that the leader may truncate "
    "away, so an ISR member can lack committed records.",
)

HW_IGNORES_PENDING_ISR = _TABLE.add(
    "hw-ignores-pending-isr",
    "The leader computes the HW over the committed ISR only: a follower whose ISR expansion is "
    "pending (KIP-497 maximal ISR) or that is caught up but not yet a member is not waited for. "
    "Symptom: the HW passes an offset that a replica the controller is about to add to the ISR "
    "does not have; once the expansion commits, an ISR member lacks committed records.",
)

ACKS_ALL_NO_WAIT = _TABLE.add(
    "acks-all-no-wait",
    "The leader answers acks=all (-1) with NONE right after the local append instead of waiting "
    "in the produce purgatory (DelayedProduce) for the HW to pass the record (kafka-facts §3.4, §6; "
    "the guarantee KIP-679 made the producer default in 3.0). Symptom: an acknowledged record is "
    "lost when the leader fails before the followers fetched it.",
)

DELAYED_FETCH_MISSES_HW = _TABLE.add(
    "delayed-fetch-misses-hw",
    "A consumer Fetch parked in the purgatory is not re-checked when the leader's HW advances "
    "(only log appends and its deadline complete it), like KAFKA-14334, where delayed fetches of "
    "consumers reading from a follower were not completed when replication advanced that "
    "follower's HW (fixed in 3.4.0, commit dbf5826cd54: ReplicaManager.completeDelayedFetchRequests). Symptom: a "
    "consumer waits the whole fetch.max.wait.ms although its records became readable "
    "(DelayedTriggersHonoured). Needs waiting consumer fetches (fetch_max_wait_ms > 0).",
    config=_DELAYED,
)

DELAYED_FETCH_EARLY_RETURN = _TABLE.add(
    "delayed-fetch-early-return",
    "A parked Fetch completes at the first re-check whether or not fetch.min.bytes have "
    "accumulated: the symptom of KAFKA-3159 (fixed in 0.10.0.0, commit 6d0dca7345d), where a "
    "stale HW offset metadata on an older segment made DelayedFetch.tryComplete satisfy fetches "
    "at once, so consumers with a large fetch.max.wait.ms spun (high CPU, empty answers). "
    "Symptom here: an answer with fewer than minBytes records before the deadline "
    "(non-conformance of the completion).",
    config=_DELAYED,
)

DELAYED_FETCH_READS_LEO = _TABLE.add(
    "delayed-fetch-reads-leo",
    "A consumer Fetch completed from the purgatory reads up to the log end offset instead of the "
    "HW: DelayedFetch.onComplete must read with the request's own isolation, as it has since "
    "KAFKA-1583 (0.9.0.0, commit 89831204c09: fetchOnlyCommitted, today FetchIsolation.HIGH_WATERMARK); "
    "no Kafka issue of this bug is claimed. Symptom: a consumer receives records that are not "
    "committed yet (ConsumerReadsBelowHw; the judge sees the answer differ first).",
    config=_DELAYED,
)

DELAYED_FETCH_SURVIVES_LEADER_CHANGE = _TABLE.add(
    "delayed-fetch-survives-leader-change",
    "When the broker stops leading, its parked fetches are not re-checked: they wait until their "
    "deadline and only then answer NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH, like KAFKA-9198 "
    "(2.5.0, commit 6ae1af842a3), where a leader that stopped being a replica left its delayed "
    "operations to time out (fixed by completeDelayedFetchOrProduceRequests, today "
    "completeDelayedOperationsWhenNotPartitionLeader, called from applyLocalFollowersDelta). "
    "Symptom: clients keep waiting on a broker that no longer leads (DelayedTriggersHonoured).",
    config=_DELAYED,
)

_ELR: dict[str, int | bool] = {"eligible_leader_replicas_version": 1}
"""What the ELR mutants need: the KIP-966 rung (docs/elr.md)."""

ELECT_FENCED_LAST_KNOWN_LEADER = _TABLE.add(
    "elect-fenced-last-known-leader",
    "With ISR and ELR empty the controller elects the last known leader even while that broker is "
    "fenced: KAFKA-19522 (fixed in 4.1.1 / 4.2.0), where PartitionChangeBuilder."
    "canElectLastKnownLeader did not check that the last known leader was unfenced, so a partition "
    "could get a leader that was shut down and stay unavailable. Symptom: a fenced leader "
    "(LeaderUnfenced, KIP-841; the judge sees the election differ first).",
    config=_ELR,
)

UNCLEAN_SHUTDOWN_KEEPS_ELR = _TABLE.add(
    "unclean-shutdown-keeps-elr",
    "A broker that registers after an unclean shutdown (no clean-shutdown broker epoch) stays in "
    "the ELR (and the ISR): the hole KAFKA-15586 closed with ReplicationControlManager."
    "handleBrokerUncleanShutdown (4.0). Symptom: a replica that lost unflushed records in a crash "
    "is elected from the ELR as if it held every committed record (ElrDurability; the judge sees "
    "the election differ first).",
    config=_ELR,
)

_FOLLOWER_FETCHING: dict[str, int | bool] = {"follower_fetching": True}
"""What the follower-fetching mutants need: the second consumer with client.rack."""

READ_REPLICA_OUT_OF_ISR = _TABLE.add(
    "read-replica-out-of-isr",
    "The leader names as preferred read replica (KIP-392) a follower that is not in the ISR, as "
    "ReplicaManager.findPreferredReadReplica did before KAFKA-14372 (apache/kafka#12877, 3.4): the "
    "selector looked only at whether the follower's LEO reached the fetch offset. Symptom: a "
    "lagging follower keeps serving the consumer, which falls behind the producers for as long as "
    "the follower lags (each metadata.max.age.ms the leader picks it again).",
    _FOLLOWER_FETCHING,
)

RESET_ON_FOLLOWER_OUT_OF_RANGE = _TABLE.add(
    "reset-on-follower-out-of-range",
    "The follower-fetching consumer treats OFFSET_OUT_OF_RANGE from its preferred read replica "
    "like the leader's and resets its position (auto.offset.reset), as the first draft of KIP-392 "
    "did (apache/kafka#6711; fixed in KAFKA-8365, apache/kafka#6731, 2.4: "
    "FetchCollector.handleInitializeErrors clears the preferred replica and goes back to the "
    "leader; sarama#1181 is the same bug in another client). Symptom: a follower whose log is "
    "shorter than the consumer's position (it lost unflushed records in a crash) makes the "
    "consumer re-read or skip records.",
    {**_FOLLOWER_FETCHING, "flush_interval_ms": 60_000},
)

NO_BROKER_EPOCH_CHECK = _TABLE.add(
    "no-broker-epoch-check",
    "The controller ignores the broker epochs an AlterPartition carries (NewIsrWithEpochs): the "
    "hole KIP-903 closed (KAFKA-14139, fixed in 3.5), where a leader's fetch state from a "
    "replica's previous incarnation let a restarted replica, which may have lost unflushed records, "
    "be (re)admitted to the ISR. Symptom: an ISR change carrying a stale incarnation is accepted "
    "(the judge sees NONE where INELIGIBLE_REPLICA is due; ElrDurability behind it).",
    config=_ELR,
)

_LOG_START: dict[str, int | bool] = {"log_start_moves": True}
"""What the log-start mutants need: a machine that draws DeleteRecords and retention."""

RETENTION_PAST_HW = _TABLE.add(
    "kafka-5634-retention-past-hw",
    "Retention deletes records at or past the replica's high watermark (any segment below the "
    'log end offset is deletable): the bug KAFKA-5634 (0.11.0.1, "Do not allow segment deletion '
    'beyond high watermark") fixed in Log.deleteOldSegments, today UnifiedLog.deletableSegments '
    "and maybeIncrementLogStartOffset's refusal of a log start above the HW. Symptom: a log start "
    "past the HW (LogStartBelowHw), records deleted before they were committed, a follower whose "
    "fetch offset the leader answers OFFSET_OUT_OF_RANGE; the judge sees the retention itself "
    "first (the model allows none past the HW).",
    config=_LOG_START,
)

START_AT_KEEPS_HW = _TABLE.add(
    "kafka-9491-start-at-keeps-hw",
    "A follower whose fetch offset is below its leader's log start empties its log and restarts "
    "at the leader's log start (AbstractFetcherThread truncateFullyAndStartAt) but keeps its old "
    'high watermark: the bug KAFKA-9491 (2.5.0, "Increment high watermark after full log '
    'truncation", Log.updateLogStartOffset) fixed. Symptom: a HW below the log start; the '
    "follower, elected before it hears the leader's HW, answers fetches at its HW "
    "OFFSET_OUT_OF_RANGE (DelayedFetch); the judge sees the follower's HW after the restart differ.",
    config=_LOG_START,
)

NEW_LEADER_KEEPS_FOLLOWER_LEO = _TABLE.add(
    "new-leader-keeps-follower-leo",
    "A broker that becomes leader after having followed (Partition.makeLeader with isNewLeader) "
    "keeps each follower's LEO from its previous leadership instead of resetting it to unknown "
    "(Replica.resetReplicaState keeps it only for a leader re-elected without having left "
    'leadership, KAFKA-2721): the reset KAFKA-351 (0.8) put in makeLeader, "there could be old '
    'LogEndOffset from the time when this broker was the leader last time". Symptom: the new '
    "leader's HW passes offsets a follower has since truncated away under another leader, or "
    "before that follower fetched in the new epoch; the judge sees the HW of MetadataApplied "
    "(become_leader) or of a later answer run ahead of the model's.",
)

FOLLOWER_IGNORES_NEW_LEADER = _TABLE.add(
    "follower-ignores-new-leader",
    "A broker given a partition record that makes it a follower of another broker in a newer leader "
    "epoch drops it without a word: it neither applies the record nor starts fetching, where Kafka's "
    "ReplicaManager.applyDelta → applyLocalFollowersDelta makes it follower and calls "
    "ReplicaFetcherManager.addFetcherForPartitions. The class of KAFKA-13161 (3.0.0, apache/kafka#11189: "
    "the KRaft broker's partition and replica fetcher state did not follow the topics delta for a "
    "follower), in its most silent form; no Kafka issue of exactly this bug is claimed. Symptom: no "
    "safety invariant breaks (the follower drops out of the ISR after replica.lag.time.max.ms, which "
    "the model allows, and the partition stays under-replicated for ever); only progress on a healthy "
    "network shows it (FollowerStartsFetching, conformance.replication.liveness).",
)

FETCH_WITH_RECORDS_UNANSWERED = _TABLE.add(
    "fetch-with-records-unanswered",
    "A broker handles the follower-fetching consumer's Fetch (KIP-392) and reports it, but never sends "
    "an answer that carries records, as a Tansu-based broker did (nisshi-io/nisshi#668, 2026: FETCH on "
    "topics that contain data got no response, clients timed out after socket.timeout.ms and "
    "retried in a loop); Kafka's KafkaApis.handleFetchRequest answers every Fetch from "
    "processResponseCallback (requestChannel.sendResponse), a DelayedFetch at the latest when maxWaitMs "
    "expires. Symptom: the "
    "consumer never gets past its position while records wait there; no safety invariant breaks (a "
    "lost answer is the network's right), only progress on a healthy network shows it "
    "(RequestAnswered, conformance.replication.liveness).",
    _FOLLOWER_FETCHING,
)

MUTANTS: dict[str, str] = _TABLE.descriptions
"""Name → description, in the order the gate's self-check runs them."""

MUTANT_CONFIG: dict[str, dict[str, int | bool]] = _TABLE.configs
"""Configuration a mutant needs to be observable (delayed fetches; see impl.mutants)."""
