"""The api's clients of other systems: the outbox adapter (what the relay publishes)."""
