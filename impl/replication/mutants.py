"""The replication slice's mutants: known protocol bugs the replication brokers can be switched into.

Each is a small branch in impl/replication/ guarded by ``Runtime.mutant(NAME)``; the description
names the KIP or Kafka issue that fixed the bug and the symptom a checker should see. The registry
of every slice's mutants is impl.mutants.
"""

from __future__ import annotations

TRUNCATE_TO_HW = "truncate-to-hw"
KIP_101_TRUNCATION = "kip-101-truncation"
NO_EPOCH_FENCING = "no-epoch-fencing"
HW_BELOW_MIN_ISR = "hw-below-min-isr"
EARLY_ISR_EXPAND = "early-isr-expand"
HW_IGNORES_PENDING_ISR = "hw-ignores-pending-isr"
ACKS_ALL_NO_WAIT = "acks-all-no-wait"

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
}
"""Name → description, in the order the gate's self-check runs them."""

MUTANT_CONFIG: dict[str, dict[str, int | bool]] = {}
"""Configuration a mutant needs to be observable (none in this slice; see impl.mutants)."""
