"""The mutation runner (ci/mutation, issue 17) on a tiny synthetic module: every operator, stable ids,
the import hook, classification, sampling and the equivalent-mutants file. Seconds, no gate run
(a slow test runs a handful of real mutants through the gate)."""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

from kconform.ci.benchmarks import mutation as mutation_benchmark
from kconform.ci.mutation import child, operators, runner
from kconform.ci.mutation.operators import Mutant, UnknownMutant, after_text, mutate, sites

SOURCE = '''"""A module."""
LIMIT = 5


def clamp(x, lo):
    """Docstring."""
    if x < lo:
        return lo
    y = min(x, LIMIT)
    assert y >= 0
    return y


class Box:
    size = 2

    def check(self, rt, v):
        if rt.mutant("named-bug"):
            v = v + 100
        elif v == 3:
            raise ValueError("three")
        while v > 10:
            v -= 1
        return v if v != 0 else -1
'''


def _by(ms: list[Mutant], op: str, function: str) -> list[Mutant]:
    return [m for m in ms if m.operator == op and m.function == function]


def _load(mid: str) -> types.ModuleType:
    mod = types.ModuleType("synthetic")
    exec(mutate(SOURCE, "synthetic", mid, "synthetic.py"), mod.__dict__)
    return mod


def test_every_operator_has_sites_and_changes_behaviour() -> None:
    ms = sites(SOURCE, "synthetic")
    assert {m.operator for m in ms} == set(operators.OPERATORS)
    guard = _by(ms, "no-guard", "clamp")[0]
    assert guard.before == "if x < lo:" and _load(guard.mid).clamp(1, 3) == 1
    cmp = next(m for m in _by(ms, "cmp", "clamp") if m.before == "x < lo")
    assert after_text(SOURCE, cmp) == "x <= lo" and _load(cmp.mid).clamp(0, 0) == 0
    minmax = _by(ms, "minmax", "clamp")[0]
    assert _load(minmax.mid).clamp(1, 0) == 5
    plus = next(m for m in ms if m.operator == "const+1" and m.function == "<module>")
    assert _load(plus.mid).LIMIT == 6
    negate = next(m for m in _by(ms, "negate", "Box.check") if m.before == "v > 10")
    assert _load(negate.mid).Box().check(types.SimpleNamespace(mutant=lambda n: False), 11) == 11
    drop = next(m for m in _by(ms, "drop", "clamp") if m.before.startswith("y ="))
    with pytest.raises(NameError):
        _load(drop.mid).clamp(1, 0)
    ifexp = next(m for m in _by(ms, "negate", "Box.check") if m.before == "v != 0")
    assert _load(ifexp.mid).Box().check(types.SimpleNamespace(mutant=lambda n: False), 4) == -1


def test_skips_docstrings_asserts_and_named_mutant_branches() -> None:
    ms = sites(SOURCE, "synthetic")
    texts = {m.before for m in ms}
    assert "y >= 0" not in texts  # assert
    assert not any("100" in t for t in texts)  # the named mutant's own body
    assert not any(m.before.startswith("rt.mutant") for m in ms if m.operator == "negate")
    # the elif of a named-mutant switch is the reference's own code: mutated
    assert any(m.before == "v == 3" for m in ms)


def test_inert_statements_are_not_dropped() -> None:
    """A Protocol method's ``...`` (as a docstring) does nothing: dropping it is no mutant; a call
    statement beside it is one."""
    source = "class P:\n    def f(self) -> int: ...\n\ndef g(x: list[int]) -> None:\n    ...\n    x.clear()\n"
    drops = [m.before for m in sites(source, "synthetic") if m.operator == "drop"]
    assert drops == ["x.clear()"]


def test_ids_are_stable_when_other_code_moves_and_unique() -> None:
    ms = sites(SOURCE, "synthetic")
    assert len({m.mid for m in ms}) == len(ms)
    shifted = SOURCE.replace("LIMIT = 5\n", "LIMIT = 5\n\n\ndef other():\n    return 1\n")
    moved = {m.mid: m for m in sites(shifted, "synthetic")}
    for m in ms:
        assert m.mid in moved and moved[m.mid].before == m.before
    assert moved[ms[-1].mid].line > ms[-1].line


def test_unknown_id_is_refused_naming_the_module() -> None:
    with pytest.raises(UnknownMutant, match="synthetic"):
        mutate(SOURCE, "synthetic", "synthetic:clamp:cmp:00000000", "synthetic.py")


def test_import_hook_serves_the_mutant_and_only_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child, "ROOT", tmp_path)
    pkg = tmp_path / "impl"
    pkg.mkdir()
    (pkg / "synth.py").write_text(SOURCE)
    name = "kconform.impl.synth"
    assert child.module_path(name) == pkg / "synth.py"
    guard = _by(sites(SOURCE, name), "no-guard", "clamp")[0]
    finder_count = len(sys.meta_path)
    child.install(name, guard.mid)
    try:
        spec = sys.meta_path[0].find_spec(name, None)
        assert spec is not None and spec.origin == str(pkg / "synth.py")
        assert sys.meta_path[0].find_spec("kconform.impl.other", None) is None
        mod = types.ModuleType(name)
        assert spec.loader is not None
        spec.loader.exec_module(mod)
        assert mod.clamp(1, 3) == 1
    finally:
        del sys.meta_path[0]
    assert len(sys.meta_path) == finder_count
    assert (pkg / "synth.py").read_text() == SOURCE  # never edited in place


def test_slices_for_modules() -> None:
    assert child.slices_for("kconform.impl.txn.log") == ("txn",)
    assert child.slices_for("kconform.impl.replication.fetcher") == ("replication",)
    assert child.slices_for("kconform.impl.clock") == ("replication", "txn", "fetch")
    assert child.slices_for("kconform.impl.fetch.broker") == ("fetch",)


def test_classification() -> None:
    assert runner.classify(None, "", "")[0] == runner.TIMEOUT
    assert runner.classify(1, "", "Traceback\nSyntaxError: bad")[0] == runner.CRASHED
    out = '{"status": "failed", "config": "txn-tv0", "how": "non-conformance: x", "seconds": 1, "configs": []}'
    assert runner.classify(0, out, "") == (runner.KILLED, "txn-tv0: non-conformance: x")
    out = '{"status": "passed", "config": null, "how": null, "seconds": 1, "configs": ["txn-tv0", "txn-tv2"]}'
    assert runner.classify(0, out, "") == (runner.SURVIVED, "passed txn-tv0,txn-tv2")
    out = '{"status": "error", "config": "replication", "how": "raised", "seconds": 1, "configs": []}'
    assert runner.classify(0, out, "")[0] == runner.CRASHED


def test_child_timeout_kills_the_process_group() -> None:
    code, _out, _err = runner.run_child(["--examples", "1", "--seed", "1", "--module", "x"], 30.0)
    assert code == 2  # argparse: --mutant missing -> usage error, not a hang
    started = os.times().elapsed
    fake = [sys.executable, "-c", "import time; time.sleep(60)"]
    assert runner.run_command(fake, 0.5)[0] is None
    assert os.times().elapsed - started < 30


def test_sampling_is_seeded_per_module() -> None:
    ms = sites(SOURCE, "a") + sites(SOURCE, "b")
    one = runner.sample(ms, 3, seed=7)
    assert one == runner.sample(ms, 3, seed=7)
    assert [m.module for m in one].count("a") == 3 and [m.module for m in one].count("b") == 3
    assert runner.sample(ms, None, seed=7) == ms
    assert runner.sample(ms, 3, seed=8) != one or len(ms) <= 6


def test_same_as_reruns_an_earlier_draw_and_refuses_a_file_that_is_not_one(tmp_path: Path) -> None:
    ms = sites(SOURCE, "a")
    drawn = runner.sample(ms, 3, seed=7)
    out = tmp_path / "before.json"
    out.write_text(json.dumps({"outcomes": [{"id": m.mid} for m in drawn] + [{"id": "a:gone:drop:0"}]}))
    assert mutation_benchmark.same_as(ms, out) == (drawn, 4)  # in source order; a vanished id is skipped
    bad = tmp_path / "bad.json"
    bad.write_text('{"seed": 7}')
    with pytest.raises(ValueError, match=r"bad\.json: not an --out file"):
        mutation_benchmark.same_as(ms, bad)
    assert mutation_benchmark.main(["--module", "kconform.impl.fetch.messages", "--same-as", str(bad)]) == 2


def test_scores_count_detected_over_non_equivalent() -> None:
    ms = sites(SOURCE, "synthetic")[:5]
    statuses = [runner.KILLED, runner.CRASHED, runner.SURVIVED, runner.EQUIVALENT, runner.UNREACHED]
    outs = [runner.Outcome(m, s, "", 0.0) for m, s in zip(ms, statuses, strict=True)]
    s = runner.score("x", outs)
    assert (s.detected, s.scored) == (2, 4) and s.percent == 50.0 and s.shown == "50.0"


def test_equivalents_file_needs_an_argument(tmp_path: Path) -> None:
    f = tmp_path / "eq.toml"
    f.write_text('[mutant."m:f:cmp:1"]\nargument = "both branches compute the same value for every reachable input"\n')
    assert list(runner.load_equivalents(f)) == ["m:f:cmp:1"]
    f.write_text('[mutant."m:f:cmp:1"]\nargument = "same"\n')
    with pytest.raises(runner.EquivalentsError, match="m:f:cmp:1"):
        runner.load_equivalents(f)
    assert runner.load_equivalents(tmp_path / "absent.toml") == {}


def test_the_equivalents_file_names_existing_mutants() -> None:
    from kconform.ci.benchmarks.mutation import EQUIVALENTS

    known = {m.mid for m in runner.all_mutants(runner.impl_modules())}
    assert EQUIVALENTS.exists(), EQUIVALENTS  # absent, the list would be silently empty
    listed = runner.load_equivalents(EQUIVALENTS)
    assert "kconform.impl.replication.broker:Broker.crash:drop:1caacb7d" in listed
    assert set(listed) <= known, sorted(set(listed) - known)


def test_unreached_statements_are_recognised() -> None:
    ms = sites(SOURCE, "kconform.impl.synth")
    path = str(child.module_path("kconform.impl.synth").resolve())
    inside = next(m for m in ms if m.function == "clamp")
    module_level = next(m for m in ms if m.function == "<module>")
    assert not runner.is_reached(inside, {path: set()})
    assert runner.is_reached(inside, {path: {inside.stmt_line}})
    assert runner.is_reached(module_level, {})


MULTILINE = """def gate(a, b):
    if (
        a > 1
        and b > 1
    ):
        return 1
    return 0


gate(2, 3)
"""


def test_a_statement_spread_over_lines_is_reached_by_its_first_line(tmp_path: Path) -> None:
    """coverage.py records the lines of the test below ``if (``, never the ``if`` line the mutants
    name (Mutant.stmt_line): reached_lines maps them back, as coverage.py's analysis does, so a
    mutant of such a test is run, not written off as unreached (before the fix the fetcher's
    `log.leo != resp.fetch_offset` mutant was "unreached" although every Fetch answer runs it)."""
    import coverage

    source = tmp_path / "multiline.py"
    source.write_text(MULTILINE)
    data_file = tmp_path / ".coverage"
    cov = coverage.Coverage(data_file=str(data_file))
    cov.start()
    try:
        exec(compile(MULTILINE, str(source), "exec"), {})
    finally:
        cov.stop()
    cov.save()
    raw = coverage.CoverageData(basename=str(data_file))
    raw.read()
    assert 2 not in set(raw.lines(str(source)) or ())  # the interpreter never reports the `if (` line
    reached = runner.reached_lines(data_file)[str(source.resolve())]
    assert {2, 3, 6, 10} <= reached and 7 not in reached


# A handful of real mutants of impl/ through the gate (slow tier) ---------------------------------

REAL = {
    # the KIP-320 fetch check removed: the zoo's adversarial-consumer (and follower traffic) refuse it
    "kconform.impl.replication.partition:Partition.check_current_leader_epoch:no-guard:d15f44de": runner.KILLED,
    # `old is None` flipped in _latest: max(None, now) raises TypeError, the gate stops (exit 2). (Until
    # the re-elected leader kept its followers' state, RemoteReplica.record_fetch's `last_fetch_ms is not
    # None` flipped crashed too; now the zoo's re-elected leaders reach non-conformance first.)
    "kconform.impl.replication.partition:_latest:cmp:96be254d": runner.CRASHED,
}


@pytest.mark.slow
def test_real_mutants_are_classified_through_the_gate() -> None:
    examples = 10 if os.environ.get("KCONFORM_BUDGET") == "small" else 100
    by_id = {m.mid: m for m in runner.all_mutants(["kconform.impl.replication.partition"])}
    chosen = [by_id[mid] for mid in REAL]
    outcomes = runner.run_all(chosen, examples=examples, seed=7, timeout_s=300, jobs=1, equivalents={}, reached=None)
    assert {o.mutant.mid: o.status for o in outcomes} == REAL, [o.how for o in outcomes]


def test_a_score_of_no_mutant_is_shown_as_none_not_a_hundred_percent() -> None:
    """Nothing scored (every mutant equivalent, or none drawn) is no measurement: a table shows ``-``."""
    ms = sites(SOURCE, "synthetic")[:1]
    assert runner.score("none", []).shown == "-"
    assert runner.score("equivalent only", [runner.Outcome(ms[0], runner.EQUIVALENT, "", 0.0)]).shown == "-"
