"""Handler-outcome coverage, shared by every slice: the key an accepted event counts under, and a
campaign's coverage against what the slice's model can produce (a guard against vacuous passes).

A **coverage key** names an event kind and the field that discriminates its outcome:

- events with an ``outcome`` string: ``metadata_applied:become_leader``, ``fetch_applied:diverged``,
  ``txn_produce_handled:duplicate``, ...;
- events with an error code: the code's name, ``produce_completed:REQUEST_TIMED_OUT``,
  ``end_txn_handled:PRODUCER_FENCED``;
- every other event: its kind alone (``clock_advanced``, ``broker_crashed``, ...).

A slice may refine the key (the replication judge counts ``fetch_handled:diverging``) and count
more keys per event (the exactly-once judge counts coordinator transitions ``txn_edge:A->B``).
What is **reachable** is the slice's business (Slice.reachable_keys): a bounded search of the
replication model, a reviewed table for the exactly-once slice.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.traces import events as ev


def outcome_key(event: ev.Event) -> str:
    """The coverage key of ``event``: ``kind:outcome``, ``kind:ERROR_NAME``, or ``kind``."""
    kind = event.kind
    outcome = getattr(event, "outcome", None)
    if isinstance(outcome, str):
        return f"{kind}:{outcome}"
    error = getattr(event, "error", None)
    if isinstance(error, int) and not isinstance(error, bool):
        return f"{kind}:{ev.ERRORS.get(error, str(error))}"
    return kind


@dataclass(frozen=True)
class Coverage:
    """Handler-outcome coverage of a campaign: counts of the accepted
    events' keys, the keys the model can produce for the configuration, and what is missing."""

    covered: dict[str, int]
    reachable: frozenset[str]

    @property
    def missing(self) -> list[str]:
        return sorted(k for k in self.reachable if self.covered.get(k, 0) == 0)

    @property
    def hit(self) -> int:
        return len(self.reachable) - len(self.missing)

    @property
    def percent(self) -> float:
        return 100.0 * self.hit / len(self.reachable) if self.reachable else 100.0

    def line(self) -> str:
        return f"covered {self.hit} of {len(self.reachable)} reachable ({self.percent:.1f} %)"

    def to_json(self) -> dict[str, object]:
        return {
            "covered": dict(sorted(self.covered.items())),
            "reachable": sorted(self.reachable),
            "missing": self.missing,
            "unexpected": sorted(k for k in self.covered if k not in self.reachable),
            "covered_reachable": self.hit,
            "reachable_count": len(self.reachable),
            "percent": round(self.percent, 2),
        }


__all__ = ["Coverage", "outcome_key"]
