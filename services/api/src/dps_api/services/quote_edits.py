"""A quote's edit inside a caller's transaction: the editing rules (who, in which status), the
re-priced lines and totals, and the ``quote.updated``/``quote.reopened`` events. The rows are read and
written by the quote store (``dps_api.db.quotes``).

Shared by the quote and quote-line use cases. Nothing here commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from decimal import Decimal
from uuid import UUID

from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ValidationFailed,
    invalid_field,
)

from dps_api.db.models.quotes import Quote
from dps_api.db.quotes import LineRow, find_quote, save_lines, view_of
from dps_api.domain.events import Change
from dps_api.domain.pricing import LineTerms, PricedLine, Tier, price_line, quote_totals
from dps_api.domain.quote_views import QuoteView
from dps_api.domain.vocabulary import PriceBasis, QuoteStatus
from dps_api.services.outbox import Outbox

REOPENED_BY_EDIT = frozenset({QuoteStatus.APPROVED, QuoteStatus.REJECTED})


@contextmanager
def naming_field(field: str) -> Iterator[None]:
    """A body's reference that the catalog or another table cannot resolve is a 400 naming the field
    (path ids give 404); the lookup's own validation codes are kept."""
    try:
        yield
    except NotFound as exc:
        raise invalid_field(field, f"{exc.detail[:-1]} in this organization.", "unknown_reference") from None
    except ValidationFailed as exc:
        if "errors" in exc.extra:
            raise
        raise invalid_field(field, exc.detail, exc.code) from None


def check_owner(principal: Principal, owner_user_id: UUID) -> None:
    if owner_user_id != principal.user_id and not principal.has(Scope.QUOTES_ANY):
        raise Forbidden(
            f"Only the quote's owner, or a key with the '{Scope.QUOTES_ANY}' scope (admin), may edit it or "
            "act for another user.",
            code="not_quote_owner",
        )


def begin_edit(session: Session, principal: Principal, quote_id: UUID) -> Quote:
    """The quote, locked for this transaction, once the principal may edit it in its status."""
    quote = find_quote(session, principal.organization_id, quote_id, lock=True)
    check_owner(principal, quote.owner_user_id)
    if quote.status == QuoteStatus.PENDING_APPROVAL:
        raise Conflict(
            "The quote is pending approval; recall the approval (DELETE /pricing-quotes/{id}/approval) to edit it.",
            code="quote_pending_approval",
        )
    return quote


def finish_edit(outbox: Outbox, session: Session, quote: Quote, lines: Sequence[LineRow], now: datetime) -> Change[QuoteView]:
    """Totals, status and events after an edit: an APPROVED or REJECTED quote goes back to DRAFT
    (``quote.reopened`` follows ``quote.updated``), since what was decided on no longer exists.
    ``lines``: all the quote's lines, as they are now (the view is made from them, not read again)."""
    reopened = quote.status in REOPENED_BY_EDIT
    if reopened:
        quote.status = QuoteStatus.DRAFT
    quote.updated_at = now
    refresh_totals(quote, lines)
    save_lines(session, quote, lines)
    session.flush()
    view = view_of(quote, lines)
    events = ("quote.updated", "quote.reopened") if reopened else ("quote.updated",)
    return Change(view, outbox.record(session, view, quote.organization_id, now, *events))


def tiers_of(line: LineRow) -> tuple[Tier, ...]:
    return tuple(
        Tier(None if t["upTo"] is None else Decimal(t["upTo"]), Decimal(t["unitPrice"])) for t in line.tiers
    )


def line_terms(line: LineRow) -> LineTerms:
    """The stored line as pricing input: its pinned prices and the negotiated side of its price."""
    return LineTerms(
        price_model=line.price_model,
        price_frequency=line.price_frequency,
        quantity=line.quantity,
        list_unit_price=line.catalog_unit_price,
        tiers=tiers_of(line),
        discount_percent=line.discount_percent if line.price_basis == PriceBasis.DISCOUNT else None,
        net_unit_price=line.net_unit_price if line.price_basis == PriceBasis.NET else None,
        locked=line.locked,
    )


def apply_pricing(line: LineRow, priced: PricedLine) -> None:
    _set(line, "list_unit_price", priced.list_unit_price)
    _set(line, "net_unit_price", priced.net_unit_price)
    _set(line, "discount_percent", priced.discount_percent)
    _set(line, "amount_per_billing_period", priced.amount_per_billing_period if priced.recurring else None)
    _set(line, "one_time_amount", priced.one_time_amount)


def _set(line: LineRow, name: str, value: Decimal | None) -> None:
    """Sets a priced column unless it already holds exactly that value (the same digits and exponent:
    ``1.0`` and ``1.00`` render differently). A line re-priced to what it holds keeps the objects it
    was read with, so ``save_lines`` writes an edit of one line of 500 as that one line."""
    old = getattr(line, name)
    if old is None or value is None:
        if old is not value:
            setattr(line, name, value)
    elif old.compare_total(value):  # zero only for the same digits, exponent and sign
        setattr(line, name, value)


def refresh_totals(quote: Quote, lines: Sequence[LineRow]) -> list[PricedLine]:
    """Re-price every line from its stored terms and store the quote's totals."""
    priced = [price_line(line_terms(line), quote.billing_frequency, quote.currency) for line in lines]
    for line, result in zip(lines, priced):
        apply_pricing(line, result)
    store_totals(quote, priced)
    return priced


def store_totals(quote: Quote, priced: Sequence[PricedLine]) -> None:
    """The quote's totals and line count from its priced lines (one per line)."""
    totals = quote_totals(priced, quote.billing_frequency, quote.subscription_term_months, quote.currency)
    quote.recurring_per_billing_period = totals.recurring_per_billing_period
    quote.one_time = totals.one_time
    quote.total_contract_value = totals.total_contract_value
    quote.list_total_contract_value = totals.list_total_contract_value
    quote.max_discount_percent = totals.max_discount_percent
    quote.locked_below_list = totals.locked_below_list
    quote.line_count = len(priced)
