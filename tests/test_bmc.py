"""Bounded model checking (conformance.replication.bmc): proven-shortest runs that replay on the model.

Issue 5: BMC finds each model-level historic bug at a proven-minimal length, the length breadth-first
search finds; its run is an ordinary counterexample file that ``kconform replay --model-only``
judges to the same verdict; the fixed rungs are UNSAT up to the stated bound; inductive checks
report which invariants are inductive. The fast tier uses small bounds (1 record, epochs <= 2);
the slow tier the bounds of docs/bmc.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kconform.ci.cli import main
from kconform.conformance.judge import INVARIANT_VIOLATION
from kconform.conformance.replication.bmc import bmc, inductive
from kconform.conformance.replication.explore import explore
from kconform.model.actions import SearchBounds
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces.counterexample import read_counterexample
from kconform.traces.replay import replay

SMALL = SearchBounds(max_records=1, max_leader_epoch=2)


def _cfg(protocol: Protocol, replicas: int = 2) -> ReplicationConfig:
    return ReplicationConfig(replicas=replicas, min_insync_replicas=1, protocol=protocol)


def test_fixed_rung_is_unsat_up_to_the_bound() -> None:
    res = bmc(_cfg(Protocol.DIVERGING_EPOCH), SMALL, ["StrongIsr", "NoDivergenceBelowHw"], max_steps=4)
    assert res.found is None
    assert res.checked_steps == 4


def test_solving_modes_give_the_same_minimal_run_length() -> None:
    """A fresh preprocessed solver per length and the incremental solver decide the same lengths."""
    cfg = _cfg(Protocol.TRUNCATE_TO_HW)
    fresh = bmc(cfg, SMALL, ["StrongIsr"], max_steps=8, solving="fresh")
    incremental = bmc(cfg, SMALL, ["StrongIsr"], max_steps=8, solving="incremental")
    assert fresh.found is not None and incremental.found is not None
    assert fresh.found.depth == incremental.found.depth == fresh.checked_steps == incremental.checked_steps
    with pytest.raises(ValueError, match="solving"):
        bmc(cfg, SMALL, ["StrongIsr"], max_steps=1, solving="parallel")


def test_cli_bmc_minimal_length_is_the_bfs_depth_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """truncate-to-hw (pre-KIP-101): BMC's minimal length is BFS's shortest depth, every shorter
    length was decided UNSAT, and the file replays model-only to the same verdict and step."""
    cfg = _cfg(Protocol.TRUNCATE_TO_HW)
    bfs = explore(cfg, SMALL, frozenset({"StrongIsr"}), max_depth=8)
    assert bfs.violation is not None
    depth = bfs.violation.depth
    args = ["--policy", "truncate-to-hw", "--replicas", "2", "--set", "min.insync.replicas=1"]
    args += ["--records", "1", "--max-leader-epoch", "2", "--invariant", "StrongIsr", "--steps", str(depth)]
    code = main(["bmc", *args, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"StrongIsr at minimal length {depth} " in out
    assert len(re.findall(r"^\W*\d+\W+UNSAT\W", out, re.MULTILINE)) == depth  # the table: lengths 0 .. depth-1
    (path,) = tmp_path.glob("bmc-*.jsonl")
    back = read_counterexample(path)
    judged = replay(back, None)
    assert judged.failure is not None and judged.failure.verdict == INVARIANT_VIOLATION
    assert judged.failure.name == "StrongIsr"
    assert judged.failing_step == depth == len(back.steps) - 1
    assert judged.reproduces(back)
    assert main(["replay", str(path), "--model-only"]) == 1


def test_cli_bmc_unsat_exits_0_and_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["bmc", "--policy", "kip-320", "--replicas", "2", "--set", "min.insync.replicas=1", "--records", "1"]
    for variant in (["--solving", "fresh"], ["--solving", "incremental", "--no-reduction"]):
        args = ["--max-leader-epoch", "1", "--steps", "3", "--invariant", "StrongIsr", *variant]
        assert main([*base, *args, "--out", str(tmp_path)]) == 0
        assert "no violation up to 3 steps" in capsys.readouterr().out
    assert main([*base, "--invariant", "NoSuchThing"]) == 2
    assert main([*base, "--crash"]) == 2
    assert main(["bmc", "--policy", "kip-999"]) == 2
    assert main([*base, "--solving", "parallel"]) == 2


@pytest.mark.parametrize(
    ("invariant", "inductive_alone"),
    [("HwBelowLeo", True), ("LeaderEpochsMonotonic", True), ("StrongIsr", False)],
)
def test_induction(invariant: str, inductive_alone: bool) -> None:
    res = inductive(_cfg(Protocol.DIVERGING_EPOCH), SMALL, invariant)
    assert res.inductive is inductive_alone
    assert res.initial
    if not inductive_alone:
        assert res.cti_label and res.cti_pre is not None and invariant in res.broken


HISTORIC = [
    ("truncate-to-hw", Protocol.TRUNCATE_TO_HW, 2, "StrongIsr", SearchBounds()),
    ("kip-101", Protocol.KIP_101, 2, "StrongIsr", SearchBounds()),  # 0.11 epoch cache: NoDivergenceBelowHw needs > 14
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "protocol", "replicas", "invariant", "bounds"), HISTORIC, ids=[h[0] for h in HISTORIC]
)
def test_bfs_shortest_depth_equals_bmc_minimal_length(
    name: str, protocol: Protocol, replicas: int, invariant: str, bounds: SearchBounds
) -> None:
    """The issue: "the shortest paths match BMC's minimal lengths" (docs/bmc.md's bounds)."""
    cfg = _cfg(protocol, replicas)
    bfs = explore(cfg, bounds, frozenset({invariant}), max_depth=14)
    assert bfs.violation is not None
    res = bmc(cfg, bounds, [invariant], max_steps=bfs.violation.depth)
    assert res.found is not None
    assert res.found.depth == bfs.violation.depth
