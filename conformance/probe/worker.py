"""A client worker: one logical probe process (one producer and/or consumer instance) in its own OS process.

``python -m kconform.conformance.probe.worker --client confluent-kafka|kafka-python`` reads one JSON
command per line on stdin and answers each with exactly one JSON line on stdout, so the runner can
drive many clients concurrently from one thread and kill a stuck one without harming the others. The
first line it writes is ``{"ready": true, "client": ..., "client_version": ...}``.

Command: ``{"cmd": NAME, "args": {...}, "timeout": seconds}``. Answer: ``{"outcome": "ok" | "fail" |
"info", "value": ..., "error": null | {"code", "name", "message"}}`` in the history's sense: ``fail``
only when the client says the operation definitely did not take effect, ``info`` when its effect is
unknown (a timeout, a lost connection, an unclassified error). Commands (see the adapters in
:mod:`kconform.conformance.probe.client_ck` and :mod:`kconform.conformance.probe.client_kp`):
``producer``, ``send``, ``init``, ``txn``, ``consumer``, ``assign``, ``subscribe``, ``poll``, ``seek``,
``commit``, ``fetch-offsets``, ``topics`` (create topics / read partition counts), ``close``.
Every client call is given a timeout; a worker that misses its deadline is killed by the runner.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from typing import Any, Protocol

Json = Any
Answer = tuple[str, Json, Json]
"""(outcome, value, error) of one command."""

CLIENTS = ("confluent-kafka", "kafka-python")


class ClientAdapter(Protocol):
    """What a client library offers the worker; each method returns an :data:`Answer`."""

    name: str
    version: str

    def run(self, cmd: str, args: dict[str, Json], timeout: float) -> Answer: ...


def make_adapter(client: str) -> ClientAdapter:
    """The adapter for ``client`` (imported lazily: a worker loads one client library only)."""
    if client == "confluent-kafka":
        from kconform.conformance.probe.client_ck import ConfluentAdapter

        return ConfluentAdapter()
    if client == "kafka-python":
        from kconform.conformance.probe.client_kp import KafkaPythonAdapter

        return KafkaPythonAdapter()
    raise ValueError(f"unknown client {client!r} (known: {', '.join(CLIENTS)})")


def error(name: str, message: str, code: int | None = None) -> dict[str, Json]:
    """An ``error`` object of the history."""
    return {"code": code, "name": name, "message": message}


class AdapterBase:
    """What every client adapter shares: ``run`` dispatches a command to its ``op_<command>``
    method (dashes as underscores; an unknown command is a definite failure), and subscribing a
    consumer is the same call in both client libraries."""

    consumer: Any

    def run(self, cmd: str, args: dict[str, Json], timeout: float) -> Answer:
        handler = getattr(self, "op_" + cmd.replace("-", "_"), None)
        if handler is None:
            return ("fail", None, error("BAD_COMMAND", f"unknown command {cmd!r}"))
        answer: Answer = handler(args, timeout)
        return answer

    def op_subscribe(self, args: dict[str, Json], timeout: float) -> Answer:
        if self.consumer is None:
            return missing("consumer", "subscribe")
        self.consumer.subscribe(list(args["topics"]))
        return ("ok", None, None)


def missing(role: str, op: str) -> Answer:
    """The answer to ``op`` before the worker has a ``role`` ("producer", "consumer"): a definite failure."""
    return ("fail", None, error(f"NO_{role.upper()}", f"{op} before {role}"))


def send_answer(results: list[dict[str, Json]], definite_errors: frozenset[str]) -> Answer:
    """A send's answer from its records' completions (each record's ``delivered`` flag is taken out):
    ``ok`` when every record was acknowledged, ``fail`` when every one failed with an error no broker
    write precedes (``definite_errors``: Jepsen's definite failures), otherwise ``info`` (unknown,
    the checker treats such writes as possibly applied); the error is the first record's error."""
    outcomes = set()
    for r in results:
        if r.pop("delivered", False):
            outcomes.add("ok")
        elif "error" in r and r["error"]["name"] in definite_errors:
            outcomes.add("fail")
        else:
            outcomes.add("info")
    outcome = "ok" if outcomes == {"ok"} else "fail" if outcomes == {"fail"} else "info"
    return (outcome, {"records": results}, next((r["error"] for r in results if "error" in r), None))


def read_record(topic: Any, partition: Any, offset: Any, raw: Any) -> dict[str, Json]:
    """A record a consumer read, as the history's ``poll`` value lists it (values decoded as UTF-8)."""
    value = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    return {"topic": topic, "partition": partition, "offset": offset, "value": value}


def serve(adapter: ClientAdapter, stdin: Any, stdout: Any) -> int:
    """Answer commands until ``close`` or end of input; never raises on a bad command."""
    stdout.write(json.dumps({"ready": True, "client": adapter.name, "client_version": adapter.version}) + "\n")
    stdout.flush()
    for line in stdin:
        try:
            command = json.loads(line)
            cmd = str(command["cmd"])
            args = dict(command.get("args") or {})
            timeout = float(command.get("timeout", 10.0))
        except (ValueError, KeyError, TypeError) as e:
            answer: Answer = ("fail", None, error("BAD_COMMAND", f"unreadable command: {e}"))
            cmd = "?"
        else:
            try:
                answer = adapter.run(cmd, args, timeout)
            except Exception as e:  # an unexpected client exception: effect unknown
                answer = ("info", None, error(type(e).__name__, f"{e}\n{traceback.format_exc(limit=3)}"))
        outcome, value, err = answer
        stdout.write(json.dumps({"outcome": outcome, "value": value, "error": err}) + "\n")
        stdout.flush()
        if cmd == "close":
            return 0
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="worker")
    parser.add_argument("--client", choices=CLIENTS, default="confluent-kafka")
    args = parser.parse_args(argv)
    return serve(make_adapter(args.client), sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
