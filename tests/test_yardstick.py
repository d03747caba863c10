"""Kafka's own tests as the yardstick (issue 14): the whole scenario table runs here, and the
vocabulary catches a wrong expectation (a scenario that cannot fail would prove nothing)."""

from __future__ import annotations

import dataclasses

import pytest

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS
from kconform.conformance.yardstick import table
from kconform.conformance.yardstick.dsl import (
    COORDINATOR,
    EPOCH_CACHE,
    TRUNK,
    Scenario,
    ScenarioError,
    call,
    check,
    run,
)
from kconform.conformance.yardstick.model_side import model_driver
from kconform.conformance.yardstick.reference_side import reference_driver


@pytest.fixture(scope="module")
def rows() -> list[table.Row]:
    return table.rows()


def test_every_scenario_in_scope_agrees_on_model_and_reference(rows: list[table.Row]) -> None:
    bad = [
        f"{r.scenario.name}: model {r.model.text}; reference {r.reference.text}"
        for r in rows
        if r.model.disagrees or r.reference.disagrees
    ]
    assert not bad, "\n".join(bad)
    s = table.summarize(rows)
    assert s.total >= 150 and s.model_agrees >= 150
    assert s.model_agrees + s.out_of_scope == s.total  # nothing silently dropped
    assert s.reference_agrees + s.reference_na + s.out_of_scope == s.total


def test_every_class_the_issue_names_is_in_the_table(rows: list[table.Row]) -> None:
    classes = {r.scenario.kafka_class for r in rows}
    assert {
        "LeaderEpochFileCacheTest",
        "PartitionTest",
        "AbstractFetcherThreadTest",
        "UnifiedLogTest",
        "ProducerStateManagerTest",
        "TransactionMetadataTest",
        "TransactionCoordinatorTest",
        "OffsetMetadataManagerTest",
        "ReplicaFetcherThreadTest",
        "ReplicaManagerTest",
        "FetcherTest",
        "TransactionManagerTest",
        "TransactionStateManagerTest",
        "TransactionMarkerChannelManagerTest",
        "TransactionMarkerRequestCompletionHandlerTest",
    } <= classes


def test_out_of_scope_scenarios_carry_a_reason_and_run_nothing(rows: list[table.Row]) -> None:
    for r in rows:
        if r.scenario.out_of_scope:
            assert len(r.scenario.out_of_scope) > 20 and not r.scenario.steps
            assert r.model.text.startswith("out of scope")


@pytest.mark.parametrize(
    "name",
    [
        "OffsetMetadataManagerTest.testFetchAllOffsetsWithPendingTransactionalOffsets",
        "TransactionMetadataTest.testEpochBumpOnEndTxnOverflow",
        "LeaderEpochFileCacheTest.shouldReturnUnsupportedIfRequestedEpochLessThanFirstEpoch",
        "LeaderEpochFileCacheTest.shouldNotLetEpochGoBackwardsEvenIfMessageEpochsDo",
    ],
)
def test_the_three_fixes_have_their_kafka_scenario(rows: list[table.Row], name: str) -> None:
    (r,) = [r for r in rows if r.scenario.name == name]
    assert r.model.agrees


def test_a_changed_literal_makes_the_scenario_disagree_on_both_sides() -> None:
    """Near miss of every scenario: the same steps with one expected number changed."""
    good = Scenario(
        "LeaderEpochFileCacheTest",
        "shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch",
        TRUNK,
        EPOCH_CACHE,
        steps=(
            call("assign", epoch=5, offset=11).step(),
            call("end_offset_for", epoch=4, log_end=0).then(epoch=4, end_offset=11),
        ),
    )
    bad = dataclasses.replace(
        good, steps=(good.steps[0], call("end_offset_for", epoch=4, log_end=0).then(epoch=4, end_offset=12))
    )
    for driver in (model_driver, reference_driver):
        assert run(good, driver(EPOCH_CACHE)).agrees  # type: ignore[arg-type]
        verdict = run(bad, driver(EPOCH_CACHE))  # type: ignore[arg-type]
        assert verdict.disagrees and "end_offset = 11, Kafka 12" in verdict.text


def test_the_2_0_rung_disagrees_with_trunk_where_kafka_7415_changed_the_answer() -> None:
    """The version switch is what expresses the difference: trunk's scenario fails on kip-279."""
    (trunk,) = [
        s for s in table.scenarios() if s.name.endswith("shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch")
    ]
    old = dataclasses.replace(trunk, config={"protocol": "kip-279"})
    assert run(trunk, model_driver(EPOCH_CACHE)).agrees
    assert run(old, model_driver(EPOCH_CACHE)).disagrees


def test_unknown_observable_or_argument_is_an_error_not_a_pass() -> None:
    s = Scenario("X", "y", TRUNK, COORDINATOR, given={"pid": 1, "epoch": 0, "state": "Empty"}, steps=(check(epochh=0),))
    with pytest.raises(ScenarioError, match="unknown observable 'epochh'"):
        run(s, model_driver(COORDINATOR))
    s = dataclasses.replace(s, steps=(call("init_producer_id", fresh=3).then(error=0),))
    with pytest.raises(ScenarioError, match="unknown argument"):
        run(s, model_driver(COORDINATOR))
    with pytest.raises(ScenarioError, match="not a Step"):
        Scenario("X", "y", TRUNK, COORDINATOR, steps=(call("complete"),))  # type: ignore[arg-type]


def test_kconform_scenarios_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["scenarios", "--class", "TransactionMetadataTest"]) == EXIT_PASS
    out = capsys.readouterr().out
    assert "TransactionMetadataTest.testEpochBumpOnEndTxnOverflow" in out and "agrees" in out
    assert cli.main(["scenarios", "--class", "NoSuchTest"]) == EXIT_ERROR
    assert "kconform: error:" in capsys.readouterr().err


NEW_CLASSES = (
    "ReplicaFetcherThreadTest",
    "AbstractFetcherThreadTest",
    "ReplicaManagerTest",
    "TransactionMarkerChannelManagerTest",
    "TransactionMarkerRequestCompletionHandlerTest",
    "FetcherTest",
    "TransactionManagerTest",
)


def test_every_ported_scenario_of_the_second_pass_fails_when_its_last_expectation_changes() -> None:
    """Near miss of each scenario in scope of the classes ported second: the same steps with the last
    expected observable replaced by a value no side answers; a refused step is made to expect success."""
    checked = 0
    for s in table.scenarios():
        if s.kafka_class not in NEW_CLASSES or s.out_of_scope:
            continue
        *head, last = s.steps
        if last.refused:
            changed = dataclasses.replace(last, refused=False)
        else:
            key = next(iter(last.expect))
            changed = dataclasses.replace(last, expect={**last.expect, key: "no such value"})
        assert run(s, model_driver(s.subject)).agrees, s.name
        assert run(dataclasses.replace(s, steps=(*head, changed)), model_driver(s.subject)).disagrees, s.name
        checked += 1
    assert checked >= 70


def test_the_no_more_epochs_stubs_hold_only_before_kafka_7415() -> None:
    """ReplicaFetcherThreadTest's endOffsetForEpoch(4) = None beside latestEpoch 5 is the 2.0 cache's
    answer: on rung kip-279 the follower truncates to the leader's 156, on kip-320 (KAFKA-7415) to 0."""
    method = "shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs"
    (s,) = [s for s in table.scenarios() if s.method == method and s.part == "t1p0"]
    assert run(s, model_driver(s.subject)).agrees
    later = run(dataclasses.replace(s, config={**s.config, "protocol": "kip-320"}), model_driver(s.subject))
    assert later.disagrees and "truncated_to = 0, Kafka 156" in later.text
