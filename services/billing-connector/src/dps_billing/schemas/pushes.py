"""Bodies of ``/pricing-quotes/{id}/billing-pushes``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from dps_common.openapi.examples import example

from dps_billing.domain.push_views import PushView
from dps_billing.schemas import ResponseModel


class PushProgress(BaseModel):
    linesTotal: int = Field(description="Supported lines to push (known once the worker planned the push).")
    productsCreated: int
    pricesCreated: int
    quoteCreated: bool


class PushWarning(BaseModel):
    code: str = Field(description="line_skipped, amount_rounded, quantity_rounded, description_truncated, ...")
    lineId: str | None
    message: str


class PushError(BaseModel):
    code: str = Field(description="The plan's error code (e.g. limit_exceeded) or the platform's.")
    message: str | None
    param: str | None = Field(description="The platform parameter concerned, or the limit broken.")


class PushedProduct(BaseModel):
    lineId: str
    productId: str
    priceId: str | None


PUSH_EXAMPLE = {
    "id": "0192a3b4-c5d6-7e8f-9a0b-cf1a2b3c4d5e", "quoteId": "0192a3b4-c5d6-7e8f-9a0b-7a1b2c3d4e5f",
    "status": "succeeded",
    "progress": {"linesTotal": 1, "productsCreated": 1, "pricesCreated": 1, "quoteCreated": True},
    "warnings": [], "error": None, "billingQuoteId": "qt_1QxYzA2eZvKYlo2C",
    "reviewUrl": "https://dashboard.billing.example/quotes/qt_1QxYzA2eZvKYlo2C",
    "products": [{"lineId": "0192a3b4-c5d6-7e8f-9a0b-8b1c2d3e4f5a", "productId": "prod_R4nD0m1d",
                  "priceId": "price_1QxYzB2eZvKYlo2C"}],
    "requestedBy": "0192a3b4-c5d6-7e8f-9a0b-2c2d3e4f5a6b",
    "createdAt": "2026-11-03T14:00:00Z", "updatedAt": "2026-11-03T14:00:04Z", "finishedAt": "2026-11-03T14:00:04Z",
}


class BillingPush(ResponseModel):
    model_config = example(PUSH_EXAMPLE)
    id: str
    quoteId: str
    status: Literal["queued", "running", "succeeded", "failed"]
    progress: PushProgress
    warnings: list[PushWarning]
    error: PushError | None
    billingQuoteId: str | None = Field(description="The draft quote created on the billing platform.")
    reviewUrl: str | None = Field(description="Where the draft quote is reviewed and finalised on the platform.")
    products: list[PushedProduct]
    requestedBy: str
    createdAt: datetime
    updatedAt: datetime
    finishedAt: datetime | None


class BillingPushList(ResponseModel):
    billingPushes: list[BillingPush]
    nextCursor: str | None


def render_push(push: PushView) -> dict[str, Any]:
    """The push record of the API and of the ``billing.*`` push events."""
    error = push.error
    return {
        "id": str(push.id),
        "quoteId": str(push.quote_id),
        "status": push.status,
        "progress": {
            "linesTotal": push.lines_total,
            "productsCreated": push.products_created,
            "pricesCreated": push.prices_created,
            "quoteCreated": push.quote_created,
        },
        "warnings": list(push.warnings),
        "error": None if error is None else {"code": error.code, "message": error.message, "param": error.param},
        "billingQuoteId": push.billing_quote_id,
        "reviewUrl": push.review_url,
        "products": [
            {"lineId": p.line_id, "productId": p.product_id, "priceId": p.price_id} for p in push.products
        ],
        "requestedBy": str(push.requested_by),
        "createdAt": push.created_at,
        "updatedAt": push.updated_at,
        "finishedAt": push.finished_at,
    }


def render_finished_push(push: PushView) -> dict[str, Any]:
    """The data of ``billing.quote_pushed`` and ``billing.push_failed``: the push record and its
    organization."""
    return {**render_push(push), "organizationId": str(push.organization_id)}
