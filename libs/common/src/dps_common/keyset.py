"""Keyset paging on a query: rows strictly after the last seen sort key, ``limit + 1`` of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy import Select, tuple_
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.elements import ColumnElement

from dps_common.paging import InvalidCursor, PageRequest


def resume_after(page: PageRequest, convert: list[Any]) -> list[Any] | None:
    """The cursor's position as column values (``convert`` maps each JSON value to the column's
    Python type, e.g. ``UUID``), or None on the first page. A position of the wrong shape is a 400."""
    if page.after is None:
        return None
    if len(page.after) != len(convert):
        raise InvalidCursor("The cursor is malformed.")
    try:
        return [fn(v) for fn, v in zip(convert, page.after)]
    except (TypeError, ValueError, AttributeError):
        raise InvalidCursor("The cursor is malformed.") from None


_Select = TypeVar("_Select", bound=Select[Any])
SortColumn = ColumnElement[Any] | QueryableAttribute[Any]


def keyset(
    stmt: _Select,
    columns: Sequence[SortColumn],
    page: PageRequest,
    *,
    descending: bool = False,
    convert: list[Any] | None = None,
) -> _Select:
    """Order ``stmt`` by ``columns`` and resume after ``page.after``.

    ``convert`` turns each cursor value (JSON) back into the column's Python type (``UUID``, ...).
    """
    values = resume_after(page, convert or [lambda v: v] * len(columns))
    if values is not None:
        key = tuple_(*columns)
        stmt = stmt.where(key < tuple_(*values) if descending else key > tuple_(*values))
    order = [c.desc() for c in columns] if descending else list(columns)
    return stmt.order_by(*order).limit(page.limit + 1)
