"""The relay's Prometheus metrics (``dps_relay_*``), served on its ``/metrics`` when
``RELAY_METRICS_PORT`` is set. Updated once per batch, after its transaction committed."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

EVENTS_PUBLISHED = Counter(
    "dps_relay_events_published_total", "Outbox events the broker confirmed, marked published by this relay"
)
EVENTS_NOT_PUBLISHED = Counter(
    "dps_relay_events_not_published_total",
    "Events of failed batches the broker did not confirm; left unpublished, to be sent again",
)
_BATCHES = Counter("dps_relay_batches_total", "Batches of outbox events published, by outcome", ["outcome"])
BATCHES_CONFIRMED = _BATCHES.labels(outcome="confirmed")  # every event of the batch
BATCHES_FAILED = _BATCHES.labels(outcome="failed")  # some or all not confirmed (broker down, refused, unroutable)
PUBLISH_DELAY_SECONDS = Histogram(
    "dps_relay_publish_delay_seconds",
    "Seconds from an event's occurred_at (the writing service's clock) to the broker's confirm (the relay's)",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900),
)
