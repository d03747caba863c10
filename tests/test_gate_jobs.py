"""``kconform gate --slice all --jobs N``: configurations in worker processes (ci/gate_jobs.py).

The gate itself is replaced by stand-ins (tests/gate_jobs_fakes.py) so that these tests check the
orchestration in seconds: output in order and whole, the same table and exit code as the
sequential run, a failing or dying worker reported by name without losing the others, and every
worker torn down on Ctrl-C, SIGTERM and the parent's death. The real gate through the command line
is tests/test_txn_gate.py's ``--slice all`` test.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from kconform.ci.cli import main
from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION
from kconform.ci.gate import run_all_gates
from kconform.ci.gate_jobs import default_jobs
from kconform.ci.options import GateOptions
from kconform.model.config import ReplicationConfig
from tests.gate_jobs_fakes import fake_gate

ROOT = Path(__file__).resolve().parent.parent
BOUND_S = 90.0
"""The longest a test waits for a process to start or go (generous: the machine is shared, and a
loaded one took over 20 s to start a parent and its two workers)."""


def _parts(root: Path, *names: str) -> list[tuple[str, GateOptions]]:
    return [(n, GateOptions(config=ReplicationConfig(), seed=3, out=root / n, progress=False)) for n in names]


def _run(parts: list[tuple[str, GateOptions]], jobs: int) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):  # as the command line's console, standard output
        code = run_all_gates(parts, Console(file=buffer, width=100), jobs=jobs, gate=fake_gate)
    return code, buffer.getvalue()


def _without_times(text: str, root: Path) -> str:
    text = text.replace(str(root), "ROOT")
    text = re.sub(r"\n\d+ configurations in \d+ worker processes: [\d.]+ s wall\n", "\n", text)
    return re.sub(r"│ +[\d.]+ │", "│ T │", text)


def test_workers_print_each_part_whole_in_order_with_the_sequential_table(tmp_path: Path) -> None:
    names = ("slow-pass", "fail", "pass")  # the first part finishes last
    code_seq, seq = _run(_parts(tmp_path / "seq", *names), jobs=1)
    code_par, par = _run(_parts(tmp_path / "par", *names), jobs=3)
    assert code_seq == code_par == EXIT_VIOLATION
    assert _without_times(par, tmp_path / "par") == _without_times(seq, tmp_path / "seq")
    assert par.index("gate of slow-pass") < par.index("plain print of slow-pass") < par.index("gate of fail")
    assert "3 configurations in 3 worker processes" in par
    for name in names:  # each worker wrote into its own part's directory
        assert (tmp_path / "par" / name / "pid").read_text(encoding="utf-8") != str(os.getpid())


def test_a_worker_that_raises_or_dies_is_an_error_by_name_and_the_others_keep_their_verdicts(tmp_path: Path) -> None:
    code, out = _run(_parts(tmp_path, "pass", "raise", "die", "fail"), jobs=2)
    assert code == EXIT_ERROR  # an error outranks the violation of "fail", as in the sequential run
    assert "the raise gate failed: RuntimeError: raise broke" in out
    assert "gate of raise" in out  # what it printed before raising is kept
    assert re.search(r"the die gate failed: the die gate's worker ended without a verdict \(exit code 9\)", out)
    verdicts = dict(re.findall(r"│ (\w+) +│ (PASS|FAIL|ERROR) ", out))
    assert verdicts == {"pass": "PASS", "raise": "ERROR", "die": "ERROR", "fail": "FAIL"}


def test_one_job_runs_in_this_process(tmp_path: Path) -> None:
    code, out = _run(_parts(tmp_path, "pass", "pass2"), jobs=1)
    assert code == EXIT_PASS
    assert (tmp_path / "pass" / "pid").read_text(encoding="utf-8") == str(os.getpid())
    assert "worker processes" not in out


def test_jobs_default_and_checks() -> None:
    assert default_jobs(4) == min(os.cpu_count() or 1, 4)
    assert default_jobs(1) == 1
    assert main(["gate", "--jobs", "2", "--examples", "1"]) == EXIT_ERROR  # one slice is one campaign
    assert main(["gate", "--slice", "all", "--jobs", "0"]) == EXIT_ERROR


# The parent stands for `kconform gate` under a terminal, where Ctrl-C raises KeyboardInterrupt. A
# process started in the background by a shell without job control (`cmd &`, `nohup cmd &`, some CI
# runners) inherits SIGINT ignored, and Python then keeps ignoring it: the parent would never see
# the test's SIGINT. So it restores Python's handler first.
_HANGING_PARENT = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
import sys
from pathlib import Path
from kconform.ci.gate import run_all_gates
from kconform.ci.options import GateOptions
from kconform.model.config import ReplicationConfig
from tests.gate_jobs_fakes import fake_gate
root = Path(sys.argv[1])
parts = [(n, GateOptions(config=ReplicationConfig(), out=root / n, progress=False)) for n in ("a-hang", "b-hang")]
try:
    run_all_gates(parts, jobs=2, gate=fake_gate)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(2)
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _start_hanging_parent(tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    parent = subprocess.Popen(
        [sys.executable, "-c", _HANGING_PARENT, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    files = [tmp_path / n / "pid" for n in ("a-hang", "b-hang")]
    deadline = time.monotonic() + BOUND_S
    while not all(f.exists() and f.read_text(encoding="utf-8") for f in files):
        if time.monotonic() > deadline or parent.poll() is not None:
            parent.kill()
            _out, err = parent.communicate(timeout=BOUND_S)
            pytest.fail(f"the workers did not start (parent exit {parent.returncode}): {err[-2000:]}")
        time.sleep(0.05)
    return parent, [int(f.read_text(encoding="utf-8")) for f in files]


def _gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + BOUND_S
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            for p in pids:
                if _alive(p):
                    os.kill(p, signal.SIGKILL)
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_tear_every_worker_down(tmp_path: Path, sig: signal.Signals) -> None:
    parent, workers = _start_hanging_parent(tmp_path)
    try:
        parent.send_signal(sig)
        out, _err = parent.communicate(timeout=BOUND_S)
    finally:
        parent.kill()
    assert parent.returncode == 2 and "interrupted" in out
    assert _gone(workers), "a worker outlived its parent's teardown"


def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    parent, workers = _start_hanging_parent(tmp_path)
    parent.kill()  # SIGKILL: the parent tears nothing down
    parent.communicate(timeout=BOUND_S)
    assert _gone(workers), "a worker outlived its killed parent"
