"""The corpus writer's columns (traces.arrow_build, traces.corpus.TableBuilder): the arrays built
from buffers equal ``pa.array``'s, rows come out in the order added, where the builder flushes
changes no byte, rows out of order are refused, and writing a corpus never imports pandas (nor
pyarrow.compute: tests/test_generation_imports.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from kconform.model.txn_config import TxnConfig
from kconform.traces import arrow_build
from kconform.traces.corpus import TableBuilder, arrow_type
from kconform.traces.events import HwAdvanced
from kconform.traces.generate import Plan, generate
from kconform.traces.schema import columns, struct_class, struct_fields

SAMPLES: dict[str, list[Any]] = {
    "int": [0, -1, 2**62, 7],
    "bool": [True, False, False, True],
    "str": ["", "t-0", "é", "abort"],
    "tuple[int, ...]": [(), (1, 2), (3,), ()],
    "tuple[str, ...]": [("a",), (), ("b", "ü"), ()],
}


def _struct(cls: type[Any], i: int) -> Any:
    values = {"int": i * 3 - 1, "bool": i % 2 == 1, "str": f"s{i}"}
    return cls(**{name: values[t] for name, t in struct_fields(cls)})


def _samples(typ: str) -> tuple[list[Any], list[Any]]:
    """Four values of a column type: as an event holds them, and as ``pa.array`` takes them."""
    cls = struct_class(typ)
    if cls is None:
        held = SAMPLES[typ]
        return held, [list(v) if isinstance(v, tuple) else v for v in held]
    held = [(), (_struct(cls, 1), _struct(cls, 2)), (_struct(cls, 3),), ()]
    return held, [[dataclasses.asdict(x) for x in v] for v in held]


@pytest.mark.parametrize("typ", sorted({c.type for c in columns()}))
def test_each_column_type_is_built_as_pa_array_builds_it(typ: str) -> None:
    arrow = arrow_type(typ)
    build = arrow_build.builder(arrow)
    held, plain = _samples(typ)
    assert build(held, None).equals(pa.array(plain, arrow))
    mask = bytearray([1, 1, 0, 1])
    dense = [v if m else arrow_build.empty(arrow) for v, m in zip(held, mask, strict=True)]
    built = build(dense, arrow_build.validity(mask))
    built.validate(full=True)
    assert built.equals(pa.array([v if m else None for v, m in zip(plain, mask, strict=True)], arrow))


@pytest.mark.parametrize("typ", sorted({c.type for c in columns()}))
def test_each_column_type_is_placed_as_pa_array_builds_it(typ: str) -> None:
    """A placed builder puts the values given (here in reverse) in the rows the placement names,
    null in the others: the same array as ``pa.array`` of the rows in order."""
    arrow = arrow_type(typ)
    held, plain = _samples(typ)
    mask = np.array([True, True, False, True])
    given = [held[3], held[1], held[0]]  # the rows that have a value, in another order
    at = arrow_build.Placement(np.array([2, 1, 0]), mask, arrow_build.validity(bytearray(mask.astype(np.uint8))))
    built = arrow_build.placed(arrow)(given, at)
    built.validate(full=True)
    assert built.equals(pa.array([v if m else None for v, m in zip(plain, mask, strict=True)], arrow))


def test_rows_come_out_in_the_order_added_and_out_of_order_is_refused() -> None:
    builder = TableBuilder()
    builder.add_step(0, 0, "{}")
    assert builder.add_events(0, 0, 0, [HwAdvanced(1, "t-0", 4), HwAdvanced(2, "t-0", 5)]) == 2
    with pytest.raises(ValueError, match=r"event \(0, 1\) added after \(0, 1\)"):
        builder.add_events(0, 1, 0, [HwAdvanced(1, "t-0", 6)])
    with pytest.raises(ValueError, match=r"step \(0, 0\) added after"):
        builder.add_step(0, 0, "{}")
    events, steps = builder.tables()
    assert events.column("hw").to_pylist() == [4, 5]
    assert events.column("kind").to_pylist() == ["hw_advanced", "hw_advanced"]
    assert events.column("entries").null_count == 2
    assert steps.num_rows == 1


def _digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.parquet"))
    }


def test_where_the_builder_flushes_changes_no_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = Plan(events=3_000, seed=4, trace_events=1_000, config=TxnConfig())
    generate(tmp_path / "whole", plan)
    monkeypatch.setattr(TableBuilder, "FLUSH_ROWS", 97)
    generate(tmp_path / "flushed", plan)
    assert _digests(tmp_path / "whole") == _digests(tmp_path / "flushed")


def test_writing_a_corpus_never_imports_pandas(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from kconform.traces.generate import Plan, generate\n"
        f"generate({str(tmp_path / 'c')!r}, Plan(events=1_500, seed=1, trace_events=500))\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"
