"""The dispatcher's clients of other systems: the webhook receivers (the sender, its address guard and
its deadlines, the signed attempt), the broker (the events queue), the metrics exporters, signing
secrets at rest, and the one adapter that renders the dispatcher's own events."""
