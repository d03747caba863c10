"""Seeded output is byte-identical across refactorings: corpora of both slices (replication, txn at
transaction versions 0 and 2, clean and planted) and the files the gate writes for a mutant at a
fixed seed hash to what the fixture recorded on the commit before the slice refactoring (issue 11).

The fixture (tests/fixtures/seeded_identity.json) holds the SHA-256 of every file. Parquet files
carry the writing pyarrow's version in their footer, so when the installed pyarrow is not the one
the fixture was written with their rows are compared instead (a canonical JSON of every row, also
recorded); every other file is compared byte for byte. A deliberate change of the seeded output
rewrites the fixture with ``python tests/test_seeded_identity.py`` and says why in its commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow
import pyarrow.parquet as pq
import pytest

from kconform.ci import cli
from kconform.model.config import ReplicationConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.generate import Plan, generate

FIXTURE = Path(__file__).parent / "fixtures" / "seeded_identity.json"

CORPORA: dict[str, Plan] = {
    "replication": Plan(events=2_000, seed=7, trace_events=700, config=ReplicationConfig()),
    "replication-planted": Plan(
        events=2_000, seed=7, trace_events=700, config=ReplicationConfig(), plant=(("truncate-to-hw", 1),)
    ),
    "txn-tv0": Plan(events=1_600, seed=5, trace_events=800, config=TxnConfig()),
    "txn-tv2": Plan(events=1_600, seed=5, trace_events=800, config=TxnConfig(transaction_version=2)),
    "txn-tv0-planted": Plan(
        events=1_600, seed=5, trace_events=800, config=TxnConfig(), plant=(("no-aborted-filter", 1),)
    ),
    "txn-tv2-planted": Plan(
        events=1_600,
        seed=5,
        trace_events=800,
        config=TxnConfig(transaction_version=2),
        plant=(("late-endtxn-next-txn", 1),),
    ),
}
"""Small seeded corpora: at least two traces in two buckets each."""

GATES: dict[str, list[str]] = {
    "gate-replication-truncate-to-hw": ["--mutant", "truncate-to-hw"],
    "gate-txn-no-aborted-filter": ["--slice", "txn", "--mutant", "no-aborted-filter"],
    "gate-txn-tv2-late-endtxn-next-txn": [
        "--slice",
        "txn",
        "--set",
        "transaction_version=2",
        "--mutant",
        "late-endtxn-next-txn",
    ],
}
"""Gate runs of one mutant at seed 3 that find it: the counterexample file, its report, coverage."""


def _gate(out: Path, args: list[str]) -> int:
    return cli.main(["gate", "--examples", "30", "--seed", "3", "--no-progress", "--out", str(out), *args])


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _rows_digest(path: Path) -> str:
    rows = pq.read_table(path).to_pylist()
    return _digest(json.dumps(rows, sort_keys=True, separators=(",", ":"), default=str).encode())


def fingerprint(root: Path) -> dict[str, dict[str, str]]:
    """File (relative path) → its SHA-256 (``sha256``) and, for a Parquet file, ``rows``."""
    out: dict[str, dict[str, str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        entry = {"sha256": _digest(path.read_bytes())}
        if path.suffix == ".parquet":
            entry["rows"] = _rows_digest(path)
        out[str(path.relative_to(root))] = entry
    return out


def produce(name: str, root: Path) -> dict[str, dict[str, str]]:
    """Write case ``name`` into ``root`` and fingerprint it."""
    if name in CORPORA:
        generate(root, CORPORA[name])
    else:
        assert _gate(root, GATES[name]) == 1, f"{name}: the gate did not catch the mutant"
    return fingerprint(root)


def _load() -> dict[str, Any]:
    return dict(json.loads(FIXTURE.read_text()))


@pytest.mark.parametrize("name", [*CORPORA, *GATES])
def test_seeded_output_is_what_it_was(name: str, tmp_path: Path) -> None:
    fixture = _load()
    expected: dict[str, dict[str, str]] = fixture["cases"][name]
    got = produce(name, tmp_path / "out")
    assert sorted(got) == sorted(expected), f"{name}: other files than recorded"
    same_writer = fixture["pyarrow"] == pyarrow.__version__
    for file, want in expected.items():
        if file.endswith(".parquet") and not same_writer:
            assert got[file]["rows"] == want["rows"], f"{name}/{file}: rows differ from the recorded ones"
        else:
            assert got[file]["sha256"] == want["sha256"], f"{name}/{file}: bytes differ from the recorded ones"


def test_a_changed_corpus_is_noticed(tmp_path: Path) -> None:
    """Near miss: another seed gives other bytes and other rows than the fixture's."""
    plan = CORPORA["txn-tv0"]
    generate(tmp_path / "c", Plan(plan.events, plan.seed + 1, plan.trace_events, plan.config))
    got = fingerprint(tmp_path / "c")
    want = _load()["cases"]["txn-tv0"]
    changed = [f for f in want if f.endswith(".parquet") and got[f]["rows"] != want[f]["rows"]]
    assert changed and all(got[f]["sha256"] != want[f]["sha256"] for f in changed)


def _write_fixture() -> None:
    import tempfile

    cases = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in [*CORPORA, *GATES]:
            cases[name] = produce(name, Path(tmp) / name)
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps({"pyarrow": pyarrow.__version__, "cases": cases}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE} ({sum(len(c) for c in cases.values())} files)", file=sys.stderr)


if __name__ == "__main__":
    _write_fixture()
