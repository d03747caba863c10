"""Checking an implementation against the model.

``adapter`` (the plug-in interface), ``lockstep`` (the judge of each event), ``runner`` (one run),
``machine`` (the Hypothesis state machine), ``scenarios`` (the known-bug zoo), ``hunt`` (budgeted
campaigns) and ``explore`` (breadth-first search of the model's state space).
"""

from kconform.conformance.adapter import Adapter, AdapterError
from kconform.conformance.judge import ALLOWED, INVARIANT_VIOLATION, NON_CONFORMANCE, Finding
from kconform.conformance.lockstep import Judge

__all__ = ["ALLOWED", "INVARIANT_VIOLATION", "NON_CONFORMANCE", "Adapter", "AdapterError", "Finding", "Judge"]
