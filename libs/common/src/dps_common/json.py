"""JSON for every process: orjson, with Decimal as a string (money never becomes a float)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_default)


def loads(raw: bytes | str) -> Any:
    return orjson.loads(raw)
