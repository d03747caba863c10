"""Adversarial clients (issue 17 §Power): the batches a buggy, old or malicious producer sends
(``rogue_produce``) and the fetches such a consumer sends (``rogue_fetch``) are answered as Kafka
answers them, the model says so, and a broker bug in each validation path they reach is caught by
the zoo scenarios ``adversarial-producer`` and ``adversarial-consumer`` (and goes unseen without
their rogue requests: the reference clients never send them).

Kafka's answers, by the check that gives them:
- ProducerAppendInfo.checkSequence: a gap or a partial replay in the same epoch, and a new epoch
  starting at a non-zero sequence, are OUT_OF_ORDER_SEQUENCE_NUMBER (45); a new epoch at sequence
  0 is appended (and fences the old epoch: its next batch is INVALID_PRODUCER_EPOCH, 47);
- ProducerStateManager / ProducerStateEntry.findDuplicateBatch: an exact replay of one of the last 5
  batches is answered NONE with the original offset, nothing appended;
- ProducerAppendInfo.checkProducerEpoch: an older epoch than the partition holds is
  INVALID_PRODUCER_EPOCH (47);
- ReplicaManager (Partition.appendRecordsToLeader): a broker that does not lead the partition
  answers NOT_LEADER_OR_FOLLOWER (6);
- ReplicaManager's KIP-890 part 1 verification (AddPartitionsToTxnManager): a transactional batch
  on a partition the transaction never added is refused, INVALID_TXN_STATE (48).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from kconform.conformance.judge import NON_CONFORMANCE
from kconform.conformance.replication import scenarios as rscen
from kconform.conformance.runner import LockstepRun
from kconform.conformance.txn.scenarios import (
    ADVERSARIAL_END_TXN,
    ADVERSARIAL_PRODUCER,
    REORDERED_VERIFICATION,
    run_scenario,
)
from kconform.impl.replication.cluster import ReferenceCluster
from kconform.impl.replication.partition import Partition
from kconform.impl.txn import coordinator as txn_coordinator
from kconform.impl.txn import log as txn_log
from kconform.impl.txn.cluster import TxnCluster
from kconform.model.config import ReplicationConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

OOS = ev.OUT_OF_ORDER_SEQUENCE_NUMBER
FENCED = ev.INVALID_PRODUCER_EPOCH

KAFKA_ANSWERS = [
    # (partition, epoch, base_seq, outcome, error, base_offset): the idempotent producer (pid 1000)
    ("t-0", 0, 0, "appended", ev.NONE, 0),  # its own first batch, seqs 0-1
    ("t-0", 0, 3, "rejected", OOS, -1),  # gap
    ("t-0", 0, 0, "duplicate", ev.NONE, 0),  # exact replay of seqs 0-1
    ("t-0", 0, 1, "rejected", OOS, -1),  # partial replay (seq 1 alone): no duplicate, out of order
    ("t-0", 1, 2, "rejected", OOS, -1),  # new epoch at a non-zero sequence
    ("t-0", 0, 0, "rejected", ev.NOT_LEADER_OR_FOLLOWER, -1),  # to broker 1, which does not lead t-0
    ("t-0", 1, 0, "appended", ev.NONE, 2),  # new epoch at sequence 0
    ("t-0", 0, 2, "rejected", FENCED, -1),  # the client's own next batch, now of a stale epoch
]


def _run(cfg: TxnConfig) -> LockstepRun:
    return run_scenario(TxnCluster(), ADVERSARIAL_PRODUCER, cfg, frozenset())


def _produced(run: LockstepRun) -> list[ev.TxnProduceHandled]:
    return [e for step in run.steps for e in step.events if isinstance(e, ev.TxnProduceHandled)]


@pytest.mark.parametrize("tv", [0, 2])
def test_the_reference_answers_as_kafka_and_the_model_agrees(tv: int) -> None:
    run = _run(TxnConfig(transaction_version=tv))
    assert run.failure is None, run.failure
    produced = _produced(run)
    idempotent = [e for e in produced if e.pid == produced[0].pid]
    got = [(e.partition, e.epoch, e.base_seq, e.outcome, e.error, e.base_offset) for e in idempotent]
    assert got == KAFKA_ANSWERS
    transactional = [e for e in produced if e.pid != produced[0].pid]
    stale = [e for e in transactional if e.epoch == 0]
    assert [(e.outcome, e.error) for e in stale] == [("rejected", FENCED)]  # inside the transaction
    verifications = [e for step in run.steps for e in step.events if isinstance(e, ev.VerifyApplied)]
    assert [(v.outcome, v.error) for v in verifications] == [("appended", ev.NONE), ("rejected", ev.INVALID_TXN_STATE)]


def test_without_verification_a_transactional_rogue_batch_is_not_sent() -> None:
    """Without KIP-890 part 1 Kafka has no broker check for a transactional batch on a partition the
    coordinator does not know (the hanging transaction): the operation sends nothing then."""
    run = _run(TxnConfig(transaction_version=0, verification=False))
    assert run.failure is None, run.failure
    transactional = [e for e in _produced(run) if e.txn_id]
    assert [e.base_seq for e in transactional] == [0]  # the successor's own batch only


def test_a_well_formed_or_impossible_rogue_batch_is_ignored() -> None:
    cluster = TxnCluster()
    try:
        cluster.reset(TxnConfig(), 0, frozenset())
        cluster.apply(ops.InitProducer(15, ""))
        cluster.apply(ops.Settle(100))
        for op in (
            ops.RogueProduce(15, "t-0", -1, 0, 0, 1),  # a well-formed batch: that is a send
            ops.RogueProduce(15, "t-0", -1, 0, -1, 1),  # epoch -1
            ops.RogueProduce(15, "t-0", -1, -1, 0, 1),  # sequence -1
            ops.RogueProduce(15, "t-9", -1, 1, 0, 1),  # no such partition
            ops.RogueProduce(15, "t-0", 7, 1, 0, 1),  # no such broker
            ops.RogueProduce(3, "t-0", -1, 1, 0, 1),  # no such client
        ):
            cluster.apply(op)
            assert cluster.apply(ops.Settle(100)) == [], op
    finally:
        cluster.close()


Planted = Callable[..., Any]


def _gaps_accepted(original: Planted) -> Planted:
    def check(self: Any, pid: int, entry: Any, epoch: int, base_seq: int) -> bool:
        last = entry.batches[-1].last_seq if entry.batches else -1
        return bool(original(self, pid, entry, epoch, base_seq)) or (epoch == entry.epoch and base_seq > last)

    return check


def _new_epoch_any_sequence(original: Planted) -> Planted:
    def check(self: Any, pid: int, entry: Any, epoch: int, base_seq: int) -> bool:
        return epoch > entry.epoch or bool(original(self, pid, entry, epoch, base_seq))

    return check


def _partial_replay_is_duplicate(original: Planted) -> Planted:
    def find(self: Any, pid: int, epoch: int, base_seq: int, count: int) -> int | None:
        entry = self.producers.get(pid)
        if entry is not None and entry.epoch == epoch:
            for b in entry.batches:
                if b.first_seq <= base_seq <= b.last_seq:
                    return int(b.first_offset)
        return None

    return find


def _stale_epoch_in_transaction(original: Planted) -> Planted:
    def append(self: Any, pid: int, epoch: int, *rest: Any) -> Any:
        entry = self.producers.get(pid)
        stored = entry.epoch if entry is not None and entry.txn_first_offset >= 0 else epoch
        return original(self, pid, max(epoch, stored), *rest)

    return append


PLANTED = {
    "gaps accepted (checkSequence)": ("_sequence_ok", _gaps_accepted),
    "a new epoch at any sequence (checkSequence)": ("_sequence_ok", _new_epoch_any_sequence),
    "a partial replay answered as a duplicate (findDuplicateBatch)": ("find_duplicate", _partial_replay_is_duplicate),
    "a stale epoch accepted inside a transaction (checkProducerEpoch)": ("append_client", _stale_epoch_in_transaction),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_broker_bug_on_the_adversarial_path_is_caught(bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name, plant = PLANTED[bug]
    monkeypatch.setattr(txn_log.TxnPartitionLog, name, plant(getattr(txn_log.TxnPartitionLog, name)))
    run = _run(TxnConfig())
    assert run.failure is not None, f"{bug}: not caught"
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "txn_produce_handled"), run.failure


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_without_the_rogue_batches_the_planted_bugs_go_unseen(bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The near miss: the same scenario with only its well-behaved clients passes under every
    planted bug (the reference clients never send what these checks refuse), so it is the
    adversarial client that exposes them."""
    name, plant = PLANTED[bug]
    monkeypatch.setattr(txn_log.TxnPartitionLog, name, plant(getattr(txn_log.TxnPartitionLog, name)))
    well_behaved = tuple(op for op in ADVERSARIAL_PRODUCER.ops if not isinstance(op, ops.RogueProduce))
    scenario = type(ADVERSARIAL_PRODUCER)("well-behaved", "", (), well_behaved)
    run = run_scenario(TxnCluster(), scenario, TxnConfig(), frozenset())
    assert run.failure is None, run.failure


# Out-of-order EndTxn (``rogue_end_txn``) -------------------------------------------------------

END_TXN_ANSWERS = {
    # (epoch, commit, error, state) of every EndTxn the coordinator (broker 1) handled, in order;
    # TransactionCoordinator.handleEndTransaction (kafka-facts section 1.5)
    0: [
        (0, True, ev.INVALID_TXN_STATE, "Empty"),  # a commit with nothing open
        (1, False, ev.PRODUCER_FENCED, "Empty"),  # a future epoch
        (0, True, ev.NONE, "PrepareCommit"),  # the client's own commit
        (0, True, ev.CONCURRENT_TRANSACTIONS, "PrepareCommit"),  # a second one, markers in flight
        (0, True, ev.NONE, "CompleteCommit"),  # a retry of a completed commit
        (0, False, ev.NONE, "PrepareAbort"),  # the client's own abort
        (0, True, ev.INVALID_TXN_STATE, "CompleteAbort"),  # a commit of an aborted transaction
        (0, True, ev.NONE, "PrepareCommit"),  # the client's last commit
    ],
    2: [
        (0, True, ev.INVALID_TXN_STATE, "Empty"),
        (1, False, ev.PRODUCER_FENCED, "Empty"),
        (0, True, ev.NONE, "PrepareCommit"),  # bumps the epoch to 1
        (0, True, ev.CONCURRENT_TRANSACTIONS, "PrepareCommit"),  # a retry (epoch + 1 stored)
        (1, True, ev.INVALID_TXN_STATE, "CompleteCommit"),  # a new commit at the current epoch
        (0, True, ev.NONE, "CompleteCommit"),  # a retry of the completed commit
        (0, False, ev.INVALID_TXN_STATE, "CompleteCommit"),  # a retry with the other flag
        (1, False, ev.NONE, "PrepareAbort"),
        (2, True, ev.INVALID_TXN_STATE, "CompleteAbort"),
        (2, True, ev.NONE, "PrepareCommit"),
    ],
}


def _end_txn_run(tv: int, scenario: Any = ADVERSARIAL_END_TXN) -> LockstepRun:
    return run_scenario(TxnCluster(), scenario, TxnConfig(transaction_version=tv), frozenset())


@pytest.mark.parametrize("tv", [0, 2])
def test_out_of_order_end_txn_is_answered_as_kafka_and_the_model_agrees(tv: int) -> None:
    run = _end_txn_run(tv)
    assert run.failure is None, run.failure
    handled = [e for step in run.steps for e in step.events if isinstance(e, ev.EndTxnHandled)]
    assert [(e.node, e.error) for e in handled if e.node != 1] == [(0, ev.NOT_COORDINATOR)]
    assert [(e.epoch, e.commit, e.error, e.state) for e in handled if e.node == 1] == END_TXN_ANSWERS[tv]
    added = [e for step in run.steps for e in step.events if isinstance(e, ev.AddPartitionsHandled)]
    during_prepare = [(e.epoch, e.error) for e in added if e.state == "PrepareCommit"]
    # handleAddPartitionsToTransaction: the epoch check first, then Prepare* is CONCURRENT_TRANSACTIONS;
    # under TV2 the coordinator's epoch is already the client's + 1 while the markers are in flight
    conc, fenced = ev.CONCURRENT_TRANSACTIONS, ev.PRODUCER_FENCED
    assert during_prepare == ([(0, conc), (1, fenced)] if tv == 0 else [(0, fenced), (1, conc)])
    inits = [e for step in run.steps for e in step.events if isinstance(e, ev.InitProducerIdHandled)]
    assert [(e.expected_pid, e.error) for e in inits] == [(-1, ev.NONE), (inits[0].pid + 1, fenced)]


def test_a_rogue_end_txn_without_a_producer_id_or_transactional_id_is_not_sent() -> None:
    cluster = TxnCluster()
    try:
        cluster.reset(TxnConfig(), 0, frozenset())
        cluster.apply(ops.InitProducer(15, ""))
        cluster.apply(ops.Settle(100))
        for op in (
            ops.RogueEndTxn(15, -1, 1, True),  # an idempotent producer has no transaction
            ops.RogueEndTxn(3, -1, 1, True),  # no such client
            ops.RogueEndTxn(15, 7, 1, True),  # no such broker
        ):
            cluster.apply(op)
            assert cluster.apply(ops.Settle(100)) == [], op
        cluster.apply(ops.InitProducer(0, "txn-1"))
        cluster.apply(ops.RogueEndTxn(0, -1, 1, True))  # before its InitProducerId is answered
        handled = [e for e in cluster.apply(ops.Settle(100)) if isinstance(e, ev.EndTxnHandled)]
        assert handled == []
    finally:
        cluster.close()


def _no_epoch_check(original: Planted) -> Planted:
    def end(self: Any, req: Any) -> Any:
        meta = self.txns.get(req.txn_id)
        return original(self, dataclasses.replace(req, epoch=meta.epoch) if meta is not None else req)

    return end


def _completed_answers_none(original: Planted) -> Planted:
    def by_state(self: Any, txn_id: str, meta: Any, commit: bool) -> int:
        if meta.state in (txn_coordinator.COMPLETE_COMMIT, txn_coordinator.COMPLETE_ABORT):
            return ev.NONE
        return int(original(self, txn_id, meta, commit))

    return by_state


def _second_commit_accepted(original: Planted) -> Planted:
    def by_state(self: Any, txn_id: str, meta: Any, commit: bool) -> int:
        if meta.state == txn_coordinator.PREPARE_COMMIT and commit:
            return ev.NONE
        return int(original(self, txn_id, meta, commit))

    return by_state


def _add_during_prepare(original: Planted) -> Planted:
    def add(self: Any, txn_id: str, pid: int, epoch: int, partitions: set[str]) -> tuple[int, str]:
        meta = self.txns.get(txn_id)
        if meta is not None and meta.state in txn_coordinator.PREPARE and (meta.pid, meta.epoch) == (pid, epoch):
            return ev.NONE, meta.state  # the Prepare* guard gone: the request is accepted
        return original(self, txn_id, pid, epoch, partitions)  # type: ignore[no-any-return]

    return add


def _expected_pid_ignored(original: Planted) -> Planted:
    def init_pid(self: Any, req: Any) -> Any:
        meta = self.txns.get(req.txn_id)
        if meta is not None and req.expected_pid not in (-1, meta.pid):
            req = dataclasses.replace(req, expected_pid=meta.pid)  # KIP-360's expected-id check gone
        return original(self, req)

    return init_pid


END_TXN_PLANTED = {
    "InitProducerId ignores a wrong expected producer id": (
        "_init_pid",
        _expected_pid_ignored,
        0,
        "init_producer_id_handled",
    ),
    "no producer-epoch check on EndTxn (TV0)": ("_end_txn_v0", _no_epoch_check, 0, "end_txn_handled"),
    "EndTxn on a completed transaction always NONE": ("_end_by_state", _completed_answers_none, 0, "end_txn_handled"),
    "a second commit while the markers are in flight NONE": (
        "_end_by_state",
        _second_commit_accepted,
        2,
        "end_txn_handled",
    ),
    "AddPartitions accepted during Prepare (TV0)": ("_add", _add_during_prepare, 0, "add_partitions_handled"),
    "AddPartitions accepted during Prepare (TV2)": ("_add", _add_during_prepare, 2, "add_partitions_handled"),
}


@pytest.mark.parametrize("bug", sorted(END_TXN_PLANTED))
def test_a_planted_coordinator_bug_on_the_end_txn_path_is_caught(bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name, plant, tv, caught_at = END_TXN_PLANTED[bug]
    cls = txn_coordinator.TxnCoordinator
    monkeypatch.setattr(cls, name, plant(getattr(cls, name)))
    run = _end_txn_run(tv)
    assert run.failure is not None, f"{bug}: not caught"
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, caught_at), run.failure
    rogue = (ops.RogueEndTxn, ops.RogueAddPartitions, ops.RogueInitProducer)
    well_behaved = tuple(op for op in ADVERSARIAL_END_TXN.ops if not isinstance(op, rogue))
    near_miss = _end_txn_run(tv, type(ADVERSARIAL_END_TXN)("well-behaved", "", (), well_behaved))
    assert near_miss.failure is None, near_miss.failure  # only the rogue EndTxn requests expose it


# The replication slice: an adversarial consumer (``rogue_fetch``) ------------------------------

FETCH_ANSWERS = [
    # (broker, fetch_offset, current_leader_epoch, error) after leadership moved to broker 1 (epoch 1)
    (1, 0, 0, ev.FENCED_LEADER_EPOCH),  # stale epoch (Partition.checkCurrentLeaderEpoch, KIP-320)
    (1, 0, 2, ev.UNKNOWN_LEADER_EPOCH),  # future epoch
    (0, 0, 1, ev.NOT_LEADER_OR_FOLLOWER),  # the old leader (ReplicaManager.getPartitionOrError)
    (1, 9, 1, ev.OFFSET_OUT_OF_RANGE),  # past the LEO
    (1, 2, 1, ev.OFFSET_OUT_OF_RANGE),
    (1, 1, -1, ev.NONE),  # at the LEO, no epoch (a pre-KIP-320 client): served, empty
]


def _replication_run() -> LockstepRun:
    return rscen.run_scenario(ReferenceCluster(), rscen.ADVERSARIAL_CONSUMER, ReplicationConfig(), frozenset())


def _fetches(run: LockstepRun) -> list[tuple[int, int, int, int]]:
    return [
        (e.node, e.fetch_offset, e.current_leader_epoch, e.error)
        for step in run.steps
        for e in step.events
        if isinstance(e, ev.ConsumerFetchHandled)
    ]


def test_rogue_fetches_are_answered_as_kafka_and_the_model_agrees() -> None:
    run = _replication_run()
    assert run.failure is None, run.failure
    assert _fetches(run) == FETCH_ANSWERS


def _future_epoch_served(original: Planted) -> Planted:
    def check(self: Any, current_leader_epoch: int) -> int | None:
        error = original(self, current_leader_epoch)
        return None if error == ev.UNKNOWN_LEADER_EPOCH else int(error) if error is not None else None

    return check


REPLICATION_PLANTED = {
    "a future leader epoch served (checkCurrentLeaderEpoch)": _future_epoch_served,
}


@pytest.mark.parametrize("bug", sorted(REPLICATION_PLANTED))
def test_a_planted_fetch_check_bug_is_caught_by_the_rogue_fetches(bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    original = Partition.check_current_leader_epoch
    monkeypatch.setattr(Partition, "check_current_leader_epoch", REPLICATION_PLANTED[bug](original))
    run = _replication_run()
    assert run.failure is not None, f"{bug}: not caught"
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "consumer_fetch_handled"), run.failure
    well_behaved = tuple(op for op in rscen.ADVERSARIAL_CONSUMER.ops if not isinstance(op, ops.RogueFetch))
    scenario = rscen.Scenario("well-behaved", "", 2, well_behaved)
    near_miss = rscen.run_scenario(ReferenceCluster(), scenario, ReplicationConfig(), frozenset())
    assert near_miss.failure is None, near_miss.failure


# The gate machine's stale AddPartitionsToTxn and wrong-id InitProducerId --------------------------


def _machine_draws_run(tv: int) -> LockstepRun:
    """Every draw of the machine's ``rogue_add_partitions`` (epoch - 1) and ``rogue_init_producer``
    (expected id + 1 or + 1,000, any epoch shift) at each moment of a transaction: none open, one
    open, its markers in flight, completed; and from a zombie (an older instance)."""
    from kconform.conformance.txn.machine import ROGUE_INIT_EPOCHS, ROGUE_PID_DELTAS

    def rogue(client: int) -> tuple[ops.Operation, ...]:
        adds = tuple(ops.RogueAddPartitions(client, p, -1, -1) for p in ("t-0", "t-1"))
        inits = tuple(ops.RogueInitProducer(client, -1, d, e) for d in ROGUE_PID_DELTAS for e in ROGUE_INIT_EPOCHS)
        return (*adds, *inits, ops.Settle(100))

    steps: tuple[ops.Operation, ...] = (
        ops.InitProducer(0, "txn-1"),
        ops.Settle(100),
        *rogue(0),
        ops.BeginTxn(0),
        ops.Send(0, "t-0", 1),
        ops.Settle(100),
        *rogue(0),
        ops.CommitTxn(0),
        ops.Settle(1),
        *rogue(0),
        ops.Settle(1000),
        *rogue(0),
        ops.InitProducer(1, "txn-1"),
        ops.Settle(100),
        *rogue(0),
        ops.BeginTxn(1),
        ops.Send(1, "t-0", 1),
        ops.Settle(100),
        *rogue(1),
        ops.CommitTxn(1),
        ops.Settle(1000),
    )
    scenario = type(ADVERSARIAL_END_TXN)("machine-draws", "", (), steps)
    return run_scenario(TxnCluster(), scenario, TxnConfig(transaction_version=tv), frozenset())


@pytest.mark.parametrize("tv", [0, 2])
def test_the_machines_rogue_add_partitions_and_init_producer_are_always_refused(tv: int) -> None:
    """The rules' claim (conformance.txn.machine): a stale AddPartitionsToTxn and an InitProducerId
    with a wrong KIP-360 expected id are refused at every moment (PRODUCER_FENCED, or
    CONCURRENT_TRANSACTIONS while the markers are in flight), so nothing opens or ends behind the
    client's back; the clients' own transactions commit and the model agrees with every answer."""
    run = _machine_draws_run(tv)
    assert run.failure is None, run.failure
    events = [e for step in run.steps for e in step.events]
    added = [e for e in events if isinstance(e, ev.AddPartitionsHandled) and "t-1" in e.partitions]
    # sent once the client's epoch is >= 1: TV0 bumps it with the second instance, TV2 at each EndTxn
    assert len(added) == (1 if tv == 0 else 3) and {e.error for e in added} == {ev.PRODUCER_FENCED}
    inits = [e for e in events if isinstance(e, ev.InitProducerIdHandled) and e.expected_pid != -1]
    assert len(inits) >= 6 * 2 * 2  # six moments, two ids, three epochs (-1 is not sent at epoch 0)
    assert {e.error for e in inits} <= {ev.PRODUCER_FENCED, ev.CONCURRENT_TRANSACTIONS}
    assert ev.PRODUCER_FENCED in {e.error for e in inits}
    ended = [e for e in events if isinstance(e, ev.EndTxnHandled)]
    assert [e.error for e in ended] == [ev.NONE, ev.NONE]


# Reordered KIP-890 verifications (zoo ``reordered-verification``) -------------------------------


def _lowest_sequence_moves_up(self: Any, pid: int, epoch: int, base_seq: int, guard: int) -> int:
    """start_verification with its same-epoch branch negated: a later, higher sequence replaces the
    lowest one (the benchmark's ``start_verification:negate`` survivor)."""
    entry = self.verifications.get(pid)
    if entry is None:
        self.verifications[pid] = txn_log.VerificationEntry(guard, base_seq, epoch)
        return guard
    if not (epoch == entry.epoch and base_seq < entry.lowest_seq):
        entry.lowest_seq = base_seq
    elif epoch > entry.epoch:
        entry.epoch, entry.lowest_seq = epoch, base_seq
    return int(entry.guard)


def _verification_run(tv: int, in_order: bool = False) -> LockstepRun:
    steps = REORDERED_VERIFICATION.ops
    if in_order:  # the two verification answers applied in order: nothing to refuse
        steps = tuple(ops.Settle(1) if isinstance(op, ops.Deliver) else op for op in steps)
    scenario = type(REORDERED_VERIFICATION)("in-order" if in_order else "reordered", "", (), steps)
    return run_scenario(TxnCluster(), scenario, TxnConfig(transaction_version=tv), frozenset())


@pytest.mark.parametrize("tv", [0, 2])
def test_a_batch_above_the_lowest_verifying_sequence_is_out_of_order(tv: int) -> None:
    run = _verification_run(tv)
    assert run.failure is None, run.failure
    applied = [e for step in run.steps for e in step.events if isinstance(e, ev.VerifyApplied)]
    # ProducerAppendInfo.checkSequence against VerificationStateEntry.lowestSequence: seq 1 first is
    # OUT_OF_ORDER_SEQUENCE_NUMBER, then seq 0 is appended
    assert [(e.outcome, e.error) for e in applied[:2]] == [("rejected", OOS), ("appended", ev.NONE)]
    assert applied[0].req > applied[1].req


@pytest.mark.parametrize("tv", [0, 2])
def test_a_lowest_sequence_that_moves_up_is_caught_only_when_verifications_reorder(
    tv: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(txn_log.TxnPartitionLog, "start_verification", _lowest_sequence_moves_up)
    run = _verification_run(tv)
    assert run.failure is not None
    assert (run.failure.verdict, run.failure.name) == (NON_CONFORMANCE, "verify_applied"), run.failure
    near_miss = _verification_run(tv, in_order=True)
    assert near_miss.failure is None, near_miss.failure
