"""The worker protocol: one answer line per command, bad input and client exceptions never kill it."""

from __future__ import annotations

import io
import json
from typing import Any

from kconform.conformance.probe.worker import Answer, serve


class _Fake:
    name = "fake"
    version = "0"

    def run(self, cmd: str, args: dict[str, Any], timeout: float) -> Answer:
        if cmd == "boom":
            raise RuntimeError("client exploded")
        return ("ok", {"cmd": cmd, "args": args, "timeout": timeout}, None)


def _talk(*lines: str) -> list[dict[str, Any]]:
    out = io.StringIO()
    assert serve(_Fake(), io.StringIO("".join(line + "\n" for line in lines)), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_hello_then_one_answer_per_command_until_close() -> None:
    answers = _talk(
        json.dumps({"cmd": "send", "args": {"x": 1}, "timeout": 3}),
        json.dumps({"cmd": "close"}),
        json.dumps({"cmd": "never-read"}),
    )
    assert answers[0] == {"ready": True, "client": "fake", "client_version": "0"}
    assert answers[1] == {"outcome": "ok", "value": {"cmd": "send", "args": {"x": 1}, "timeout": 3.0}, "error": None}
    assert len(answers) == 3 and answers[2]["value"]["cmd"] == "close"  # nothing after close


def test_unreadable_commands_fail_and_client_exceptions_are_unknown() -> None:
    answers = _talk("not json", json.dumps({"args": {}}), json.dumps({"cmd": "boom"}), json.dumps({"cmd": "ok"}))
    assert [a["outcome"] for a in answers[1:]] == ["fail", "fail", "info", "ok"]
    assert answers[1]["error"]["name"] == answers[2]["error"]["name"] == "BAD_COMMAND"
    assert answers[3]["error"]["name"] == "RuntimeError" and "client exploded" in answers[3]["error"]["message"]
