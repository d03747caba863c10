"""The command line and the CI gate: ``cli`` (the ``kconform`` command), ``gate`` (budgets, self-check,
exit codes), ``junit``, ``summary``, ``options`` and ``benchmarks`` (scripts that print figures)."""
