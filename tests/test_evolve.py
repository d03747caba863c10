"""``model.evolve.evolve`` builds what ``dataclasses.replace`` builds for the model's state values,
and refuses what it cannot copy faithfully (issue 17: cheaper state copies)."""

from __future__ import annotations

import dataclasses

import pytest

from kconform.model.config import ReplicationConfig
from kconform.model.evolve import evolve
from kconform.model.state import Ghost
from kconform.model.txn_config import TxnConfig
from kconform.model.txn_state import initial_state as txn_initial_state
from kconform.traces.events import Entry
from tests.test_invariants import _committed


def _same(a: object, b: object) -> None:
    assert a == b and hash(a) == hash(b) and type(a) is type(b) and vars(a) == vars(b)


def test_evolve_is_replace_on_the_model_states() -> None:
    s = _committed()
    _same(evolve(s, now_ms=7), dataclasses.replace(s, now_ms=7))
    r = s.replicas[1]
    _same(evolve(r, hw=0, log=(Entry(0, 0, 1),)), dataclasses.replace(r, hw=0, log=(Entry(0, 0, 1),)))
    _same(evolve(s.ghost, crash_lost_data=True), dataclasses.replace(s.ghost, crash_lost_data=True))
    t = txn_initial_state(TxnConfig())
    _same(evolve(t, now_ms=5), dataclasses.replace(t, now_ms=5))
    _same(evolve(s), s)
    assert evolve(s, now_ms=7) is not s and s.now_ms == 0  # a copy; the original is untouched


def test_evolve_refuses_unknown_fields_and_classes_it_cannot_copy() -> None:
    with pytest.raises(TypeError, match="no field"):
        evolve(Ghost(), acks=1)
    with pytest.raises(TypeError, match="__post_init__"):
        evolve(ReplicationConfig(), replicas=2)  # its __post_init__ validates: replace must run it
    with pytest.raises(TypeError, match="dataclass"):
        evolve(object())

    @dataclasses.dataclass(frozen=True)
    class Derived:
        a: int
        b: int = dataclasses.field(init=False, default=0)

    with pytest.raises(TypeError, match="__init__ field"):
        evolve(Derived(1), a=2)
