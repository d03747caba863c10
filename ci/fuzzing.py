"""Fuzzing every input kind through the real command line: the harness the fast tests and the
benchmark (``python -m kconform.ci.benchmarks.fuzz``) share.

An input kind is one ``InputKind`` registration: a generator of valid samples, the mutators that
damage them (each says whether its result must be refused), and the commands to run on a damaged
copy. ``run_case`` runs one command in-process and classifies the outcome: its exit code, a Python
traceback (an "internal error" or an exception escaping ``kconform.ci.cli.main``), a hang (a
watchdog past ``hang_s``), and whether a damaged input was let through. A new input kind (probe
histories, Kafka logs) joins by adding one ``InputKind`` to ``KINDS``; served traces whose
``wire_request`` texts are damaged (kconform serve) are the ``wire`` kind.

Mutations:

- byte-wise: flips, truncation, deleted / duplicated / swapped lines, binary junk, a huge line,
  deep nesting, invalid UTF-8, a byte-order mark, CRLF line ends;
- schema-aware: a value anywhere replaced by a wrong type, a boundary value (0, -1, int16 / int32 /
  int64 limits and one past them), another id, a float for an integer; keys deleted, added,
  duplicated; events moved between steps; steps reordered, deleted, duplicated; ``boot`` moved;
  verdicts emptied.

Whether a mutation damaged the content is decided by the mutator, not by kconform: a byte-wise
result that no longer parses as JSON Lines, a wrong type or key, or a value past Kafka's limits is
"must refuse" (exit 2 expected); a plausible value change may be judged either way (0, 1 or 2); a
re-encoding that keeps every value must give the original's exit code. A corpus is damaged by any
changed byte of a part file or any changed value of its manifest (both are hashed), so every
corpus mutation that changes content must be refused.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random
import shutil
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MUST_REFUSE = "must-refuse"
PLAUSIBLE = "plausible"
REENCODED = "re-encoded"

INT_BOUNDARIES: tuple[int, ...] = (
    0,
    -1,
    -2,
    1,
    2**15 - 1,
    2**15,
    2**31 - 1,
    2**31,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    10**12,
    10**30,
)


@dataclass(frozen=True)
class Mutation:
    """A damaged copy: what was done, and what kconform must answer (MUST_REFUSE: exit 2;
    PLAUSIBLE: any verdict, no crash; REENCODED: the original's exit code)."""

    what: str
    expect: str


@dataclass(frozen=True)
class InputKind:
    """One input kind: ``samples(dir)`` writes valid samples and returns their paths (files or
    directories); ``mutate(rng, sample, dst)`` writes a damaged copy of ``sample`` to ``dst`` and
    says what it did; ``commands`` turn an input path (and a scratch directory) into argv for
    ``kconform``; a clean sample's exit codes are in ``clean_exits``."""

    name: str
    samples: Callable[[Path], list[Path]]
    mutate: Callable[[random.Random, Path, Path], Mutation]
    commands: tuple[Callable[[Path, Path], list[str]], ...]
    clean_exits: frozenset[int] = frozenset({0, 1})


class Hang(BaseException):
    """Raised in the main thread by the watchdog: the case ran past its time (not an Exception, so
    nothing in kconform catches it)."""


class EngineReached(BaseException):
    """Raised by the engine stubs of the CLI-options kind: the options were accepted."""


@dataclass
class Outcome:
    """One case: the exit code (None on a hang or an escaped exception), a traceback, the time."""

    code: int | None
    traceback: bool
    hang: bool
    seconds: float
    stderr: str


@contextlib.contextmanager
def _watchdog(seconds: float) -> Iterator[None]:
    """Raise Hang in the main thread after ``seconds`` (SIGUSR1, so it never disturbs SIGALRM,
    which replay's own budget uses)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(signum: int, frame: object) -> None:
        raise Hang()

    previous = signal.signal(signal.SIGUSR1, fire)
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(seconds, lambda: signal.pthread_kill(main, signal.SIGUSR1))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)


def run_case(argv: list[str], hang_s: float = 60.0) -> Outcome:
    """Run ``kconform argv`` in this process, output captured; classify the outcome."""
    from kconform.ci import cli

    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    code: int | None = None
    escaped = hang = False
    try:
        with _watchdog(hang_s), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except EngineReached:
                code = 0
    except Hang:
        hang = True
    except Exception as e:  # escaped main(): a traceback by definition
        escaped = True
        err.write(f"escaped: {type(e).__name__}: {e}")
    text = err.getvalue()
    traceback = escaped or "internal error" in text or "Traceback (most recent call last)" in text
    return Outcome(code, traceback, hang, time.perf_counter() - started, text)


# --------------------------------------------------------------------------------------------
# JSON Lines mutators
# --------------------------------------------------------------------------------------------


def _lines_equal(a: bytes, b: bytes) -> bool | None:
    """Whether two JSON Lines texts hold the same values line by line (None: ``b`` is not JSON
    Lines, under Python's lenient reader)."""
    try:
        la = [json.loads(x) for x in a.decode("utf-8").split("\n") if x.strip()]
        lb = [json.loads(x) for x in b.decode("utf-8").split("\n") if x.strip()]
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not all(isinstance(x, dict) for x in lb):
        return None
    return la == lb


def byte_mutation(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One byte-wise damage of a JSON Lines file."""
    lines = data.split(b"\n")
    body = [x for x in lines if x]
    choice = rng.randrange(12)
    if choice == 0:
        out = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(out))
            out[i] = rng.randrange(256)
        return bytes(out), "flipped bytes"
    if choice == 1:
        return data[: rng.randrange(len(data))], "truncated"
    if choice == 2 and len(body) > 1:
        i = rng.randrange(len(body))
        return b"\n".join(body[:i] + body[i + 1 :]) + b"\n", "deleted a line"
    if choice == 3:
        i = rng.randrange(len(body))
        return b"\n".join(body[: i + 1] + body[i:]) + b"\n", "duplicated a line"
    if choice == 4 and len(body) > 2:
        i, j = sorted(rng.sample(range(len(body)), 2))
        body[i], body[j] = body[j], body[i]
        return b"\n".join(body) + b"\n", "swapped two lines"
    if choice == 5:
        i = rng.randrange(len(data) + 1)
        return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))) + data[i:], "binary junk"
    if choice == 6:
        size = rng.choice((10_000, 1_000_000))
        return data + b'{"step": 999, "pad": "' + b"x" * size + b'"}\n', "a huge line"
    if choice == 7:
        depth = rng.choice((100, 10_000, 200_000))
        i = rng.randrange(len(body))
        body[i] = b"[" * depth + b"]" * depth
        return b"\n".join(body) + b"\n", "deep nesting"
    if choice == 8:
        i = rng.randrange(len(data))
        return data[:i] + rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80")) + data[i:], "invalid UTF-8"
    if choice == 9:
        return b"\xef\xbb\xbf" + data, "a byte-order mark"
    if choice == 10:
        return data.replace(b"\n", b"\r\n"), "CRLF line ends"
    digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
    out = bytearray(data)
    i = rng.choice(digits)
    out[i] = 48 + (out[i] - 48 + rng.randint(1, 9)) % 10
    return bytes(out), "changed a digit"


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    _get(value, path[:-1])[path[-1]] = new


def _wrong_type(rng: random.Random, old: Any) -> Any:
    options: list[Any] = ["x", 1.5, None, True, [], {}, [1], {"a": 1}, "1"]
    if isinstance(old, int) and not isinstance(old, bool):
        options.append(float(old))
    if isinstance(old, bool):
        options.extend((0, 1))
    return rng.choice([o for o in options if type(o) is not type(old)])


def schema_mutation(rng: random.Random, objs: list[dict[str, Any]]) -> tuple[list[Any], str, str, dict[int, str]]:
    """One structural damage of a JSON Lines file given as objects: (objects, what, expectation,
    raw replacements {line index: text} for damage JSON objects cannot express)."""
    objs = copy.deepcopy(objs)
    header, steps = objs[0], objs[1:]
    choice = rng.randrange(12)
    line = rng.randrange(len(objs))
    paths = [p for p in _paths(objs[line]) if p]
    if choice == 0 and paths:
        path = rng.choice(paths)
        _set(objs[line], path, _wrong_type(rng, _get(objs[line], path)))
        return objs, f"wrong type at line {line + 1} {path}", MUST_REFUSE, {}
    int_paths = [p for p in paths if type(_get(objs[line], p)) is int]
    if choice in (1, 2) and int_paths:
        path = rng.choice(int_paths)
        value = rng.choice(INT_BOUNDARIES) if choice == 1 else _get(objs[line], path) + rng.choice((-1, 1, 2, 7))
        _set(objs[line], path, value)
        expect = MUST_REFUSE if not -(2**63) <= value < 2**63 else PLAUSIBLE
        return objs, f"value {value} at line {line + 1} {path}", expect, {}
    dict_paths = [p for p in [(), *paths] if isinstance(_get(objs[line], p), dict)]
    if choice == 3:
        where = rng.choice(dict_paths)
        target = _get(objs[line], where)
        target[rng.choice(("extra", "nodee", "Kind", "_x"))] = rng.choice((0, "y", None))
        # a verdict keeps extra keys (the miner's finding, explore's informational search bounds)
        free = "verdict" in where
        return objs, f"an unknown key at line {line + 1} {where}", PLAUSIBLE if free else MUST_REFUSE, {}
    if choice == 4:
        where = rng.choice(dict_paths)
        target = _get(objs[line], where)
        if target:
            key = rng.choice(sorted(target))
            del target[key]
            optional = (
                key in ("init_events", "invariants")
                or "config" in where
                or (where[-1:] == ("verdict",) and key not in ("kind", "name", "message", "step"))
                or where[:2] == ("verdict", "bounds")  # explore's bounds: information, replay never reads them
            )
            return objs, f"{key!r} deleted at line {line + 1}", PLAUSIBLE if optional else MUST_REFUSE, {}
    if choice == 5:
        text = json.dumps(objs[line])
        key = rng.choice([k for k in objs[line]] or ["x"])
        raw = text[:-1] + f', "{key}": {json.dumps(objs[line].get(key, 0))}' + "}"
        return objs, f"a duplicated key {key!r} at line {line + 1}", MUST_REFUSE, {line: raw}
    if choice == 6 and len(steps) > 1:
        i, j = rng.sample(range(len(steps)), 2)
        if steps[i]["events"]:
            steps[j]["events"].append(steps[i]["events"].pop(rng.randrange(len(steps[i]["events"]))))
            return [header, *steps], f"an event moved from step {i} to step {j}", PLAUSIBLE, {}
    if choice == 7 and len(steps) > 1:
        i, j = rng.sample(range(len(steps)), 2)
        steps[i], steps[j] = steps[j], steps[i]
        return [header, *steps], f"steps {i} and {j} swapped", MUST_REFUSE, {}
    if choice == 8 and len(steps) > 1:
        i = rng.randrange(len(steps))
        steps[i:i] = [copy.deepcopy(steps[i])]
        for n, s in enumerate(steps):
            s["step"] = n
        expect = MUST_REFUSE if steps[i]["op"]["op"] == "boot" else PLAUSIBLE
        return [header, *steps], f"step {i} duplicated and renumbered", expect, {}
    if choice == 9 and len(steps) > 1:
        i = rng.randrange(len(steps))
        del steps[i]
        for n, s in enumerate(steps):
            s["step"] = n
        return [header, *steps], f"step {i} deleted and renumbered", PLAUSIBLE, {}
    if choice == 10:
        header["verdict"]["invariants"] = []
        return [header, *steps], "an empty invariants selection", MUST_REFUSE, {}
    if choice == 11 and steps and steps[0]["op"]["op"] == "boot" and len(steps) > 1:
        i = rng.randrange(1, len(steps))
        steps[0]["op"], steps[i]["op"] = steps[i]["op"], steps[0]["op"]
        return [header, *steps], f"boot moved to step {i}", MUST_REFUSE, {}
    # fall back: a plausible small change of one integer
    if int_paths:
        path = rng.choice(int_paths)
        _set(objs[line], path, _get(objs[line], path) + 1)
        return objs, f"+1 at line {line + 1} {path}", PLAUSIBLE, {}
    return objs, "unchanged", REENCODED, {}


def mutate_jsonl(rng: random.Random, sample: Path, dst: Path) -> Mutation:
    """Write a damaged copy of the JSON Lines ``sample`` to ``dst`` (byte-wise or schema-aware)."""
    data = sample.read_bytes()
    if rng.random() < 0.5:
        out, what = byte_mutation(rng, data)
        same = _lines_equal(data, out)
        expect = MUST_REFUSE if same is None else REENCODED if same else PLAUSIBLE
        if what in ("invalid UTF-8", "a byte-order mark", "a huge line", "duplicated a line", "swapped two lines"):
            expect = MUST_REFUSE if not same else REENCODED
        dst.write_bytes(out)
        return Mutation(f"bytes: {what}", expect)
    objs = [json.loads(x) for x in data.decode("utf-8").splitlines() if x.strip()]
    objs, what, expect, raw = schema_mutation(rng, objs)
    lines = [raw.get(i, json.dumps(o)) for i, o in enumerate(objs)]
    dst.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Mutation(f"schema: {what}", expect)


# --------------------------------------------------------------------------------------------
# Corpus mutators
# --------------------------------------------------------------------------------------------


def mutate_corpus(rng: random.Random, sample: Path, dst: Path) -> Mutation:
    """Copy the corpus ``sample`` to ``dst`` and damage one of its files (or add one)."""
    shutil.copytree(sample, dst)
    files = sorted(p for p in dst.rglob("*") if p.is_file())
    manifest = dst / "manifest.json"
    choice = rng.randrange(8)
    if choice == 0:
        stray = rng.choice([p.parent / f".{p.name}.crc" for p in files if p.suffix == ".parquet"])
        stray.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))))
        return Mutation(f"a stray file {stray.relative_to(dst)}", MUST_REFUSE)
    if choice == 1:
        obj = json.loads(manifest.read_text())
        text = json.dumps(obj, indent=rng.choice((None, 2, 4)))
        manifest.write_text(text)
        return Mutation("manifest re-encoded", REENCODED)
    if choice in (2, 3):
        obj = json.loads(manifest.read_text())
        objs, what, _expect, raw = schema_mutation_json(rng, obj)
        manifest.write_text(raw if raw is not None else json.dumps(objs))
        return Mutation(f"manifest: {what}", MUST_REFUSE)
    if choice == 4:
        part = rng.choice([p for p in files if p.suffix == ".parquet"])
        part.write_bytes(part.read_bytes()[: rng.randrange(part.stat().st_size)])
        return Mutation(f"{part.relative_to(dst)} truncated", MUST_REFUSE)
    if choice == 5:
        part = rng.choice([p for p in files if p.suffix == ".parquet"])
        data = bytearray(part.read_bytes())
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
        part.write_bytes(bytes(data))
        return Mutation(f"{part.relative_to(dst)} byte {i} flipped", MUST_REFUSE)
    if choice == 6:
        part = rng.choice([p for p in files if p.suffix == ".parquet"])
        part.unlink()
        return Mutation(f"{part.relative_to(dst)} deleted", MUST_REFUSE)
    return _rewrite_rows(rng, dst)


def schema_mutation_json(rng: random.Random, obj: dict[str, Any]) -> tuple[Any, str, str, str | None]:
    """One damage of a JSON document (the manifest): a changed value, type, key or duplicate."""
    obj = copy.deepcopy(obj)
    paths = [p for p in _paths(obj) if p]
    path = rng.choice(paths)
    old = _get(obj, path)
    choice = rng.randrange(4)
    if choice == 0:
        _set(obj, path, _wrong_type(rng, old))
        return obj, f"wrong type at {path}", MUST_REFUSE, None
    if choice == 1 and type(old) is int:
        _set(obj, path, rng.choice([b for b in INT_BOUNDARIES if b != old]))
        return obj, f"boundary value at {path}", MUST_REFUSE, None
    if choice == 2:
        if isinstance(obj["traces"], list) and obj["traces"] and rng.random() < 0.3:
            obj["traces"] = []
            return obj, "traces: []", MUST_REFUSE, None
        parent = _get(obj, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
            return obj, f"deleted {path}", MUST_REFUSE, None
    text = json.dumps(obj)
    return obj, "duplicated key 'format'", MUST_REFUSE, text[:-1] + ', "format": "kconform-corpus"}'


def _rewrite_rows(rng: random.Random, root: Path) -> Mutation:
    """Rewrite one events part file with a changed value (valid Parquet, so only the content hash
    or the row checks can see it): a null key, a relabelled trace, an out-of-enum outcome, an hw
    of 2^62, a duplicated column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = sorted((root / "events").rglob("*.parquet"))
    part = rng.choice(parts)
    table = pq.read_table(part)
    row = rng.randrange(table.num_rows)
    choice = rng.randrange(5)
    names = table.column_names

    def replaced(name: str, value: Any) -> pa.Table:
        values = table[name].to_pylist()
        values[row] = value
        field_ = table.schema.field(name)
        return table.set_column(names.index(name), pa.field(name, field_.type, True), pa.array(values, field_.type))

    if choice == 0:
        name = rng.choice(["trace", "pos", "node", "step"])
        new, what = replaced(name, None), f"null {name}"
    elif choice == 1:
        new, what = replaced("trace", 10**6 + rng.randrange(100)), "trace relabelled"
    elif choice == 2:
        new, what = replaced("kind", "martian"), "unknown kind"
    elif choice == 3:
        new, what = replaced("hw", rng.choice((2**62, -(2**63)))), "hw out of range"
    else:
        new, what = table.append_column(pa.field("hw", table.schema.field("hw").type), table["hw"]), "column hw twice"
    pq.write_table(new, part)
    return Mutation(f"{part.relative_to(root)} rewritten: {what}", MUST_REFUSE)


# --------------------------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------------------------


def _quiet(argv: list[str]) -> int:
    return run_case(argv, hang_s=600).code or 0


def counterexample_samples(root: Path) -> list[Path]:
    """Counterexample files written by ``gate`` (replication, with the log-start and follower-fetching
    operations too, and exactly-once) and ``explore``."""
    root.mkdir(parents=True, exist_ok=True)
    runs = [
        ["gate", "--examples", "20", "--seed", "1", "--mutant", "acks-all-no-wait", "--no-progress"],
        ["gate", "--examples", "20", "--seed", "1", "--mutant", "no-epoch-fencing", "--no-progress"],
        # delete_records_at and retention (log start moves, KIP-107), consume_replica (KIP-392): each
        # mutant's MUTANT_CONFIG turns its operations on
        ["gate", "--examples", "20", "--seed", "1", "--mutant", "kafka-9491-start-at-keeps-hw", "--no-progress"],
        ["gate", "--examples", "20", "--seed", "1", "--mutant", "reset-on-follower-out-of-range", "--no-progress"],
        ["gate", "--examples", "20", "--seed", "1", "--slice", "txn", "--mutant", "no-sequence-dedup", "--no-progress"],
        ["explore", "--set", "protocol=kip-101", "--replicas", "2", "--no-progress"],
    ]
    for i, argv in enumerate(runs):
        _quiet([*argv, "--out", str(root / f"run{i}")])
    return sorted(root.rglob("*.jsonl"))


def corpus_samples(root: Path) -> list[Path]:
    """Two small corpora (replication with a planted mutant, exactly-once TV2), two buckets each."""
    from kconform.model.txn_config import TxnConfig
    from kconform.traces.generate import Plan, generate

    root.mkdir(parents=True, exist_ok=True)
    out = []
    for name, plan in (
        ("repl", Plan(events=1_200, seed=3, trace_events=300, plant=(("acks-all-no-wait", 1),))),
        ("txn", Plan(events=1_200, seed=4, trace_events=300, config=TxnConfig(transaction_version=2))),
    ):
        generate(root / name, plan)
        out.append(root / name)
    return out


def trace_samples(root: Path) -> list[Path]:
    """Passing JSON Lines traces made by ``convert`` from small corpora of both slices."""
    out: list[Path] = []
    for corpus in corpus_samples(root / "corpora"):
        _quiet(["convert", str(corpus), str(root / corpus.name)])
        out.extend(sorted((root / corpus.name).glob("*.jsonl")))
    return out


# --------------------------------------------------------------------------------------------
# The wire-request kind: served traces (kconform serve) whose requests are damaged
# --------------------------------------------------------------------------------------------


def wire_samples(root: Path) -> list[Path]:
    """Served trace files (implementation "reference", ``wire_request`` steps) made in-process by a
    served cluster answering a producer's InitProducerId, Produce, a transaction and a Fetch."""
    from kconform.conformance.serve.cluster import ServedCluster, served_config
    from kconform.impl.txn import messages as msg

    root.mkdir(parents=True, exist_ok=True)
    out = []
    for brokers in (1, 3):
        cluster = ServedCluster(served_config(brokers), clock=lambda: 0.0)
        coordinator = cluster.sim.world.metadata.leaders[cluster.cfg.state_partition("txn-1")]
        init = cluster.send(0, 0, msg.InitPidRequest("", 1000, -1, -1))
        pid = getattr(init, "pid", -1)
        cluster.send(0, 0, msg.TxnProduceRequest("t-0", "", pid, 0, 0, (1, 2), False, -1))
        tx = cluster.send(1, coordinator, msg.InitPidRequest("txn-1", 60_000, -1, -1))
        tpid, tepoch = getattr(tx, "pid", -1), getattr(tx, "epoch", -1)
        cluster.send(1, coordinator, msg.AddPartitionsRequest("txn-1", tpid, tepoch, ("t-0",)))
        cluster.send(1, 0, msg.TxnProduceRequest("t-0", "txn-1", tpid, tepoch, 0, (3,), True, 1))
        cluster.send(1, coordinator, msg.EndTxnRequest("txn-1", tpid, tepoch, brokers == 1, 1))
        cluster.send(2, 0, msg.TxnFetchRequest("t-0", 0, True))
        out.append(cluster.write_trace(root / f"served-{brokers}.jsonl"))
    return out


def mutate_wire(rng: random.Random, sample: Path, dst: Path) -> Mutation:
    """Half the time a generic JSON Lines damage; else one ``wire_request``'s request text damaged:
    not JSON, an unknown request type, a field missing, mistyped, naming what the configuration
    lacks or out of Kafka's range (must refuse), or a plausible value change (any verdict)."""
    if rng.random() < 0.5:
        return mutate_jsonl(rng, sample, dst)
    objs = [json.loads(x) for x in sample.read_text(encoding="utf-8").splitlines() if x.strip()]
    wire = [o for o in objs[1:] if o["op"]["op"] == "wire_request"]
    op = rng.choice(wire)["op"]
    body = json.loads(op["request"])
    choice = rng.randrange(7)
    fields = sorted(k for k in body if k != "type")
    field = rng.choice(fields)
    expect = MUST_REFUSE
    if choice == 0:
        op["request"] = op["request"][: rng.randrange(len(op["request"]))]
        what = "request text truncated"
    elif choice == 1:
        body["type"] = rng.choice(("FetchRequest", "", "TxnProduceResponse", 7))
        what = f"request type {body['type']!r}"
    elif choice == 2:
        del body[field]
        what = f"request field {field!r} deleted"
    elif choice == 3:
        body[field] = _wrong_type(rng, body[field])
        what = f"request field {field!r} of a wrong type"
    elif choice == 4 and any(k in body for k in ("partition", "txn_id", "group")):
        key = next(k for k in ("partition", "txn_id", "group") if k in body)
        body[key] = rng.choice(("t-99", "nope", "__consumer_offsets-99"))
        what = f"request {key} not in the configuration"
    elif choice == 5 and any(isinstance(body[k], int) and not isinstance(body[k], bool) for k in fields):
        key = rng.choice([k for k in fields if isinstance(body[k], int) and not isinstance(body[k], bool)])
        body[key] = rng.choice((2**63, -(2**63) - 1))
        what = f"request {key} = {body[key]}"
    else:
        ints = [k for k in fields if isinstance(body[k], int) and not isinstance(body[k], bool) and body[k] >= 0]
        bumped = rng.choice(ints) if ints else None
        if bumped is not None:
            body[bumped] += 1
        what, expect = f"request {bumped} + 1", PLAUSIBLE
    if choice != 0:
        op["request"] = json.dumps(body)
    dst.write_text("\n".join(json.dumps(o) for o in objs) + "\n", encoding="utf-8")
    return Mutation(f"wire: {what}", expect)


# --------------------------------------------------------------------------------------------
# The command-line options kind: argv built from the parser, every engine stubbed
# --------------------------------------------------------------------------------------------

OPTION_VALUES: tuple[str, ...] = (
    "0",
    "1",
    "-1",
    "7",
    "2147483648",
    "9223372036854775808",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "",
    " ",
    "x",
    "all",
    "txn",
    "replication",
    "kip-101",
    "=",
    "a=b",
    "min.insync.replicas=9",
    "replicas=1000000000000",
    "protocol=nope",
    "slice=txn",
    "transactional_ids=[]",
    "state_log_partitions=2147483647",
    "x=" + "[" * 5000,
    '{"a":1,"a":2}',
    "\u00e9\u00e8",
    "\x00",
    "/dev/null",
    "/nonexistent/dir/file",
    "local[2]",
    "spark.driver.memory=1g",
)


def stub_engines() -> Callable[[], None]:
    """Replace every engine the command line starts by a stub raising EngineReached; returns the
    function that puts them back."""
    from kconform.ci import cli, serve
    from kconform.traces import generate
    from kconform.traces.mine import engine

    saved: list[tuple[Any, str, Any]] = []

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise EngineReached()

    def swap(obj: Any, name: str, value: Any) -> None:
        saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    swap(cli, "_run_engine", lambda what, run, options: stub())
    swap(generate, "generate", stub)
    swap(serve, "run_server", stub)
    for name in ("run_spark", "run_duckdb", "spark_session"):
        swap(engine, name, stub)

    def restore() -> None:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)

    return restore


def option_samples(root: Path) -> list[Path]:
    """One argv template per command (a JSON file): the command, its options and positionals."""
    from kconform.ci import cli

    root.mkdir(parents=True, exist_ok=True)
    parser = cli._parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    out = []
    choices: dict[str, Any] = getattr(sub, "choices", None) or {}
    for command, p in choices.items():
        options = []
        positionals = 0
        for action in p._actions:
            if action.option_strings:
                if "--help" in action.option_strings:
                    continue
                options.append({"flag": action.option_strings[-1], "takes": action.nargs != 0})
            else:
                positionals += 1
        path = root / f"{command}.json"
        path.write_text(json.dumps({"command": command, "options": options, "positionals": positionals}))
        out.append(path)
    return out


def mutate_options(rng: random.Random, sample: Path, dst: Path) -> Mutation:
    """A random command line for the command of ``sample``: random options with random values
    (from OPTION_VALUES and the scratch inputs), positionals, and now and then an unknown flag."""
    spec = json.loads(sample.read_text())
    values = [*OPTION_VALUES, str(dst.parent / "input.jsonl"), str(dst.parent / "out"), str(dst.parent)]
    argv = [spec["command"]]
    argv.extend(rng.choice(values) for _ in range(spec["positionals"]))
    for _ in range(rng.randint(0, 4)):
        if spec["options"] and rng.random() < 0.95:
            option = rng.choice(spec["options"])
            argv.append(option["flag"])
            if option["takes"]:
                argv.append(rng.choice(values))
        else:
            argv.append(rng.choice(("--nope", "-x", "--", "--set")))
    dst.write_text(json.dumps(argv))
    return Mutation(" ".join(argv)[:200], PLAUSIBLE)


def _argv_from_file(path: Path, scratch: Path) -> list[str]:
    argv: list[str] = json.loads(path.read_text())
    return argv


# --------------------------------------------------------------------------------------------
# Probe histories and Kafka's logs
# --------------------------------------------------------------------------------------------

HISTORY_PLANTS: tuple[str | None, ...] = (None, "G1a", "zombie-commit")
"""Simulated probe histories: a clean one and two with a planted anomaly (checker exit 0 and 1)."""


def history_samples(root: Path) -> list[Path]:
    """Small probe histories written by the simulated cluster (conformance.probe.simulate)."""
    from kconform.conformance.probe.simulate import simulate

    root.mkdir(parents=True, exist_ok=True)
    out = []
    for i, plant in enumerate(HISTORY_PLANTS):
        path = root / f"history-{plant or 'valid'}.jsonl"
        simulate(path, ops=150, seed=4 + i, plant=plant)
        out.append(path)
    return out


def mutate_history(rng: random.Random, sample: Path, dst: Path) -> Mutation:
    """A damaged copy of a probe history. Byte-wise damage that leaves a line which is not JSON must
    be refused, except a cut last line (the format tolerates a killed run's half-written line, with a
    warning); a value of the wrong type must be refused; other damage may get any verdict."""
    data = sample.read_bytes()
    if rng.random() < 0.5:
        out, what = byte_mutation(rng, data)
        same = _lines_equal(data, out)
        if what == "truncated" or (what == "flipped bytes" and same is None and _only_last_line_broken(out)):
            expect = PLAUSIBLE
        elif same is None or what in ("invalid UTF-8", "a huge line", "deep nesting"):
            expect = MUST_REFUSE
        else:
            expect = REENCODED if same else PLAUSIBLE
        dst.write_bytes(out)
        return Mutation(f"bytes: {what}", expect)
    objs = [json.loads(x) for x in data.decode("utf-8").splitlines() if x.strip()]
    line = rng.randrange(len(objs))
    paths = [p for p in _paths(objs[line]) if p]
    path = rng.choice(paths)
    old = _get(objs[line], path)
    if rng.random() < 0.5:
        new: Any = _wrong_type(rng, old)
        what = f"wrong type at line {line + 1} {path}"
        # null is a legal value of some fields (error, group), and a number where the format allows any
        # JSON (a raw value) is not damage the reader can see
        expect = (
            PLAUSIBLE
            if new is None or old is None or ("value" in path[:1] and path[-1:] == ("value",))
            else MUST_REFUSE
        )
    else:
        new = rng.choice(INT_BOUNDARIES) if type(old) is int else old
        what, expect = f"value {new!r} at line {line + 1} {path}", PLAUSIBLE
        if type(new) is int and not -(2**63) <= new < 2**63:
            expect = MUST_REFUSE
    _set(objs[line], path, new)
    dst.write_text("\n".join(json.dumps(o) for o in objs) + "\n", encoding="utf-8")
    return Mutation(f"schema: {what}", expect)


def _only_last_line_broken(data: bytes) -> bool:
    """Whether every line but the last is JSON and the last has no newline (a tolerated cut)."""
    if data.endswith(b"\n"):
        return False
    head = data.rsplit(b"\n", 1)[0]
    return _lines_equal(head, head) is not None


def log_samples(root: Path) -> list[Path]:
    """Kafka outputs as kconform logs reads them: a few of the recorded fixtures (tests/fixtures/logs),
    a server log, a state-change-like KRaft log and dump-log output."""
    fixtures = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "logs"
    names = (
        "server-0.11.0.0-isr-shrink-failover.log",
        "server-4.1-kraft-isr-updates.log",
        "dump-4.1.1-transaction-state.txt",
        "dump-3.6.0-my-topic-deep.txt",
    )
    root.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        if (fixtures / name).is_file():
            shutil.copyfile(fixtures / name, root / name)
            out.append(root / name)
    return out


def log_mutation(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One damage of a Kafka log as real collections show them: lines cut mid-way (a rotated or
    partially copied file, a line torn by a crash), binary garbage (a segment or index file
    concatenated in, NUL padding after a crash), mixed encodings (a line in Latin-1, UTF-16 or
    cp1252 amid UTF-8), enormous lines (a multi-megabyte line with and without a line end), or one of
    the byte-wise damages of JSON Lines (:func:`byte_mutation`)."""
    lines = data.split(b"\n")
    choice = rng.randrange(10)
    if choice == 0:  # several lines truncated where they stand, the rest kept
        for _ in range(rng.randint(1, 5)):
            i = rng.randrange(len(lines))
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        return b"\n".join(lines), "truncated lines"
    if choice == 1:  # a block of binary garbage, NULs included, where a line was
        size = rng.choice((16, 512, 4096, 65_536))
        junk = rng.randbytes(min(size, 4096)) * max(1, size // 4096)
        if rng.random() < 0.3:
            junk = b"\x00" * size
        i = rng.randrange(len(lines))
        return b"\n".join([*lines[:i], junk, *lines[i:]]), f"binary garbage ({size} bytes)"
    if choice == 2:  # mixed encodings: some lines re-encoded, with non-ASCII text in them
        codec = rng.choice(("latin-1", "utf-16", "utf-16-le", "cp1252", "utf-32"))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(lines))
            text = lines[i].decode("utf-8", errors="replace") + " caf\u00e9 \u00fc\u00df"
            lines[i] = text.encode(codec, errors="replace")
        return b"\n".join(lines), f"mixed encodings ({codec})"
    if choice == 3:  # an enormous line: a real line's head then megabytes, maybe no line end at all
        size = rng.choice((70_000, 1_000_000, 8_000_000))
        head = lines[rng.randrange(len(lines))][:200]
        tail = b"" if rng.random() < 0.5 else b"\n"
        i = rng.randrange(len(lines) + 1)
        big = head + b"x" * size
        return b"\n".join(lines[:i]) + (b"\n" if i else b"") + big + tail + b"\n".join(lines[i:]), (
            f"an enormous line ({size} bytes{'' if tail else ', no line end'})"
        )
    out, what = byte_mutation(rng, data)
    return out, what


def mutate_log(rng: random.Random, sample: Path, dst: Path) -> Mutation:
    """Damage of a Kafka log or dump (:func:`log_mutation`). Logs hold lines kconform does not know
    and are read leniently line by line, so any verdict is acceptable: no traceback, no hang."""
    out, what = log_mutation(rng, sample.read_bytes())
    dst.write_bytes(out)
    return Mutation(f"bytes: {what}", PLAUSIBLE)


# --------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------

REPLAY_BUDGET = ["--timeout", "10", "--run-timeout", "30"]


def _replay_model_only(path: Path, scratch: Path) -> list[str]:
    return ["replay", str(path), "--model-only", *REPLAY_BUDGET]


def _replay_live(path: Path, scratch: Path) -> list[str]:
    return ["replay", str(path), *REPLAY_BUDGET]


def _convert_to_corpus(path: Path, scratch: Path) -> list[str]:
    return ["convert", str(path), str(scratch / "converted")]


def _mine_duckdb(path: Path, scratch: Path) -> list[str]:
    return ["mine", str(path), "--engine", "duckdb", "--out", str(scratch / "mined")]


def _convert_to_jsonl(path: Path, scratch: Path) -> list[str]:
    return ["convert", str(path), str(scratch / "jsonl")]


def _probe_check(path: Path, scratch: Path) -> list[str]:
    return ["probe", "--check", str(path), "--out", str(scratch / "probe")]


def _logs_check(path: Path, scratch: Path) -> list[str]:
    return ["logs", "check", str(path), "--out", str(scratch / "logs")]


KINDS: dict[str, InputKind] = {
    kind.name: kind
    for kind in (
        InputKind(
            "counterexample",
            counterexample_samples,
            mutate_jsonl,
            (_replay_model_only, _replay_live),
        ),
        InputKind(
            "trace",
            trace_samples,
            mutate_jsonl,
            (_replay_model_only, _replay_live, _convert_to_corpus),
        ),
        InputKind("corpus", corpus_samples, mutate_corpus, (_mine_duckdb, _convert_to_jsonl)),
        InputKind("wire", wire_samples, mutate_wire, (_replay_model_only, _replay_live)),
        InputKind("options", option_samples, mutate_options, (_argv_from_file,), frozenset({0, 1, 2})),
        InputKind("history", history_samples, mutate_history, (_probe_check,), frozenset({0, 1, 3})),
        InputKind("logs", log_samples, mutate_log, (_logs_check,)),
    )
}
"""Every input kind the harness fuzzes; add one entry to fuzz a new kind."""


@dataclass
class Tally:
    """Counts of one kind's cases."""

    cases: int = 0
    exits: Counter[int] = field(default_factory=Counter)
    tracebacks: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    """Damaged inputs not refused (a MUST_REFUSE mutation that did not exit 2)."""
    clean_on_damage: int = 0
    """Damaged inputs judged clean (exit 0): the count the issue asks to be zero."""
    reencoding_mismatch: list[str] = field(default_factory=list)
    slowest: tuple[float, str] = (0.0, "")
    seconds: float = 0.0

    def add(self, outcome: Outcome, mutation: Mutation, argv: list[str], original: int | None) -> None:
        self.cases += 1
        self.seconds += outcome.seconds
        label = f"{mutation.what} | kconform {' '.join(argv)[:160]}"
        if outcome.seconds > self.slowest[0]:
            self.slowest = (outcome.seconds, label)
        if outcome.hang:
            self.hangs.append(label)
            return
        if outcome.code is not None:
            self.exits[outcome.code] += 1
        if outcome.traceback:
            self.tracebacks.append(
                f"{label}: {outcome.stderr.strip().splitlines()[-1][:300] if outcome.stderr else ''}"
            )
            return
        if mutation.expect == MUST_REFUSE and outcome.code != 2:
            self.missed.append(f"{label} -> exit {outcome.code}")
            if outcome.code == 0:
                self.clean_on_damage += 1
        if mutation.expect == REENCODED and original is not None and outcome.code != original:
            self.reencoding_mismatch.append(f"{label} -> exit {outcome.code}, original {original}")


def fuzz_kind(
    kind: InputKind,
    samples: list[Path],
    cases: int,
    seed: int,
    scratch: Path,
    hang_s: float = 60.0,
    progress: Callable[[int], None] | None = None,
    deadline: float | None = None,
) -> Tally:
    """Run ``cases`` damaged copies of ``samples`` through ``kind``'s commands (round robin); with a
    ``deadline`` (``time.monotonic()`` value) stop after the first case that ends past it (the tally
    counts the cases that ran)."""
    rng = random.Random(seed)
    tally = Tally()
    originals: dict[tuple[Path, int], int | None] = {}
    restore = stub_engines() if kind.name == "options" else None
    cwd = Path.cwd()
    scratch.mkdir(parents=True, exist_ok=True)
    os.chdir(scratch)  # commands given relative paths write here, never into the caller's directory
    try:
        for case in range(cases):
            sample = samples[case % len(samples)]
            command = kind.commands[(case // len(samples)) % len(kind.commands)]
            work = scratch / f"case-{case % 4}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            dst = work / ("input" + (".jsonl" if sample.suffix == ".jsonl" else sample.suffix))
            mutation = kind.mutate(rng, sample, dst)
            argv = command(dst, work)
            key = (sample, kind.commands.index(command))
            if mutation.expect == REENCODED and key not in originals:
                clean_work = scratch / "clean"
                shutil.rmtree(clean_work, ignore_errors=True)
                clean_work.mkdir(parents=True)
                originals[key] = run_case(command(sample, clean_work), hang_s).code
            tally.add(run_case(argv, hang_s), mutation, argv, originals.get(key))
            if progress is not None:
                progress(case)
            if deadline is not None and time.monotonic() >= deadline:
                break
    finally:
        os.chdir(cwd)
        if restore is not None:
            restore()
        shutil.rmtree(scratch, ignore_errors=True)
    return tally


def clean_exits(kind: InputKind, samples: list[Path], scratch: Path) -> dict[str, int | None]:
    """Each sample's exit code under the kind's first command (a sanity check of the samples)."""
    out = {}
    for sample in samples:
        work = scratch / "clean"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        out[str(sample)] = run_case(kind.commands[0](sample, work)).code
    shutil.rmtree(scratch / "clean", ignore_errors=True)
    return out


def environment_ok() -> bool:
    """Whether this process can run the harness (signals work in the main thread only)."""
    return (
        threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_kill") and os.name == "posix"
    )
