"""The code base stays typed (mypy --strict over the package and the tests), ruff-clean and ruff-formatted,
and packaged completely: what CI checks besides the tests (the import layers: tests/test_layers.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("model", "impl", "conformance", "traces", "ci")
"""The top-level folders installed under ``kconform`` (pyproject's package-dir)."""
STRICT_INSTALL = ".venv/bin/pip install -e '.[dev]' --config-settings editable_mode=strict"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def _pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def test_ruff_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_formatted() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean_over_the_package_and_the_tests() -> None:
    """``mypy`` as configured (pyproject: strict, the five folders and tests/). It resolves ``kconform`` as an
    installed, typed package; setuptools' default (lenient) editable install hides the folder mapping in an
    import hook no static tool reads, so the test names the install that works instead of failing obscurely."""
    spec = importlib.util.find_spec("kconform.model")
    assert spec is not None and spec.origin is not None
    origin = Path(spec.origin)
    assert origin.parent != ROOT / "model", (
        f"kconform.model is imported from {origin}: a lenient editable install, which mypy cannot resolve. "
        f"Reinstall with: {STRICT_INSTALL}"
    )
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues found in" in result.stdout and " source files" in result.stdout, result.stdout


def test_every_source_folder_is_a_listed_package() -> None:
    """A folder of modules missing from pyproject's ``packages`` is left out of a wheel (and of a strict editable
    install) while tests run green from the source tree: conformance/yardstick was, until this test."""
    setuptools = _pyproject()["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = {
        "kconform." + ".".join(p.parent.relative_to(ROOT).parts)
        for top in FOLDERS
        for p in (ROOT / top).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert folders - listed == set(), f"add to pyproject [tool.setuptools] packages: {sorted(folders - listed)}"
    assert listed - folders == set(), f"listed packages with no module: {sorted(listed - folders)}"


def test_every_folder_is_marked_typed() -> None:
    """PEP 561: each top-level folder carries py.typed and ships it, so mypy (and a user's) reads its types."""
    data = _pyproject()["tool"]["setuptools"]["package-data"]
    for top in FOLDERS:
        assert (ROOT / top / "py.typed").is_file(), top
        assert "py.typed" in data.get(f"kconform.{top}", []), top
