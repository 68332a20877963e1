"""The connector's push backlog on its ``/metrics``, read at each scrape:
``dps_billing_pushes_queued`` (pushes waiting for a worker) and ``dps_billing_pushes_running``
(pushes a worker holds; a dead worker's stay counted until their lease ends and another takes them).
One query over the few active rows (``queued``/``running``: at most one per quote)."""

from __future__ import annotations

from sqlalchemy import func, select

from dps_common.db import Transactions
from dps_common.runtime_metrics import ScrapeGauges

from dps_billing.db.models.pushes import BillingPush

QUEUED = "dps_billing_pushes_queued"
RUNNING = "dps_billing_pushes_running"
_ACTIVE = (
    select(BillingPush.status, func.count())
    .where(BillingPush.status.in_(("queued", "running")))
    .group_by(BillingPush.status)
)


def pushes_backlog(tx: Transactions) -> ScrapeGauges:
    def query() -> dict[str, float]:
        with tx.read() as session:
            counts = {status: count for status, count in session.execute(_ACTIVE)}
        return {QUEUED: float(counts.get("queued", 0)), RUNNING: float(counts.get("running", 0))}

    return ScrapeGauges(
        {QUEUED: "Billing pushes queued, waiting for a worker", RUNNING: "Billing pushes a worker is running"},
        {},
        query,
    )
