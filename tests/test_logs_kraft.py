"""KRaft metadata dumps (--cluster-metadata-decoder): every printed form parses, the partition replay
judges only what the dump shows (a later segment's change records never raise a false alarm), and
the legal states of KIP-966 (no leader, an empty ISR with eligible leader replicas) stay silent."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kconform.traces.logs.checks import NOT_OBSERVED, PASSED, VIOLATED
from kconform.traces.logs.observations import KRAFT_PARTITION
from tests.logskit import check_text, parse_text
from tests.test_logs_checks import meta, metadata_dump, registered

KRAFT_CHECKS = (
    "kraft-isr-within-replicas",
    "kraft-leader-in-isr",
    "kraft-elr-outside-isr",
    "kraft-partition-epochs-increase",
)


def _verdicts(tmp_path: Path, text: str) -> dict[str, tuple[str, int]]:
    out = {}
    for i, name in enumerate(KRAFT_CHECKS):
        c = check_text(tmp_path, text, name, f"in-{i}.txt")
        out[name] = (c.status, c.finding_count)
    return out


def test_skip_record_metadata_payload_lines_of_2_8_parse(tmp_path: Path) -> None:
    text = (
        "Dumping /tmp/kraft-combined-logs/@metadata-0/00000000000000000000.log\n"
        "Starting offset: 0\n"
        " payload: "
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"foo","topicId":"5zoAlv-xEh9xRANKXt1Lbg"}}\n'
        " payload: "
        '{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":0,"topicId":"5zoAlv-xEh9xRANKXt1Lbg",'
        '"replicas":[1],"isr":[1],"removingReplicas":null,"addingReplicas":null,"leader":1,"leaderEpoch":0,'
        '"partitionEpoch":0}}\n'
        'payload: {"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,"topicId":"5zoAlv-xEh9xRANKXt1Lbg","leader":-1}}\n'
    )
    observations, stats = parse_text(tmp_path, text)
    assert not stats.problems
    rows = [o for o in observations if o.kind == KRAFT_PARTITION]
    assert [(o.state, o.partition, o.leader, o.isr, o.replicas, o.elr) for o in rows] == [
        ("TOPIC_RECORD", "foo", None, None, None, None),
        ("PARTITION_RECORD", "foo-0", 1, "1", "1", ""),
        ("PARTITION_CHANGE_RECORD", "foo-0", -1, None, None, None),
    ]


def test_control_records_undecodable_values_and_trimmed_other_types_are_legal(tmp_path: Path) -> None:
    text = metadata_dump(
        "baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 1 isTransactional: false isControl: true deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: 1 size: 89 magic: 2 compresscodec: none crc: 1 isvalid: true",
        '| offset: 2 CreateTime: 1 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] LeaderChange: {"version":0,'
        '"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}',
        '| offset: 3 CreateTime: 1 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] SnapshotHeader {"version":0,'
        '"lastContainedLogTimestamp":1}',
        "| offset: 4 CreateTime: 1 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)",
        "| offset: 5 CreateTime: 1 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] endTxnMarker: LEADER_CHANGE",
        "| offset: 6 CreateTime: 1 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] payload: Error at 6, skipping. "
        "Could not deserialize metadata record",
        '| offset: 7 ... payload: {"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":2,...}}',
    )
    _, stats = parse_text(tmp_path, text)
    assert not stats.problems, stats.problems


def test_a_trimmed_partition_record_is_an_error_naming_its_line(tmp_path: Path) -> None:
    text = metadata_dump(meta(1, "PARTITION_RECORD", replicas=[1]).replace("]}}", "],...}}"))
    _, stats = parse_text(tmp_path, text)
    (problem,) = stats.problems
    assert problem.line == 4 and "cluster metadata record" in problem.message


def test_change_records_of_an_unseen_registration_are_judged_only_on_what_they_set(tmp_path: Path) -> None:
    # a later segment: no PARTITION_RECORD, so replicas, the leader and the epochs are unknown
    later = "\n".join(
        [
            "Dumping /var/lib/kafka/data/__cluster_metadata-0/00000000000000004096.log",
            meta(4096, "PARTITION_CHANGE_RECORD", isr=[7]),
            meta(4097, "PARTITION_CHANGE_RECORD", isr=[1, 2], leader=1),
            meta(4098, "PARTITION_CHANGE_RECORD", isr=[2]),
        ]
    )
    v = _verdicts(tmp_path, later + "\n")
    assert v["kraft-isr-within-replicas"] == (NOT_OBSERVED, 0)
    assert v["kraft-partition-epochs-increase"] == (NOT_OBSERVED, 0)
    # the leader (1, set at 4097) is known from then on: the ISR [2] at 4098 leaves it out
    assert v["kraft-leader-in-isr"] == (VIOLATED, 1)


def test_no_leader_and_an_empty_isr_with_elr_are_legal_kip_966(tmp_path: Path) -> None:
    text = metadata_dump(
        registered([1, 2, 3], [1, 2], 1, eligibleLeaderReplicas=[], lastKnownElr=[]),
        meta(2, "PARTITION_CHANGE_RECORD", isr=[1], eligibleLeaderReplicas=[2]),
        meta(3, "PARTITION_CHANGE_RECORD", isr=[], leader=-1, eligibleLeaderReplicas=[1, 2]),
        meta(4, "PARTITION_CHANGE_RECORD", isr=[2], leader=2, eligibleLeaderReplicas=[1]),
        meta(5, "PARTITION_CHANGE_RECORD", leader=-2, isr=None),  # explicit "unchanged" values
    )
    v = _verdicts(tmp_path, text)
    assert v.pop("kraft-partition-epochs-increase") == (NOT_OBSERVED, 0)  # no re-registration to judge
    assert all(status == PASSED and n == 0 for status, n in v.values()), v


def test_a_recreated_topic_restarts_its_epochs(tmp_path: Path) -> None:
    text = metadata_dump(
        registered([1, 2], [1, 2], 1, le=9, pe=12),
        meta(2, "REMOVE_TOPIC_RECORD"),
        meta(3, "TOPIC_RECORD", name="orders"),
        registered([1, 2], [1, 2], 1, le=0, pe=0),
    )
    assert _verdicts(tmp_path, text)["kraft-partition-epochs-increase"] == (NOT_OBSERVED, 0)


def test_epochs_count_every_change_record(tmp_path: Path) -> None:
    # three changes, one naming a leader: the partition epoch reached 10, the leader epoch 5
    changes = [
        registered([1, 2], [1, 2], 1, le=4, pe=7),
        meta(2, "PARTITION_CHANGE_RECORD", isr=[1]),
        meta(3, "PARTITION_CHANGE_RECORD", isr=[1, 2]),
        meta(4, "PARTITION_CHANGE_RECORD", leader=2),
    ]
    ok = metadata_dump(*changes, registered([1, 2], [1, 2], 2, le=5, pe=10))
    bad = metadata_dump(*changes, registered([1, 2], [1, 2], 2, le=5, pe=9))
    assert _verdicts(tmp_path, ok)["kraft-partition-epochs-increase"] == (PASSED, 0)
    assert _verdicts(tmp_path, bad)["kraft-partition-epochs-increase"] == (VIOLATED, 1)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
_FIELDS = (
    "partitionId",
    "topicId",
    "replicas",
    "isr",
    "leader",
    "leaderEpoch",
    "partitionEpoch",
    "eligibleLeaderReplicas",
    "name",
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["PARTITION_RECORD", "PARTITION_CHANGE_RECORD", "TOPIC_RECORD", "REMOVE_TOPIC_RECORD"]),
            st.dictionaries(st.sampled_from(_FIELDS), _JSON, max_size=len(_FIELDS)),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_any_metadata_record_value_parses_or_is_a_problem_never_a_crash(
    tmp_path: Path, records: list[tuple[str, dict[str, object]]]
) -> None:
    lines = [
        f"| offset: {i} CreateTime: 1 keySize: -1 valueSize: 9 sequence: -1 headerKeys: [] payload: "
        + json.dumps({"type": kind, "version": 0, "data": data}, separators=(",", ":"))
        for i, (kind, data) in enumerate(records)
    ]
    text = "Dumping /d/__cluster_metadata-0/00000000000000000000.log\n" + "\n".join(lines) + "\n"
    observations, stats = parse_text(tmp_path, text)
    from kconform.traces.logs.run import check_observations

    check_observations(observations)
    assert all(p.line >= 2 for p in stats.problems)
