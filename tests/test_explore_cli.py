"""``kconform explore``: exit codes, the figures it prints, and the file it writes replays."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.ci.explore import run_explore
from kconform.ci.options import ExploreOptions
from kconform.conformance.judge import INVARIANT_VIOLATION
from kconform.model.config import Protocol, ReplicationConfig
from kconform.traces.counterexample import MODEL_IMPLEMENTATION, read_counterexample
from kconform.traces.operations import ModelAction
from kconform.traces.replay import replay

TWO = ["--replicas", "2", "--set", "min.insync.replicas=1", "--no-progress"]
"""The ladder's small configuration (tests/test_ladder.py)."""


def _user_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``argv``, expect exit 2 with exactly one 'kconform: error:' line; return that line."""
    assert cli.main(argv) == EXIT_ERROR
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kconform: error: "), lines
    return lines[0]


def test_truncate_to_hw_is_a_violation_with_a_replayable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = cli.main(["explore", *TWO, "--set", "protocol=truncate-to-hw", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == EXIT_VIOLATION
    assert "invariant-violation WeakIsr at depth 6" in printed
    assert "stopped at the first violation" in printed
    path = out / "explore-truncate-to-hw.jsonl"
    assert f"kconform replay {path} --model-only" in printed
    labels = ["move_leader(1)", "fence(1)", "write(0)", "replicate(1)", "replicate(1)", "metadata(1, pe=2)"]
    for i, label in enumerate(labels, start=1):
        assert f"{i:>3}. {label}" in printed  # the shortest path, one action per line

    cx = read_counterexample(path)
    assert isinstance(cx.config, ReplicationConfig) and cx.config.protocol is Protocol.TRUNCATE_TO_HW
    assert cx.implementation == MODEL_IMPLEMENTATION
    assert [step.op for step in cx.steps[1:]] == [ModelAction(label) for label in labels]
    result = replay(cx, None)
    assert result.failure is not None and result.failure.verdict == INVARIANT_VIOLATION
    assert result.failure.name == cx.verdict["name"] == "WeakIsr"
    assert result.failing_step == len(cx.steps) - 1 == 6
    assert result.reproduces(cx)

    # The command line agrees: model-only replay exits 1 and reproduces; a live replay is refused.
    assert cli.main(["replay", str(path), "--model-only"]) == EXIT_VIOLATION
    assert "reproduces the recorded verdict" in capsys.readouterr().out
    line = _user_error(capsys, ["replay", str(path)])
    assert "replay it with --model-only" in line
    line = _user_error(capsys, ["replay", str(path), "--implementation", "reference"])
    assert "replay it with --model-only" in line


def test_a_chosen_invariant_is_the_one_searched_and_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["explore", *TWO, "--set", "protocol=truncate-to-hw", "--invariant", "StrongIsr", "--out", str(tmp_path)]
    assert cli.main(argv) == EXIT_VIOLATION
    assert "checking StrongIsr" in capsys.readouterr().out
    cx = read_counterexample(tmp_path / "explore-truncate-to-hw.jsonl")
    assert cx.verdict["name"] == "StrongIsr" and cx.checked == frozenset({"StrongIsr"})
    assert replay(cx, None).reproduces(cx)


def test_a_fixed_rung_exhausts_a_small_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore", *TWO, "--records", "1", "--max-epoch", "1", "--max-partition-epoch", "2", "--out", str(tmp_path)]
    assert cli.main(argv) == EXIT_PASS
    printed = capsys.readouterr().out
    assert "exhausted: every reachable state within the bounds was explored" in printed
    assert "no violation within the bounds" in printed
    assert "distinct states first reached" in printed and "diverging-epoch" in printed
    assert not list(tmp_path.iterdir())  # no file without a violation


def test_a_cut_off_search_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explore", *TWO, "--max-depth", "3", "--out", str(tmp_path)]) == EXIT_PASS
    assert "not exhausted: stopped at --max-depth 3" in capsys.readouterr().out
    assert cli.main(["explore", *TWO, "--max-states", "50", "--out", str(tmp_path)]) == EXIT_PASS
    assert "not exhausted: stopped at --max-states 50" in capsys.readouterr().out


def test_crashes_and_clock_jumps_are_searched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore", *TWO, "--crash", "--tick", "--records", "1", "--max-epoch", "1", "--max-depth", "4"]
    assert cli.main([*argv, "--out", str(tmp_path)]) == EXIT_PASS
    assert "crashes, clock jumps" in capsys.readouterr().out


def test_the_progress_display_does_not_change_the_outcome(tmp_path: Path) -> None:
    """With a terminal the progress bar runs (per BFS level); the verdict and figures are the same."""
    cfg = ReplicationConfig(replicas=2, min_insync_replicas=1, protocol=Protocol.TRUNCATE_TO_HW)
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, color_system=None, width=200)
    assert run_explore(ExploreOptions(config=cfg, out=tmp_path, progress=True), console) == EXIT_VIOLATION
    assert "WeakIsr at depth 6" in screen.getvalue()
    assert (tmp_path / "explore-truncate-to-hw.jsonl").is_file()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--invariant", "StrongISR"], "unknown invariant 'StrongISR'; did you mean 'StrongIsr'?"),
        (["--set", "protocol=kip-999"], "invalid config: unknown protocol 'kip-999'"),
        (["--replicas", "9"], "invalid config: replicas must be 1..7"),
        (["--records", "-1"], "argument --records: expected a non-negative integer"),
        (["--max-depth", "0"], "argument --max-depth: expected a positive integer"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    assert expected in _user_error(capsys, ["explore", *argv])


def test_an_out_path_that_is_a_file_is_refused_before_searching(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert "exists and is not a directory" in _user_error(capsys, ["explore", *TWO, "--out", str(blocker)])


@pytest.mark.parametrize("command", ["explore", "bmc"])
@pytest.mark.parametrize("argv", [["--slice", "fetch"], ["--slice", "txn"], ["--set", "slice=fetch"]])
def test_a_slice_without_a_model_search_is_refused_naming_what_is_searched(
    capsys: pytest.CaptureFixture[str], command: str, argv: list[str]
) -> None:
    line = _user_error(capsys, [command, *argv])
    name = argv[-1].removeprefix("slice=")
    assert f"kconform {command} searches the model of the replication slice only" in line
    assert f"'kconform gate --slice {name}'" in line


def test_the_replication_slice_named_explicitly_is_searched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["explore", "--slice", "replication", *TWO, "--max-states", "20", "--out", str(tmp_path)])
    assert code == EXIT_PASS
    assert "stopped at --max-states 20" in capsys.readouterr().out
