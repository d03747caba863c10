"""PartitionTest (core/src/test/scala/unit/kafka/cluster/), ported onto the replication model.

A test's partition is built with ``given``: the leader's log as the epoch of each offset, the
leader epoch every replica knows, the ISR. The default rung (diverging-epoch, 2.7+) is trunk's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import REPLICATION, TRUNK, Scenario, Step, call
from kconform.traces.events import (
    FENCED_LEADER_EPOCH,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    UNKNOWN_LEADER_EPOCH,
)

K = "PartitionTest"
LOG_17 = [0, 0, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 7, 9, 9, 9]
"""testLastFetchedOffsetValidation's leader log: batches of epoch 0 (2), 3 (3+3), 4 (5), 7 (1), 9 (3)."""
KIP_392 = "a consumer fetching from a follower with client metadata (KIP-392): not in the model (issue 14 §2)"


def S(method: str, given: Mapping[str, Any], *steps: Step, part: str = "", resolution: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, REPLICATION, given=given, steps=steps, part=part, resolution=resolution)


def read(last_fetched_epoch: int, fetch_offset: int, diverging: tuple[int, int] | None) -> Step:
    want: dict[str, object] = {"error": NONE}
    if diverging is None:
        want.update(diverging_epoch=-1)
    else:
        want.update(diverging_epoch=diverging[0], diverging_end_offset=diverging[1], records=0)
    return call(
        "fetch", follower=1, fetch_offset=fetch_offset, last_fetched_epoch=last_fetched_epoch, current_leader_epoch=10
    ).then(**want)


LEADER_5 = {"leader": 0, "leader_epoch": 5}
FOLLOWER_5 = {"leader": 1, "leader_epoch": 5}

SCENARIOS: tuple[Scenario, ...] = (
    S(
        "testLastFetchedOffsetValidation",
        {"logs": {0: LOG_17}, "leader_epoch": 10},
        read(2, 5, (0, 2)),
        read(0, 4, (0, 2)),
        read(6, 6, (4, 13)),
        read(5, 9, (4, 13)),
        read(10, 18, (10, 17)),
        read(0, 2, None),
        read(7, 14, None),
        read(9, 17, None),
        read(10, 17, None),
        call("fetch", follower=1, fetch_offset=5, last_fetched_epoch=11, current_leader_epoch=10).then(
            error=OFFSET_OUT_OF_RANGE
        ),
        part="log start 0",
    ),
    S(
        "testLastFetchedOffsetValidation",
        {"logs": {0: LOG_17}, "leader_epoch": 10, "hw": {0: 17}},
        call("delete_records", offset=5).then(error=NONE, log_start=5),
        read(2, 8, (2, 5)),
        read(0, 5, None),
        read(3, 5, None),
        call("fetch", follower=1, fetch_offset=0, last_fetched_epoch=0, current_leader_epoch=10).then(
            error=OFFSET_OUT_OF_RANGE
        ),
        call("delete_records", offset=10).then(error=NONE, log_start=10),
        call("fetch", follower=1, fetch_offset=6, last_fetched_epoch=5, current_leader_epoch=10).then(
            error=OFFSET_OUT_OF_RANGE
        ),
        call("fetch", follower=1, fetch_offset=6, last_fetched_epoch=3, current_leader_epoch=10).then(
            error=OFFSET_OUT_OF_RANGE
        ),
        part="log start 5 and 10",
        resolution="the test moves the log start with maybeIncrementLogStartOffset after setting the HW to "
        "the LEO; here DeleteRecords (Partition.deleteRecordsOnLeader, KIP-107) moves it, which checks the "
        "same bound (never past the HW) and truncates the epoch cache from the start the same way",
    ),
    S(
        "testMakeLeaderUpdatesEpochCache",
        {"logs": {0: [0, 0, 5, 5]}, "leader_epoch": 8},
        call("epoch_query", epoch=8, current_leader_epoch=8).then(error=NONE, epoch=8, end_offset=4),
    ),
    S(
        "testOffsetForLeaderEpochValidationForLeader",
        LEADER_5,
        call("epoch_query", epoch=0).then(error=NONE),
        call("epoch_query", epoch=0, current_leader_epoch=5).then(error=NONE),
        call("epoch_query", epoch=0, current_leader_epoch=4).then(error=FENCED_LEADER_EPOCH),
        call("epoch_query", epoch=0, current_leader_epoch=6).then(error=UNKNOWN_LEADER_EPOCH),
    ),
    S(
        "testOffsetForLeaderEpochValidationForFollower",
        FOLLOWER_5,
        call("epoch_query", node=0, epoch=0).then(error=NOT_LEADER_OR_FOLLOWER),
        call("epoch_query", node=0, epoch=0, current_leader_epoch=5).then(error=NOT_LEADER_OR_FOLLOWER),
        call("epoch_query", node=0, epoch=0, current_leader_epoch=4).then(error=FENCED_LEADER_EPOCH),
        call("epoch_query", node=0, epoch=0, current_leader_epoch=6).then(error=UNKNOWN_LEADER_EPOCH),
        part="fetchOnlyFromLeader",
    ),
    Scenario(
        K,
        "testOffsetForLeaderEpochValidationForFollower",
        TRUNK,
        REPLICATION,
        part="from any replica",
        out_of_scope="OffsetsForLeaderEpoch with fetchOnlyFromLeader=false (consumers' KIP-392 validation "
        "against a follower): the model's queries are the followers' to the leader",
    ),
    S(
        "testLeaderEpochValidationOnLeader",
        LEADER_5,
        call("fetch", follower=1, fetch_offset=0).then(error=NONE),
        call("fetch", follower=1, fetch_offset=0, current_leader_epoch=5).then(error=NONE),
        call("fetch", follower=1, fetch_offset=0, current_leader_epoch=4).then(error=FENCED_LEADER_EPOCH),
        call("fetch", follower=1, fetch_offset=0, current_leader_epoch=6).then(error=UNKNOWN_LEADER_EPOCH),
    ),
    S(
        "testLeaderEpochValidationOnFollower",
        FOLLOWER_5,
        call("consumer_fetch", node=0, offset=0).then(error=NOT_LEADER_OR_FOLLOWER),
        call("consumer_fetch", node=0, offset=0, current_leader_epoch=5).then(error=NOT_LEADER_OR_FOLLOWER),
        call("consumer_fetch", node=0, offset=0, current_leader_epoch=4).then(error=FENCED_LEADER_EPOCH),
        call("consumer_fetch", node=0, offset=0, current_leader_epoch=6).then(error=UNKNOWN_LEADER_EPOCH),
        part="without client metadata",
    ),
    Scenario(
        K, "testLeaderEpochValidationOnFollower", TRUNK, REPLICATION, part="with client metadata", out_of_scope=KIP_392
    ),
)
