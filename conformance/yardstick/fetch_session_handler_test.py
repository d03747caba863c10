"""FetchSessionHandlerTest (clients/src/test/java/org/apache/kafka/clients/), ported.

The test builds requests with FetchSessionHandler.Builder and feeds responses to handleResponse.
A partition's request data is written as Kafka's test writes it (fetch offset, log start offset,
max bytes); partitions are named ``topic-index``. The tests run each case at request versions 12
and 13+ (topic ids); the model has no topic ids, so each case is ported once, with version 12's
meaning. Top-level errors the model does not name (UNKNOWN_TOPIC_ID) keep their code.
"""

from __future__ import annotations

from kconform.conformance.yardstick.dsl import FETCH_HANDLER, TRUNK, Scenario, Step, call
from kconform.model.errors import FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH

K = "FetchSessionHandlerTest"
UNKNOWN_TOPIC_ID = 100
TOPIC_IDS = "topic ids (request version 13+): the model's requests name partitions only (model.fetch_client's scope)"

FOO0 = ["foo-0", 0, 100, 200]
FOO1 = ["foo-1", 10, 110, 210]
FOO1_ALTERED = ["foo-1", 10, 120, 210]
BAR0 = ["bar-0", 20, 200, 200]


def S(method: str, *steps: Step, resolution: str = "", part: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, FETCH_HANDLER, steps=steps, resolution=resolution, part=part)


def out(method: str, why: str, part: str = "") -> Scenario:
    return Scenario(K, method, TRUNK, FETCH_HANDLER, out_of_scope=why, part=part)


def _t(*rows: list[object]) -> tuple[tuple[object, ...], ...]:
    return tuple(tuple(r) for r in rows)


SCENARIOS: tuple[Scenario, ...] = (
    out("testFindMissing", "a set-difference helper of the handler's verification: no protocol behaviour of its own"),
    S(
        "testSessionless",
        call("build", partitions=[FOO0, FOO1]).then(
            to_send=_t(FOO0, FOO1), session_partitions=_t(FOO0, FOO1), session_id=0, epoch=0
        ),
        call("response", session_id=0, partitions=["foo-0", "foo-1"]).then(ok=True),
        call("build", partitions=[FOO0]).then(session_id=0, epoch=0, to_send=_t(FOO0), session_partitions=_t(FOO0)),
    ),
    S(
        "testIncrementals",
        call("build", partitions=[FOO0, FOO1]).then(
            to_send=_t(FOO0, FOO1), session_partitions=_t(FOO0, FOO1), session_id=0, epoch=0
        ),
        call("response", session_id=123, partitions=["foo-0", "foo-1"]).then(ok=True),
        call("build", partitions=[FOO0, FOO1_ALTERED, BAR0]).then(
            full=False,
            session_partitions=_t(FOO0, FOO1_ALTERED, BAR0),
            to_send=_t(BAR0, FOO1_ALTERED),
        ),
        call("response", session_id=123, partitions=["foo-1"]).then(ok=True),
        call("response", error=INVALID_FETCH_SESSION_EPOCH, session_id=0).then(ok=False),
        call("build", partitions=[FOO0, FOO1_ALTERED, BAR0]).then(
            full=True,
            session_id=123,
            epoch=0,
            session_partitions=_t(FOO0, FOO1_ALTERED, BAR0),
            to_send=_t(FOO0, FOO1_ALTERED, BAR0),
        ),
    ),
    out(
        "testDoubleBuild",
        "calling Builder.build twice is a Java API misuse (IllegalStateException), not a protocol step",
    ),
    S(
        "testIncrementalPartitionRemoval",
        call("build", partitions=[FOO0, ["foo-1", 10, 110, 210], ["bar-0", 20, 120, 220]]).then(
            to_send=_t(FOO0, FOO1, ["bar-0", 20, 120, 220]), full=True
        ),
        call("response", session_id=123, partitions=["foo-0", "foo-1", "bar-0"]).then(ok=True),
        call("build", partitions=[FOO1]).then(
            full=False, session_id=123, epoch=1, session_partitions=_t(FOO1), to_send=(), to_forget=("foo-0", "bar-0")
        ),
        call("response", error=FETCH_SESSION_ID_NOT_FOUND, session_id=0).then(ok=False),
        call("build", partitions=[FOO0]).then(
            full=True, session_id=0, epoch=0, session_partitions=_t(FOO0), to_send=_t(FOO0)
        ),
    ),
    out("testTopicIdUsageGrantedOnIdUpgrade", TOPIC_IDS),
    out("testIdUsageRevokedOnIdDowngrade", TOPIC_IDS),
    S(
        "testTopicIdReplaced",
        call("build", partitions=[FOO0]).then(to_send=_t(FOO0), session_partitions=_t(FOO0), full=True),
        call("response", session_id=123, partitions=["foo-0"]).then(ok=True),
        call("build", partitions=[FOO0]).then(to_send=(), session_partitions=_t(FOO0), session_id=123, epoch=1),
        part="startsWithTopicIds = false, endsWithTopicIds = false",
        resolution="the case without topic ids (version 12): the same partition data added again is nothing to "
        "send (toReplace and sessionTopicNames stay empty: topic ids); the response's HW 10 and log start 20 are "
        "not read by handleResponse",
    ),
    out(
        "testTopicIdReplaced",
        "a topic id given or replaced (toReplace, canUseTopicIds): " + TOPIC_IDS,
        part="the three cases with a topic id",
    ),
    out("testSessionEpochWhenMixedUsageOfTopicIDs", "one partition with a topic id and one without: " + TOPIC_IDS),
    S(
        "testIdUsageWithAllForgottenPartitions",
        call("build", partitions=[FOO0]).then(to_send=_t(FOO0), session_partitions=_t(FOO0), full=True),
        call("response", session_id=123, partitions=["foo-0"]).then(ok=True),
        call("build", partitions=[]).then(to_forget=("foo-0",), session_id=123, epoch=1),
        part="useTopicIds = false",
        resolution="version 12; canUseTopicIds (false) is a topic-id observable the model does not have",
    ),
    out(
        "testIdUsageWithAllForgottenPartitions",
        "the same steps with a topic id: " + TOPIC_IDS,
        part="useTopicIds = true",
    ),
    out("testOkToAddNewIdAfterTopicRemovedFromSession", TOPIC_IDS),
    S(
        "testVerifyFullFetchResponsePartitions",
        call("response", session_id=0, partitions=["foo-0", "foo-1", "bar-0"]).then(ok=False),
        call("build", partitions=[FOO0, FOO1, ["bar-0", 20, 120, 220]]).step(),
        call("response", session_id=0, partitions=["foo-0", "foo-1", "bar-0"]).then(ok=True),
        call("response", session_id=0, partitions=["foo-0", "foo-1"]).then(ok=False),
        resolution="Kafka's test calls verifyFullFetchResponsePartitions directly (extra partitions, omitted "
        "partitions); here through handleResponse, which returns false exactly when it finds an issue",
    ),
    out("testVerifyFullFetchResponsePartitionsWithTopicIds", TOPIC_IDS),
    S(
        "testTopLevelErrorResetsMetadata",
        call("build", partitions=[FOO0, FOO1]).then(session_id=0, epoch=0),
        call("response", session_id=123, partitions=["foo-0", "foo-1"]).then(ok=True),
        call("build", partitions=[["unknown-0", 0, 100, 200]]).then(full=False, session_id=123, epoch=1),
        call("response", error=UNKNOWN_TOPIC_ID, session_id=123, partitions=["unknown-0"]).then(ok=False),
        call("build", partitions=[]).then(session_id=123, epoch=0),
    ),
)

__all__ = ["SCENARIOS"]
