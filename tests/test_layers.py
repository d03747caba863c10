"""Dependencies flow one way: import-linter's contracts (pyproject.toml, [tool.importlinter]) hold.

``lint-imports`` reads the contracts from pyproject.toml and checks them against the import graph of
the installed ``kconform`` packages; CI fails here when an import crosses a layer. The near-miss
tests run the same configuration over a small stand-in tree, once clean and once with a crossing
import, so a contract that could never break (a typo in a module name, a layer order that allows
everything) fails here too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# The stand-in tree: every module a contract names, importing downwards only.
_CLEAN_TREE: dict[str, str] = {
    "kconform/model/__init__.py": "",
    "kconform/model/state.py": "",
    "kconform/impl/__init__.py": "",
    "kconform/impl/log.py": "from kconform.model import state\n",
    "kconform/traces/__init__.py": "",
    "kconform/traces/events.py": "from kconform.model import state\n",
    "kconform/traces/operations.py": "",
    "kconform/traces/tools.py": "from kconform.conformance import judge\n",
    "kconform/traces/mine/__init__.py": "",
    "kconform/traces/mine/invariants.py": "from kconform.traces import tools\n",
    "kconform/traces/replay.py": "from kconform.conformance import judge\n",
    "kconform/traces/generate.py": "from kconform.conformance import judge\n",
    "kconform/traces/oracle.py": "from kconform.conformance import judge\n",
    "kconform/conformance/__init__.py": "",
    "kconform/conformance/judge.py": "from kconform.impl import log\nfrom kconform.traces import events\n",
    "kconform/ci/__init__.py": "",
    "kconform/ci/cli.py": "from kconform.conformance import judge\n",
}


def _lint_imports(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [str(LINT_IMPORTS), str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _tree(tmp_path: Path, extra: dict[str, str]) -> Path:
    for rel, text in {**_CLEAN_TREE, **extra}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_every_import_contract_is_kept() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_stand_in_tree_that_imports_downwards_keeps_the_contracts(tmp_path: Path) -> None:
    root = _tree(tmp_path, {})
    result = _lint_imports(root, pythonpath=root)
    assert result.returncode == 0, result.stdout + result.stderr


def test_model_importing_the_trace_schema_breaks_a_contract(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"kconform/model/state.py": "from kconform.traces import operations\n"})
    result = _lint_imports(root, pythonpath=root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "The model imports nothing else of the project BROKEN" in result.stdout


def test_reference_importing_the_judge_breaks_the_layers(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"kconform/impl/log.py": "from kconform.conformance import judge\n"})
    result = _lint_imports(root, pythonpath=root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "kconform.impl.log -> kconform.conformance.judge" in result.stdout


def test_event_schema_importing_the_judge_breaks_a_contract(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"kconform/traces/events.py": "from kconform.conformance import judge\n"})
    result = _lint_imports(root, pythonpath=root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "kconform.traces.events -> kconform.conformance.judge" in result.stdout


def test_the_judge_importing_the_miner_breaks_a_contract(tmp_path: Path) -> None:
    """The miner's invariants register through the trace tools (traces.tools.SliceTools.miner), a
    layer above the judge: a slice's judge or reference naming them crosses it."""
    root = _tree(tmp_path, {"kconform/conformance/judge.py": "from kconform.traces.mine import invariants\n"})
    result = _lint_imports(root, pythonpath=root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "do not reach the trace tools above them" in result.stdout and "BROKEN" in result.stdout
