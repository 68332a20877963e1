"""A billing push as the push use cases and the worker read it: plain values, no rows, no JSON.

``dps_billing.schemas.pushes`` renders it, for the API (``render_push``) and the ``billing.*`` push
events (``render_finished_push``, with its organization).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID


@dataclass(frozen=True, slots=True)
class PushedProduct:
    """A quote line whose product the push created, with its price once created."""

    line_id: str
    product_id: str
    price_id: str | None


@dataclass(frozen=True, slots=True)
class PushError:
    code: str
    message: str | None
    param: str | None


@dataclass(frozen=True, slots=True)
class PushView:
    id: UUID
    organization_id: UUID
    quote_id: UUID
    status: str
    lines_total: int
    products_created: int
    prices_created: int
    quote_created: bool
    warnings: tuple[dict[str, Any], ...]  # as stored: {"code", "lineId", "message"}
    error: PushError | None
    billing_quote_id: str | None
    review_url: str | None
    products: tuple[PushedProduct, ...]  # in plan order
    requested_by: UUID
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
