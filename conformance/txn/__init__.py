"""The exactly-once slice's conformance parts (the idempotent producer, transactions, the LSO and
read_committed, transactional offsets); ``slice.SLICE`` is its entry in the registry
(conformance.registry)."""
