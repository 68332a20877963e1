"""Quote rows inside a caller's transaction: find and lock, the editing rules, totals, and the rows
turned into the domain's ``QuoteView``.

Shared by the quote, quote-line and quote-approval use cases. Nothing here commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ValidationFailed,
    invalid_field,
    not_found,
)

from dps_api.db.models.quotes import Quote, QuoteLine
from dps_api.domain.pricing import LineTerms, PricedLine, Tier, price_line, quote_totals
from dps_api.domain.quote_views import QuoteLineView, QuoteView
from dps_api.domain.vocabulary import PriceBasis, PriceFrequency, PriceModel, QuoteStatus
from dps_api.schemas.quotes import render_quote
from dps_api.services.outbox import record_event
from dps_api.services.quote_reads import quote_header_view, stored_line_views

REOPENED_BY_EDIT = frozenset({QuoteStatus.APPROVED, QuoteStatus.REJECTED})


@dataclass(slots=True)
class NewLine:
    """A line about to be inserted (``quote_lines.insert_lines``): the columns of ``QuoteLine``, as a
    plain object. Hundreds of ORM instances cost more to build than to price and insert."""

    id: UUID
    quote_id: UUID
    organization_id: UUID
    position: int
    product_id: UUID
    product_version: int
    product_spec_id: str
    product_name: str
    product_short_name: str | None
    custom_name: str | None
    price_model: PriceModel
    price_frequency: PriceFrequency
    locked: bool
    catalog_unit_price: Decimal
    tiers: list[dict[str, Any]]
    price_basis: PriceBasis
    quantity: Decimal
    list_unit_price: Decimal
    net_unit_price: Decimal
    discount_percent: Decimal
    amount_per_billing_period: Decimal | None
    one_time_amount: Decimal | None
    created_at: datetime
    updated_at: datetime


# a stored line or one about to be
LineRecord = QuoteLine | NewLine


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


def finish_edit(session: Session, quote: Quote, lines: Sequence[LineRecord], now: datetime) -> QuoteView:
    """Totals, status and events after an edit: an APPROVED or REJECTED quote goes back to DRAFT
    (``quote.reopened`` follows ``quote.updated``), since what was decided on no longer exists.
    ``lines``: all the quote's lines, as they are now (the view is made from them, not read again)."""
    reopened = quote.status in REOPENED_BY_EDIT
    if reopened:
        quote.status = QuoteStatus.DRAFT
    quote.updated_at = now
    refresh_totals(quote, lines)
    session.flush()
    view = quote_view(quote, lines)
    data = render_quote(view)
    record_event(session, "quote.updated", quote.organization_id, data, now)
    if reopened:
        record_event(session, "quote.reopened", quote.organization_id, data, now)
    return view


def find_quote(session: Session, organization_id: UUID, quote_id: UUID, *, lock: bool = False) -> Quote:
    """The organization's quote; another organization's is as unknown as a missing one."""
    stmt = select(Quote).where(Quote.id == quote_id, Quote.organization_id == organization_id)
    quote = session.scalar(stmt.with_for_update() if lock else stmt)
    if quote is None:
        raise not_found("Pricing quote")
    return quote


def quote_lines(session: Session, quote: Quote) -> list[QuoteLine]:
    stmt = select(QuoteLine).where(QuoteLine.quote_id == quote.id, QuoteLine.organization_id == quote.organization_id)
    return list(session.scalars(stmt.order_by(QuoteLine.position, QuoteLine.id)))


def tiers_of(line: LineRecord) -> tuple[Tier, ...]:
    return tuple(
        Tier(None if t["upTo"] is None else Decimal(t["upTo"]), Decimal(t["unitPrice"])) for t in line.tiers
    )


def line_terms(line: LineRecord) -> LineTerms:
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


def apply_pricing(line: LineRecord, priced: PricedLine) -> None:
    _set(line, "list_unit_price", priced.list_unit_price)
    _set(line, "net_unit_price", priced.net_unit_price)
    _set(line, "discount_percent", priced.discount_percent)
    _set(line, "amount_per_billing_period", priced.amount_per_billing_period if priced.recurring else None)
    _set(line, "one_time_amount", priced.one_time_amount)


def _set(line: LineRecord, name: str, value: Decimal | None) -> None:
    """Sets a priced column unless it already holds exactly that value (the same digits and exponent:
    ``1.0`` and ``1.00`` render differently). A line re-priced to what it holds stays clean, so
    flushing an edit of one line of 500 does not look at the other 499."""
    old = getattr(line, name)
    if old is None or value is None:
        if old is not value:
            setattr(line, name, value)
    elif old.as_tuple() != value.as_tuple():
        setattr(line, name, value)


def refresh_totals(quote: Quote, lines: Sequence[LineRecord]) -> list[PricedLine]:
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


def line_view(line: LineRecord) -> QuoteLineView:
    return QuoteLineView(
        id=line.id,
        position=line.position,
        product_id=line.product_id,
        product_spec_id=line.product_spec_id,
        product_version=line.product_version,
        product_name=line.product_name,
        product_short_name=line.product_short_name,
        custom_name=line.custom_name,
        price_model=line.price_model,
        price_frequency=line.price_frequency,
        locked=line.locked,
        quantity=line.quantity,
        list_unit_price=line.list_unit_price,
        discount_percent=line.discount_percent,
        net_unit_price=line.net_unit_price,
        amount_per_billing_period=line.amount_per_billing_period,
        one_time_amount=line.one_time_amount,
    )


def quote_view(quote: Quote, lines: Sequence[LineRecord] | None) -> QuoteView:
    """The quote as the use cases return it; ``lines=None`` for list items (read without lines)."""
    return quote_header_view(quote, None if lines is None else tuple(line_view(line) for line in lines))


def full_view(session: Session, quote: Quote) -> QuoteView:
    """The quote with its lines as stored, after pending changes are flushed. The lines are read
    straight into views (no ORM objects): the caller must not hold line objects with changes it has
    not flushed, and gets what the table holds."""
    session.flush()
    return quote_header_view(quote, stored_line_views(session, quote))
