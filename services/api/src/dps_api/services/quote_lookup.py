"""A quote's row found (and locked) inside a caller's transaction, or the 404 its absence answers.

Shared by the quote, quote-line, quote-approval and quote-snapshot use cases. Nothing here commits.
"""

from __future__ import annotations

from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.errors import not_found

from dps_api.db.models.quotes import Quote


def find_quote(session: Session, organization_id: UUID, quote_id: UUID, *, lock: bool = False) -> Quote:
    """The organization's quote; another organization's is as unknown as a missing one."""
    stmt = select(Quote).where(Quote.id == quote_id, Quote.organization_id == organization_id)
    quote = session.scalar(stmt.with_for_update() if lock else stmt)
    if quote is None:
        raise not_found("Pricing quote")
    return quote
