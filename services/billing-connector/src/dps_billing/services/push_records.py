"""The push record as the API and the ``billing.*`` push events show it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_billing.db.models import BillingPush, PushObject

WHAT = "Billing push"


def _products(objects: Iterable[PushObject]) -> list[dict[str, Any]]:
    """One entry per quote line with a product created, in plan order, with its price when created."""
    lines: dict[str, dict[str, Any]] = {}
    for obj in sorted(objects, key=lambda o: (o.position, o.kind != "product")):
        if obj.kind == "quote" or obj.platform_id is None:
            continue
        if obj.kind == "product":
            lines[obj.line_id] = {"lineId": obj.line_id, "productId": obj.platform_id, "priceId": None}
        elif obj.line_id in lines:
            lines[obj.line_id]["priceId"] = obj.platform_id
    return list(lines.values())


def render_push(push: BillingPush, objects: Iterable[PushObject]) -> dict[str, Any]:
    error = None
    if push.error_code is not None:
        error = {"code": push.error_code, "message": push.error_message, "param": push.error_param}
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
        "error": error,
        "billingQuoteId": push.billing_quote_id,
        "reviewUrl": push.review_url,
        "products": _products(objects),
        "requestedBy": str(push.requested_by),
        "createdAt": push.created_at,
        "updatedAt": push.updated_at,
        "finishedAt": push.finished_at,
    }


def objects_of(session: Session, push_ids: list[UUID]) -> dict[UUID, list[PushObject]]:
    found: dict[UUID, list[PushObject]] = defaultdict(list)
    if push_ids:
        for obj in session.scalars(select(PushObject).where(PushObject.push_id.in_(push_ids))):
            found[obj.push_id].append(obj)
    return found


def render_pushes(session: Session, pushes: list[BillingPush]) -> list[dict[str, Any]]:
    objects = objects_of(session, [push.id for push in pushes])
    return [render_push(push, objects.get(push.id, [])) for push in pushes]
