"""The exactly-once slice's reference implementation: partition leaders, transaction and group
coordinators, producer, consumer and group clients over the shared simulation core
(impl.simulation), and the slice's mutants."""
