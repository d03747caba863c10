"""``kconform mine --invariant`` refuses a selection that fits no slice of the corpus (issue 20: an empty
or vacuous selection is never a pass): exit 2 naming the invariant, its slice and the corpus's slices,
before any engine starts; an invariant of the corpus's own slice is accepted and mined."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.ci import cli
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS
from kconform.traces.generate import Plan, generate
from kconform.traces.mine import replication as mined_replication
from kconform.traces.mine import txn as mined_txn


@pytest.fixture(scope="module")
def replication_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mine-selection") / "corpus"
    generate(root, Plan(events=600, seed=4, trace_events=300))
    return root


def test_an_invariant_of_a_slice_the_corpus_lacks_is_refused(
    replication_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    txn_invariant = mined_txn.INVARIANTS[0].name
    argv = ["mine", str(replication_corpus), "--engine", "duckdb", "--out", str(tmp_path / "o")]
    code = cli.main([*argv, "--invariant", txn_invariant])
    err = capsys.readouterr().err
    assert code == EXIT_ERROR, err
    assert txn_invariant in err and "txn slice" in err and "replication" in err and "nothing would be checked" in err
    assert not (tmp_path / "o").exists(), "refused before anything was mined or written"


def test_one_unfit_invariant_in_a_selection_is_refused_too(
    replication_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fits, unfit = mined_replication.INVARIANTS[0].name, mined_txn.INVARIANTS[-1].name
    argv = ["mine", str(replication_corpus), "--engine", "duckdb", "--out", str(tmp_path / "o")]
    code = cli.main([*argv, "--invariant", fits, "--invariant", unfit])
    err = capsys.readouterr().err
    assert code == EXIT_ERROR and unfit in err and f"{fits} (" not in err, err


def test_an_invariant_of_the_corpus_slice_is_mined(replication_corpus: Path, tmp_path: Path) -> None:
    """The near miss: the same corpus, an invariant of its own slice, runs and passes."""
    name = mined_replication.INVARIANTS[0].name
    out = tmp_path / "o"
    code = cli.main(["mine", str(replication_corpus), "--engine", "duckdb", "--out", str(out), "--invariant", name])
    assert code == EXIT_PASS
    assert (out / "report.json").is_file()
