"""What the approvals work needs from a quote, inside the approvals use case's own transaction.

The approvals work owns the state machine (which transitions are allowed, by whom); these helpers
only read the facts its rules evaluate, set the status it decides, and write the event. They never
commit.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from uuid import UUID

from sqlalchemy.orm import Session

from dps_api.db.quotes import find_quote, full_view
from dps_api.domain.approval_rules import QuoteTerms
from dps_api.domain.events import RecordedEvents
from dps_api.domain.vocabulary import QuoteStatus
from dps_api.services.outbox import Outbox


@dataclass(frozen=True)
class QuoteFacts:
    quote_id: UUID
    owner_user_id: UUID
    status: QuoteStatus
    line_count: int
    terms: QuoteTerms  # what the rules evaluate


# the quote's columns of the same names: a term the rules start to look at is declared once, in QuoteTerms
_TERMS = tuple(field.name for field in fields(QuoteTerms))


def lock_quote_facts(session: Session, organization_id: UUID, quote_id: UUID) -> QuoteFacts:
    """Locks the quote row (SELECT ... FOR UPDATE) until the caller's transaction ends, so no edit
    can slip in between evaluating the rules and changing the status. NotFound for an unknown quote
    or another organization's."""
    quote = find_quote(session, organization_id, quote_id, lock=True)
    return QuoteFacts(
        quote_id=quote.id,
        owner_user_id=quote.owner_user_id,
        status=quote.status,
        line_count=quote.line_count,
        terms=QuoteTerms(**{name: getattr(quote, name) for name in _TERMS}),
    )


def change_quote_status(
    outbox: Outbox,
    session: Session,
    organization_id: UUID,
    quote_id: UUID,
    status: QuoteStatus,
    now: datetime,
    event_type: str,
) -> RecordedEvents:
    """Sets the status and writes `event_type` (e.g. quote.submitted, quote.approved, quote.rejected,
    quote.recalled) to the outbox about the quote as it now is; returns the event. ValueError for a
    value that is not a ``QuoteStatus``."""
    status = QuoteStatus(status)
    quote = find_quote(session, organization_id, quote_id, lock=True)
    quote.status = status
    quote.updated_at = now
    return outbox.record(session, full_view(session, quote), organization_id, now, event_type)
