"""Quote lines: pinning a product into a line, the locked-price rule, and the line use cases."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from uuid import UUID

from sqlalchemy import update
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.db import Transactions
from dps_common.errors import Conflict, Forbidden, invalid_field, not_found

from dps_api.db.models.quotes import Quote, QuoteLine
from dps_api.domain.commands import NOT_SENT
from dps_api.domain.limits import MAX_LINES
from dps_api.domain.pricing import LineTerms, PricedLine, PricingError, price_line
from dps_api.domain.quote_commands import QuoteLineInput, UpdateQuoteLine
from dps_api.domain.quote_views import QuoteView
from dps_api.domain.vocabulary import PriceBasis, PriceFrequency, PriceModel
from dps_api.services.catalog_lookup import (
    PinnedPricebook,
    PricedProduct,
    pinned_pricebook,
    price_product,
)
from dps_api.services.quote_records import (
    apply_pricing,
    begin_edit,
    finish_edit,
    line_terms,
    naming_field,
    quote_lines,
    tiers_of,
)


def quote_pricebook(session: Session, quote: Quote) -> PinnedPricebook | None:
    if quote.pricebook_id is None or quote.pricebook_version is None:
        return None
    return pinned_pricebook(session, quote.organization_id, quote.pricebook_id, quote.pricebook_version)


def copy_catalog_prices(line: QuoteLine, product: PricedProduct) -> None:
    """The pinned version's prices in the quote currency, copied so catalog edits never reach the line."""
    line.catalog_unit_price = product.list_unit_price
    line.tiers = [
        {"upTo": None if up_to is None else str(up_to), "unitPrice": str(unit_price)}
        for up_to, unit_price in product.tiers
    ]


def price_checked(
    principal: Principal, quote: Quote, terms: LineTerms, field: str, *, price_set: bool, was_below_list: bool
) -> PricedLine:
    """Prices ``terms`` for the quote; 400 naming ``<field>.<input>`` for unpriceable terms, 403
    ``locked_price`` when a key without the locked-prices scope sets a locked product's price below
    list or brings it there. ``field`` is the line's place in the body ("" when the body is the line)."""
    try:
        priced = price_line(terms, quote.billing_frequency, quote.currency)
    except PricingError as exc:
        raise invalid_field(f"{field}.{exc.field}" if field else exc.field, exc.message) from None
    if priced.locked_below_list and (price_set or not was_below_list) and not principal.has(Scope.LOCKED_PRICES_WRITE):
        raise Forbidden(
            f"{field + ': ' if field else ''}the product is locked; a price below its list price needs a key "
            f"with the '{Scope.LOCKED_PRICES_WRITE}' scope (admin).",
            code="locked_price",
        )
    return priced


def new_line(
    session: Session,
    principal: Principal,
    quote: Quote,
    pricebook: PinnedPricebook | None,
    wanted: QuoteLineInput,
    position: int,
    field: str,
    now: datetime,
) -> QuoteLine:
    """A priced line pinning the product's current version (not yet added to the session)."""
    with naming_field(f"{field}.productId" if field else "productId"):
        product = price_product(session, quote.organization_id, wanted.product_id, quote.currency, pricebook=pricebook)
    line = QuoteLine(
        quote_id=quote.id,
        organization_id=quote.organization_id,
        position=position,
        product_id=product.product_id,
        product_version=product.version,
        product_spec_id=product.spec_id,
        product_name=product.name,
        product_short_name=product.short_name,
        custom_name=wanted.custom_name,
        price_model=PriceModel(product.price_model),
        price_frequency=PriceFrequency(product.price_frequency),
        locked=product.locked,
        quantity=wanted.quantity,
        created_at=now,
        updated_at=now,
    )
    copy_catalog_prices(line, product)
    terms = LineTerms(
        price_model=line.price_model,
        price_frequency=line.price_frequency,
        quantity=line.quantity,
        list_unit_price=line.catalog_unit_price,
        tiers=tiers_of(line),
        discount_percent=wanted.discount_percent,
        net_unit_price=wanted.net_unit_price,
        locked=line.locked,
    )
    priced = price_checked(principal, quote, terms, field, price_set=True, was_below_list=False)
    line.price_basis = PriceBasis.NET if wanted.net_unit_price is not None else PriceBasis.DISCOUNT
    apply_pricing(line, priced)
    return line


def _find_line(session: Session, quote: Quote, line_id: UUID) -> QuoteLine:
    line = session.get(QuoteLine, line_id)
    if line is None or line.quote_id != quote.id or line.organization_id != quote.organization_id:
        raise not_found("Quote line")
    return line


class QuoteLineService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime]):
        self._tx = tx
        self._now = now

    def add(self, principal: Principal, quote_id: UUID, wanted: QuoteLineInput) -> QuoteView:
        with self._tx() as session:
            quote = begin_edit(session, principal, quote_id)
            lines = quote_lines(session, quote)
            if len(lines) >= MAX_LINES:
                raise Conflict(f"A quote holds at most {MAX_LINES} lines.", code="quote_line_limit")
            now = self._now()
            line = new_line(session, principal, quote, quote_pricebook(session, quote), wanted, len(lines) + 1, "", now)
            session.add(line)
            return finish_edit(session, quote, [*lines, line], now)

    def update(self, principal: Principal, quote_id: UUID, line_id: UUID, edit: UpdateQuoteLine) -> QuoteView:
        price_set = edit.discount_percent is not NOT_SENT or edit.net_unit_price is not NOT_SENT
        if edit.discount_percent is not NOT_SENT and edit.net_unit_price is not NOT_SENT:
            raise invalid_field("netUnitPrice", "give either discountPercent or netUnitPrice, not both")
        with self._tx() as session:
            quote = begin_edit(session, principal, quote_id)
            line = _find_line(session, quote, line_id)
            was_below_list = line.locked and line.net_unit_price < line.list_unit_price
            if edit.custom_name is not NOT_SENT:
                line.custom_name = edit.custom_name
            if edit.quantity is not NOT_SENT:
                line.quantity = edit.quantity
            if edit.discount_percent is not NOT_SENT:
                line.price_basis, line.discount_percent = PriceBasis.DISCOUNT, edit.discount_percent
            if edit.net_unit_price is not NOT_SENT:
                line.price_basis, line.net_unit_price = PriceBasis.NET, edit.net_unit_price
            priced = price_checked(
                principal, quote, line_terms(line), "", price_set=price_set, was_below_list=was_below_list
            )
            apply_pricing(line, priced)
            line.updated_at = now = self._now()
            return finish_edit(session, quote, quote_lines(session, quote), now)

    def delete(self, principal: Principal, quote_id: UUID, line_id: UUID) -> None:
        with self._tx() as session:
            quote = begin_edit(session, principal, quote_id)
            line = _find_line(session, quote, line_id)
            session.delete(line)
            session.flush()
            # keep positions contiguous: 1..n
            session.execute(
                update(QuoteLine)
                .where(QuoteLine.quote_id == quote.id, QuoteLine.position > line.position)
                .values(position=QuoteLine.position - 1)
                .execution_options(synchronize_session="fetch")
            )
            finish_edit(session, quote, quote_lines(session, quote), self._now())
