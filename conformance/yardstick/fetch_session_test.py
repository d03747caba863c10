"""FetchSessionTest (core/src/test/scala/unit/kafka/server/), ported.

The test drives FetchSessionCacheShard (maybeCreateSession, touch, remove) and FetchManager's
contexts (newContext, then updateAndGenerateResponseData with the response data the test writes
itself). Kafka draws session ids at random; a scenario names the id the model's session gets
(``id``), and where Kafka asserts ``sessionId != INVALID_SESSION_ID`` the scenario checks that
exact id. Partitions are named ``topic-index``; response data rows are [partition, HW, LSO, log
start, records] (and an error code, when the test sets one).
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import FETCH_SESSION, TRUNK, Scenario, Step, call, check
from kconform.model.errors import FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, NONE

K = "FetchSessionTest"
FULL = "FullFetchContext"
INCREMENTAL = "IncrementalFetchContext"
SESSIONLESS = "SessionlessFetchContext"
ERROR = "SessionErrorContext"
UNKNOWN_TOPIC_OR_PARTITION = 3
UNKNOWN_TOPIC_ID = 100
TOPIC_IDS = (
    "topic ids (request version 13+, FETCH_SESSION_TOPIC_ID_ERROR, resolving unknown ids): the model's requests "
    "name partitions only (model.fetch_session's scope)"
)


def S(method: str, slots: int, eviction_ms: int, *steps: Step, part: str = "", resolution: str = "") -> Scenario:
    return Scenario(
        K,
        method,
        TRUNK,
        FETCH_SESSION,
        given={"slots": slots, "eviction_ms": eviction_ms},
        steps=steps,
        part=part,
        resolution=resolution,
    )


def out(method: str, why: str, part: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, FETCH_SESSION, out_of_scope=why, part=part)


FOO = [["foo-0", 0], ["foo-1", 10]]
FOO_DATA = [["foo-0", 100, 100, 100, 0], ["foo-1", 10, 10, 10, 0]]


def _full(now: int, sid: int, follower: bool = False, send: list[list[object]] | None = None) -> tuple[Step, ...]:
    """A full request for foo-0 and foo-1, answered with FOO_DATA: a new session ``sid`` (FetchSessionTest's
    session1req / respData1)."""
    return (
        call("new_context", now=now, send=send or FOO, follower=follower).then(context=FULL),
        call("respond", data=FOO_DATA, id=sid).then(error=NONE, session_id=sid, partitions=("foo-0", "foo-1")),
    )


SCENARIOS: tuple[Scenario, ...] = (
    out(
        "testNewSessionId",
        "session ids are Kafka's random draw (ThreadLocalRandom); the model takes the id as the implementation's "
        "choice and requires it positive and unused (tests/test_fetch_model.py)",
    ),
    S(
        "testSessionCache",
        3,
        100,
        call("create", now=0, size=10, id=1).then(session_id=1),
        call("create", now=10, size=20, id=2).then(session_id=2),
        call("create", now=20, size=30, id=3).then(session_id=3),
        call("create", now=30, size=40, id=4).then(session_id=0),
        call("create", now=40, size=5, id=4).then(session_id=0),
        check(sessions={1, 2, 3}),
        call("touch", id=1, now=200).step(),
        call("create", now=210, size=11, id=4).then(session_id=4, sessions={1, 3, 4}),
        call("touch", id=1, now=400).step(),
        call("touch", id=3, now=390).step(),
        call("touch", id=4, now=400).step(),
        call("create", now=410, size=50, id=5).then(session_id=5, sessions={3, 4, 5}),
        call("create", now=410, size=5, id=6).then(session_id=0),
        call("create", now=410, privileged=True, size=5, id=6).then(session_id=6, sessions={3, 5, 6}),
    ),
    S(
        "testResizeCachedSessions",
        2,
        100,
        check(total_partitions=0, size=0, evictions=0),
        call("create", now=0, size=2, id=1).then(session_id=1, sessions={1}, total_partitions=2, size=1, evictions=0),
        call("create", now=0, size=4, id=2).then(session_id=2, sessions={1, 2}, total_partitions=6, size=2),
        call("touch", id=1, now=200).step(),
        call("touch", id=2, now=200).step(),
        call("create", now=200, size=5, id=3).then(session_id=3, sessions={2, 3}, total_partitions=9, evictions=1),
        call("remove", id=3).then(sessions={2}, size=1, evictions=1, total_partitions=4),
        part="up to remove",
        resolution="the test's last lines remove a partition through the session's own iterator and touch it: "
        "not a handler of the cache, so not ported",
    ),
    out(
        "testCachedLeaderEpoch",
        "leader epochs in the cached request data (KAFKA-9338): the model caches the fetch "
        "offset only (model.fetch_session's scope)",
    ),
    out(
        "testLastFetchedEpoch",
        "the last fetched epoch in the cached request data: the model caches the fetch "
        "offset only (model.fetch_session's scope)",
    ),
    S(
        "testFetchRequests",
        1000,
        1000,
        call("new_context", now=0, session_id=0, epoch=-1, follower=True).then(context=SESSIONLESS),
        call("new_context", now=0, send=FOO).then(context=FULL, reads=(("foo-0", 0), ("foo-1", 10))),
        call("respond", data=FOO_DATA, id=7).then(error=NONE, session_id=7, partitions=("foo-0", "foo-1")),
        check(orders={7: ("foo-0", "foo-1")}),
        call("new_context", now=0, session_id=7, epoch=5, send=FOO).then(context=ERROR),
        call("respond").then(error=INVALID_FETCH_SESSION_EPOCH),
        call("new_context", now=0, session_id=8, epoch=1, send=FOO).then(context=ERROR),
        call("respond").then(error=FETCH_SESSION_ID_NOT_FOUND),
        call("new_context", now=0, session_id=7, epoch=1).then(
            context=INCREMENTAL, reads=(("foo-0", 0), ("foo-1", 10))
        ),
        call("respond", data=FOO_DATA).then(error=NONE, session_id=7, partitions=()),
        call("new_context", now=0, session_id=7, epoch=5, send=FOO).then(context=ERROR),
        call("respond").then(error=INVALID_FETCH_SESSION_EPOCH),
        call("new_context", now=0, session_id=7, epoch=2).then(context=INCREMENTAL),
        call("respond").then(error=NONE, session_id=7, partitions=()),
        call("new_context", now=0, session_id=7, epoch=-1, send=[["bar-0", 0], ["bar-1", 10]]).then(
            context=SESSIONLESS, size=0
        ),
        call("respond", data=[["bar-0", 100, 100, 100, 0], ["bar-1", 100, 100, 100, 0]]).then(
            error=NONE, session_id=0, partitions=("bar-0", "bar-1")
        ),
        resolution="request 7's answer is Kafka's getThrottledResponse (KIP-219, throttle time 100): the model has "
        "no quotas, so it is answered by updateAndGenerateResponseData with no data, which carries the same "
        "error and session id; the throttle time is not an observable",
    ),
    S(
        "testIncrementalFetchSession",
        10,
        1000,
        *_full(0, 4),
        call("new_context", now=0, session_id=4, epoch=1, send=[["bar-0", 15]], forget=["foo-0"]).then(
            context=INCREMENTAL, reads=(("foo-1", 10), ("bar-0", 15))
        ),
        call("respond", data=[["foo-1", 10, 10, 10, 0], ["bar-0", 10, 10, 10, 0]]).then(
            error=NONE, session_id=4, partitions=("bar-0",)
        ),
        part="usesTopicIds = false",
        resolution="request version 12 (no topic ids); the first answer's data is FOO_DATA (foo-1's HW, LSO and log "
        "start 10 as in the test); Kafka asserts the session id is positive, the scenario names it (4); "
        "getFetchOffset of foo-0 (forgotten) and of bar-2 (never sent) is None: neither is among the reads",
    ),
    out(
        "testIncrementalFetchSession",
        "the same steps at the latest request version, resolving topic ids: " + TOPIC_IDS,
        part="usesTopicIds = true",
    ),
    out("testFetchSessionWithUnknownIdOldRequestVersion", TOPIC_IDS),
    out("testFetchSessionWithUnknownId", TOPIC_IDS),
    out("testIncrementalFetchSessionWithIdsWhenSessionDoesNotUseIds", TOPIC_IDS),
    out("testIncrementalFetchSessionWithoutIdsWhenSessionUsesIds", TOPIC_IDS),
    out("testFetchSessionUpdateTopicIdsBrokerSide", TOPIC_IDS),
    out("testResolveUnknownPartitions", TOPIC_IDS),
    out("testToForgetPartitions", TOPIC_IDS),
    S(
        "testUpdateAndGenerateResponseData",
        10,
        1000,
        call("new_context", now=0, epoch=-1, send=[["foo-0", 0], ["bar-0", 0]]).then(context=SESSIONLESS),
        call(
            "respond",
            data=[["foo-0", -1, -1, -1, 0, UNKNOWN_TOPIC_OR_PARTITION], ["bar-0", -1, -1, -1, 0, UNKNOWN_TOPIC_ID]],
        ).then(errors=(UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID)),
        call("new_context", now=0, epoch=0, send=[["foo-0", 0], ["bar-0", 0]]).then(context=FULL),
        call(
            "respond",
            data=[["foo-0", -1, -1, -1, 0, UNKNOWN_TOPIC_OR_PARTITION], ["bar-0", -1, -1, -1, 0, UNKNOWN_TOPIC_ID]],
            id=3,
        ).then(session_id=3, errors=(UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID)),
        call("new_context", now=0, session_id=3, epoch=1).then(context=INCREMENTAL),
        call(
            "respond",
            data=[["foo-0", -1, -1, -1, 0, UNKNOWN_TOPIC_OR_PARTITION], ["bar-0", -1, -1, -1, 0, UNKNOWN_TOPIC_ID]],
        ).then(partitions=("foo-0", "bar-0"), errors=(UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID)),
        call("new_context", now=0, session_id=3, epoch=1).then(context=ERROR),
        call("respond").then(partitions=()),
        resolution="bar's UNKNOWN_TOPIC_ID comes from the receiving broker not resolving its topic id; the model "
        "has no topic ids, so the scenario gives it as the error the broker read (the test's point, errors "
        "keeping partitions in every answer, is the model's)",
    ),
    S(
        "testFetchSessionExpiration",
        2,
        1000,
        *_full(0, 1),
        check(sessions={1}),
        *_full(500, 2),
        check(sessions={1, 2}),
        call("new_context", now=1000, session_id=1, epoch=1).then(context=INCREMENTAL),
        *_full(1501, 3, send=[["foo-0", 0], ["foo-1", 0]]),
        check(sessions={1, 3}),
    ),
    S(
        "testPrivilegedSessionHandling",
        2,
        1000,
        *_full(0, 1, follower=True),
        check(size=1),
        *_full(500, 2),
        check(sessions={1, 2}, size=2),
        *_full(1000, 3, follower=True, send=[["foo-0", 0], ["foo-1", 0]]),
        check(sessions={1, 3}, size=2),
        *_full(1501, 4, follower=True, send=[["foo-0", 0], ["foo-1", 0]]),
        check(sessions={3, 4}, size=2),
    ),
    S(
        "testZeroSizeFetchSession",
        10,
        1000,
        *_full(0, 1),
        call("new_context", now=0, session_id=1, epoch=1, forget=["foo-0", "foo-1"]).then(context=SESSIONLESS, size=0),
        call("respond").then(session_id=0, partitions=()),
    ),
    out(
        "testDivergingEpoch",
        "diverging epochs (KIP-320) in a fetch answer: the slice has no truncating "
        "followers (model.fetch_session's scope)",
    ),
    S(
        "testDeprioritizesPartitionsWithRecordsOnly",
        10,
        1000,
        call("new_context", now=0, send=[["foo-1", 100], ["bar-2", 100], ["zar-3", 100]]).then(context=FULL),
        call("respond", data=[["foo-1", 50, 50, 0, 0], ["bar-2", 50, 50, 0, 0], ["zar-3", 50, 50, 0, 0]], id=9).then(
            error=NONE, session_id=9, partitions=("foo-1", "bar-2", "zar-3")
        ),
        call("new_context", now=0, session_id=9, epoch=1, send=[["foo-1", 100], ["bar-2", 100], ["zar-3", 100]]).then(
            context=INCREMENTAL, orders={9: ("foo-1", "bar-2", "zar-3")}
        ),
        call("respond").then(error=NONE, session_id=9, partitions=()),
        call("respond", data=[["foo-1", 60, 50, 0, 0], ["bar-2", 60, 50, 0, 1], ["zar-3", 50, 50, 0, 0]]).then(
            error=NONE, session_id=9, partitions=("foo-1", "bar-2"), orders={9: ("foo-1", "zar-3", "bar-2")}
        ),
    ),
    out("testCachedPartitionEqualsAndHashCode", "CachedPartition's equality by topic id or name: " + TOPIC_IDS),
    out("testMaybeResolveUnknownName", TOPIC_IDS),
    out(
        "testFetchSessionCache_getShardedCache_retrievesCacheFromCorrectSegment",
        "cache shards (KAFKA-9401, 3.8+): the model is one shard, the cache of Kafka before 3.8",
    ),
    out("testFetchSessionCache_RoundRobinsIntoShards", "cache shards (KAFKA-9401): the model is one shard"),
    out(
        "testFetchSessionCache_RoundRobinsIntoShards_WhenIntegerOverflows",
        "cache shards (KAFKA-9401): the model is one shard",
    ),
)
