"""Quote rows inside a caller's transaction: find and lock, the editing rules, totals, rendering.

Shared by the quote, quote-line and quote-approval use cases. Nothing here commits.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
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
from dps_api.domain.money import format_decimal, format_money, format_price
from dps_api.domain.pricing import LineTerms, PricedLine, Tier, price_line, quote_totals
from dps_api.services.outbox import record_event

STATUSES = ("DRAFT", "PENDING_APPROVAL", "APPROVED", "REJECTED")
REOPENED_BY_EDIT = ("APPROVED", "REJECTED")


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
    if quote.status == "PENDING_APPROVAL":
        raise Conflict(
            "The quote is pending approval; recall the approval (DELETE /pricing-quotes/{id}/approval) to edit it.",
            code="quote_pending_approval",
        )
    return quote


def finish_edit(session: Session, quote: Quote, lines: list[QuoteLine], now: datetime) -> dict[str, Any]:
    """Totals, status and events after an edit: an APPROVED or REJECTED quote goes back to DRAFT
    (``quote.reopened`` follows ``quote.updated``), since what was decided on no longer exists."""
    reopened = quote.status in REOPENED_BY_EDIT
    if reopened:
        quote.status = "DRAFT"
    quote.updated_at = now
    refresh_totals(quote, lines)
    view = snapshot(session, quote)
    record_event(session, "quote.updated", quote.organization_id, view, now)
    if reopened:
        record_event(session, "quote.reopened", quote.organization_id, view, now)
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


def tiers_of(line: QuoteLine) -> tuple[Tier, ...]:
    return tuple(
        Tier(None if t["upTo"] is None else Decimal(t["upTo"]), Decimal(t["unitPrice"])) for t in line.tiers
    )


def line_terms(line: QuoteLine) -> LineTerms:
    """The stored line as pricing input: its pinned prices and the negotiated side of its price."""
    return LineTerms(
        price_model=line.price_model,
        price_frequency=line.price_frequency,
        quantity=line.quantity,
        list_unit_price=line.catalog_unit_price,
        tiers=tiers_of(line),
        discount_percent=line.discount_percent if line.price_basis == "DISCOUNT" else None,
        net_unit_price=line.net_unit_price if line.price_basis == "NET" else None,
        locked=line.locked,
    )


def apply_pricing(line: QuoteLine, priced: PricedLine) -> None:
    line.list_unit_price = priced.list_unit_price
    line.net_unit_price = priced.net_unit_price
    line.discount_percent = priced.discount_percent
    line.amount_per_billing_period = priced.amount_per_billing_period if priced.recurring else None
    line.one_time_amount = priced.one_time_amount


def refresh_totals(quote: Quote, lines: list[QuoteLine]) -> list[PricedLine]:
    """Re-price every line from its stored terms and store the quote's totals."""
    priced = [price_line(line_terms(line), quote.billing_frequency, quote.currency) for line in lines]
    for line, result in zip(lines, priced):
        apply_pricing(line, result)
    totals = quote_totals(priced, quote.billing_frequency, quote.subscription_term_months, quote.currency)
    quote.recurring_per_billing_period = totals.recurring_per_billing_period
    quote.one_time = totals.one_time
    quote.total_contract_value = totals.total_contract_value
    quote.list_total_contract_value = totals.list_total_contract_value
    quote.max_discount_percent = totals.max_discount_percent
    quote.locked_below_list = totals.locked_below_list
    quote.line_count = len(lines)
    return priced


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


def _money(amount: Decimal | None, currency: str) -> str | None:
    return None if amount is None else format_money(amount, currency)


def render_line(line: QuoteLine, currency: str) -> dict[str, Any]:
    return {
        "id": str(line.id),
        "position": line.position,
        "productId": str(line.product_id),
        "productSpecId": line.product_spec_id,
        "productVersion": line.product_version,
        "productName": line.product_name,
        "productShortName": line.product_short_name,
        "customName": line.custom_name,
        "priceModel": line.price_model,
        "priceFrequency": line.price_frequency,
        "locked": line.locked,
        "quantity": format_decimal(line.quantity),
        "listUnitPrice": format_price(line.list_unit_price, currency),
        "discountPercent": format(line.discount_percent, "f"),
        "netUnitPrice": format_price(line.net_unit_price, currency),
        "amountPerBillingPeriod": _money(line.amount_per_billing_period, currency),
        "oneTimeAmount": _money(line.one_time_amount, currency),
    }


def render_quote(quote: Quote, lines: list[QuoteLine] | None) -> dict[str, Any]:
    """The API's rendering of a quote, also its events' snapshot; ``lines=None`` for list items."""
    currency = quote.currency
    view: dict[str, Any] = {
        "id": str(quote.id),
        "name": quote.name,
        "opportunityId": str(quote.opportunity_id) if quote.opportunity_id else None,
        "ownerUserId": str(quote.owner_user_id),
        "status": quote.status,
        "currency": currency,
        "billingFrequency": quote.billing_frequency,
        "subscriptionTermMonths": quote.subscription_term_months,
        "startDate": quote.start_date,
        "endDate": quote.end_date,
        "pricebookId": str(quote.pricebook_id) if quote.pricebook_id else None,
        "pricebookVersion": quote.pricebook_version,
        "lockedBelowList": quote.locked_below_list,
        "lineCount": quote.line_count,
        "totals": {
            "recurringPerBillingPeriod": format_money(quote.recurring_per_billing_period, currency),
            "oneTime": format_money(quote.one_time, currency),
            "totalContractValue": format_money(quote.total_contract_value, currency),
            "listTotalContractValue": format_money(quote.list_total_contract_value, currency),
            "maxDiscountPercent": format(quote.max_discount_percent, "f"),
        },
        "createdAt": _utc(quote.created_at),
        "updatedAt": _utc(quote.updated_at),
    }
    if lines is not None:
        view["lines"] = [render_line(line, currency) for line in lines]
    return view


def snapshot(session: Session, quote: Quote) -> dict[str, Any]:
    """The full rendering (with lines) after pending changes are flushed."""
    session.flush()
    return render_quote(quote, quote_lines(session, quote))
