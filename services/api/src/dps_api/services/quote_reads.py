"""Quotes read straight from the driver: the quote's columns (those of its view, ``QUOTE_COLUMNS``)
and its lines as tuples made into the domain's views, without ORM objects or SQLAlchemy's result
processing (a 500-line quote's read is most of its cost in building and processing rows: issue 19,
bench/quotes.py).

``read_quote`` serves GET /pricing-quotes/{id} on a read cursor; ``stored_line_views`` reads the lines
inside a use case's transaction, and ``full_view`` the quote with them (approval, snapshots, header edits
that change nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any
from uuid import UUID

import psycopg
from sqlalchemy import Enum, Uuid, bindparam, create_mock_engine, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ClauseElement

from dps_common.errors import not_found

from dps_api.db.models.quotes import Quote, QuoteLine
from dps_api.domain.quote_views import QUOTE_COLUMNS, QuoteLineView, QuoteView, quote_view
from dps_api.domain.vocabulary import PriceFrequency, PriceModel

# the view's columns of the quote as the ORM row holds them, and the enumerations among them (the
# driver returns their values)
_columns_of = attrgetter(*QUOTE_COLUMNS)
_QUOTE_ENUMS = [
    (index, kind.enum_class)
    for index, name in enumerate(QUOTE_COLUMNS)
    if isinstance(kind := Quote.__table__.c[name].type, Enum) and kind.enum_class is not None
]


def row_view(quote: Quote, lines: tuple[QuoteLineView, ...] | None) -> QuoteView:
    """The quote's row object as the use cases return it, with ``lines``."""
    return quote_view(_columns_of(quote), lines)


def driver_sql(stmt: ClauseElement) -> str:
    """``stmt`` as SQL for psycopg, compiled once: the hot reads skip statement building, the
    session and SQLAlchemy's result processing, which cost more than running the query."""
    return str(stmt.compile(dialect=create_mock_engine("postgresql+psycopg://", executor=None).dialect))


BY_ID = (bindparam("quote_id", type_=Uuid()), bindparam("organization_id", type_=Uuid()))
_QUOTE_SQL = driver_sql(
    select(*[getattr(Quote, name) for name in QUOTE_COLUMNS]).where(
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
    values = list(found)
    for index, kind in _QUOTE_ENUMS:
        values[index] = kind(values[index])
    cursor.execute(_LINES_SQL, params)
    return quote_view(values, _line_views(cursor.fetchall()))


def full_view(session: Session, quote: Quote) -> QuoteView:
    """The quote with its lines as stored, after pending changes are flushed. The lines are read
    straight into views (no ORM objects): the caller must not hold line objects with changes it has
    not flushed, and gets what the table holds."""
    session.flush()
    return row_view(quote, stored_line_views(session, quote))
