"""The scenario table: every ported Kafka test, run on the model and on the reference.

``rows()`` runs each scenario of the per-class modules (``CLASSES``) on the model's driver and,
where the subject has a reference unit and every handler the scenario calls is one, on the
reference's; ``render`` prints scenario, source, model verdict, reference verdict (``kconform
scenarios``); ``summary`` counts them. A scenario outside the model's scope is listed with its
reason and never run.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass

from kconform.conformance.yardstick.dsl import AGREES, Scenario, ScenarioError, Verdict, run
from kconform.conformance.yardstick.model_side import model_driver
from kconform.conformance.yardstick.reference_side import REFERENCE_SCOPE, Unsupported, reference_driver

CLASSES: tuple[str, ...] = (
    "leader_epoch_file_cache_test",
    "partition_test",
    "replica_test",
    "abstract_fetcher_thread_test",
    "replica_fetcher_thread_test",
    "replica_manager_test",
    "unified_log_test",
    "producer_state_manager_test",
    "transaction_metadata_test",
    "transaction_coordinator_test",
    "offset_metadata_manager_test",
    "group_metadata_manager_test",
    "transaction_state_manager_test",
    "transaction_marker_channel_manager_test",
    "transaction_marker_request_completion_handler_test",
    "fetch_session_test",
    "fetch_session_handler_test",
    "fetcher_test",
    "transaction_manager_test",
)
"""The per-Kafka-test-class modules of this package, in table order."""

OUT_OF_SCOPE = "out of scope"
NOT_APPLICABLE = "n/a"


def scenarios() -> tuple[Scenario, ...]:
    """Every scenario of every class module, in table order; names are unique."""
    out: list[Scenario] = []
    for name in CLASSES:
        module = importlib.import_module(f"kconform.conformance.yardstick.{name}")
        out.extend(module.SCENARIOS)
    seen: set[str] = set()
    for s in out:
        if s.name in seen:
            raise ScenarioError(f"two scenarios are named {s.name}: give one a part")
        seen.add(s.name)
    return tuple(out)


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    scenario: Scenario
    model: Verdict
    reference: Verdict

    @property
    def source(self) -> str:
        return f"{self.scenario.kafka_class}.{self.scenario.method} @ {self.scenario.version}"


def _reference(s: Scenario) -> Verdict:
    if s.reference:
        return Verdict(f"{NOT_APPLICABLE}: {s.reference}")
    driver = reference_driver(s.subject)
    if driver is None:
        return Verdict(f"{NOT_APPLICABLE}: {REFERENCE_SCOPE[s.subject]}")
    try:
        return run(s, driver)
    except Unsupported as e:
        return Verdict(f"{NOT_APPLICABLE}: {e}")


def row(s: Scenario) -> Row:
    """Run one scenario on both sides."""
    if s.out_of_scope:
        verdict = Verdict(f"{OUT_OF_SCOPE}: {s.out_of_scope}")
        return Row(s, verdict, verdict)
    return Row(s, run(s, model_driver(s.subject)), _reference(s))


def rows(selection: Iterable[Scenario] | None = None) -> list[Row]:
    return [row(s) for s in (scenarios() if selection is None else selection)]


@dataclass(frozen=True)
class Summary:
    total: int
    model_agrees: int
    model_disagrees: int
    out_of_scope: int
    reference_agrees: int
    reference_disagrees: int
    reference_na: int
    fixed: int


def summarize(table: list[Row]) -> Summary:
    return Summary(
        total=len(table),
        model_agrees=sum(r.model.agrees for r in table),
        model_disagrees=sum(r.model.disagrees for r in table),
        out_of_scope=sum(bool(r.scenario.out_of_scope) for r in table),
        reference_agrees=sum(r.reference.agrees for r in table),
        reference_disagrees=sum(r.reference.disagrees for r in table),
        reference_na=sum(r.reference.text.startswith(NOT_APPLICABLE) for r in table),
        fixed=sum(r.scenario.resolution.startswith("model fixed") for r in table),
    )


def render(table: list[Row], width: int = 60) -> str:
    """The table as text: scenario, source version, model verdict, reference verdict; then counts."""
    lines = [f"{'scenario':<{width}}  {'version':<34}  {'model':<10}  reference"]
    for r in table:
        name = r.scenario.name
        if len(name) > width:
            name = name[: width - 1] + "…"
        lines.append(f"{name:<{width}}  {r.scenario.version:<34}  {_short(r.model):<10}  {_short(r.reference)}")
        for label, v in (("model", r.model), ("reference", r.reference)):
            if v.disagrees or (label == "model" and r.scenario.out_of_scope):
                lines.append(f"{'':<{width}}    {label}: {v.text}")
        if r.scenario.resolution:
            lines.append(f"{'':<{width}}    resolution: {r.scenario.resolution}")
    s = summarize(table)
    lines.append(
        f"{s.total} scenarios: model agrees {s.model_agrees}, disagrees {s.model_disagrees}, out of scope "
        f"{s.out_of_scope}; reference agrees {s.reference_agrees}, disagrees {s.reference_disagrees}, n/a "
        f"{s.reference_na}; model fixes with a scenario as regression test {s.fixed}"
    )
    return "\n".join(lines)


def _short(v: Verdict) -> str:
    if v.agrees:
        return AGREES
    if v.disagrees:
        return "DISAGREES"
    return v.text.split(":", 1)[0]
