"""``dps_outbox_oldest_unpublished_age_seconds{service}``: how long the oldest unpublished event of a
service's outbox has waited (0 when none waits), read at each scrape of the service's ``/metrics``.

One index-backed query (``min(occurred_at)`` over the partial index of unpublished rows): the relay
being down or stuck shows here, on the service's own endpoint, even when the relay serves nothing."""

from __future__ import annotations

from sqlalchemy import func, select

from dps_common.db import Transactions
from dps_common.outbox.table import OUTBOX
from dps_common.runtime_metrics import ScrapeGauges

NAME = "dps_outbox_oldest_unpublished_age_seconds"
_OLDEST = select(func.extract("epoch", func.now() - func.min(OUTBOX.c.occurred_at))).where(
    OUTBOX.c.published_at.is_(None)
)


def outbox_lag(service: str, tx: Transactions) -> ScrapeGauges:
    def query() -> dict[str, float]:
        with tx.read() as session:
            age = session.execute(_OLDEST).scalar()
        return {NAME: max(0.0, float(age or 0))}

    return ScrapeGauges(
        {NAME: "Seconds the oldest unpublished outbox event has waited for the relay (0: none waits)"},
        {"service": service},
        query,
    )
