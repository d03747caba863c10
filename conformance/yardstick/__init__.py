"""Kafka's own unit tests as the model's yardstick (issue 14).

One module per Kafka test class holds that class's ported scenarios (``SCENARIOS``) with their
literal numbers; ``dsl`` is the vocabulary they are written in, ``model_side`` and
``reference_side`` run it on the model and on the reference implementation, and ``table`` runs
them all (``kconform scenarios``). docs/yardstick.md says what was ported and how each
disagreement was resolved.
"""
