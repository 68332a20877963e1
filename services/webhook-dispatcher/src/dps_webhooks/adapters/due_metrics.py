"""The delivery backlog on the dispatcher's ``/metrics``, read at each scrape (one index-backed query
over ``ix_webhook_deliveries_due``), wherever the workers are:

- ``dps_webhooks_deliveries_due``: deliveries whose attempt time has passed (due now, not yet taken);
- ``dps_webhooks_oldest_due_age_seconds``: how long the most overdue of them has waited (0: none).

A claimed delivery is scheduled a lease ahead, so it is not due while its attempt runs."""

from __future__ import annotations

from sqlalchemy import func, select

from dps_common.db import Transactions
from dps_common.runtime_metrics import ScrapeGauges

from dps_webhooks.db.models import WebhookDelivery

DUE = "dps_webhooks_deliveries_due"
OLDEST_DUE = "dps_webhooks_oldest_due_age_seconds"
_BACKLOG = select(
    func.count(), func.extract("epoch", func.now() - func.min(WebhookDelivery.next_attempt_at))
).where(WebhookDelivery.next_attempt_at <= func.now())


def deliveries_due(tx: Transactions) -> ScrapeGauges:
    def query() -> dict[str, float]:
        with tx.read() as session:
            count, age = session.execute(_BACKLOG).one()
        return {DUE: float(count), OLDEST_DUE: max(0.0, float(age or 0))}

    return ScrapeGauges(
        {DUE: "Deliveries due now and not yet taken by a worker",
         OLDEST_DUE: "Seconds the most overdue delivery has waited past its attempt time (0: none due)"},
        {},
        query,
    )
