"""TransactionMetadataTest (core/src/test/scala/unit/kafka/coordinator/transaction/), ported.

The test drives TransactionMetadata's transition builders (prepareIncrementProducerEpoch,
prepareProducerIdRotation, prepareFenceProducerEpoch, prepareAbortOrCommit, prepareComplete); the
model has no separate builders, so each is reached through the coordinator handler that calls it
(InitProducerId, EndTxn, the timeout abort, marker completion) and the metadata fields it asserts
are compared. Read from a later trunk (4.2.0-SNAPSHOT), where the TV2 tests exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import COORDINATOR, TRUNK_42, Scenario, Step, call, check
from kconform.traces.events import CONCURRENT_TRANSACTIONS, NONE, PRODUCER_FENCED

K = "TransactionMetadataTest"
PID = 23423
NEW = 9893
TV2 = {"transaction_version": 2}
CLOCK = "the clock moving backwards between transitions: the model's clock only moves forward (advance_clock)"


def S(
    method: str,
    given: Mapping[str, Any],
    *steps: Step,
    config: Mapping[str, Any] | None = None,
    part: str = "",
    resolution: str = "",
) -> Scenario:
    return Scenario(
        K,
        method,
        TRUNK_42,
        COORDINATOR,
        given=given,
        steps=steps,
        config=config or {},
        part=part,
        resolution=resolution,
    )


def meta(state: str, epoch: int, **kw: object) -> dict[str, object]:
    return {"pid": PID, "epoch": epoch, "state": state, "timeout_ms": 30_000, **kw}


SCENARIOS: tuple[Scenario, ...] = (
    S(
        "testInitializeEpoch",
        meta("Empty", -1),
        call("init_producer_id", fresh_pid=NEW).then(error=NONE, pid=PID, epoch=0, last_epoch=-1),
    ),
    S(
        "testNormalEpochBump",
        meta("Empty", 735),
        call("init_producer_id", fresh_pid=NEW).then(error=NONE, pid=PID, epoch=736, last_epoch=-1),
    ),
    S(
        "testBumpEpochNotAllowedIfEpochsExhausted",
        meta("Empty", 32766),
        # prepareIncrementProducerEpoch throws at 32766; the coordinator therefore rotates instead
        call("init_producer_id", fresh_pid=NEW).then(error=NONE, pid=NEW, epoch=0, previous_pid=PID),
    ),
    S(
        "testTransitFromEmptyToPrepareAbortInV2",
        meta("Empty", 735),
        call("end_txn", pid=PID, epoch=735, commit=False).then(error=NONE, result_epoch=736, epoch=736, pid=PID),
        config=TV2,
    ),
    S(
        "testTransitFromCompleteAbortToPrepareAbortInV2",
        meta("CompleteAbort", 735),
        call("end_txn", pid=PID, epoch=735, commit=False).then(error=NONE, result_epoch=736, epoch=736, pid=PID),
        config=TV2,
    ),
    S(
        "testTransitFromCompleteCommitToPrepareAbortInV2",
        meta("CompleteCommit", 735),
        call("end_txn", pid=PID, epoch=735, commit=False).then(error=NONE, result_epoch=736, epoch=736, pid=PID),
        config=TV2,
    ),
    S(
        "testFenceProducerAfterEpochsExhausted",
        meta("Ongoing", 32766, partitions={"topic1-0"}),
        call("init_producer_id", fresh_pid=NEW).then(
            error=CONCURRENT_TRANSACTIONS, state="PrepareAbort", epoch=32767, last_epoch=-1, pid=PID
        ),
    ),
    S(
        "testInvalidTransitionFromCompleteCommitToFence",
        meta("CompleteCommit", 32766),
        call("abort_timed_out", now=10**9).refused(),
    ),
    S(
        "testInvalidTransitionFromCompleteAbortToFence",
        meta("CompleteAbort", 32766),
        call("abort_timed_out", now=10**9).refused(),
    ),
    Scenario(
        K,
        "testFenceProducerNotAllowedIfItWouldOverflow",
        TRUNK_42,
        COORDINATOR,
        given=meta("Ongoing", 32767, partitions={"topic1-0"}),
        steps=(call("init_producer_id", fresh_pid=NEW).refused(),),
        reference="the reference never holds an Ongoing transaction at epoch 32767 (it rotates the producer id "
        "at 32766 and a fence leaves Ongoing), so it has no guard for it",
    ),
    S(
        "testRotateProducerId",
        meta("Empty", 32766),
        call("init_producer_id", expected_pid=PID, expected_epoch=32766, fresh_pid=NEW).then(
            error=NONE, pid=NEW, previous_pid=PID, epoch=0, last_epoch=32766
        ),
    ),
    S(
        "testEpochBumpOnEndTxn",
        meta("Ongoing", 10, partitions={"topic1-0"}),
        call("end_txn", pid=PID, epoch=10, commit=True).then(pid=PID, epoch=11, state="PrepareCommit"),
        call("complete").then(pid=PID, epoch=11, state="CompleteCommit"),
        config=TV2,
    ),
    S(
        "testEpochBumpOnEndTxnOverflow",
        meta("Ongoing", 32766, partitions={"topic1-0"}),
        call("end_txn", pid=PID, epoch=32766, commit=True, fresh_pid=NEW).then(
            pid=PID, epoch=32767, last_epoch=32766, state="PrepareCommit"
        ),
        call("complete").then(pid=NEW, epoch=0, last_epoch=32766, state="CompleteCommit"),
        config=TV2,
        resolution="model fixed (issue 14): lastProducerEpoch stays 32766 at Complete after a TV2 overflow "
        "(TransactionMetadata.prepareComplete); it was -1",
    ),
    S(
        "testRotateProducerIdInOngoingState",
        meta("Ongoing", 32766, previous_pid=PID, partitions={"topic1-0"}),
        # prepareProducerIdRotation throws in Ongoing; InitProducerId fences instead of rotating
        call("init_producer_id", fresh_pid=NEW).then(error=CONCURRENT_TRANSACTIONS, pid=PID, epoch=32767),
    ),
    *(
        S(
            f"testRotateProducerIdIn{name}State",
            meta(state, 32766, previous_pid=PID, partitions={"topic1-0"}),
            call("init_producer_id", fresh_pid=NEW).then(
                error=CONCURRENT_TRANSACTIONS, pid=PID, epoch=32766, state=state
            ),
            config={"transaction_version": tv},
            part=f"TV{tv}",
        )
        for name, state in (("PrepareAbort", "PrepareAbort"), ("PrepareCommit", "PrepareCommit"))
        for tv in (0, 2)
    ),
    S(
        "testAttemptedEpochBumpWithNewlyCreatedMetadata",
        meta("Empty", -1),
        call("init_producer_id", expected_pid=PID, expected_epoch=735, fresh_pid=NEW).then(
            error=NONE, pid=PID, epoch=0, last_epoch=-1
        ),
    ),
    S(
        "testEpochBumpWithCurrentEpochProvided",
        meta("Empty", 735),
        call("init_producer_id", expected_pid=PID, expected_epoch=735, fresh_pid=NEW).then(
            error=NONE, pid=PID, epoch=736, last_epoch=735
        ),
    ),
    S(
        "testAttemptedEpochBumpWithLastEpoch",
        meta("Empty", 735, last_epoch=734),
        call("init_producer_id", expected_pid=PID, expected_epoch=734, fresh_pid=NEW).then(
            error=NONE, pid=PID, epoch=735, last_epoch=734
        ),
    ),
    S(
        "testAttemptedEpochBumpWithFencedEpoch",
        meta("Empty", 735, last_epoch=734, previous_pid=PID),
        call("init_producer_id", expected_pid=PID, expected_epoch=733, fresh_pid=NEW).then(error=PRODUCER_FENCED),
    ),
    S(
        "testTolerateTimeShiftDuringPrepareCommit",
        meta("Ongoing", 1, partitions={"topic1-0"}),
        call("end_txn", pid=PID, epoch=1, commit=True).then(state="PrepareCommit", pid=PID, epoch=1, last_epoch=-1),
        part="epochs only",
    ),
    S(
        "testTolerateTimeShiftDuringPrepareAbort",
        meta("Ongoing", 1, partitions={"topic1-0"}),
        call("end_txn", pid=PID, epoch=1, commit=False).then(state="PrepareAbort", pid=PID, epoch=1, last_epoch=-1),
        part="epochs only",
    ),
    *(
        S(
            f"testTolerateTimeShiftDuringComplete{w}",
            meta(f"Prepare{w}", 1, last_epoch=0, partitions={"topic1-0"}),
            call("complete").then(state=f"Complete{w}", pid=PID, epoch=1, last_epoch=0),
            config={"transaction_version": tv},
            part=f"epochs only, TV{tv}",
        )
        for w in ("Commit", "Abort")
        for tv in (0, 2)
    ),
    Scenario(K, "testTolerateUpdateTimeShiftDuringEpochBump", TRUNK_42, COORDINATOR, out_of_scope=CLOCK),
    Scenario(K, "testTolerateUpdateTimeResetDuringProducerIdRotation", TRUNK_42, COORDINATOR, out_of_scope=CLOCK),
    Scenario(K, "testTolerateTimeShiftDuringAddPartitions", TRUNK_42, COORDINATOR, out_of_scope=CLOCK),
    Scenario(
        K,
        "testTransactionStateIdAndNameMapping",
        TRUNK_42,
        COORDINATOR,
        out_of_scope="the states' numeric ids in __transaction_state records: the model names states only",
    ),
    Scenario(
        K,
        "testAllTransactionStatesAreMapped",
        TRUNK_42,
        COORDINATOR,
        out_of_scope="an exhaustiveness check of Kafka's enum; model.txn_graph holds the states and edges",
    ),
)

_ = check
