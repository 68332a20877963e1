"""Quote lines: pinning a product into a line, the locked-price rule, and the line use cases."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.db import Transactions
from dps_common.errors import Conflict, Forbidden, invalid_field, not_found
from dps_common.ids import new_id

from dps_api.db.models.quotes import Quote
from dps_api.db.quotes import LineRow, delete_line, insert_lines, lines_for_edit
from dps_api.domain.commands import NOT_SENT
from dps_api.domain.events import Change
from dps_api.domain.limits import MAX_LINES
from dps_api.domain.pricing import LineTerms, PricedLine, PricingError, Tier, price_line
from dps_api.domain.quote_commands import QuoteLineInput, UpdateQuoteLine
from dps_api.domain.quote_views import QuoteView
from dps_api.domain.vocabulary import PriceBasis
from dps_api.services.catalog_lookup import (
    CatalogPrices,
    PinnedPricebook,
    PricedProduct,
    pinned_pricebook,
)
from dps_api.services.outbox import Outbox
from dps_api.services.quote_edits import (
    apply_pricing,
    begin_edit,
    finish_edit,
    line_terms,
    naming_field,
)


def quote_pricebook(session: Session, quote: Quote) -> PinnedPricebook | None:
    if quote.pricebook_id is None or quote.pricebook_version is None:
        return None
    return pinned_pricebook(session, quote.organization_id, quote.pricebook_id, quote.pricebook_version)


def copy_catalog_prices(line: LineRow, product: PricedProduct) -> None:
    """The pinned version's prices in the quote currency, copied so catalog edits never reach the line."""
    line.catalog_unit_price = product.list_unit_price
    line.tiers = catalog_tiers(product)


def catalog_tiers(product: PricedProduct) -> list[dict[str, Any]]:
    """A line's ``tiers`` column: the pinned version's tiers in the quote currency."""
    return [
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


def new_lines(
    session: Session,
    principal: Principal,
    quote: Quote,
    pricebook: PinnedPricebook | None,
    wanted: Sequence[QuoteLineInput],
    first_position: int,
    field: Callable[[int], str],
    now: datetime,
) -> tuple[list[LineRow], list[PricedLine]]:
    """Priced lines pinning each product's current version (to be written with ``insert_lines``), and
    their pricing; the catalog read in one query per table. ``field(i)`` is line i's place in the body
    ("" when the body is the line). Checked line by line, in order: the first line that fails gives
    the error that pricing it alone gives."""
    prices = CatalogPrices.load(
        session, quote.organization_id, [(line.product_id, None) for line in wanted], quote.currency,
        pricebook=pricebook,
    )
    made = [
        _new_line(principal, quote, prices, line, first_position + i, field(i), now) for i, line in enumerate(wanted)
    ]
    return [line for line, _ in made], [priced for _, priced in made]


def _new_line(
    principal: Principal,
    quote: Quote,
    prices: CatalogPrices,
    wanted: QuoteLineInput,
    position: int,
    field: str,
    now: datetime,
) -> tuple[LineRow, PricedLine]:
    with naming_field(f"{field}.productId" if field else "productId"):
        product = prices.price(wanted.product_id)
    terms = LineTerms(
        price_model=product.price_model,  # members already (catalog_lookup)
        price_frequency=product.price_frequency,
        quantity=wanted.quantity,
        list_unit_price=product.list_unit_price,
        tiers=tuple(Tier(up_to, unit_price) for up_to, unit_price in product.tiers),
        discount_percent=wanted.discount_percent,
        net_unit_price=wanted.net_unit_price,
        locked=product.locked,
    )
    priced = price_checked(principal, quote, terms, field, price_set=True, was_below_list=False)
    line = LineRow(
        id=new_id(),
        quote_id=quote.id,
        organization_id=quote.organization_id,
        position=position,
        product_id=product.product_id,
        product_version=product.version,
        product_spec_id=product.spec_id,
        product_name=product.name,
        product_short_name=product.short_name,
        custom_name=wanted.custom_name,
        price_model=terms.price_model,
        price_frequency=terms.price_frequency,
        locked=product.locked,
        catalog_unit_price=product.list_unit_price,
        tiers=catalog_tiers(product),
        price_basis=PriceBasis.NET if wanted.net_unit_price is not None else PriceBasis.DISCOUNT,
        quantity=wanted.quantity,
        list_unit_price=priced.list_unit_price,
        net_unit_price=priced.net_unit_price,
        discount_percent=priced.discount_percent,
        amount_per_billing_period=priced.amount_per_billing_period if priced.recurring else None,
        one_time_amount=priced.one_time_amount,
        created_at=now,
        updated_at=now,
    )
    return line, priced


def _find_line(lines: Sequence[LineRow], line_id: UUID) -> LineRow:
    """The line among the quote's lines (read for its organization); another quote's is unknown."""
    for line in lines:
        if line.id == line_id:
            return line
    raise not_found("Quote line")


class QuoteLineService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    def add(self, principal: Principal, quote_id: UUID, wanted: QuoteLineInput) -> Change[QuoteView]:
        with self._tx() as session:
            quote = begin_edit(session, principal, quote_id)
            lines = lines_for_edit(session, quote)
            if len(lines) >= MAX_LINES:
                raise Conflict(f"A quote holds at most {MAX_LINES} lines.", code="quote_line_limit")
            now = self._now()
            pricebook = quote_pricebook(session, quote)
            [line], _ = new_lines(session, principal, quote, pricebook, [wanted], len(lines) + 1, lambda _: "", now)
            insert_lines(session, [line])
            return finish_edit(self._outbox, session, quote, [*lines, line], now)

    def update(self, principal: Principal, quote_id: UUID, line_id: UUID, edit: UpdateQuoteLine) -> Change[QuoteView]:
        price_set = edit.discount_percent is not NOT_SENT or edit.net_unit_price is not NOT_SENT
        if edit.discount_percent is not NOT_SENT and edit.net_unit_price is not NOT_SENT:
            raise invalid_field("netUnitPrice", "give either discountPercent or netUnitPrice, not both")
        with self._tx() as session:
            quote = begin_edit(session, principal, quote_id)
            lines = lines_for_edit(session, quote)
            line = _find_line(lines, line_id)
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
            return finish_edit(self._outbox, session, quote, lines, now)

    def delete(self, principal: Principal, quote_id: UUID, line_id: UUID) -> None:
        with self._tx() as session:
            quote = begin_edit(session, principal, quote_id)
            lines = lines_for_edit(session, quote)
            line = _find_line(lines, line_id)
            delete_line(session, line)
            rest = [other for other in lines if other is not line]
            for other in rest:  # keep positions contiguous: 1..n
                if other.position > line.position:
                    other.position -= 1
            finish_edit(self._outbox, session, quote, rest, self._now())
