"""Benchmark scripts: they print figures measured side by side in one run; no test times anything."""
