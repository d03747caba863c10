"""Kafka's own recorded outputs as input: parsers for dump-log output, checkpoint files, broker and
client logs (``kconform logs check`` / ``kconform logs ingest``), the observations they yield
(:mod:`kconform.traces.logs.observations`) and the checks run on them (:mod:`kconform.traces.logs.checks`)."""
