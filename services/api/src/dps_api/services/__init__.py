"""Use cases: each opens one transaction, works on the tables and writes its events to the outbox."""
