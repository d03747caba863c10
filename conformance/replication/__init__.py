"""The replication slice's conformance parts (one partition: LEO, HW, ISR, leader epochs,
truncation, elections, acks); ``slice.SLICE`` is its entry in the registry (conformance.registry)."""
