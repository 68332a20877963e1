"""The quote snapshot the billing connector reads (it never reads the api's tables).

The snapshot is the api's ``dps_api.domain.quote_snapshot.QuoteSnapshot``, built from the same
``QuoteView`` the API renders, by the pricing domain (``dps_api.domain.quote_snapshot.snapshot``).
"""

from __future__ import annotations

from uuid import UUID

from sqlalchemy import select

from dps_common.db import Transactions

from dps_api.db.models.opportunities import Opportunity
from dps_api.db.quotes import find_quote, full_view
from dps_api.domain.quote_snapshot import QuoteSnapshot, snapshot


class QuoteSnapshotService:
    def __init__(self, tx: Transactions):
        self._tx = tx

    def get(self, organization_id: UUID, quote_id: UUID) -> QuoteSnapshot:
        """NotFound for an unknown quote or another organization's."""
        with self._tx.read() as session:
            quote = find_quote(session, organization_id, quote_id)
            crm_id = None
            if quote.opportunity_id is not None:
                crm_id = session.scalar(
                    select(Opportunity.crm_id).where(
                        Opportunity.id == quote.opportunity_id, Opportunity.organization_id == organization_id
                    )
                )
            return snapshot(full_view(session, quote), crm_id)
