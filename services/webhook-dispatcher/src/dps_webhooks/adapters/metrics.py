"""The worker's Prometheus metrics (``dps_webhooks_*``), served on its ``/metrics`` when
``WEBHOOK_WORKER_METRICS_PORT`` is set.

Labels take a few fixed values, never ids or URLs. The labelled children are fetched once, here:
recording an attempt is on the worker's hot path, and ``labels()`` validates and takes a lock on every
call, so each attempt costs one ``inc`` or ``observe`` and nothing more.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from dps_webhooks.domain.attempt_outcome import DeliveryStatus

_ATTEMPTS = Counter(
    "dps_webhooks_attempts_total", "Delivery attempts recorded, by the delivery's status after them", ["status"]
)
ATTEMPTS_RECORDED = {
    status: _ATTEMPTS.labels(status=status.value)
    for status in (DeliveryStatus.SUCCESS, DeliveryStatus.FAILED, DeliveryStatus.EXHAUSTED)
}
ATTEMPT_SECONDS = Histogram(
    "dps_webhooks_attempt_duration_seconds",
    "Delivery attempts' duration, recorded or not",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 7.5, 10),  # an attempt ends at 10 s at most
)
ATTEMPTS_IN_FLIGHT = Gauge(
    "dps_webhooks_attempts_in_flight",
    "Attempts being made on the worker's threads and not yet recorded",
    multiprocess_mode="livesum",  # summed over live processes where several share a metrics directory
)
LEASES_LOST = Counter(
    "dps_webhooks_leases_lost_total", "Attempt results not recorded: another worker had taken the delivery over"
)
ENDPOINTS_DISABLED = Counter(
    "dps_webhooks_endpoints_disabled_total", "Endpoints disabled after too many consecutive failed deliveries"
)

EVENTS_ACCEPTED = Counter("dps_webhooks_events_accepted_total", "Events stored from the queue and acknowledged")
DELIVERIES_CREATED = Counter("dps_webhooks_deliveries_created_total", "Deliveries created for accepted events")
DELIVERIES_HANDED_OVER = Counter(
    "dps_webhooks_deliveries_handed_over_total", "New deliveries stored already claimed for this worker's threads"
)
_EVENTS_REJECTED = Counter(
    "dps_webhooks_events_rejected_total", "Messages rejected without requeue, by reason", ["reason"]
)
REJECTED_NOT_AN_ENVELOPE = _EVENTS_REJECTED.labels(reason="not_an_envelope")
REJECTED_BY_THE_DATABASE = _EVENTS_REJECTED.labels(reason="refused_by_database")

_TRANSACTIONS = Counter(
    "dps_webhooks_claim_record_transactions_total",
    "The delivery loop's transactions (record the results that are in, claim due deliveries), by result",
    ["result"],
)
TRANSACTIONS_COMMITTED = _TRANSACTIONS.labels(result="committed")
TRANSACTIONS_FAILED = _TRANSACTIONS.labels(result="failed")
DELIVERIES_CLAIMED = Counter(
    "dps_webhooks_deliveries_claimed_total", "Due deliveries claimed from the database by the delivery loop"
)
