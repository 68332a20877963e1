"""Bodies of ``/pricing-quotes/{id}/billing-pushes``."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

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


class BillingPush(ResponseModel):
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
