"""The probe (issue 12): real Kafka clients against any system that speaks Kafka's wire protocol.

``history.py`` is the history format shared by the runner and the checker (docs/probe.md); the
checker judges a history against the client-visible guarantees in Jepsen's vocabulary.
"""
