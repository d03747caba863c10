"""The benchmark child contract: figures come only from a child that succeeded and printed them."""

from __future__ import annotations

import sys

import pytest

from kconform.ci.benchmarks.child import ChildFailed, json_child


def test_the_last_json_line_is_the_figures() -> None:
    code = "print('warming up'); print('{\"events\": 3, \"cpu\": 0.5}')"
    assert json_child([sys.executable, "-c", code]) == {"events": 3, "cpu": 0.5}


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("import sys; print('{\"events\": 3}'); sys.exit(4)", "exit 4"),
        ("print('no figures here')", "no JSON figures"),
        ("print('[1, 2]')", "no JSON figures"),
        ("pass", "no JSON figures"),
        ("import time; time.sleep(30)", "timed out"),
    ],
)
def test_a_failed_child_never_gives_figures(code: str, says: str) -> None:
    with pytest.raises(ChildFailed, match=says):
        json_child([sys.executable, "-c", code], timeout=3)
