"""What a generating process imports (traces.tools.generation_for, the lazy package ``__init__``s):
the built-in slices' generation parts are the very objects their registered ``Slice`` and
``SliceTools`` hold, and generating a corpus of any slice imports neither Hypothesis (the gate
machines), networkx (the txn invariants), rich, pandas, pyarrow.compute (the writer places its
columns with numpy), nor another slice's reference cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kconform.conformance.registry import get
from kconform.model.config import ReplicationConfig
from kconform.model.configs import AnyConfig
from kconform.model.fetch_config import FetchConfig
from kconform.model.txn_config import TxnConfig
from kconform.traces.tools import BUILTIN_GENERATION, generation_for, tools_of

CONFIGS: dict[str, AnyConfig] = {"replication": ReplicationConfig(), "txn": TxnConfig(), "fetch": FetchConfig()}


@pytest.mark.parametrize("name", sorted(BUILTIN_GENERATION))
def test_generation_parts_are_the_registered_slice_and_tools(name: str) -> None:
    parts = generation_for(CONFIGS[name])
    tools = tools_of(name)
    assert parts.make_reference is get(name).make_reference
    assert parts.make_workload is tools.make_workload
    assert parts.workload_module == tools.workload_module


UNWANTED = (
    "hypothesis",
    "networkx",
    "rich",
    "pandas",
    "pyarrow.compute",
    "kconform.conformance.machine",
    "kconform.traces.counterexample",
)
OTHER_CLUSTERS = {
    "replication": ("kconform.impl.txn.cluster", "kconform.impl.fetch.cluster"),
    "txn": ("kconform.impl.replication.cluster", "kconform.impl.fetch.cluster"),
    "fetch": ("kconform.impl.replication.cluster", "kconform.impl.txn.cluster"),
}


@pytest.mark.parametrize("name", ["replication", "txn", "fetch"])
def test_generating_a_corpus_imports_no_gate_machinery(name: str, tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from kconform.model.configs import config_from_json\n"
        "from kconform.traces.generate import Plan, generate\n"
        f"config = config_from_json(json.loads({json.dumps(CONFIGS[name].to_json())!r}))\n"
        f"generate({str(tmp_path / 'c')!r}, Plan(events=600, seed=1, trace_events=300, config=config))\n"
        f"print(json.dumps([m for m in {[*UNWANTED, *OTHER_CLUSTERS[name]]!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == []


def test_the_check_sees_an_import_it_forbids(tmp_path: Path) -> None:
    """Near miss: the same probe reports Hypothesis once the gate machine is imported."""
    code = (
        "import json, sys\n"
        "import kconform.conformance.replication.slice\n"
        f"print(json.dumps([m for m in {list(UNWANTED)!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert "hypothesis" in json.loads(out.stdout)
