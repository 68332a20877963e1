"""Quotes read straight from the driver: the quote's columns and its lines as tuples made into the
domain's views, without ORM objects or SQLAlchemy's result processing (a 500-line quote's read is
most of its cost in building and processing rows: issue 19, bench/quotes.py).

``read_quote`` serves GET /pricing-quotes/{id} on a read cursor; ``stored_line_views`` reads the lines
inside a use case's transaction (approval, snapshots, header edits that change nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
from sqlalchemy import Uuid, bindparam, create_mock_engine, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ClauseElement

from dps_common.errors import not_found

from dps_api.db.models.quotes import Quote, QuoteLine
from dps_api.domain.pricing import QuoteTotals
from dps_api.domain.quote_views import QuoteLineView, QuoteView
from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel, QuoteStatus


class QuoteRow(NamedTuple):
    """The quote's columns as the driver returns them (``read_quote``), named as ``Quote``'s."""

    id: UUID
    organization_id: UUID
    name: str
    opportunity_id: UUID | None
    owner_user_id: UUID
    status: QuoteStatus
    currency: str
    billing_frequency: BillingFrequency
    subscription_term_months: int
    start_date: date | None
    end_date: date | None
    pricebook_id: UUID | None
    pricebook_version: int | None
    recurring_per_billing_period: Decimal
    one_time: Decimal
    total_contract_value: Decimal
    list_total_contract_value: Decimal
    max_discount_percent: Decimal
    locked_below_list: bool
    line_count: int
    created_at: datetime
    updated_at: datetime


def quote_header_view(quote: Quote | QuoteRow, lines: tuple[QuoteLineView, ...] | None) -> QuoteView:
    """The quote (a row object or its columns as read) as the use cases return it, with ``lines``."""
    return QuoteView(
        id=quote.id,
        organization_id=quote.organization_id,
        name=quote.name,
        opportunity_id=quote.opportunity_id,
        owner_user_id=quote.owner_user_id,
        status=quote.status,
        currency=quote.currency,
        billing_frequency=quote.billing_frequency,
        subscription_term_months=quote.subscription_term_months,
        start_date=quote.start_date,
        end_date=quote.end_date,
        pricebook_id=quote.pricebook_id,
        pricebook_version=quote.pricebook_version,
        totals=QuoteTotals(
            recurring_per_billing_period=quote.recurring_per_billing_period,
            one_time=quote.one_time,
            total_contract_value=quote.total_contract_value,
            list_total_contract_value=quote.list_total_contract_value,
            max_discount_percent=quote.max_discount_percent,
            locked_below_list=quote.locked_below_list,
        ),
        line_count=quote.line_count,
        created_at=quote.created_at,
        updated_at=quote.updated_at,
        lines=lines,
    )


def driver_sql(stmt: ClauseElement) -> str:
    """``stmt`` as SQL for psycopg, compiled once: the hot reads skip statement building, the
    session and SQLAlchemy's result processing, which cost more than running the query."""
    return str(stmt.compile(dialect=create_mock_engine("postgresql+psycopg://", executor=None).dialect))


BY_ID = (bindparam("quote_id", type_=Uuid()), bindparam("organization_id", type_=Uuid()))
_QUOTE_SQL = driver_sql(
    select(*[getattr(Quote, name) for name in QuoteRow._fields]).where(
        Quote.id == BY_ID[0], Quote.organization_id == BY_ID[1]
    )
)
_LINES_SQL = driver_sql(
    select(*[getattr(QuoteLine, name) for name in QuoteLineView._fields])
    .where(QuoteLine.quote_id == BY_ID[0], QuoteLine.organization_id == BY_ID[1])
    .order_by(QuoteLine.position, QuoteLine.id)
)
# dict lookups: cheaper than PriceModel(value) per line
_PRICE_MODELS = {model.value: model for model in PriceModel}
_PRICE_FREQUENCIES = {frequency.value: frequency for frequency in PriceFrequency}


def _line_views(rows: Iterable[Sequence[Any]]) -> tuple[QuoteLineView, ...]:
    """Rows of ``_LINES_SQL`` as views: the enumerations looked up, the tuples made with
    ``tuple.__new__`` (the named tuple's own ``__new__`` is a Python function taking keywords)."""
    models, frequencies, make = _PRICE_MODELS, _PRICE_FREQUENCIES, tuple.__new__
    return tuple(
        make(
            QuoteLineView,
            (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], models[r[8]], frequencies[r[9]], r[10], r[11], r[12],
             r[13], r[14], r[15], r[16]),
        )
        for r in rows
    )


def stored_line_views(session: Session, quote: Quote) -> tuple[QuoteLineView, ...]:
    """The quote's lines in order, in the session's transaction: one query as SQL for the driver (it
    still goes through the engine's events), no ORM objects, no result processing."""
    params = {"quote_id": quote.id, "organization_id": quote.organization_id}
    return _line_views(session.connection().exec_driver_sql(_LINES_SQL, params).all())


def read_quote(cursor: psycopg.Cursor[Any], organization_id: UUID, quote_id: UUID) -> QuoteView:
    """The organization's quote with its lines, on a driver cursor (``Transactions.read_cursor``):
    the quote's read, GET /pricing-quotes/{id}. Another organization's quote is as unknown as a
    missing one."""
    params = {"quote_id": quote_id, "organization_id": organization_id}
    cursor.execute(_QUOTE_SQL, params)
    found = cursor.fetchone()
    if found is None:
        raise not_found("Pricing quote")
    row = QuoteRow._make(found)
    row = row._replace(status=QuoteStatus(row.status), billing_frequency=BillingFrequency(row.billing_frequency))
    cursor.execute(_LINES_SQL, params)
    return quote_header_view(row, _line_views(cursor.fetchall()))
