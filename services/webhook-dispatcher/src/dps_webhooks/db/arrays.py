"""Set-wise statements over arrays: a batch of rows is passed as one array per column and unnested.

One cached statement then serves any batch size with a fixed handful of parameters, where a
multi-row ``VALUES`` would be a new SQL text (parsed and planned anew) for every batch size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import TableValuedAlias, bindparam, column, func
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.types import TypeEngine


def unnested(name: str, types: Mapping[str, TypeEngine[Any]]) -> TableValuedAlias:
    """``unnest(:a, :b, ...) AS name(a, b, ...)``: one row per array index, typed per column."""
    arrays = [bindparam(key, type_=ARRAY(type_)) for key, type_ in types.items()]
    return (
        func.unnest(*arrays)
        .table_valued(*(column(key, type_) for key, type_ in types.items()))
        .render_derived(name=name)
    )


def as_arrays(rows: Sequence[Mapping[str, Any]], types: Mapping[str, TypeEngine[Any]]) -> dict[str, list[Any]]:
    """The parameters of an ``unnested`` statement: each column's values in row order (absent: NULL)."""
    return {key: [row.get(key) for row in rows] for key in types}
