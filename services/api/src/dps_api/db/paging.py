"""Keyset paging on a query: rows strictly after the last seen sort key, ``limit + 1`` of them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, tuple_
from sqlalchemy.sql.elements import ColumnElement

from dps_common.http.paging import InvalidCursor, PageRequest


def keyset(
    stmt: Select,
    columns: list[ColumnElement],
    page: PageRequest,
    *,
    descending: bool = False,
    convert: list[Any] | None = None,
) -> Select:
    """Order ``stmt`` by ``columns`` and resume after ``page.after``.

    ``convert`` turns each cursor value (JSON) back into the column's Python type (``UUID``, ...).
    """
    if page.after is not None:
        if len(page.after) != len(columns):
            raise InvalidCursor("The cursor is malformed.")
        try:
            values = [fn(v) for fn, v in zip(convert or [lambda v: v] * len(columns), page.after)]
        except (TypeError, ValueError):
            raise InvalidCursor("The cursor is malformed.") from None
        key = tuple_(*columns)
        stmt = stmt.where(key < tuple_(*values) if descending else key > tuple_(*values))
    order = [c.desc() for c in columns] if descending else list(columns)
    return stmt.order_by(*order).limit(page.limit + 1)
