"""The reference transactional producer (impl/txn/clients.py) reacts to a coordinator's answer as
Kafka's TransactionManager does (clients/.../producer/internals/TransactionManager.java, trunk
1eb7644, Kafka 4.0; the model's table model.producer_errors): the four places where it differed.

- EndTxn / InitProducerId answered TRANSACTION_ABORTABLE: abortable (EndTxnHandler /
  InitProducerIdHandler ``abortableError``, KAFKA-16314, 3.8+), was fatal;
- EndTxn answered INVALID_PRODUCER_ID_MAPPING: abortable with an epoch bump
  (``abortableErrorIfPossible``, KAFKA-8805 / KIP-360, 2.6+; before 2.6 "Unhandled error in
  EndTxnResponse", fatal), and the abort then skips EndTxn and bumps with InitProducerId
  (``beginCompletingTransaction``), was fatal;
- AddPartitionsToTxn / AddOffsetsToTxn answered INVALID_TXN_STATE: fatal, was abortable;
- TxnOffsetCommit answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED / UNSUPPORTED_FOR_MESSAGE_FORMAT:
  fatal, was abortable (group errors stay abortable: the near misses).
"""

from __future__ import annotations

import pytest

from kconform.impl.messages import Message, Payload
from kconform.impl.txn import clients as C
from kconform.impl.txn.cluster import TxnSimulation
from kconform.impl.txn.messages import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    CoordinatorResponse,
    EndTxnRequest,
    GroupResponse,
    InitPidRequest,
    InitPidResponse,
    TxnOffsetCommitRequest,
)
from kconform.model import producer_errors as PE
from kconform.model.errors import (
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_TXN_STATE,
    NONE,
    NOT_COORDINATOR,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
)
from kconform.model.txn_config import TxnConfig
from kconform.traces.events import TopicOffset

TXN_ID = "txn-1"
PID, EPOCH = 1000, 3


def _producer(state: str) -> tuple[TxnSimulation, C.TxnProducer]:
    sim = TxnSimulation(TxnConfig(), frozenset())
    sim.boot()
    producer = C.TxnProducer(0, TXN_ID, sim.world)
    producer.pid, producer.epoch, producer.state, producer.ctxn = PID, EPOCH, state, 7
    return sim, producer


def _answer(producer: C.TxnProducer, kind: str, request: Payload, answer: Payload) -> None:
    """``request`` outstanding as ``kind``, then ``answer`` (whose ``req`` is 1) arrives."""
    partition = producer.world.config.state_partition(TXN_ID)
    producer.requests[1] = C._Pending(kind, request, partition, req=1)
    producer.receive(Message(10_000, 1, producer.node, answer))


def _sent(sim: TxnSimulation) -> list[Payload]:
    return [m.payload for m in sim.world.network.queue]


def _end(producer: C.TxnProducer, error: int, commit: bool = True) -> None:
    producer.state = C.COMMITTING if commit else C.ABORTING
    _answer(producer, "end", EndTxnRequest(TXN_ID, PID, EPOCH, commit, 7), CoordinatorResponse(1, error, -1, -1))


def test_end_txn_transaction_abortable_is_abortable() -> None:
    _, producer = _producer(C.IN_TRANSACTION)
    _end(producer, TRANSACTION_ABORTABLE)
    assert producer.state == C.ABORTABLE_ERROR and not producer.bump_required
    _, producer = _producer(C.IN_TRANSACTION)
    _end(producer, PRODUCER_FENCED)  # near miss: fenced stays fatal
    assert producer.state == C.FATAL_ERROR


def test_end_txn_abortable_while_aborting_keeps_aborting() -> None:
    """transitionToAbortableError skips the transition while the transaction is being aborted."""
    _, producer = _producer(C.IN_TRANSACTION)
    _end(producer, TRANSACTION_ABORTABLE, commit=False)
    assert producer.state == C.ABORTING


def test_init_producer_id_transaction_abortable_is_abortable() -> None:
    _, producer = _producer(C.INITIALIZING)
    request = InitPidRequest(TXN_ID, 60_000, -1, -1)
    _answer(producer, "init", request, InitPidResponse(1, TRANSACTION_ABORTABLE, -1, -1))
    assert producer.state == C.ABORTABLE_ERROR
    _, producer = _producer(C.INITIALIZING)
    _answer(producer, "init", request, InitPidResponse(1, INVALID_TXN_STATE, -1, -1))  # near miss
    assert producer.state == C.FATAL_ERROR


def test_end_txn_invalid_pid_mapping_is_abortable_and_the_abort_bumps_the_epoch() -> None:
    sim, producer = _producer(C.IN_TRANSACTION)
    _end(producer, INVALID_PRODUCER_ID_MAPPING)
    assert producer.state == C.ABORTABLE_ERROR and producer.bump_required
    before = len(_sent(sim))
    producer.end(commit=False)
    sent = _sent(sim)[before:]
    # beginCompletingTransaction: no EndTxn after INVALID_PRODUCER_ID_MAPPING, straight to the bump.
    assert [type(p) for p in sent] == [InitPidRequest]
    bump = sent[0]
    assert isinstance(bump, InitPidRequest) and (bump.expected_pid, bump.expected_epoch) == (PID, EPOCH)
    assert producer.state == C.INITIALIZING and not producer.bump_required


def test_add_partitions_invalid_pid_mapping_aborts_with_end_txn_then_bumps() -> None:
    """UNKNOWN_PRODUCER_ID / INVALID_PRODUCER_ID_MAPPING of AddPartitionsToTxn: abortable with a
    bump; the abort skips EndTxn only when the last error is INVALID_PRODUCER_ID_MAPPING, so an
    abortable TRANSACTION_ABORTABLE after it sends EndTxn first (lastError is the latest)."""
    sim, producer = _producer(C.IN_TRANSACTION)
    request = AddPartitionsRequest(TXN_ID, PID, EPOCH, ("t-0",))
    producer.adding.add("t-0")
    producer.partitions["t-0"] = C._PartitionState()
    _answer(producer, "add", request, CoordinatorResponse(1, INVALID_PRODUCER_ID_MAPPING, -1, -1))
    assert producer.state == C.ABORTABLE_ERROR and producer.bump_required
    _answer(
        producer,
        "add_offsets",
        AddOffsetsRequest(TXN_ID, PID, EPOCH, "g"),
        CoordinatorResponse(1, TRANSACTION_ABORTABLE, -1, -1),
    )
    before = len(_sent(sim))
    producer.end(commit=False)
    assert [type(p) for p in _sent(sim)[before:]] == [EndTxnRequest]
    _answer(producer, "end", EndTxnRequest(TXN_ID, PID, EPOCH, False, 7), CoordinatorResponse(1, NONE, -1, -1))
    sent = _sent(sim)[before + 1 :]
    assert [type(p) for p in sent] == [InitPidRequest] and producer.state == C.INITIALIZING


@pytest.mark.parametrize(
    ("kind", "request_"),
    [
        ("add", AddPartitionsRequest(TXN_ID, PID, EPOCH, ("t-0",))),
        ("add_offsets", AddOffsetsRequest(TXN_ID, PID, EPOCH, "my-group")),
    ],
)
def test_add_invalid_txn_state_is_fatal(kind: str, request_: Payload) -> None:
    _, producer = _producer(C.IN_TRANSACTION)
    producer.partitions["t-0"] = C._PartitionState()
    _answer(producer, kind, request_, CoordinatorResponse(1, INVALID_TXN_STATE, -1, -1))
    assert producer.state == C.FATAL_ERROR
    _, producer = _producer(C.IN_TRANSACTION)  # near miss: a coordinator error is retried
    producer.partitions["t-0"] = C._PartitionState()
    _answer(producer, kind, request_, CoordinatorResponse(1, NOT_COORDINATOR, -1, -1))
    assert producer.state == C.IN_TRANSACTION and producer.backing_off == 1


@pytest.mark.parametrize(
    ("error", "state"),
    [
        (PE.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, C.FATAL_ERROR),
        (PE.UNSUPPORTED_FOR_MESSAGE_FORMAT, C.FATAL_ERROR),
        (PE.GROUP_AUTHORIZATION_FAILED, C.ABORTABLE_ERROR),
        (PE.UNKNOWN_MEMBER_ID, C.ABORTABLE_ERROR),
        (TRANSACTION_ABORTABLE, C.ABORTABLE_ERROR),
    ],
)
def test_txn_offset_commit_errors(error: int, state: str) -> None:
    _, producer = _producer(C.IN_TRANSACTION)
    request = TxnOffsetCommitRequest("my-group", TXN_ID, PID, EPOCH, 7, (TopicOffset("t-0", 1),))
    _answer(producer, "offset_commit", request, GroupResponse(1, error, ()))
    assert producer.state == state


def test_every_request_kind_has_its_handler() -> None:
    assert set(C._REQUEST_OF.values()) <= set(PE.REQUESTS)
