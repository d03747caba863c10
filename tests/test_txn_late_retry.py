"""A transactional batch's copy that reaches the leader after its transaction ended there: the
leader asks the coordinator first (KIP-890 part 1 verification precedes the append, where the
duplicate check lives: kafka-facts §1.9, §2.2), found by the random txn workload's held messages."""

from __future__ import annotations

import pytest

from kconform.conformance.scenarios import run_scenario
from kconform.conformance.txn.scenarios import Scenario
from kconform.impl.txn.cluster import TxnCluster
from kconform.model.txn_config import TxnConfig
from kconform.traces import events as ev
from kconform.traces import operations as ops

LATE_COPY = Scenario(
    name="late-copy-after-commit",
    doc="A batch appended from one copy; its original arrives after the COMMIT marker on t-0.",
    mutants=(),
    ops=(
        ops.InitProducer(0, "txn-1"),
        ops.Settle(100),
        ops.BeginTxn(0),
        ops.Send(0, "t-0", 1),
        ops.DeliverTo(1),  # AddPartitionsToTxn
        ops.Deliver(0),  # its answer: the batch is sent and stays at the head of the queue
        ops.Duplicate(0),  # one copy reaches t-0's leader: verification, then appended
        *(ops.Deliver(1),) * 3,  # the verification, its answer, the produce answer
        ops.CommitTxn(0),
        *(ops.Deliver(1),) * 4,  # EndTxn, its answer, the COMMIT marker, the marker's answer
        ops.Deliver(0),  # the batch's original, after its transaction ended on t-0
        ops.Settle(100),
    ),
)


@pytest.mark.parametrize("version", [0, 2])
def test_a_late_copy_of_an_appended_batch_is_verified_before_the_duplicate_check(version: int) -> None:
    cfg = TxnConfig(transaction_version=version)
    adapter = TxnCluster()
    try:
        run = run_scenario(adapter, LATE_COPY, cfg, frozenset())
    finally:
        adapter.close()
    assert not run.failed, run.failure
    produced = [e for step in run.steps for e in step.events if isinstance(e, ev.TxnProduceHandled)]
    assert [e.outcome for e in produced] == ["verifying", "verifying"], produced
    assert any(isinstance(e, ev.MarkerHandled) for step in run.steps for e in step.events)
