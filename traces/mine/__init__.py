"""The miner: stream invariants as SQL over Parquet corpora, run on Spark (any master) or DuckDB.

``invariants`` holds the registry and the views, ``engine`` runs them, ``report`` turns the result
into the JSON report, the summary table and replayable excerpts. See docs/traces.md.
"""
