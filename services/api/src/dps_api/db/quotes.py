"""The quote store: every read and write of the ``quotes`` and ``quote_lines`` rows, for the use cases.

The columns are named once, by the models (``dps_api.db.models.quotes``); everything here is made
from them. The quote's own row goes through the ORM (one row, locked for an edit). Its lines, up to
hundreds, do not: ORM instances cost more to load or build, and to flush, than to price and write
(issue 19, bench/quotes.py). So the lines are

- read for an edit as ``LineRow`` objects (plain objects of the model's columns: ``lines_for_edit``)
  and written back in one statement, only those that changed (``save_lines``);
- inserted in one statement whose one parameter is the lines as JSON (``insert_lines``);
- read for an answer straight into the domain's views on the driver (``read_quote``, ``full_view``):
  the statements compiled once to SQL, no result processing.

Nothing here commits: the use case's transaction does.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field, make_dataclass
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any
from uuid import UUID

import psycopg
from sqlalchemy import Enum, Table, Text, Uuid, bindparam, cast, column, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from dps_common.errors import not_found
from dps_common.json import dumps, loads
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_api.db.base import driver_sql
from dps_api.db.models.quotes import Quote, QuoteLine
from dps_api.domain.quote_views import QUOTE_COLUMNS, QuoteLineView, QuoteView, quote_view
from dps_api.domain.vocabulary import QuoteStatus

__all__ = [
    "EDITABLE", "LineRow", "add_quote", "delete_line", "find_quote", "full_view", "insert_lines", "lines_for_edit", "quote_page", "read_quote",
    "save_lines", "view_of",
]

_LINES: Table = QuoteLine.__table__  # type: ignore[assignment]
LINE_COLUMNS = tuple(_LINES.columns.keys())  # the model's attribute names are its column names
# what an edit may change: the rest is the line's identity and its pinned product
EDITABLE = ("position", "custom_name", "catalog_unit_price", "tiers", "price_basis", "quantity", "list_unit_price",
            "net_unit_price", "discount_percent", "amount_per_billing_period", "one_time_amount", "updated_at")

if TYPE_CHECKING:
    class LineRow(QuoteLine):
        """For the type checker, a line row has the model's attributes and their types."""

        stored: tuple[Any, ...] | None
else:
    # A line's columns as a plain slotted object, made from the model: read for an edit or about to be
    # inserted, never in a session. ``stored``: the editable columns as read (None: a new line).
    LineRow = make_dataclass(
        "LineRow", [*((name, Any) for name in LINE_COLUMNS), ("stored", Any, field(default=None, kw_only=True))],
        slots=True,
    )
    LineRow.__module__ = __name__
_row_of: Callable[..., LineRow] = LineRow  # positional: the columns' values in the table's order


def _enums(table: Table, names: Sequence[str]) -> list[tuple[int, dict[str, enum.Enum]]]:
    """The enumerations among ``names``' columns (the driver returns their values): each one's place,
    with its members by value (a dict lookup is cheaper than calling the enum)."""
    return [
        (index, {member.value: member for member in kind.enum_class})
        for index, name in enumerate(names)
        if isinstance(kind := table.c[name].type, Enum) and kind.enum_class is not None
    ]


def _members(row: Sequence[Any], enums: list[tuple[int, dict[str, enum.Enum]]]) -> list[Any]:
    values = list(row)
    for index, members in enums:
        values[index] = members[values[index]]
    return values


# --- the quote row ------------------------------------------------------------------------------------


def find_quote(session: Session, organization_id: UUID, quote_id: UUID, *, lock: bool = False) -> Quote:
    """The organization's quote; another organization's is as unknown as a missing one."""
    stmt = select(Quote).where(Quote.id == quote_id, Quote.organization_id == organization_id)
    quote = session.scalar(stmt.with_for_update() if lock else stmt)
    if quote is None:
        raise not_found("Pricing quote")
    return quote


def quote_page(
    session: Session,
    organization_id: UUID,
    page: PageRequest,
    *,
    status: QuoteStatus | None = None,
    owner_user_id: UUID | None = None,
    opportunity_id: UUID | None = None,
) -> list[QuoteView]:
    """A page of the organization's quotes (by id) without their lines: the list carries totals, which
    are stored on the quote."""
    stmt = select(Quote).where(Quote.organization_id == organization_id)
    if status is not None:
        stmt = stmt.where(Quote.status == status)
    if owner_user_id is not None:
        stmt = stmt.where(Quote.owner_user_id == owner_user_id)
    if opportunity_id is not None:
        stmt = stmt.where(Quote.opportunity_id == opportunity_id)
    return [view_of(q, None) for q in session.scalars(keyset(stmt, [Quote.id], page, convert=[UUID]))]


_quote_values = attrgetter(*QUOTE_COLUMNS)
_line_values = attrgetter(*QuoteLineView._fields)


def view_of(quote: Quote, lines: Sequence[LineRow] | None) -> QuoteView:
    """The quote as the use cases return it, from its row and its line rows as they are now
    (``None`` for list items, read without lines)."""
    views = None if lines is None else tuple(tuple.__new__(QuoteLineView, _line_values(line)) for line in lines)
    return quote_view(_quote_values(quote), views)


# --- the fast reads: straight into views ---------------------------------------------------------------

BY_ID = (bindparam("quote_id", type_=Uuid()), bindparam("organization_id", type_=Uuid()))
_QUOTE_SQL = driver_sql(
    select(*[getattr(Quote, name) for name in QUOTE_COLUMNS]).where(Quote.id == BY_ID[0], Quote.organization_id == BY_ID[1])
)
_QUOTE_ENUMS = _enums(Quote.__table__, QUOTE_COLUMNS)  # type: ignore[arg-type]


def _lines_sql(selected: Iterable[ColumnElement[Any]]) -> str:
    return driver_sql(
        select(*selected)
        .where(QuoteLine.quote_id == BY_ID[0], QuoteLine.organization_id == BY_ID[1])
        .order_by(QuoteLine.position, QuoteLine.id)
    )


_VIEW_LINES_SQL = _lines_sql(_LINES.c[name] for name in QuoteLineView._fields)
_VIEW_LINE_ENUMS = _enums(_LINES, QuoteLineView._fields)


def _line_views(rows: Iterable[Sequence[Any]]) -> tuple[QuoteLineView, ...]:
    """Rows of ``_VIEW_LINES_SQL`` as views, made with ``tuple.__new__`` (the named tuple's own
    ``__new__`` is a Python function taking keywords)."""
    make, enums, views = tuple.__new__, _VIEW_LINE_ENUMS, []
    for row in rows:  # ``_members``, inlined: this loop is most of a large quote's read
        values = list(row)
        for index, members in enums:
            values[index] = members[values[index]]
        views.append(make(QuoteLineView, values))
    return tuple(views)


def read_quote(cursor: psycopg.Cursor[Any], organization_id: UUID, quote_id: UUID) -> QuoteView:
    """The organization's quote with its lines, on a driver cursor (``Transactions.read_cursor``):
    GET /pricing-quotes/{id}. Another organization's quote is as unknown as a missing one."""
    params = {"quote_id": quote_id, "organization_id": organization_id}
    cursor.execute(_QUOTE_SQL, params)
    found = cursor.fetchone()
    if found is None:
        raise not_found("Pricing quote")
    cursor.execute(_VIEW_LINES_SQL, params)
    return quote_view(_members(found, _QUOTE_ENUMS), _line_views(cursor.fetchall()))


def full_view(session: Session, quote: Quote) -> QuoteView:
    """The quote with its lines as stored, after pending changes are flushed, in the session's
    transaction: the caller must not hold line rows with changes it has not saved."""
    session.flush()
    params = {"quote_id": quote.id, "organization_id": quote.organization_id}
    rows = session.connection().exec_driver_sql(_VIEW_LINES_SQL, params).all()
    return quote_view(_quote_values(quote), _line_views(rows))


# --- the lines of an edit: read, written back, inserted, deleted -------------------------------------

# every column; the tiers as text, parsed with orjson (psycopg's JSON loader is the standard library's)
_EDIT_LINES_SQL = _lines_sql(cast(c, Text) if c.name == "tiers" else c for c in _LINES.columns)
_EDIT_LINE_ENUMS = _enums(_LINES, LINE_COLUMNS)
_TIERS = LINE_COLUMNS.index("tiers")
_editable_of = itemgetter(*(LINE_COLUMNS.index(name) for name in EDITABLE))


def lines_for_edit(session: Session, quote: Quote) -> list[LineRow]:
    """The quote's lines in order, as plain rows an edit may change (``save_lines`` writes them back)."""
    params = {"quote_id": quote.id, "organization_id": quote.organization_id}
    lines = []
    for row in session.connection().exec_driver_sql(_EDIT_LINES_SQL, params).all():
        values = _members(row, _EDIT_LINE_ENUMS)
        values[_TIERS] = loads(values[_TIERS])
        line = _row_of(*values)
        line.stored = _editable_of(values)
        lines.append(line)
    return lines


def _json_rows(name: str, columns: Sequence[str]) -> Any:
    """``jsonb_to_recordset(:<name>) AS line(<columns> <their types>)``: rows sent as one JSON array,
    which PostgreSQL reads with each column's own input function."""
    return func.jsonb_to_recordset(cast(bindparam(name, type_=Text()), JSONB)).table_valued(
        *(column(c, _LINES.c[c].type) for c in columns)
    ).render_derived("line", with_types=True)


# The planner takes the function for 100 rows and hashes it: the quote_id condition keeps the other
# side to the quote's lines (its index) instead of a scan of the whole table.
_CHANGED = _json_rows("lines", ("id", *EDITABLE))
_UPDATE_LINES = driver_sql(
    update(QuoteLine)
    .where(
        QuoteLine.quote_id == bindparam("line_quote_id"),
        QuoteLine.organization_id == bindparam("line_organization_id"),
        QuoteLine.id == _CHANGED.c.id,
    )
    .values({name: _CHANGED.c[name] for name in EDITABLE})
)


def save_lines(session: Session, quote: Quote, lines: Sequence[LineRow]) -> None:
    """Writes the read lines that an edit changed, in one statement. A line counts as changed when any
    editable column no longer holds the very object read: re-pricing keeps the objects of values that
    did not change (``dps_api.services.quote_edits``)."""
    changed = [
        line for line in lines
        if line.stored is not None
        and any(getattr(line, name) is not old for name, old in zip(EDITABLE, line.stored, strict=True))
    ]
    if changed:
        rows = [{"id": line.id, **{name: getattr(line, name) for name in EDITABLE}} for line in changed]
        params = {"lines": dumps(rows).decode(), "line_quote_id": quote.id, "line_organization_id": quote.organization_id}
        session.connection().exec_driver_sql(_UPDATE_LINES, params)
        for line in changed:
            line.stored = tuple(getattr(line, name) for name in EDITABLE)


_NEW = _json_rows("lines", LINE_COLUMNS)
_INSERT_LINES = insert(QuoteLine).from_select(list(LINE_COLUMNS), select(*_NEW.c))


def insert_lines(session: Session, lines: Sequence[LineRow]) -> None:
    """Writes new lines in one statement whose one parameter is the lines as a JSON array (orjson:
    decimals as their exact strings, UUIDs, timestamps with microseconds, enums by value).

    Neither the ORM's flush nor a Core insert of a list of rows (insertmanyvalues) nor one array
    parameter per column (``unnest``) is as cheap for hundreds of lines: the first two send one
    placeholder per value (12,000 for 500 lines), which psycopg parses in Python, and the third has
    psycopg adapt every element of 24 arrays in Python."""
    if lines:
        rows = [{name: getattr(line, name) for name in LINE_COLUMNS} for line in lines]
        session.flush()  # the quote row first
        # on the connection: the session would take a dict of parameters as ORM rows to insert
        session.connection().execute(_INSERT_LINES, {"lines": dumps(rows).decode()})


def add_quote(session: Session, quote: Quote, lines: Sequence[LineRow]) -> None:
    """A new quote and its lines."""
    session.add(quote)
    session.flush()  # the quote row before its lines (no ORM relationship orders them)
    insert_lines(session, lines)


def delete_line(session: Session, line: LineRow) -> None:
    session.execute(delete(QuoteLine).where(QuoteLine.id == line.id, QuoteLine.organization_id == line.organization_id))
