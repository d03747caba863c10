"""The replication slice's trace tools (``tools.py``, registered in traces.tools): its corpus
workload and its counterexample report page."""
