"""The scenario vocabulary: Kafka's unit tests as data over the model's handlers.

A ``Scenario`` is one test method of one Kafka test class, with its literal numbers: a *subject*
(what the test exercises: the leader-epoch cache, a transaction coordinator's metadata for one
transactional id, a partition's log with its producer state and offsets, a replicated partition,
a follower's truncation), the state it starts from (``given``), the configuration that selects
the Kafka version's behaviour (a rung of the replication ladder, the transaction version), and
steps: each step calls one handler of the subject's vocabulary by name with keyword arguments
and states, for some observables, the value Kafka's test asserts.

Nothing here is written per scenario. A subject is a ``Driver`` (``start(given, config)``,
``call(handler, args)``, ``observe()``) with one implementation over the model (``model_side``)
and, where the reference implementation has the same unit, one over the reference
(``reference_side``); the runner compares observables by name, so a typo in a scenario is an
error, never a silent pass. Scenarios from the same Kafka classes that are not ported yet are
written with the same handlers and observables (docs/yardstick.md lists them).

A scenario outside the model's scope carries the written reason instead of steps; a scenario the
reference does not cover carries ``reference`` = the reason. A Kafka answer that differs between
versions is expressed by ``config`` (``protocol`` = a ladder rung, ``transaction_version``), and
``resolution`` says how a disagreement found while porting was resolved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

TRUNK = "trunk 1eb7644349cb (4.0.0-SNAPSHOT, 2024-10-25)"
"""The Kafka commit of kafka-facts.md: the default version a scenario is read from."""
TRUNK_42 = "trunk 4.2.0-SNAPSHOT (2025-10)"
"""A later trunk (TransactionMetadata in Java, KIP-890 part 2 finished), where a scenario needs it."""
KAFKA_2_0 = "2.0.0 (before KAFKA-7415)"
KAFKA_2_1 = "2.1.0 (KAFKA-7415, f2dd6aa2698)"

EPOCH_CACHE = "epoch_cache"
COORDINATOR = "coordinator"
PARTITION = "partition"
REPLICATION = "replication"
FETCH_SESSION = "fetch_session"
FETCH_HANDLER = "fetch_session_handler"
PRODUCER = "producer"
SUBJECTS = (EPOCH_CACHE, COORDINATOR, PARTITION, REPLICATION, FETCH_SESSION, FETCH_HANDLER, PRODUCER)


class ScenarioError(ValueError):
    """A scenario the vocabulary cannot express (unknown handler, argument or observable)."""


class Refused(Exception):
    """The handler would not run (Kafka throws IllegalStateException, the model raises NotEnabled)."""


@dataclass(frozen=True)
class Step:
    """Call ``handler`` with ``args``; then every observable in ``expect`` must equal its value.
    ``refused`` expects the handler to refuse (Kafka: IllegalStateException)."""

    handler: str
    args: Mapping[str, Any] = field(default_factory=dict)
    expect: Mapping[str, Any] = field(default_factory=dict)
    """Observable → Kafka's value; a non-empty dict value checks only the keys it names (a broker's
    LEO among all brokers'), an empty one requires emptiness."""
    refused: bool = False


def call(handler: str, **args: Any) -> _StepBuilder:
    """``call("end_txn", pid=1, epoch=0, commit=True).then(error=NONE, state="PrepareCommit")``."""
    return _StepBuilder(handler, args)


@dataclass(frozen=True)
class _StepBuilder:
    handler: str
    args: Mapping[str, Any]

    def then(self, **expect: Any) -> Step:
        return Step(self.handler, self.args, expect)

    def refused(self) -> Step:
        return Step(self.handler, self.args, {}, refused=True)

    def step(self) -> Step:
        """A step with nothing checked (a setup call)."""
        return Step(self.handler, self.args, {})


def check(**expect: Any) -> Step:
    """Observables checked without a call (the ``observe`` handler of every subject)."""
    return Step("observe", {}, expect)


@dataclass(frozen=True)
class Scenario:
    """One Kafka test method ported: where it comes from and what it asserts."""

    kafka_class: str
    method: str
    version: str
    subject: str
    given: Mapping[str, Any] = field(default_factory=dict)
    steps: tuple[Step, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    out_of_scope: str = ""
    """Why the model does not express this test (then ``steps`` is empty)."""
    reference: str = ""
    """Empty: the reference runs it too; else why the reference does not."""
    resolution: str = ""
    """How a disagreement found while porting was resolved (a model fix, a version switch)."""
    part: str = ""
    """Distinguishes several scenarios ported from one test method (its assertions or parameters)."""

    @property
    def name(self) -> str:
        return f"{self.kafka_class}.{self.method}" + (f"[{self.part}]" if self.part else "")

    def __post_init__(self) -> None:
        if self.subject not in SUBJECTS:
            raise ScenarioError(f"{self.name}: unknown subject {self.subject!r} (one of {', '.join(SUBJECTS)})")
        if bool(self.out_of_scope) == bool(self.steps):
            raise ScenarioError(f"{self.name}: a scenario has steps or an out-of-scope reason, exactly one")
        for step in self.steps:
            if not isinstance(step, Step):
                raise ScenarioError(f"{self.name}: {step!r} is not a Step (end a call with .then(...) or .step())")


class Driver(Protocol):
    """One side (model or reference) of one subject: the vocabulary's handlers and observables."""

    def start(self, given: Mapping[str, Any], config: Mapping[str, Any]) -> None: ...

    def call(self, handler: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        """Run ``handler``; return the answer's observables (raise Refused when it would not run)."""
        ...

    def observe(self) -> Mapping[str, Any]:
        """The subject's state observables after the last call."""
        ...


@dataclass(frozen=True)
class Verdict:
    """``agrees``, ``DISAGREES: ...``, or ``n/a: reason``."""

    text: str

    @property
    def agrees(self) -> bool:
        return self.text == AGREES

    @property
    def disagrees(self) -> bool:
        return self.text.startswith(DISAGREES)


AGREES = "agrees"
DISAGREES = "DISAGREES"


def run(scenario: Scenario, driver: Driver) -> Verdict:
    """Run ``scenario`` on ``driver``: the first expectation that fails, or agreement."""
    driver.start(scenario.given, scenario.config)
    for i, step in enumerate(scenario.steps, 1):
        try:
            answer = {} if step.handler == "observe" else dict(driver.call(step.handler, step.args))
        except Refused as e:
            if step.refused:
                continue
            return Verdict(f"{DISAGREES}: step {i} {step.handler} refused ({e})")
        if step.refused:
            return Verdict(f"{DISAGREES}: step {i} {step.handler} ran; Kafka refuses it")
        seen = {**driver.observe(), **answer}
        for key, want in step.expect.items():
            if key not in seen:
                raise ScenarioError(f"{scenario.name}: step {i} {step.handler}: unknown observable {key!r}")
            got = seen[key]
            if isinstance(want, dict) and want and isinstance(got, Mapping):
                got = {k: got.get(k, "absent") for k in want}  # a non-empty dict names the keys it checks
            if _norm(got) != _norm(want):
                return Verdict(f"{DISAGREES}: step {i} {step.handler}: {key} = {got!r}, Kafka {want!r}")
    return Verdict(AGREES)


def _norm(value: Any) -> Any:
    """Lists and tuples compare alike; sets and frozensets alike (a scenario writes literals)."""
    if isinstance(value, list | tuple):
        return tuple(_norm(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(_norm(v) for v in value)
    return value
