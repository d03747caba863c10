"""The one interface an implementation under test plugs in through.

An adapter owns a running implementation (in-process, a subprocess, a real cluster behind a
harness). The conformance machinery only ever calls these three methods; everything it judges
arrives as events (kconform.traces.events).
"""

from __future__ import annotations

from typing import Protocol

from kconform.model.configs import AnyConfig
from kconform.traces.events import Event
from kconform.traces.operations import Operation


class AdapterError(RuntimeError):
    """The implementation under test crashed, hung or answered outside the protocol."""


class Adapter(Protocol):
    """An implementation under test.

    Guarantees the conformance machinery relies on: ``reset`` returns the events of bringing the
    cluster up (brokers registering, the first election, metadata reaching the brokers);
    ``apply`` runs one operation to completion and returns the events it caused, in the order
    the handlers ran; with the same config, seed, mutants and operations, the same events come
    back (determinism is what makes counterexamples replayable).
    """

    name: str

    def reset(self, config: AnyConfig, seed: int, mutants: frozenset[str]) -> list[Event]: ...

    def apply(self, op: Operation) -> list[Event]: ...

    def close(self) -> None: ...
