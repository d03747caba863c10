"""Fuzzed inputs never crash the log parsers or checks: truncated and mutated real lines, binary
garbage, other encodings, enormous lines. Problems are reported (file:line), memory stays bounded.

The fast tier runs a small Hypothesis budget; the slow tier (KCONFORM_BUDGET=small in CI) more,
and ``KCONFORM_LOGS_FUZZ=100000`` runs the acceptance's 10^5 cases.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kconform.traces.logs.checks.base import MAX_FINDINGS
from kconform.traces.logs.observations import TEXT_LIMIT
from kconform.traces.logs.parse import MAX_PROBLEMS, ParseStats, parse_paths
from kconform.traces.logs.reader import MAX_LINE_BYTES
from kconform.traces.logs.run import check_observations
from tests.logskit import FIXTURES

SEED_LINES = sorted(
    {
        line
        for path in FIXTURES.rglob("*")
        if path.is_file() and path.suffix in (".txt", ".log")
        for line in path.read_text(errors="replace").splitlines()
        if line.strip()
    }
)


@st.composite
def mutated_line(draw: st.DrawFn) -> bytes:
    line = draw(st.sampled_from(SEED_LINES)).encode()
    how = draw(st.sampled_from(["truncate", "splice", "garbage", "latin1", "utf16", "digits", "asis"]))
    if how == "truncate":
        return line[: draw(st.integers(0, len(line)))]
    if how == "splice":
        at = draw(st.integers(0, len(line)))
        return line[:at] + draw(st.binary(max_size=40)) + line[at:]
    if how == "garbage":
        return draw(st.binary(min_size=1, max_size=200)).replace(b"\n", b" ")
    if how == "latin1":
        return line.decode().encode("latin-1", errors="replace")
    if how == "utf16":
        return line.decode().encode("utf-16")
    if how == "digits":
        return bytes(b if not (48 <= b <= 57) else draw(st.sampled_from(b"0123456789-x")) for b in line)
    return line


def _run(path: Path) -> ParseStats:
    stats = ParseStats()
    checks = check_observations(parse_paths([path], stats))
    for check in checks:
        # the bookkeeping a report is built from stays consistent on any input: every flag counted, the
        # first MAX_FINDINGS kept, each naming its check, each with a witness line
        assert len(check.findings) == min(check.finding_count, MAX_FINDINGS), check.name
        assert all(f.check == check.name and f.witnesses for f in check.findings), check.name
    assert len(stats.problems) == min(stats.problem_count, MAX_PROBLEMS)
    return stats


def _budget() -> int:
    explicit = os.environ.get("KCONFORM_LOGS_FUZZ")
    if explicit:
        return int(explicit)
    return 60


@settings(
    max_examples=_budget(),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(mutated_line(), min_size=1, max_size=30))
def test_mutated_inputs_never_crash(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "fuzz.log"
    path.write_bytes(b"\n".join(lines) + b"\n")
    stats = _run(path)
    for problem in stats.problems:
        assert problem.file == str(path) and problem.line >= 1
    for message in stats.unreadable:  # bytes that look like a gzip stream but are not one
        assert message.startswith(f"{path}")


@pytest.mark.slow
@settings(
    max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(st.lists(mutated_line(), min_size=1, max_size=60))
def test_mutated_inputs_never_crash_longer(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "fuzz.log"
    path.write_bytes(b"\n".join(lines) + b"\n")
    _run(path)


def test_enormous_lines_are_cut_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    head = b"[2020-01-01 00:00:00,000] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 "
    with path.open("wb") as f:
        f.write(head + b"x" * (8 * 1024 * 1024) + b"\n")
        f.write(b"baseOffset: 0 lastOffset: 0 count: 1 " + b"y" * (3 * MAX_LINE_BYTES) + b"\n")
        f.write(b"[2020-01-01 00:00:00,000] INFO " + b"q" * (MAX_LINE_BYTES - 200) + b" starts at leader epoch 1\n")
    tracemalloc.start()
    stats = _run(path)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert stats.read.cut_lines == 2 and stats.read.lines == 3
    assert peak < 4 * 1024 * 1024, peak


def test_witness_text_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    path.write_text(
        "[2020-01-01 00:00:00,000] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. "
        f"Leader: (highWatermark: 5, endOffset: 4). {'z' * 5000} (kafka.cluster.Partition)\n"
    )
    stats = ParseStats()
    (obs,) = list(parse_paths([path], stats))
    assert len(obs.text) <= TEXT_LIMIT


def test_fuzz_harness_log_damages_reach_the_command_line(tmp_path: Path) -> None:
    """The fuzz benchmark's ``logs`` kind (kconform.ci.fuzzing.log_mutation) makes each damage real
    collections show (lines cut where they stand, binary garbage blocks, mixed encodings, enormous
    lines with and without a line end); ``kconform logs check`` answers each with an exit code, no
    traceback."""
    import random

    from kconform.ci.fuzzing import log_mutation, run_case

    data = (FIXTURES / "server-4.1-kraft-isr-updates.log").read_bytes()
    wanted = {"truncated lines", "binary garbage", "mixed encodings", "an enormous line", "no line end"}
    seen: set[str] = set()
    rng = random.Random(7)
    for case in range(400):
        out, what = log_mutation(rng, data)
        kinds = {w for w in wanted if what.startswith(w) or (w == "no line end" and w in what)}
        if not kinds - seen:
            continue
        seen |= kinds
        path = tmp_path / f"case-{case}.log"
        path.write_bytes(out)
        outcome = run_case(["logs", "check", str(path), "--out", str(tmp_path / f"out-{case}")], hang_s=60)
        assert not outcome.traceback and not outcome.hang, (what, outcome.stderr[-500:])
        assert outcome.code in (0, 1, 2), (what, outcome.code)
        if seen == wanted:
            break
    assert seen == wanted


def test_fuzz_logs_library_pass_agrees_with_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 10^5-case logs fuzz (kconform.ci.fuzz_logs) runs each damaged log through the library
    pass of ``logs check`` and samples through the command line in process and in a subprocess:
    their exit codes agree, and a crash in the library pass is counted as a traceback."""
    from kconform.ci import fuzz_logs
    from kconform.ci.fuzzing import KINDS

    samples = KINDS["logs"].samples(tmp_path / "samples")
    tally = fuzz_logs.fuzz_logs(samples, 24, 5, tmp_path / "scratch", cli_every=4, subprocess_every=24)
    assert tally.cases == 24 and tally.cli_cases == 6 and tally.subprocess_cases == 1
    assert not tally.tracebacks and not tally.hangs and not tally.disagreements, tally.disagreements
    assert sum(tally.exits.values()) == 24

    def crash(path: Path, work: Path) -> int:
        raise KeyError("planted")

    monkeypatch.setattr(fuzz_logs, "library_case", crash)
    broken = fuzz_logs.fuzz_logs(samples, 3, 5, tmp_path / "scratch2", cli_every=0, subprocess_every=0)
    assert len(broken.tracebacks) == 3 and "KeyError" in broken.tracebacks[0]


def test_state_is_bounded_by_structure_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What grows with the input is capped with a counted overflow (sizes asserted, not RSS): a
    check's state tables stop at MAX_KEYS keys (here lowered to 50) and count the rest, never raising
    a finding for them; unknown loggers are counted by name up to MAX_LOGGERS and together beyond;
    an enormous line is cut at MAX_LINE_BYTES and an observation's text at TEXT_LIMIT."""
    from kconform.traces.logs.checks import base
    from kconform.traces.logs.parse import MAX_LOGGERS
    from kconform.traces.logs.run import check_paths

    monkeypatch.setattr(base, "MAX_KEYS", 50)
    path = tmp_path / "server.log"
    with path.open("w") as f:
        for p in range(1_000):  # 1,000 partitions a broker leads, twice each (epochs 0 then 1)
            for epoch in (0, 1):
                f.write(
                    f"[2020-01-01 00:00:00,000] INFO [Partition t{p}-0 broker=1] t{p}-0 starts at Leader Epoch "
                    f"{epoch} from offset 0. Previous Leader Epoch was: {epoch - 1} (kafka.cluster.Partition)\n"
                )
        for n in range(3 * MAX_LOGGERS):  # a log with many distinct loggers the suite does not know
            f.write(f"[2020-01-01 00:00:00,000] INFO something (com.example.Logger{n})\n")
        f.write("[2020-01-01 00:00:00,000] INFO [Partition big-0 broker=1] " + "x" * (4 * MAX_LINE_BYTES) + "\n")
    run = check_paths([path])
    per_broker = next(c for c in run.checks if c.name == "leader-epochs-increase-per-broker")
    assert isinstance(per_broker, base.KeyedCheck)
    assert len(per_broker.last) == 50 and per_broker.overflow == 2 * 1_000 - 2 * 50
    assert per_broker.judged == 50 and not per_broker.findings
    assert any("not remembered" in note for note in per_broker.notes)
    one_leader = next(c for c in run.checks if c.name == "one-leader-per-leader-epoch")
    assert one_leader.overflow == 2 * (1_000 - 50) and not one_leader.findings
    assert len(one_leader._tables) == 2  # its two tables, none made per line
    assert len(run.stats.unknown) == MAX_LOGGERS + 1
    assert sum(run.stats.unknown.values()) == 3 * MAX_LOGGERS + 1  # + the cut line, a record no parser knows
    assert run.stats.read.cut_lines == 1
    for check in run.checks:
        assert not check.findings, check.name


def test_capped_table_counts_what_it_drops() -> None:
    from kconform.traces.logs.checks.base import Table

    table: Table[str, set[int]] = Table(2)
    table["a"] = {1}
    table.setdefault("b", set()).add(2)
    table.setdefault("c", set()).add(3)  # full: not stored, counted
    table["c"] = {4}
    table["a"] = {5}  # an existing key is updated
    assert dict(table) == {"a": {5}, "b": {2}} and table.overflow == 2
