"""The clock steps every slice's gate machine (conformance.machine) and corpus workload
(traces.*.workload) draw from, in a module of their own: a corpus generator reads them without
importing the Hypothesis machine."""

from __future__ import annotations

STEP_MS = (100, 500, 1_000)
"""Small clock steps: fetcher backoffs, checkpoints and metadata refreshes fire; always on."""
RUN_MS = (300, 1_000, 3_000)
"""Healthy-network stretches: every message delivered, timers firing; progress in one step."""
