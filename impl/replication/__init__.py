"""The replication slice's reference implementation: one partition's brokers, controller, clients,
disks and fetchers over the shared simulation core (impl.simulation), and the slice's mutants."""
