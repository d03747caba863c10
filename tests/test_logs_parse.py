"""The log parsers read each Kafka output format (as printed by the versions named) into the
observations the checks use; a known line that does not parse is a problem naming file:line."""

from __future__ import annotations

import gzip
from pathlib import Path

from kconform.traces.logs import observations as o
from kconform.traces.logs.log4j import parse_header
from kconform.traces.logs.parse import ParseStats, parse_paths
from tests.logskit import parse_text

V2_BATCH = (
    "baseOffset: 16 lastOffset: 16 count: 1 baseSequence: -1 lastSequence: -1 producerId: 0 producerEpoch: 3 "
    "partitionLeaderEpoch: 7 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 256 "
    "CreateTime: 1664531387382 size: 78 magic: 2 compresscodec: none crc: 3122996963 isvalid: true"
)
MARKER = "| offset: 16 CreateTime: 1664531387382 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 5"


def test_dump_v2_control_batch_takes_its_marker_from_the_record_line(tmp_path: Path) -> None:
    text = f"Dumping /data/orders-3/00000000000000000000.log\nStarting offset: 0\n{V2_BATCH}\n{MARKER}\n"
    obs, stats = parse_text(tmp_path, text)
    batch = next(x for x in obs if x.kind == o.BATCH)
    assert (batch.partition, batch.offset, batch.last_offset, batch.pid, batch.producer_epoch) == (
        "orders-3",
        16,
        16,
        0,
        3,
    )
    assert (batch.leader_epoch, batch.control, batch.marker, batch.coordinator_epoch) == (7, True, "ABORT", 5)
    assert batch.line == 3 and not stats.problems


def test_dump_1_1_shallow_batch_without_is_control_is_a_marker_when_transactional_without_sequence(
    tmp_path: Path,
) -> None:
    # Kafka 1.1 printed neither count nor isControl (kafka.tools.DumpLogSegments at 1.1.0)
    line = (
        "baseOffset: 5 lastOffset: 5 baseSequence: -1 lastSequence: -1 producerId: 9 producerEpoch: 0 "
        "partitionLeaderEpoch: 0 isTransactional: true position: 0 CreateTime: 1 isvalid: true size: 78 magic: 2 "
        "compresscodec: NONE crc: 1"
    )
    (batch,), _ = parse_text(tmp_path, line + "\n")
    assert batch.control is True and batch.count is None


def test_dump_old_deep_records_become_one_record_batches(tmp_path: Path) -> None:
    # 0.11-2.3 --deep-iteration: record lines carry the batch's producer fields, no batch lines
    text = (
        "offset: 0 position: 0 CreateTime: 1 isvalid: true keysize: -1 valuesize: 3 magic: 2 compresscodec: NONE "
        "producerId: 4 producerEpoch: 1 sequence: 0 isTransactional: true headerKeys: []\n"
        "offset: 1 position: 70 CreateTime: 2 isvalid: true keysize: 4 valuesize: 6 magic: 2 compresscodec: NONE "
        "producerId: 4 producerEpoch: 1 sequence: -1 isTransactional: true headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 2\n"
    )
    obs, _ = parse_text(tmp_path, text)
    assert [(x.kind, x.offset, x.base_seq, x.control, x.marker) for x in obs] == [
        (o.BATCH, 0, 0, False, None),
        (o.BATCH, 1, -1, True, "COMMIT"),
    ]


def test_transaction_log_decoder_all_formats(tmp_path: Path) -> None:
    rec = "| offset: {n} CreateTime: 1 keySize: 15 valueSize: 37 sequence: -1 headerKeys: [] key: {key} payload: {payload}"
    lines = [
        rec.format(
            n=0,
            key="transaction_metadata::transactionalId=t1",
            payload="producerId:1,producerEpoch:0,state=Empty,partitions=[],txnLastUpdateTimestamp=1,txnTimeoutMs=60000",
        ),
        rec.format(
            n=1,
            key="transactionalId=t1",
            payload="producerId:1,producerEpoch:0,state=Ongoing,partitions=Set(a-0),txnLastUpdateTimestamp=1,txnTimeoutMs=60000",
        ),
        rec.format(
            n=2,
            key='{"type":"0","data":{"transactionalId":"t1"}}',
            payload='{"version":"0","data":{"producerId":1,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":2}}',
        ),
        rec.format(n=3, key="transaction_metadata::transactionalId=t1", payload="<DELETE>"),
    ]
    obs, stats = parse_text(tmp_path, "\n".join(lines) + "\n")
    assert [x.state for x in obs if x.kind == o.TXN_LOG] == ["Empty", "Ongoing", "PrepareCommit", ""]
    assert not stats.problems


def test_offsets_decoder_text_and_json(tmp_path: Path) -> None:
    rec = (
        "| offset: {n} CreateTime: 1 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: {key} payload: {payload}"
    )
    text = "\n".join(
        [
            rec.format(n=0, key="offset_commit::group=g,partition=t-0", payload="offset=7"),
            rec.format(
                n=1,
                key='{"type":"1","data":{"group":"g","topic":"t","partition":0}}',
                payload='{"version":"3","data":{"offset":9}}',
            ),
        ]
    )
    obs, _ = parse_text(tmp_path, text + "\n")
    assert [(x.group, x.txn_id, x.end_offset) for x in obs if x.kind == o.OFFSET_COMMIT] == [
        ("g", "t-0", 7),
        ("g", "t-0", 9),
    ]


def test_txnindex_and_snapshot_dumps(tmp_path: Path) -> None:
    text = (
        "Dumping /d/t-0/00000000000000000000.txnindex\n"
        "version: 0 producerId: 7 firstOffset: 3 lastOffset: 9 lastStableOffset: 3\n"
        "Dumping /d/t-0/00000000000000000010.snapshot\n"
        "producerId: 7 producerEpoch: 2 coordinatorEpoch: 1 currentTxnFirstOffset: Some(12) lastTimestamp: 5 "
        "firstSequence: 0 lastSequence: 4 lastOffset: 14 offsetDelta: 4 timestamp: 5\n"
    )
    obs, _ = parse_text(tmp_path, text)
    index, snap = obs
    assert (index.kind, index.partition, index.pid, index.offset, index.last_offset) == (o.TXN_INDEX, "t-0", 7, 3, 9)
    assert (snap.kind, snap.producer_epoch, snap.offset) == (o.PRODUCER_SNAPSHOT, 2, 12)


def test_a_dump_line_that_does_not_parse_is_a_problem_naming_its_line(tmp_path: Path) -> None:
    obs, stats = parse_text(tmp_path, "Starting offset: 0\nbaseOffset: x lastOffset: 1 count: 1\n")
    assert obs == [] and stats.problem_count == 1
    assert stats.problems[0].line == 2 and "baseOffset" in stats.problems[0].message


def test_checkpoint_files_by_name(tmp_path: Path) -> None:
    (tmp_path / "orders-0").mkdir()
    (tmp_path / "orders-0" / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n3 120\n")
    (tmp_path / "replication-offset-checkpoint").write_text("0\n2\norders 0 130\nmy.topic 12 5\n")
    stats = ParseStats()
    obs = list(parse_paths([tmp_path], stats))
    epochs = [(x.partition, x.leader_epoch, x.offset) for x in obs if x.kind == o.EPOCH_ENTRY]
    hws = [(x.partition, x.offset) for x in obs if x.kind == o.CHECKPOINT_OFFSET]
    assert epochs == [("orders-0", 0, 0), ("orders-0", 3, 120)]
    assert hws == [("orders-0", 130), ("my.topic-12", 5)]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "leader-epoch-checkpoint").write_text("0\n1\n0 zero\n")
    stats = ParseStats()
    list(parse_paths([tmp_path / "bad"], stats))
    assert stats.problems[0].line == 3


def test_log4j_layouts() -> None:
    kafka = parse_header(1, "[2019-01-18 10:00:00,123] INFO [Partition t-0 broker=1] hello (kafka.cluster.Partition)")
    iso = parse_header(
        1, "2021-03-04 05:06:07,890 WARN [ReplicaFetcherThread-0-2] kafka.server.ReplicaFetcherThread: msg"
    )
    logback = parse_header(1, "18:50:36.880 [pool-1-thread-1] DEBUG org.apache.kafka.clients.FetchSessionHandler - msg")
    compose = parse_header(1, "kafka-1  | [2023-06-29 18:27:14,343] INFO started (kafka.server.KafkaServer)")
    assert kafka is not None and (kafka.level, kafka.logger, kafka.message) == (
        "INFO",
        "kafka.cluster.Partition",
        "[Partition t-0 broker=1] hello",
    )
    assert iso is not None and (iso.level, iso.logger, iso.message) == (
        "WARN",
        "kafka.server.ReplicaFetcherThread",
        "msg",
    )
    assert logback is not None and logback.logger == "org.apache.kafka.clients.FetchSessionHandler"
    assert compose is not None and compose.message == "started"
    assert parse_header(1, "\tat kafka.server.X.y(X.scala:1)") is None


BROKER_LINES = {
    # Kafka 0.11 (Partition logIdent "Partition [t,p] on broker N: ")
    "[2017-07-15 16:18:07,310] INFO Partition [zt,1] on broker 1: zt-1 starts at Leader Epoch 1 from offset 0. "
    "Previous Leader Epoch was: 0 (kafka.cluster.Partition)": (o.LEADER_START, "zt-1", 1, 1, None),
    # 3.x Leader line (state-change logger)
    "[2024-01-01 00:00:00,000] INFO [Broker id=2] Leader t-0 with topic id Some(abc) starts at leader epoch 5 from "
    "offset 100 with partition epoch 9, high watermark 90, ISR [2,3], adding replicas [] and removing replicas [] . "
    "Previous leader None and previous leader epoch was 4. (state.change.logger)": (o.LEADER_START, "t-0", 2, 5, 90),
    "[2024-01-01 00:00:00,000] INFO [Broker id=3] Follower t-0 starts at leader epoch 5 from offset 98 with partition "
    "epoch 9 and high watermark 90. Current leader is 2. Previous leader Some(2) and previous leader epoch was 4. "
    "(state.change.logger)": (o.FOLLOWER_START, "t-0", 3, 5, 90),
    "[2019-03-01 00:00:00,000] INFO [Partition __consumer_offsets-43 broker=3] Shrinking ISR from 3,1,4 to 3. Leader: "
    "(highWatermark: 115, endOffset: 120). Out of sync replicas: (brokerId: 1, endOffset: 115) (brokerId: 4, endOffset: "
    "116). (kafka.cluster.Partition)": (o.ISR_SHRINK, "__consumer_offsets-43", 3, None, 115),
}


def test_broker_lines(tmp_path: Path) -> None:
    obs, stats = parse_text(tmp_path, "\n".join(BROKER_LINES) + "\n")
    assert not stats.problems
    got = [(x.kind, x.partition, x.node, x.leader_epoch, x.hw) for x in obs]
    assert got == list(BROKER_LINES.values())
    follower = obs[2]
    assert follower.leader == 2 and follower.leo == 98


def test_truncation_and_partition_state_lines(tmp_path: Path) -> None:
    text = (
        "[2025-10-15 20:38:45,018] INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition p-1 "
        "with TruncationState(offset=768982, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, "
        "partition=1, leaderEpoch=5, endOffset=768982) (kafka.server.ReplicaFetcherThread)\n"
        "[2020-08-23 23:54:54,005] TRACE [Broker id=1] Received LeaderAndIsr request LeaderAndIsrPartitionState("
        "topicName='roleplay', partitionIndex=0, controllerEpoch=1, leader=2, leaderEpoch=2, isr=[3, 2, 1], zkVersion=3, "
        "replicas=[2, 1], addingReplicas=[], removingReplicas=[], isNew=false) correlation id 19 from controller 2 epoch 1 "
        "(state.change.logger)\n"
        "[2019-05-01 00:00:00,000] WARN [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating t-0 to offset 5 "
        "below high watermark 9 (kafka.server.ReplicaFetcherThread)\n"
    )
    obs, stats = parse_text(tmp_path, text)
    assert not stats.problems
    trunc, state, below = obs
    assert (trunc.node, trunc.offset, trunc.completed, trunc.leader_epoch, trunc.end_offset) == (
        1,
        768982,
        True,
        5,
        768982,
    )
    assert (state.partition, state.leader, state.leader_epoch, state.isr) == ("roleplay-0", 2, 2, "3,2,1")
    assert (below.kind, below.offset, below.hw) == (o.TRUNCATION_BELOW_HW, 5, 9)


def test_a_known_broker_line_that_does_not_parse_is_a_problem(tmp_path: Path) -> None:
    _obs, stats = parse_text(
        tmp_path, "[2020-01-01 00:00:00,000] INFO t-0 starts at leader epoch X (kafka.cluster.Partition)\n"
    )
    assert stats.problem_count == 1 and stats.problems[0].line == 1


def test_unknown_lines_are_counted_per_logger(tmp_path: Path) -> None:
    text = (
        "[2020-01-01 00:00:00,000] INFO something (kafka.log.LogManager)\n"
        "[2020-01-01 00:00:00,000] INFO else (kafka.log.LogManager)\n"
        "random text\n"
    )
    obs, stats = parse_text(tmp_path, text)
    assert obs == [] and stats.unknown["kafka.log.LogManager"] == 2


def test_java_client_fetch_lines(tmp_path: Path) -> None:
    req = (
        "10:00:00.000 [t] DEBUG org.apache.kafka.clients.NetworkClient - [Consumer clientId=c1, groupId=g] Sending FETCH "
        "request with header RequestHeader(apiKey=FETCH, apiVersion=13, clientId=c1, correlationId=10) and timeout 30000 "
        "to node 1: FetchRequestData(clusterId=null, replicaId=-1, maxWaitMs=500, minBytes=1, maxBytes=52428800, "
        "isolationLevel=1, sessionId=77, sessionEpoch=4, topics=[FetchTopic(topic='t', topicId=AAA, partitions=["
        "FetchPartition(partition=0, currentLeaderEpoch=3, fetchOffset=388, lastFetchedEpoch=-1, logStartOffset=-1, "
        "partitionMaxBytes=1048576)])], forgottenTopicsData=[], rackId='')"
    )
    resp = (
        "10:00:00.010 [t] DEBUG org.apache.kafka.clients.NetworkClient - [Consumer clientId=c1, groupId=g] Received FETCH "
        "response from node 1 for request with header RequestHeader(apiKey=FETCH, apiVersion=13, clientId=c1, "
        "correlationId=10): FetchResponseData(throttleTimeMs=0, errorCode=0, sessionId=77, responses=["
        "FetchableTopicResponse(topic='', topicId=AAA, partitions=[PartitionData(partitionIndex=0, errorCode=0, "
        "highWatermark=399, lastStableOffset=390, logStartOffset=24, divergingEpoch=EpochEndOffset(epoch=-1, endOffset=-1), "
        "currentLeader=LeaderIdAndEpoch(leaderId=-1, leaderEpoch=-1), snapshotId=SnapshotId(endOffset=-1, epoch=-1), "
        "abortedTransactions=[AbortedTransaction(producerId=5, firstOffset=380)], preferredReadReplica=-1, "
        "records=MemoryRecords(size=219, buffer=java.nio.HeapByteBuffer[pos=0 lim=219 cap=222]))])])"
    )
    rdk = (
        "%7|1600000000.123|FETCH|rdkafka#consumer-1| [thrd:b1:9092/1]: b1:9092/1: Topic t [2] MessageSet size 0, "
        'error "Success", MaxOffset 42, LSO 40, Ver 2/2'
    )
    obs, stats = parse_text(tmp_path, "\n".join([req, resp, rdk]) + "\n")
    assert not stats.problems
    r, a, d = obs
    assert (r.kind, r.client, r.node, r.partition, r.session_id, r.session_epoch, r.isolation, r.offset) == (
        o.FETCH_REQUEST,
        "c1",
        1,
        "t-0",
        77,
        4,
        1,
        388,
    )
    assert (a.kind, a.hw, a.lso, a.log_start, a.aborted, a.correlation) == (o.FETCH_RESPONSE, 399, 390, 24, "5:380", 10)
    assert (d.partition, d.hw, d.lso, d.client) == ("t-2", 42, 40, "rdkafka#consumer-1")


def test_gzip_and_directories(tmp_path: Path) -> None:
    sub = tmp_path / "d" / "e"
    sub.mkdir(parents=True)
    with gzip.open(sub / "server.log.1.gz", "wt") as f:
        f.write(next(iter(BROKER_LINES)) + "\n")
    (sub / "00000000000000000000.log").write_bytes(b"\x00\x00\x00\x01binary segment")
    stats = ParseStats()
    obs = list(parse_paths([tmp_path / "d"], stats))
    assert [x.kind for x in obs] == [o.LEADER_START]
    assert stats.read.binary_files and stats.read.binary_files[0].endswith("00000000000000000000.log")


def test_truncation_below_hw_printed_by_the_log_names_its_partition_from_the_prefix(tmp_path: Path) -> None:
    # KAFKA-19474 moved the warning into UnifiedLog.truncateTo, whose logIdent names the partition
    text = "[2025-08-01 00:00:00,000] WARN [UnifiedLog partition=t-3, dir=/d] Truncating to offset 5 below high watermark 9 (org.apache.kafka.storage.internals.log.UnifiedLog)\n"
    (obs,), stats = parse_text(tmp_path, text)
    assert not stats.problems and (obs.kind, obs.partition, obs.offset, obs.hw) == (o.TRUNCATION_BELOW_HW, "t-3", 5, 9)


def test_more_layouts_spring_level_first_thread_first() -> None:
    """Layouts real deployments print (fixtures client-2.3-spring-*, client-2.x-level-first-*,
    client-2.x-thread-first-*): the logger and message are found whatever the layout."""
    spring = parse_header(
        1,
        "2026-05-14T12:26:53.304Z  INFO 2530 --- [r-event-handler] state.change.logger                      : "
        "[Broker id=0] Transitioning 1 partition(s) to local leaders.",
    )
    level_first = parse_header(
        1,
        "INFO 2020-12-17 16:32:15,053(yyyy-MM-dd HH:mm:ss} org.apache.kafka.clients.FetchSessionHandler - "
        "[Consumer clientId=consumer-1, groupId=g1] Node 2 was unable to process the fetch request",
    )
    thread_first = parse_header(
        1,
        "[pool-1-thread-1] 2019-12-18 09:45:19,994 FetchSessionHandler.java (line 383) [Consumer clientId=c] Node 4 x",
    )
    assert spring is not None and (spring.level, spring.logger) == ("INFO", "state.change.logger")
    assert spring.message.startswith("[Broker id=0] Transitioning")
    assert level_first is not None and level_first.logger == "org.apache.kafka.clients.FetchSessionHandler"
    assert level_first.message.startswith("[Consumer clientId=consumer-1")
    assert thread_first is not None and (thread_first.logger, thread_first.level) == ("FetchSessionHandler", "")
    assert thread_first.message == "[Consumer clientId=c] Node 4 x"
    # words that only look like a level or a thread start no record
    assert parse_header(1, "INFO something else") is None
    assert parse_header(1, "[main] 2019 foo") is None


def test_controller_decisions_are_partition_states(tmp_path: Path) -> None:
    zk = (
        "[2023-10-01 14:41:35,289] INFO [Controller id=1001 epoch=1] Changed partition kafka-ckpt-0 from NewPartition "
        "to OnlinePartition with state LeaderAndIsr(leader=1001, leaderEpoch=3, isr=List(1001, 1002), "
        "leaderRecoveryState=RECOVERED, partitionEpoch=7) (state.change.logger)"
    )
    kraft = (
        "2026-05-14T12:26:53.270Z  INFO 2530 --- [0-event-handler] o.a.k.c.ReplicationControlManager        : "
        "[QuorumController id=0] Replayed PartitionRecord for new partition trader-updates-0 with topic ID "
        "_HoeUqpHRzmN1o05kPIksg and PartitionRegistration(replicas=[0, 1], isr=[0], removingReplicas=[], "
        "addingReplicas=[], leader=0, leaderRecoveryState=RECOVERED, leaderEpoch=2, partitionEpoch=5)."
    )
    (a, b), stats = parse_text(tmp_path, zk + "\n" + kraft + "\n")
    assert not stats.problems
    assert (a.kind, a.node, a.partition, a.leader, a.leader_epoch, a.isr, a.partition_epoch, a.state, a.prev_state) == (
        o.PARTITION_STATE,
        1001,
        "kafka-ckpt-0",
        1001,
        3,
        "1001,1002",
        7,
        "controller",
        "NewPartition",
    )
    assert (b.node, b.partition, b.topic_id, b.leader, b.leader_epoch, b.isr, b.partition_epoch, b.prev_state) == (
        0,
        "trader-updates-0",
        "_HoeUqpHRzmN1o05kPIksg",
        0,
        2,
        "0",
        5,
        "new",
    )
    broken = zk.replace("leaderEpoch=3", "leaderEpoch=x")
    _, stats = parse_text(tmp_path, broken + "\n", "broken.log")
    assert stats.problems and stats.problems[0].line == 1


def test_librdkafka_versions_without_lso(tmp_path: Path) -> None:
    """librdkafka 0.8-0.10 print no LSO (fixture client-librdkafka-0.8-*); kafkacat excerpts may drop the
    topic: both are read, not refused."""
    old = 'LOG-7-FETCH: 10.10.38.70:9503/3: Topic rt_memcache [0] MessageSet size 0, error "Success", MaxOffset 5'
    bare = '[9] MessageSet size 1048576, error "Success", MaxOffset 1069260'
    (a, b), stats = parse_text(tmp_path, old + "\n" + bare + "\n")
    assert not stats.problems
    assert (a.partition, a.hw, a.lso) == ("rt_memcache-0", 5, None)
    assert (b.partition, b.hw, b.lso) == (None, 1069260, None)
