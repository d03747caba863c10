"""Coverage of the fetch-session slice: handler outcomes, session outcomes with their errors and
evictions. What is reachable is a reviewed table (every key with why the machine produces it);
keys no run of the machine can produce are left out, with the reason."""

from __future__ import annotations

from kconform.model.fetch_config import FetchConfig

REACHABLE: tuple[tuple[str, str], ...] = (
    ("clock_advanced", "time"),
    ("fetch_assigned", "assignments"),
    ("session_closing", "a client closes (notifyClose and the close request)"),
    ("records_appended", "appends"),
    ("hw_advanced", "the HW follows the LEO"),
    ("log_start_advanced", "DeleteRecords (KIP-107)"),
    ("leadership_changed", "leadership moves away and back"),
    ("session_cache_lost", "a broker restart"),
    ("session_fetch_sent", "every request"),
    ("session_fetch_handled:full-new", "a full request the cache has room for"),
    ("session_fetch_handled:full-new:evicted", "a full request evicting a stale or smaller session"),
    ("session_fetch_handled:full-no-slot", "a full request the cache has no room for (3 clients, 2 slots)"),
    ("session_fetch_handled:sessionless", "the close request (epoch -1)"),
    ("session_fetch_handled:incremental", "an incremental request in its session"),
    ("session_fetch_handled:closed", "an incremental request forgetting its last partition"),
    ("session_fetch_handled:error:FETCH_SESSION_ID_NOT_FOUND", "after an eviction or a restart"),
    ("session_fetch_handled:error:INVALID_FETCH_SESSION_EPOCH", "a duplicated incremental request"),
    ("session_fetch_applied:accepted", "answers used"),
    ("session_fetch_applied:error", "session errors"),
    ("session_fetch_applied:timed-out", "a request or answer lost (drop, restart) past request.timeout.ms"),
    ("session_fetch_applied:ignored", "the second answer to a duplicated request, or one after a timeout"),
)
"""(coverage key, why the slice produces it). ``session_fetch_applied:rejected`` (handleResponse false
without an error: an answer whose partitions do not match the handler's session) is left out: the
broker answers the partitions of the request, and the handler changes only between a request and
its answer by a close, after which that answer is ignored."""


def reachable_keys(cfg: FetchConfig) -> frozenset[str]:
    """The coverage keys the fetch-session slice can produce under ``cfg``."""
    keys = {key for key, _why in REACHABLE}
    if cfg.clients <= cfg.max_slots:
        keys -= {"session_fetch_handled:full-no-slot", "session_fetch_handled:full-new:evicted"}
    return frozenset(keys)


__all__ = ["REACHABLE", "reachable_keys"]
