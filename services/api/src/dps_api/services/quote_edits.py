"""A quote's edit inside a caller's transaction: the editing rules (who, in which status), its lines
read as plain rows and written back, re-priced totals, the ``quote.updated``/``quote.reopened``
events, and the edited rows turned into the domain's ``QuoteView``.

Shared by the quote and quote-line use cases. Nothing here commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import datetime
from decimal import Decimal
from operator import attrgetter, itemgetter
from typing import Any
from uuid import UUID

from sqlalchemy import Text, bindparam, cast, column, func, select, update
from sqlalchemy.dialects.postgresql import JSONB
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
from dps_common.json import dumps, loads

from dps_api.db.models.quotes import Quote, QuoteLine
from dps_api.domain.pricing import LineTerms, PricedLine, Tier, price_line, quote_totals
from dps_api.domain.quote_views import QuoteLineView, QuoteView
from dps_api.domain.vocabulary import PriceBasis, PriceFrequency, PriceModel, QuoteStatus
from dps_api.schemas.quotes import render_quote
from dps_api.services.outbox import record_event
from dps_api.services.quote_lookup import find_quote
from dps_api.services.quote_reads import BY_ID, driver_sql, row_view

REOPENED_BY_EDIT = frozenset({QuoteStatus.APPROVED, QuoteStatus.REJECTED})


@dataclass(slots=True)
class LineRow:
    """A line's columns (those of ``QuoteLine``, in its table's order) as a plain object: read for an
    edit (``quote_lines``) or about to be inserted (``quote_lines.insert_lines``). Hundreds of ORM
    instances cost more to load or build, and to flush, than to price and write: an edit writes back
    only the lines it changed, in one statement (``save_lines``)."""

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
    # the columns an edit may change, as read (``_EDITABLE``); None: a line about to be inserted
    stored: tuple[Any, ...] | None = None


LINE_COLUMNS = [f.name for f in fields(LineRow) if f.name != "stored"]
# what an edit may change: the rest is the line's identity and its pinned product
_EDITABLE = ("position", "custom_name", "catalog_unit_price", "tiers", "price_basis", "quantity", "list_unit_price",
             "net_unit_price", "discount_percent", "amount_per_billing_period", "one_time_amount", "updated_at")


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


def finish_edit(session: Session, quote: Quote, lines: Sequence[LineRow], now: datetime) -> QuoteView:
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
    view = quote_view(quote, lines)
    data = render_quote(view)
    record_event(session, "quote.updated", quote.organization_id, data, now)
    if reopened:
        record_event(session, "quote.reopened", quote.organization_id, data, now)
    return view


# the tiers as text, parsed with orjson (psycopg's JSON loader is the standard library's)
_LINES_SQL = driver_sql(
    select(*[cast(QuoteLine.tiers, Text) if name == "tiers" else getattr(QuoteLine, name) for name in LINE_COLUMNS])
    .where(QuoteLine.quote_id == BY_ID[0], QuoteLine.organization_id == BY_ID[1])
    .order_by(QuoteLine.position, QuoteLine.id)
)
_ENUMS = [(LINE_COLUMNS.index(name), kind) for name, kind in
          (("price_model", PriceModel), ("price_frequency", PriceFrequency), ("price_basis", PriceBasis))]
_TIERS = LINE_COLUMNS.index("tiers")
_editable_of = itemgetter(*(LINE_COLUMNS.index(name) for name in _EDITABLE))


def quote_lines(session: Session, quote: Quote) -> list[LineRow]:
    """The quote's lines in order, for an edit: one query, plain objects (an edited line is written by
    ``save_lines``). As SQL for the driver: SQLAlchemy's result processing would cost more than the
    query (the statement still goes through the engine's events)."""
    params = {"quote_id": quote.id, "organization_id": quote.organization_id}
    lines = []
    for row in session.connection().exec_driver_sql(_LINES_SQL, params).all():
        values = list(row)
        for index, kind in _ENUMS:
            values[index] = kind(values[index])
        values[_TIERS] = loads(values[_TIERS])
        line = LineRow(*values)
        line.stored = _editable_of(values)
        lines.append(line)
    return lines


# UPDATE quote_lines SET <editable> = line.<editable> FROM jsonb_to_recordset(:lines) AS line(<id and the
# editable columns> <their types>) WHERE quote_id = :quote_id AND quote_lines.id = line.id: the changed
# lines as one JSON array. The planner takes the function for 100 rows and hashes it: the quote_id
# condition keeps the other side to the quote's lines (its index) instead of a scan of the whole table.
_CHANGED_ROWS = func.jsonb_to_recordset(cast(bindparam("lines", type_=Text()), JSONB)).table_valued(
    *(column(name, QuoteLine.__table__.c[name].type) for name in ("id", *_EDITABLE))
).render_derived("line", with_types=True)
_UPDATE_LINES = driver_sql(
    update(QuoteLine)
    .where(
        QuoteLine.quote_id == bindparam("line_quote_id"),  # the quote's lines by their index, then by id
        QuoteLine.organization_id == bindparam("line_organization_id"),
        QuoteLine.id == _CHANGED_ROWS.c.id,
    )
    .values({name: _CHANGED_ROWS.c[name] for name in _EDITABLE})
)


def save_lines(session: Session, quote: Quote, lines: Sequence[LineRow]) -> None:
    """Writes the stored lines that an edit changed, in one statement (new lines are inserted by
    ``quote_lines.insert_lines``). A line counts as changed when any editable column no longer holds
    the very object read: re-pricing keeps the objects of values that did not change (``_set``)."""
    changed = [
        line for line in lines
        if line.stored is not None and any(
            getattr(line, name) is not old for name, old in zip(_EDITABLE, line.stored, strict=True)
        )
    ]
    if changed:
        rows = [{"id": line.id, **{name: getattr(line, name) for name in _EDITABLE}} for line in changed]
        session.connection().exec_driver_sql(
            _UPDATE_LINES,
            {"lines": dumps(rows).decode(), "line_quote_id": quote.id, "line_organization_id": quote.organization_id},
        )
        for line in changed:
            line.stored = _editable_of([getattr(line, name) for name in LINE_COLUMNS])


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


_line_values = attrgetter(*QuoteLineView._fields)


def line_view(line: LineRow) -> QuoteLineView:
    """The line's view: its columns of the view's names (a named tuple made from their tuple)."""
    return tuple.__new__(QuoteLineView, _line_values(line))


def quote_view(quote: Quote, lines: Sequence[LineRow] | None) -> QuoteView:
    """The quote as the use cases return it; ``lines=None`` for list items (read without lines)."""
    return row_view(quote, None if lines is None else tuple(line_view(line) for line in lines))
