"""The exactly-once slice's trace tools (``tools.py``, registered in traces.tools): its corpus
workload (with the mutants it can plant), its counterexample report page and the coordinator
state-machine picture."""
