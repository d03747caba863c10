"""Every log check fires on a bad input and stays silent on its near miss (the smallest change that
makes the input legal), and says "not observed" when the input cannot exercise it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform.traces.logs.checks import NOT_OBSERVED, PASSED, VIOLATED, check_names
from tests.logskit import check_text

B = (
    "baseOffset: {b} lastOffset: {l} count: {c} baseSequence: {s} lastSequence: {ls} producerId: {pid} producerEpoch: {pe} "
    "partitionLeaderEpoch: {le} isTransactional: {tx} isControl: {ctl} deleteHorizonMs: OptionalLong.empty position: 0 "
    "CreateTime: {t} size: 80 magic: 2 compresscodec: none crc: 1 isvalid: true"
)
M = "| offset: {o} CreateTime: {t} keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: {m} coordinatorEpoch: {ce}"


def batch(
    b: int,
    last_: int | None = None,
    *,
    s: int = -1,
    pid: int = -1,
    pe: int = -1,
    le: int = 0,
    tx: bool = False,
    ctl: bool = False,
    t: int = 1000,
    c: int | None = None,
) -> str:
    last = b if last_ is None else last_
    count = last - b + 1 if c is None else c
    ls = -1 if s < 0 else s + count - 1
    return B.format(
        b=b, l=last, c=count, s=s, ls=ls, pid=pid, pe=pe, le=le, tx=str(tx).lower(), ctl=str(ctl).lower(), t=t
    )


def marker(o: int, m: str = "COMMIT", ce: int = 0, t: int = 1000) -> str:
    return M.format(o=o, m=m, ce=ce, t=t)


def dump(*lines: str, partition: str = "orders-0") -> str:
    return "\n".join([f"Dumping /data/{partition}/00000000000000000000.log", "Starting offset: 0", *lines]) + "\n"


def verdict(tmp_path: Path, text: str, check: str, name: str = "input.log") -> tuple[str, int]:
    c = check_text(tmp_path, text, check, name)
    return c.status, c.finding_count


CASES: list[tuple[str, str, str]] = [
    # (check, bad input, near miss)
    (
        "segment-offsets-increasing",
        dump(batch(0, 4), batch(4, 6)),
        dump(batch(0, 4), batch(5, 6)),
    ),
    (
        "segment-leader-epochs-non-decreasing",
        dump(batch(0, le=3), batch(1, le=2)),
        dump(batch(0, le=2), batch(1, le=3)),
    ),
    (
        "producer-sequences-contiguous",
        dump(batch(0, 1, s=0, pid=5, pe=0), batch(2, 3, s=3, pid=5, pe=0)),
        dump(batch(0, 1, s=0, pid=5, pe=0), batch(2, 3, s=2, pid=5, pe=0)),
    ),
    (
        "producer-epochs-non-decreasing",
        dump(batch(0, s=0, pid=5, pe=2), batch(1, s=0, pid=5, pe=1)),
        dump(batch(0, s=0, pid=5, pe=1), batch(1, s=0, pid=5, pe=2)),
    ),
    (
        "txn-batches-closed-by-marker",
        # a hanging transaction: the partition keeps taking writes 30 minutes later
        dump(batch(0, s=0, pid=7, pe=0, tx=True, t=0), batch(1, s=0, pid=8, pe=0, t=1_800_000)),
        dump(
            batch(0, s=0, pid=7, pe=0, tx=True, t=0),
            batch(1, pid=7, pe=0, tx=True, ctl=True, t=10),
            marker(1, t=10),
            batch(2, s=0, pid=8, pe=0, t=1_800_000),
        ),
    ),
    (
        "txn-marker-coordinator-epochs-non-decreasing",
        dump(
            batch(0, pid=7, pe=0, tx=True, ctl=True),
            marker(0, ce=3),
            batch(1, pid=7, pe=0, tx=True, ctl=True),
            marker(1, ce=2),
        ),
        dump(
            batch(0, pid=7, pe=0, tx=True, ctl=True),
            marker(0, ce=2),
            batch(1, pid=7, pe=0, tx=True, ctl=True),
            marker(1, ce=3),
        ),
    ),
]

TXN = "| offset: {n} CreateTime: 1 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: transaction_metadata::transactionalId=t payload: producerId:1,producerEpoch:{e},state={s},partitions=[],txnLastUpdateTimestamp=1,txnTimeoutMs=60000"


def txn_log(*states: tuple[str, int]) -> str:
    return dump(*[TXN.format(n=i, s=s, e=e) for i, (s, e) in enumerate(states)], partition="__transaction_state-3")


CASES += [
    (
        "txn-state-transitions-valid",
        txn_log(("Empty", 0), ("Ongoing", 0), ("PrepareCommit", 0), ("CompleteAbort", 0)),
        txn_log(("Empty", 0), ("Ongoing", 0), ("PrepareCommit", 0), ("CompleteCommit", 0)),
    ),
]

LOG = "[2024-01-01 00:00:0{i},000] INFO {msg} ({logger})"


def log(*msgs: tuple[str, str]) -> str:
    return "\n".join(LOG.format(i=i % 10, msg=m, logger=lg) for i, (m, lg) in enumerate(msgs)) + "\n"


def leader(broker: int, epoch: int, offset: int = 0, hw: int = 0, tp: str = "t-0") -> tuple[str, str]:
    return (
        f"[Broker id={broker}] Leader {tp} with topic id Some(X) starts at leader epoch {epoch} from offset {offset} with "
        f"partition epoch {epoch}, high watermark {hw}, ISR [1,2], adding replicas [] and removing replicas [] . "
        f"Previous leader None and previous leader epoch was -1.",
        "state.change.logger",
    )


def follower(broker: int, epoch: int, lead: int, offset: int = 0, hw: int = 0) -> tuple[str, str]:
    return (
        f"[Broker id={broker}] Follower t-0 with topic id Some(X) starts at leader epoch {epoch} from offset {offset} with "
        f"partition epoch {epoch} and high watermark {hw}. Current leader is {lead}. Previous leader None and previous "
        "leader epoch was -1.",
        "state.change.logger",
    )


def trunc(offset: int, epoch: int, end: int, completed: bool = True) -> tuple[str, str]:
    return (
        f"[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating partition t-0 with TruncationState(offset={offset}, "
        f"completed={str(completed).lower()}) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, "
        f"leaderEpoch={epoch}, endOffset={end})",
        "kafka.server.ReplicaFetcherThread",
    )


BELOW = (
    "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating t-0 to offset 5 below high watermark 9",
    "kafka.server.ReplicaFetcherThread",
)
UNCLEAN = (
    "[Controller id=1 epoch=3] Unclean leader election for partition t-0: potential data loss",
    "kafka.controller.KafkaController",
)
SHRINK = "[Partition t-0 broker=1] Shrinking ISR from {a} to {b}. Leader: (highWatermark: {h}, endOffset: {e}). Out of sync replicas: (brokerId: 3, endOffset: 1)."

CASES += [
    (
        "one-leader-per-leader-epoch",
        log(leader(1, 4), follower(2, 4, lead=3)),
        log(leader(1, 4), follower(2, 4, lead=1)),
    ),
    ("leader-epochs-increase-per-broker", log(leader(1, 5), leader(1, 4)), log(leader(1, 4), leader(1, 5))),
    ("hw-le-leo", log(leader(1, 4, offset=10, hw=11)), log(leader(1, 4, offset=10, hw=10))),
    (
        "isr-changes-consistent",
        log((SHRINK.format(a="1,2,3", b="2,3", h=1, e=1), "kafka.cluster.Partition")),
        log((SHRINK.format(a="1,2,3", b="1,2", h=1, e=1), "kafka.cluster.Partition")),
    ),
    ("truncation-agrees-with-epoch-cache", log(trunc(101, 4, 100)), log(trunc(100, 4, 100))),
    ("no-truncation-below-hw", log(BELOW), log(trunc(9, 4, 9))),
]

FETCH_REQ = (
    "10:00:0{i}.000 [t] DEBUG org.apache.kafka.clients.NetworkClient - [Consumer clientId=c1, groupId=g] Sending FETCH "
    "request with header RequestHeader(apiKey=FETCH, apiVersion=13, clientId=c1, correlationId={corr}) and timeout 30000 "
    "to node 1: FetchRequestData(clusterId=null, replicaId=-1, maxWaitMs=500, minBytes=1, maxBytes=1, isolationLevel=1, "
    "sessionId={sid}, sessionEpoch={ep}, topics=[], forgottenTopicsData=[], rackId='')"
)
FETCH_RESP = (
    "10:00:0{i}.500 [t] DEBUG org.apache.kafka.clients.NetworkClient - [Consumer clientId=c1, groupId=g] Received FETCH "
    "response from node 1 for request with header RequestHeader(apiKey=FETCH, apiVersion=13, clientId=c1, "
    "correlationId={corr}): FetchResponseData(throttleTimeMs=0, errorCode={err}, sessionId={sid}, responses=["
    "FetchableTopicResponse(topic='t', topicId=X, partitions=[PartitionData(partitionIndex=0, errorCode=0, highWatermark={hw}, "
    "lastStableOffset={lso}, logStartOffset=0, abortedTransactions={ab}, preferredReadReplica=-1, records=null)])])"
)


def fetches(*steps: tuple[int, int, int, int]) -> str:
    """(sessionId, sessionEpoch, response error, response sessionId) per request/answer pair."""
    out = []
    for i, (sid, ep, err, rsid) in enumerate(steps):
        out.append(FETCH_REQ.format(i=i, corr=i, sid=sid, ep=ep))
        out.append(FETCH_RESP.format(i=i, corr=i, err=err, sid=rsid, hw=10, lso=10, ab="null"))
    return "\n".join(out) + "\n"


def answer(hw: int, lso: int, aborted: str = "null") -> str:
    return FETCH_RESP.format(i=0, corr=0, err=0, sid=0, hw=hw, lso=lso, ab=aborted) + "\n"


CASES += [
    ("fetch-answer-lso-le-hw", answer(hw=10, lso=11), answer(hw=10, lso=10)),
    (
        "read-committed-aborted-below-lso",
        answer(hw=10, lso=8, aborted="[AbortedTransaction(producerId=3, firstOffset=8)]"),
        answer(hw=10, lso=8, aborted="[AbortedTransaction(producerId=3, firstOffset=7)]"),
    ),
    (
        "fetch-session-epochs",
        fetches((0, 0, 0, 77), (77, 1, 0, 77), (77, 3, 0, 77)),
        fetches((0, 0, 0, 77), (77, 1, 0, 77), (77, 2, 0, 77)),
    ),
]


TOPIC = "TopicIdAAAAAAAAAAAAAAAA"


def meta(offset: int, kind: str, **data: object) -> str:
    """A --cluster-metadata-decoder record line (3.x+) of a record about ``TOPIC``'s partition 0."""
    body = {"topicId": TOPIC, **data} if kind == "TOPIC_RECORD" else {"partitionId": 0, "topicId": TOPIC, **data}
    payload = json.dumps({"type": kind, "version": 0, "data": body}, separators=(",", ":"))
    return (
        f"| offset: {offset} CreateTime: 1710774451597 keySize: -1 valueSize: 113 sequence: -1 headerKeys: [] "
        f"payload: {payload}"
    )


def metadata_dump(*records: str) -> str:
    return (
        "\n".join(
            [
                "Dumping /var/lib/kafka/data/__cluster_metadata-0/00000000000000000000.log",
                "Log starting offset: 0",
                meta(0, "TOPIC_RECORD", name="orders"),
                *records,
            ]
        )
        + "\n"
    )


def registered(replicas: list[int], isr: list[int], leader: int, le: int = 0, pe: int = 0, **more: object) -> str:
    return meta(
        1, "PARTITION_RECORD", replicas=replicas, isr=isr, leader=leader, leaderEpoch=le, partitionEpoch=pe, **more
    )


CASES += [
    (
        "kraft-isr-within-replicas",
        metadata_dump(registered([1, 2, 3], [1, 2], 1), meta(2, "PARTITION_CHANGE_RECORD", isr=[1, 2, 4])),
        metadata_dump(registered([1, 2, 3], [1, 2], 1), meta(2, "PARTITION_CHANGE_RECORD", isr=[1, 2, 3])),
    ),
    (
        "kraft-leader-in-isr",
        metadata_dump(registered([1, 2, 3], [1, 2, 3], 1), meta(2, "PARTITION_CHANGE_RECORD", isr=[2, 3])),
        metadata_dump(registered([1, 2, 3], [1, 2, 3], 1), meta(2, "PARTITION_CHANGE_RECORD", isr=[2, 3], leader=2)),
    ),
    (
        "kraft-elr-outside-isr",
        metadata_dump(
            registered([1, 2, 3], [1, 2], 1, eligibleLeaderReplicas=[], lastKnownElr=[]),
            meta(2, "PARTITION_CHANGE_RECORD", isr=[1], eligibleLeaderReplicas=[1, 2]),
        ),
        metadata_dump(
            registered([1, 2, 3], [1, 2], 1, eligibleLeaderReplicas=[], lastKnownElr=[]),
            meta(2, "PARTITION_CHANGE_RECORD", isr=[1], eligibleLeaderReplicas=[2]),
        ),
    ),
    (
        "kraft-partition-epochs-increase",
        metadata_dump(
            registered([1, 2], [1, 2], 1, le=4, pe=7),
            meta(2, "PARTITION_CHANGE_RECORD", leader=2),
            registered([1, 2], [1, 2], 2, le=4, pe=9),
        ),
        metadata_dump(
            registered([1, 2], [1, 2], 1, le=4, pe=7),
            meta(2, "PARTITION_CHANGE_RECORD", leader=2),
            registered([1, 2], [1, 2], 2, le=5, pe=8),
        ),
    ),
]


ZK_CHANGE = (
    "[2018-09-22 15:50:1{i},992] TRACE [Controller id=1001 epoch=1] Changed partition orders-0 from {src} to "
    "OnlinePartition with state LeaderAndIsr(leader={leader}, leaderEpoch={le}, isr=List({leader}), zkVersion={i}) "
    "(state.change.logger)"
)
KRAFT_REPLAY = (
    "2026-05-14T12:26:5{i}.270Z  INFO 2530 --- [0-event-handler] o.a.k.c.ReplicationControlManager        : "
    "[QuorumController id=0] Replayed PartitionRecord for new partition orders-0 with topic ID {tid} and "
    "PartitionRegistration(replicas=[0, 1], isr=[{leader}], removingReplicas=[], addingReplicas=[], leader={leader}, "
    "leaderRecoveryState=RECOVERED, leaderEpoch={le}, partitionEpoch={le})."
)


def zk_changes(*steps: tuple[str, int, int]) -> str:
    """(from-state, leader, leader epoch) per controller decision about orders-0."""
    return "\n".join(ZK_CHANGE.format(i=i, src=src, leader=ld, le=le) for i, (src, ld, le) in enumerate(steps)) + "\n"


CASES += [
    (
        # the ZooKeeper controller moves the leadership without a new epoch
        "leader-epochs-increase-across-state-changes",
        zk_changes(("NewPartition", 1, 0), ("OnlinePartition", 2, 0)),
        zk_changes(("NewPartition", 1, 0), ("OnlinePartition", 2, 1)),
    ),
]


def test_controller_state_changes_never_lower_the_leader_epoch(tmp_path: Path) -> None:
    """KRaft replays (a snapshot loaded again) never lower the epoch; a new topic id starts afresh."""
    name = "leader-epochs-increase-across-state-changes"
    back = "\n".join(KRAFT_REPLAY.format(i=i, tid="T1", leader=1, le=le) for i, le in enumerate((5, 3))) + "\n"
    assert verdict(tmp_path, back, name)[0] == VIOLATED
    same = "\n".join(KRAFT_REPLAY.format(i=i, tid="T1", leader=1, le=le) for i, le in enumerate((3, 3, 5))) + "\n"
    assert verdict(tmp_path, same, name, "same.log") == (PASSED, 0)
    recreated = "\n".join(
        KRAFT_REPLAY.format(i=i, tid=t, leader=1, le=le) for i, (t, le) in enumerate((("T1", 5), ("T2", 0)))
    )
    assert verdict(tmp_path, recreated + "\n", name, "recreated.log") == (NOT_OBSERVED, 0)
    # a topic created again under ZooKeeper (from NewPartition) starts afresh too
    again = zk_changes(("NewPartition", 1, 4), ("NewPartition", 2, 0))
    assert verdict(tmp_path, again, name, "again.log") == (NOT_OBSERVED, 0)


@pytest.mark.parametrize(("check", "bad", "near_miss"), CASES, ids=[c[0] for c in CASES])
def test_check_fires_on_bad_input_and_not_on_near_miss(tmp_path: Path, check: str, bad: str, near_miss: str) -> None:
    assert verdict(tmp_path, bad, check)[0] == VIOLATED
    assert verdict(tmp_path, near_miss, check, "near-miss.log") == (PASSED, 0)


def test_every_check_has_a_case() -> None:
    covered = {c[0] for c in CASES} | {
        "txn-init-epochs-non-decreasing",
        "segment-offsets-contiguous",
        "aborted-index-covers-aborted-batches",
        "epoch-checkpoint-valid",
    }
    assert covered == set(check_names())


def test_offsets_contiguous_is_advisory_and_skips_compacted_chains(tmp_path: Path) -> None:
    c = check_text(tmp_path, dump(batch(0, 1), batch(5, 6)), "segment-offsets-contiguous")
    assert c.status == "advisory" and c.finding_count == 1 and not c.fails
    compacted = dump(batch(0, 4, c=2), batch(9, 9))  # a batch with fewer records than its span
    assert verdict(tmp_path, compacted, "segment-offsets-contiguous", "compacted.log") == (NOT_OBSERVED, 0)
    assert verdict(tmp_path, dump(batch(0, 1), batch(2, 6)), "segment-offsets-contiguous", "ok.log") == (PASSED, 0)


def test_elided_dump_text_breaks_the_chain(tmp_path: Path) -> None:
    # "..." between two batches: the sequence gap may be in the text someone removed
    text = dump(batch(0, s=0, pid=5, pe=0), "...", batch(7, s=7, pid=5, pe=0))
    assert verdict(tmp_path, text, "producer-sequences-contiguous") == (PASSED, 0)
    joined = dump(batch(0, s=0, pid=5, pe=0), batch(7, s=7, pid=5, pe=0))
    assert verdict(tmp_path, joined, "producer-sequences-contiguous", "joined.log")[0] == VIOLATED


def test_truncation_below_hw_is_allowed_after_an_unclean_election(tmp_path: Path) -> None:
    c = check_text(tmp_path, log(UNCLEAN, BELOW), "no-truncation-below-hw")
    assert (c.status, c.allowed) == (PASSED, 1)


def test_aborted_index_covers_aborted_batches(tmp_path: Path) -> None:
    data = dump(batch(0, s=0, pid=7, pe=0, tx=True), batch(1, pid=7, pe=0, tx=True, ctl=True), marker(1, m="ABORT"))
    index_ok = "Dumping /data/orders-0/00000000000000000000.txnindex\nversion: 0 producerId: 7 firstOffset: 0 lastOffset: 1 lastStableOffset: 0\n"
    index_bad = "Dumping /data/orders-0/00000000000000000000.txnindex\nversion: 0 producerId: 7 firstOffset: 0 lastOffset: 3 lastStableOffset: 0\n"
    assert verdict(tmp_path, data + index_bad, "aborted-index-covers-aborted-batches")[0] == VIOLATED
    assert verdict(tmp_path, data + index_ok, "aborted-index-covers-aborted-batches", "ok.log") == (PASSED, 0)
    assert verdict(tmp_path, data, "aborted-index-covers-aborted-batches", "noindex.log") == (NOT_OBSERVED, 0)


def test_epoch_checkpoint_valid(tmp_path: Path) -> None:
    assert (
        verdict(tmp_path, "0\n2\n3 100\n3 150\n", "epoch-checkpoint-valid", "t-0/leader-epoch-checkpoint")[0]
        == VIOLATED
    )
    assert verdict(tmp_path, "0\n2\n3 100\n4 150\n", "epoch-checkpoint-valid", "u-0/leader-epoch-checkpoint") == (
        PASSED,
        0,
    )


def test_fetch_session_must_restart_after_an_error(tmp_path: Path) -> None:
    bad = fetches((0, 0, 0, 77), (77, 1, 71, 0), (77, 2, 0, 77))
    ok = fetches((0, 0, 0, 77), (77, 1, 71, 0), (77, 0, 0, 77))
    assert verdict(tmp_path, bad, "fetch-session-epochs")[0] == VIOLATED
    assert verdict(tmp_path, ok, "fetch-session-epochs", "ok.log")[0] != VIOLATED


def test_interleaved_brokers_are_judged_per_broker(tmp_path: Path) -> None:
    # broker 1 and broker 2 lines interleaved with disordered timestamps: no finding
    text = log(leader(1, 4), follower(2, 5, lead=3), leader(1, 6))
    text = text.replace("00:00:01", "00:00:09")
    c = check_text(tmp_path, text, "leader-epochs-increase-per-broker")
    assert (c.status, c.judged, c.finding_count) == (PASSED, 1, 0)


def test_checks_say_not_observed_without_input(tmp_path: Path) -> None:
    for name in check_names():
        assert verdict(tmp_path, "nothing Kafka printed\n", name)[0] == NOT_OBSERVED


def test_a_recreated_topic_restarts_its_epochs(tmp_path: Path) -> None:
    first = leader(1, 0)
    second = (leader(2, 0)[0].replace("Some(X)", "Some(Y)"), leader(2, 0)[1])
    assert verdict(tmp_path, log(first, second), "one-leader-per-leader-epoch") == (NOT_OBSERVED, 0)
    assert verdict(tmp_path, log(first, leader(2, 0)), "one-leader-per-leader-epoch", "same.log")[0] == VIOLATED


OWN = [
    "[2026-01-01 00:00:02,000] INFO [Broker id=1] Leader t-0 with topic id Some(T) starts at leader epoch 1 from offset 1 "
    "with partition epoch 1, high watermark 1, ISR [1,2], adding replicas [] and removing replicas []. Previous leader "
    "epoch was 0. (state.change.logger)",
    "[2026-01-01 00:00:02,000] INFO [Broker id=2] Follower t-0 starts at leader epoch 1 from offset 1 with partition "
    "epoch 1 and high watermark 1. Current leader is 1. Previous leader epoch was 0. (state.change.logger)",
    "[2026-01-01 00:00:15,000] INFO [Broker id=2] Follower t-0 starts at leader epoch 2 from offset 2 with partition "
    "epoch 2 and high watermark 1. Current leader is 0. Previous leader epoch was 1. (state.change.logger)",
]
TRUNC = (
    "[2026-01-01 00:00:20,000] INFO [ReplicaFetcher replicaId=2, leaderId=0, fetcherId=0] Truncating partition t-0 "
    "with TruncationState(offset={t}, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, "
    "partition=0, leaderEpoch=0, endOffset=2) (kafka.server.ReplicaFetcherThread)"
)


def test_truncation_past_the_followers_own_epoch_start(tmp_path: Path) -> None:
    """KIP-279 (the fast failover of conformance/replication/scenarios.py): broker 2 followed epoch 1
    from its start (offset 1) and passed it, so its own end offset for epoch 0 is 1; truncating to 2
    on the answer (epoch 0, end 2) keeps a record of epoch 1 the new leader never had."""
    name = "truncation-agrees-with-epoch-cache"
    bad = "\n".join([*OWN, TRUNC.format(t=2)]) + "\n"
    check = check_text(tmp_path, bad, name)
    assert check.status == VIOLATED and "its own cached epoch 1 begins" in check.findings[0].message
    assert verdict(tmp_path, "\n".join([*OWN, TRUNC.format(t=1)]) + "\n", name, "near.log") == (PASSED, 0)
    # a restart of broker 2 between its starts and the truncation: its cache is not known any more
    restart = (
        "[2026-01-01 00:00:16,000] INFO [KafkaRaftServer nodeId=2] Kafka Server started (kafka.server.KafkaRaftServer)"
    )
    lines = [OWN[0], OWN[1], restart, OWN[2], TRUNC.format(t=2)]
    assert verdict(tmp_path, "\n".join(lines) + "\n", name, "restart.log")[1] == 0
    # a fetch-offset reset to the leader's log start (out of range) starts broker 2's log afresh at an
    # offset the line does not bound: what the lines showed of its cache is gone
    reset = (
        "[2026-01-01 00:00:16,000] WARN [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Reset fetch offset for "
        "partition t-0 from 0 to current leader's start offset 1 (kafka.server.ReplicaFetcherThread)"
    )
    lines = [OWN[0], OWN[1], reset, OWN[2], TRUNC.format(t=2)]
    assert verdict(tmp_path, "\n".join(lines) + "\n", name, "reset.log")[1] == 0
    # a reset to the leader's latest offset is a truncation to it: refetched from there, epoch 1's
    # records again start at its announced start, and the rule still holds
    latest = reset.replace("from 0 to current leader's start offset 1", "from 5 to current leader's latest offset 1")
    lines = [OWN[0], OWN[1], latest, OWN[2], TRUNC.format(t=2)]
    assert verdict(tmp_path, "\n".join(lines) + "\n", name, "latest.log")[0] == VIOLATED
    # with an unclean election in the input the finding is allowed, not a violation
    unclean = (
        "[2026-01-01 00:00:10,000] INFO [QuorumController id=3000] Setting new leader for topicId T, partition 0 to 0 "
        "using an unclean election (org.apache.kafka.controller.PartitionChangeBuilder)"
    )
    check = check_text(tmp_path, "\n".join([unclean, *OWN, TRUNC.format(t=2)]) + "\n", name, "unclean.log")
    assert (check.finding_count, check.allowed) == (0, 1)


def test_committed_isr_holds_the_leader(tmp_path: Path) -> None:
    """``ISR updated to ...`` in both wordings (0.9-2.x zkVersion, 2.7+ version with under-min-isr)."""
    name = "isr-changes-consistent"
    kraft = (
        "[2025-10-15 20:36:54,506] INFO [Partition t-1 broker=1] ISR updated to {isr}  and version updated to 18 "
        "(kafka.cluster.Partition)\n"
    )
    assert verdict(tmp_path, kraft.format(isr="2,3"), name)[0] == VIOLATED
    assert verdict(tmp_path, kraft.format(isr="2,1,3"), name, "near.log") == (PASSED, 0)
    zk = (
        "[2017-07-15 10:00:00,000] TRACE Partition [t,1] on broker 1: ISR updated to [{isr}] and zkVersion updated "
        "to [5] (kafka.cluster.Partition)\n"
    )
    assert verdict(tmp_path, zk.format(isr="2,3"), name, "zk.log")[0] == VIOLATED
    under = kraft.replace("  and", " (under-min-isr) and").format(isr="1")
    assert verdict(tmp_path, under, name, "under.log") == (PASSED, 0)


INIT = (
    "[2021-04-15 08:24:2{i},543] INFO [TransactionCoordinator id=3] Initialized transactionalId tx-0 with producerId "
    "{pid} and producer epoch {e} on partition __transaction_state-15 (kafka.coordinator.transaction.TransactionCoordinator)"
)


def test_txn_init_epochs_never_go_back(tmp_path: Path) -> None:
    name = "txn-init-epochs-non-decreasing"

    def inits(*steps: tuple[int, int]) -> str:
        return "\n".join(INIT.format(i=i, pid=p, e=e) for i, (p, e) in enumerate(steps)) + "\n"

    assert verdict(tmp_path, inits((1004, 5), (1004, 4)), name)[0] == VIOLATED
    # a retried InitProducerId answered with the current epoch (KIP-360), then a bump: legal
    assert verdict(tmp_path, inits((1004, 5), (1004, 5), (1004, 6)), name, "near.log") == (PASSED, 0)
    # a new producer id (epoch exhausted, or the id expired) starts its own epochs
    assert verdict(tmp_path, inits((1004, 32767), (2000, 0)), name, "new-pid.log") == (NOT_OBSERVED, 0)


def test_own_cache_rule_agrees_on_the_corpus_pass(tmp_path: Path) -> None:
    """Per-partition groups of an ingested corpus (DuckDB) see a broker's restart (broadcast) and judge the
    own-cache rule as the single pass does: one finding for t-0, none for t-1 after its restart."""
    from kconform.traces.logs.ingest import check_corpus, write_corpus
    from kconform.traces.logs.run import check_paths

    restart = (
        "[2026-01-01 00:00:16,000] INFO [KafkaRaftServer nodeId=2] Kafka Server started (kafka.server.KafkaRaftServer)"
    )
    other = [line.replace("t-0", "t-1").replace(":00:", ":01:") for line in OWN]
    text = "\n".join([*OWN, TRUNC.format(t=2), *other[:2], restart.replace(":00:", ":01:"), other[2]])
    text += "\n" + TRUNC.format(t=2).replace("t-0", "t-1").replace(":00:", ":01:") + "\n"
    path = tmp_path / "in" / "server.log"
    path.parent.mkdir()
    path.write_text(text)
    single = check_paths([path])
    write_corpus([path], tmp_path / "corpus")
    corpus = check_corpus(tmp_path / "corpus", engine="duckdb")
    name = "truncation-agrees-with-epoch-cache"
    mine = next(c for c in single.checks if c.name == name)
    assert mine.finding_count == 1 and "t-0" in mine.findings[0].message
    row = next(r for r in corpus.rows() if r[0] == name)
    assert row == (name, mine.status, mine.judged, mine.finding_count)
