"""The fetch-session gate machine's draw ranges and rule families (conformance.fetch.machine) that
the corpus workload (traces.fetch.workload) shares, in a module of their own: a corpus generator
reads them without importing the Hypothesis machine."""

from __future__ import annotations

FAMILIES = ("leaders", "restarts", "deletes", "closes", "eviction", "message-faults", "scheduling")
"""Rule families switched on or off per run (swarm testing). Polls, assignments, appends and HW
advances are always on; "eviction" adds clock jumps past the cache's eviction time (120 s) and
request.timeout.ms (30 s)."""
EVICTION_MS = (31_000, 121_000)
"""Clock jumps past request.timeout.ms and past the minimum eviction time."""
SETTLE = (2, 10)
"""The max_messages a Settle step draws from (as the workload does)."""
