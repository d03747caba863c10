"""The fetch-session slice's reference implementation: a broker with Kafka's FetchSessionCache and
clients with Kafka's FetchSessionHandler, over the shared simulation core (impl.simulation)."""
