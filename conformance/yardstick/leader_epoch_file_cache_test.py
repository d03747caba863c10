"""LeaderEpochFileCacheTest (core/src/test/scala/unit/kafka/server/epoch/), ported.

Trunk's assertions hold from 2.1 (KAFKA-7415) on: the rungs ``kip-320`` and ``diverging-epoch``
(the default). The 2.0.0 version of the test (before KAFKA-7415, commit f2dd6aa2698^) asserts the
older rules, ported with ``protocol=kip-279``: assign only appends, a query below the first entry
is undefined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.conformance.yardstick.dsl import EPOCH_CACHE, KAFKA_2_0, TRUNK, Scenario, call, check

K = "LeaderEpochFileCacheTest"
U = (-1, -1)
OLD = {"protocol": "kip-279"}
HELPER = (
    "a lookup helper used by tiered storage / ListOffsets (previousEpoch, nextEpoch, "
    "epochForOffset), not a protocol answer the model states"
)


def a(epoch: int, offset: int) -> object:
    return call("assign", epoch=epoch, offset=offset).step()


def end(epoch: int, log_end: int, want: tuple[int, int]) -> object:
    return call("end_offset_for", epoch=epoch, log_end=log_end).then(epoch=want[0], end_offset=want[1])


def S(
    method: str, *steps: object, version: str = TRUNK, config: Mapping[str, Any] | None = None, part: str = ""
) -> Scenario:
    return Scenario(K, method, version, EPOCH_CACHE, steps=tuple(steps), config=config or {}, part=part)  # type: ignore[arg-type]


def S_2_0(method: str, *steps: object, part: str = "") -> Scenario:
    """A scenario of the 2.0.0 version of the class (before KAFKA-7415), on the rung that keeps its rules."""
    return S(method, *steps, version=KAFKA_2_0, config=OLD, part=part)


def assigns(*pairs: tuple[int, int]) -> tuple[object, ...]:
    """``cache.assign(epoch, offset)`` for each pair, in order (the tests' common setups)."""
    return tuple(a(epoch, offset) for epoch, offset in pairs)


def OUT(method: str, why: str) -> Scenario:
    return Scenario(K, method, TRUNK, EPOCH_CACHE, out_of_scope=why)


def start(offset: int, entries: list[tuple[int, int]]) -> object:
    """``cache.truncateFromStart(offset)`` then the entries the test asserts (the log start moved)."""
    return call("truncate_from_start", offset=offset).then(entries=entries)


THREE = (a(2, 6), a(3, 8), a(4, 11))
"""The (2, 6), (3, 8), (4, 11) setup of the truncateFromStart tests."""

LEADERS_CHANGE = (a(0, 0), a(1, 0), check(latest_epoch=1), end(1, 0, (1, 0)), end(0, 0, (0, 0)))
"""shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes' opening, the same in trunk and in 2.0.0."""

SCENARIOS: tuple[Scenario, ...] = (
    S("shouldAddEpochAndMessageOffsetToCache", a(2, 10), check(latest_epoch=2, entries=[(2, 10)]), end(2, 11, (2, 11))),
    S("shouldReturnLogEndOffsetIfLatestEpochRequested", a(2, 11), a(2, 12), end(2, 14, (2, 14))),
    S("shouldReturnUndefinedOffsetIfUndefinedEpochRequested", a(2, 11), a(3, 12), end(-1, 0, U)),
    S("shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned", a(2, 9), a(2, 10), check(entries=[(2, 9)])),
    S("shouldEnforceMonotonicallyIncreasingStartOffsets", a(2, 9), a(3, 9), check(entries=[(3, 9)])),
    S("shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned", a(2, 6), a(2, 10), check(entries=[(2, 6)])),
    S("shouldReturnUnsupportedIfNoEpochRecorded", end(0, 0, U)),
    S("shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested", end(-1, 73, U)),
    S("shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch", a(5, 11), a(6, 12), a(7, 13), end(4, 0, (4, 11))),
    S(
        "shouldTruncateIfMatchingEpochButEarlierStartingOffset",
        *assigns((5, 11), (6, 12), (7, 13), (7, 12)),
        end(5, 0, (5, 12)),
        end(6, 0, (5, 12)),
    ),
    S(
        "shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch",
        *assigns((1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)),
        end(2, 17, (2, 15)),
    ),
    S(
        "shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested",
        *assigns((0, 10), (2, 13), (4, 17)),
        end(1, 0, (0, 13)),
        end(2, 0, (2, 17)),
        end(3, 0, (2, 17)),
    ),
    S("shouldNotUpdateEpochAndStartOffsetIfItDidNotChange", a(2, 6), a(2, 7), check(entries=[(2, 6)])),
    S("shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked", a(2, 100), end(3, 100, U)),
    S("shouldSupportEpochsThatDoNotStartFromZero", a(2, 6), end(2, 7, (2, 7)), check(entries=[(2, 6)])),
    S(
        "shouldEnforceMonotonicallyIncreasingEpochs",
        *assigns((1, 5), (2, 6), (1, 7)),
        check(latest_epoch=1, entries=[(1, 7)]),
        end(1, 8, (1, 8)),
        end(2, 8, U),
    ),
    S("shouldEnforceOffsetsIncreaseMonotonically", a(2, 6), a(3, 5), check(entries=[(3, 5)])),
    S(
        "shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes",
        *LEADERS_CHANGE,
        end(1, 5, (1, 5)),
        end(0, 5, (0, 0)),
        a(2, 5),
        end(2, 10, (2, 10)),
        end(1, 10, (1, 5)),
        end(0, 10, (0, 0)),
    ),
    S(
        "shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages",
        *assigns((0, 0), (0, 1), (0, 2)),
        check(latest_epoch=0),
        end(0, 3, (0, 3)),
        *assigns((1, 3), (1, 4), (1, 5)),
        check(latest_epoch=1),
        end(1, 6, (1, 6)),
        *assigns((2, 6), (2, 7), (2, 8)),
        check(latest_epoch=2),
        end(2, 9, (2, 9)),
        end(0, 9, (0, 3)),
        end(1, 9, (1, 6)),
    ),
    S(
        "shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries",
        *assigns((2, 6), (3, 8), (4, 11)),
        call("truncate_from_end", offset=8).then(entries=[(2, 6)]),
    ),
    S(
        "shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest",
        *assigns((2, 6), (3, 8), (4, 11)),
        call("truncate_from_end", offset=9).then(latest_epoch=3, entries=[(2, 6), (3, 8)]),
    ),
    S(
        "shouldNotResetEpochHistoryTailIfUndefinedPassed",
        *assigns((2, 6), (3, 8), (4, 11)),
        call("truncate_from_end", offset=-1).then(entries=[(2, 6), (3, 8), (4, 11)]),
        version=TRUNK,
    ),
    S("shouldFetchLatestEpochOfEmptyCache", check(latest_epoch=-1)),
    S("shouldFetchEndOffsetOfEmptyCache", end(7, 0, U)),
    S("shouldClearLatestOnEmptyCache", call("truncate_from_end", offset=7).then(entries=[])),
    # The same class at 2.0.0, before KAFKA-7415: the rung kip-279 keeps these rules.
    S_2_0(
        "shouldAllowLeaderEpochToChangeEvenIfOffsetDoesNot",
        a(2, 9),
        a(3, 9),
        check(entries=[(2, 9), (3, 9)]),
    ),
    S_2_0(
        "shouldReturnUnsupportedIfRequestedEpochLessThanFirstEpoch",
        *assigns((5, 11), (6, 12), (7, 13)),
        end(4, 0, U),
    ),
    S_2_0(
        "shouldNotLetEpochGoBackwardsEvenIfMessageEpochsDo",
        *assigns((1, 5), (2, 6), (1, 7)),
        check(latest_epoch=2, entries=[(1, 5), (2, 6)]),
        end(1, 8, (1, 6)),
        end(2, 8, (2, 8)),
    ),
    S_2_0(
        "shouldNotLetOffsetsGoBackwardsEvenIfEpochsProgress",
        a(2, 6),
        a(3, 5),
        check(entries=[(2, 6)]),
    ),
    S_2_0(
        "shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes",
        *LEADERS_CHANGE,
        a(2, 5),
        end(1, 10, (1, 5)),
        part="2.0.0",
    ),
    S_2_0(
        "shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch",
        *assigns((1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)),
        end(2, 17, (2, 15)),
        part="2.0.0",
    ),
    S("shouldPreserveResetOffsetOnClearEarliestIfOneExists", *THREE, start(8, [(3, 8), (4, 11)])),
    S("shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs", *THREE, start(9, [(3, 9), (4, 11)])),
    S("shouldNotClearAnythingIfOffsetToEarly", *THREE, start(1, [(2, 6), (3, 8), (4, 11)])),
    S("shouldNotClearAnythingIfOffsetToFirstOffset", *THREE, start(6, [(2, 6), (3, 8), (4, 11)])),
    S("shouldRetainLatestEpochOnClearAllEarliest", *THREE, start(11, [(4, 11)])),
    S("shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest", *THREE, start(9, [(3, 9), (4, 11)])),
    S(
        "shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2",
        *assigns((0, 0), (1, 7), (2, 10)),
        start(5, [(0, 5), (1, 7), (2, 10)]),
    ),
    S("shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset", *THREE, start(15, [(4, 15)])),
    S(
        "shouldNotResetEpochHistoryHeadIfUndefinedPassed",
        *THREE,
        start(-1, [(2, 6), (3, 8), (4, 11)]),
        part="truncateFromStart(UNDEFINED_EPOCH_OFFSET)",
    ),
    S("shouldClearEarliestOnEmptyCache", start(7, [])),
    OUT("shouldWriteCheckpointOnTruncation", "the checkpoint file's writes: the model's cache is a value"),
    OUT("shouldClearAllEntries", "clearAndFlush (a log deleted or replaced) is not a model transition"),
    OUT("shouldPersistEpochsBetweenInstances", "the checkpoint file: the model's crash keeps the cache as a value"),
    OUT("testPreviousEpoch", HELPER),
    OUT("testFindPreviousEpoch", HELPER),
    OUT("testFindPreviousEntry", HELPER),
    OUT("testFindNextEpoch", HELPER),
    OUT("testGetEpochEntry", HELPER),
    OUT("shouldFetchEpochForGivenOffset", HELPER),
)
