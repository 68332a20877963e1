"""Pricing quotes: list, read, create with lines, and header edits (which may re-price the lines)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import date, datetime
from typing import Any
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.db import Transactions
from dps_common.errors import ValidationFailed, invalid_field
from dps_common.ids import new_id
from dps_common.paging import PageRequest

from dps_api.db.models.identity import User
from dps_api.db.models.opportunities import Opportunity
from dps_api.db.models.quotes import Quote
from dps_api.db.quotes import LineRow, add_quote, full_view, lines_for_edit, quote_page, read_quote, view_of
from dps_api.domain.events import Change
from dps_api.domain.money import is_supported_currency
from dps_api.domain.pricing import carried_net_price
from dps_api.domain.quote_commands import CreateQuote, UpdateQuote
from dps_api.domain.quote_views import QuoteView
from dps_api.domain.vocabulary import PriceBasis, QuoteStatus
from dps_api.services.catalog_lookup import (
    CatalogPrices,
    PinnedPricebook,
    pin_pricebook,
)
from dps_api.services.outbox import Outbox
from dps_api.services.quote_edits import (
    begin_edit,
    check_owner,
    finish_edit,
    line_terms,
    naming_field,
    store_totals,
)
from dps_api.services.quote_lines import copy_catalog_prices, new_lines


@dataclass(frozen=True)
class QuoteFilters:
    status: QuoteStatus | None = None
    owner_user_id: UUID | None = None
    opportunity_id: UUID | None = None


def _check_currency(currency: str) -> None:
    if not is_supported_currency(currency):
        raise invalid_field("currency", "must be an ISO 4217 currency with minor units")


def _check_dates(start: date | None, end: date | None) -> None:
    if start is not None and end is not None and end < start:
        raise invalid_field("endDate", "must be on or after startDate")


def _check_opportunity(session: Session, organization_id: UUID, opportunity_id: UUID) -> None:
    found = session.scalar(
        select(Opportunity.id).where(Opportunity.id == opportunity_id, Opportunity.organization_id == organization_id)
    )
    if found is None:
        raise invalid_field("opportunityId", "Opportunity not found in this organization.", "unknown_reference")


def _check_new_owner(session: Session, principal: Principal, owner_user_id: UUID) -> None:
    check_owner(principal, owner_user_id)
    found = session.scalar(
        select(User.id).where(User.id == owner_user_id, User.organization_id == principal.organization_id)
    )
    if found is None:
        raise invalid_field("ownerUserId", "User not found in this organization.", "unknown_reference")


def _pin(session: Session, principal: Principal, pricebook_id: UUID) -> PinnedPricebook:
    with naming_field("pricebookId"):
        return pin_pricebook(session, principal, pricebook_id)


def _currency_mismatch(field: str, pricebook: PinnedPricebook, currency: str) -> ValidationFailed:
    return invalid_field(
        field,
        f"the pricebook's currency {pricebook.currency} differs from the quote currency {currency}; "
        "send a matching currency and pricebookId, or pricebookId null for list prices",
        "pricebook_currency_mismatch",
    )


# what a create resolves rather than copies; the command's other fields are stored as sent
_RESOLVED = frozenset({"owner_user_id", "currency", "pricebook_id", "lines"})
_COPIED = tuple(f.name for f in fields(CreateQuote) if f.name not in _RESOLVED)


def _copied(wanted: CreateQuote) -> dict[str, Any]:
    return {name: getattr(wanted, name) for name in _COPIED}


class QuoteService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    def list(self, principal: Principal, filters: QuoteFilters, page: PageRequest) -> list[QuoteView]:
        with self._tx.read() as session:
            return quote_page(session, principal.organization_id, page, **asdict(filters))

    def get(self, principal: Principal, quote_id: UUID) -> QuoteView:
        with self._tx.read_cursor() as cursor:
            return read_quote(cursor, principal.organization_id, quote_id)

    def create(self, principal: Principal, wanted: CreateQuote) -> Change[QuoteView]:
        _check_dates(wanted.start_date, wanted.end_date)
        if wanted.currency is not None:
            _check_currency(wanted.currency)
        elif wanted.pricebook_id is None:
            raise invalid_field("currency", "is required when no pricebookId is given")
        org_id = principal.organization_id
        owner = wanted.owner_user_id or principal.user_id
        with self._tx() as session:
            _check_new_owner(session, principal, owner)
            if wanted.opportunity_id is not None:
                _check_opportunity(session, org_id, wanted.opportunity_id)
            pricebook = _pin(session, principal, wanted.pricebook_id) if wanted.pricebook_id is not None else None
            if wanted.currency is not None:
                currency = wanted.currency
            elif pricebook is not None:
                currency = pricebook.currency
            else:  # refused above: no currency needs a pricebook
                raise invalid_field("currency", "is required when no pricebookId is given")
            if pricebook is not None and pricebook.currency != currency:
                raise _currency_mismatch("currency", pricebook, currency)
            now = self._now()
            quote = Quote(
                **_copied(wanted),
                id=new_id(),
                organization_id=org_id,
                owner_user_id=owner,
                status=QuoteStatus.DRAFT,
                currency=currency,
                pricebook_id=pricebook.id if pricebook else None,
                pricebook_version=pricebook.version if pricebook else None,
                created_at=now,
                updated_at=now,
            )
            # priced before the quote joins the session: the catalog queries must not flush it half-made
            lines, priced = new_lines(
                session, principal, quote, pricebook, wanted.lines, 1, lambda i: f"lines[{i}]", now
            )
            store_totals(quote, priced)  # lines just priced re-price to the same (refresh_totals)
            add_quote(session, quote, lines)
            view = view_of(quote, lines)
            return Change(view, self._outbox.record(session, view, org_id, now, "quote.created"))

    def update(self, principal: Principal, quote_id: UUID, edit: UpdateQuote) -> Change[QuoteView]:
        sent = edit.sent()  # by the quote's attribute names
        with self._tx() as session:
            quote = begin_edit(session, principal, quote_id)
            changes = {column: value for column, value in sent.items() if getattr(quote, column) != value}
            if not changes:
                return Change(full_view(session, quote), None)  # nothing changed: no write, no event, status kept
            self._check_header(session, principal, quote, changes)
            reprice = "currency" in changes or "pricebook_id" in changes
            pricebook = self._new_pricebook(session, principal, quote, changes) if reprice else None
            now = self._now()
            for column, value in changes.items():
                setattr(quote, column, value)
            if reprice:
                quote.pricebook_id = pricebook.id if pricebook else None
                quote.pricebook_version = pricebook.version if pricebook else None
                field = "pricebookId" if "pricebook_id" in changes else "currency"
                lines = self._reprice(session, quote, pricebook, field, now)
            else:
                lines = lines_for_edit(session, quote)
            return finish_edit(self._outbox, session, quote, lines, now)

    @staticmethod
    def _check_header(session: Session, principal: Principal, quote: Quote, changes: dict[str, Any]) -> None:
        if "currency" in changes:
            _check_currency(changes["currency"])
        if "start_date" in changes or "end_date" in changes:
            _check_dates(changes.get("start_date", quote.start_date), changes.get("end_date", quote.end_date))
        if changes.get("opportunity_id") is not None:
            _check_opportunity(session, principal.organization_id, changes["opportunity_id"])
        if "owner_user_id" in changes:
            _check_new_owner(session, principal, changes["owner_user_id"])

    @staticmethod
    def _new_pricebook(
        session: Session, principal: Principal, quote: Quote, changes: dict[str, Any]
    ) -> PinnedPricebook | None:
        """The pricebook the quote will be priced with: a newly pinned one, none, or the pinned one kept."""
        currency = changes.get("currency", quote.currency)
        if "pricebook_id" in changes:
            if changes["pricebook_id"] is None:
                return None
            pricebook = _pin(session, principal, changes["pricebook_id"])
            if pricebook.currency != currency:
                raise _currency_mismatch("pricebookId", pricebook, currency)
            return pricebook
        if quote.pricebook_id is None:
            return None
        # the pinned pricebook is in the old currency
        raise invalid_field(
            "currency",
            f"the quote is priced with pricebook {quote.pricebook_id} in {quote.currency}; send pricebookId "
            f"(one in {currency}, or null for list prices) together with the new currency",
            "pricebook_currency_mismatch",
        )

    @staticmethod
    def _reprice(
        session: Session, quote: Quote, pricebook: PinnedPricebook | None, field: str, now: datetime
    ) -> Sequence[LineRow]:
        """Each line takes its pinned product version's price in the new currency / pricebook and keeps
        its discount percent (a net price in another currency or pricebook has no meaning; a markup is
        carried as the net price the same percent above the new list: ``carried_net_price``). Returns
        the quote's lines; the catalog is read in one query per table."""
        lines = lines_for_edit(session, quote)
        prices = CatalogPrices.load(
            session,
            quote.organization_id,
            [(line.product_id, line.product_version) for line in lines],
            quote.currency,
            pricebook=pricebook,
        )
        for line in lines:
            with naming_field(field):
                product = prices.price(line.product_id, line.product_version)
            copy_catalog_prices(line, product)
            markup = carried_net_price(line_terms(line), line.discount_percent)
            if markup is None:
                line.price_basis = PriceBasis.DISCOUNT
            else:
                line.price_basis, line.net_unit_price = PriceBasis.NET, markup
            line.updated_at = now
        return lines
