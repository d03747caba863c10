"""Checking an implementation against the model, for every slice.

Shared machinery (written once): ``adapter`` (the plug-in interface), ``judge`` (the lockstep
judge's core), ``runner`` (one run), ``machine`` (the Hypothesis swarm machine's base),
``scenarios`` (the zoo runner), ``coverage`` (coverage keys and figures), ``hunt`` (budgeted
campaigns), ``slice`` (the slice interface) and ``registry`` (the slices). Each slice's own rules
live in its package: ``replication/`` (judge, machine, zoo, reachable outcomes, the model searches
explore and bmc) and ``txn/`` (judge, machine, zoo, reachable outcomes).
"""

from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.judge import ALLOWED, INVARIANT_VIOLATION, NON_CONFORMANCE, Finding

__all__ = ["ALLOWED", "INVARIANT_VIOLATION", "NON_CONFORMANCE", "Adapter", "AdapterError", "Finding"]
