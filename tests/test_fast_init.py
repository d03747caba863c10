"""model.fast_init: the cheaper ``__init__`` of frozen dataclasses makes the instances the
dataclass-generated one makes (same signature, same ``__dict__`` in the same order, equal, same
hash, still frozen), and every event, operation, record and message class has it."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest

from kconform.impl import messages as core_messages
from kconform.impl.fetch import messages as fetch_messages
from kconform.impl.replication import messages as replication_messages
from kconform.impl.txn import messages as txn_messages
from kconform.model import records
from kconform.model.fast_init import fast_frozen_init, fast_frozen_inits, has_fast_init, unsupported
from kconform.traces import operations
from kconform.traces.events import EVENT_TYPES, ClockAdvanced

CALLS: list[int] = []


def _counted() -> list[int]:
    CALLS.append(1)
    return []


def _make() -> type[Any]:
    """A fresh class with every kind of field the fast __init__ handles."""

    @dataclass(frozen=True)
    class Sample:
        a: int
        b: str = "x"
        c: list[int] = field(default_factory=_counted)
        d: int = field(default=5, init=False)
        e: list[int] = field(default_factory=list, init=False)
        f: bool = field(default=False, kw_only=True)

    return Sample


def test_the_fast_init_makes_what_the_generated_one_makes() -> None:
    generated = _make()
    fast = fast_frozen_init(_make())
    assert has_fast_init(fast) and not has_fast_init(generated)
    assert str(inspect.signature(fast)) == str(inspect.signature(generated))
    for kwargs in ({"a": 1}, {"a": 2, "b": "y", "c": [3], "f": True}):
        CALLS.clear()
        made = fast(**kwargs)
        factory_calls = len(CALLS)
        CALLS.clear()
        expected = generated(**kwargs)
        assert factory_calls == len(CALLS)
        assert list(made.__dict__.items()) == list(expected.__dict__.items())
        assert repr(made).removeprefix(type(made).__qualname__) == repr(expected).removeprefix(
            type(expected).__qualname__
        )
        assert dataclasses.astuple(made) == dataclasses.astuple(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast(a=1).a = 2
    with pytest.raises(TypeError):
        fast(1, "b", [], True)  # f is keyword-only, as generated


def test_classes_it_cannot_reproduce_are_refused_or_skipped() -> None:
    @dataclass(frozen=True)
    class WithPostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class WithSlots:
        a: int

    @dataclass(frozen=True)
    class WithInitVar:
        a: int
        b: dataclasses.InitVar[int]

    @dataclass
    class NotFrozen:
        a: int

    for cls in (WithPostInit, WithSlots, WithInitVar, NotFrozen):
        assert unsupported(cls)
        with pytest.raises(TypeError):
            fast_frozen_init(cls)
    namespace = {"x": WithPostInit, "y": _make()}
    done = fast_frozen_inits(namespace, __name__)
    assert done == [namespace["y"]] and not has_fast_init(WithPostInit)


def _modules_classes() -> list[type[Any]]:
    out: list[type[Any]] = list(EVENT_TYPES.values())
    for module in (operations, records, core_messages, replication_messages, txn_messages, fetch_messages):
        out += [
            v
            for v in vars(module).values()
            if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == module.__name__
        ]
    return out


def test_every_event_operation_record_and_message_class_has_the_fast_init() -> None:
    """What generation makes by the hundred thousand (a class that loses it runs more slowly)."""
    classes = _modules_classes()
    assert len(classes) > 100
    assert [c.__name__ for c in classes if not has_fast_init(c)] == []


@pytest.mark.parametrize("cls", list(EVENT_TYPES.values()), ids=lambda c: c.__name__)
def test_an_event_is_the_instance_the_generated_init_would_make(cls: type[Any]) -> None:
    fields = dataclasses.fields(cls)
    values = {f.name: i for i, f in enumerate(fields)}
    made = cls(**values)
    assert list(made.__dict__.items()) == [(f.name, values[f.name]) for f in fields]
    assert made == cls(*values.values()) and hash(made) == hash(cls(*values.values()))
    assert ClockAdvanced(-1, 5) == ClockAdvanced(node=-1, now_ms=5) != ClockAdvanced(-1, 6)
